"""A cache of `ruleval check` results, so that checking unchanged rulesets costs no parsing.

An entry holds the diagnostics of one ruleset and the SHA-256 of every file it read (modules,
data, schema and the files its ``$ref``s name, clause catalogue); it is used only while all of them
are unchanged, for the same ruleval version, grammar and interpreter source. It is kept by the
ruleset's real path, however the command line writes it (`x.rules`, `./x.rules`, from another folder):
the files its diagnostics are placed in are kept as absolute paths and shown as paths are shown where
it is read (``confine.display_path``; docs/diagnostics.md, "Paths"). An entry whose texts (a message,
a help) quote a path as shown then is used only where paths are shown the same way
(``confine.PathView``: the same working folder, the same files named on the command line as written).

Entries are never trusted (docs/security.md):

- they live in ruleval's private cache folder (``private_dir``): made with mode 0700, and not used at
  all (no cache) when it is not owned by the user or others may write to it;
- each entry is JSON (nothing read back is ever executed) signed with an HMAC-SHA256 under a random
  per-user key kept in that folder (``key``, mode 0600): an entry that anyone else wrote, edited or cut
  short fails the check and is ignored. A plain checksum would catch damage, not forgery: whoever can
  write an entry can write its checksum too, but not sign without the key;
- even a signed entry is checked against what it claims: the files it covers are read through
  ``confine`` (inside the ruleset's root, regular files, bounded), so an entry naming ``/dev/zero`` or
  a file outside the root is ignored, not followed.

The cache lives in ``$RULEVAL_CACHE_DIR``, else ``$XDG_CACHE_HOME/ruleval``, else
``~/.cache/ruleval``; ``RULEVAL_NO_CACHE=1`` or ``ruleval check --no-cache`` turns the check cache
off. Any problem with the cache (a folder that cannot be private, a bad entry) only means the ruleset
is checked afresh.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import confine
from .confine import Refused, find_root
from .diagnostics import Diagnostic, Related, Span

_KEY_CACHE: list[str] = []
MAX_ENTRY_BYTES = 8_000_000
MAX_COVERED_BYTES = 20_000_000  # the largest file a ruleset reads (a data file)
KEY_BYTES = 32
NOT_CACHED = ("C005", "C007", "C024", "C025")  # a file may appear, or be fixed, where the ruleset looked


def cache_dir() -> Path | None:
    """Where check results are kept; None when that cache is turned off or cannot be private."""
    if os.environ.get("RULEVAL_NO_CACHE"):
        return None
    return private_dir()


def cache_base() -> Path:
    """ruleval's cache folder as configured (check results, and the parser's tables, which are kept
    even with the check cache off: they depend on ruleval alone). Use ``private_dir`` to write to it."""
    base = os.environ.get("RULEVAL_CACHE_DIR")
    if base:
        return Path(base)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ruleval"


def _private(folder: Path) -> bool:
    """Whether ``folder`` is (made, if need be, with mode 0700) a folder of this user's that no one
    else may write to."""
    try:
        st = os.stat(folder)  # (the common case, looked at for every entry read: one system call)
    except FileNotFoundError:
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.stat(folder)
        except OSError:
            return False
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode) or st.st_mode & 0o022:
        return False
    return not hasattr(os, "getuid") or st.st_uid == os.getuid()


def private_dir(sub: str | None = None) -> Path | None:
    """ruleval's cache folder (or its sub-folder ``sub``), private; None when it cannot be."""
    base = cache_base()
    if not _private(base):
        return None
    if sub is None:
        return base
    return base / sub if _private(base / sub) else None


@functools.lru_cache(maxsize=4)
def _key_in(folder: Path) -> bytes | None:
    """The per-user signing key in ``folder`` (made on first use), or None if it is not trustworthy:
    a regular file of this user's that no one else may read or write."""
    path = folder / "key"
    for _ in range(2):
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        except FileNotFoundError:
            _make_key(path)
            continue
        except OSError:
            return None
        try:
            st = os.fstat(fd)
            if (not stat.S_ISREG(st.st_mode) or st.st_mode & 0o077 or st.st_size != KEY_BYTES
                    or (hasattr(os, "getuid") and st.st_uid != os.getuid())):
                return None
            key = os.read(fd, KEY_BYTES + 1)
            return key if len(key) == KEY_BYTES else None
        finally:
            os.close(fd)
    return None


def _make_key(path: Path) -> None:
    """Write a new key whole under a temporary name, then link it in place (if no other process was
    first: then its key is the key)."""
    import secrets  # (here, as hmac below: a check with the cache off imports neither)

    tmp = path.with_name(f".key.{os.getpid()}.{secrets.token_hex(4)}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, secrets.token_bytes(KEY_BYTES))
        finally:
            os.close(fd)
        os.link(tmp, path)
    except OSError:
        pass
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def signing_key(folder: Path) -> bytes | None:
    """The key that signs what ruleval caches in ``folder`` (the private cache folder)."""
    return _key_in(folder)


def canonical(body: Any) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")


def sign(key: bytes, body: Any) -> str:
    import hmac

    return hmac.new(key, canonical(body), hashlib.sha256).hexdigest()


def signed_json(key: bytes, body: Any) -> str:
    """An entry's text: its body and the body's signature."""
    return json.dumps({"mac": sign(key, body), "body": body}, sort_keys=True)


def read_signed(path: Path, key: bytes, folder: Path, limit: int) -> Any:
    """The body of a signed entry, or None when it is missing, too large, not a regular file of the
    folder, not JSON or not signed with ``key``."""
    try:
        doc = json.loads(confine.read_bytes(path, limit, folder).decode("utf-8"))
    except (Refused, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("mac"), str) or "body" not in doc:
        return None
    import hmac

    if not hmac.compare_digest(doc["mac"], sign(key, doc["body"])):
        return None
    return doc["body"]


def _tool_key() -> str:
    """ruleval's version, grammar and own code: any change to the checker never reads old entries."""
    if not _KEY_CACHE:
        from .exits import VERSION as __version__

        package = Path(__file__).resolve().parent.parent  # validator/: its code, and the grammar
        h = hashlib.sha256()
        sources = [*package.rglob("*.py"), *package.rglob("*.lark"), *(package.parent / "grammar").glob("*.lark")]
        for source in sorted(sources):
            h.update(source.read_bytes())
        _KEY_CACHE.append(f"{__version__}:{h.hexdigest()[:24]}")
    return _KEY_CACHE[0]


def _digest(path: str, root: Path) -> str | None:
    """The SHA-256 of a file the ruleset read, read through ``confine`` (never a file outside the
    ruleset's root, nor a device, nor more than ``MAX_COVERED_BYTES``)."""
    try:
        return hashlib.sha256(confine.read_bytes(Path(path), MAX_COVERED_BYTES, root)).hexdigest()
    except Refused:
        return None


def _entry_path(folder: Path, ruleset: Path, kind: str = "check") -> Path:
    # (a check result keeps its old name: entries of other kinds name theirs)
    salt = "" if kind == "check" else f"\0{kind}"
    name = hashlib.sha256(f"{ruleset.resolve()}{salt}".encode()).hexdigest()[:32]
    return folder / f"{name}.json"


def _placed(diagnostics: list[Diagnostic]) -> tuple[dict[str, str], bool]:
    """Each file the diagnostics are placed in, as shown here -> as an absolute path (a sweep's worker's
    private folder mapped back: ``PathView.moved``), and whether none of their texts quotes one as
    shown (such an entry holds wherever it is read)."""
    view = confine.path_view()
    out: dict[str, str] = {}
    for d in diagnostics:
        for sp in (d.span, *(r.span for r in d.related)):
            if sp.file and sp.file not in out:
                out[sp.file] = os.path.normpath(os.path.join(view.cwd, sp.file))
    texts = [t for d in diagnostics for t in (d.message, d.help or "", *(r.message for r in d.related))]
    return out, not any(shown in t for shown in out for t in texts)


def _shown_again(d: Diagnostic, now: dict[str, str]) -> Diagnostic:
    """A kept diagnostic with its files shown as paths are shown now (``now``: as shown then -> now)."""
    from dataclasses import replace

    if all(now.get(sp.file, sp.file) == sp.file for sp in (d.span, *(r.span for r in d.related))):
        return d

    def span(sp: Span) -> Span:
        return replace(sp, file=now[sp.file]) if sp.file in now else sp

    return replace(d, span=span(d.span), related=tuple(Related(span(r.span), r.message) for r in d.related))


def _span_json(s: Span) -> list[Any]:
    return [s.file, s.line, s.col, s.end_line, s.end_col]


def diag_to_json(d: Diagnostic) -> dict[str, Any]:
    return {"code": d.code, "message": d.message, "span": _span_json(d.span), "help": d.help, "pointer": d.pointer,
            "schema_rule": d.schema_rule, "related": [[_span_json(r.span), r.message] for r in d.related]}


def diag_from_json(j: dict[str, Any]) -> Diagnostic:
    return Diagnostic(str(j["code"]), str(j["message"]), Span(*j["span"]), help=j.get("help"), pointer=j.get("pointer"),
                      schema_rule=j.get("schema_rule"),
                      related=tuple(Related(Span(*s), str(m)) for s, m in j.get("related", [])))


@dataclass
class Cached:
    """A cache hit: the ruleset's diagnostics and the files the entry covers (resolved paths, verified)."""

    diagnostics: list[Diagnostic]
    files: list[str]
    extra: Any = None  # what the caller kept with them (``store``'s ``extra``), as JSON read it


def lookup(ruleset: Path, kind: str = "check", read: dict[str, str] | None = None) -> Cached | None:
    """The cached diagnostics of a ruleset whose files are all unchanged, else None. ``kind`` says which
    of a ruleset's results: ``"check"`` (all of ``ruleval check``'s), ``"data"`` (its data checks,
    ``engine.data``, which every load of the ruleset needs). Given ``read`` (the digests of what a load read so far,
    ``confine.Reads.digests``), each file the load read must also have given it the bytes the entry holds:
    an entry never completes a program made from another text."""
    folder = cache_dir()
    if folder is None:
        return None
    key = signing_key(folder)
    if key is None:
        return None
    body = read_signed(_entry_path(folder, ruleset, kind), key, folder, MAX_ENTRY_BYTES)
    try:
        if (body is None or body.get("tool") != _tool_key() or body.get("kind", "check") != kind
                or body.get("cwd") not in (None, confine.path_view().key)):
            return None
        real = os.path.realpath(ruleset)
        files = body["files"]
        if body.get("ruleset") != real or not isinstance(files, dict) or real not in files:
            return None
        root = find_root(ruleset)
        if any(not isinstance(h, str) or _digest(f, root) != h or (read is not None and read.get(f, h) != h)
               for f, h in files.items()):
            return None
        placed = body.get("placed")
        if not isinstance(placed, dict) or not all(isinstance(p, str) for p in placed.values()):
            return None
        now = {then: confine.display_path(p) for then, p in placed.items()}  # (``_placed``'s inverse)
        return Cached([_shown_again(diag_from_json(d), now) for d in body["diagnostics"]], list(files),
                      body.get("extra"))
    except (ValueError, KeyError, TypeError, AttributeError):
        return None


def store(ruleset: Path, files: list[str], diagnostics: list[Diagnostic], read: dict[str, str],
          kind: str = "check", extra: Any = None) -> None:
    """Remember a ruleset's diagnostics (and ``extra``, JSON made from the same files, if given), signed,
    under the digests of the bytes they were made from
    (``read``: ``confine.recording`` of the check, not the files read again now, which an editor may have
    saved since); a ruleset that could not find or read a file, or one of whose files changed while it was
    checked or was not recorded, is not cached (the file may appear later)."""
    folder = cache_dir()
    if folder is None or any(d.code in NOT_CACHED for d in diagnostics):
        return
    key = signing_key(folder)
    if key is None:
        return
    digests = {f: read.get(f) for f in files}
    if not digests or any(not h for h in digests.values()):
        return
    placed, anywhere = _placed(diagnostics)
    body = {"tool": _tool_key(), "cwd": None if anywhere else confine.path_view().key,
            "ruleset": os.path.realpath(ruleset), "files": digests, "placed": placed,
            "diagnostics": [diag_to_json(d) for d in diagnostics], "kind": kind,
            **({} if extra is None else {"extra": extra})}
    try:
        confine.write_atomic(_entry_path(folder, ruleset, kind), signed_json(key, body), durable=False)
    except confine.WriteFailed:
        pass

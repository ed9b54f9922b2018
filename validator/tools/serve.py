"""``ruleval serve``: the playground, a local web page over the same pipeline as the command line.

The page (``static/``: plain HTML, CSS and JavaScript shipped with the package, nothing fetched from
elsewhere) picks a bundled ruleset or opens a file, edits it with the diagnostics of ``check`` as
one types, picks or pastes a state, runs it (text result, ``explain`` trace, a picture drawn from
the family's ``view.yaml``, see ``picture``) and compares two rulesets as ``diff`` does.

What the page sends is untrusted, as a ruleset from a pull request is:

- the server listens on a loopback address only, unless ``--allow-remote`` is given; requests
  whose ``Host`` is not the loopback name it listens on are refused (a page elsewhere cannot reach
  it by renaming itself), and a POST must be JSON (a form on another site cannot send one);
- a request body is at most ``MAX_BODY`` bytes (refused from its ``Content-Length``, unread), read
  with a socket timeout, and parsed by the strict JSON reader states use;
- files are named by the bundle's own listing only, and read through ``confine`` under the
  bundle's root; an edited ruleset is written into a private copy of the bundle (mode 0700) and
  loaded from there, so what it imports is confined to that copy;
- every run has the command line's step budget and limits; each request that loads or runs a ruleset
  is answered by a process of its own (``Playground.answer``: forked, with a private snapshot of the
  copy to write its edits into), stopped at ``REQUEST_SECONDS`` whatever it is doing (503), while
  other requests are answered meanwhile; at most ``MAX_WORKERS`` at once (one more waits at most
  ``BUSY_WAIT``, then is told to try again, 503). Where processes cannot be forked, one request is
  evaluated at a time and starts no run past ``REQUEST_SECONDS``.
"""

from __future__ import annotations

import argparse
import hashlib
import ipaddress
import json
import os
import re
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, TextIO
from urllib.parse import parse_qs, urlsplit

from ..core.confine import Refused, bundle_root, read_bytes, walk, write_atomic
from ..core.diagnostics import Diagnostic, DiagnosticError, render_all
from ..core.exits import EXIT_OK, UsageError
from . import picture, whole_number

MAX_BODY = 8_000_000  # a ruleset (2 MB) and a state (5 MB), with room for the JSON around them
MAX_GENERATE = 50  # generated states a diff from the page may try
MAX_BALANCE_GAMES = 20  # whole games a balance from the page may play (each on this process, one after another)
MAX_BALANCE_ROUNDS = 10
SHRINK_RUNS = 200  # runs each shrinking may make from the page (`ruleval diff`: errata.MAX_SHRINK_RUNS)
SOCKET_TIMEOUT = 30.0
REQUEST_SECONDS = 30.0  # a request's process is stopped past this (each run is also bounded by its step budget)
MAX_WORKERS = 4  # requests answered at once, each by a process of its own
BUSY_WAIT = 5.0  # how long one more request waits for one of them to end before it is told to try again
STATIC = Path(__file__).resolve().parent / "static"
STATIC_FILES = {"/": ("index.html", "text/html; charset=utf-8"),
                "/app.js": ("app.js", "text/javascript; charset=utf-8"),
                "/style.css": ("style.css", "text/css; charset=utf-8"),
                # the editor, CodeMirror 5 (npm `codemirror`, MIT: vendor/codemirror/LICENSE), vendored
                **{f"/vendor/codemirror/{name}": (f"vendor/codemirror/{name}", kind) for name, kind in (
                    ("codemirror.js", "text/javascript; charset=utf-8"), ("simple.js", "text/javascript; charset=utf-8"),
                    ("yaml.js", "text/javascript; charset=utf-8"), ("javascript.js", "text/javascript; charset=utf-8"),
                    ("codemirror.css", "text/css; charset=utf-8"), ("LICENSE", "text/plain; charset=utf-8"))}}
MODES = ("plain", "seed", "dice", "exact")
EDITABLE = (".rules", ".yaml", ".yml", ".json")  # the files of a project the page lists and edits
MAX_PROJECT = 50_000_000  # bytes of such files a served project may hold (copied at the start)
TEXT_WIDTH = 100  # the Result tab's text, as `ruleval run` writes it to a file
BUNDLED = "bundled:"
EXTENDS = re.compile(r'^\s*extends\s+"([^"\n]+)"', re.M)


def _family(name: str) -> str:
    """A listed file's family: its folder (``chess`` for ``chess/rules.rules``; ``""`` at the top)."""
    return name.rsplit("/", 1)[0] if "/" in name else ""


def _within(name: str, family: str) -> bool:
    return not family or name.startswith(family + "/")


def _bundled_family(path: Path) -> str | None:
    """The bundled family a project's ruleset extends (``extends "bundled:FAMILY/..."``), if it does."""
    try:
        found = EXTENDS.search(path.read_text(encoding="utf-8", errors="replace")[:20_000])
    except OSError:
        return None
    if found is None or not found.group(1).startswith("bundled:"):
        return None
    family = found.group(1)[len("bundled:"):].split("/")[0]
    return family if family.isidentifier() else None


class BadRequest(Exception):
    """A request the playground refuses: answered with its HTTP status and this message."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


# ---------------------------------------------------------------- the playground's state


class Playground:
    """The listing of the files served (the bundled rulesets, or a designer's project folder), the
    private copy edited files are loaded from, and the requests."""

    def __init__(self, project: Path | None = None) -> None:
        top = bundle_root()
        if top is None:
            raise UsageError("the bundled rulesets are not installed with this ruleval")
        self.top = top
        self.project = Path(os.path.realpath(project)) if project is not None else None
        self.source = self.project if self.project is not None else top / "rulesets"  # names are relative to it
        self.rulesets = self._listing(self.source, (".rules",))
        self.examples = {name: path for name, path in self._listing(self.source, (".json",)).items()
                         if self.project is not None or "/examples/" in name}
        self.files = self._listing(self.source, EDITABLE) if self.project is not None else dict(self.rulesets)
        self.work = Path(tempfile.mkdtemp(prefix="ruleval-serve-"))  # mode 0700: this user's alone
        self.runs = self.work / "runs"  # the snapshots of the copy the requests' processes write into
        if self.project is not None:
            self.copy = self.work / "project"
            self.copy.mkdir()
            total = 0
            for name, path in self._listing(self.source, EDITABLE).items():
                total += path.stat().st_size
                if total > MAX_PROJECT:
                    self.close()
                    raise UsageError(f"`{project}` holds more than {MAX_PROJECT // 1_000_000} MB of rulesets, data and "
                                     "states: serve a smaller folder")
                (self.copy / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, self.copy / name)
            if not (self.copy / "ruleval.toml").is_file():
                (self.copy / "ruleval.toml").write_text("# the playground's private copy of a project\n")
        else:
            self.copy = self.work / "rulesets"
            shutil.copytree(top / "rulesets", self.work / "rulesets", dirs_exist_ok=True)
            shutil.copytree(top / "schemas", self.work / "schemas", dirs_exist_ok=True)
            (self.work / "ruleval.toml").write_text("# the playground's private copy of the bundled rulesets\n")
        self._bundled = self._listing(top / "rulesets", (".rules",)) if self.project is not None else {}
        self.lock = threading.Lock()  # forks, and (where there is no fork) requests, one at a time
        self.workers = threading.BoundedSemaphore(MAX_WORKERS)
        self._edited: dict[tuple[str, str], Any] = {}
        self._written: set[str] = set()  # files of the copy an edit has overwritten
        # the name a file a diagnostic names is shown by, to the page: set by ``ruleset`` for the request's
        # ruleset (its edited copy shown by the page's label); a request is one process's, or one at a time
        self.shown: Callable[[str], str] = lambda f: self._shown(f, None, f)

    @staticmethod
    def _listing(folder: Path, suffixes: tuple[str, ...]) -> dict[str, Path]:
        found, _refused = walk(folder, suffixes)
        return {p.relative_to(folder).as_posix(): p for p in found
                if not any(part.startswith(".") for part in p.relative_to(folder).parts)}

    def close(self) -> None:
        shutil.rmtree(self.work, ignore_errors=True)

    # -- answering a request in a process of its own

    def answer(self, handler: Callable[["Playground", dict[str, Any]], dict[str, Any]],
               body: dict[str, Any]) -> tuple[int, bytes]:
        """``handler``'s answer (status and JSON bytes), made by a forked process that writes into a
        snapshot of the copy of its own (``_snapshot``) and is killed once ``REQUEST_SECONDS`` have
        passed, whatever it is doing: a long request holds no lock, and others are answered meanwhile.
        Where there is no fork, the request is made here, one at a time, and starts no run past
        ``REQUEST_SECONDS`` (``api.deadline``)."""
        if not hasattr(os, "fork"):
            return self._answer_here(handler, body)
        if not self.workers.acquire(timeout=BUSY_WAIT):
            return _answer_bytes(503, {"error": f"the playground is answering {MAX_WORKERS} requests: try again in a moment"})
        try:
            with self.lock:  # (no other thread forks meanwhile)
                self._warm(body)
                readable, writable = os.pipe()
                pid = os.fork()
            if pid == 0:  # pragma: no cover - the child (its coverage is not collected)
                os.close(readable)
                self._child(handler, body, writable)
            os.close(writable)
            try:
                return self._wait(pid, readable)
            finally:
                os.close(readable)
                shutil.rmtree(self.runs / str(pid), ignore_errors=True)
        finally:
            self.workers.release()

    def _warm(self, body: dict[str, Any]) -> None:
        """Load the listed ruleset a request names, unedited, in this process (kept by ``load_ruleset``),
        so that each request's process finds it loaded rather than loading it again."""
        from ..api import load_ruleset

        base = body.get("base")
        if isinstance(base, str) and base in self.rulesets:
            try:
                load_ruleset(self.rulesets[base])
            except Exception:  # (the request's own process says what is wrong with it)
                pass

    def _child(self, handler: Callable[["Playground", dict[str, Any]], dict[str, Any]], body: dict[str, Any],
               writable: int) -> None:  # pragma: no cover - runs in the forked process
        status, data = 500, b""
        try:
            signal.signal(signal.SIGINT, signal.SIG_DFL)  # (Ctrl-C of the server stops its requests too)
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            self._snapshot()
            status, data = self._answered(handler, body)
        except BaseException as exc:
            status, data = _answer_bytes(500, _internal_error(exc))
        finally:
            try:
                view = memoryview(str(status).encode() + b"\n" + data)
                while view:
                    view = view[os.write(writable, view):]
            finally:
                os._exit(0)

    def _snapshot(self) -> None:
        """This process's own copy to write edits into: the copy's files linked (never written in
        place: edits replace a file, ``write_atomic``), so that requests made at once do not see one
        another's edits."""
        mine = self.runs / str(os.getpid())
        shutil.copytree(self.work, mine, copy_function=os.link, ignore=lambda folder, names: (
            ["runs"] if Path(folder) == self.work else []))
        self.copy = mine / self.copy.relative_to(self.work)
        self.work = mine
        self._edited, self._written = {}, set()

    def _wait(self, pid: int, readable: int) -> tuple[int, bytes]:
        """The answer the process ``pid`` writes to ``readable``; past ``REQUEST_SECONDS``, it is killed."""
        until = time.monotonic() + REQUEST_SECONDS
        chunks = []
        while True:
            left = until - time.monotonic()
            if left <= 0 or not select.select([readable], [], [], left)[0]:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return _answer_bytes(503, {"error": f"the request ran for more than {REQUEST_SECONDS:.0f} s, the "
                                                    "playground's limit for one request, and was stopped: ask for "
                                                    "fewer states or games, or a smaller run"})
            chunk = os.read(readable, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
        _, code = os.waitpid(pid, 0)
        status, _, data = b"".join(chunks).partition(b"\n")
        if not status.isdigit():  # the process died without an answer (out of memory, say)
            return _answer_bytes(500, {"error": f"the request's process ended without an answer (status {code})",
                                       "help": "the request may need more memory than this machine gives it"})
        return int(status), data

    def _answer_here(self, handler: Callable[["Playground", dict[str, Any]], dict[str, Any]],
                     body: dict[str, Any]) -> tuple[int, bytes]:
        from ..api import TimeUp, deadline

        if not self.lock.acquire(timeout=BUSY_WAIT):
            return _answer_bytes(503, {"error": "the playground is busy with another request: try again in a moment"})
        try:
            with deadline(REQUEST_SECONDS):
                return self._answered(handler, body)
        except TimeUp:
            return _answer_bytes(503, {"error": f"the request ran for more than {REQUEST_SECONDS:.0f} s, the "
                                                "playground's limit for one request: ask for fewer states or games"})
        finally:
            self.lock.release()

    def _answered(self, handler: Callable[["Playground", dict[str, Any]], dict[str, Any]],
                  body: dict[str, Any]) -> tuple[int, bytes]:
        """``handler``'s answer, with the writer's bugs its runs met and it did not list (I002: the answer is
        the reference's, and right) as its ``warnings``, each unit's once, as a command says them."""
        from ..lib.runtime import listening

        try:
            with listening() as bugs:
                answer = handler(self, body)
        except BadRequest as exc:
            return _answer_bytes(exc.status, {"error": str(exc)})
        met = bugs.unsaid()
        if met:
            answer["warnings"] = self.diagnostics_answer([d for d, _ in met],
                                                         {d.span.file: text for d, text in met if text})["diagnostics"]
        return _answer_bytes(200, answer)

    # -- reading

    def catalogue(self) -> dict[str, Any]:
        bases = {name: base for name in self.rulesets if (base := self._base_of(name)) is not None}
        families = sorted({_family(name) for name in self.rulesets})
        mains = {}
        for family in families:  # the ruleset the most others of its family extend, else the first
            members = sorted(n for n in self.rulesets if _family(n) == family)
            mains[family] = max(members, key=lambda n: (sum(1 for b in bases.values() if b == n), -members.index(n)))
        modes = {}
        for name in self.rulesets:
            view = picture.read_view(self.rulesets[name].parent, self.rulesets[name].parent)
            bundled = _bundled_family(self.rulesets[name])
            if view is None and bundled is not None:
                view = picture.read_view(self.top / "rulesets" / bundled, self.top)
            if view and view.get("mode") in MODES:
                modes[name] = view["mode"]
        states = {name: sorted(e for e in self.examples if _within(e, _family(name))) for name in self.rulesets}
        # first offered: the main ruleset of the family with the most rulesets (a project's own, at its top)
        main_family = max(families, key=lambda f: (sum(1 for n in self.rulesets if _family(n) == f), f == ""),
                          default=None)
        others = sorted(self.rulesets) + sorted({b for b in bases.values() if b.startswith(BUNDLED)})
        return {"project": self.project.name if self.project is not None else None,
                "rulesets": sorted(self.rulesets), "others": others, "examples": sorted(self.examples),
                "files": sorted(self.files),
                "modes": modes, "bases": bases, "mains": mains, "states": states,
                "default": mains.get(main_family) if main_family is not None else None,
                "limits": {"body": MAX_BODY, "generate": MAX_GENERATE}}

    def _base_of(self, name: str) -> str | None:
        """The listed ruleset ``name`` extends, if it extends one of the listing."""
        try:
            text = read_bytes(self.rulesets[name], MAX_BODY, self.source).decode("utf-8")
        except (Refused, UnicodeDecodeError):
            return None
        found = EXTENDS.search(text)
        if found is None:
            return None
        if found.group(1).startswith(BUNDLED) and found.group(1)[len(BUNDLED):] in self._bundled:
            return found.group(1)
        target = os.path.normpath(os.path.join(os.path.dirname(name), found.group(1))).replace(os.sep, "/")
        return target if target in self.rulesets else None

    def bundled_text(self, name: str) -> str:
        """A listed file's text; anything else, a path that climbs out of the folder served included, is 404."""
        path = self.rulesets.get(name) or self.examples.get(name) or self.files.get(name)
        if path is None:
            raise BadRequest(f"no {'project' if self.project is not None else 'bundled'} file `{name[:80]}`", 404)
        try:
            return read_bytes(path, MAX_BODY, self.source).decode("utf-8")
        except (Refused, UnicodeDecodeError) as exc:
            raise BadRequest(f"bundled file `{name}` cannot be read: {exc}", 404) from None

    # -- loading what the page sends

    def _write_edits(self, edits: Any) -> str:
        """Write the page's edits of other files of the folder (``{name: text}``) into the private copy,
        and put back the copy's files an earlier request edited and this one does not; a digest of
        the edits (part of the key the loaded rulesets are kept by)."""
        from ..lang.syntax import MAX_SOURCE_BYTES

        if edits is None:
            edits = {}
        if not isinstance(edits, dict) or len(edits) > 64:
            raise BadRequest("`edits` must map at most 64 of the folder's file names to their texts")
        digest = hashlib.sha256()
        for name in sorted(edits):
            text = edits[name]
            if name not in self.files or not isinstance(text, str):
                raise BadRequest(f"`edits`: no file `{str(name)[:80]}` in the folder served, or its text is not a string", 404)
            if len(text.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
                raise BadRequest(f"`{name}` is larger than {MAX_SOURCE_BYTES} bytes", 413)
            _refuse_surrogate(text, f"`edits` of `{name}`")
            digest.update(f"{name}\0{text}\0".encode("utf-8", "surrogatepass"))
        for name in sorted(self._written - set(edits)):  # an edit undone: the file as it is in the folder
            write_atomic(self.copy / name, self.bundled_text(name), durable=False)
            self._written.discard(name)
        for name, text in sorted(edits.items()):
            target = self.copy / name
            current = target.read_text(encoding="utf-8", errors="surrogatepass") if target.is_file() else None
            if current != text:
                write_atomic(target, text, durable=False)
            self._written.add(name)
        return digest.hexdigest()

    def ruleset(self, base: Any, text: Any, label: Any, edits: Any = None) -> Any:
        """The ruleset the page shows: the listed ``base`` itself if ``text`` is its text (or none) and
        no other file is edited, else ``text`` written beside the private copy of ``base`` (with the
        ``edits`` of other files) and loaded from there. Sets ``shown`` for it."""
        from ..api import load_ruleset
        from ..lang.syntax import MAX_SOURCE_BYTES

        if not isinstance(base, str) or base not in self.rulesets:
            raise BadRequest(f"`base` must name a listed ruleset, one of: {', '.join(sorted(self.rulesets))}")
        if text is not None and not isinstance(text, str):
            raise BadRequest("`text` must be a string")
        shown_label = label if isinstance(label, str) and label.strip() else base
        shown_label = shown_label[:120]
        original = self.rulesets[base]
        edited = self._write_edits({k: v for k, v in (edits or {}).items() if k != base} if isinstance(edits, dict) else edits)
        if (text is None or text == self.bundled_text(base)) and not self._written:
            self.shown = lambda f: self._shown(f, None, shown_label)
            return load_ruleset(original)
        text = self.bundled_text(base) if text is None else text
        if len(text.encode("utf-8", "surrogatepass")) > MAX_SOURCE_BYTES:
            raise BadRequest(f"the ruleset is larger than {MAX_SOURCE_BYTES} bytes", 413)
        _refuse_surrogate(text, "`text`")
        target = self.copy / Path(base).parent / f"{Path(base).stem}.playground.rules"
        key = (base, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest() + edited)
        rs = self._edited.get(key)
        if rs is None:
            try:
                write_atomic(target, text, durable=False)
            except Exception as exc:
                raise BadRequest(f"the edited ruleset cannot be written: {exc}", 500) from None
            rs = load_ruleset(target, use_cache=False)
            if len(self._edited) >= 16:
                self._edited.clear()
            self._edited[key] = rs
        self.shown = lambda f: self._shown(f, target, shown_label)
        return rs

    def _shown(self, file: str, edited: Path | None, label: str) -> str:
        real = os.path.realpath(file) if file and not file.startswith("<") else file
        if edited is not None and real == os.path.realpath(edited):
            return label
        work = os.path.realpath(self.copy) + os.sep
        top = os.path.realpath(self.source) + os.sep
        for prefix in (work, top):
            if real.startswith(prefix):
                return real[len(prefix):]
        return file

    def said(self, text: str | None) -> str | None:
        """A message or help with the server's own paths in it (the private copy's, the folder served,
        the checkout's) as the designer names them: relative to the folder served (``.`` for the
        folder itself; ``<bundle>`` for the bundled rulesets' own root). Only a path in backticks, as
        messages write them, is rewritten, and only from one of those folders' names."""
        if text is None or "`" not in text:
            return text
        names: dict[str, str] = {}
        for folder, as_ in ((self.top, "<bundle>"), (self.work, "<bundle>"), (self.source, "."), (self.copy, ".")):
            for form in {str(folder), os.path.realpath(folder), os.path.relpath(folder)}:
                # (a relative name of one part, or of `..`s only, could be a path the designer wrote)
                if os.path.isabs(form) or (os.sep in form and any(part != ".." for part in Path(form).parts)):
                    names[form] = as_
        longest_first = sorted(names, key=len, reverse=True)  # (a folder inside another)

        def shown(m: re.Match[str]) -> str:
            path = m.group(1)
            for form in longest_first:
                if path == form:
                    return f"`{names[form]}`"
                if path.startswith(form + os.sep):
                    rest = path[len(form) + 1:]
                    return f"`{rest if names[form] == '.' else names[form] + '/' + rest}`"
            return m.group()

        return re.sub(r"`([^`\n]*)`", shown, text)

    def diagnostics_answer(self, diags: list[Diagnostic], sources: dict[str, str]) -> dict[str, Any]:
        """``diags`` as an answer gives them (each a JSON diagnostic, and all rendered), their files shown
        as ``shown`` names them and the server's paths in their messages as ``said`` does; the writer's
        bugs among them are said (``runtime.said``: not given again as the answer's ``warnings``)."""
        from ..lib.runtime import said as said_here

        said_here(diags)
        shown, said = self.shown, self.said
        mapped = [replace(d, message=said(d.message) or "", help=said(d.help),
                          span=replace(d.span, file=shown(d.span.file)),
                          related=tuple(replace(r, span=replace(r.span, file=shown(r.span.file)),
                                                message=said(r.message) or "") for r in d.related))
                  for d in diags]
        mapped_sources = {shown(name): text for name, text in sources.items()}
        return {"diagnostics": [d.to_json() for d in mapped], "errors": sum(1 for d in mapped if d.is_error),
                "rendered": render_all(mapped, mapped_sources, None) if mapped else ""}

    def state(self, text: Any) -> Any:
        from ..engine.state import MAX_STATE_BYTES, read_state_text

        if not isinstance(text, str):
            raise BadRequest("`state` must be the text of a state (JSON)")
        if len(text.encode("utf-8", "surrogatepass")) > MAX_STATE_BYTES:
            raise BadRequest(f"the state is larger than {MAX_STATE_BYTES} bytes", 413)
        return read_state_text(text, "state")

    # -- the requests

    def check(self, body: dict[str, Any]) -> dict[str, Any]:
        rs = self.ruleset(body.get("base"), body.get("text"), body.get("label"), body.get("edits"))
        return self.diagnostics_answer(rs.diagnostics, rs.sources)

    def run(self, body: dict[str, Any]) -> dict[str, Any]:
        from ..api import RunError
        from .explain import explain_text, unit_story
        from .textview import result_text

        rs = self.ruleset(body.get("base"), body.get("text"), body.get("label"), body.get("edits"))
        if not rs.ok:
            return {"ok": False, **self.diagnostics_answer([d for d in rs.diagnostics if d.is_error], rs.sources)}
        options = _run_options(body)
        want_explain = body.get("explain") is True
        unit = body.get("unit")
        if unit is not None and not isinstance(unit, str):
            raise BadRequest("`unit` must be a text: a piece as a player writes it (`explain --unit`)")
        try:
            state = self.state(body.get("state"))
            if want_explain:
                evaluated = rs.evaluate(state, query=options["query"], args=options["args"], seed=options["seed"],
                                        dice=options["dice"], explain=True, state_name="state")
                evaluated.json()  # (an answer that cannot be written is refused here, as `run` refuses it)
                if unit and unit.strip():
                    return {"ok": True, "explain": unit_story(rs, evaluated, unit.strip())}
                return {"ok": True, "explain": explain_text(evaluated)}
            evaluated = rs.evaluate(state, state_name="state", **options)
            result = evaluated.json()
            text = _json(rs, options["query"], result)
        except (RunError, DiagnosticError) as exc:
            from .common import args_named, dice_named

            said = args_named(dice_named(exc.diagnostics, "the scripted dice"), "args")  # (the request's `args`)
            return {"ok": False, **self.diagnostics_answer(said, rs.sources)}
        answer: dict[str, Any] = {"ok": True, "result": json.loads(text), "text": result_text(evaluated, TEXT_WIDTH)}
        answer["picture"], answer["picture_note"] = self._picture(body, rs, state, result)
        return answer

    def _picture(self, body: dict[str, Any], rs: Any, state: Any, result: Any) -> tuple[str | None, str | None]:
        view = picture.view_of(rs)
        pic = picture.picture_for(view, result)
        if pic is None:
            return None, ("no picture: this family has no view.yaml" if view is None
                          else "no picture for this result (try another mode or query)")
        focus = body.get("focus")
        try:
            return picture.draw(pic, rs, state, result, focus if isinstance(focus, str) and focus else None), None
        except DiagnosticError as exc:
            return None, self.said("no picture: " + "; ".join(f"{d.code} {d.message}" for d in exc.diagnostics)[:300])

    def diff(self, body: dict[str, Any]) -> dict[str, Any]:
        from ..api import load_ruleset
        from . import errata

        other = body.get("other")
        if isinstance(other, str) and other.startswith(BUNDLED) and other[len(BUNDLED):] in self._bundled:
            old_path = self._bundled[other[len(BUNDLED):]]  # a project's base among the bundled rulesets
        elif isinstance(other, str) and other in self.rulesets:
            old_path = self.rulesets[other]
        else:
            raise BadRequest("`other` must name a listed ruleset, or the bundled ruleset a project's extends (the OLD side)")
        new = self.ruleset(body.get("base"), body.get("text"), body.get("label"), body.get("edits"))
        old = load_ruleset(old_path)
        for rs in (old, new):
            if not rs.ok:
                errors = [d for d in rs.diagnostics if d.is_error]
                return {"ok": False, **self.diagnostics_answer(errors, rs.sources)}
        options = _run_options(body)
        generate = body.get("generate", 10)
        if not isinstance(generate, int) or isinstance(generate, bool) or not 0 <= generate <= MAX_GENERATE:
            raise BadRequest(f"`generate` must be a number from 0 to {MAX_GENERATE}")
        probes: list[Any] = []
        if body.get("state") not in (None, ""):
            try:
                state = self.state(body.get("state"))
            except DiagnosticError as exc:
                return {"ok": False, **self.diagnostics_answer(exc.diagnostics, {})}
            probes.append(errata.Probe("state", state, options["query"], options["args"], options["seed"],
                                       options["dice"], options["exact"]))
        errata.IGNORE_CITES.set(body.get("ignore_cites") is True)
        errata.EXACT_ROWS.set(12)
        # (a sweep in this request's own process: the settings above are its own)
        found = errata.compare_states(old, new, probes, generate, 0, options["exact"], errata.SHRUNK,
                                      errata.Options(jobs=1, shrink_runs=SHRINK_RUNS))
        diffs, tried, note, skips = found.differences or [], found.tried, found.note, found.skips
        lines = errata.shown_differences(old, new, diffs, errata.SHOWN, "(`ruleval diff --show N` prints N)")
        if generate > 1 and diffs:  # the figures: the share that differ, and where
            lines += errata.summary_text(found.found or [], tried, "states", 5)
        summary = errata.tried_line(tried, skips, sum(skips.values()), len(diffs), tried)
        lines.append(summary)
        if note:
            lines.insert(0, f"note: {note}")
        return {"ok": True, "differ": len(diffs), "tried": tried, "skipped": sum(skips.values()),
                "summary": summary, "figures": errata.summary_json(found.found or [], tried), "text": "\n".join(lines)}

    def balance(self, body: dict[str, Any]) -> dict[str, Any]:
        """``ruleval balance`` of the ruleset the page shows, a few games in this process: its figures
        as text and JSON, and their plot as SVG when matplotlib is installed."""
        from ..lang.loader import real_path
        from .balance import PlayerError, balance_text, figure_bytes, run_balance

        rs = self.ruleset(body.get("base"), body.get("text"), body.get("label"))
        if not rs.ok:
            errors = [d for d in rs.diagnostics if d.is_error]
            return {"ok": False, **self.diagnostics_answer(errors, rs.sources)}
        games, rounds, player = body.get("games", 4), body.get("rounds", 4), body.get("player", "random")
        for name, value, most in (("games", games, MAX_BALANCE_GAMES), ("rounds", rounds, MAX_BALANCE_ROUNDS)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= most:
                raise BadRequest(f"`{name}` must be a number from 1 to {most}")
        if player not in ("random", "heuristic"):
            raise BadRequest("`player` must be `random` or `heuristic`")
        try:
            figures = run_balance(str(real_path(rs.path)), [player], games=games, rounds=rounds, jobs=1)
        except UsageError as exc:
            raise BadRequest(str(exc)) from None
        except PlayerError as exc:
            errors = [d for d in exc.rs.diagnostics if d.is_error]
            return {"ok": False, **self.diagnostics_answer(errors, exc.rs.sources)}
        except DiagnosticError as exc:
            return {"ok": False, **self.diagnostics_answer(exc.diagnostics, rs.sources)}
        title = self.shown(figures["variant"])
        text = "\n".join(balance_text(title, figures, 8))
        try:
            svg: str | None = figure_bytes(figures, Path(title).stem, "svg").decode("utf-8")
        except UsageError:  # matplotlib is not installed: the figures without their plot
            svg = None
        return {"ok": True, "text": text, "svg": svg, "figures": figures}


def _run_options(body: dict[str, Any]) -> dict[str, Any]:
    from ..core.jsontext import loads
    from .common import parse_dice

    query = body.get("query") or "main"
    if not isinstance(query, str) or len(query) > 200:
        raise BadRequest("`query` must be a query's name")
    args = body.get("args") or []
    if isinstance(args, str):
        try:
            args = loads(args, "args") if args.strip() else []
        except DiagnosticError as exc:
            raise BadRequest(f"`args`: {exc.diagnostics[0].message}") from None
    if not isinstance(args, list):
        raise BadRequest("`args` must be a JSON list of the query's arguments")
    mode = body.get("mode") or "plain"
    if mode not in MODES:
        raise BadRequest(f"`mode` must be one of {', '.join(MODES)}")
    seed = body.get("seed") if mode == "seed" else None
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool)):
        raise BadRequest("`seed` must be an integer")
    dice = None
    if mode == "dice":
        try:
            dice = parse_dice(str(body.get("dice") or ""))
        except UsageError as exc:
            raise BadRequest(str(exc)) from None
    return {"query": query, "args": args, "seed": seed, "dice": dice, "exact": mode == "exact"}


def _answer_bytes(status: int, value: Any) -> tuple[int, bytes]:
    """An answer as the server sends it: its status, and its JSON text in UTF-8."""
    from ..core.jsontext import dumps

    try:
        text = dumps(value, ensure_ascii=False)
    except ValueError:
        status, text = 500, json.dumps({"error": "the answer holds a number JSON cannot write"})
    return status, text.encode("utf-8", "backslashreplace")


def _refuse_surrogate(text: str, what: str) -> None:
    """A bad request if ``text`` (a file's text the page sent) holds a lone surrogate (``"\\ud800"`` in the
    request's JSON), which no UTF-8 file holds: said at its line and column, as a file's bad byte is."""
    found = re.search("[\ud800-\udfff]", text)
    if found:
        bad = found.start()
        line = text.count("\n", 0, bad) + 1
        col = bad - (text.rfind("\n", 0, bad) + 1) + 1
        raise BadRequest(f"{what}: line {line}, column {col}: a lone surrogate U+{ord(text[bad]):04X} is no character "
                         "of a UTF-8 text")


def _internal_error(exc: BaseException) -> dict[str, str]:
    return {"error": f"internal error: {type(exc).__name__}: {str(exc)[:300]}",
            "help": "this is a bug in ruleval; please report it with what the page sent"}


def _json(rs: Any, query: str, result: Any) -> str:
    from .common import result_json

    return result_json(rs, query, result)


# ---------------------------------------------------------------- HTTP


class PlaygroundServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], playground: Playground, allow_remote: bool = False, quiet: bool = True):
        self.playground = playground
        self.allow_remote = allow_remote
        self.quiet = quiet
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        super().__init__(address, _Handler)

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        host = str(host)
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}/"

    def server_close(self) -> None:
        super().server_close()
        self.playground.close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that failed outside the handler's own answer (socketserver would print the
        traceback): a client that left early is nobody's error; anything else is one line."""
        exc = sys.exc_info()[1]
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return
        sys.stderr.write(f"ruleval serve: internal error: {type(exc).__name__}: {str(exc)[:300]} "
                         "(this is a bug in ruleval; please report it)\n")


class _Handler(BaseHTTPRequestHandler):
    server: PlaygroundServer
    timeout = SOCKET_TIMEOUT
    server_version = "ruleval-playground"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        if not self.server.quiet:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Content-Security-Policy",
                         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
                         "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, value: Any) -> None:
        self._send(*_answer_bytes(status, value), "application/json; charset=utf-8")

    def _host_allowed(self) -> bool:
        if self.server.allow_remote:
            return True
        host = (self.headers.get("Host") or "").strip()
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 or host.startswith("[") else host
        return is_loopback(name.strip("[]")) if name else False

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        self._handle("GET")

    def do_POST(self) -> None:  # noqa: N802
        self._handle("POST")

    def _handle(self, method: str) -> None:
        try:
            if not self._host_allowed():
                raise BadRequest("this playground answers on its loopback address only", 403)
            parts = urlsplit(self.path)
            if method == "GET":
                self._get(parts.path, parse_qs(parts.query))
            else:
                self._post(parts.path)
        except BadRequest as exc:
            self._json(exc.status, {"error": str(exc)})
        except (TimeoutError, ConnectionError):  # a client that stopped sending, or left: nobody to answer
            self.close_connection = True
        except Exception as exc:  # a bug: reported to the page without a traceback, the server goes on
            self._json(500, _internal_error(exc))

    def _get(self, path: str, query: dict[str, list[str]]) -> None:
        if path in STATIC_FILES:
            name, kind = STATIC_FILES[path]
            self._send(200, (STATIC / name).read_bytes(), kind)
        elif path == "/api/bundle":
            self._json(200, self.server.playground.catalogue())
        elif path == "/api/file":
            name = (query.get("name") or [""])[0]
            self._json(200, {"name": name, "text": self.server.playground.bundled_text(name)})
        else:
            raise BadRequest("not found", 404)

    def _post(self, path: str) -> None:
        from ..core.jsontext import loads

        handlers = {"/api/check": Playground.check, "/api/run": Playground.run, "/api/diff": Playground.diff,
                    "/api/balance": Playground.balance}
        if path not in handlers:
            raise BadRequest("not found", 404)
        kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if kind != "application/json":
            raise BadRequest("send the request as application/json", 415)
        origin = self.headers.get("Origin")
        if origin and not self.server.allow_remote and not is_loopback(urlsplit(origin).hostname or ""):
            raise BadRequest("requests from other sites are refused", 403)
        given = (self.headers.get("Content-Length") or "").strip(" \t")  # (the spaces around a field's value are not of it)
        if not given:
            raise BadRequest("a request needs its Content-Length", 411)
        length = whole_number(given)  # (not `int`, which reads `١`, `1_0`, `+10` as numbers)
        if length is None or given.startswith("-"):  # (`-0` too: HTTP writes a length in digits alone)
            self.close_connection = True  # the body's length is not known: it is not read
            raise BadRequest("the Content-Length is not a number of bytes in the digits 0-9")
        if length > MAX_BODY:
            self.close_connection = True  # the body is not read
            raise BadRequest(f"the request is larger than {MAX_BODY} bytes", 413)
        raw = self.rfile.read(length)
        try:
            body = loads(raw.decode("utf-8"), "request")
        except (UnicodeDecodeError, DiagnosticError):
            raise BadRequest("the request is not JSON text in UTF-8") from None
        if not isinstance(body, dict):
            raise BadRequest("the request must be a JSON object")
        self._send(*self.server.playground.answer(handlers[path], body), "application/json; charset=utf-8")


def make_server(host: str = "127.0.0.1", port: int = 8000, allow_remote: bool = False, quiet: bool = True,
                project: str | Path | None = None) -> PlaygroundServer:
    """A playground server listening on ``host:port`` (0: any free port), serving the bundled rulesets
    or the ``project`` folder; not yet serving."""
    if not allow_remote and not is_loopback(host):
        raise UsageError(f"`{host}` is not a loopback address: the playground runs code it is sent, so it "
                         "listens on this machine only (give --allow-remote to listen there anyway)")
    if project is not None and not Path(project).is_dir():
        raise UsageError(f"`{project}` is not a folder: give the folder of a project (its rulesets, maps and states)")
    playground = Playground(Path(project) if project is not None else None)
    # what the requests' processes use, imported here once: a process forked while another thread
    # was importing a module would wait for that import for ever
    from .. import api  # noqa: F401
    from . import balance, errata, explain, textview  # noqa: F401
    from ..core import jsontext  # noqa: F401
    if project is not None and not playground.rulesets:
        playground.close()
        raise UsageError(f"`{project}` holds no ruleset (*.rules): nothing to serve")
    try:
        return PlaygroundServer((host, port), playground, allow_remote, quiet)
    except OSError as exc:
        playground.close()
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None


def cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    server = make_server(args.host, args.port, args.allow_remote, quiet=not args.verbose,
                         project=getattr(args, "path", None))
    err.write(f"playground on {server.url} (Ctrl-C stops it)\n")
    err.flush()
    import signal

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt  # SIGTERM stops the server as Ctrl-C does: its private copy removed

    try:
        before = signal.signal(signal.SIGTERM, stop)
    except ValueError:  # not the main thread (an embedding caller): its own signals are its business
        before = None
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
        if before is not None:
            signal.signal(signal.SIGTERM, before)
    return EXIT_OK


__all__ = ["BadRequest", "Playground", "PlaygroundServer", "make_server", "is_loopback"]

"""One rule for every file an input names, and for every file ruleval writes.

Rulesets, test cases and cache entries come from strangers (a pull request in CI). Whatever path
such an input names (an import, a clause catalogue, a schema or a schema's ``$ref``, a test case's
``state_file`` or ``ruleset``, a file a cache entry covers, a ruleset found by walking a folder) is
read only through this module:

- resolved with symlinks followed, then required to lie under a root (the ruleset root: the nearest
  folder holding ``ruleval.toml``, else the file's own folder);
- refused unless it is a regular file (devices, FIFOs, sockets, folders, anything under ``/proc`` or
  ``/sys``, whose files claim a size of 0 and hold the process's secrets): it is opened without
  blocking and tested on the open descriptor, so a FIFO never makes a read wait and a file swapped
  after the test is still tested;
- refused when larger than the caller's limit, and read at most ``limit + 1`` bytes whatever size the
  file claims.

A refusal is a ``Refused`` exception whose message names the path, never the file's content; each
caller turns it into its own located diagnostic. Paths the user gives on the command line are the
user's choice and are read with the same size and file-kind checks, but no root.

Writes (``fmt -w``, ``render -o``, ``test --update``, reports) go to a temporary file in the target's
folder that replaces the target only once it is complete (``write_atomic``): a failed write leaves
the old file as it was.
"""

from __future__ import annotations

import contextlib
import contextvars
import errno
import functools
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator, NamedTuple

ROOT_MARKER = "ruleval.toml"
# Pseudo-file systems: their "regular" files claim a size of 0 and hold the process's secrets.
# (Devices under /dev are refused as devices; a project may well live in /dev/shm.)
_SPECIAL_TREES = ("/proc", "/sys")
_SPECIAL_PARTS = frozenset(Path(t).parts for t in _SPECIAL_TREES)


class Refused(Exception):
    """A file ruleval will not read. ``reason`` is one of ``outside``, ``special``, ``large``,
    ``missing``, ``unreadable``; ``size`` is the file's size when known."""

    def __init__(self, reason: str, message: str, size: int | None = None, help: str | None = None):
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.size = size
        self.help = help  # advice for the diagnostic, when the caller's own would not fit


def find_root(path: Path) -> Path:
    """The ruleset root of a file: the nearest folder from the file's own (symlinks followed) upwards
    holding ``ruleval.toml``, else the file's folder."""
    return root_of_resolved(Path(os.path.realpath(path)).parent)  # (the folder of a resolved path is resolved)


def root_of_folder(folder: Path) -> Path:
    """The root of what lies in ``folder``: the nearest folder from it upwards holding ``ruleval.toml``,
    else the folder itself (symlinks followed)."""
    return root_of_resolved(Path(os.path.realpath(folder)))


def root_of_resolved(start: Path) -> Path:
    """``root_of_folder`` of a folder already resolved (symlinks followed: ``os.path.realpath``'s)."""
    for candidate in (start, *start.parents):
        if (candidate / ROOT_MARKER).is_file():
            return _resolved(candidate)
    return _resolved(start)


# The roots this module found, each a resolved path (``root_of_folder``, ``bundle_roots``): ``is_inside``
# compares with them as they are, rather than resolving them again at every file a ruleset names (a
# cold check of the bundled rulesets resolved a root some 900 times). That is never looser: a resolved
# path under such a root ``R`` begins with ``R``, so ``R`` itself holds no symlink now and resolves to
# itself; where ``R`` has changed since (a folder on it replaced by a symlink), a file is refused that
# resolving ``R`` again might have let through. Any other root given is resolved at each call, as before.
_RESOLVED: set[str] = set()


def _resolved(path: Path) -> Path:
    if len(_RESOLVED) >= 10_000:
        _RESOLVED.clear()
    _RESOLVED.add(str(path))
    return path


BUNDLE_PREFIX = "bundled:"  # `extends "bundled:FAMILY/NAME.rules"`: a ruleset shipped with ruleval


@functools.lru_cache(maxsize=1)
def bundle_root() -> Path | None:
    """The folder holding the rulesets and schemas shipped with ruleval (``rulesets/``, ``schemas/``):
    ``validator/bundled`` in an installed package, the source checkout's top folder otherwise (also
    what an editable install runs from); None when neither has them. Found once per process (every
    path a ruleset names asks: ruleval's own files do not move while it runs)."""
    package = Path(__file__).resolve().parent.parent  # validator/
    for candidate in (package / "bundled", package.parent):
        if (candidate / "rulesets").is_dir() and (candidate / "schemas").is_dir():
            return Path(os.path.realpath(candidate))
    return None


Root = Path | tuple[Path, ...]  # a folder, or several (the bundle: its `rulesets/` and `schemas/`)


@functools.lru_cache(maxsize=1)
def bundle_roots() -> tuple[Path, ...] | None:
    """The only folders a ``bundled:`` path, and a file a bundled ruleset names, may resolve into: the
    bundle's ``rulesets/`` and ``schemas/`` (never the rest of a source checkout, which an editable
    install runs from). Found once per process, as ``bundle_root``: every reference a ruleset makes asks."""
    top = bundle_root()
    if top is None:
        return None
    return tuple(_resolved(Path(os.path.realpath(top / part))) for part in ("rulesets", "schemas"))


def is_inside(real: Path, root: Root) -> bool:
    """Whether ``real`` (already resolved) is ``root`` or lies under it (one of them, for several)."""
    if isinstance(root, tuple):
        return any(is_inside(real, one) for one in root)
    top = root if str(root) in _RESOLVED else Path(os.path.realpath(root))
    return real == top or top in real.parents


def _root_shown(root: Root) -> str:
    if isinstance(root, tuple):
        return "the bundled rulesets and schemas"
    return f"the ruleset root `{display_path(Path(os.path.realpath(root)))}`"


def _special_tree(real: Path) -> bool:
    # (a resolved path is absolute: it is one of the trees, or lies under it, when it starts as it does)
    return real.parts[:2] in _SPECIAL_PARTS


def resolve(path: Path, root: Root | None, shown: str | None = None) -> Path:
    """``path`` with symlinks followed; ``Refused`` when it leaves ``root`` or lies in a pseudo-file
    system. Does not test that the file exists (see ``check_file``)."""
    shown = shown if shown is not None else str(path)
    if "\x00" in str(path):  # (no file system takes it: realpath and open raise ValueError)
        raise Refused("unreadable", f"`{shown}` is not a valid path: it holds a NUL character")
    real = Path(os.path.realpath(path))
    if root is not None and not is_inside(real, root):
        raise Refused("outside", f"`{shown}` resolves outside {_root_shown(root)}",
                      help=("`bundled:` names a ruleset or schema shipped with ruleval, under its `rulesets/` or "
                            "`schemas/`" if isinstance(root, tuple) else None))
    if _special_tree(real):
        raise Refused("special", f"`{shown}` is not a regular file (it lies under `/{real.parts[1]}`)")
    return real


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_file(path: Path, root: Root | None, shown: str | None = None) -> Path:
    """The resolved path of a regular file under ``root``; ``Refused`` otherwise (``missing`` when there
    is nothing there). Only ``stat``s: nothing is opened."""
    shown = shown if shown is not None else str(path)
    real = resolve(path, root, shown)
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise Refused("missing", f"`{shown}` not found") from None
    except OSError as exc:
        raise Refused("unreadable", f"`{shown}` cannot be read: {exc.strerror}") from None
    if not stat.S_ISREG(st.st_mode):
        raise Refused("special", f"`{shown}` is {_kind(st.st_mode)}, not a regular file")
    return real


def read_bytes(path: Path, limit: int, root: Root | None = None, shown: str | None = None) -> bytes:
    """The bytes of a regular file (under ``root`` when given) of at most ``limit`` bytes.

    Opened with ``O_NONBLOCK`` (a FIFO swapped in after any test does not make the open wait) and
    ``O_NOFOLLOW`` on the resolved path, tested on the open descriptor, and read at most ``limit + 1``
    bytes, so a file whose size lies (or grows) is still cut off."""
    shown = shown if shown is not None else str(path)
    real = resolve(path, root, shown)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(real, flags)
    except FileNotFoundError:
        raise Refused("missing", f"`{shown}` not found") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink appeared since it was resolved
            raise Refused("special", f"`{shown}` changed while it was read") from None
        if exc.errno == errno.EISDIR:
            raise Refused("special", f"`{shown}` is a folder, not a regular file") from None
        raise Refused("unreadable", f"`{shown}` cannot be read: {exc.strerror}") from None
    try:
        at = _clock()  # (before the look at the file: ``Seen.at``)
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused("special", f"`{shown}` is {_kind(st.st_mode)}, not a regular file")
        if st.st_size > limit:
            raise Refused("large", f"`{shown}` is {st.st_size} bytes, more than the limit of {limit}", st.st_size)
        chunks = []
        left = limit + 1
        while left > 0:
            try:
                chunk = os.read(fd, min(left, 1 << 20))
            except BlockingIOError:  # pragma: no cover - regular files never block
                break
            except OSError as exc:
                raise Refused("unreadable", f"`{shown}` cannot be read: {exc.strerror}") from None
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise Refused("large", f"`{shown}` is more than the limit of {limit} bytes", len(data))
        active = _READ.get()
        if active:
            _note(active, str(real), data, st, at)
        return data
    finally:
        os.close(fd)


# A file saved within this long after ruleval looked at it may keep the modification and change times
# it had then: FAT keeps them in steps of 2 s (the coarsest file system in common use; ext4, XFS, APFS
# and tmpfs keep nanoseconds but step with the kernel's clock tick, milliseconds), and a network file
# system stamps files by its server's clock, which may be a little behind this one's (a second more).
TICK_NS = 3_000_000_000
_clock = time.time_ns  # (the clock a file's times are compared with)


def stamp(st: os.stat_result) -> tuple[int, ...]:
    """What any rewrite of a file changes, unless it lands within its clock's tick (``TICK_NS``) and at
    its size: modification and change times (the change time cannot be set back: ``os.utime`` moves
    it on), size, inode and device (a file replaced by another, ``write_atomic``)."""
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino, st.st_dev)


class Seen(NamedTuple):
    """A file as ``read_bytes`` read it: its ``stamp`` on the open descriptor, taken before its bytes
    were read, and the later of its modification and change times; the clock just before that; the
    SHA-256 of the bytes, or None when they were not hashed (the file was not ``racy``, and no cache
    needs its digest), or an empty text when the file was read twice in one recording and found to
    have changed in between."""

    stamp: tuple[int, ...]
    changed: int
    at: int
    digest: str | None

    @property
    def racy(self) -> bool:
        """Whether a rewrite after the read could leave the file with the same stamp: it was modified
        (or its times set) within ``TICK_NS`` of the read, or after it (a clock ahead of this one).
        Otherwise any later rewrite has another stamp: its change time is later than the read less a tick."""
        return self.changed > self.at - TICK_NS


def _seen(st: os.stat_result, at: int) -> Seen:
    return Seen(stamp(st), max(st.st_mtime_ns, st.st_ctime_ns), at, None)


@dataclass
class Reads:
    """What ``read_bytes`` read in a ``recording`` context: a ``Seen`` of each file, by resolved path.
    ``hashed``: every file's bytes hashed (what a cache keeps a result under, ``checkcache.store``);
    else only those of a racy file (what ``still`` needs)."""

    hashed: bool
    seen: dict[str, Seen] = field(default_factory=dict)

    def digests(self) -> dict[str, str]:
        """The SHA-256 of each file's bytes (an empty text for one that changed while it was read),
        for the files that were hashed."""
        return {f: s.digest for f, s in self.seen.items() if s.digest is not None}


# the recordings ``read_bytes`` notes its reads in, innermost last (a load inside another's recording: both)
_READ: contextvars.ContextVar[tuple[Reads, ...]] = contextvars.ContextVar("ruleval_read", default=())


def _note(active: tuple[Reads, ...], real: str, data: bytes, st: os.stat_result, at: int) -> None:
    import hashlib

    seen = _seen(st, at)
    if seen.racy or any(r.hashed for r in active):
        seen = seen._replace(digest=hashlib.sha256(data).hexdigest())
    for reads in active:
        old = reads.seen.setdefault(real, seen)
        both = old.digest is not None and seen.digest is not None  # (a racy read hashed, a later one not)
        if old is not seen and (old.stamp != seen.stamp or both and old.digest != seen.digest):
            reads.seen[real] = old._replace(digest="")  # (it changed while it was read, and names no text)


@contextlib.contextmanager
def recording(hashed: bool = True) -> Iterator[Reads]:
    """The files ``read_bytes`` reads in this context (``Reads``): what a result made from them was made
    from, whatever the files hold by the time it is kept (``checkcache.store``) or used again (``still``).
    Not ``hashed``: the bytes of a file are hashed only if it is racy (``Seen.racy``)."""
    reads = Reads(hashed)
    token = _READ.set((*_READ.get(), reads))
    try:
        yield reads
    finally:
        _READ.reset(token)


def looked_at(path: str) -> Seen:
    """A ``Seen`` of a file ruleval looked at without reading it through ``read_bytes`` (not hashed: it is
    taken for changed while it is racy); one that matches no file's when it cannot be looked at."""
    at = _clock()
    try:
        return _seen(os.stat(path), at)
    except OSError:
        return Seen((), 0, at, "")


def still(path: str, seen: Seen) -> Seen | None:
    """Whether the file at ``path`` (resolved) still holds what was read of it (``seen``): None once it
    cannot be looked at or has another stamp; else ``seen``, or, for a racy file, what was found on
    reading it again, when its bytes are the same (with the time of that read, after which it may no
    longer be racy). One ``stat`` for a file that is not racy: its bytes are not read."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stamp(st) != seen.stamp or seen.digest == "":  # (changed, or changed while it was read)
        return None
    if not seen.racy:
        return seen
    if seen.digest is None:  # (only looked at: nothing to compare its bytes with)
        return None
    with recording() as again:
        try:
            read_bytes(Path(path), st.st_size)
        except Refused:
            return None
    now = again.seen.get(path)
    return now if now is not None and now.stamp == seen.stamp and now.digest == seen.digest else None


def walk(folder: Path, suffixes: tuple[str, ...],
         skip_prefix: str | None = None) -> tuple[list[Path], list[tuple[Path, Refused]]]:
    """The files under ``folder`` whose names end in one of ``suffixes``, sorted, and those refused.

    Symlinked folders are not entered. A file (or a symlink) found here must resolve inside the
    folder's root (``root_of_folder``) and be a regular file; one that does not is refused, not
    followed. Files named on the command line are not walked and stay the user's choice."""
    root = root_of_folder(folder)
    found: list[Path] = []
    refused: list[tuple[Path, Refused]] = []
    for here, dirs, names in os.walk(folder, followlinks=False):
        dirs.sort()
        for name in sorted(names):
            if not name.endswith(suffixes) or (skip_prefix and name.startswith(skip_prefix)):
                continue
            path = Path(here) / name
            try:
                check_file(path, root, str(path))
            except Refused as exc:
                if exc.reason != "missing":  # a dangling link: nothing there to check
                    refused.append((path, exc))
                continue
            found.append(path)
    return sorted(found), sorted(refused, key=lambda item: item[0])


# How a path is shown in what ruleval says (one definition, docs/diagnostics.md "Paths"):
# - a file named on the command line, as it was written there (``named``: `/tmp/x.rules`, `./x.rules`,
#   `../x.rules` stay so), as a compiler shows it;
# - any other file (one a ruleset extends, imports or reads, a case file found in a folder), relative to
#   the working folder when it lies under it, else its absolute path: never a `../../..` chain nobody wrote.
# A sweep's worker loads a ruleset in a private copy of the sender's folders and shows its paths as the
# sender does: its view is the sender's, with ``moved`` mapping each private folder back to the sender's.
@dataclass(frozen=True)
class PathView:
    """What showing a path depends on: the working folder, the files named on the command line, and a
    worker's private folders."""

    cwd: str  # the working folder (absolute; the sender's, in a worker)
    named: tuple[tuple[str, str], ...] = ()  # (absolute path, as written) of each file named differently
    moved: tuple[tuple[str, str], ...] = ()  # (a folder here, the sender's folder it stands for)

    @property
    def key(self) -> str:
        """What a result made with these shown paths is kept under (caches): the working folder alone
        when nothing else applies."""
        return self.cwd if not self.named and not self.moved else f"{self.cwd}\0{self.named!r}\0{self.moved!r}"


# the running command's (``named_on_command_line``), inherited by forked workers: one command a process (the
# playground names no file on a command line; it answers each request in a process of its own)
_NAMED: tuple[tuple[str, str], ...] = ()
# a sweep's worker's view while it loads a ruleset laid out in its private folder (``tools/sweep.laid_out``);
# per thread of work
PATH_VIEW: contextvars.ContextVar[PathView | None] = contextvars.ContextVar("PATH_VIEW", default=None)


def path_view() -> PathView:
    """How paths are shown here and now (see ``PathView``)."""
    return PATH_VIEW.get() or PathView(os.getcwd(), _NAMED)


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder if folder.endswith(os.sep) else folder + os.sep)


def _default_shown(path: str, cwd: str) -> str:
    return os.path.relpath(path, cwd) if _under(path, cwd) else path


def display_path(path: Path | str) -> str:
    """How a file is shown in what ruleval says (see ``PathView``; found again by ``real_path``)."""
    view = path_view()
    p = os.path.abspath(path)
    for here, there in view.moved:
        if _under(p, here):
            p = there + p[len(here):]
            break
    for real, written in view.named:
        if p == real:
            return written
    return _default_shown(p, view.cwd)


def real_path(shown: str) -> Path:
    """The file a shown path names (``display_path``'s inverse), resolved; in a worker, its private copy."""
    view = path_view()
    p = os.path.normpath(os.path.join(view.cwd, shown))
    for here, there in view.moved:
        if _under(p, there):
            p = here + p[len(there):]
            break
    return Path(p).resolve()


@contextlib.contextmanager
def named_on_command_line(paths: list[str]) -> Iterator[None]:
    """While the block runs, each of ``paths`` that names a file is shown as written (``display_path``),
    where that differs from how it would be shown otherwise."""
    cwd = os.getcwd()
    named: dict[str, str] = {}
    for written in paths:
        if not os.path.isfile(written):
            continue
        for p in (os.path.abspath(written), os.path.realpath(written)):
            if _default_shown(p, cwd) != written:
                named.setdefault(p, written)
    old = show_as_named(tuple(sorted(named.items())))
    try:
        yield
    finally:
        show_as_named(old)


def show_as_named(named: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """Files shown as written (``PathView.named``) from now on, in place of those so far (given back)."""
    global _NAMED
    old, _NAMED = _NAMED, named
    return old


class WriteFailed(Exception):
    """A file could not be written; the old file (if any) is unchanged."""


def not_a_file(path: str | Path) -> str | None:
    """Why ``path`` names no regular file to read, as a phrase after the path (`not found`, `is a symlink
    to ..., which does not exist`, `is not a regular file (a FIFO)`), or None when it names one."""
    p = Path(path)
    if not p.exists():
        return f"is a symlink to `{os.readlink(p)}`, which does not exist" if p.is_symlink() else "not found"
    if p.is_file():
        return None
    kind = (" (a folder)" if p.is_dir() else " (a FIFO)" if p.is_fifo()
            else " (a device)" if p.is_char_device() or p.is_block_device() else "")
    return f"is not a regular file{kind}"


def can_be_written(path: str | Path) -> None:
    """``WriteFailed`` now, as ``write_atomic`` would raise it later, when ``path`` is a folder or its
    folder does not exist: for a command that writes its file after long work (the games of `balance`,
    the cases of `test`), so that a mistyped folder is said before the work and not after it."""
    p = Path(path)
    if p.is_dir():
        raise WriteFailed(f"cannot write `{path}`: it is a folder")
    folder = p.parent
    if not folder.is_dir():
        why = f"`{folder}` is a file, not a folder" if folder.exists() else f"the folder `{folder}` does not exist"
        raise WriteFailed(f"cannot write `{path}`: {why}")


def _write_through(path: str | Path, data: bytes) -> None:
    """``data`` written to what ``path`` names as it is (a device, a pipe); a failed write (a full
    device) is ``WriteFailed``."""
    try:
        with open(path, "wb") as f:
            f.write(data)
    except OSError as exc:
        raise WriteFailed(f"cannot write `{path}`: {exc.strerror or exc}") from None


def write_atomic(path: str | Path, text: str | bytes, durable: bool = True) -> None:
    """Write ``text`` to ``path`` through a temporary file in the same folder, then replace it (a
    device or a pipe named as the target, `/dev/null` say, is written to, never replaced; a folder is
    refused).

    The text is encoded before anything is opened; a failed write (disk full, ``ulimit -f``, text that
    is not UTF-8) removes the temporary file and leaves the old one as it was (``WriteFailed``). A
    symlink named as the target is written through (its target is replaced), as a plain write would;
    the new file keeps the old one's permissions (a new one gets the usual ones). ``durable``: flushed
    to the disk before it replaces the old file (not needed for a cache, where a torn entry is a miss)."""
    target = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    try:
        data = text if isinstance(text, bytes) else text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise WriteFailed(f"cannot write `{path}`: the text holds a character that is not UTF-8 "
                          f"(at offset {exc.start})") from None
    try:
        mode: int | None = os.stat(path).st_mode  # (through a symlink, as `target`)
    except OSError:
        mode = None
    if mode is not None and stat.S_ISDIR(mode):
        raise WriteFailed(f"cannot write `{path}`: it is a folder")
    if mode is not None and not stat.S_ISREG(mode):
        _write_through(path, data)  # a device or a pipe (`-o /dev/null`, `/dev/stdout`): written to, never replaced
        return
    folder = target.parent
    old_mode = stat.S_IMODE(mode) if mode is not None else None
    import tempfile  # (here: a check that writes nothing does not import it and its compressors)

    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise WriteFailed(f"cannot write `{path}`: {exc.strerror}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        if old_mode is None:
            umask = os.umask(0)
            os.umask(umask)
            old_mode = 0o666 & ~umask
        os.chmod(tmp, old_mode)
        os.replace(tmp, target)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise WriteFailed(f"cannot write `{path}`: {exc.strerror or exc}") from None

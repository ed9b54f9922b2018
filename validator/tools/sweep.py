"""Many independent pieces of work (games, generated states, test cases, rulesets to check), run in
this process, on every core, or on a Dask distributed cluster, with the same results in the same order.

A command hands ``run_sweep`` a task (a module-level function ``task(rulesets, item)``), the loaded
rulesets it needs and the items, and gets the results back in the items' order, whatever ran them:

- ``jobs=1``: this process, one item after another;
- ``jobs=N``: a pool of N processes of the standard library (forked where the system can: the
  rulesets already loaded here are there at once);
- ``cluster="tcp://HOST:PORT"`` (or ``RULEVAL_CLUSTER``): the workers of a Dask scheduler
  (``pip install 'ruleval[cluster]'``).

A worker receives each ruleset as content, never as a path on this machine's disk: every file it
read (its modules, the rulesets it extends, its data, schemas and clause catalogue, and its root's
``ruleval.toml``), as bytes, with where each lies relative to the others and to the working folder
(a ``Source``). The worker lays them out in a private folder of its own (in memory where the system
has ``/dev/shm``) and loads them with ``load_ruleset``: the same root, so the same confinement of
every path a ruleset names, the same budgets, and the same paths shown in every message (shown
relative to the copy of the working folder: ``confine.DISPLAY_BASE``). A Dask cluster gets the
sources once per worker (a worker plugin, also given to a worker that replaces one that died), and
each task only names them by digest.

Results never depend on the executor: each item carries its own seed, the pieces are cut in the
items' order and put back in it. A worker that dies takes its pieces with it; they are run again
(by Dask on another worker; by a new pool here, or at last in this process). Ctrl-C stops the sweep:
the results so far are returned (``Sweep.interrupted``) for the command to summarise. A sweep that
writes to a terminal shows a progress bar on standard error (tqdm), none otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import signal
import tempfile
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TextIO

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

CLUSTER_ENV = "RULEVAL_CLUSTER"  # the Dask scheduler's address when --cluster is not given
MAX_POOL_RESTARTS = 3  # a pool that broke this many times: the rest runs in this process


@dataclass(frozen=True)
class Source:
    """A ruleset as content: its files (path relative to a common folder, bytes), the entry's and the
    working folder's paths relative to that folder, and a digest of all of it."""

    files: tuple[tuple[str, bytes], ...]
    entry: str
    cwd: str
    digest: str

    @property
    def size(self) -> int:
        return sum(len(b) for _, b in self.files)


def source_of(rs: Any) -> Source:
    """The content of a loaded ruleset (``Ruleset.files``, plus texts it was given rather than read:
    ``rs.overlay``), ready to be sent to a worker."""
    from ..lang.loader import real_path

    entry = str(real_path(rs.path))
    return files_source(sorted(set(rs.files) | set(rs.overlay or {}) | {entry}), entry, rs.overlay or {})[0]


def files_source(paths: Sequence[str], entry: str = "", overlay: dict[str, str] | None = None) -> tuple[Source, Path]:
    """Files (resolved paths) as content, with the ``ruleval.toml`` of each one's root: a ruleset when
    ``entry`` names one of them, else a tree of files that a task lays out itself (``laid_out``); and
    the folder here that the source's paths are relative to (never sent)."""
    from ..core.confine import ROOT_MARKER, find_root

    overlay = overlay or {}
    wanted = set(paths) | ({entry} if entry else set())
    for p in list(wanted):
        marker = find_root(Path(p)) / ROOT_MARKER
        if marker.is_file():
            wanted.add(str(marker.resolve()))
    cwd = os.path.realpath(os.getcwd())
    top = os.path.commonpath(sorted(wanted) + [cwd])
    files = []
    for p in sorted(wanted):
        data = overlay[p].encode("utf-8") if p in overlay else Path(p).read_bytes()
        files.append((os.path.relpath(p, top), data))
    h = hashlib.sha256()
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    rel_entry, rel_cwd = os.path.relpath(entry, top) if entry else "", os.path.relpath(cwd, top)
    h.update(f"\0{rel_entry}\0{rel_cwd}".encode())
    return Source(tuple(files), rel_entry, rel_cwd, h.hexdigest()), Path(top)


# rulesets loaded in this process, by their source's digest (a worker loads each once)
_LOADED: dict[str, Any] = {}
_SOURCES: dict[str, Source] = {}
_LOCK = threading.Lock()


def _private_folder() -> str:
    shm = "/dev/shm"
    return tempfile.mkdtemp(prefix="ruleval-sweep-", dir=shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None)


@contextlib.contextmanager
def laid_out(src: Source) -> Iterator[Path]:
    """The files of a source written out in a private folder (resolved), laid out as the sender's are,
    with paths shown as the sender shows them (``DISPLAY_BASE``) while the block runs; the folder is
    removed when it ends."""
    from ..core.confine import DISPLAY_BASE

    top = Path(_private_folder()).resolve()
    try:
        for name, data in src.files:
            target = (top / name).resolve()
            if top not in target.parents:  # a name that climbs out of the folder: not ours to write
                raise ValueError(f"a source file lies outside its folder: {name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        (top / src.cwd).mkdir(parents=True, exist_ok=True)
        token = DISPLAY_BASE.set(str(top / src.cwd))
        try:
            yield top
        finally:
            DISPLAY_BASE.reset(token)
    finally:
        shutil.rmtree(top, ignore_errors=True)


def load_source(src: Source) -> Any:
    """The ruleset a source holds, loaded in a private root laid out as the sender's files are, its
    paths shown as the sender shows them; once per process. A tree of files (no entry) is given back
    as it is, for its task to lay out."""
    from ..api import load_ruleset

    with _LOCK:
        if src.digest in _LOADED:
            return _LOADED[src.digest]
        if not src.entry:
            _LOADED[src.digest] = src
            return src
        # (a loaded ruleset reads no file again: its texts and data are in memory, so the folder goes)
        with laid_out(src) as top:
            rs = load_ruleset(top / src.entry, check_cache=False)
        _LOADED[src.digest] = rs
        return rs


def _rulesets(digests: Sequence[str]) -> list[Any]:
    out = []
    for d in digests:
        if d not in _LOADED:
            if d not in _SOURCES:
                raise RuntimeError("this worker was not given the rulesets of the sweep")
            load_source(_SOURCES[d])
        out.append(_LOADED[d])
    return out


def run_chunk(task: Callable[[list[Any], Any], Any], digests: Sequence[str], items: Sequence[Any]) -> list[Any]:
    """What a worker runs: the task on each item of a piece, with the sweep's rulesets."""
    rulesets = _rulesets(digests)
    return [task(rulesets, item) for item in items]


def _install(sources: Sequence[Source]) -> None:
    """A pool worker's start: the sweep's sources, and Ctrl-C left to the main process (which stops
    the sweep), so that no worker prints a traceback of its own.

    Each worker leads a session of its own: Linux's autogroup scheduling (on by default) shares the
    processor among sessions, so that all the workers of a session in which others' work competes
    would get the time of one process, and ``--jobs N`` be no faster than ``--jobs 1`` on a busy
    machine (measured: 0.97x on two cores with a dozen other runnable processes). A worker still ends
    with the sweep (the pool ends it) and never sees the terminal's signals."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:  # already a session leader
            pass
    for s in sources:
        _SOURCES[s.digest] = s


@dataclass
class Sweep:
    """The results of a sweep, in the items' order: all of them, or those before an interruption."""

    results: list[Any] = field(default_factory=list)
    interrupted: bool = False
    executor: str = "this process"
    redone: int = 0  # pieces run again after their worker died


def sent(rs: Any) -> Source:
    """What a worker is sent of one of a sweep's rulesets: a source as it is, a loaded ruleset's."""
    return rs if isinstance(rs, Source) else source_of(rs)


def default_jobs() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _chunks(n: int, workers: int) -> list[range]:
    """Items cut into pieces in their order: about four per worker, so that a slow piece does not
    hold the others back, and none smaller than one item."""
    if n == 0:
        return []
    size = max(1, -(-n // (workers * 4)))
    return [range(i, min(n, i + size)) for i in range(0, n, size)]


class _Progress:
    """A progress bar on standard error when it is a terminal (tqdm), nothing otherwise."""

    def __init__(self, total: int, what: str, err: TextIO | None):
        self.bar: Any = None
        terminal = err is not None and getattr(err, "isatty", lambda: False)()
        if terminal and total > 1 and not os.environ.get("RULEVAL_NO_PROGRESS"):
            try:
                from tqdm import tqdm
            except ImportError:  # (a dependency of ruleval: only a broken install lacks it)
                return
            # (a terminal that says it has no width, as some consoles and fresh pseudo-terminals do, gets
            # 80 columns: tqdm would draw a bar of none, that is nothing at all)
            width = _columns(err)
            self.bar = tqdm(total=total, desc=what, unit=what.split()[-1] if what else "it", file=err, leave=False,
                            dynamic_ncols=bool(width), ncols=None if width else 80)

    def update(self, n: int) -> None:
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def _columns(stream: Any) -> int:
    """The width of the terminal a stream writes to (0 when it says none, or cannot say)."""
    try:
        return os.get_terminal_size(stream.fileno()).columns
    except (AttributeError, OSError, ValueError):
        return 0


def run_sweep(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: Sequence[Any], *,
              jobs: int | None = None, cluster: str | None = None, what: str = "", err: TextIO | None = None,
              ordered: Callable[[Any], bool] | None = None) -> Sweep:
    """Run ``task(rulesets, item)`` for every item; the results in the items' order.

    ``ordered``, when given, is asked of each result in order; once it says False the sweep stops
    (the later results are not wanted: a generator that failed, say) and the results end there."""
    cluster = cluster if cluster is not None else os.environ.get(CLUSTER_ENV) or None
    items = list(items)
    progress = _Progress(len(items), what, err)
    sweep = Sweep()
    try:
        if cluster:
            stream: Iterator[list[Any]] = _on_cluster(task, rulesets, items, cluster, sweep)
        elif (jobs or default_jobs()) > 1 and len(items) > 1:
            stream = _on_pool(task, rulesets, items, jobs or default_jobs(), sweep)
        else:
            stream = ([task(list(rulesets), item)] for item in items)
        try:
            for results in stream:
                for r in results:
                    if ordered is not None and not ordered(r):
                        sweep.results.append(r)
                        return sweep
                    sweep.results.append(r)
                progress.update(len(results))
        except KeyboardInterrupt:
            sweep.interrupted = True
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
    finally:
        progress.close()
    return sweep


def _on_pool(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: list[Any], jobs: int,
             sweep: Sweep) -> Iterator[list[Any]]:
    """Pieces on a pool of processes, given back in order; a pool broken by a dying worker is replaced
    and the pieces it lost run again (after ``MAX_POOL_RESTARTS``, in this process). (The pool's modules,
    multiprocessing's, are imported here: a check or sweep in one process never needs them.)"""
    import multiprocessing
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    from concurrent.futures.process import BrokenProcessPool

    sources = [sent(rs) for rs in rulesets]
    for s, rs in zip(sources, rulesets):
        _LOADED.setdefault(s.digest, rs)  # (a forked worker has them already; a spawned one loads them)
    digests = [s.digest for s in sources]
    pieces = _chunks(len(items), jobs)
    done: dict[int, list[Any]] = {}
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    sweep.executor = f"{jobs} processes"
    restarts = 0
    following = 0
    while following < len(pieces):
        todo = [i for i in range(len(pieces)) if i not in done]
        if restarts >= MAX_POOL_RESTARTS:
            for i in todo:
                done[i] = run_chunk(task, digests, [items[j] for j in pieces[i]])
                while following in done:
                    yield done.pop(following)
                    following += 1
            break
        pool = ProcessPoolExecutor(max_workers=min(jobs, len(todo)), mp_context=multiprocessing.get_context(method),
                                   initializer=_install, initargs=(sources,))
        running: dict[Future[list[Any]], int] = {}
        try:
            try:
                for i in todo:
                    running[pool.submit(run_chunk, task, digests, [items[j] for j in pieces[i]])] = i
            except OSError:  # no process could be started (none left to the user, no memory): the rest runs here
                restarts = MAX_POOL_RESTARTS
                continue
            while running:
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for f in finished:
                    i = running.pop(f)
                    done[i] = f.result()
                while following in done:
                    yield done.pop(following)
                    following += 1
            pool.shutdown(wait=True)  # (every piece done: the workers end, and are reaped, now)
        except BrokenProcessPool:  # a worker died: its pieces (and those it took down) are run again
            restarts += 1
            sweep.redone += len([i for i in range(len(pieces)) if i not in done and i >= following])
        finally:
            for f in running:
                f.cancel()
            _stop(pool)


def _stop(pool: ProcessPoolExecutor) -> None:
    """A pool's workers ended now and reaped: a sweep that is over (done, broken, or interrupted, when
    the pieces they run are no longer wanted) leaves no process behind it. (The standard library ends
    a pool's workers only once each has finished its piece: ``terminate_workers`` comes in 3.14.)"""
    workers = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for w in workers:
        if w.is_alive():
            w.terminate()
    for w in workers:
        w.join(timeout=10)


def _on_cluster(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: list[Any], address: str,
                sweep: Sweep) -> Iterator[list[Any]]:
    from .cluster import on_cluster  # (Dask, an optional extra, imported only for a cluster)

    return on_cluster(task, rulesets, items, address, sweep)


def add_sweep_options(p: Any, most: str = "") -> None:
    """``--jobs`` and ``--cluster``, for every command that runs a sweep (``tools/sweep``); ``most``: what
    bounds the default number of processes, if anything does."""
    from . import int_between

    p.add_argument("--jobs", "-j", type=int_between(1, 512, "a number of processes"), default=None, metavar="N",
                   help=f"processes to run on (default: one per CPU{', ' + most if most else ''}; 1: this process only)")
    p.add_argument("--cluster", metavar="tcp://HOST:PORT", default=None,
                   help="run on the workers of this Dask scheduler (default: $RULEVAL_CLUSTER; "
                        "pip install 'ruleval[cluster]')")

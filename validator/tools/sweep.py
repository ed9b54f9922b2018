"""Many independent pieces of work (games, generated states, test cases, rulesets to check), run in
this process, on every core, or on a Dask distributed cluster, with the same results in the same order.

A command hands ``run_sweep`` a task (a module-level function ``task(rulesets, item)``), the loaded
rulesets it needs and the items, and gets the results back in the items' order, whatever ran them:

- ``jobs=1``: this process, one item after another;
- ``jobs=N``: a pool of N processes of the standard library (forked where the system can: the
  rulesets already loaded here are there at once); or, for a sweep whose items share work that a
  process keeps (``warm``: a check's rulesets, whose variants share their base's parse, binding and
  code), this process and N - 1 workers forked once it has run the first item (``_on_warm_pool``);
- ``cluster="tcp://HOST:PORT"`` (or ``RULEVAL_CLUSTER``): the workers of a Dask scheduler
  (``pip install 'ruleval[cluster]'``).

A worker receives each ruleset as content, never as a path on this machine's disk: every file it
read (its modules, the rulesets it extends, its data, schemas and clause catalogue, and its root's
``ruleval.toml``), as bytes, with where each lies relative to the others (a ``Source``), and how the
sender shows paths (``confine.PathView``: its working folder, the files named on its command line, the
folder the files' names are relative to). The worker lays them out in a private folder of its own (in
memory where the system has ``/dev/shm``) and loads them with ``load_ruleset``: the same root, so the
same confinement of every path a ruleset names, the same budgets, and the same paths shown in every
message (its private folder shown as the sender's: ``confine.PATH_VIEW``). A Dask cluster gets the
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
import functools
import hashlib
import os
import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence, TextIO

from ..core import confine
from ..core.confine import PathView, bundle_root, path_view

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

CLUSTER_ENV = "RULEVAL_CLUSTER"  # the Dask scheduler's address when --cluster is not given
MAX_POOL_RESTARTS = 3  # a pool that broke this many times: the rest runs in this process


@dataclass(frozen=True)
class Source:
    """A ruleset as content: its files (path relative to a common folder, bytes), the entry's path
    relative to that folder, how the sender shows paths (``view``) with the folder it stands for there
    (``top``) and the sender's bundle (``bundle``: a worker shows its own as the sender's), and a digest
    of all of it."""

    files: tuple[tuple[str, bytes], ...]
    entry: str
    view: PathView
    top: str
    bundle: str
    digest: str

    @property
    def size(self) -> int:
        return sum(len(b) for _, b in self.files)


def source_of(rs: Any) -> Source:
    """The content of a loaded ruleset (``Ruleset.files``, plus texts it was given rather than read:
    ``rs.overlay``, whose one text is the entry's when there is one: a player over a variant, shown as
    the player's file, ``balance.load_player``), ready to be sent to a worker."""
    from ..lang.loader import real_path

    entry = next(iter(rs.overlay)) if rs.overlay and len(rs.overlay) == 1 else str(real_path(rs.path))
    return files_source(sorted(set(rs.files) | set(rs.overlay or {}) | {entry}), entry, rs.overlay or {})[0]


def files_source(paths: Sequence[str], entry: str = "", overlay: dict[str, str] | None = None) -> tuple[Source, Path]:
    """Files (resolved paths) as content, with the ``ruleval.toml`` of each one's root: a ruleset when
    ``entry`` names one of them, else a tree of files that a task lays out itself (``laid_out``); and
    the folder here that the source's paths are relative to (sent as ``Source.top`` only for the worker
    to show its copy of a file as this process shows the file: a file outside the working folder is shown
    by its absolute path, docs/diagnostics.md "Paths")."""
    from ..core.confine import ROOT_MARKER, find_root

    overlay = overlay or {}
    wanted = set(paths) | ({entry} if entry else set())
    for p in list(wanted):
        marker = find_root(Path(p)) / ROOT_MARKER
        if marker.is_file():
            wanted.add(str(marker.resolve()))
    top = os.path.commonpath(sorted(os.path.dirname(p) for p in wanted))
    files = []
    for p in sorted(wanted):
        data = overlay[p].encode("utf-8") if p in overlay else Path(p).read_bytes()
        files.append((os.path.relpath(p, top), data))
    h = hashlib.sha256()
    for name, data in files:
        h.update(name.encode() + b"\0" + hashlib.sha256(data).digest())
    rel_entry = os.path.relpath(entry, top) if entry else ""
    view, bundle = path_view(), str(bundle_root() or "")
    h.update(f"\0{rel_entry}\0{top}\0{bundle}\0{view.key}".encode())
    return Source(tuple(files), rel_entry, view, top, bundle, h.hexdigest()), Path(top)


# rulesets loaded in this process, by their source's digest (a worker loads each once)
_LOADED: dict[str, Any] = {}
_SOURCES: dict[str, Source] = {}
_LOCK = threading.Lock()


def _private_folder() -> str:
    import tempfile  # (here, as shutil below: a check on this machine's processes lays out no source)

    shm = "/dev/shm"
    return tempfile.mkdtemp(prefix="ruleval-sweep-", dir=shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None)


@contextlib.contextmanager
def laid_out(src: Source) -> Iterator[Path]:
    """The files of a source written out in a private folder (resolved), laid out as the sender's are,
    with paths shown as the sender shows them (``PATH_VIEW``: the private folder, and this worker's
    bundle, shown as the sender's) while the block runs; the folder is removed when it ends."""
    from ..core.confine import PATH_VIEW

    top = Path(_private_folder()).resolve()
    try:
        for name, data in src.files:
            target = (top / name).resolve()
            if top not in target.parents:  # a name that climbs out of the folder: not ours to write
                raise ValueError(f"a source file lies outside its folder: {name}")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        moved: tuple[tuple[str, str], ...] = ((str(top), src.top),)
        own = bundle_root()
        if own is not None and src.bundle and str(own) != src.bundle:
            moved += ((str(own), src.bundle),)
        token = PATH_VIEW.set(PathView(src.view.cwd, src.view.named, moved))
        try:
            yield top
        finally:
            PATH_VIEW.reset(token)
    finally:
        import shutil

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


def _install(sources: Sequence[Source], named: tuple[tuple[str, str], ...] | None = None) -> None:
    """A pool worker's start: the sweep's sources, the files its sender's command line named (shown as
    written there: a spawned worker does not have them otherwise), and Ctrl-C left to the main process
    (which stops the sweep), so that no worker prints a traceback of its own.

    Each worker leads a session of its own: Linux's autogroup scheduling (on by default) shares the
    processor among sessions, so that all the workers of a session in which others' work competes
    would get the time of one process, and ``--jobs N`` be no faster than ``--jobs 1`` on a busy
    machine (measured: 0.97x on two cores with a dozen other runnable processes). A worker still ends
    with the sweep (the pool ends it) and never sees the terminal's signals."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(signal, "pthread_sigmask"):  # (held while it was forked, ``_ctrl_c_held``: ignored now, it is dropped)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:  # already a session leader
            pass
    for s in sources:
        _SOURCES[s.digest] = s
    if named is not None:
        confine.show_as_named(named)


@contextlib.contextmanager
def _ctrl_c_held() -> Iterator[None]:
    """Ctrl-C (SIGINT) held back in this thread while it forks workers. A worker is in the terminal's
    process group until ``_install`` makes it a session of its own: a Ctrl-C that reached it before it
    ignores SIGINT would end it with a traceback of its own (an 'Exception ignored' in one of the hooks
    a fork runs, say). A worker is forked with it held, and drops it (``_install``); this process gets
    it when the block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


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
              ordered: Callable[[Any], bool] | None = None, warm: bool = False) -> Sweep:
    """Run ``task(rulesets, item)`` for every item; the results in the items' order.

    ``ordered``, when given, is asked of each result in order; once it says False the sweep stops
    (the later results are not wanted: a generator that failed, say) and the results end there.
    ``warm``: the items share work that a process keeps once done (its caches), which the first
    item does; on processes where the system forks, that work is then done once (``_on_warm_pool``)."""
    cluster = cluster if cluster is not None else os.environ.get(CLUSTER_ENV) or None
    items = list(items)
    progress = _Progress(len(items), what, err)
    sweep = Sweep()
    elsewhere = cluster or ((jobs or default_jobs()) > 1 and len(items) > 1)
    sent_task = functools.partial(_with_writer_bugs, task)  # (what a worker met, heard here: ``_with_writer_bugs``)
    try:
        if cluster:
            stream: Iterator[list[Any]] = _on_cluster(sent_task, rulesets, items, cluster, sweep)
        elif elsewhere:
            pool = _on_warm_pool if warm and _forks() else _on_pool
            stream = pool(sent_task, rulesets, items, jobs or default_jobs(), sweep)
        else:
            stream = ([task(list(rulesets), item)] for item in items)
        try:
            for results in stream:
                for r in results:
                    if elsewhere:
                        r = _heard_from(r, rulesets)
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


def _with_writer_bugs(task: Callable[[list[Any], Any], Any], rulesets: list[Any], item: Any) -> tuple[Any, list[Any]]:
    """``task(rulesets, item)`` as a worker runs it: its result, and the bugs of the backend's writer its
    runs met (``runtime.listening``), which the process that runs the sweep hears (``_heard_from``), so
    that its command says them as it says those met at home."""
    from ..lib.runtime import listening

    with listening() as bugs:
        result = task(rulesets, item)
    return result, [d for d, _ in bugs.met.values()]


def _heard_from(sent: tuple[Any, list[Any]], rulesets: Sequence[Any]) -> Any:
    """A worker's result (``_with_writer_bugs``), its writer's bugs heard here (their lines quoted from
    the sweep's rulesets)."""
    from ..lib.runtime import heard

    result, bugs = sent
    for d in bugs:
        text = next((rs.sources[d.span.file] for rs in rulesets
                     if d.span.file in (getattr(rs, "sources", None) or {})), None)
        heard(d, text)
    return result


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
                                   initializer=_install, initargs=(sources, path_view().named))
        running: dict[Future[list[Any]], int] = {}
        try:
            try:
                with _ctrl_c_held():  # (the pool starts its workers as pieces are submitted)
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


def _forks() -> bool:
    import multiprocessing

    return "fork" in multiprocessing.get_all_start_methods()


_LO, _HI, _OPEN, _HAND = 0, 1, 2, 3  # the board's fields: see ``_Board``


class _Board:
    """Who takes which item, in memory shared with the processes forked after it is made: the items
    not yet taken are those from ``_LO`` to ``_HI``; the warm processes take from the front, the cold
    one from the back while ``_OPEN``; each process's item in hand (or -1) is at ``_HAND + its slot``."""

    def __init__(self, ctx: Any, n: int, slots: int):
        import mmap

        self.lock = ctx.Lock()
        self.memory = mmap.mmap(-1, 8 * (_HAND + slots))  # (anonymous and shared: seen by every fork)
        self.v = memoryview(self.memory).cast("q")
        self.v[_LO], self.v[_HI], self.v[_OPEN] = 0, n - 1, 1
        for slot in range(slots):
            self.v[_HAND + slot] = -1

    def take(self, slot: int, from_end: bool) -> int | None:
        with self.lock:
            v = self.v
            if v[_LO] > v[_HI] or (from_end and not v[_OPEN]):
                v[_HAND + slot] = -1
                return None
            if from_end:
                i = v[_HI]
                v[_HI] = i - 1
            else:
                i = v[_LO]
                v[_LO] = i + 1
            v[_HAND + slot] = i
            return i


@dataclass
class _Worker:
    process: Any
    conn: Any  # (the end this process reads its results from)
    slot: int
    open: bool = True


def _work(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: list[Any], board: _Board, slot: int,
          from_end: bool, conn: Any) -> None:
    """A forked worker of ``_on_warm_pool``: the items it takes, one at a time, each result sent back
    as ``(item, True, result)``, or ``(item, False, exception)`` when the task raised one."""
    _install(())
    while (i := board.take(slot, from_end)) is not None:
        try:
            message = (i, True, task(list(rulesets), items[i]))
        except BaseException as exc:  # (given to the sweep's process, which raises it, as a pool's would)
            message = (i, False, exc)
        try:
            conn.send(message)
        except Exception as exc:  # a result or exception that cannot be sent
            conn.send((i, False, RuntimeError(f"a sweep's worker could not send its result: {exc}")))
    conn.close()


def _on_warm_pool(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: list[Any], jobs: int,
                  sweep: Sweep) -> Iterator[list[Any]]:
    """The items on ``jobs`` processes, this one among them, so that what the first item leaves in a
    process's caches is worked out once: this process runs the first item itself, while one worker,
    forked at once (cold), takes items from the end (the ones least likely to share it); once the first
    is done, the cold worker takes no more (with ``GIVE_BACK``, its item in hand is given back and it
    is stopped), and ``jobs - 1`` workers forked now (warm: they have this process's caches; fewer when
    fewer items are left) take the rest with this process, from the front, one item at a time. Given back
    in order, one at a time.

    A forked process has the memory of this one as it was: every cache a task fills must be kept by
    what it was made from (a file's content, not its name), never by a moment. A worker that dies
    stops the warm workers: what is not done yet runs on a pool (``_on_pool``: restarted, at last
    in this process)."""
    import multiprocessing
    from multiprocessing.connection import wait

    ctx = multiprocessing.get_context("fork")
    n = len(items)
    try:
        board = _Board(ctx, n, jobs + 1)  # (slot 0 this process's, 1 the cold worker's, then the warm ones')
    except (OSError, ImportError):  # (a system without the semaphores a lock shared between processes needs)
        yield from _on_pool(task, rulesets, items, jobs, sweep)
        return
    done: dict[int, Any] = {}
    workers: list[_Worker] = []
    lost: list[int] = []
    stopped: set[int] = set()  # (the slots of workers this process stopped)
    sweep.executor = f"{jobs} processes"

    def start(slot: int, from_end: bool) -> None:
        reader, writer = ctx.Pipe(duplex=False)
        process = ctx.Process(target=_work, args=(task, rulesets, items, board, slot, from_end, writer), daemon=True)
        try:
            with _ctrl_c_held():
                process.start()
        except OSError:  # no process could be started (none left to the user, no memory): fewer run, or only this one
            reader.close()
            return
        finally:
            writer.close()
        workers.append(_Worker(process, reader, slot))

    def receive(w: _Worker) -> None:
        """The results a worker has sent; when it has ended, the item it held, if any, is lost."""
        try:
            while w.conn.poll():
                i, ok, value = w.conn.recv()
                if not ok:
                    raise value
                done[i] = value
        except (EOFError, OSError):  # (it ended: a last result cut short by its end is lost with it)
            w.open = False
            w.conn.close()
            w.process.join()
            held = board.v[_HAND + w.slot]
            if held >= 0 and held not in done and w.slot not in stopped:
                lost.append(held)

    def collect(timeout: float | None) -> None:
        ready = set(wait([w.conn for w in workers if w.open], timeout))
        for w in workers:
            if w.open and w.conn in ready:
                receive(w)

    following = 0
    try:
        board.take(0, False)
        start(1, True)
        done[0] = task(list(rulesets), items[0])
        with board.lock:  # (the cold worker takes nothing while this is decided)
            board.v[_OPEN] = 0
            cold = workers[0] if workers else None
            if cold is not None and GIVE_BACK and board.v[_HAND + cold.slot] >= 0:
                held = board.v[_HAND + cold.slot]
                stopped.add(cold.slot)
                cold.process.kill()
                cold.process.join()
                receive(cold)  # (the results it sent whole, up to the end of its pipe)
                if held not in done:  # (it was the last item the cold worker took: next to those not taken)
                    board.v[_HI] = held
        left = board.v[_HI] - board.v[_LO] + 1  # (no worker forked for want of an item: one each at most)
        for slot in range(2, 2 + min(jobs - 1, left - 1)):
            start(slot, False)
        while not lost:
            collect(0)
            while following in done:
                yield [done.pop(following)]
                following += 1
            if lost or (i := board.take(0, False)) is None:
                break
            done[i] = task(list(rulesets), items[i])
        while not lost and any(w.open for w in workers):
            collect(None)
            while following in done:
                yield [done.pop(following)]
                following += 1
    finally:
        for w in workers:
            if w.process.is_alive():
                w.process.kill()
            w.process.join()
            w.conn.close()
    if lost:  # a worker died: the rest on a pool that restarts
        sweep.redone += len(lost)
        todo = [i for i in range(following, n) if i not in done]
        rest = _on_pool(task, rulesets, [items[i] for i in todo], jobs, sweep)
        at = iter(todo)
        for results in rest:
            for r in results:
                done[next(at)] = r
            while following in done:
                yield [done.pop(following)]
                following += 1


# the cold worker's item in hand when the first item is done: given back (True), or finished. Measured on a
# check of the bundled rulesets (docs/speed.md, 2026-12-04): given back 0.91-0.93x of a pool's wall time,
# finished 0.95x (the item the cold worker holds then is most often one that shares the first's work,
# begun cold; finishing it keeps a third process on two processors)
GIVE_BACK = True


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

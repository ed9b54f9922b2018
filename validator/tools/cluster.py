"""The sweep's Dask executor (``pip install 'ruleval[cluster]'``): imported only when a sweep runs on
a cluster (``--cluster`` or ``RULEVAL_CLUSTER``), so that ruleval runs without Dask everywhere else."""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from ..core.exits import UsageError

try:
    from distributed import Client, as_completed
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # the extra is missing: said when a sweep asks for a cluster
    raise UsageError("--cluster (or RULEVAL_CLUSTER) needs Dask: pip install 'ruleval[cluster]'") from None

from .sweep import Source, Sweep, _chunks, run_chunk, sent


class SourcesPlugin(WorkerPlugin):
    """Gives every worker of the cluster the sweep's rulesets as content, a worker that joins later
    (one started in place of one that died) too; tasks then name them by digest."""

    def __init__(self, sources: Sequence[Source]):
        self.sources = list(sources)
        self.name = "ruleval-sources-" + hashlib.sha256("".join(s.digest for s in sources).encode()).hexdigest()[:16]

    def setup(self, worker: Any) -> None:
        from . import sweep

        for s in self.sources:
            sweep._SOURCES[s.digest] = s


@contextlib.contextmanager
def _event_loop() -> Iterator[Any]:
    """An event loop running in a thread of its own for as long as the block runs, then stopped and
    its thread ended. A Dask client given it uses it and leaves it running: the loop a synchronous
    client starts itself is stopped by its close, but when it fails to connect nothing stops it (its
    close then does nothing), and its thread stayed until the process ended."""
    from tornado.ioloop import IOLoop

    ready = threading.Event()
    running: dict[str, Any] = {}

    async def serve() -> None:
        running["loop"], running["stop"] = IOLoop.current(), asyncio.Event()
        ready.set()
        await running["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), name="ruleval Dask client loop", daemon=True)
    thread.start()
    ready.wait()
    try:
        yield running["loop"]
    finally:
        running["loop"].add_callback(running["stop"].set)
        thread.join(timeout=10)


def _check_address(address: str) -> None:
    """A usage error unless ``address`` reads as a Dask scheduler's address with a host and a port. Read
    before a client is made: one made of a malformed address fails with a ValueError half-built, and
    says so again on standard error when it is collected."""
    from distributed.comm.addressing import parse_address
    from distributed.comm.registry import get_backend

    try:
        scheme, location = parse_address(address)
        get_backend(scheme).get_address_host_port(location)
    except (ValueError, NotImplementedError) as exc:  # no port, a port not a number, an unknown scheme
        raise UsageError(f"`{address}` (--cluster or RULEVAL_CLUSTER) is not the address of a Dask scheduler, "
                         f"tcp://HOST:PORT{': ' + str(exc) if str(exc) else ''}") from None


@contextlib.contextmanager
def connected(address: str, timeout: float = 10) -> Iterator[Any]:
    """A Dask client of the scheduler at ``address`` for the block, closed with its event loop when
    the block ends; a usage error when the scheduler cannot be reached."""
    _check_address(address)
    with _event_loop() as loop:
        try:
            client = Client(address, timeout=timeout, set_as_default=False, loop=loop)
        except (OSError, TimeoutError) as exc:
            raise UsageError(f"cannot reach the Dask scheduler at `{address}`: {exc}") from None
        with client:
            yield client


def on_cluster(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: list[Any], address: str,
               sweep: Sweep) -> Iterator[list[Any]]:
    """Pieces on a Dask cluster, given back in order. Dask runs again the tasks of a worker that dies."""
    with connected(address) as client:
        sources = [sent(rs) for rs in rulesets]
        digests = [s.digest for s in sources]
        client.register_plugin(SourcesPlugin(sources))
        threads = max(1, sum(w.get("nthreads", 1) for w in client.scheduler_info().get("workers", {}).values()))
        sweep.executor = f"Dask cluster at {address} ({threads} threads)"
        pieces = _chunks(len(items), threads)
        futures = [client.submit(run_chunk, task, digests, [items[j] for j in piece], pure=False) for piece in pieces]
        index = {f.key: i for i, f in enumerate(futures)}
        done: dict[int, list[Any]] = {}
        following = 0
        try:
            with client.as_current():  # (the client is this sweep's, never the process's default)
                for f in as_completed(futures):
                    done[index[f.key]] = f.result()
                    while following in done:
                        yield done.pop(following)
                        following += 1
        finally:
            client.cancel(futures)


class LocalCluster:
    """A Dask scheduler and its worker processes on 127.0.0.1 (``local_cluster``): its address, the
    processes started (scheduler first), and the folder holding their logs and working folders."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.address = ""
        self.processes: list[subprocess.Popen[bytes]] = []

    def _start(self, args: list[str], name: str) -> subprocess.Popen[bytes]:
        # each in a session of its own, as the pool's workers are (``sweep._install``: the kernel's autogroup
        # scheduling shares the processor among sessions); not a daemon, so that a task may start processes
        env = {**os.environ, "DASK_DISTRIBUTED__WORKER__DAEMON": "False"}
        with (self.folder / f"{name}.log").open("wb") as log:
            p = subprocess.Popen([sys.executable, "-m", *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes.append(p)
        return p

    def log(self, name: str) -> str:
        path = self.folder / f"{name}.log"
        return path.read_text(errors="replace") if path.is_file() else ""

    def add_worker(self, name: str) -> subprocess.Popen[bytes]:
        """One more worker process of one thread, named ``name`` (its log: ``log(name)``)."""
        return self._start(["distributed.cli.dask_worker", self.address, "--nthreads", "1", "--no-nanny",
                            "--host", "127.0.0.1", "--no-dashboard", "--name", name,
                            "--local-directory", str(self.folder / name)], name)

    def wait_for_workers(self, n: int, timeout: float = 60) -> None:
        with connected(self.address, timeout=30) as client:
            client.wait_for_workers(n, timeout=timeout)

    def stop(self) -> None:
        """The workers first, while their scheduler still answers them (a worker told to stop says so to
        its scheduler, and waits for it in vain once it is gone), then the scheduler."""
        for group in (self.processes[1:], self.processes[:1]):
            for p in group:
                if p.poll() is None:
                    p.terminate()
            for p in group:
                try:
                    p.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


@contextlib.contextmanager
def local_cluster(workers: int, timeout: float = 60) -> Iterator[LocalCluster]:
    """A Dask scheduler and ``workers`` worker processes of one thread each, listening on 127.0.0.1
    only, for as long as the block runs (the tests' cluster and the bench's); stopped, every process
    reaped, when it ends."""
    with tempfile.TemporaryDirectory(prefix="ruleval-dask-") as tmp:
        c = LocalCluster(Path(tmp))
        info = c.folder / "scheduler.json"
        c._start(["distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                  "--scheduler-file", str(info)], "scheduler")
        try:
            deadline = time.monotonic() + timeout
            while not info.is_file() or not info.read_text().strip():
                if time.monotonic() > deadline or c.processes[0].poll() is not None:
                    raise RuntimeError(f"the Dask scheduler did not start:\n{c.log('scheduler')}")
                time.sleep(0.1)
            c.address = json.loads(info.read_text())["address"]
            for i in range(workers):
                c.add_worker(f"w{i}")
            c.wait_for_workers(workers, timeout)
            yield c
        finally:
            c.stop()

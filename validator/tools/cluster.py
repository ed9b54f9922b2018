"""The sweep's Dask executor (``pip install 'ruleval[cluster]'``): imported only when a sweep runs on
a cluster (``--cluster`` or ``RULEVAL_CLUSTER``), so that ruleval runs without Dask everywhere else."""

from __future__ import annotations

import hashlib
from typing import Any, Callable, Iterator, Sequence

from ..core.exits import UsageError

try:
    from distributed import Client, as_completed
    from distributed.diagnostics.plugin import WorkerPlugin
except ImportError:  # the extra is missing: said when a sweep asks for a cluster
    raise UsageError("--cluster (or RULEVAL_CLUSTER) needs Dask: pip install 'ruleval[cluster]'") from None

from .sweep import Source, Sweep, _chunks, run_chunk, source_of


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


def connect(address: str) -> Any:
    """A Dask client of the scheduler at ``address``; a usage error when it cannot be reached."""
    try:
        return Client(address, timeout=10, set_as_default=False)
    except (OSError, TimeoutError) as exc:
        raise UsageError(f"cannot reach the Dask scheduler at `{address}`: {exc}") from None


def on_cluster(task: Callable[[list[Any], Any], Any], rulesets: Sequence[Any], items: list[Any], address: str,
               sweep: Sweep) -> Iterator[list[Any]]:
    """Pieces on a Dask cluster, given back in order. Dask runs again the tasks of a worker that dies."""
    client = connect(address)
    try:
        sources = [source_of(rs) for rs in rulesets]
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
    finally:
        client.close()

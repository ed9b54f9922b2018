"""Scale: whole games per second on one core, on every core, and on a local Dask cluster of two worker
processes, in one run, with the scaling efficiency; and what a cluster costs per task.

Usage: python -m bench.scale [--games N] [--rounds R] [--player NAME] [--no-cluster]

Plays `ruleval balance`'s games (the standard game, a player for every power, R years) as its sweep
does (`validator/tools/sweep.py`, `balance.play_one`): with `jobs=1`, with a pool of one process per
core, and on a Dask scheduler with two worker processes of one thread each, on 127.0.0.1 (each
process in a session of its own, as the pool's workers are: see `sweep._install`).
Each executor's results are compared with the first: a figure of a sweep that gave other results would
be worthless. Speed-up is games/s over the one-core figure, efficiency the speed-up per worker.

Then what a larger cluster would pay: the round trip of an empty task on the local cluster (the
scheduler's per-task overhead, measured over 400 tasks), the bytes a task carries (its piece's items,
pickled as Dask sends them) and a result brings back, and the sources each worker is sent once. From
these, an estimate of 100 000 games on 100 workers (docs/scale.md keeps a run's figures).
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

VARIANT = ROOT / "rulesets" / "diplomacy" / "standard.rules"


def _setup(player: str) -> tuple[list[Any], list[Any]]:
    from validator.api import load_ruleset
    from validator.tools.balance import load_player, player_path
    from validator.tools.errata import start_state

    variant = load_ruleset(VARIANT)
    path = player_path(variant, player)
    assert path is not None, player
    rs = load_player(variant, path)
    assert rs.ok, [str(d) for d in rs.diagnostics if d.is_error]
    start, problem = start_state(variant, variant, None)
    assert problem is None, problem
    sides = list(variant.run(start, query="sides"))
    return [rs], [start, {s: 0 for s in sides}]


def _cpu(client: Any = None) -> float:
    """CPU seconds spent so far by this process and its ended children, or by a cluster's workers."""
    if client is not None:
        return sum(client.run(time.process_time).values())
    import resource

    return time.process_time() + resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime \
        + resource.getrusage(resource.RUSAGE_CHILDREN).ru_stime


def _timed(label: str, rulesets: list[Any], items: list[Any], client: Any = None, **where: Any) -> tuple[float, list[Any]]:
    """A sweep timed by the wall clock, and by the CPU seconds its processes spent: on a machine others
    share, the wall clock's speed-up says what you get, the CPU seconds per game whether the sweep itself
    wastes any (a pool whose workers take longer per game than one process would)."""
    from validator.tools.balance import play_one
    from validator.tools.sweep import run_sweep

    c0 = _cpu(client)
    t0 = time.perf_counter()
    sw = run_sweep(play_one, rulesets, items, **where)
    seconds = time.perf_counter() - t0
    cpu = _cpu(client) - c0
    print(f"   {label:<34} {len(items) / seconds:8.2f} games/s  ({seconds:.1f} s; {1000 * cpu / len(items):.0f} CPU-ms a game)")
    return seconds, sw.results


def _noop(rulesets: list[Any], item: Any) -> Any:
    return item


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.scale")
    ap.add_argument("--games", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=2, help="years a game lasts at most (default 2)")
    ap.add_argument("--player", default="heuristic")
    ap.add_argument("--no-cluster", action="store_true", help="leave out the local Dask cluster")
    args = ap.parse_args(argv if argv is not None else [])
    from validator.tools.sweep import default_jobs, source_of

    rulesets, (start, players) = _setup(args.player)
    items = [(g, 0, args.rounds, 1000, players, start) for g in range(args.games)]
    cores = default_jobs()
    print(f"   {args.games} games of {VARIANT.name}, player {args.player}, up to {args.rounds} years; {cores} cores")
    one, base = _timed("one core (--jobs 1)", rulesets, items, jobs=1)
    every, got = _timed(f"every core (--jobs {cores})", rulesets, items, jobs=cores)
    assert got == base, "the pool gave other results than one process"
    print(f"   speed-up {one / every:.2f}x on {cores} processes, efficiency {one / every / cores:.0%}")
    two = 2
    if cores != two:
        pair, got = _timed("two processes (--jobs 2)", rulesets, items, jobs=two)
        assert got == base
        print(f"   speed-up {one / pair:.2f}x on 2 processes, efficiency {one / pair / 2:.0%}")
    if args.no_cluster:
        return
    try:
        from distributed import Client
    except ImportError:
        print("   cluster: skipped (pip install 'ruleval[cluster]')")
        return
    from validator.tools.cluster import local_cluster

    with local_cluster(2) as local:
        address = local.address
        with Client(address, set_as_default=False) as client:
            t0 = time.perf_counter()  # each worker loads the rulesets it is sent, once: timed apart
            _timed("(warm-up: workers load the rulesets)", rulesets, items[:4], client=client, cluster=address)
            setup = time.perf_counter() - t0
            dask, got = _timed("local Dask cluster, 2 workers", rulesets, items, client=client, cluster=address)
        print(f"   worker set-up (rulesets sent as content, loaded once per worker): {setup:.1f} s")
        assert got == base, "the cluster gave other results than one process"
        print(f"   speed-up {one / dask:.2f}x on 2 Dask workers, efficiency {one / dask / 2:.0%}")
        # what each task costs the scheduler, whatever it runs: empty tasks, one at a time in flight per worker
        with Client(address, set_as_default=False) as client:
            n = 400
            client.submit(_noop, [], 0, pure=False).result()
            t0 = time.perf_counter()
            futures = [client.submit(_noop, [], i, pure=False) for i in range(n)]
            client.gather(futures)
            overhead = (time.perf_counter() - t0) / n
    from validator.tools.sweep import _chunks, run_chunk
    from validator.tools.balance import play_one

    piece = _chunks(args.games, 2)[0]
    task_bytes = len(pickle.dumps((run_chunk, play_one, [source_of(r).digest for r in rulesets],
                                   [items[i] for i in piece])))
    result_bytes = len(pickle.dumps(base)) / len(base)
    source_bytes = sum(source_of(r).size for r in rulesets)
    per_game = dask * 2 / args.games  # worker-seconds a game took on the cluster
    print(f"   per task: {overhead * 1000:.2f} ms of scheduling (empty tasks, 2 workers); "
          f"{task_bytes / 1024:.1f} KiB sent for a piece of {len(piece)} games, "
          f"{result_bytes / 1024:.2f} KiB back per game; sources {source_bytes / 1024:.0f} KiB once per worker")
    games, workers = 100_000, 100
    pieces = workers * 4
    estimate = games * per_game / workers + pieces * overhead
    shipped = pieces * task_bytes * (games / pieces) / len(piece) + workers * source_bytes + games * result_bytes
    print(f"   estimate, {games} games of {args.rounds} years on {workers} workers: {estimate:.0f} s "
          f"({games * per_game:.0f} worker-seconds / {workers}, plus {pieces} tasks' scheduling), "
          f"{shipped / 2**20:.0f} MiB over the network")
    if os.environ.get("BENCH_SCALE_JSON"):
        import json

        print(json.dumps({"one": one, "every": every, "dask": dask, "overhead": overhead, "task_bytes": task_bytes,
                          "result_bytes": result_bytes, "source_bytes": source_bytes}))


if __name__ == "__main__":
    main(sys.argv[1:])

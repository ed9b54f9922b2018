"""Start-up: `ruleval check rulesets/` from a cold process, against a bare `python -c pass`.

Goal (issue 7): under 0.5 s on the project's machine. Figures, each the median of several runs:
with the check cache off (every ruleset parsed, compiled and checked: a fresh clone in CI), by
default (one process per CPU, at most 4) and with `--jobs 1`; and with the cache warm (nothing
changed since the last check: an author's edit-check loop, pre-commit); and a single `ruleval run` of
the standard rules on one state with the cache warm (what a CI step or a designer's try costs each time).
Run from the repository root: `python -m bench.startup`.

`python -m bench.startup --instructions OTHER_TREE` counts instead, with valgrind's callgrind as
``bench.ab_instructions`` does (a count does not move with the machine's load), the instructions of
one cold check (`--jobs 1`, the check cache off) in this checkout and in another, the two at once,
each after an untimed run that leaves Python's bytecode; printed: both counts and their ratio. With
`--run`, the single `ruleval run` instead, each tree's cache folder warmed by two untimed runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], runs: int, env: dict[str, str]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


RUN = ["run", "rulesets/diplomacy/standard.rules", "--state", "rulesets/diplomacy/examples/movement_1901.json"]


def main(runs: int = 7) -> dict[str, float]:
    check = [sys.executable, "-m", "validator", "check", "rulesets"]
    run = [sys.executable, "-m", "validator", *RUN]
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "RULEVAL_CACHE_DIR": cache}
        env.pop("RULEVAL_NO_CACHE", None)
        # a machine that writes no bytecode (PYTHONDONTWRITEBYTECODE, set in some sandboxes and CI
        # images) would compile ruleval's own modules again in every timed process
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        # once, untimed: Python's bytecode and ruleval's parser tables, as on any machine after
        # the first run (the check cache is what the "without cache" figures leave out)
        quiet = {"cwd": ROOT, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "check": False}
        subprocess.run(check + ["--no-cache"], env=env, **quiet)  # type: ignore[call-overload]
        bare = timed([sys.executable, "-c", "pass"], runs, env)
        cold = timed(check, runs, {**env, "RULEVAL_NO_CACHE": "1"})
        cold1 = timed(check + ["--jobs", "1"], runs, {**env, "RULEVAL_NO_CACHE": "1"})
        subprocess.run(check, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
        warm = timed(check, runs, env)
        subprocess.run(run, env=env, **quiet)  # type: ignore[call-overload]
        single = timed(run, runs, env)
    cpus = os.cpu_count() or 1
    print(f"startup: python -c pass {bare * 1000:.0f} ms; ruleval check rulesets/ without the check cache: "
          f"{cold * 1000:.0f} ms (ratio {cold / bare:.1f}x; {min(4, cpus)} processes on {cpus} CPUs), "
          f"{cold1 * 1000:.0f} ms in one process (ratio {cold1 / bare:.1f}x); "
          f"with a warm cache {warm * 1000:.0f} ms (ratio {warm / bare:.1f}x)")
    print(f"startup: goal < 500 ms: {'met' if cold < 0.5 else 'NOT met'} without the cache, "
          f"{'met' if cold1 < 0.5 else 'NOT met'} in one process, {'met' if warm < 0.5 else 'NOT met'} with it")
    print(f"startup: a single `ruleval {' '.join(RUN)}` with a warm cache: {single * 1000:.0f} ms "
          f"(ratio {single / bare:.1f}x)")
    return {"bare_s": bare, "cold_s": cold, "cold_one_process_s": cold1, "warm_s": warm, "run_s": single}


def instructions(other: Path, run: bool = False) -> float:
    """The instructions of one cold check in one process here (``run``: of the single `ruleval run`, the
    cache warm), against ``other`` (a checkout): their ratio (below 1: this checkout runs fewer)."""
    from bench.ab_instructions import _count

    if shutil.which("valgrind") is None:
        raise SystemExit("bench.startup --instructions needs valgrind (e.g. `apt install valgrind`)")
    other = other.resolve()
    if not (other / "validator").is_dir() or not (other / "rulesets").is_dir():
        raise SystemExit(f"{other} is not a checkout of ruleval")
    check = [sys.executable, "-m", "validator", *(RUN if run else ["check", "rulesets", "--jobs", "1"])]  # (the
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}  # tree's own, run from its folder)
    with tempfile.TemporaryDirectory() as tmp:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "RULEVAL_NO_CACHE")}
        env |= {"PYTHONHASHSEED": "0"} if run else {"PYTHONHASHSEED": "0", "RULEVAL_NO_CACHE": "1"}
        outs = {tree: Path(tmp) / f"{i}.out" for i, tree in enumerate((ROOT, other))}
        caches = {tree: {"RULEVAL_CACHE_DIR": str(Path(tmp) / f"cache{i}")} for i, tree in enumerate(outs)}
        for tree in outs:  # (bytecode, and with ``run`` each tree's own cache folder warm)
            for _ in range(2 if run else 1):
                subprocess.run(check, cwd=tree, env={**env, **caches[tree]}, check=False, **quiet)  # type: ignore[call-overload]
        runs = {tree: subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *check],
                                       cwd=tree, env={**env, **caches[tree]}, **quiet)  # type: ignore[call-overload]
                for tree, out in outs.items()}
        for tree, proc in runs.items():
            _, err = proc.communicate()
            if proc.returncode not in (0, 1):
                raise SystemExit(f"counting {tree} failed:\n{err.decode(errors='replace').strip()[-2000:]}")
        count = {tree: _count(out) for tree, out in outs.items()}
    what = f"a single `ruleval {' '.join(RUN)}`, the cache warm" if run else "a cold `ruleval check rulesets` in one process"
    print(f"  this  {ROOT}: {count[ROOT]:,} instructions, {what}")
    print(f"  other {other}: {count[other]:,} instructions")
    print(f"  this checkout runs {count[ROOT] / count[other]:.4f}x the instructions of the other")
    return count[ROOT] / count[other]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instructions", type=Path, metavar="OTHER_TREE",
                    help="count one cold check with callgrind here and in OTHER_TREE (another checkout)")
    ap.add_argument("--run", action="store_true", help="with --instructions: count the single `ruleval run`")
    args = ap.parse_args()
    if args.instructions is not None:
        instructions(args.instructions, args.run)
    else:
        main()

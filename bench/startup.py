"""Start-up: `ruleval check rulesets/` from a cold process, against a bare `python -c pass`.

Goal (issue 7): under 0.5 s on the project's machine. Figures, each the median of several runs:
with the check cache off (every ruleset parsed, compiled and checked: a fresh clone in CI), by
default (one process per CPU, at most 4) and with `--jobs 1`; and with the cache warm (nothing
changed since the last check: an author's edit-check loop, pre-commit).
Run from the repository root: `python -m bench.startup`.

`python -m bench.startup --instructions OTHER_TREE` counts instead, with valgrind's callgrind as
``bench.ab_instructions`` does (a count does not move with the machine's load), the instructions of
one cold check (`--jobs 1`, the check cache off) in this checkout and in another, the two at once,
each after an untimed run that leaves Python's bytecode; printed: both counts and their ratio.
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


def main(runs: int = 7) -> dict[str, float]:
    check = [sys.executable, "-m", "validator", "check", "rulesets"]
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
    cpus = os.cpu_count() or 1
    print(f"startup: python -c pass {bare * 1000:.0f} ms; ruleval check rulesets/ without the check cache: "
          f"{cold * 1000:.0f} ms (ratio {cold / bare:.1f}x; {min(4, cpus)} processes on {cpus} CPUs), "
          f"{cold1 * 1000:.0f} ms in one process (ratio {cold1 / bare:.1f}x); "
          f"with a warm cache {warm * 1000:.0f} ms (ratio {warm / bare:.1f}x)")
    print(f"startup: goal < 500 ms: {'met' if cold < 0.5 else 'NOT met'} without the cache, "
          f"{'met' if cold1 < 0.5 else 'NOT met'} in one process, {'met' if warm < 0.5 else 'NOT met'} with it")
    return {"bare_s": bare, "cold_s": cold, "cold_one_process_s": cold1, "warm_s": warm}


def instructions(other: Path) -> float:
    """The instructions of one cold check in one process here, against ``other`` (a checkout): their
    ratio (below 1: this checkout runs fewer)."""
    from bench.ab_instructions import _count

    if shutil.which("valgrind") is None:
        raise SystemExit("bench.startup --instructions needs valgrind (e.g. `apt install valgrind`)")
    other = other.resolve()
    if not (other / "validator").is_dir() or not (other / "rulesets").is_dir():
        raise SystemExit(f"{other} is not a checkout of ruleval")
    check = [sys.executable, "-m", "validator", "check", "rulesets", "--jobs", "1"]  # (the tree's own, from its folder)
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.PIPE}
    with tempfile.TemporaryDirectory() as tmp:
        env = {**os.environ, "RULEVAL_CACHE_DIR": tmp, "RULEVAL_NO_CACHE": "1", "PYTHONHASHSEED": "0"}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        outs = {tree: Path(tmp) / f"{i}.out" for i, tree in enumerate((ROOT, other))}
        for tree in outs:
            subprocess.run(check, cwd=tree, env=env, check=False, **quiet)  # type: ignore[call-overload]
        runs = {tree: subprocess.Popen(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *check],
                                       cwd=tree, env=env, **quiet)  # type: ignore[call-overload]
                for tree, out in outs.items()}
        for tree, proc in runs.items():
            _, err = proc.communicate()
            if proc.returncode not in (0, 1):
                raise SystemExit(f"counting {tree} failed:\n{err.decode(errors='replace').strip()[-2000:]}")
        count = {tree: _count(out) for tree, out in outs.items()}
    print(f"  this  {ROOT}: {count[ROOT]:,} instructions, a cold `ruleval check rulesets` in one process")
    print(f"  other {other}: {count[other]:,} instructions")
    print(f"  this checkout runs {count[ROOT] / count[other]:.4f}x the instructions of the other")
    return count[ROOT] / count[other]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--instructions", type=Path, metavar="OTHER_TREE",
                    help="count one cold check with callgrind here and in OTHER_TREE (another checkout)")
    args = ap.parse_args()
    if args.instructions is not None:
        instructions(args.instructions)
    else:
        main()

"""Start-up: `ruleval check rulesets/` from a cold process, against a bare `python -c pass`.

Goal (issue 7): under 0.5 s on the project's machine. Figures, each the median of several runs:
with the check cache off (every ruleset parsed, compiled and checked: a fresh clone in CI), by
default (one process per CPU, at most 4) and with `--jobs 1`; and with the cache warm (nothing
changed since the last check: an author's edit-check loop, pre-commit).
Run from the repository root: `python -m bench.startup`.
"""

from __future__ import annotations

import os
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


if __name__ == "__main__":
    main()

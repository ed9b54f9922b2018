"""Start-up: `ruleval check rulesets/` from a cold process, against a bare `python -c pass`.

Goal (issue 7): under 0.5 s on the project's machine. Two figures, each the median of several
runs: with the check cache off (every ruleset parsed, compiled and checked: a fresh clone in CI)
and with it warm (nothing changed since the last check: an author's edit-check loop, pre-commit).
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
        bare = timed([sys.executable, "-c", "pass"], runs, env)
        cold = timed(check, runs, {**env, "RULEVAL_NO_CACHE": "1"})
        subprocess.run(check, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False, env=env)
        warm = timed(check, runs, env)
    print(f"startup: python -c pass {bare * 1000:.0f} ms; ruleval check rulesets/ without cache {cold * 1000:.0f} ms "
          f"(ratio {cold / bare:.1f}x), with a warm cache {warm * 1000:.0f} ms (ratio {warm / bare:.1f}x); "
          f"goal < 500 ms: {'met' if warm < 0.5 else 'NOT met'} warm, {'met' if cold < 0.5 else 'NOT met'} cold")
    return {"bare_s": bare, "cold_s": cold, "warm_s": warm}


if __name__ == "__main__":
    main()

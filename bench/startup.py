"""Start-up: `ruleval check rulesets/` from a cold process, against a bare `python -c pass`.

Goal (issue 7): under 0.5 s on the project's machine. Prints the median of several runs of each
and their ratio; run from the repository root: `python -m bench.startup`.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(cmd: list[str], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(runs: int = 7) -> dict[str, float]:
    bare = timed([sys.executable, "-c", "pass"], runs)
    check = timed([sys.executable, "-m", "validator", "check", "rulesets"], runs)
    print(f"startup: python -c pass {bare * 1000:.0f} ms; ruleval check rulesets/ {check * 1000:.0f} ms; "
          f"ratio {check / bare:.1f}x; goal < 500 ms: {'met' if check < 0.5 else 'NOT met'}")
    return {"bare_s": bare, "check_s": check}


if __name__ == "__main__":
    main()

"""Every benchmark in one command: `python -m bench` from the repository root.

Each benchmark measures ruleval against its peer in the same run and prints the ratio; a
benchmark whose peer is not installed says so and goes on.
"""

from __future__ import annotations

import importlib
import traceback

BENCHES = ["bench.startup", "bench.diplomacy_throughput", "bench.route", "bench.jomini_reach", "bench.his_exact",
           "bench.exact_paths", "bench.full_games", "bench.scale"]


def main() -> None:
    for name in BENCHES:
        print(f"== {name}")
        try:
            module = importlib.import_module(name)
        except ImportError as exc:
            print(f"   skipped: {exc}")
            continue
        try:
            module.main()
        except Exception:  # a broken benchmark must not hide the others' figures
            traceback.print_exc()


if __name__ == "__main__":
    main()

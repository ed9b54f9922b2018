"""Every benchmark in one command: `python -m bench` from the repository root.

Each benchmark measures ruleval against its peer in the same run and prints the ratio; a
benchmark whose peer is not installed says so and goes on.
"""

from __future__ import annotations

import importlib
import traceback
from typing import Any, Callable

BENCHES = ["bench.startup", "bench.diplomacy_throughput", "bench.route", "bench.jomini_reach", "bench.his_exact",
           "bench.exact_paths", "bench.full_games", "bench.scale"]


def entry(name: str) -> Callable[[], Any]:
    """The ``main`` of the benchmark ``name``: its module's, or a package's ``__main__``'s (`python -m
    bench.route`). Raises ImportError when what it needs is not installed."""
    module = importlib.import_module(name)
    if not hasattr(module, "main"):
        module = importlib.import_module(name + ".__main__")
    return module.main  # type: ignore[no-any-return]


def main() -> None:
    for name in BENCHES:
        print(f"== {name}")
        try:
            run = entry(name)
        except ImportError as exc:
            print(f"   skipped: {exc}")
            continue
        try:
            run()
        except Exception:  # a broken benchmark must not hide the others' figures
            traceback.print_exc()


if __name__ == "__main__":
    main()

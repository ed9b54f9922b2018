"""`python -m bench` runs every benchmark it names: each entry of ``BENCHES`` resolves to a ``main``
(a package's benchmark through its ``__main__``, as `python -m bench.route` runs it; until 2026-12-02
`bench.route` failed there with an AttributeError). Nothing is run: benchmarks time the machine, and
tests never assert times."""

from __future__ import annotations

import pytest

from bench.__main__ import BENCHES, entry


@pytest.mark.parametrize("name", BENCHES)
def test_every_benchmark_python_m_bench_names_has_a_main(name: str) -> None:
    assert callable(entry(name))

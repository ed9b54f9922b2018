"""bench/ab_turns.py, the A/B tool for speed changes: it times both trees in fresh processes and
prints a ratio (the figures themselves are not tested: tests never assert times)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `bench` is a top-level package of the checkout, not installed
    sys.path.insert(0, str(ROOT))

from bench import ab_turns  # noqa: E402


def test_ab_turns_times_both_trees_and_prints_the_ratio(capsys: pytest.CaptureFixture[str]) -> None:
    assert ab_turns.main([str(ROOT), "--runs", "1", "--turns", "5"]) == 0
    out = capsys.readouterr().out
    assert out.count("ms/turn") == 2 and "x the speed of the other" in out


def test_ab_turns_refuses_what_is_no_checkout(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="not a checkout of ruleval"):
        ab_turns.main([str(tmp_path), "--runs", "1"])

"""Every YAML case under tests/cases runs as its own pytest test, through the same runner as
`ruleval test` (xfail cases stay visible as xfail with their reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from validator.tools.testing import load_suite, run_case

CASES_DIR = Path(__file__).resolve().parent / "cases"
SUITE = load_suite([str(CASES_DIR)])


def test_case_files_are_well_formed() -> None:
    assert not SUITE.diagnostics, [d.message for d in SUITE.diagnostics]


@pytest.mark.parametrize("case", SUITE.cases,
                         ids=[f"{Path(c.file).parent.name}/{Path(c.file).stem}::{c.id}" for c in SUITE.cases])
def test_case(case) -> None:
    outcome = run_case(case)
    if outcome.status == "xfailed":
        pytest.xfail(outcome.message)
    assert outcome.status == "passed", outcome.message

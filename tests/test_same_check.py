"""``bench/same_check.py`` (a cold check's output byte for byte, here and in another checkout: what a
change meant only to make checking faster is held to) says the same when nothing differs, and names
the check whose output differs when something does: here a copy of this checkout's code, then the
same copy with one diagnostic's message changed, on one file with diagnostics of every stage."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench import same_check

ROOT = Path(__file__).resolve().parent.parent
CASE = "tests/fixtures/several_errors.rules"  # (errors and warnings of the parser, the checker's passes)


def test_same_check_says_the_same_of_a_copy_and_names_a_difference_planted_in_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = tmp_path / "other"
    shutil.copytree(ROOT / "validator", other / "validator", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "grammar", other / "grammar")
    (other / CASE).parent.mkdir(parents=True)
    for name in (CASE, "tests/fixtures/ruleval.toml"):
        shutil.copy(ROOT / name, other / name)
    assert same_check.main([str(other), "--only", CASE]) == 0
    assert "2 of 2 checks said the same" in capsys.readouterr().out

    checker = other / "validator" / "lang" / "checker.py"
    text = checker.read_text()
    planted = text.replace('f"`{name}` is never used"', 'f"`{name}` is not used"')
    assert planted != text
    checker.write_text(planted)
    assert same_check.main([str(other), "--only", CASE]) == 1
    said = capsys.readouterr().out
    assert f"DIFFERENT: ruleval check {CASE}\n" in said and f"DIFFERENT: ruleval check {CASE} --format json" in said
    assert "is not used" in said and "0 of 2 checks said the same" in said

"""The README's and the tutorial's commands with a slip a new user makes (a typo in a file name, a folder
where a file is expected): each answered by one usage error naming the path and what it is, exit 2
(docs/diagnostics.md: a path on the command line that does not exist), never a finding (exit 1) nor a
diagnostic that names the wrong fault."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DIP = "rulesets/diplomacy"
SAMPLE = "tests/cases/diplomacy/datc_sample.txt"


@pytest.mark.parametrize("argv, said", [
    # (the ruleset was C005, exit 1, as if a ruleset had failed its check)
    (["--ruleset", f"{DIP}/datc_tex.rules", SAMPLE], f"ruleset `{DIP}/datc_tex.rules` not found"),
    (["--ruleset", DIP, SAMPLE], f"ruleset `{DIP}` is not a regular file (a folder)"),
    # (a folder was said to be `not found`)
    (["--ruleset", f"{DIP}/datc_text.rules", "tests/cases/diplomacy"],
     "file to import `tests/cases/diplomacy` is not a regular file (a folder)"),
    (["--ruleset", f"{DIP}/datc_text.rules", "tests/cases/diplomacy/datc_sampl.txt"],
     "file to import `tests/cases/diplomacy/datc_sampl.txt` not found"),
])
def test_test_import_names_a_path_that_is_no_file(cli, monkeypatch: pytest.MonkeyPatch, argv: list[str], said: str) -> None:
    monkeypatch.chdir(ROOT)
    r = cli("test", "--import", "datc_cases", *argv)
    assert r.code == 2 and r.err == f"ruleval: error[U001]: {said}\n" and r.out == "", r

"""What a user of the command line meets on a slip (session 33): each is answered in the project's own
words, with the exit code docs/diagnostics.md gives it, never argparse's words, I001 nor a traceback.
Each test here failed before the fix it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_hostile_inputs import run  # (a command's answer, checked for a traceback and I001)


ROOT = Path(__file__).resolve().parent.parent


# ---------------------------------------------------------------- 1. a die that is no face: `--dice -1,2`

@pytest.fixture
def rolls(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_text('ruleset a "a"\nquery main = roll(1d6) + roll(1d6)\n')
    return tmp_path / "a.rules"


@pytest.mark.parametrize("command", ["run", "explain"])
@pytest.mark.parametrize("written, face", [
    (["--dice", "-1,2"], "-1"),   # (was argparse's `argument --dice: expected one argument`)
    (["--dice", "-1"], "-1"),     # (was run: E011, `scripted die -1 is not a face of a d6`, exit 1)
    (["--dice=-1,2"], "-1"),
    (["--dice", "3,-2"], "-2"),
    (["--dice", "-1, 2"], "-1"),
    (["--dice", "2,0"], "0"),
])
def test_a_die_below_one_is_a_usage_error_naming_it(rolls: Path, command: str, written: list[str], face: str) -> None:
    code, out, err = run([command, rolls, *written])
    assert (code, out) == (2, ""), out + err
    assert err.startswith("ruleval: error[U001]: --dice") and f"`{face}`" in err and "argument" not in err, err


def test_dice_from_one_still_run(rolls: Path) -> None:
    code, out, err = run(["run", rolls, "--format", "json", "--dice", "6,3"])
    assert (code, out.strip()) == (0, "9"), out + err


def test_a_negative_number_after_another_option_is_still_an_option_value(rolls: Path) -> None:
    # (the change reads a value that starts with `-` and a digit as a value, as argparse read `-3` already)
    code, out, err = run(["run", rolls, "--format", "json", "--seed", "-3"])
    assert code == 0 and out.strip().isdigit(), out + err
    code, _, err = run(["run", rolls, "--dice", "-x"])
    assert code == 2 and "--dice" in err, err


# ---------------------------------------------------------------- 2. the forms an unreadable order is told

DIP = ROOT / "rulesets" / "diplomacy" / "standard.rules"


def dip_order(tmp_path: Path, text: str) -> tuple[int, str, str]:
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": "par"}],
             "orders": [{"power": "france", "order": text}]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    return run(["run", "--format", "json", DIP, "--state", path])


def test_an_unreadable_order_is_told_the_forms_read_daide_among_them(tmp_path: Path) -> None:
    # (was the notations' forms alone, though a DAIDE order, `( ( FRA AMY PAR ) MTO BUR )`, is read too)
    code, out, err = dip_order(tmp_path, "A PAR GO SOMEWHERE")
    [diag] = json.loads(out)
    assert code == 3 and diag["code"] == "S002", out + err
    forms = re.findall(r"`([^`]*)`", diag["message"].split("expected e.g. ", 1)[1])
    assert len(forms) >= 8 and any(f.startswith("(") for f in forms), forms
    for form in forms:  # each form the message gives is one the ruleset reads (no S002 for it)
        code, out, err = dip_order(tmp_path, form)
        assert code == 0, (form, out, err)


# ---------------------------------------------------------------- 3. a variant's coverage: its own catalogue

def test_a_variants_coverage_counts_its_catalogue_as_docs_define_it(tmp_path: Path) -> None:
    # (no change: docs/tools.md measures "each ruleset's catalogue", and docs/language.md says a variant's
    # catalogue extends its base's; this pins that the denominator is the variant's inherited and own
    # clauses, each ruleset measured apart)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "base.yaml").write_text("clauses:\n  B-1: one\n  B-2: two\n  B-3: three\n")
    (tmp_path / "own.yaml").write_text("clauses:\n  V-1: own\n")
    (tmp_path / "base.rules").write_text('ruleset t.base "b"\nclauses "base.yaml"\nrule one cite "B-1" = 1\n'
                                         'rule two cite "B-2" = 2\nquery main = one + two\n')
    (tmp_path / "variant.rules").write_text('ruleset t.variant "v"\nextends "base.rules"\nclauses "own.yaml"\n'
                                            'rule three cite "V-1" = 3\noverride query main = one + three\n')
    (tmp_path / "cases.yaml").write_text("ruleset: base.rules\ncases:\n  - id: b\n    state: {}\n    expect: 3\n")
    (tmp_path / "variant_cases.yaml").write_text(
        "ruleset: variant.rules\ncases:\n  - id: v\n    state: {}\n    expect: 4\n")
    code, out, err = run(["coverage", tmp_path / "cases.yaml", tmp_path / "variant_cases.yaml", "--format", "json"])
    assert code == 0, out + err
    got = {Path(r["ruleset"]).name: (r["clauses"], r["covered"]) for r in json.loads(out)["rulesets"]}
    assert got == {"base.rules": (3, ["B-1", "B-2"]), "variant.rules": (4, ["B-1", "V-1"])}, got

"""Scripted dice, said wrong, are said so where they are given: `--dice` on the command line of every
command that takes it (one definition, ``common.add_dice_options``; U001, exit 2), a test case's
`dice:` (at that line and column, as a malformed case), the API's ``dice=`` (``ValueError``, as its
other bad arguments). Only a face above a die's sides waits for the roll (E011)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tests" / "fixtures" / "tools"


@pytest.mark.parametrize("dice", ["-1,2", "0", "6,0", "x", ""])
def test_explain_refuses_bad_dice_as_run_does(cli, dice: str) -> None:
    ruleset = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    ran, explained = cli("run", ruleset, "--dice", dice), cli("explain", ruleset, "--dice", dice)
    assert ran.code == explained.code == 2 and "error[U001]" in ran.err and "--dice" in ran.err, ran
    assert explained.err == ran.err and explained.out == ran.out == ""


@pytest.mark.parametrize("command", ["run", "explain"])
def test_seed_and_dice_are_one_or_the_other(cli, command: str) -> None:
    r = cli(command, str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), "--seed", "1", "--dice", "2")
    assert r.code == 2 and "not allowed with argument" in r.err, r


def _cases(tmp_path: Path, dice: str) -> Path:
    for name in ("demo.rules", "clauses.yaml"):
        (tmp_path / name).write_text((TOOLS / name).read_text())
    path = tmp_path / "cases.yaml"
    path.write_text("ruleset: demo.rules\ncases:\n  - id: roll\n    query: dice_roll\n"
                    f"    dice: {dice}\n    state: {{}}\n    expect: {{status: completed}}\n")
    return path


def _place_of(path: Path, text: str) -> str:
    """``FILE:LINE:COL`` of the first ``text`` in the file."""
    before = path.read_text()[:path.read_text().index(text)]
    return f"{path}:{before.count(chr(10)) + 1}:{len(before) - before.rfind(chr(10))}"


@pytest.mark.parametrize("dice, face", [("[3, 0]", "0]"), ("[-1, 3]", "-1")])
def test_a_case_whose_dice_name_a_face_below_1_is_malformed_at_that_face(cli, tmp_path: Path, dice: str,
                                                                          face: str) -> None:
    path = _cases(tmp_path, dice)
    r = cli("test", str(path))
    assert r.code == 3, r  # (S004's exit code, not a failure of the rules, E011's 1)
    said = [line.strip() for line in r.out.splitlines() if "S004" in line]
    assert said and said[0].startswith(_place_of(path, face) + ": S004:") and "E011" not in r.out, r.out
    r = cli("diff", str(tmp_path / "demo.rules"), str(tmp_path / "demo.rules"), "--cases", str(path))
    assert r.code == 3 and r.err.startswith(_place_of(path, face) + ": error[S004]:") and "I001" not in r.err, r


def test_a_case_face_above_the_sides_is_known_at_the_roll(cli, tmp_path: Path) -> None:
    r = cli("test", str(_cases(tmp_path, "[3, 9]")))
    assert r.code == 1 and "E011" in r.out and "S004" not in r.out, r.out


def test_diff_says_a_case_with_two_sources_of_dice_as_a_malformed_case(cli, tmp_path: Path) -> None:
    path = _cases(tmp_path, "[3, 4]\n    seed: 7")
    r = cli("diff", str(tmp_path / "demo.rules"), str(tmp_path / "demo.rules"), "--cases", str(path))
    assert r.code == 3 and "error[S004]" in r.err and "I001" not in r.err, r


def test_the_api_refuses_a_face_below_1_before_the_run() -> None:
    from validator.api import RunError, load_ruleset

    rs = load_ruleset(TOOLS / "demo.rules")
    for dice in ([0], [3, -2], (3, 0)):
        with pytest.raises(ValueError, match=r"dice\[\d\] is -?\d, no face of a die"):
            rs.run({}, "dice_roll", dice=dice)
    with pytest.raises(RunError) as exc:  # (above a d6's sides: known only at the roll)
        rs.run({}, "dice_roll", dice=[3, 9])
    assert [d.code for d in exc.value.diagnostics] == ["E011"]
    assert rs.run({}, "dice_roll", dice=[3, 4])["status"] == "completed"

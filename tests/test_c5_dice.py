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

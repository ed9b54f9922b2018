"""What a user of the command line meets on a slip: each is answered with a located diagnostic (or a
usage error naming what was wrong) and the exit code docs/diagnostics.md gives it, never I001 nor a
traceback. Each test here failed before the fix it names (session 32, "noticed, not fixed")."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from test_hostile_inputs import run  # (a command's answer, checked for a traceback and I001)

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy" / "standard.rules"
DIP_START = ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json"


def said_at(text: str, code: str) -> list[tuple[str, int, int]]:
    """The places (file, line, column) of each ``code`` error in rendered text."""
    return [(m[1], int(m[2]), int(m[3])) for m in re.finditer(rf"^(.*?):(\d+):(\d+): error\[{code}\]", text, re.M)]


# ---------------------------------------------------------------- 1. a record folder's state that is no object

@pytest.mark.parametrize("first, second, file, line, col", [
    ("\n  3\n", None, "001_S1901M.json", 2, 3),
    (None, "\n[1,\n 2]\n", "002_F1901M.json", 2, 1),
    (None, "3", "002_F1901M.json", 1, 1),
])
def test_a_record_folders_state_that_is_no_object_is_said_at_its_value(
        tmp_path: Path, first: str | None, second: str | None, file: str, line: int, col: int) -> None:
    # (was `DIR/002_F1901M.json: error[S001]` with no line and column: the other state errors have one)
    folder = tmp_path / "rec"
    folder.mkdir()
    for name, text in (("001_S1901M.json", first), ("002_F1901M.json", second)):
        (folder / name).write_text(text) if text is not None else shutil.copy(DIP_START, folder / name)
    code, out, err = run(["replay", DIP, folder])
    assert code == 3 and said_at(out + err, "S001") == [(str(folder / file), line, col)], out + err
    code, out, _ = run(["replay", DIP, folder, "--format", "json"])
    [d] = json.loads(out)["refusal"]
    assert code == 3 and (d["code"], d["file"], d["line"], d["col"]) == ("S001", str(folder / file), line, col), d


# ---------------------------------------------------------------- 2. test and coverage of no case at all

@pytest.mark.parametrize("command", [["test"], ["test", "-k", "zzz"], ["coverage"], ["test", "--format", "json"]])
def test_no_case_to_run_is_s004_at_each_path_named(tmp_path: Path, command: list[str]) -> None:
    # (was `ruleval: error[S004]: no test cases found in A, B`: the command's name where the others give a path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "data.yaml").write_text("k: 1\n")  # (found in a folder, it may be data beside the cases)
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    code, out, err = run([command[0], a, b, *command[1:]])
    assert code == 3 and said_at(err, "S004") == [] and "ruleval:" not in err, err
    placed = re.findall(r"^(.*?): error\[S004\]: no test cases (?:matching `zzz` )?found$", err, re.M)
    assert placed == [a, b], err
    if "json" in command:  # (the report a CI job reads says so too)
        assert [(d["code"], d["file"]) for d in json.loads(out)["diagnostics"]] == [("S004", a), ("S004", b)], out


# ---------------------------------------------------------------- 4. an option of one value given twice

def _options_of_one_value() -> list[tuple[str, str, list[str]]]:
    """Every command's options that store what follows them (argparse's ``store``), each with two
    values it accepts: its first choices, else two numbers, else two words."""
    import argparse

    from validator.tools.cli import _StoreOnce, build_parser

    found = []
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for command, parser in sub.choices.items():
        for action in parser._actions:
            if not action.option_strings or not isinstance(action, _StoreOnce):
                continue
            values = [str(c) for c in action.choices][:2] if action.choices else ["1", "2"]
            try:
                [action.type(v) for v in values] if callable(action.type) else None
            except (ValueError, argparse.ArgumentTypeError):
                values = ["x", "y"]
            found.append((command, action.option_strings[-1], values))
    return found


ONE_VALUE = _options_of_one_value()


def test_every_option_of_one_value_is_checked() -> None:
    # (the list above is argparse's own: an option added later with action="store" is among them)
    assert ("run", "--seed", ["1", "2"]) in ONE_VALUE and ("serve", "--port", ["1", "2"]) in ONE_VALUE
    assert len(ONE_VALUE) > 40 and not any(option == "--arg" for _, option, _ in ONE_VALUE)  # (append: repeatable)


@pytest.mark.parametrize("command, option, values", ONE_VALUE, ids=[f"{c} {o}" for c, o, _ in ONE_VALUE])
def test_an_option_of_one_value_given_twice_is_a_usage_error_naming_both(
        command: str, option: str, values: list[str]) -> None:
    # (was: the last one taken without a word, `--seed 1 --seed 2` a run of seed 2)
    first, second = values[0], values[-1]
    code, out, err = run([command, option, first, f"{option}={second}"])
    assert (code, out) == (2, "") and err.startswith("ruleval: error[U001]: "), err
    assert f"`{option} {first}`" in err and f"`{option} {second}`" in err, err


def test_an_option_that_adds_a_value_each_time_may_be_repeated(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_text('ruleset a "a"\nquery main(x: int, y: int) = x + y\n')
    code, out, err = run(["run", tmp_path / "a.rules", "--arg", "1", "--arg", "2", "--format", "json"])
    assert code == 0 and json.loads(out) == 3, out + err


# ---------------------------------------------------------------- 5. numbers in ASCII digits only

def _numeric_options() -> list[tuple[str, str]]:
    import argparse

    from validator.tools.cli import build_parser

    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return [(command, action.option_strings[0]) for command, parser in sub.choices.items() for action in parser._actions
            if action.option_strings
            and (action.type in (int, float) or "int_between" in getattr(action.type, "__qualname__", ""))]


NUMERIC = _numeric_options()


@pytest.mark.parametrize("written", ["١", "1_000", "５", " 7", "+7", "0x10"])
@pytest.mark.parametrize("command, option", NUMERIC, ids=[f"{c} {o}" for c, o in NUMERIC])
def test_a_number_not_in_ascii_digits_is_a_usage_error_naming_its_option(command: str, option: str, written: str) -> None:
    # (was read by int(): `serve --port ١` listened on port 1, `--seed 1_000` was seed 1000)
    code, out, err = run([command, f"{option}={written}"])
    assert (code, out) == (2, "") and err.startswith(f"ruleval: error[U001]: argument {option}"), err


def test_the_numeric_options_are_found() -> None:
    assert {("serve", "--port"), ("run", "--seed"), ("play", "--max-phases"), ("coverage", "--fail-under")} <= set(NUMERIC)


@pytest.mark.parametrize("dice", ["١,2", "1_0", "1, ５", "\u20071"])
def test_dice_not_in_ascii_digits_are_a_usage_error(tmp_path: Path, dice: str) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_text('ruleset a "a"\nquery main = 1\n')
    code, _, err = run(["run", tmp_path / "a.rules", "--dice", dice])
    assert code == 2 and "error[U001]: --dice" in err, err


def test_a_negative_seed_and_numbers_as_written_are_still_read(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_text('ruleset a "a"\nquery main = 1\n')
    for extra in (["--seed", "-3"], ["--seed=007"]):
        code, out, err = run(["run", tmp_path / "a.rules", "--format", "json", *extra])
        assert code == 0 and json.loads(out) == 1, out + err


# ---------------------------------------------------------------- 6. play --until a phase already passed

DIP_RETREAT = ROOT / "rulesets" / "diplomacy" / "examples" / "retreat.json"


@pytest.mark.parametrize("until", ["S1901M", "f1901m", "S1902M"])
def test_play_until_a_phase_the_game_is_past_is_a_usage_error_saying_where_the_game_is(until: str) -> None:
    # (was S006, exit 3, as if the start state were wrong: like a name that is no phase, the argument is)
    code, out, err = run(["play", DIP, DIP_RETREAT, "--until", until])
    assert (code, out) == (2, ""), err
    assert err.startswith(f"{DIP_RETREAT}: error[U001]: --until `{until}` is a phase the game is past"), err
    assert "the game is at `S1902R`" in err, err


def test_play_until_the_phase_the_game_is_at_plays_nothing() -> None:
    code, out, err = run(["play", DIP, DIP_RETREAT, "--until", "S1902R"])
    assert code == 0 and out == "now at S1902R\n", out + err


# ---------------------------------------------------------------- 7. the example start state plays a whole year

def test_the_1901_example_plays_past_its_first_adjustment_with_random_orders() -> None:
    # (was S002 at W1901A: the example had no `supply_centers`, which an adjustment phase needs)
    code, out, err = run(["play", DIP, DIP_START, "--random-orders", "1", "--until", "S1902M"])
    assert code == 0 and "W1901A: " in out and out.endswith("now at S1902M\n"), out + err
    start = json.loads(DIP_START.read_text())
    homes = {u["location"].split("/")[0]: u["power"] for u in start["units"]}  # (every 1901 unit on a home centre)
    assert start["supply_centers"] == homes, start["supply_centers"]

"""The Python API as a library user meets it: a caller's mistake in a run's options is said at once
(``TypeError``, ``ValueError``, as ``play`` says its own), never run as something else nor met as an
error of the rules; what a state holds that JSON cannot is S001 with its pointer, as for a state
read from text; a path the system refuses is a diagnostic of the ruleset."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from validator.api import RunError, load_ruleset, play
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
PIG = ROOT / "docs" / "tutorial" / "pig.rules"
START = {"score": 10, "rolls": 2}


@pytest.fixture(scope="module")
def pig() -> Any:
    rs = load_ruleset(PIG)
    assert rs.ok
    return rs


@pytest.mark.parametrize("seed", [True, 1.5, "7", b"7", float("nan"), Decimal(3), [1]])
def test_a_seed_that_is_no_integer_is_a_type_error(pig: Any, seed: Any) -> None:
    # (before: "7" and 1.5 seeded other dice than 7 and 1 without a word, [1] was E001 at a `roll`)
    with pytest.raises(TypeError, match="seed is an integer or None"):
        pig.run(START, seed=seed)


@pytest.mark.parametrize("seed", [True, "7", [0] * 100_000])
def test_random_orders_that_are_no_integer_are_said_as_a_seed_is(pig: Any, seed: Any) -> None:
    """One check for both seeds of ``play``, its message bounded (a caller's huge value is not written out)."""
    for name, options in (("seed", {"seed": seed}), ("random_orders", {"random_orders": seed})):
        with pytest.raises(TypeError, match=f"^{name} is an integer or None, not {type(seed).__name__} ") as caught:
            list(play(pig, START, [], **options))
        assert len(str(caught.value)) < 120, str(caught.value)[:200]


def test_a_caller_s_huge_value_is_cut_short_in_every_message(pig: Any) -> None:
    """``brief`` writes no more of a value than a message shows: a huge wrong option is said in a line."""
    huge = [0] * 1_000_000
    for call in (lambda: pig.run(START, engine="x" * 1_000_000), lambda: list(play(pig, START, [], engine=huge)),
                 lambda: list(play(pig, START, [], max_phases=huge)), lambda: pig.run(START, dice={0: huge}),
                 lambda: pig.run(START, seed=huge)):  # (its type said, its value cut short)
        with pytest.raises((TypeError, ValueError)) as caught:
            call()
        assert len(str(caught.value)) < 200, str(caught.value)[:300]


@pytest.mark.parametrize("dice", [[True, 3], [1.0, 3], [1.5, 3], ["6", 3], [None, 3], [Decimal(6), 3], "63", 63,
                                  {6, 3}, iter([6, 3])])
def test_dice_that_are_no_list_of_integers_are_a_type_error(pig: Any, dice: Any) -> None:
    # (before: a die of 1.5 made 4.5 points, Decimal 6 made the text "9", True was a 1)
    with pytest.raises(TypeError, match="dice is a list of integers"):
        pig.run(START, dice=dice)


def test_dice_as_a_tuple_are_the_same_list(pig: Any) -> None:
    assert pig.run(START, dice=(6, 3)) == pig.run(START, dice=[6, 3])


def test_a_huge_scripted_die_is_said_as_not_a_face(pig: Any) -> None:
    with pytest.raises(RunError) as caught:  # (before: Python's ValueError writing its 5 000 digits)
        pig.run(START, dice=[10 ** 5000, 3])
    assert caught.value.diagnostics[0].code == "E011"
    assert "bits is not a face" in caught.value.diagnostics[0].message


@pytest.mark.parametrize("options", [dict(exact=True, dice=[6, 3]), dict(exact=True, seed=4), dict(seed=1, dice=[6, 3])])
def test_two_sources_of_dice_are_a_value_error(pig: Any, options: dict[str, Any]) -> None:
    # (before: the dice or the seed were dropped without a word; the CLI's options exclude one another)
    with pytest.raises(ValueError, match="give one of seed, dice and exact"):
        pig.run(START, **options)


@pytest.mark.parametrize("budget", [None, "100", 1.5, True])
def test_a_budget_that_is_no_integer_is_a_type_error(pig: Any, budget: Any) -> None:
    with pytest.raises(TypeError, match="budget is a number of steps"):
        pig.run(START, budget=budget)


@pytest.mark.parametrize("args", ["ab", 5, {"a": 1, "b": 2}, iter([1, 2])])
def test_arguments_that_are_no_list_are_a_type_error(tmp_path: Path, args: Any) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "two.rules").write_text('ruleset two "two"\nquery two(a, b) = [a, b]\n')
    rs = load_ruleset(tmp_path / "two.rules")
    assert rs.run({}, "two", (1, 2)) == [1, 2]
    with pytest.raises(TypeError, match="args is a list"):  # (before: "ab" was the two arguments "a" and "b")
        rs.run({}, "two", args)


def test_a_case_giving_two_sources_of_dice_is_S004(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("pig.rules", "clauses.yaml", "state.schema.json", "ruleval.toml"):
        (tmp_path / name).write_text((PIG.parent / name).read_text())
    (tmp_path / "cases.yaml").write_text(
        "ruleset: pig.rules\ncases:\n  - id: both\n    state: {score: 1, rolls: 2}\n    seed: 3\n    dice: [6, 3]\n"
        "    expect: {banked: 10}\n  - id: fine\n    state: {score: 1, rolls: 2}\n    dice: [6, 3]\n"
        "    expect: {banked: 10}\n")
    assert main(["test", str(tmp_path / "cases.yaml")]) == 3
    said = capsys.readouterr()
    assert "cases.yaml:6:5: S004: case `both`: `seed` and `dice` both say where the dice come from" in said.out + said.err
    assert "1 passed" in said.out + said.err


@pytest.fixture(scope="module")
def free(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("free")
    (root / "ruleval.toml").write_text("")
    (root / "free.rules").write_text('ruleset free "no schema"\ninput x: any at "/x"\nquery echo = x\n'
                                     'query two(a, b) = [a, b]\n')
    rs = load_ruleset(root / "free.rules")
    assert rs.ok
    return rs


class _Odd:
    pass


@pytest.mark.parametrize("value, pointer", [
    (float("nan"), "/x"), (float("inf"), "/x"), ({"a": [1, float("-inf")]}, "/x/a/1"), (b"ab", "/x"),
    (Decimal("1.5"), "/x"), ({1, 2}, "/x"), (_Odd(), "/x"), ({1: "a", "1": "b"}, "/x"), ({"k": {None: 1}}, "/x/k"),
    ("\ud800", "/x"), (10 ** 402, "/x"), (10 ** 5000, "/x"), (1j, "/x")], ids=lambda v: type(v).__name__)
def test_a_state_value_json_cannot_hold_is_S001_at_its_pointer(free: Any, pig: Any, value: Any, pointer: str) -> None:
    # (before: NaN came back as a result json.dumps refuses, bytes and objects as their Python text,
    # the keys 1 and "1" as one key, a 5 000-digit integer beside a schema's keys as Python's ValueError)
    for rs, state in ((free, {"x": value}), (pig, {**START, "x": value})):
        with pytest.raises(RunError) as caught:
            rs.run(state, "echo" if rs is free else "main")
        d = caught.value.diagnostics[0]
        assert (d.code, d.pointer) == ("S001", pointer), d
        assert [e.code for e in rs.state_errors(state)] == ["S001"]
        assert [e.code for e in rs.state_schema_errors(state)] == ["S001"]


def test_a_cyclic_state_is_S001(free: Any) -> None:
    cyclic: dict[str, Any] = {}
    cyclic["me"] = cyclic
    with pytest.raises(RunError) as caught:
        free.run({"x": cyclic}, "echo")
    assert caught.value.diagnostics[0].code == "S001"


@pytest.mark.parametrize("value", [{"a": 1}, [1, (2, 3)], 0.1, 1e300, 10 ** 400, True, None, "é"], ids=str)
def test_json_values_and_subclasses_of_them_still_run(free: Any, value: Any) -> None:
    from collections import OrderedDict
    from enum import IntEnum

    class Level(IntEnum):
        high = 3

    assert json.dumps(free.run({"x": value}, "echo"), allow_nan=False)
    assert free.run(OrderedDict(x=[Level.high]), "echo") == [3]


@pytest.mark.parametrize("args", [[float("nan"), 1], [1, b"x"], [{1: 2}, 1]])
def test_arguments_json_cannot_hold_are_a_value_error(free: Any, args: Any) -> None:
    with pytest.raises(ValueError, match="no JSON value"):
        free.run({"x": 1}, "two", args)


@pytest.mark.parametrize("path, said", [("a" * 5000 + ".rules", "cannot be read: file name too long"),
                                        ("a\0b.rules", "cannot be read: embedded null byte"),
                                        (str(ROOT / "rulesets"), "is not a regular file (a folder)"),
                                        ("/nope/x.rules", "not found")])
def test_a_ruleset_path_that_names_no_file_is_C005(path: str, said: str) -> None:
    # (before: OSError and ValueError from inside for the first two, a folder "not found")
    rs = load_ruleset(path)
    assert not rs.ok
    assert [d.code for d in rs.diagnostics] == ["C005"]
    assert rs.diagnostics[0].message.endswith(said)
    with pytest.raises(RunError):
        rs.run({})


def test_a_ruleset_path_as_text_and_as_path_is_the_same_ruleset() -> None:
    assert load_ruleset(str(PIG)) is load_ruleset(PIG)


def test_an_exact_run_that_asks_for_a_trace_is_refused(pig: Any, capsys: pytest.CaptureFixture[str]) -> None:
    # (before: the trace was dropped without a word, by the API and by `ruleval run`)
    with pytest.raises(ValueError, match="explain traces one run"):
        pig.run(START, exact=True, explain=True)
    assert "explain" in pig.run(START, seed=1, explain=True)
    assert main(["run", str(PIG), "--state", str(PIG.parent / "start.json"), "--exact", "--explain"]) == 2
    assert "--explain traces one run" in capsys.readouterr().err


def test_play_until_that_is_no_text_is_a_type_error() -> None:
    from validator.api import play

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = rs.run({}, "start_state", validate=False)
    with pytest.raises(TypeError, match="until is a phase name"):  # (before: E011 at the rules' `trim`)
        list(play(rs, start, [], until=1902))


def test_a_run_leaves_the_state_as_it_was_and_its_answer_is_the_callers(free: Any) -> None:
    state = {"x": {"a": [1, 2], "b": {"c": 1}}}
    answer = free.run(state, "echo")
    answer["a"].append(3)
    answer["b"]["c"] = 2
    assert state == {"x": {"a": [1, 2], "b": {"c": 1}}}
    assert free.run(state, "echo") == {"a": [1, 2], "b": {"c": 1}}


def test_one_ruleset_in_several_threads_gives_the_serial_answers(pig: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    state = {"score": 10, "rolls": 6}
    runs = [dict(seed=s) for s in range(40)] + [dict(seed=s, engine="reference") for s in range(10)] + \
        [dict(exact=True)] * 4 + [dict(dice=[2, 3, 4, 5, 6, 2])] * 4
    serial = [json.dumps(pig.run(state, **kw), sort_keys=True) for kw in runs]
    with ThreadPoolExecutor(4) as pool:
        threaded = list(pool.map(lambda kw: json.dumps(pig.run(state, **kw), sort_keys=True), runs))
    assert threaded == serial


def test_play_reads_an_endless_iterable_of_entries_no_further_than_it_can_play() -> None:
    import itertools

    from validator.api import PlayError, play

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = rs.run({}, "start_state", validate=False)
    # (before: every entry was read first, for ever)
    assert [s.phase for s in play(rs, start, itertools.repeat([]), until="F1901M")] == ["S1901M"]
    with pytest.raises(PlayError) as caught:
        list(play(rs, start, itertools.repeat([]), max_phases=3))
    assert caught.value.diagnostics[0].code == "S006"


@pytest.mark.parametrize("value", [float("nan"), float("inf"), {"a": [float("-inf")]}], ids=str)
def test_an_unchecked_run_never_answers_with_what_json_cannot_write(free: Any, value: Any) -> None:
    # (before: validate=False gave NaN back, and json.dumps(answer, allow_nan=False) failed)
    with pytest.raises(RunError) as caught:
        free.run({"x": value}, "echo", validate=False)
    assert caught.value.diagnostics[0].code == "E011"
    assert "validate=False" in (caught.value.diagnostics[0].help or "")
    assert free.run({"x": 1.5}, "echo", validate=False) == "3/2"


def test_replay_refuses_a_record_state_json_cannot_hold_at_its_pointer() -> None:
    from validator.api import PlayError, play, replay

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = rs.run({}, "start_state", validate=False)
    steps = list(play(rs, start, [[], []]))
    record = [s.state for s in steps] + [steps[-1].next]
    assert replay(rs, record) == (2, None)
    cyclic = dict(record[1])
    cyclic["units"] = [*record[1]["units"], cyclic]
    # (before: TypeError from json.dumps comparing the states, RecursionError for the cycle)
    for bad, pointer in (({**record[1], "units": [b"x"]}, "/units/0"), ({**record[1], "units": {1, 2}}, "/units"),
                         (cyclic, None)):
        with pytest.raises(PlayError) as caught:
            replay(rs, [record[0], bad, record[2]])
        d = caught.value.diagnostics[0]
        assert (d.code, d.span.file) == ("S001", "<record 1>")
        assert pointer is None or d.pointer == pointer


def _named(tmp_path: Path) -> Any:
    """A ruleset whose state is a record of one text, `name`, that its one query reads without a pattern."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "s.schema.json").write_text(json.dumps({
        "$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object", "additionalProperties": False,
        "required": ["name"], "properties": {"name": {"type": "string"}}}))
    (tmp_path / "n.rules").write_text('ruleset n "n"\nschema "s.schema.json"\ninput name: str at "/name"\n'
                                      "query main = len(name)\n")
    rs = load_ruleset(tmp_path / "n.rules")
    assert rs.ok and rs.run({"name": "ab"}) == 2
    return rs


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_what_no_json_text_holds_is_S001_before_any_rule_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               engine: str) -> None:
    # the schema's fast check tested types alone, so a lone surrogate in a text, or an integer past 401
    # digits, reached the rules: a run that read it without a pattern or writing it as text answered
    # (`len` of the text, a score of 402 digits banked), one that failed was walked afterwards for S001.
    # Now the fast check asks it too (else the state is walked), once, before any rule runs.
    from validator import api

    named, pig = _named(tmp_path), load_ruleset(PIG)
    std = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    order = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
    order["orders"][0] = {**order["orders"][0], "order": "A VIE \ud800 GAL"}
    key = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
    key["supply_centers"] = {"vie": "austria", "\udc00": "england"}  # (a map's key)
    cases = [(named, {"name": "a\ud800"}, "/name"), (pig, {"score": 10 ** 401, "rolls": 2}, "/score"),
             (pig, {"score": -(10 ** 5000), "rolls": 2}, "/score"), (std, order, "/orders/0/order"),
             (std, key, "/supply_centers")]  # (a key's fault: at its object)
    assert pig.run({"score": 10 ** 401 - 1, "rolls": 2}, seed=1)["banked"] >= 10 ** 401 - 1  # (401 digits: read)

    def no_rule_runs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("a rule ran")
    monkeypatch.setattr(api.R, "run_query", no_rule_runs)
    for rs, state, pointer in cases:
        with pytest.raises(RunError) as caught:
            rs.run(state, engine=engine)
        assert [(d.code, d.pointer) for d in caught.value.diagnostics] == [("S001", pointer)], pointer
        assert [(d.code, d.pointer) for d in rs.state_errors(state)] == [("S001", pointer)]


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_what_an_unchecked_run_meets_that_python_refuses_is_E011(engine: str) -> None:
    # `validate=False` checks nothing: a lone surrogate reaching a pattern (RE2 reads UTF-8, which has
    # none), or an integer past Python's 4 300 digits written as text, is E011 at the query
    std = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
    state["orders"][0] = {**state["orders"][0], "order": "A VIE \ud800 GAL"}
    with pytest.raises(RunError) as caught:
        std.run(state, engine=engine, validate=False)
    assert caught.value.diagnostics[0].code == "E011"
    assert "lone surrogate cannot be matched" in caught.value.diagnostics[0].message
    pig = load_ruleset(PIG)
    with pytest.raises(RunError) as caught:
        pig.run({"score": 1, "rolls": 10 ** 5000}, engine=engine, validate=False)
    assert caught.value.diagnostics[0].code == "E011"


def test_a_lone_surrogate_a_schema_pattern_would_read_is_S001() -> None:
    jom = load_ruleset(ROOT / "rulesets" / "jomini" / "am.rules")
    state = json.loads(next((ROOT / "rulesets" / "jomini" / "examples").glob("*.json")).read_text())
    errors = jom.state_errors({**state, "units": [{**state["units"][0], "id": "\ud800"}, *state["units"][1:]]})
    assert [(d.code, d.pointer) for d in errors] == [("S001", "/units/0/id")]


@pytest.mark.parametrize("text", [None, b"query main = 1", 5])
def test_parse_of_what_is_no_text_is_a_type_error(text: Any) -> None:
    import validator

    with pytest.raises(TypeError, match="parse takes the ruleset's text"):  # (before: AttributeError for None)
        validator.parse(text)
    assert validator.parse("query main = 1") is not None


def test_a_states_integer_has_at_most_401_digits_read_from_text() -> None:
    # one rule, however the number is written: 401 digits (what `1e400` is) are read, 402 refused (before:
    # 61 digits written out were refused while `1e400` and `1` with 500 zeros and `.0` were read, and a
    # decimal of 5 000 digits was Python's ValueError)
    from validator.core.diagnostics import DiagnosticError
    from validator.engine.state import read_state_text

    for text, value in (("9" * 401, 10 ** 401 - 1), ("-" + "9" * 401, 1 - 10 ** 401), ("1e400", 10 ** 400),
                        ("9.5e400", 95 * 10 ** 399), ("1" + "0" * 400 + ".0", 10 ** 400), ("0.5e401", 5 * 10 ** 400),
                        ("1." + "0" * 600, 1)):
        assert read_state_text('{"a": ' + text + "}", "s.json") == {"a": value}, text
    for text, said in (("9" * 402, "integer with 402 digits, more than 401"),
                       ("-" + "9" * 402, "integer with 402 digits, more than 401"),
                       ("10e400", "number too large: more than 401 digits before its point"),
                       ("1" + "0" * 401 + ".5", "number too large: more than 401 digits before its point"),
                       ("1e-401", "number with more than 400 digits after its point"),
                       ("1." + "5" * 5000, "number with more than 400 digits after its point")):
        with pytest.raises(DiagnosticError) as caught:
            read_state_text('{"a": ' + text + "}", "s.json")
        d = caught.value.diagnostics[0]
        assert (d.code, d.pointer, d.message, d.span.col) == ("S001", "/a", said, 7), text


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_a_states_integer_has_at_most_401_digits_given_to_the_api(pig: Any, engine: str) -> None:
    # the same rule as a state read from text (the test above), for a state, a YAML case's state and args
    from validator.core.jsontext import value_problem

    assert pig.run({"score": 10 ** 401 - 1, "rolls": 1}, dice=[1], engine=engine)["banked"] == 10 ** 401 - 1
    assert pig.run({"score": 1e300, "rolls": 1}, dice=[1], engine=engine)["banked"] == 10 ** 300  # (301 digits)
    for score in (10 ** 401, -(10 ** 401)):  # (S001 before the schema is asked: its `minimum: 0` is not said)
        with pytest.raises(RunError) as caught:
            pig.run({"score": score, "rolls": 1}, dice=[1], engine=engine)
        d = caught.value.diagnostics[0]
        assert (d.code, d.pointer, d.message) == ("S001", "/score", "an integer with more than 401 digits")
    assert value_problem({"a": [10 ** 401 - 1]}) is None  # (a YAML case's state: before, 61 digits were refused)
    assert value_problem({"a": [10 ** 401]}) == ("/a/0", "an integer with more than 401 digits")


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_a_fraction_given_to_the_api_is_held_to_the_bounds_of_a_decimal(pig: Any, engine: str) -> None:
    """A ``Fraction`` is a decimal as a JSON text's is read (exactly), so it is held to the same rule: at most 400
    places after its point (its denominator divides 10^400: 1/3 is no decimal) and 401 digits before it."""
    from fractions import Fraction

    from validator.core.jsontext import value_problem

    for score, said in ((Fraction(1, 3), "a fraction no decimal of at most 400 places writes"),
                        (Fraction(1, 2 ** 401), "a fraction no decimal of at most 400 places writes"),
                        (Fraction(2 * 10 ** 401 + 1, 2), "a decimal with more than 401 digits before its point")):
        with pytest.raises(RunError) as caught:  # (S001 before the schema's S002, an integer expected)
            pig.run({"score": score, "rolls": 1}, dice=[1], engine=engine)
        d = caught.value.diagnostics[0]
        assert (d.code, d.pointer, d.message) == ("S001", "/score", said)
        with pytest.raises(ValueError, match=f"^args/1: {said}, which no JSON value is"):
            pig.run(START, args=[1, score], engine=engine)
    for within in (Fraction(1, 10), Fraction(1, 2 ** 400), Fraction(10 ** 401 - 1, 10 ** 400), Fraction(7)):
        assert value_problem({"a": [within]}) is None, within
    with pytest.raises(RunError) as caught:
        pig.run({"score": Fraction(1, 10), "rolls": 1}, dice=[1], engine=engine)
    assert [d.code for d in caught.value.diagnostics] == ["S002"]


@pytest.mark.parametrize("path", [b"docs/tutorial/pig.rules", None, 5])
def test_load_ruleset_of_what_is_no_path_is_a_type_error(path: Any) -> None:
    with pytest.raises(TypeError, match="load_ruleset takes a path as str or Path"):  # (before: pathlib's words)
        load_ruleset(path)


@pytest.mark.parametrize("records", [5, None, "ab", {"a": 1}])
def test_replay_of_what_is_no_record_is_a_type_error(records: Any) -> None:
    from validator.api import replay

    std = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    with pytest.raises(TypeError, match="replay takes a record as a list"):  # (before: "'int' object is not iterable")
        replay(std, records)


def test_replay_notes_that_are_no_list_are_a_type_error() -> None:
    from validator.api import play, replay

    rs = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = rs.run({}, "start_state", validate=False)
    steps = list(play(rs, start, [[], []]))
    record = [s.state for s in steps] + [steps[-1].next]
    with pytest.raises(TypeError, match="notes is a list"):  # (before: taken, and `.append` failing on the first note)
        replay(rs, record, notes="x")
    notes: list[Any] = []
    assert replay(rs, record, notes=notes) == (2, None)


@pytest.mark.parametrize("call", ["run", "evaluate", "state_errors", "state_schema_errors", "play"])
def test_a_state_name_that_is_no_text_is_a_type_error(pig: Any, call: str) -> None:
    # (before: taken, and a diagnostic then named a "file" 5: `Span(5)`, which its rendering could not write)
    from validator.api import play

    with pytest.raises(TypeError, match="is the state's name in messages"):
        if call == "play":
            list(play(pig, {"score": "x", "rolls": 2}, [[]], shown=5))
        elif call in ("run", "evaluate"):
            getattr(pig, call)({"score": "x", "rolls": 2}, state_name=5)
        else:
            getattr(pig, call)({"score": "x", "rolls": 2}, 5)


@pytest.mark.parametrize("budget", [None, "100", 1.5, True])
def test_a_state_errors_budget_that_is_no_integer_is_a_type_error(budget: Any) -> None:
    std = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
    with pytest.raises(TypeError, match="budget is a number of steps"):  # (before: `'>' not supported` for None)
        std.state_errors(state, budget=budget)
    assert std.state_errors(state) == []

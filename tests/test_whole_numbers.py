"""Where a whole number is meant, a fraction (or a text, a truth value) is refused, by the check where it
sees the type and by the run where only it sees the value, in both engines, never a silent answer
(docs/language.md, Built-ins): `pad`'s number and width, a list's index; and a run-time message writes a
text given for a number in its quotes, so `"3"` does not read as the number 3."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from test_number_type import _errors, _load, _underlined  # (one way to load a text and read its findings)
from validator.api import RunError

ENGINES = ("reference", "backend")
# `hide(x)` is `x` of a type the check does not know: what reaches the run alone
HIDE = "def hide(x) = x\n"



def _refused(tmp_path: Path, expr: str) -> list[Any]:
    """The run's diagnostic for ``expr`` (which checks clean), in each engine."""
    rs = _load(tmp_path, f"{HIDE}query main = {expr}\n")
    assert _errors(rs) == [], expr
    found = []
    for engine in ENGINES:
        with pytest.raises(RunError) as exc:
            rs.run({}, seed=1, engine=engine)
        found.append(exc.value.diagnostics[0])
    return found


# ---------------------------------------------------------------- pad


@pytest.mark.parametrize("expr, shown", [
    ("pad(7, hide(5/2))", "`5/2`"),  # (wrote "07": int() took the fraction)
    ("pad(7, hide(\"3\"))", '`"3"`'),  # (wrote "007")
    ("pad(hide(1/2), 5)", "`1/2`"),  # (wrote "001/2")
    ("pad(hide(\"ab\"), 3)", '`"ab"`'),  # (wrote "0ab")
    ("pad(hide(none), 3)", "`none`"),  # (wrote "None")
    ("pad(hide(true), 3)", "`true`"),
])
def test_pad_refuses_what_is_no_whole_number_at_run_time(tmp_path: Path, expr: str, shown: str) -> None:
    for d in _refused(tmp_path, expr):
        assert d.code == "E011", d
        assert d.span.line == 2 and "pad" in d.message and shown in d.message, d


@pytest.mark.parametrize("expr, underlined", [("pad(7, 5/2)", "5/2"), ("pad(1/2, 5)", "1/2"),
                                              ("pad(7, \"3\")", "\"3\""), ("pad(\"ab\", 3)", "\"ab\"")])
def test_pad_of_what_the_check_sees_is_no_whole_number_is_c004(tmp_path: Path, expr: str, underlined: str) -> None:
    text = f"query main = {expr}\n"
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", underlined)], found


def test_pad_of_whole_numbers_is_as_the_docs_say(tmp_path: Path) -> None:
    rs = _load(tmp_path, f"{HIDE}query main = [pad(-7, 3), pad(7, 3), pad(hide(4/2), hide(6/3)), pad(0, 0)]\n")
    assert _errors(rs) == []
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == ["-007", "007", "02", "0"]


# ---------------------------------------------------------------- a list's index


@pytest.mark.parametrize("expr, underlined, hidden", [
    ("[1, 2, 3][1/2]", "1/2", "[1, 2, 3][hide(1/2)]"), ("[1, 2, 3][i / 2]", "i / 2", "[1, 2, 3][hide(3 / 2)]"),
    ("[1, 2, 3][\"0\"]", "\"0\"", "[1, 2, 3][hide(\"0\")]"), ("[1, 2, 3][true]", "true", "[1, 2, 3][hide(true)]"),
    ("\"abc\"[1/2]", "1/2", "\"abc\"[hide(1/2)]"), ("[1, 2, 3][[0]]", "[0]", "[1, 2, 3][hide([0])]"),
])
def test_a_list_index_known_to_be_no_whole_number_is_c004(tmp_path: Path, expr: str, underlined: str,
                                                          hidden: str) -> None:
    """(Checked clean, where the run says E001 for each: ``hidden``, the same index the check cannot see.)"""
    text = f"def probe(i: int) = {expr}\nquery main = probe(3)\n"
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", underlined)], found
    assert "list index" in found[0].message, found[0]
    if "/" in underlined:
        assert "`//`" in (found[0].help or ""), found[0]
    for d in _refused(tmp_path, hidden):
        assert d.code == "E001", d


@pytest.mark.parametrize("expr, want", [
    ("[1, 2, 3][i // 2]", 2), ("\"abc\"[i - 2]", "b"),
    ("{1/2 => \"a\", \"0\" => \"b\", true => \"c\"}[1/2]", "a"),  # (a map's key may be any value)
    ("{1/2 => \"a\", \"0\" => \"b\", true => \"c\"}[\"0\"] + {true => \"c\"}[true]", "bc"),
    ("[1, 2, 3][roll(dice(1, 1 + 1)) - 1] in [1, 2]", True),  # (a die's face is a whole number)
    ("[1, 2, 3][if i > 9 then none else 0]", 1),  # (none is left to the run, as everywhere)
])
def test_a_whole_index_or_a_map_s_key_is_no_error(tmp_path: Path, expr: str, want: Any) -> None:
    rs = _load(tmp_path, f"{HIDE}def probe(i: int) = {expr}\nquery main = probe(3)\n")
    assert _errors(rs) == []
    for engine in ENGINES:
        assert rs.run({}, seed=1, engine=engine) == want


# ---------------------------------------------------------------- a text in a run-time message


@pytest.mark.parametrize("call, text, other", [
    ("rand(1, 2, hide({}))", '"3"', "0"),  # (said "not `3`" of the text "3")
    ("hex_label(hide({}), 1)", '"3"', "1/2"),
    ("pad(7, hide({}))", '"3"', "5/2"),
    ("count(hide([{}]))", '"true"', "1"),  # (said "not `true`" of the text "true")
    ("hex_axial(hide({}))", '"304"', "304"),
    ("roll(hide({}))", '"2d6"', "6"),
])
def test_a_text_refused_for_its_kind_is_shown_in_its_quotes(tmp_path: Path, call: str, text: str,
                                                            other: str) -> None:
    """A message that refuses a value for its kind writes a text as the language does, in quotes: the text
    `"3"` and the number `3` read apart."""
    for d in _refused(tmp_path, call.format(text)):
        assert d.code == "E011" and f"`{text}`" in d.message, d
    for d in _refused(tmp_path, call.format(other)):  # (a value of another kind, as the language writes it)
        assert d.code == "E011" and f"`{other}`" in d.message, d


# ---------------------------------------------------------------- get of a list


@pytest.mark.parametrize("key, shown", [("true", "`true`"), ("1/2", "`1/2`"), ('"0"', '`"0"`')])
def test_get_reads_a_list_at_a_whole_position_only(tmp_path: Path, key: str, shown: str) -> None:
    """`get([5, 6], true)` gave 6 (Python's True is 1), a wrong answer without a word, and a fraction or
    text position was said of the list ("get needs a map or list, not `[5, 6]`"): now E011 naming the
    position at run time, and C004 at check, as `xs[k]` is."""
    for d in _refused(tmp_path, f"get([5, 6], hide({key}), 0)"):
        assert d.code == "E011" and "position" in d.message and shown in d.message, d
    text = f"query main = get([5, 6], {key}, 0)\n"
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", key)], found


def test_get_of_a_map_takes_any_key_and_of_a_list_a_whole_one(tmp_path: Path) -> None:
    rs = _load(tmp_path, f"{HIDE}query main = [get({{true => 1, 1/2 => 2}}, true), get({{1/2 => 2}}, 1/2),"
                         " get([5, 6], 1), get([5, 6], hide(4/2), 0), get((5, 6), -1)]\n")
    assert _errors(rs) == []
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == [1, 2, 6, 0, 6]


def test_abs_of_what_the_check_does_not_know_fits_where_a_whole_number_is_meant(tmp_path: Path) -> None:
    """`abs(k)` of an `any` was typed `number`, so `slice(xs, 0, abs(k))` (and `xs[abs(k)]`, `pad(abs(k), 2)`)
    was C004 though `k` is whole (the differential fuzz's `slice(xs, 0, abs(n))`); `abs` is of its argument's
    type, and of a known fraction still a `number`."""
    rs = _load(tmp_path, 'input k: any at "/k" default 1\n'
                         "query main = [[1, 2, 3][abs(k)], slice([1, 2, 3], 0, abs(k)), pad(abs(k), 2)]\n")
    assert _errors(rs) == []
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == [2, [1], "01"]
    text = "query main = [1, 2][abs(1/2)]\n"
    assert [(d.code, _underlined(text, d)) for d in _errors(_load(tmp_path, text))] == [("C004", "abs(1/2)")]

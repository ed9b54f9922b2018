"""An argument a built-in takes as a whole number (``Builtin.takes`` "whole") takes none only where none is
what leaving it out means, its parameter's default (``builtins.takes_none``: `slice(xs, 1, none)` is
`slice(xs, 1)`, `range(3, none)` `range(3)`). `pad(none, 3)` and `rand(1, 2, none)` checked clean and were
refused only by the run: the check now refuses none where the run does, and only there, in both engines. The
check and the run say "whole number" alike."""

from __future__ import annotations

from pathlib import Path

import pytest

from test_number_type import _errors, _load, _refusals, _underlined  # (one way to load a text and read its findings)
from validator.api import RunError
from validator.lib.builtins import BUILTINS, takes_none

ENGINES = ("reference", "backend")
_OTHER = {"map": '{"a" => 1}', "items": "[1, 2]", "sized": "[1, 2, 3]"}


def _whole_arguments() -> list[tuple[str, int]]:
    return [(b.name, i) for b in BUILTINS.values() for i, kind in enumerate(b.takes) if kind == "whole"]


def _args(name: str, at: int, given: str) -> list[str]:
    b = BUILTINS[name]
    args = [given if i == at else _OTHER.get(b.takes[i] if i < len(b.takes) else "", "2")
            for i in range(max(b.min_args, at + 1))]
    if name == "hex_grid" and len(args) > 2 and at != 2:
        args[2] = '"odd-q"'  # (its layout)
    return args


@pytest.mark.parametrize(("name", "at"), _whole_arguments())
def test_none_for_a_whole_number_is_refused_by_the_check_where_the_run_refuses_it(tmp_path: Path, name: str,
                                                                                   at: int) -> None:
    args = _args(name, at, "none")
    text = f"query main = {name}({', '.join(args)})\n"
    found = [(d.code, _underlined(text, d)) for d in _errors(_load(tmp_path, text))]
    hidden = _load(tmp_path, f"def n(x) = x\nquery main = {name}({', '.join(f'n({a})' for a in args)})\n")
    assert _errors(hidden) == []
    refused = []
    for engine in ENGINES:
        try:
            hidden.run({}, seed=1, engine=engine)
            refused.append(False)
        except RunError as exc:
            assert exc.diagnostics[0].code == "E011", exc.diagnostics
            refused.append(True)
    assert refused[0] == refused[1], refused
    if takes_none(BUILTINS[name], at):
        assert found == [] and not refused[0], (text, found)
    else:
        assert found == [("C004", "none")] and refused[0], (text, found)


@pytest.mark.parametrize("call", ["pad(none, 3)", "pad(7, none)", "rand(1, 2, none)", "dice(none, 6)",
                                  "hex_label(none, 1)", "range(none)", "range(none, 3)", "slice([1, 2], none)",
                                  "slice(\"ab\", none, 1)"])
def test_the_issue_s_calls_are_c004_at_the_none(tmp_path: Path, call: str) -> None:
    text = f"query main = {call}\n"
    found = _errors(_load(tmp_path, text))
    assert [(d.code, _underlined(text, d)) for d in found] == [("C004", "none")], found
    assert "a whole number" in found[0].message and "`none`" in found[0].message, found[0].message


def test_none_where_it_is_the_default_is_no_error_and_means_leaving_it_out(tmp_path: Path) -> None:
    rs = _load(tmp_path, 'query main = [slice([1, 2, 3], 1, none), slice("abc", 1, none), range(3, none)]\n')
    assert _errors(rs) == []
    for engine in ENGINES:
        assert rs.run({}, engine=engine) == [[2, 3], "bc", [0, 1, 2]]


@pytest.mark.parametrize("expr, shown", [
    ("range(hide(1/2))", "`1/2`"), ("range(1, hide(\"3\"))", '`"3"`'), ("range(hide(true))", "`true`"),
    ("slice([1, 2], hide(none))", "`none`"), ("slice([1, 2], hide(1/2))", "`1/2`"),  # (slice's was E001)
    ("slice(\"ab\", 0, hide(\"1\"))", '`"1"`'),
    ("[1, 2][hide(1/2)]", "`1/2`"),
])
def test_the_run_says_whole_number_as_the_check_does(tmp_path: Path, expr: str, shown: str) -> None:
    rs = _load(tmp_path, f"def hide(x) = x\nquery main = {expr}\n")
    assert _errors(rs) == []
    said = [found[0] for found in _refusals(rs, {})]
    for d in said:
        assert d.code in ("E011", "E001") and "whole number" in d.message and shown in d.message, d
        assert "integer" not in d.message, d
    assert (said[0].code, said[0].message) == (said[1].code, said[1].message)

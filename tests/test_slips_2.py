"""Slips found on 2026-12-06, each with the test that failed before its fix."""

from __future__ import annotations

import ast
import io
import json
import socket
from pathlib import Path
from typing import Any

import pytest

from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
STANDARD = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- replay: a list that is no orders entry

@pytest.mark.parametrize("first", ["[1, 2]", "[]", '[{"a": 1}]', '["", " "]'])
def test_replay_calls_a_list_of_no_orders_no_orders_file(tmp_path: Path, first: str) -> None:
    """Any list as the first state of a record was named "an orders file", even `[1, 2]`: only a list
    of order texts is; any other is refused as any value that is no state, at its line and column."""
    folder = tmp_path / "rec"
    folder.mkdir()
    (folder / "000_S1901M.json").write_text(first + "\n", encoding="utf-8")
    (folder / "001_F1901M.json").write_text("{}\n", encoding="utf-8")
    code, out, err = _run("replay", STANDARD, str(folder))
    assert (code, out) == (3, ""), err
    assert f"{folder / '000_S1901M.json'}:1:1: error[S001]: a state must be a JSON object" in err, err
    assert "orders file" not in err, err


def test_replay_of_a_game_file_places_a_list_state_at_its_line(tmp_path: Path) -> None:
    record = tmp_path / "rec.json"
    record.write_text('[\n  [1, 2],\n  {}\n]\n', encoding="utf-8")
    code, _, err = _run("replay", STANDARD, str(record))
    assert code == 3, err
    assert f"{record}:2:3: error[S001]: a state must be a JSON object" in err, err


@pytest.mark.parametrize("first", ['["A PAR - BUR", "F BRE - MAO"]', '[{"power": "france", "order": "A PAR - BUR"}]'])
def test_replay_still_names_a_list_of_orders_an_orders_file(tmp_path: Path, first: str) -> None:
    record = tmp_path / "rec.json"
    record.write_text(f"[\n  {first},\n  []\n]\n", encoding="utf-8")
    code, _, err = _run("replay", STANDARD, str(record))
    assert code == 3, err
    assert "error[S001]: this is an orders file" in err, err


# ---------------------------------------------------------------- serve: Content-Length in ASCII digits only

def _post_raw(srv: Any, length: bytes, body: bytes) -> tuple[int, bytes]:
    with socket.create_connection(srv.server_address[:2], timeout=60) as conn:
        conn.sendall(b"POST /api/check HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                     b"Content-Length: " + length + b"\r\nConnection: close\r\n\r\n" + body)
        answer = b""
        while chunk := conn.recv(65536):
            answer += chunk
    head, _, rest = answer.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest


@pytest.mark.parametrize("length", ["1_0", "١٠", "+10", "0x0a", "-1", "-0", "1 0"])
def test_serve_refuses_a_content_length_of_other_than_ascii_digits(server: Any, length: str) -> None:
    """`int(Content-Length)` read `1_0` as 10 (and `١٠`, Arabic-Indic digits, would be read so too):
    a length HTTP does not write is refused, 400, and the body left unread."""
    status, rest = _post_raw(server, length.encode("utf-8"), b'{"base": "jomini/re.rules"}')
    assert status == 400, rest
    assert "Content-Length" in json.loads(rest)["error"], rest


def test_serve_still_reads_a_content_length_in_digits(server: Any) -> None:
    body = b'{"base": "jomini/re.rules"}'
    status, rest = _post_raw(server, str(len(body)).encode(), body)
    assert status == 200, rest


# ---------------------------------------------------------------- the engine's event names: one place

def test_the_engines_write_no_event_name_of_their_own() -> None:
    """`procedure_end` wrote the literal "rejected" while `program.ENGINE_EVENTS` (the names no `emit`
    may take) kept it too: a name changed in one place would let an `emit` make the engine's event.
    No event the engines record is named by a literal: each is one of `ENGINE_EVENTS`'s, read from there."""
    literal = []
    for path in sorted((ROOT / "validator" / "engine").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Dict):
                for k, v in zip(node.keys, node.values):
                    if isinstance(k, ast.Constant) and k.value == "event" and isinstance(v, ast.Constant):
                        literal.append(f"{path.name}:{node.lineno}: {v.value!r}")
    assert literal == []


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_the_rejection_event_recorded_is_the_one_no_emit_may_take(tmp_path: Path, engine: str) -> None:
    from validator.api import load_ruleset
    from validator.lang.program import ENGINE_EVENTS, REJECTED_EVENT

    assert REJECTED_EVENT in ENGINE_EVENTS
    (tmp_path / "main.rules").write_text('ruleset t "t"\nprocedure p cite "P-1" {\n  step s cite "S-1" {\n'
                                         '    reject "no"\n  }\n}\nquery main = p()\n', encoding="utf-8")
    rs = load_ruleset(tmp_path / "main.rules", use_cache=False)
    assert [e["event"] for e in rs.evaluate({}, engine=engine).events] == [REJECTED_EVENT]


# ---------------------------------------------------------------- built-ins refuse a value known to be no collection

def _check_codes(root: Path, text: str) -> list[tuple[str, str]]:
    """Each error of the check of `text`: its code and the text it underlines."""
    from validator.api import load_ruleset

    (root / "ruleval.toml").write_text("")
    (root / "main.rules").write_text(text, encoding="utf-8")
    rs = load_ruleset(root / "main.rules", use_cache=False)
    lines = text.splitlines()
    return [(d.code, lines[d.span.line - 1][d.span.col - 1:d.span.end_col - 1]) for d in rs.diagnostics
            if d.is_error and d.span.file.endswith("main.rules") and d.span.line == d.span.end_line]


@pytest.mark.parametrize("call", ["first(12345)", "last(12345)", "keys(12345)", "values(12345)", "reverse(12345)",
                                  'keys([12345])', "enumerate(true)", "fold(none, 0, fn(a, x) => a)"])
def test_a_built_in_given_no_collection_is_refused_by_the_check(tmp_path: Path, call: str) -> None:
    """Only `len count sum min max sorted sort_by` had their first argument checked: `first(3)`,
    `keys([1])` passed the check and failed at run time."""
    codes = _check_codes(tmp_path, f'ruleset t "t"\nquery main = {call}\n')
    arg = call[call.index("(") + 1:-1].split(",")[0]
    assert codes == [("C004", arg)], codes


def _argument_for(kind: str) -> str:
    return {"map": '{"a" => 1}', "items": "[1]", "sized": "[1]"}.get(kind, "1")


def _declared() -> list[tuple[str, int]]:
    from validator.lib.builtins import BUILTINS

    return [(b.name, i) for b in BUILTINS.values() for i, kind in enumerate(b.takes)
            if kind and kind != "whole"]  # (a whole number's: tests/test_number_type.py)


@pytest.mark.parametrize(("name", "at"), _declared())
def test_every_declared_collection_argument_is_checked(tmp_path: Path, name: str, at: int) -> None:
    """Generic: each argument a built-in's definition declares a collection (``Builtin.takes``) is
    refused, C004, where it is a number; and the run refuses it as the check does."""
    from validator.api import RunError
    from validator.lib.builtins import BUILTINS

    b = BUILTINS[name]
    args = [("12345" if i == at else _argument_for(b.takes[i] if i < len(b.takes) else ""))
            for i in range(max(b.min_args, at + 1))]
    call = f"{name}({', '.join(args)})"
    assert ("C004", "12345") in _check_codes(tmp_path, f'ruleset t "t"\nquery main = {call}\n'), call
    # the run refuses it too: the declaration says what the built-in itself needs
    (tmp_path / "run.rules").write_text(f'ruleset t "t"\ndef n(x) = x\nquery main = {name}('
                                        + ", ".join(f"n({a})" for a in args) + ")\n", encoding="utf-8")
    from validator.api import load_ruleset

    rs = load_ruleset(tmp_path / "run.rules", use_cache=False)
    assert rs.ok, [str(d) for d in rs.diagnostics]  # (`n(...)`: a value of a type the check does not know)
    with pytest.raises(RunError):
        rs.run({})


def test_a_collection_of_each_declared_kind_is_not_refused(tmp_path: Path) -> None:
    text = ('ruleset t "t"\nquery main = [first([1]), last({1}), keys({"a" => 1}), keys({a: 1}), values({a: 1}), '
            'reverse([1]), len("ab"), slice("abc", 1), merge({a: 1}, {b: 2}), choice(1, "k", [1])]\n')
    # (a text is no collection but to `len` and `slice`: test_one_meaning_3)
    assert _check_codes(tmp_path, text) == []

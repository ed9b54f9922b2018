"""Diagnostics: the documentation agrees with the registry, every documented example produces its
code, and the golden corpus in tests/fixtures renders exactly as recorded (UPDATE_GOLDEN=1 rewrites)."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
from pathlib import Path

import pytest

from validator.tools.cli import main
from validator.core.diagnostics import CODES
from validator.core.exits import EXIT_BY_CLASS, exit_for_code

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "diagnostics.md"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
# Codes whose documented example cannot be a short text; each has its own test below (or is reserved).
NOT_RUN_IN_DOC = {"P004", "P005", "S003", "E010", "E012", "I001", "I002"}
SUBFOLDER_FIXTURES = ["override_without_base", "redefinition", "unknown_clause", "import_outside", "import_cycle",
                      "data_import", "schema"]


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


def doc_sections() -> dict[str, str]:
    text = DOC.read_text(encoding="utf-8")
    parts = re.split(r"^## ([A-Z]\d{3}) — .*$", text, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts), 2)}


def doc_example(section: str) -> tuple[dict[str, str], list[str]] | None:
    files = {m.group(2): m.group(3) + "\n" for m in re.finditer(r"^```(\w+) (\S+)\n(.*?)\n```$", section, re.M | re.S)}
    if not files:
        return None
    cmd = re.search(r"^Command: `ruleval (.*)`$", section, re.M)
    argv = shlex.split(cmd.group(1)) if cmd else ["check", "main.rules"]
    return files, argv


def codes_reported(out: str, err: str) -> set[str]:
    found = set(re.findall(r"(?:error|warning)\[([A-Z]\d{3})\]", err))
    return found | set(re.findall(r'"code": "([A-Z]\d{3})"', out))


# ------------------------------------------------------------------ the doc and the registry

def test_doc_lists_exactly_the_registered_codes() -> None:
    assert list(doc_sections()) == list(CODES), "docs/diagnostics.md must document every code of CODES, in order"


def test_doc_sections_are_complete() -> None:
    for code, section in doc_sections().items():
        for part in ("**What it means.**", "**Why.**", "**Example.**", "**How to fix.**"):
            assert part in section, f"{code}: missing {part}"
        assert f"Severity: {CODES[code][0]}." in section, code


def test_doc_has_exit_code_table() -> None:
    text = DOC.read_text(encoding="utf-8")
    for code in range(5):
        assert re.search(rf"^\| {code} \| ", text, re.M), f"exit code {code} missing"


def test_untriggerable_codes_are_the_known_few() -> None:
    unrun = {c for c, s in doc_sections().items() if doc_example(s) is None}
    assert unrun == NOT_RUN_IN_DOC


@pytest.mark.parametrize("code", [c for c in CODES if c not in NOT_RUN_IN_DOC])
def test_doc_example_produces_its_code(code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    example = doc_example(doc_sections()[code])
    assert example is not None
    files, argv = example
    work = tmp_path / "a" / "b" / "root"
    work.mkdir(parents=True)
    (work / "ruleval.toml").write_text("")
    for name, text in files.items():
        (work / name).write_text(text, encoding="utf-8")
    monkeypatch.chdir(work)
    rc, out, err = run_cli(argv)
    assert code in codes_reported(out, err) or f"error[{code}]" in err, (argv, out, err)
    if CODES[code][0] == "error":  # the exit code of the README's table for the code's class
        assert rc == exit_for_code(code), (code, argv, rc, err)
    else:
        assert rc == 0, (code, argv, rc, err)


def _table_classes(text: str) -> dict[int, set[str]]:
    """The exit-code table of a document: exit code -> the diagnostic classes its row names
    (a class is a capital letter in backticks, alone or as the start of a code: `S`, `S001`)."""
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| (\d+) \| (.*) \|$", section, re.M)
    return {int(n): set(re.findall(r"`([A-Z])(?:\d{3}|\.\.\.)?`", meaning)) for n, meaning in rows}


@pytest.mark.parametrize("doc", ["README.md", "docs/diagnostics.md"])
def test_exit_code_tables_name_every_class_as_the_code_does(doc: str) -> None:
    table = _table_classes((ROOT / doc).read_text(encoding="utf-8"))
    named = {cls: code for code, classes in table.items() for cls in classes}
    assert named == {cls: code for cls, code in EXIT_BY_CLASS.items()}, (doc, table)
    assert {c[0] for c in CODES} == set(EXIT_BY_CLASS)  # every class of the registry has its row


def test_p004_non_utf8(tmp_path: Path) -> None:
    f = tmp_path / "bad.rules"
    f.write_bytes(b"query main = \"caf\xe9\"\n")
    (tmp_path / "ruleval.toml").write_text("")
    rc, _, err = run_cli(["check", str(f)])
    assert rc == 1 and "error[P004]" in err and ":1:18:" in err


def test_p005_file_too_large(tmp_path: Path) -> None:
    f = tmp_path / "big.rules"
    f.write_text("# " + "x" * 2_000_100 + "\nquery main = 1\n")
    (tmp_path / "ruleval.toml").write_text("")
    rc, _, err = run_cli(["check", str(f)])
    assert rc == 1 and "error[P005]" in err


def test_s003_state_too_large(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text("query main = 1\n")
    (tmp_path / "state.json").write_text('{"pad": "' + "x" * 5_100_000 + '"}')
    rc, _, err = run_cli(["run", str(tmp_path / "main.rules"), "--state", str(tmp_path / "state.json")])
    assert rc == 3 and "error[S003]" in err


def test_e010_too_many_outcomes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import validator.engine.reference

    monkeypatch.setattr(validator.engine.reference, "MAX_EXACT_PATHS", 50)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text("query main = count(true for i in range(10) if roll(1d6) > 3)\n")
    (tmp_path / "s.json").write_text("{}")
    rc, out, _ = run_cli(["run", "--format", "json", str(tmp_path / "main.rules"), "--state", str(tmp_path / "s.json"),
                          "--exact"])
    assert rc == 1 and json.loads(out)[0]["code"] == "E010"


# ------------------------------------------------------------------ golden corpus

def golden_cases() -> list[Path]:
    top = sorted(FIXTURES.glob("*.rules"))
    return top + [FIXTURES / d / "main.rules" for d in SUBFOLDER_FIXTURES]


def check_fixture(path: Path, fmt: str = "text") -> tuple[int, str, str]:
    rel = path.relative_to(FIXTURES).as_posix()
    cwd = os.getcwd()
    os.chdir(FIXTURES)  # paths in the rendering are relative to the fixtures folder
    try:
        return run_cli(["check", rel] + (["--format", fmt] if fmt != "text" else []))
    finally:
        os.chdir(cwd)


@pytest.mark.parametrize("path", golden_cases(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_golden(path: Path) -> None:
    rc, _, err = check_fixture(path)
    rendered = f"exit: {rc}\n{err}"
    expected = path.with_suffix(".expected")
    if os.environ.get("UPDATE_GOLDEN") == "1" or not expected.exists():
        expected.write_text(rendered, encoding="utf-8")
    assert rendered == expected.read_text(encoding="utf-8")


def findings(rel: str) -> list[tuple[str, str]]:
    """(code, underlined source text) for each diagnostic of a fixture."""
    path = FIXTURES / rel
    rc, out, _ = check_fixture(path, "json")
    result = []
    for d in json.loads(out):
        src = (FIXTURES / d["file"]).read_text(encoding="utf-8").splitlines() if d["line"] else []
        under = ""
        if d["line"] and d["end_line"] == d["line"]:
            under = src[d["line"] - 1][d["col"] - 1:d["end_col"] - 1]
        elif d["line"]:
            under = src[d["line"] - 1][d["col"] - 1:]
        result.append((d["code"], under))
    return result


UNDERLINED = {
    "syntax_token.rules": [("P001", "=")],
    "syntax_char.rules": [("P002", "'")],
    "syntax_eof.rules": [("P003", "")],
    "unknown_name.rules": [("W101", "def double(x) = x * 2"), ("W101", "def moves = [1, 2, 3]"),
                           ("C001", "doubel"), ("C001", "movse")],
    "wrong_arity.rules": [("C003", "double(1, 2)"), ("C003", "len()"), ("C003", "double()")],
    "duplicate.rules": [("C002", "def limit = 4"), ("C002", "x")],
    "bad_table.rules": [("C009", "foot"), ("C009", "horse"), ("C009", "foot")],
    "unknown_step.rules": [("C017", "goto finsh"), ("W102", 'step finish cite "R1" { stop }')],
    "unreachable_step.rules": [("W102", 'step two cite "R1" { emit "two" {} }')],
    "unused_definition.rules": [("W101", "def spare = 1")],
    "missing_import.rules": [("C005", 'import "nowhere.rules" as nowhere'), ("C005", 'import "nodata.yaml" as nodata')],
    "bad_pattern.rules": [("C014", '"("')],
    "enum_literal.rules": [("C016", '"hrose"')],
    "several_errors.rules": [("W101", "def limit = 3"), ("C002", "def limit = 4"), ("W101", 'table cost[kind] cite "R1" {'),
                             ("C009", "foot"), ("C017", "goto tow"), ("C001", "doubel"), ("C003", "double(1, 2)"),
                             ("C014", '"("')],
    "override_without_base/main.rules": [("C013", "override def limimt = 4"), ("W101", "override def limimt = 4")],
    "redefinition/main.rules": [("C021", "def limit = 4")],
    "unknown_clause/main.rules": [("C010", 'rule may_move(u) cite "MOVE-3" = true'),
                                  ("C010", 'rule moved_once(u) cite "MOVE-1", "COMBAT-9" = true')],
    "import_outside/main.rules": [("C007", 'import "../../../etc/passwd.yaml" as secrets'),
                                  ("C007", 'import "../../conftest.rules" as up')],
    "import_cycle/main.rules": [("C006", 'import "main.rules" as m')],
    "data_import/main.rules": [("C012", "terrain.cost")],
    "schema/main.rules": [],
}


@pytest.mark.parametrize("rel", sorted(UNDERLINED))
def test_codes_and_underlined_text(rel: str) -> None:
    assert findings(rel) == UNDERLINED[rel]


def test_no_node_under_an_expression_carries_citations() -> None:
    """The citation check (C010) does not enter expressions (``checker.UNCITED``): no node type an
    expression may hold, at any depth, has a `cites` field (a statement or declaration under one would)."""
    import typing
    from validator.lang import ast as A
    from validator.lang.checker import UNCITED

    seen: set[type] = set()
    todo: list[object] = list(typing.get_args(A.Expr))
    while todo:
        t = todo.pop()
        for arg in typing.get_args(t):
            todo.append(arg)
        if isinstance(t, type) and issubclass(t, A.Node) and t not in seen:
            seen.add(t)
            assert "cites" not in t._fields, t
            todo.extend(typing.get_type_hints(t, vars(A)).values())
    assert UNCITED <= seen and {A.Comp, A.Lambda, A.CompFor, A.Param} <= seen  # (the walk reached inside)


def test_the_citations_walk_finds_what_a_walk_of_every_node_finds() -> None:
    """Over every .rules of the repository, ``checker._cites_in`` (which skips expressions) gives each
    declaration's citations as a walk of all its nodes does, in the same order."""
    from validator.lang import ast as A
    from validator.lang.checker import _cites_in
    from validator.core.diagnostics import DiagnosticError
    from validator.lang.syntax import parse_module

    carried = 0
    for path in sorted([*ROOT.joinpath("rulesets").rglob("*.rules"), *ROOT.joinpath("tests").rglob("*.rules")]):
        try:
            module = parse_module(path.read_text(encoding="utf-8"), str(path))
        except DiagnosticError:  # (a fixture that does not parse carries nothing to compare)
            continue
        for decl in module.decls:
            every = [(c, n.span) for n in A.nodes(decl) for c in getattr(n, "cites", ())]
            assert list(_cites_in(decl)) == every, (path, decl.span)
            carried += sum(1 for n in A.nodes(decl) if getattr(n, "cites", ()) and not isinstance(n, A.Decl))
    assert carried > 0  # (citations on statements and policies too, not only on declarations)


def test_every_golden_fixture_has_underline_expectations() -> None:
    assert {p.relative_to(FIXTURES).as_posix() for p in golden_cases()} == set(UNDERLINED)


def test_several_errors_all_reported_and_sorted() -> None:
    rc, out, _ = check_fixture(FIXTURES / "several_errors.rules", "json")
    diags = json.loads(out)
    assert rc == 1
    assert sum(d["severity"] == "error" for d in diags) == 6
    positions = [(d["line"], d["col"]) for d in diags]
    assert positions == sorted(positions)


def test_did_you_mean_hints() -> None:
    _, out, _ = check_fixture(FIXTURES / "unknown_name.rules", "json")
    helps = {d["message"]: d.get("help") for d in json.loads(out) if d["code"] == "C001"}
    assert helps == {"unknown name `doubel`": "did you mean `double`?", "unknown name `movse`": "did you mean `moves`?"}
    _, out, _ = check_fixture(FIXTURES / "unknown_clause" / "main.rules", "json")
    assert json.loads(out)[0]["help"] == "did you mean `MOVE-2`?"


def test_message_style() -> None:
    """cedar style: lowercase start, no final period."""
    for rel in UNDERLINED:
        _, out, _ = check_fixture(FIXTURES / rel, "json")
        for d in json.loads(out):
            assert not d["message"].endswith("."), d["message"]
            assert not d["message"][:1].isupper(), d["message"]


def test_a_line_break_in_the_input_cannot_start_a_diagnostic_line_of_its_own(cli, tmp_path: Path) -> None:
    """An order text (or a key) holding a line break is shown with the break escaped: every line the
    report prints begins as ruleval wrote it, never with text of the input (a forged `error[...]`)."""
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"}, "units": [],
             "supply_centers": {"par\nerror[S001]: forged": "france"},
             "orders": [{"power": "france", "order": "A PAR\nerror[S001]: forged"}]}
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state), encoding="utf-8")
    r = cli("run", "rulesets/diplomacy/standard.rules", "--state", str(path))
    assert r.code == 3
    assert "`A PAR\\nerror[S001]: forged`" in r.err
    assert not any(line.startswith("error[S001]: forged") for line in r.err.splitlines()), r.err
    # (two diagnostics, each at its place in the state file; the input's text is quoted in their lines)
    assert sum(line.startswith(f"{path}:1:") for line in r.err.splitlines()) == 2, r.err


def test_diagnostics_at_list_items_come_in_the_items_order() -> None:
    """Pointers into a list are ordered by the items' numbers (/x/2 before /x/10), not as texts, both among a
    state's schema errors and when diagnostics of one place are sorted; an index comes before a key."""
    from validator.core.diagnostics import Diagnostic, sort_diagnostics
    from validator.engine.state import schema_errors

    schema = {"type": "object", "properties": {"x": {"type": "array", "items": {"type": "string"}}}}
    state = {"x": [str(i) if i not in (2, 10, 11) else i for i in range(12)]}
    got = [d.pointer for d in schema_errors(state, schema, "<state>")]
    assert got == ["/x/2", "/x/10", "/x/11"]
    shuffled = [Diagnostic("S002", "m", pointer=p) for p in ["/x/10", "/x/a", "/x/9", "/x/10/b", "/x/2", ""]]
    assert [d.pointer for d in sort_diagnostics(shuffled)] == ["", "/x/2", "/x/9", "/x/10", "/x/10/b", "/x/a"]


@pytest.mark.parametrize("text, line, word", [
    ('def f(x) = x +\nrule g(x) cite "R" = x\nquery main = 1\n', 2, "rule"),
    ("def a = 1 *\ndef b = 2\nquery main = a\n", 2, "def"),
    ("def a = [1, 2] +\n  query main = a\n", 2, "query"),
])
def test_an_expression_left_unfinished_is_said_at_the_line_it_swallowed(tmp_path: Path, text: str, line: int,
                                                                      word: str) -> None:
    """`x +` at the end of a line reads the next declaration's keyword as a name (`x + rule`), and the
    error fell on the name after it with a list of what may start a declaration, as if that line were
    wrong: the help now says the line above is unfinished."""
    from validator.api import load_ruleset

    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(text, encoding="utf-8")
    [d] = load_ruleset(tmp_path / "main.rules", use_cache=False).diagnostics
    assert d.code == "P001" and d.span.line == line, d
    assert (f"`{word}` at the start of line {line} was read as a name continuing the expression of the line "
            f"before: is that expression unfinished?") in (d.help or ""), d.help

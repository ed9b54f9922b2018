"""The command line through ``main(argv, stdout, stderr)``: exit codes, JSON output, usage errors,
invalid states with JSON pointers, located evaluation errors, batch mode and dice modes."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

import pytest

from validator.api import RunError, load_ruleset

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SCHEMA = FIXTURES / "schema"
ROOT = FIXTURES.parent.parent


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "empty.json").write_text("{}")
    return tmp_path


def write(root: Path, text: str, name: str = "main.rules") -> str:
    (root / name).write_text(text, encoding="utf-8")
    return str(root / name)


def test_clean_ruleset_exits_0(cli) -> None:
    r = cli("check", str(SCHEMA / "main.rules"))
    assert r.code == 0 and "0 errors" in r.err


def test_broken_ruleset_exits_1(cli) -> None:
    r = cli("check", str(FIXTURES / "unknown_name.rules"))
    assert r.code == 1 and "error[C001]" in r.err


def test_warnings_only_exit_0_unless_denied(cli) -> None:
    assert cli("check", str(FIXTURES / "unused_definition.rules")).code == 0
    assert cli("check", "--deny-warnings", str(FIXTURES / "unused_definition.rules")).code == 1


def test_json_format_carries_code_line_col(cli) -> None:
    r = cli("check", "--format", "json", str(FIXTURES / "wrong_arity.rules"))
    diags = json.loads(r.out)
    assert r.code == 1
    assert [(d["code"], d["line"], d["col"]) for d in diags] == [("C003", 2, 18), ("C003", 2, 35), ("C003", 2, 45)]
    assert all(d["severity"] == "error" and d["end_col"] > d["col"] for d in diags)


def test_check_folder(cli) -> None:
    r = cli("check", "--format", "json", str(FIXTURES / "redefinition"))
    assert r.code == 1 and {d["code"] for d in json.loads(r.out)} == {"C021"}


def test_check_of_a_folder_without_rulesets_fails(cli, tmp_path: Path) -> None:
    """A CI gate pointed at a folder with no ruleset (a wrong path) said `checked 0 rulesets` and passed."""
    (tmp_path / "notes.txt").write_text("x")
    r = cli("check", str(tmp_path))
    assert r.code == 2 and "error[U001]: no ruleset (`.rules` file) found in" in r.err


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_check_in_several_processes_says_the_same(cli, fmt: str) -> None:
    # the fixtures: many folders, many rulesets, most with errors; plus the bundled rulesets
    paths = [str(FIXTURES), str(FIXTURES.parent.parent / "rulesets")]
    one = cli("check", "--no-cache", "--format", fmt, "--jobs", "1", *paths)
    assert one.code == 1 and one.out + one.err
    for jobs in ("2", "3"):
        many = cli("check", "--no-cache", "--format", fmt, "--jobs", jobs, *paths)
        assert (many.code, many.out, many.err) == (one.code, one.out, one.err)


_REAL: dict = {}  # the functions a test replaces, as they were (forked workers inherit it)


def _check_dying_once(rulesets, item):
    """`check`'s piece, in a worker process that dies the first time it is given one (a marker file says so)."""
    import os

    marker = os.environ["RULEVAL_TEST_DIE_ONCE"]
    if os.getpid() != int(os.environ["RULEVAL_TEST_PARENT"]) and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return _REAL["check_file"](rulesets, item)


def test_a_worker_that_dies_only_means_checking_its_pieces_again(cli, monkeypatch: pytest.MonkeyPatch,
                                                                tmp_path: Path) -> None:
    import os

    from validator.tools import checksweep

    paths = [str(FIXTURES), str(FIXTURES.parent.parent / "rulesets")]
    one = cli("check", "--no-cache", "--format", "json", "--jobs", "1", *paths)
    monkeypatch.setenv("RULEVAL_TEST_DIE_ONCE", str(tmp_path / "died"))
    monkeypatch.setenv("RULEVAL_TEST_PARENT", str(os.getpid()))
    _REAL["check_file"] = checksweep.check_file
    monkeypatch.setattr(checksweep, "check_file", _check_dying_once)
    many = cli("check", "--no-cache", "--format", "json", "--jobs", "3", *paths)
    assert (tmp_path / "died").exists()
    assert (many.code, many.out) == (one.code, one.out), many.err


def test_no_processes_to_spare_means_checking_here(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    def no_fork() -> int:
        raise OSError(11, "Resource temporarily unavailable")

    paths = [str(FIXTURES), str(FIXTURES.parent.parent / "rulesets")]
    one = cli("check", "--no-cache", "--format", "json", "--jobs", "1", *paths)
    monkeypatch.setattr(os, "fork", no_fork)
    many = cli("check", "--no-cache", "--format", "json", "--jobs", "3", *paths)
    assert (many.code, many.out) == (one.code, one.out)


@pytest.mark.parametrize("argv", [
    [],
    ["frobnicate"],
    ["check"],
    ["check", "--format", "xml", "x.rules"],
    ["check", "--jobs", "0", "x.rules"],
    ["check", "-j", "many", "x.rules"],
    ["check", "/no/such/file.rules"],
    ["run", str(SCHEMA / "main.rules"), "--state", str(SCHEMA / "good.json"), "--batch", str(SCHEMA / "good.json")],
    ["run", "--format", "json", str(SCHEMA / "main.rules"), "--state", "/no/such/state.json"],
    ["run", "--format", "json", "/no/such/ruleset.rules", "--state", str(SCHEMA / "good.json")],
    ["run", "--format", "json", str(SCHEMA / "main.rules"), "--state", str(SCHEMA / "good.json"), "--dice", "a,b"],
    ["run", "--format", "json", str(SCHEMA / "main.rules"), "--state", str(SCHEMA / "good.json"), "--seed", "1", "--exact"],
])
def test_usage_errors_exit_2(cli, argv: list[str]) -> None:
    r = cli(*argv)
    assert r.code == 2, (r.out, r.err)
    assert "usage" in r.err or "error[U001]" in r.err


def test_run_without_a_state(cli, tmp_path: Path) -> None:
    """A ruleset that reads no input runs without --state; one that reads a state says it needs one."""
    rules = tmp_path / "main.rules"
    rules.write_text("query main = 6 * 7\n", encoding="utf-8")
    r = cli("run", "--format", "json", str(rules))
    assert r.code == 0 and r.out == "42\n", r.err
    r = cli("run", str(SCHEMA / "main.rules"))
    assert r.code == 3 and "error[S002]" in r.err and "give --state FILE" in r.err


def test_run_a_generator_without_a_state(cli) -> None:
    r = cli("run", "--format", "json", str(ROOT / "rulesets" / "jomini" / "re.rules"), "--query", "generate",
            "--arg", "3")
    assert r.code == 0, r.err
    assert isinstance(json.loads(r.out)["units"], list)


def test_version(cli) -> None:
    r = cli("--version")
    assert r.code == 0 and r.out.startswith("ruleval ")


def test_valid_state_runs(cli) -> None:
    r = cli("run", "--format", "json", str(SCHEMA / "main.rules"), "--state", str(SCHEMA / "good.json"))
    assert r.code == 0
    assert json.loads(r.out) == {"turn": 1, "count": 2, "places": ["0304", "0305"]}


def test_invalid_state_exit_3_with_pointer_and_schema_rule(cli) -> None:
    r = cli("run", str(SCHEMA / "main.rules"), "--state", str(SCHEMA / "bad.json"), "--format", "json")
    assert r.code == 3
    diags = json.loads(r.out)
    assert [d["pointer"] for d in diags] == ["/units/3/location"]
    assert diags[0]["code"] == "S002"
    assert "/properties/units/items/properties/location/type" in diags[0]["schema_rule"]


def test_a_state_file_refused_is_said_at_its_line_and_column_with_its_pointer(cli, tmp_path: Path) -> None:
    """`--state FILE.json` refused by the schema was said as `bad.json#/units/3/location`, which an editor
    or a CI annotation cannot open at: run, explain, render and play (its start file) say
    `FILE:line:col`, with the line and the pointer under it, and `--format json` carries them."""
    bad = SCHEMA / "bad.json"
    text = bad.read_text(encoding="utf-8")
    col = text.index('"location": 7') + len('"location": ') + 1
    for argv in (["run"], ["explain"], ["render", "-o", str(tmp_path / "x.svg")]):
        r = cli(*argv, str(SCHEMA / "main.rules"), "--state", str(bad))
        assert r.code == 3, (argv, r.err)
        assert f"{bad}:1:{col}: error[S002]: " in r.err and "= pointer: /units/3/location" in r.err, (argv, r.err)
        assert "schema rule:" in r.err and text.split('"location": 7')[0][-20:] in r.err, (argv, r.err)  # (its line)
    diags = json.loads(cli("run", str(SCHEMA / "main.rules"), "--state", str(bad), "--format", "json").out)
    assert [(d["line"], d["col"], d["pointer"]) for d in diags] == [(1, col, "/units/3/location")]
    start = tmp_path / "start.json"
    start.write_text('{"phase": {"season": "spring", "year": 1901, "type": "movement"},\n'
                     ' "units": [{"power": "france", "type": "tank", "location": "par"}],\n "orders": []}\n')
    r = cli("play", str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), str(start), "--until", "F1901M")
    assert r.code == 3 and f"{start}:2:40: error[S002]: expected " in r.err, r.err
    assert "= pointer: /units/0/type" in r.err, r.err


def test_several_state_errors_all_reported(cli, root: Path) -> None:
    state = {"turn": 0, "units": [{"owner": 1, "location": "x"}], "extra": True}
    (root / "s.json").write_text(json.dumps(state))
    r = cli("run", "--format", "json", str(SCHEMA / "main.rules"), "--state", str(root / "s.json"))
    said = [(d["pointer"], d["line"], d["col"]) for d in json.loads(r.out)]
    assert r.code == 3
    # (each at its place, in the order of the places: the unexpected key at itself, last in the text)
    assert said == [("/turn", 1, 10), ("/units/0/owner", 1, 33), ("/units/0/location", 1, 48), ("/extra", 1, 55)], said


def test_an_object_of_many_unexpected_keys_is_one_error_and_the_others_still_show(cli, root: Path) -> None:
    """60 unexpected keys in one unit are one S002 naming them (at the first key's line and column, a
    did-you-mean for the key that is a misspelling), not 50 that spend the limit: the errors after it
    (a wrong `location` in the next unit) still show, each at its place, and nothing is cut."""
    extra = {f"k{i:02d}": i for i in range(60)}
    units = [{"owner": "red", "location": "0304", **extra, "ownr": 1}, {"owner": "blue", "location": 7}]
    text = json.dumps({"turn": 1, "units": units})
    (root / "s.json").write_text(text)
    r = cli("run", "--format", "json", str(SCHEMA / "main.rules"), "--state", str(root / "s.json"))
    assert r.code == 3
    said = json.loads(r.out)
    assert [d["pointer"] for d in said] == ["/units/0/k00", "/units/1/location"], said
    first = said[0]
    assert first["col"] == text.index('"k00"') + 1 and first["line"] == 1
    assert first["message"].startswith('unexpected keys "k00", "k01", ') and " more (expected " in first["message"]
    assert first["help"] == "`ownr`: did you mean `owner`?", first
    assert not any("more schema errors" in d["message"] for d in said)
    text_out = cli("run", str(SCHEMA / "main.rules"), "--state", str(root / "s.json"))
    assert text_out.code == 3 and text_out.err.count("error[S002]") == 2, text_out.err


def test_state_not_json_exit_3(cli, root: Path) -> None:
    (root / "s.json").write_text("{\"turn\": ")
    r = cli("run", str(SCHEMA / "main.rules"), "--state", str(root / "s.json"))
    assert r.code == 3 and "error[S001]" in r.err


def test_missing_input_without_default_exit_3(cli, root: Path) -> None:
    rules = write(root, 'input units: list[any] at "/units"\nquery main = len(units)\n')
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"))
    assert r.code == 3 and json.loads(r.out)[0]["pointer"] == "/units"


@pytest.mark.parametrize("body, code, underlined", [
    ("def zero = 0\nquery main = 7 // zero\n", "E003", "7 // zero"),
    ("def down(n) = down(n + 1)\nquery main = down(0)\n", "E005", None),
    ("query main = count(true for x in range(100000) for y in range(100000))\n", "E004", None),
    ("def spin(n) = if n == 0 then 0 else spin(n - 1)\nquery main = spin(100000)\n", "E005", None),
])
def test_evaluation_errors_are_located(cli, root: Path, body: str, code: str, underlined: str | None) -> None:
    rules = write(root, body)
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"))
    assert r.code == 1
    d = json.loads(r.out)[0]
    assert d["code"] == code and d["file"].endswith("main.rules") and d["line"] >= 1 and d["col"] >= 1
    if underlined:
        line = body.splitlines()[d["line"] - 1]
        assert line[d["col"] - 1:d["end_col"] - 1] == underlined


@pytest.mark.parametrize("engine", ["backend", "reference"])
def test_a_fold_past_the_budget_stops_located(root: Path, engine: str) -> None:
    """A fold calling a function written in place for each item stops at the step budget with a located E004,
    and finishes under a budget that allows it (the command line's default budget is reached by the E004 case
    above; a small one here spares running millions of steps on the reference)."""
    rs = load_ruleset(write(root, "query main = fold(range(30000), 0, fn(a, x) => a + x)\n"), use_cache=False)
    assert rs.run({}, engine=engine, budget=1_000_000) == sum(range(30000))
    with pytest.raises(RunError) as err:
        rs.run({}, engine=engine, budget=20_000)
    [d] = err.value.diagnostics
    assert d.code == "E004" and d.span.file.endswith("main.rules") and d.span.line == 1 and d.span.col >= 1


def test_unknown_query_is_e008(cli, root: Path) -> None:
    rules = write(root, "query main = 1\n")
    r = cli("run", rules, "--state", str(root / "empty.json"), "--query", "mian", "--format", "json")
    assert r.code == 1 and json.loads(r.out)[0]["code"] == "E008"  # an `E` diagnostic: exit 1, as the table says
    r = cli("explain", rules, "--state", str(root / "empty.json"), "--query", "mian")
    assert r.code == 1 and "error[E008]" in r.err


def test_unknown_query_is_said_at_the_query_meant_else_at_the_ruleset_line(cli, root: Path) -> None:
    """E008 "no query" was said at the file, no line: now at the query of the closest name (the one likely
    meant, `did you mean`), else at the `ruleset` line, where the ruleset that lacks it declares itself
    (else the file's first line); `play` and `render` say theirs there too."""
    rules = write(root, '# the rules\nruleset t "T"\n\nquery main = 1\nquery other = 2\n')
    r = cli("run", rules, "--state", str(root / "empty.json"), "--query", "mian", "--format", "json")
    (d,) = json.loads(r.out)
    assert r.code == 1 and d["code"] == "E008" and (d["line"], d["col"]) == (4, 1), d
    assert d["help"] == "did you mean `main`? queries: main, other", d
    r = cli("run", rules, "--state", str(root / "empty.json"), "--query", "zzz")
    assert r.code == 1 and f"{rules}:2:1: error[E008]: ruleset has no query `zzz`" in r.err, r.err
    assert "help: queries: main, other" in r.err
    for argv in (["play", rules, str(root / "empty.json"), "--until", "X"],
                 ["render", rules, "--state", str(root / "empty.json"), "-o", str(root / "x.svg")]):
        r = cli(*argv)
        assert r.code == 1 and f"{rules}:2:1: error[E008]:" in r.err, (argv, r.err)
    bare = write(root, "query main = 1\n", "bare.rules")
    r = cli("run", bare, "--state", str(root / "empty.json"), "--query", "zzz")
    assert r.code == 1 and f"{bare}:1:1: error[E008]" in r.err, r.err


def test_a_cases_error_is_annotated_at_the_field_at_fault(cli, root: Path) -> None:
    """`test --format github` (and SARIF) placed an erring case at its first line: now at the field the
    error is about (its `query`, `args`, `state_file`, `dice`), as the text says where it is written."""
    write(root, 'ruleset t "T"\nschema "s.json"\ninput n: int at "/n"\nquery main = n\n'
                'query twice(x) = x * 2\nquery rolls = roll(2d6)\n')
    (root / "s.json").write_text('{"type": "object", "properties": {"n": {"type": "integer"}}}')
    (root / "bad.json").write_text('{"n": "a"}')
    (root / "cases.yaml").write_text(
        "ruleset: main.rules\ncases:\n"
        "  - id: noquery\n    state: {n: 1}\n    query: zzz\n    expect: 1\n"  # (query: line 5)
        "  - id: arity\n    state: {n: 1}\n    query: twice\n    args: [1, 2]\n    expect: 2\n"  # (args: 10)
        "  - id: statefile\n    expect: 1\n    state_file: bad.json\n"  # (state_file: 14)
        "  - id: dice\n    state: {n: 1}\n    query: rolls\n    dice: [1, 2, 3]\n    expect: 3\n")  # (dice: 18)
    r = cli("test", str(root / "cases.yaml"), "--format", "github", "--jobs", "1")
    lines = {line.split("title=")[1].split("::")[0]: line for line in r.out.splitlines()}
    for case, line in (("noquery", 5), ("arity", 10), ("statefile", 14), ("dice", 18)):
        assert f",line={line}," in lines[case], (case, lines[case])
    sarif = json.loads(cli("test", str(root / "cases.yaml"), "--format", "sarif", "--jobs", "1").out)
    found = [x["locations"][0]["physicalLocation"]["region"]["startLine"] for x in sarif["runs"][0]["results"]]
    assert found == [5, 10, 14, 18], found


def test_run_broken_ruleset_exit_1(cli) -> None:
    r = cli("run", str(FIXTURES / "unknown_name.rules"), "--state", str(SCHEMA / "good.json"))
    assert r.code == 1 and "error[C001]" in r.err and "W101" not in r.err
    # with --format json the errors are a JSON list too, whatever stage finds them (they were text)
    r = cli("run", "--format", "json", str(FIXTURES / "unknown_name.rules"), "--state", str(SCHEMA / "good.json"))
    assert r.code == 1 and {d["code"] for d in json.loads(r.out)} == {"C001"} and r.err == ""


def test_run_json_errors_of_an_unreadable_state_are_json(cli, root: Path) -> None:
    (root / "cut.json").write_text('{"turn": ')
    r = cli("run", "--format", "json", str(SCHEMA / "main.rules"), "--state", str(root / "cut.json"))
    assert r.code == 3 and json.loads(r.out)[0]["code"] == "S001" and json.loads(r.out)[0]["line"] == 1


def test_batch_jsonl(cli, root: Path) -> None:
    good = json.loads((SCHEMA / "good.json").read_text())
    lines = [json.dumps(good), "", json.dumps({"turn": "x", "units": []}), "{not json", json.dumps({**good, "turn": 2})]
    (root / "b.jsonl").write_text("\n".join(lines) + "\n")
    r = cli("run", "--format", "json", str(SCHEMA / "main.rules"), "--batch", str(root / "b.jsonl"))
    rows = [json.loads(x) for x in r.out.splitlines()]
    assert len(rows) == 4
    assert rows[0]["count"] == 2 and rows[3]["turn"] == 2
    assert rows[1]["line"] == 3 and rows[1]["diagnostics"][0]["pointer"] == "/turn"
    assert rows[2]["line"] == 4 and rows[2]["diagnostics"][0]["code"] == "S001"
    assert r.code == 3
    # each diagnostic is at its place in the batch file (it was `b.jsonl:4` as a file name, line 1 within it)
    where = {k: rows[2]["diagnostics"][0][k] for k in ("file", "line", "col")}
    assert where == {"file": str(root / "b.jsonl"), "line": 4, "col": 2}
    # (a state's value at its column in the line, its pointer kept: it was the line's first column)
    s002 = rows[1]["diagnostics"][0]
    assert (s002["file"], s002["line"], s002["col"], s002["pointer"]) == (str(root / "b.jsonl"), 3, 10, "/turn")
    text = cli("run", str(SCHEMA / "main.rules"), "--batch", str(root / "b.jsonl"))
    assert f"{root / 'b.jsonl'}:4:2: error[S001]" in text.err and f"{root / 'b.jsonl'}:3:10: error[S002]" in text.err, text.err
    (root / "cut.jsonl").write_text(json.dumps(good)[:-1] + "\n")  # the last `}` cut off: found past its end, on its line
    cut = json.loads(cli("run", "--format", "json", str(SCHEMA / "main.rules"), "--batch", str(root / "cut.jsonl")).out)
    assert cut["diagnostics"][0]["line"] == 1 and cut["diagnostics"][0]["col"] == len(json.dumps(good))
    assert cli("run", str(SCHEMA / "main.rules"), "--batch", str(root)).err.count("is not a regular file (a folder)") == 1


def test_scripted_dice(cli, root: Path) -> None:
    rules = write(root, "query main = [roll(2d6), roll(1d6)]\n")
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--dice", "6,3,5")
    assert r.code == 0 and json.loads(r.out) == [9, 5]
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--dice", "6,3")
    assert r.code == 1
    d = json.loads(r.out)[0]
    assert d["code"] == "E007" and d["line"] == 1 and "roll(1d6)" in "query main = [roll(2d6), roll(1d6)]"[d["col"] - 1:]
    # (the help names where this command took its dice, not a test case's `dice:` list)
    assert d["help"] == "add dice to `--dice`", d
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--dice", "6,3,5,1")
    assert r.code == 1 and [(d["code"], d["help"]) for d in json.loads(r.out)] == [
        ("E014", "remove the dice the rules do not roll from `--dice`")], r.out
    r = cli("explain", rules, "--state", str(root / "empty.json"), "--dice", "6")
    assert r.code == 1 and "help: add dice to `--dice`" in r.err and "case" not in r.err, r.err


def test_seeded_dice_reproducible(cli, root: Path) -> None:
    rules = write(root, "query main = [roll(2d6) for i in range(20)]\n")
    a = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--seed", "7")
    b = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--seed", "7")
    assert a.code == 0 and a.out == b.out
    assert all(2 <= v <= 12 for v in json.loads(a.out))


@pytest.mark.parametrize("body", [
    "query main = roll(2d6) >= 9\n",
    "query main = roll(2d6)\n",
    "query main = roll(1d6) * 2 + roll(1d6)\n",
    "query main = roll(dice(4, [0, 0, 0, 0, 1, 1]))\n",
    "query main = if roll(1d6) > 4 then \"hit\" elif roll(1d6) == 1 then \"fumble\" else \"miss\"\n",
])
def test_exact_sums_to_one(cli, root: Path, body: str) -> None:
    rules = write(root, body)
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--exact")
    assert r.code == 0, r.out + r.err
    result = json.loads(r.out)
    total = sum((Fraction(o["probability"]) for o in result["outcomes"]), Fraction(0))
    assert total == 1 and result["total"] == "1/1"
    values = [json.dumps(o["result"]) for o in result["outcomes"]]
    assert len(values) == len(set(values))
    assert all(not isinstance(o["result"], str) or ".." not in o["result"] for o in result["outcomes"])


def test_exact_distribution_of_2d6(cli, root: Path) -> None:
    rules = write(root, "query main = roll(2d6)\n")
    result = json.loads(cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--exact").out)
    probs = {o["result"]: Fraction(o["probability"]) for o in result["outcomes"]}
    assert probs == {s: Fraction(6 - abs(7 - s), 36) for s in range(2, 13)}


def test_text_format_run(cli) -> None:
    r = cli("run", str(SCHEMA / "main.rules"), "--state", str(SCHEMA / "good.json"), "--format", "text")
    assert r.code == 0 and "0304" in r.out


def test_query_arguments(cli, root: Path) -> None:
    rules = write(root, "query main(a, b) = [a, b]\n")
    r = cli("run", "--format", "json", rules, "--state", str(root / "empty.json"), "--arg", "3", "--arg", "word")
    assert r.code == 0 and json.loads(r.out) == [3, "word"]
    r = cli("run", rules, "--state", str(root / "empty.json"), "--arg", "3", "--format", "json")
    assert r.code == 1 and json.loads(r.out)[0]["code"] == "E008"


# ---------------------------------------------------------------- the exit-code table, command by command

MAIN, GOOD, BAD = str(SCHEMA / "main.rules"), str(SCHEMA / "good.json"), str(SCHEMA / "bad.json")


@pytest.mark.parametrize("argv,code,diag", [
    # U: a path on the command line that does not exist -> 2
    (["check", "/no/such.rules"], 2, "U001"),
    (["run", "/no/such.rules", "--state", GOOD], 2, "U001"),
    (["explain", "/no/such.rules", "--state", GOOD], 2, "U001"),
    (["render", "/no/such.rules", "--state", GOOD, "-o", "x.svg"], 2, "U001"),
    (["play", MAIN, "/no/such.json", "--orders", GOOD], 2, "U001"),
    (["diff", MAIN, "/no/such.rules"], 2, "U001"),
    (["test", "/no/such-folder"], 2, "U001"),
    (["coverage", "/no/such-folder"], 2, "U001"),
    (["fmt", "--check", "/no/such.rules"], 2, "U001"),
    # S: an invalid state -> 3
    (["run", MAIN, "--state", BAD], 3, "S002"),
    (["explain", MAIN, "--state", BAD], 3, "S002"),
    # E: evaluation -> 1
    (["run", MAIN, "--state", GOOD, "--query", "nope"], 1, "E008"),
    (["explain", MAIN, "--state", GOOD, "--query", "nope"], 1, "E008"),
    (["render", MAIN, "--state", GOOD, "-o", "x.svg"], 1, "E008"),  # no `render` query
    (["play", MAIN, GOOD, "--orders", "orders.yaml"], 1, "E008"),  # no `advance` query
    (["play", MAIN, GOOD, "--orders", GOOD], 3, "S001"),  # a game file that is not a list
    # C: a ruleset with errors -> 1
    (["check", str(FIXTURES / "unknown_name.rules")], 1, "C001"),
    (["run", str(FIXTURES / "unknown_name.rules"), "--state", GOOD], 1, "C001"),
    (["explain", str(FIXTURES / "unknown_name.rules"), "--state", GOOD], 1, "C001"),
    (["diff", MAIN, str(FIXTURES / "unknown_name.rules")], 1, "C001"),
])
def test_every_command_exits_as_the_table_says(cli, argv: list[str], code: int, diag: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # `-o x.svg` lands here
    (tmp_path / "orders.yaml").write_text("- []\n")
    r = cli(*argv)
    assert r.code == code, (argv, r.out, r.err)
    assert f"error[{diag}]" in r.err, (argv, r.err)


def test_a_case_file_not_in_utf8_is_located_at_its_bad_byte(cli, root: Path) -> None:
    write(root, "query main = 1\n")
    (root / "c.yaml").write_bytes(b"ruleset: main.rules\ncases:\n  - id: a\n    state: {}\n    expect: \xff1\n")
    r = cli("test", str(root / "c.yaml"))
    said = f"{root / 'c.yaml'}:5:13: error[S004]: cannot read test file: byte 0xff is not valid UTF-8"
    assert r.code == 3 and said in r.err, r.err


def test_diff_games_says_which_state_random_orders_refused(cli) -> None:
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    start = str(ROOT / "rulesets" / "diplomacy" / "examples" / "retreat.json")
    r = cli("diff", std, std, "--games", "1", "--phases", "4", "--start", start)
    assert r.code == 3, r.err
    said = " ".join(line.strip() for line in r.err.splitlines())  # (wrapped at 100 columns)
    assert ("ruleval: game 0 stopped at phase 3: NEW's `random_orders(2)` failed on the state the rules made after "
            "phase 2: S002 an adjustment phase needs") in said, r.err


def test_options_that_would_be_ignored_or_misread_are_usage_errors(cli) -> None:
    """`--dice 1,,2` and `--dice ''` dropped the empty items without a word; `test --ruleset` without
    `--import` was ignored."""
    state = str(ROOT / "docs" / "examples" / "game" / "start.json")
    rules = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    for dice in ("1,,2", "", "6,"):
        r = cli("run", rules, "--state", state, "--dice", dice)
        assert r.code == 2 and "--dice takes comma-separated integers" in r.err, (dice, r.err)
    r = cli("run", rules, "--state", state, "--dice", " 6 , 3")  # (read as two dice, which a movement never rolls)
    assert r.code == 1 and "E014" in r.out + r.err and "the script gave 2 dice" in r.out + r.err, r.out + r.err
    r = cli("test", str(ROOT / "tests" / "cases" / "his"), "--ruleset", rules)
    assert r.code == 2 and "--ruleset goes with --import" in r.err


def test_a_path_that_is_no_file_is_named_for_what_it_is(cli, tmp_path: Path) -> None:
    """A FIFO or a dangling symlink named on the command line was reported as "not found"."""
    import os

    os.mkfifo(tmp_path / "pipe.rules")
    (tmp_path / "dangling.rules").symlink_to(tmp_path / "nowhere.rules")
    assert "is not a regular file (a FIFO)" in cli("run", str(tmp_path / "pipe.rules")).err
    r = cli("run", str(tmp_path / "dangling.rules"))
    assert r.code == 2 and f"is a symlink to `{tmp_path / 'nowhere.rules'}`, which does not exist" in r.err
    assert "is not a regular file (a folder)" in cli("run", str(tmp_path)).err
    checked = cli("check", str(tmp_path / "pipe.rules"), str(tmp_path / "dangling.rules"))
    assert checked.code == 1 and "error[C005]: `" in checked.err and "is not a regular file (a FIFO)" in checked.err
    assert "is a symlink to" in checked.err and "not found" not in checked.err


def test_bundled_names_wherever_a_ruleset_is_named(cli) -> None:
    """`bundled:FAMILY/NAME.rules`, as `extends` writes it, names a ruleset on the command line too."""
    r = cli("diff", "bundled:his/his.rules", str(ROOT / "rulesets" / "his" / "his.rules"), "--generate", "2")
    assert r.code == 0 and "equivalent" in r.out, r.out + r.err
    start = str(ROOT / "docs" / "examples" / "game" / "start.json")
    by_name = cli("run", "bundled:diplomacy/standard.rules", "--state", start, "--format", "json")
    by_path = cli("run", str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), "--state", start, "--format", "json")
    assert by_name.code == by_path.code == 0 and by_name.out == by_path.out
    r = cli("check", "bundled:jomini/am.rules")
    assert r.code == 0 and "checked 1 ruleset: 0 errors" in r.err
    r = cli("run", "bundled:diplomacy/nope.rules")
    assert r.code == 2 and "`bundled:diplomacy/nope.rules` not found" in r.err and "bundled:diplomacy/standard.rules" in r.err
    r = cli("run", "bundled:../pyproject.toml")  # only the bundle's rulesets folder
    assert r.code == 2 and "outside" in r.err


def test_a_case_file_names_a_bundled_ruleset(cli, tmp_path: Path) -> None:
    state = {"phase": {"season": "spring", "year": 1901, "type": "movement"},
             "units": [{"power": "france", "type": "army", "location": "par"}], "orders": []}
    case = {"id": "hold", "state": state, "expect": {"units": state["units"]}}
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "cases.yaml").write_text(json.dumps({"ruleset": "bundled:diplomacy/standard.rules", "cases": [case]}))
    r = cli("test", str(tmp_path / "cases.yaml"))
    assert r.code == 0 and "1 passed, 0 failed" in r.out, r.out + r.err
    (tmp_path / "cases.yaml").write_text(json.dumps({"ruleset": "bundled:../pyproject.toml", "cases": [case]}))
    r = cli("test", str(tmp_path / "cases.yaml"))
    assert r.code != 0 and "S005" in r.out + r.err and "outside" in r.out + r.err, r.out + r.err


def test_a_query_of_its_arguments_alone_runs_without_a_state(cli) -> None:
    """A query that reads no input (nothing it may evaluate is an `input`) is computed from its
    arguments: no `--state`, and no state check of a state it does not read (issue 44); a query
    that reads the state still has it checked."""
    std = str(Path(__file__).resolve().parent.parent / "rulesets" / "diplomacy" / "standard.rules")
    r = cli("run", std, "--query", "phase_order", "--arg", "F1903R", "--format", "json")
    assert r.code == 0 and json.loads(r.out) == [1903, 1, 1], r.err
    r = cli("run", std)
    assert r.code == 3 and "error[S002]: missing required keys" in r.err and '"orders"' in r.err, r.err


def test_check_leaves_the_authoring_tools_unimported_and_other_commands_still_reach_them() -> None:
    """`check` is most of what CI runs: it parses its command line without the tools' sub-commands
    (their imports are a tenth of a cold check); every other command line sees them all."""
    import subprocess
    import sys

    probe = ("import sys; from validator.tools.cli import main; code = main(sys.argv[1:]); "
             "print(code, sorted(m for m in sys.modules if m.startswith('validator.tools.')))")
    checked = subprocess.run([sys.executable, "-c", probe, "check", "rulesets/his", "--jobs", "1"], cwd=ROOT,
                             capture_output=True, text=True, check=False)
    code, modules = checked.stdout.strip().splitlines()[-1].split(" ", 1)
    assert code == "0" and "validator.tools.testing" not in modules and "validator.tools.fmt" not in modules, modules
    assert "validator.tools.report" not in modules  # (the text format needs none of SARIF, JUnit, GitHub's)
    listed = subprocess.run([sys.executable, "-c", probe, "--help"], cwd=ROOT, capture_output=True, text=True,
                            check=False)
    assert "fmt" in listed.stdout and "coverage" in listed.stdout and "serve" in listed.stdout


def test_a_case_key_misspelt_is_located_at_the_key_with_the_close_name(cli, root: Path) -> None:
    """`stat:` for `state:` (or `idd:` for `id:`) was said at the case's first line, column 1, with the
    list of every key: the line of the key itself, and the key it is near, say what to fix."""
    write(root, "query main = 1\n")
    (root / "c.yaml").write_text("ruleset: main.rules\ncases:\n  - id: a\n    stat: {}\n    expect: 1\n"
                                 "  - idd: b\n    state: {}\n    expect: 1\n")
    r = cli("test", str(root / "c.yaml"))
    assert r.code == 3, r.err
    assert f"{root / 'c.yaml'}:4:5: error[S004]: case `a` has unknown key `stat`" in r.err, r.err
    assert "did you mean `state`?" in r.err, r.err
    assert f"{root / 'c.yaml'}:6:5: error[S004]: a case needs an `id`" in r.err, r.err
    assert "did you mean `id`?" in r.err, r.err


def test_a_case_state_the_schema_refuses_is_said_at_its_line_with_every_problem(cli, root: Path,
                                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A case's state refused by the schema was said as `c.yaml#a#/units/1`, the first problem only,
    though the state is written in the case file with lines: each problem is said at its value's line
    and column there, with its pointer; a `state_file`'s problems are said at their place in that file."""
    (root / "schema.json").write_text(json.dumps({"type": "object", "properties": {
        "units": {"type": "array", "items": {"type": "string"}}, "n": {"type": "integer"}}}))
    write(root, 'schema "schema.json"\ninput units: list[str] at "/units"\nquery main = len(units)\n')
    (root / "s.json").write_text('{"units": [true]}')
    (root / "c.yaml").write_text("ruleset: main.rules\ncases:\n  - id: ok\n    state: {units: []}\n    expect: 0\n"
                                 "  - id: a\n    state:\n      n: x\n      units: [b, 3]\n    expect: 1\n"
                                 "  - id: f\n    state_file: s.json\n    expect: 1\n")
    monkeypatch.chdir(root)  # (a message is clipped at 240 characters: short paths keep both problems)
    r = cli("test", "c.yaml")
    assert r.code == 3, r.out + r.err
    c = "c.yaml"
    assert (f"{c}:8:10: S002: expected an integer, got \"x\" (at /n); "
            f"{c}:9:18: S002: expected a text, got 3 (at /units/1)") in r.out, r.out
    assert "\n2 errors\n1 passed, 2 failed\n" in r.out, r.out  # (it said `2 error`)
    assert cli("test", "c.yaml", "--jobs", "1").out == cli("test", "c.yaml", "--jobs", "2").out == r.out
    assert "s.json:1:12: S002: expected a text, got true (at /units/0)" in r.out, r.out  # (its line and column)


def test_a_case_whose_ruleset_does_not_check_says_its_first_error_as_other_errors_are_said(
        cli, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`file:line:col: C001: message`, as a case's other errors write their code (it lacked the colon)."""
    write(root, "query main = nmae\n")
    (root / "c.yaml").write_text("ruleset: main.rules\ncases:\n  - id: a\n    state: {}\n    expect: 1\n")
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 1, r.out + r.err
    assert "ruleset does not check: main.rules:1:14: C001: unknown name `nmae`" in r.out, r.out


def test_github_and_sarif_put_a_failed_case_at_the_value_that_failed(cli, root: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A failed case was annotated at its first line whatever failed; CI shows the annotation on the
    line of the expected value that differs (or the list that lacks an item), the field of the wrong
    shape, the state value refused."""
    (root / "schema.json").write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    write(root, 'schema "schema.json"\ninput n: int at "/n"\nquery main = {xs: [n, n], k: {v: n}}\n')
    (root / "c.yaml").write_text(
        "ruleset: main.rules\ncases:\n"
        "  - id: deep\n    state: {n: 1}\n    expect:\n      xs: [1, 1]\n      k:\n        v: 2\n"   # 3..8
        "  - id: short\n    state: {n: 1}\n    expect: {xs: [1]}\n"                             # 9..11
        "  - id: shape\n    state: {n: 1}\n    dice: 5\n    expect: 0\n"                        # 12..15
        "  - id: state\n    state:\n      n: x\n    expect: 0\n")                              # 16..19
    monkeypatch.chdir(root)
    github = cli("test", "c.yaml", "--format", "github").out.splitlines()
    assert [line.split("::")[1] for line in github] == [
        "error file=c.yaml,line=8,col=12,title=deep", "error file=c.yaml,line=11,col=14,title=short",
        "error file=c.yaml,line=14,col=11,title=shape", "error file=c.yaml,line=18,col=10,title=state"], github
    sarif = json.loads(cli("test", "c.yaml", "--format", "sarif").out)
    assert [(r["message"]["text"].split(":")[0], r["locations"][0]["physicalLocation"]["region"])
            for r in sarif["runs"][0]["results"]] == [
        ("deep", {"startLine": 8, "startColumn": 12}), ("short", {"startLine": 11, "startColumn": 14}),
        ("shape", {"startLine": 14, "startColumn": 11}), ("state", {"startLine": 18, "startColumn": 10})]


def test_a_list_field_with_an_item_of_the_wrong_kind_is_said_at_the_item(cli, root: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """`dice: [1, true]` was said at the key `dice`, though `args: [1, .nan]` is said at its item: the
    item of the wrong kind is located, and named; a field of the wrong kind whole stays at its value."""
    write(root, "query main = 1\n")
    (root / "c.yaml").write_text(
        "ruleset: main.rules\ncases:\n"
        "  - id: d\n    state: {}\n    dice: [1, true]\n    expect: 1\n"         # 3..6
        "  - id: c\n    state: {}\n    clauses:\n      - A\n      - 2\n    expect: 1\n"  # 7..12
        "  - id: a\n    state: {}\n    args: [1, .nan]\n    expect: 1\n"         # 13..16
        "  - id: w\n    state: {}\n    dice: 5\n    expect: 1\n")               # 17..20
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 3, r.out + r.err
    assert "c.yaml:5:15: S004: case `d`: `dice` must be a list of die faces, integers from 1 (item 1 is true)" in r.out, r.out
    assert "c.yaml:11:9: S004: case `c`: `clauses` must be a list of clause ids (item 1 is 2)" in r.out, r.out
    assert "c.yaml:15:15: S004: case `a`: `args` at `/1`: `nan` is not JSON" in r.out, r.out
    assert "c.yaml:19:11: S004: case `w`: `dice` must be a list of die faces, integers from 1\n" in r.out, r.out


def test_a_missing_ruleset_is_said_at_the_ruleset_key_that_names_it(cli, root: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A case naming a ruleset that does not exist was said under the case's line, with no column: it is
    said at the `ruleset:` key naming it (the case's own, else its file's), in every output. It is the
    case's input fault, S004, exit 3, as a missing `state_file` is (S001, exit 3): it was C005, exit 1,
    a finding of a ruleset, and a case expecting C005 passed on a typo of its ruleset's name."""
    write(root, "query main = 1\n")
    (root / "c.yaml").write_text("ruleset: nope.rules\ncases:\n  - id: a\n    state: {}\n    expect: 1\n"
                                 "  - id: b\n    state: {}\n    ruleset: gone.rules\n    expect: 1\n"
                                 "  - id: c\n    state: {}\n    ruleset: main.rules\n    expect: 1\n")
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 3, r.out + r.err
    assert "    c.yaml:1:1: S004: case `a`: ruleset `nope.rules` not found\n" in r.out, r.out
    assert "    c.yaml:8:5: S004: case `b`: ruleset `gone.rules` not found\n" in r.out, r.out
    expecting = root / "e.yaml"  # (a case that expects C005 of a ruleset importing a missing file may: not of its own)
    expecting.write_text("cases:\n  - id: e\n    state: {}\n    ruleset: gone.rules\n    expect_error: C005\n")
    typo = cli("test", "e.yaml")
    assert typo.code == 3 and "    e.yaml:4:5: S004: case `e`: ruleset `gone.rules` not found\n" in typo.out, typo.out
    measured = cli("coverage", "e.yaml")
    assert measured.code == 3 and "e.yaml:4:5: error[S004]: case `e`: ruleset `gone.rules` not found" in measured.err
    github = cli("test", "c.yaml", "--format", "github", "--jobs", "2").out.splitlines()
    assert [line.split("::")[1] for line in github] == ["error file=c.yaml,line=1,col=1,title=a",
                                                        "error file=c.yaml,line=8,col=5,title=b"], github


def test_one_way_finds_places_in_a_case_file_and_a_merge_key_is_followed(cli, root: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading and failures find places in a case file one way (`_located`): a state value a YAML merge
    key brings was said as `c.yaml#a#/n`, with no line; a repeated id and a file refused (S005) at
    column 1 of the case's line: each is said where it is written."""
    (root / "schema.json").write_text(json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}}))
    write(root, 'schema "schema.json"\ninput n: int at "/n" default 0\nquery main = n\n')
    (root.parent / "far.json").write_text("{}")
    (root / "c.yaml").write_text(
        "ruleset: main.rules\nbad: &bad {n: y}\ncases:\n"
        "  - id: a\n    state:\n      <<: *bad\n    expect: 1\n"                      # 4..7
        "  - id: a\n    state: {}\n    expect: 0\n"                                     # 8..10
        "  - id: f\n    state_file: ../far.json\n    expect: 0\n")                      # 11..13
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 3, r.out + r.err
    assert 'c.yaml:2:15: S002: expected an integer, got "y" (at /n)' in r.out, r.out
    assert "c.yaml:8:5: error[S004]: case id `a` appears twice" in r.err, r.err
    assert "c.yaml:12:5: error[S005]: `state_file` `../far.json` resolves outside" in r.err, r.err


def test_an_expectation_that_checks_nothing_is_refused_at_its_key(cli, root: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """An expected map is matched as at least its keys, so `expect: {}`, `exits: {}` or `where: {}` (or
    no `where`) checked nothing and the case passed whatever the rules did: S007 at the key, exit 3,
    with a help naming `{exactly: {}}`; `{}` as a list's item holds a place (the length is compared),
    and the other cases still run."""
    write(root, "query main = {n: 1, exits: {}, xs: [{a: 1}, {a: 2}]}\n")
    (root / "c.yaml").write_text(
        "ruleset: main.rules\ncases:\n"
        "  - id: top\n    state: {}\n    expect: {}\n"                                           # 3..5
        "  - id: nested\n    state: {}\n    expect:\n      n: 1\n      exits: {}\n"               # 6..10
        "  - id: where\n    state: {}\n    probabilities:\n      - {where: {}, p: 1}\n"          # 11..14
        "  - id: none\n    state: {}\n    expect: 1\n    probabilities: []\n"                   # 15..18
        "  - id: held\n    state: {}\n    expect: {xs: [{}, {a: 2}], exits: {exactly: {}}}\n"   # 19..21
        "  - id: every\n    state: {}\n    probabilities: [{p: 1}]\n")                           # 22..24
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 3, r.out + r.err
    said = [line for line in r.err.splitlines() if "error[" in line]
    assert said == [
        "c.yaml:5:5: error[S007]: case `top`: `expect: {}` checks nothing (an expected map is matched as at least "
        "its keys)",
        "c.yaml:10:7: error[S007]: case `nested`: `exits: {}` checks nothing (an expected map is matched as at "
        "least its keys)",
        "c.yaml:14:10: error[S007]: case `where`: `where: {}` matches every outcome",
        "c.yaml:18:5: error[S007]: case `none`: `probabilities: []` checks nothing",
        "c.yaml:24:21: error[S007]: case `every`: a probability without `where` is that of every outcome"], r.err
    assert "`{exactly: {}}` expects a map or record with no key" in " ".join(r.err.split()), r.err
    assert "\n  10 |       exits: {}\n" in r.err, r.err  # (the case file's line under it, as a ruleset's)
    assert r.out.endswith("1 passed, 0 failed\n"), r.out  # (`held`)
    sarif = json.loads(cli("test", "c.yaml", "--format", "sarif").out)
    assert [(x["ruleId"], x["locations"][0]["physicalLocation"]["region"]["startLine"])
            for x in sarif["runs"][0]["results"]] == [("S007", 5), ("S007", 10), ("S007", 14), ("S007", 18),
                                                      ("S007", 24)]
    assert cli("diff", "main.rules", "main.rules", "--cases", "c.yaml").code == 0  # (states alone are read)


def test_cases_that_are_not_a_list_are_said_at_the_key(cli, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`cases: {id: a}` (a map, not a list) was said at line 1, column 1, whatever line `cases:` was on."""
    write(root, "query main = 1\n")
    (root / "c.yaml").write_text("# my cases\nruleset: main.rules\ncases: {id: a, state: {}, expect: 1}\n")
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 3, r.out + r.err
    assert "c.yaml:3:1: error[S004]: `cases` must be a list" in r.err, r.err


def test_a_misspelt_expected_field_names_the_close_one(cli, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`expect: {pionts: 9}` failed as "missing (expected 9)", leaving the author to find the slip; like a
    misspelt `where` field, it names the result's close field."""
    write(root, "query main = {points: 9, busted: false}\n")
    (root / "c.yaml").write_text("ruleset: main.rules\ncases:\n  - id: a\n    state: {}\n    expect: {pionts: 9}\n")
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml")
    assert r.code == 1, r.out + r.err
    assert "/pionts: missing (expected 9; did you mean `points`?)" in r.out, r.out


def test_exactly_compares_a_value_whole_and_update_writes_an_empty_map_so(cli, root: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """`{exactly: VALUE}` compares VALUE whole (a key the result has more is a difference, said at the
    map); `--update` writes an empty map the run gave as `{exactly: {}}`, which checks it."""
    write(root, "query main = {n: 1, m: {a: 1, b: 2}, e: {}}\n")
    (root / "c.yaml").write_text(
        "ruleset: main.rules\ncases:\n"
        "  - id: whole\n    state: {}\n    expect: {m: {exactly: {a: 1, b: 2}}, e: {exactly: {}}}\n"  # 3..5
        "  - id: more\n    state: {}\n    expect:\n      m: {exactly: {a: 1}}\n"                 # 6..9
        "  - id: update\n    state: {}\n    expect: {e: 1}\n")                                    # 10..12
    monkeypatch.chdir(root)
    r = cli("test", "c.yaml", "--format", "github")
    assert r.code == 1, r.out + r.err
    assert [line.split("::")[1] for line in r.out.splitlines()] == [
        "error file=c.yaml,line=9,col=7,title=more", "error file=c.yaml,line=12,col=17,title=update"], r.out
    assert "/m: unexpected key `b` (got 2): `exactly` lists every key" in r.out, r.out
    cli("test", "c.yaml", "-k", "update", "--update")
    assert "    expect: {e: {exactly: {}}}\n" in (root / "c.yaml").read_text()
    assert cli("test", "c.yaml", "-k", "update").code == 0


def test_explain_without_a_state_says_the_ruleset_reads_one_as_run_does(cli) -> None:
    """`run` without --state on a ruleset that reads one adds a note saying so; `explain` printed the
    bare `<no state>#` schema error."""
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    for command in ("run", "explain"):
        r = cli(command, std)
        assert r.code == 3 and "note: no --state was given, and this ruleset reads one" in r.err, (command, r.err)


def test_explain_json_says_a_refused_state_as_run_json_does(cli, tmp_path) -> None:
    """`explain --format json` wrote a refused state's diagnostics as text on stderr, where `run --format json`
    writes them as JSON on stdout (each placed at its line in the state file): a CI job reading one command's
    JSON could not read the other's. Now the same output and exit code, a ruleset's errors too; the text format still
    says them on stderr."""
    std = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")
    state = tmp_path / "st.json"
    state.write_text('{"units": 3}', encoding="utf-8")
    ran = cli("run", std, "--state", str(state), "--format", "json")
    explained = cli("explain", std, "--state", str(state), "--format", "json")
    assert ran.code == explained.code == 3, (ran.err, explained.err)
    said = json.loads(explained.out)
    assert said == json.loads(ran.out) and explained.err == ran.err == ""
    assert [(d["code"], d["pointer"], d["line"], d["col"]) for d in said] == [("S002", "", 1, 1), ("S002", "/units", 1, 11)]
    text = cli("explain", std, "--state", str(state))
    assert text.code == 3 and text.out == "" and f"{state}:1:11: error[S002]: expected a list, got 3" in text.err
    bad = tmp_path / "bad.rules"
    bad.write_text('ruleset x "x"\nquery main = nope\n', encoding="utf-8")
    ran, explained = cli("run", str(bad), "--format", "json"), cli("explain", str(bad), "--format", "json")
    assert ran.code == explained.code == 1 and json.loads(explained.out) == json.loads(ran.out) != []
    assert [d["code"] for d in json.loads(explained.out)] == ["C001"] and explained.err == ""


@pytest.mark.parametrize("argv, collects", [
    (["run", "r.rules", "--state", "s.json"], False), (["run", "r.rules"], False), (["check", "rulesets"], False),
    (["fmt", "r.rules"], False), (["run", "r.rules", "--batch", "s.jsonl"], True),
    (["run", "r.rules", "--batch=s.jsonl"], True), (["test", "tests/cases"], True), (["play", "r.rules"], True), ([], True)])
def test_the_commands_that_read_and_exit_run_without_the_cycle_collector(argv: list[str], collects: bool,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """`check`, `fmt` and `run` of one state run without the cycle collector (the host's: here, the
    command line's); `run --batch` and every other command keep it."""
    import gc

    from validator.tools import cli

    seen: list[bool] = []
    monkeypatch.setattr(cli.sys, "argv", ["ruleval", *argv])
    monkeypatch.setattr(cli, "main", lambda: seen.append(gc.isenabled()) or 0)

    def leave(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(cli.os, "_exit", leave)
    assert gc.isenabled()
    try:
        with pytest.raises(SystemExit):
            cli.entry()
    finally:
        gc.enable()
    assert seen == [collects]


@pytest.fixture
def outside(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project (`proj/`: main.rules extends base.rules, an error in each, and a case file) beside the
    working folder (`here/`), which holds a ruleset of its own."""
    proj = tmp_path.resolve() / "proj"
    proj.mkdir()
    (proj / "ruleval.toml").write_text("")
    (proj / "base.rules").write_text('ruleset t.base "base"\nquery main = nope\n')
    (proj / "main.rules").write_text('ruleset t.main "main"\nextends "base.rules"\nquery other = nada\n')
    (proj / "state.json").write_text('{"n": 1}\n')
    (proj / "cases.yaml").write_text("ruleset: main.rules\ncases:\n  - id: one\n    state_file: state.json\n"
                                     "    expect: 1\n")
    here = tmp_path.resolve() / "here"
    here.mkdir()
    (here / "ruleval.toml").write_text("")
    (here / "mine.rules").write_text('ruleset t.mine "mine"\nquery main = zilch\n')
    monkeypatch.chdir(here)
    return proj


def _files_of(cli, *argv: str) -> list[str]:
    r = cli("check", "--format", "json", *argv)
    assert r.code == 1
    return [d["file"] for d in json.loads(r.out)]


def test_a_file_named_on_the_command_line_is_shown_as_written(cli, outside: Path) -> None:
    """docs/diagnostics.md, "Paths": a named file as written (absolute, `../`, `./`, or plain), the file
    it extends relative to the working folder if under it, else absolute; never a `../..` no one wrote."""
    base = str(outside / "base.rules")
    assert _files_of(cli, str(outside / "main.rules")) == [base, str(outside / "main.rules")]
    assert sorted(_files_of(cli, "../proj/main.rules")) == ["../proj/main.rules", base]
    assert _files_of(cli, "./mine.rules") == ["./mine.rules"]
    assert _files_of(cli, "mine.rules") == ["mine.rules"]
    assert _files_of(cli, str(Path.cwd() / "mine.rules")) == [str(Path.cwd() / "mine.rules")]
    assert sorted(_files_of(cli, "../proj/")) == [base, str(outside / "main.rules")]  # found in a folder: not named
    sarif = json.loads(cli("check", "--format", "sarif", "../proj/main.rules").out)
    uris = sorted(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"])
    assert uris == ["../proj/main.rules", (outside / "base.rules").as_uri()]  # (SARIF: an absolute path as a file: URI)
    text = cli("check", "../proj/main.rules").err
    assert text.startswith("../proj/main.rules:3:15: error[C001]") and f"\n{base}:2:14: error[C001]" in text


def test_from_the_root_a_relative_path_stays_relative(cli, outside: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir("/")
    given = str(outside / "main.rules").lstrip("/")
    assert sorted(_files_of(cli, given)) == sorted([given, str(outside / "base.rules").lstrip("/")])


def test_test_and_coverage_show_paths_as_check_does(cli, outside: Path) -> None:
    """A case file named as `../proj/cases.yaml`, its ruleset and its state file reached from it."""
    r = cli("test", "../proj/cases.yaml", "--format", "json")
    assert r.code == 1
    got = json.loads(r.out)
    shown = json.dumps(got)
    assert got["cases"][0]["file"] == "../proj/cases.yaml"  # named
    assert f"{outside / 'base.rules'}:2:14: C001" in shown  # reached from it (the ruleset it names extends it)
    assert shown.count("../") == 1
    cov = cli("coverage", "../proj/cases.yaml")
    assert "../" not in cov.out + cov.err


def test_a_catalogue_with_a_misspelt_clauses_key_names_it(cli, root: Path) -> None:
    """A clause catalogue written `clause:` was refused as needing a `clauses:` mapping, leaving the author
    to find which key was wrong: the help names the key it has."""
    (root / "c.yaml").write_text('clause:\n  R-1: "a rule"\n', encoding="utf-8")
    path = write(root, 'ruleset t "t"\nclauses "c.yaml"\nrule f cite "R-1" = 1\nquery main = f\n')
    r = cli("check", path)
    assert r.code == 1 and "error[C008]: a clause catalogue needs a `clauses:` mapping" in r.err, r.err
    assert "has `clause:`: did you mean `clauses:`?" in " ".join(r.err.split()), r.err

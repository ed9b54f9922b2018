"""Issue 24, the output-forging and bad-input-value rows: hostile values in rulesets, states, test
cases and file names, each run as CI runs a stranger's pull request (`hostile`: a subprocess capped in
memory and CPU time that fails when its CPU limit stops it, on exit 4 or on a traceback).

Row 10: a state with millions of schema errors, a check with tens of thousands of diagnostics.
Row 12: file names and case ids that would forge GitHub workflow commands or their properties.
Row 14: values Python's own readers and recursion cannot take (deep nesting, 5 000-digit integers,
lone surrogates, unresolvable `$ref`s), in the CLI, in `--batch`, in `test` and through the API.
Row 15: NaN and infinities, control characters in what is printed (terminal, JUnit XML, SVG), a
UTF-8 byte order mark.

Each test asserts the diagnostic code, the exit code and the place; each fails on the code before
the fix (checked by running it there).
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import validator
from tests.adversarial.conftest import run_capped

SCHEMA_HEAD = '{"$schema": "https://json-schema.org/draft/2020-12/schema", '
ECHO = 'input a: any at "/a"\nquery main = a\n'


def write(root: Path, name: str, text: str | bytes) -> Path:
    path = root / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def diags_of(out: str) -> list[dict]:
    return json.loads(out)


HEAD = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error\[(?P<code>[A-Z]\d{3})\]: (?P<message>.*)$", re.M)


def text_diag(err: str) -> dict:
    """The one diagnostic of a text output (state reading errors are shown as text): its head fields
    and the `= pointer:` line under it."""
    heads = list(HEAD.finditer(err))
    assert len(heads) == 1, err
    d = heads[0].groupdict()
    pointer = re.search(r"^  = pointer: (.*)$", err, re.M)
    return {**d, "line": int(d["line"]), "col": int(d["col"]), "pointer": pointer.group(1) if pointer else None}


def nested(depth: int, leaf: str = "1") -> str:
    return "[" * depth + leaf + "]" * depth


# ---------------------------------------------------------------- row 10: work bounded by what is shown


def test_millions_of_schema_errors_stop_at_the_first_fifty(hostile, repo):
    write(repo, "schema.json", SCHEMA_HEAD + '"type": "object", "properties": {"units": {"type": "array", '
                                             '"items": {"type": "string"}}}}')
    write(repo, "main.rules", 'schema "schema.json"\nquery main = 1\n')
    state = '{"units": [' + ",".join(["1"] * 2_400_000) + "]}"
    assert len(state) < 5_000_000
    write(repo, "big.json", state)
    done = hostile("run", "--format", "json", "main.rules", "--state", "big.json", cwd=repo)
    assert done.code == 3
    diags = diags_of(done.out)
    assert len(diags) == 51 and all(d["code"] == "S002" for d in diags)
    pointers = {d["pointer"] for d in diags} - {""}
    assert len(pointers) == 50 and all(re.fullmatch(r"/units/\d+", p) and int(p[7:]) <= 50 for p in pointers)
    assert [d["message"] for d in diags if d["pointer"] == ""] == ["... and more schema errors (the first 50 are shown)"]


@pytest.mark.parametrize("suffix, items", [("json", 2_400_000), ("yaml", 150_000)])
def test_many_errors_in_imported_data_stop_at_the_first_fifty(hostile, repo, suffix, items):
    write(repo, "schema.json", SCHEMA_HEAD + '"type": "object", "properties": {"sizes": {"type": "array", '
                                             '"items": {"type": "string"}}}}')
    write(repo, "main.rules", f'import "data.{suffix}" as data with schema "schema.json"\nquery main = data\n')
    write(repo, f"data.{suffix}", '{"sizes": [' + ",".join(["1"] * items) + "]}")  # JSON is YAML too
    done = hostile("check", "--no-cache", "--format", "json", "main.rules", cwd=repo)
    assert done.code == 1
    diags = diags_of(done.out)
    assert len(diags) == 51 and all(d["code"] == "C026" and d["file"] == f"data.{suffix}" for d in diags)
    assert len({d["pointer"] for d in diags} - {""}) == 50
    if suffix == "json":  # too large to be read again for positions: at its top, with their pointers
        assert {(d["line"], d["col"]) for d in diags} == {(1, 1)}
    else:  # each at its item: `1,` is two characters
        assert all(d["col"] == len('{"sizes": [') + 1 + 2 * int(d["pointer"][7:]) for d in diags if d["pointer"])


def test_a_data_check_with_a_hundred_thousand_findings_lists_two_hundred(hostile, repo):
    write(repo, "data.yaml", "sizes: [0, 1]\n")
    write(repo, "main.rules", 'import "data.yaml" as data\n'
                              'query validate_data = [{pointer: "/data/sizes/0", message: "too small " + str(i), cites: []}'
                              ' for i in range(100000)]\nquery main = data\n')
    done = hostile("check", "--no-cache", "--format", "json", "main.rules", cwd=repo)
    assert done.code == 1
    diags = diags_of(done.out)
    assert len(diags) == 201 and all(d["code"] == "C027" for d in diags)
    assert [d["message"] for d in diags if d["file"] == "main.rules"] == [
        "... and 99800 more findings of `validate_data` (the first 200 are shown)"]
    assert {(d["line"], d["col"]) for d in diags if d["file"] == "data.yaml"} == {(1, 9)}


@pytest.mark.slow
def test_tens_of_thousands_of_diagnostics_render_in_linear_time(hostile, repo):
    lines = ["query main = 1"] + [f"def unused_{i} = {i}" for i in range(30_000)]
    write(repo, "many.rules", "\n".join(lines) + "\n")
    done = hostile("check", "--no-cache", "many.rules", cwd=repo)
    assert done.code == 0
    assert done.err.count("warning[W101]") == 30_000
    assert "many.rules:30001:1: warning[W101]: `unused_29999` is never used" in done.err
    assert "30001 | def unused_29999 = 29999" in done.err


def test_a_one_line_ruleset_shows_a_window_of_its_line_per_diagnostic(hostile, repo):
    write(repo, "one.rules", "query main = 1 " + " ".join(f"def unused_{i} = {i}" for i in range(20_000)) + "\n")
    done = hostile("check", "--no-cache", "one.rules", cwd=repo)
    assert done.code == 0 and done.err.count("warning[W101]") == 20_000
    assert len(done.err) < 20_000 * 600  # each snippet a window, not the 400 kB line
    shown = [ln for ln in done.err.splitlines() if ln.startswith("   1 | ")]
    assert len(shown) == 20_000 and all(len(ln) < 200 for ln in shown)
    at = done.err.index("`unused_12345` is never used")
    snippet, caret = done.err[at:].splitlines()[1:3]
    assert snippet[caret.index("^"):].startswith("def unused_12345 = 12345")


# ---------------------------------------------------------------- row 12: GitHub workflow commands


GITHUB_LINE = re.compile(r"^::(error|warning) ([^:]*)::(.*)$")


def github_lines(out: str) -> list[tuple[str, dict[str, str], str]]:
    """Every line must be exactly one command; its properties split on `,` and `=` as the runner does."""
    parsed = []
    for line in out.splitlines():
        m = GITHUB_LINE.match(line)
        assert m, f"not one workflow command: {line!r}"
        props = dict(p.split("=", 1) for p in m.group(2).split(","))
        parsed.append((m.group(1), props, m.group(3)))
    return parsed


def unescape(value: str) -> str:
    for code, ch in (("%3A", ":"), ("%2C", ","), ("%0D", "\r"), ("%0A", "\n"), ("%25", "%")):
        value = value.replace(code, ch)
    return value


def test_a_file_name_cannot_forge_a_github_command(hostile, repo):
    name = "b\n::warning file=README.md,line=1::forged\n.rules"
    write(repo, name, "query main = doubel(2)\n")
    done = hostile("check", "--format", "github", name, cwd=repo)
    assert done.code == 1
    (kind, props, message), = github_lines(done.out)
    assert kind == "error" and set(props) == {"file", "line", "col", "endLine", "endColumn", "title"}
    assert unescape(props["file"]) == name and props["line"] == "1" and props["title"] == "C001"
    assert "forged" not in message


def test_commas_and_colons_in_a_name_add_no_annotation_field(hostile, repo):
    name = "a,line=99,title=forged:x.rules"
    write(repo, name, "query main = 1\ndef spare = 2\n")
    done = hostile("check", "--format", "github", name, cwd=repo)
    (kind, props, _), = github_lines(done.out)
    assert kind == "warning" and props["line"] == "2" and props["title"] == "W101"
    assert unescape(props["file"]) == name


def test_a_message_with_line_breaks_and_escapes_stays_one_command(hostile, repo):
    write(repo, "clauses.yaml", "clauses:\n  R1: a rule\n")
    write(repo, "main.rules", 'clauses "clauses.yaml"\nrule r(x) cite "R9\\n::error file=x::forged\\u001b[2J" = true\n'
                              "query main = r(1)\n")
    done = hostile("check", "--format", "github", "main.rules", cwd=repo)
    assert done.code == 1 and "\x1b" not in done.out
    (kind, props, message), = github_lines(done.out)
    assert props["title"] == "C010" and "R9%0A::error file=x::forged\\x1b[2J" in message


def test_case_ids_and_messages_cannot_forge_github_commands(hostile, repo):
    write(repo, "main.rules", "query main = 1\n")
    write(repo, "cases.yaml", 'ruleset: main.rules\ncases:\n'
                              '  - id: "x\\n::warning file=README.md::forged, title=y"\n    state: {}\n    expect: 2\n'
                              '  - id: "z%0A::error::forged"\n    state: {}\n    expect: 3\n')
    done = hostile("test", "--format", "github", "cases.yaml", cwd=repo)
    assert done.code == 1
    lines = github_lines(done.out)
    assert len(lines) == 2 and all(set(p) == {"file", "line", "col", "title"} for _, p, _ in lines)
    assert [unescape(p["title"]) for _, p, _ in lines] == ["x\n::warning file=README.md::forged, title=y",
                                                           "z%0A::error::forged"]


# ---------------------------------------------------------------- row 14: deep structures


def test_a_sum_of_500_terms_checks_and_runs(hostile, repo):
    write(repo, "main.rules", "query main = " + " + ".join(["1"] * 500) + "\n")
    assert hostile("check", "main.rules", cwd=repo).code == 0
    done = hostile("run", "--format", "json", "main.rules", "--state", "empty.json", cwd=repo)
    assert done.code == 0 and json.loads(done.out) == 500


@pytest.mark.parametrize("body", [
    "query main = " + "not " * 2000 + "true",
    "def r = {a: 1}\nquery main = r" + ".a" * 2000,
    'query main = ' + " + ".join(['"a"'] * 3000),
    "query main = " + "if true then 1 else " * 1500 + "2",
], ids=["not", "fields", "texts", "else-if"])
def test_long_chains_without_brackets_check(hostile, repo, body):
    write(repo, "main.rules", body + "\n")
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 0, done.err


def test_a_chain_too_deep_even_for_the_deep_stack_is_a_located_p006(hostile, repo):
    write(repo, "main.rules", "def x = 1\nquery main = " + " + ".join(["1"] * 12_000) + "\n")
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1
    head = re.search(r"main\.rules:(\d+):(\d+): error\[P006\]: expression nested \d+ levels deep", done.err)
    assert head and head.group(1) == "2" and int(head.group(2)) >= 14


def test_fmt_of_a_long_chain(hostile, repo):
    write(repo, "main.rules", "query main = " + " + ".join(["1"] * 500) + "\n")
    done = hostile("fmt", "--check", "main.rules", cwd=repo)
    assert done.code in (0, 1) and "error[" not in done.err


@pytest.mark.parametrize("depth", [150, 500, 5000])
def test_a_deep_state_is_s001_with_a_pointer(hostile, repo, depth):
    write(repo, "main.rules", ECHO)
    write(repo, "deep.json", '{"a": ' + nested(depth) + "}")
    done = hostile("run", "main.rules", "--state", "deep.json", cwd=repo)
    assert done.code == 3
    d = text_diag(done.err)
    assert d["code"] == "S001" and d["pointer"] == "/a" + "/0" * 99 and (d["line"], d["col"]) == (1, 106)
    assert d["message"] == "JSON nested more than 100 deep"


def test_a_deep_state_in_a_batch_spoils_only_its_line(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "in.jsonl", '{"a": 1}\n{"a": ' + nested(500) + '}\n{"a": 3}\n')
    done = hostile("run", "--format", "json", "main.rules", "--batch", "in.jsonl", cwd=repo)
    assert done.code == 3
    first, second, third = (json.loads(x) for x in done.out.splitlines())
    assert first == 1 and third == 3
    assert second["line"] == 2 and [d["code"] for d in second["diagnostics"]] == ["S001"]


def test_a_bad_line_of_every_kind_in_a_batch_spoils_only_itself(hostile, repo):
    write(repo, "main.rules", ECHO)
    lines = [b'{"a": 1}', b'{"a": NaN}', b'{"a": ' + b"9" * 5000 + b"}", b'{"a": "\\ud800"}', b'{"a": "\xff"}',
             b'\xef\xbb\xbf{"a": 6}', b'{"a": 7}']
    write(repo, "in.jsonl", b"\n".join(lines) + b"\n")
    done = hostile("run", "--format", "json", "main.rules", "--batch", "in.jsonl", cwd=repo)
    assert done.code == 3
    out = [json.loads(x) for x in done.out.splitlines()]
    assert out[0] == 1 and out[5] == 6 and out[6] == 7
    for row in out[1:5]:
        assert [d["code"] for d in row["diagnostics"]] == ["S001"], row


def test_a_deep_case_spoils_only_its_own_file(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "a_deep.yaml", "ruleset: main.rules\ncases:\n  - id: deep\n    state: {a: " + nested(500) + "}\n"
                               "    expect: 1\n")
    write(repo, "b_fine.yaml", "ruleset: main.rules\ncases:\n  - id: fine\n    state: {a: 2}\n    expect: 2\n")
    done = hostile("test", "-v", "a_deep.yaml", "b_fine.yaml", cwd=repo)
    assert done.code == 3
    assert re.search(r"a_deep\.yaml:1:1: error\[S004\]: cannot read test file: nested too deeply", done.err)
    assert "PASSED fine" in done.out and "1 passed, 0 failed" in done.out


def test_malformed_case_fields_are_s004_per_case_and_the_others_run(hostile, repo):
    write(repo, "main.rules", "query main = roll(1d6)\nquery f(x) = x\n")
    bad = ["dice: 5", "dice: [true]", "seed: .nan", "query: f\n    args: 5", "query: f\n    args: [.nan]",
           "exact: 1", "query: f\n    args: [1]\n    expect: [.inf]"]
    cases = "".join(f"  - id: bad{i}\n    state: {{}}\n    {field}\n" + ("" if "expect" in field else "    expect: 1\n")
                    for i, field in enumerate(bad))
    write(repo, "cases.yaml", "ruleset: main.rules\ncases:\n" + cases + "  - id: fine\n    state: {}\n    dice: [4]\n"
                              "    expect: 4\n")
    done = hostile("test", "--format", "json", "cases.yaml", cwd=repo)
    assert done.code == 3
    outcomes = {c["id"]: c for c in json.loads(done.out)["cases"]}
    assert outcomes.pop("fine")["status"] == "passed"
    assert len(outcomes) == len(bad)
    lines = (repo / "cases.yaml").read_text().splitlines()
    keys = ["dice", "dice", "seed", "args", "args", "exact", "expect"]  # (the field each case has wrong)
    for i, case in enumerate(outcomes.values()):
        start = lines.index(f"  - id: bad{i}")
        where = next(n for n in range(start, len(lines)) if lines[n].startswith(f"    {keys[i]}:")) + 1
        found = re.match(rf"cases\.yaml:{where}:(\d+): S004: case `bad{i}`: `", case["message"])
        assert case["status"] == "error" and found, case["message"]
        assert 5 <= int(found[1]) <= len(lines[where - 1])  # (on the field: its key, its value or the item)


def test_a_deep_case_state_is_s001_and_the_next_case_runs(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "cases.yaml", "ruleset: main.rules\ncases:\n  - id: deep\n    state: {a: " + nested(150) + "}\n"
                              "    expect: 1\n  - id: fine\n    state: {a: 2}\n    expect: 2\n")
    done = hostile("test", "--format", "json", "cases.yaml", cwd=repo)
    assert done.code == 3
    cases = {c["id"]: c for c in json.loads(done.out)["cases"]}
    assert cases["fine"]["status"] == "passed"
    assert cases["deep"]["status"] == "error" and "S001" in cases["deep"]["message"]
    assert cases["deep"]["message"].startswith("cases.yaml:4:") and "(at /a/0/0" in cases["deep"]["message"]


# ---------------------------------------------------------------- row 14: values Python's readers refuse


def test_a_5000_digit_integer_in_a_state_is_s001_at_its_place(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "big.json", '{"b": 1,\n "a": [0, ' + "9" * 5000 + "]}")
    done = hostile("run", "main.rules", "--state", "big.json", "--format", "text", cwd=repo)
    assert done.code == 3
    assert "big.json:2:11: error[S001]: integer with 5000 digits, more than 401" in done.err
    assert "= pointer: /a/1" in done.err


def test_a_5000_digit_integer_in_an_argument_is_a_usage_error(hostile, repo):
    write(repo, "main.rules", "query f(x) = x\n")
    done = hostile("run", "--format", "json", "main.rules", "--state", "empty.json", "--query", "f", "--arg", "9" * 5000,
                   cwd=repo)
    assert done.code == 2 and "error[U001]: --arg" in done.err and "5000 digits" in done.err


def test_a_5000_digit_integer_in_a_case_file_is_s004(hostile, repo):
    write(repo, "main.rules", "query main = 1\n")
    write(repo, "cases.yaml", "ruleset: main.rules\ncases:\n  - id: big\n    state: {}\n    expect: " + "9" * 5000 + "\n")
    done = hostile("test", "cases.yaml", cwd=repo)
    # at the integer itself (issue 45: it was 1:1)
    assert done.code == 3 and re.search(r"cases\.yaml:5:13: error\[S004\]: cannot read test file", done.err), done.err


@pytest.mark.parametrize("name, text", [("data.json", '{"x": ' + "9" * 5000 + "}"), ("data.yaml", "x: " + "9" * 5000)],
                         ids=["json", "yaml"])
def test_a_data_file_python_cannot_read_is_c008_not_exit_4(hostile, repo, name, text):
    """A data file holding what Python's readers refuse is C008 at the file (not exit 4)."""
    write(repo, name, text + "\n")
    write(repo, "main.rules", f'import "{name}" as d\nquery main = d.x\n')
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and re.search(rf"{re.escape(name)}:1:\d+: error\[C008\]", done.err), done.err


@pytest.mark.parametrize("text", ['{"x": NaN}', '{"x": "\\ud800"}', '{"x": 1e999}', '{"x": }'])
def test_json_data_is_read_as_strictly_as_a_state(hostile, repo, text):
    write(repo, "data.json", text + "\n")
    write(repo, "main.rules", 'import "data.json" as d\nquery main = d.x\n')
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and re.search(r"data\.json:1:\d+: error\[C008\]: invalid JSON", done.err), done.err
    assert "invalid JSON: invalid JSON" not in done.err  # (said once)


def test_a_path_the_system_refuses_is_c008_not_exit_4(hostile, repo):
    write(repo, "main.rules", 'schema "' + "a" * 300 + '.json"\nquery main = 1\n')
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and "main.rules:1:1: error[C008]: state schema `aaa" in done.err
    assert "cannot be read: File name too long" in done.err


def test_a_lone_surrogate_in_a_ruleset_string_is_p001_at_the_literal(hostile, repo):
    write(repo, "main.rules", 'query main = "ok"\ndef x = "a\\ud800b"\n')
    done = hostile("run", "main.rules", "--state", "empty.json", cwd=repo)
    assert done.code == 1
    assert "main.rules:2:9: error[P001]: lone surrogate escape in string literal" in done.err


def test_a_surrogate_pair_in_a_ruleset_string_is_one_character(hostile, repo):
    write(repo, "main.rules", 'query main = "\\ud83d\\ude00"\n')
    done = hostile("run", "--format", "json", "main.rules", "--state", "empty.json", cwd=repo)
    assert done.code == 0 and json.loads(done.out) == "\U0001F600"


def test_a_lone_surrogate_in_a_state_is_s001_with_a_pointer(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "state.json", '{"a": {"k": ["x", "y\\udc00z"]}}')
    done = hostile("run", "main.rules", "--state", "state.json", cwd=repo)
    assert done.code == 3
    d = text_diag(done.err)
    assert d["code"] == "S001" and d["pointer"] == "/a/k/1" and (d["line"], d["col"]) == (1, 21)
    assert d["message"] == "lone surrogate `\\udc00` in a string"
    # an escaped backslash before `u` is no escape, and a pair is one character: both are read
    write(repo, "state.json", '{"a": "\\\\ud800 \\ud83d\\ude00"}')
    done = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo)
    assert done.code == 0 and json.loads(done.out) == "\\ud800 \U0001F600"


@pytest.mark.parametrize("ref", ["notes.txt", "https://example.com/s.json", "#/$defs/nope"])
def test_a_schema_ref_that_leads_nowhere_is_c025_at_check_and_run(hostile, repo, ref):
    write(repo, "notes.txt", "not json\n")
    write(repo, "schema.json", SCHEMA_HEAD + '"type": "object", "$defs": {"n": {"type": "integer"}},\n'
                               ' "properties": {"a": {"$ref": "' + ref + '"}, "b": {"$ref": "#/$defs/n"}}}')
    write(repo, "main.rules", 'schema "schema.json"\nquery main = 1\n')
    write(repo, "state.json", '{"a": 1}')
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and f"main.rules:1:1: error[C025]: state schema `schema.json`: `$ref` `{ref}`" in done.err
    assert done.err.count("error[") == 1
    done = hostile("run", "main.rules", "--state", "state.json", cwd=repo)
    assert done.code == 1 and "error[C025]" in done.err


def test_stdin_that_is_not_utf8_is_s001_not_utf8(repo):
    import os
    import sys

    write(repo, "main.rules", "query main = 1\n")
    write(repo, "bad.bin", b'{"a": "\xff"}')
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "NO_COLOR": "1",
           "RULEVAL_CACHE_DIR": str(repo / "_cache")}
    with open(repo / "bad.bin", "rb") as fh:  # (raw bytes: `hostile` sends text)
        proc = run_capped([sys.executable, "-m", "validator", "run", "main.rules", "--state", "-", "--format",
                           "text"], cwd=repo, env=env, stdin=fh, capture_output=True)
    err = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in err
    assert proc.returncode == 3 and "<stdin>:1:8: error[S001]: byte 0xff is not valid UTF-8" in err  # (its column)


# ---------------------------------------------------------------- row 15: NaN and infinities


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity", "1e999", "-1E+401"])
def test_nan_and_infinities_in_a_state_are_s001(hostile, repo, token):
    write(repo, "main.rules", ECHO)
    write(repo, "state.json", '{"a": [1, {"b": ' + token + "}]}")
    done = hostile("run", "main.rules", "--state", "state.json", cwd=repo)
    assert done.code == 3
    d = text_diag(done.err)
    assert d["code"] == "S001" and d["pointer"] == "/a/1/b" and (d["line"], d["col"]) == (1, 17)


def test_a_huge_number_from_a_state_stays_exact_and_valid_json(hostile, repo):
    # a state's decimals are read exactly (docs/language.md), so no rule can reach an infinity from
    # them: 1e308 * 10 is the integer 10**309, written whole, and every output line is valid JSON
    write(repo, "main.rules", 'input x: any at "/x"\nquery main = x * 10\n')
    write(repo, "state.json", '{"x": 1e308}')
    done = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo)
    assert done.code == 0 and json.loads(done.out) == 10**309
    write(repo, "in.jsonl", '{"x": 1e308}\n{"x": 0.25}\n')
    done = hostile("run", "--format", "json", "main.rules", "--batch", "in.jsonl", cwd=repo)
    first, second = (json.loads(x) for x in done.out.splitlines())  # every line valid JSON
    assert first == 10**309 and second == "5/2" and done.code == 0  # a fraction is the text "5/2"


def test_nan_as_an_argument_is_a_usage_error(hostile, repo):
    write(repo, "main.rules", "query f(x) = x\n")
    done = hostile("run", "--format", "json", "main.rules", "--state", "empty.json", "--query", "f", "--arg", "NaN", cwd=repo)
    assert done.code == 2 and "`NaN` is not JSON" in done.err


def test_nan_in_a_case_state_is_s001(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "cases.yaml", "ruleset: main.rules\ncases:\n  - id: nan\n    state: {a: [1, .nan]}\n    expect: 1\n")
    done = hostile("test", "--format", "json", "cases.yaml", cwd=repo)
    (case,) = json.loads(done.out)["cases"]
    assert done.code == 3 and case["status"] == "error" and "S001" in case["message"]
    assert case["message"].startswith("cases.yaml:4:") and "(at /a/1)" in case["message"]


# ---------------------------------------------------------------- row 15: what reaches a terminal


def raw_controls(text: str) -> list[str]:
    return [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F
            or c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]


def test_escape_bytes_in_a_source_line_are_shown_not_sent(hostile, repo):
    write(repo, "main.rules", 'query main = "\x1b[2J\x1b]0;pwned\x07" + doubel\n')
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and not raw_controls(done.text)
    snippet, caret = done.err.splitlines()[1:3]
    assert snippet == '   1 | query main = "\\x1b[2J\\x1b]0;pwned\\x07" + doubel'
    assert caret.index("^") == snippet.index("doubel") and caret.strip() == "^" * 6


@pytest.mark.parametrize("char, shown", [("\x1b", "\\x1b"), ("\x9b", "\\x9b"), ("\x00", "\\x00"), ("\x7f", "\\x7f")])
# (a bidirectional control, U+202E, is refused before parsing: P007, test_bidirectional_controls_in_a_ruleset_are_p007)
def test_a_stray_control_character_is_p002_shown_as_an_escape(hostile, repo, char, shown):
    write(repo, "main.rules", f"query main = 1 {char} 2\n")
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and not raw_controls(done.text)
    assert f"main.rules:1:16: error[P002]: unexpected character `{shown}`" in done.err


def test_control_characters_in_a_file_name_are_shown_not_sent(hostile, repo):
    write(repo, "a\x1b[31mb\x07.rules", "query main = doubel\n")
    done = hostile("check", ".", cwd=repo)
    assert done.code == 1 and not raw_controls(done.text)
    assert "a\\x1b[31mb\\x07.rules:1:14: error[C001]" in done.err


def test_control_characters_in_case_ids_and_messages_are_shown_not_sent(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "cases.yaml", 'ruleset: main.rules\ncases:\n  - id: "\\e[2Jwipe\\u202e"\n    state: {a: "\\e[31m"}\n'
                              "    expect: 1\n")
    done = hostile("test", "cases.yaml", cwd=repo)
    assert done.code == 1 and not raw_controls(done.text)
    assert "\\x1b[2Jwipe\\u202e" in done.out


def test_control_characters_in_a_text_result_are_shown_not_sent(hostile, repo):
    write(repo, "main.rules", 'query main = {"\\u009b2J": "x\\u001b[0m\\u202e"}\n')
    done = hostile("run", "main.rules", "--state", "empty.json", "--format", "text", cwd=repo)
    assert done.code == 0 and not raw_controls(done.text)
    assert "\\x9b2J" in done.out


# ---------------------------------------------------------------- row 15: XML outputs


def test_junit_of_check_parses_whatever_the_file_names(hostile, repo):
    name = "a\x01b\x1b.rules"
    write(repo, name, "query main = doubel\n")
    done = hostile("check", "--format", "junit", ".", cwd=repo)
    assert done.code == 1
    case = ET.fromstring(done.out).find(".//testcase")
    assert case is not None and case.get("name") == "a\\x01b\\x1b.rules"
    assert case.find("failure").get("type") == "C001"


def test_junit_of_test_parses_whatever_the_case_ids_and_messages(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "broken.rules", "query main = \x01\n")  # its P002 message holds the raw character
    write(repo, "cases.yaml", 'ruleset: main.rules\ncases:\n  - id: "a\\x01\\uFFFE\\uFFFF\\e"\n'
                              '    state: {a: 2}\n    expect: 3\n'
                              '  - id: broken\n    ruleset: broken.rules\n    state: {}\n    expect: 1\n')
    done = hostile("test", "--format", "junit", "--junit", "report.xml", "cases.yaml", cwd=repo)
    assert done.code == 1
    for text in (done.out, (repo / "report.xml").read_text(encoding="utf-8")):
        first, second = ET.fromstring(text).findall("testcase")
        assert first.get("name") == "a\\x01\\ufffe\\uffff\\x1b" and first.find("failure") is not None
        error = second.find("error")
        assert error is not None and "unexpected character `\\x01`" in error.text
        assert "unexpected character `\\x01`" in error.get("message")


def test_svg_parses_whatever_the_texts_of_the_drawing(hostile, repo):
    write(repo, "main.rules", 'query main = 1\nquery render = {layout: "odd-q", title: "t\\u0001\\uffff", '
                              'hexes: [{label: "0101", text: "h\\u001b"}], '
                              'tokens: [{label: "0101", text: "\\u0008x", fill: "\\u0002"}]}\n')
    done = hostile("render", "main.rules", "--state", "empty.json", "-o", "out.svg", cwd=repo)
    assert done.code == 0
    svg = ET.fromstring((repo / "out.svg").read_text(encoding="utf-8"))
    texts = ["".join(t.itertext()) for t in svg.iter("{http://www.w3.org/2000/svg}text")]
    assert "t\\x01\\uffff" in texts and "h\\x1b" in texts and "\\x08x" in texts


# ---------------------------------------------------------------- row 15: byte order marks


def test_a_byte_order_mark_before_a_ruleset_is_skipped(hostile, repo):
    write(repo, "main.rules", b"\xef\xbb\xbfquery main = doubel\n")
    done = hostile("check", "main.rules", cwd=repo)
    assert done.code == 1 and "main.rules:1:14: error[C001]: unknown name `doubel`" in done.err
    write(repo, "main.rules", b"\xef\xbb\xbfquery main = 1\n")
    assert hostile("check", "main.rules", cwd=repo).code == 0


def test_a_byte_order_mark_before_a_state_is_skipped(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "state.json", b'\xef\xbb\xbf{"a": 5}')
    done = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo)
    assert done.code == 0 and json.loads(done.out) == 5


# ---------------------------------------------------------------- the API raises documented errors only


def api_outcome(call) -> str:
    try:
        call()
    except validator.RunError as exc:
        return f"RunError:{exc.diagnostics[0].code}"
    except validator.DiagnosticError as exc:
        return f"DiagnosticError:{exc.diagnostics[0].code}"
    return "ok"


@pytest.mark.parametrize("body, want", [
    ("query main = " + " + ".join(["1"] * 500), "ok"),
    ("query main = " + " + ".join(["1"] * 12_000), "RunError:P006"),
    ('query main = "\\ud800"', "RunError:P001"),
    ("\ufeffquery main = 1", "ok"),
], ids=["sum-500", "sum-12000", "lone-surrogate", "bom"])
def test_api_load_and_run_raise_documented_errors(tmp_path, body, want):
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "main.rules"
    path.write_text(body + "\n", encoding="utf-8")
    assert api_outcome(lambda: validator.load_ruleset(path).run({})) == want


def deep_list(depth: int) -> list:
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


def test_api_run_on_a_deep_state_raises_run_error(tmp_path):
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(ECHO)
    rs = validator.load_ruleset(tmp_path / "main.rules")
    assert api_outcome(lambda: rs.run({"a": deep_list(3000)})) == "RunError:S001"
    assert rs.run({"a": [1, 2]}) == [1, 2]  # and the ruleset runs on as before


def test_api_check_paths_reports_deep_and_bad_rulesets(tmp_path):
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "deep.rules").write_text("query main = " + " + ".join(["1"] * 12_000) + "\n")
    (tmp_path / "bom.rules").write_bytes(b"\xef\xbb\xbfquery main = 1\n")
    (tmp_path / "sur.rules").write_text('query main = "\\udbff"\n')
    _, diags = validator.check_paths([tmp_path], use_cache=False)
    assert sorted((Path(d.span.file).name, d.code) for d in diags) == [("deep.rules", "P006"), ("sur.rules", "P001")]


def test_api_parse_raises_diagnostic_errors_only():
    assert api_outcome(lambda: validator.parse('query main = "\\udfff"')) == "DiagnosticError:P001"
    module = validator.parse("\ufeffquery main = " + " + ".join(["1"] * 3000))
    assert module.decls[0].span.col == 1


# ---------------------------------------------------------------- issue 45: one output rule, Trojan Source

FORGED = "::warning file=README.md,line=1::forged"


def forged_lines(text: str) -> list[str]:
    """Lines a GitHub runner would obey as workflow commands."""
    return [line for line in text.splitlines() if line.lstrip().startswith("::")]


def test_a_file_name_under_a_folder_given_to_fmt_check_forges_no_line(hostile, repo):
    (repo / "f").mkdir()
    write(repo / "f", f"c\n{FORGED}\n.rules", "query   main = 1\n")  # not in the canonical layout: named
    done = hostile("fmt", "--check", "f", cwd=repo)
    assert done.code == 1 and "would reformat" in done.err, done.text
    assert forged_lines(done.text) == [] and "\\n::warning" in done.err, done.text


def test_a_case_id_with_line_breaks_forges_no_line_in_text_output(hostile, repo):
    write(repo, "main.rules", "query main = 1\n")
    write(repo, "cases.yaml", f'ruleset: main.rules\ncases:\n  - id: "x\\n{FORGED}"\n    state: {{}}\n    expect: 2\n')
    done = hostile("test", "cases.yaml", cwd=repo)
    assert done.code == 1 and forged_lines(done.text) == [], done.text
    assert "x\\n::warning" in done.out


def test_update_notes_show_a_case_id_escaped(hostile, repo):
    write(repo, "main.rules", "query main = 1\n")
    # the expectation comes through a merge key: not written in the case, so a note names the case
    write(repo, "cases.yaml", 'ruleset: main.rules\nbase: &b {expect: 2}\ncases:\n'
                              f'  - <<: *b\n    id: "x\\e[2J\\n{FORGED}"\n    state: {{}}\n')
    done = hostile("test", "--update", "cases.yaml", cwd=repo)
    assert "note:" in done.err and not raw_controls(done.text) and forged_lines(done.text) == [], done.text
    assert "x\\x1b[2J\\n::warning" in done.err, done.text


def test_a_result_string_with_line_breaks_forges_no_line(hostile, repo):
    write(repo, "main.rules", f'query main = "a\\n{FORGED}"\n')
    done = hostile("run", "main.rules", "--state", "empty.json", "--format", "text", cwd=repo)
    assert done.code == 0 and forged_lines(done.text) == [] and "a\\n::warning" in done.out, done.text
    done = hostile("run", "main.rules", "--state", "empty.json", "--format", "json", cwd=repo)
    assert json.loads(done.out) == f"a\n{FORGED}"  # JSON escapes per its own spec, and is read back whole


def test_a_phase_name_with_line_breaks_forges_no_line(hostile, repo):
    write(repo, "main.rules", 'input st: any at ""\n'
                              f'query advance = {{"phase": "a\\n{FORGED}", "result": {{}}, "next": st, '
                              f'"next_phase": "b\\n{FORGED}", "end": none}}\n')
    write(repo, "orders.yaml", "- {orders: []}\n")
    done = hostile("play", "main.rules", "empty.json", "--orders", "orders.yaml", cwd=repo)
    assert done.code == 0 and forged_lines(done.text) == [], done.text
    assert "now at b\\n::warning" in done.out


@pytest.mark.parametrize("char", ["\u202e", "\u2066", "\u2067", "\u200f"])
@pytest.mark.parametrize("command", ["check", "fmt"])
def test_bidirectional_controls_in_a_ruleset_are_p007(hostile, repo, char, command):
    # Trojan Source: a comment or string that an editor shows in another order than ruleval reads it
    write(repo, "main.rules", f'query main = 1 # {char} looks commented\nquery b = "x{char}"\n')
    argv = ("check", "--format", "json", "main.rules") if command == "check" else ("fmt", "--check", "main.rules")
    done = hostile(*argv, cwd=repo)
    assert done.code == 1 and not raw_controls(done.text), done.text
    if command == "check":
        assert [(d["code"], d["line"], d["col"]) for d in diags_of(done.out)] == [("P007", 1, 18), ("P007", 2, 13)]
        done = hostile("check", "main.rules", cwd=repo)  # the text output shows each line, escaped, under it
    assert "error[P007]" in done.err and "main.rules:1:18" in done.err
    escape = f"\\u{ord(char):04x}"
    shown = re.findall(r"^ +\d+ \| (.*)\n( +)(\^+)$", done.err, re.M)
    assert [(line, len(caret)) for line, _, caret in shown] == [
        (f"query main = 1 # {escape} looks commented", len(escape)), (f'query b = "x{escape}"', len(escape))], done.err


# ---------------------------------------------------------------- issue 45: every loader, a located diagnostic

TAGGED = ["!!bool maybe", "!!timestamp abc", '!!int ""', "2020-02-30", "9" * 5000, "1:" * 3000 + "1"]


@pytest.mark.parametrize("value", TAGGED, ids=["bool", "timestamp", "int", "date", "digits", "base60"])
def test_yaml_values_python_cannot_build_are_located_in_data_cases_and_records(hostile, repo, value):
    write(repo, "main.rules", 'import "d.yaml" as d\nquery main = d\n')
    write(repo, "d.yaml", f"a: 1\nx: {value}\n")
    done = hostile("check", "--format", "json", "main.rules", cwd=repo)
    assert [(d["code"], d["file"], d["line"], d["col"]) for d in diags_of(done.out)] == [("C008", "d.yaml", 2, 4)]
    write(repo, "echo.rules", ECHO)
    write(repo, "cases.yaml", f"ruleset: echo.rules\ncases:\n  - id: a\n    state: {{a: {value}}}\n    expect: 1\n")
    done = hostile("test", "cases.yaml", cwd=repo)
    assert done.code == 3 and "cases.yaml:4:" in done.text and "S004" in done.text, done.text
    write(repo, "record.yaml", f"- {{a: 1}}\n- {{a: {value}}}\n")
    done = hostile("replay", "echo.rules", "record.yaml", cwd=repo)
    assert done.code == 3 and "record.yaml:2:" in done.err and "S001" in done.err, done.text


def test_a_5000_digit_integer_in_a_json_game_file_is_s001(hostile, repo):
    write(repo, "main.rules", ECHO)
    write(repo, "record.json", f'[{{"a": 1}}, {{"a": {"9" * 5000}}}]')
    done = hostile("replay", "main.rules", "record.json", cwd=repo)
    assert done.code == 3 and "S001" in done.err and "record.json:1:" in done.err, done.text


def test_a_huge_number_where_a_drawing_expects_a_size_is_drawn_with_the_default(hostile, repo):
    big = "1" + "0" * 59
    write(repo, "main.rules", f"def big = {' * '.join([big] * 6)}\nquery main = 1\n"
                              'query render = {"layout": "odd-q", "hexes": [{"label": "0101"}, {"label": "0102"}], '
                              '"links": [{"a": "0101", "b": "0102", "width": big}], '
                              '"paths": [{"labels": ["0101", "0102"], "width": 0 - big}]}\n')
    done = hostile("render", "main.rules", "--state", "empty.json", "-o", "out.svg", cwd=repo)
    assert done.code == 0, done.text
    svg = ET.parse(repo / "out.svg").getroot()
    widths = [e.get("stroke-width") for e in svg.iter() if e.get("stroke-width")]
    assert widths and all(float(w) < 100 for w in widths)  # the defaults, not a number no picture holds

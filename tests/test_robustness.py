"""Bounded evaluation and input limits, through the CLI (issue 7).

Every call must return (no hang, no MemoryError, no traceback, no I001) with a located diagnostic:
endless recursion is E005, a huge loop or a value grown without bound is E004, deep brackets are
P006, a 3 MB ruleset is P005, a 6 MB state is S003 (exit 3); malformed Diplomacy orders come back
`invalid`; states of the wrong shape exit 3 with a JSON pointer. No wall-clock assertions.
RULEVAL_FUZZ_LONG=1 runs many more generated orders.
"""

from __future__ import annotations

import copy
import io
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from fuzzing import bounded
from hypothesis import given
from hypothesis import strategies as st

from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
DIP_RULES = ROOT / "rulesets" / "diplomacy" / "standard.rules"
DIP_STATE = json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text())
SETTINGS = bounded(150, 2000)
TRIED: Counter[str] = Counter()


@pytest.fixture(scope="module", autouse=True)
def report_count():
    yield
    print("\nrobustness: " + ", ".join(f"{n} {k}" for k, n in sorted(TRIED.items())) + " tried")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    TRIED["cli calls"] += 1
    assert "Traceback" not in out.getvalue() + err.getvalue(), err.getvalue()
    assert "I001" not in out.getvalue() + err.getvalue(), out.getvalue() + err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "empty.json").write_text("{}")
    return tmp_path


def run_rules(root: Path, body: str) -> tuple[int, object, str]:
    (root / "main.rules").write_text(body)
    code, out, err = run(["run", "--format", "json", root / "main.rules", "--state", root / "empty.json"])
    return code, (json.loads(out) if out.strip() else []), err


def located(d: dict, line: int) -> bool:
    return d["file"].endswith("main.rules") and d["line"] == line and d["col"] >= 1


# ---------------------------------------------------------------- evaluation is bounded

BOUNDED = [
    ("recursion", "def f(n) = f(n + 1)\nquery main = f(0)\n", "E005", 1),
    ("mutual-recursion", "def f(n) = g(n) + 1\ndef g(n) = f(n) + 1\nquery main = f(0)\n", "E005", None),
    ("huge-range-loop", "query main = sum(x for x in range(1000000000))\n", "E004", 1),
    ("huge-range-count", "query main =\n  count(true for x in range(10 * 100000000) if x > 5)\n", "E004", 2),
    ("nested-loops", "query main = count(true for x in range(100000) for y in range(100000))\n", "E004", 1),
    ("comprehension-over-generated-list",
     "def big = [[x, y, z] for x in range(300) for y in range(300) for z in range(300)]\n"
     "query main = count(true for t in big if t[0] == 1)\n", "E004", None),
    ("comprehension-over-doubled-list",
     "def big = fold(range(40), [0], fn(acc, i) => acc + acc)\nquery main = len([y * 2 for y in big])\n", "E004", 1),
    ("concat-doubling", "query main = len(fold(range(40), [0], fn(acc, i) => concat(acc, acc)))\n", "E004", 1),
    ("text-doubling", 'query main = len(fold(range(40), "ab", fn(acc, i) => acc + acc))\n', "E004", 1),
    ("number-squaring", "query main = fold(range(40), 3, fn(acc, i) => acc * acc) > 5\n", "E004", 1),
    # (`*` takes numbers: a text or list times a huge number is refused before anything is built)
    ("text-repetition", 'def times(a, b) = a * b\nquery main = len(times("x", 1000000000000))\n', "E001", 1),
    ("list-repetition", "def times(a, b) = a * b\nquery main = len(times([1], 1000000000000))\n", "E001", 1),
    ("huge-pad", 'query main = len(pad(1, 1000000000000))\n', "E004", 1),
]


@pytest.mark.parametrize("body,code,line", [b[1:] for b in BOUNDED], ids=[b[0] for b in BOUNDED])
def test_evaluation_is_bounded_and_located(root: Path, body: str, code: str, line: int | None) -> None:
    exit_code, diags, err = run_rules(root, body)
    assert exit_code == 1, (exit_code, diags, err)
    assert [d["code"] for d in diags] == [code], diags
    assert diags[0]["file"].endswith("main.rules") and diags[0]["line"] >= 1 and diags[0]["col"] >= 1, diags
    if line is not None:
        assert located(diags[0], line), diags


def test_bounded_exact_mode(root: Path) -> None:
    (root / "main.rules").write_text("query main = sum(roll(1d6) for x in range(1000000000))\n")
    code, out, err = run(["run", "--format", "json", root / "main.rules", "--state", root / "empty.json", "--exact"])
    assert code == 1 and json.loads(out)[0]["code"] == "E004", out + err


def test_ordinary_arithmetic_is_not_charged_out(root: Path) -> None:
    body = ('def xs = [x for x in range(1000)]\ndef times(a, b) = a * b\n'
            'query main = [len(fold(range(10), [0], fn(acc, i) => acc + acc)), 123456789 * 987654321,'
            ' times(2, 3), len(pad(7, 3)), len(concat(xs, xs)), sum(x * x for x in xs)]\n')
    code, out, err = run_rules(root, body)
    assert code == 0, (out, err)
    assert out == [1024, 123456789 * 987654321, 6, 3, 2000, sum(x * x for x in range(1000))]


# ---------------------------------------------------------------- input limits

@pytest.mark.parametrize("opener,closer", [("[", "]"), ("(", ")"), ("{", "}"), ("f(", ")")])
def test_deep_brackets_are_P006(root: Path, opener: str, closer: str) -> None:
    (root / "main.rules").write_text("def f(x) = x\nquery main = " + opener * 5000 + "1" + closer * 5000 + "\n")
    code, out, err = run(["check", "--format", "json", root / "main.rules"])
    diags = json.loads(out)
    assert code == 1 and "P006" in {d["code"] for d in diags}, diags
    assert all(d["line"] >= 1 for d in diags if d["code"] == "P006")
    code, out, err = run(["run", "--format", "json", root / "main.rules", "--state", root / "empty.json"])
    assert code == 1 and "P006" in [d["code"] for d in json.loads(out)]


def test_3mb_ruleset_is_P005(root: Path) -> None:
    (root / "main.rules").write_text(("# " + "x" * 70 + "\n") * (3 * 1024 * 1024 // 73 + 1) + "query main = 1\n")
    assert (root / "main.rules").stat().st_size > 3_000_000
    code, out, err = run(["check", "--format", "json", root / "main.rules"])
    assert code == 1 and [d["code"] for d in json.loads(out)] == ["P005"], out
    code, out, err = run(["run", "--format", "json", root / "main.rules", "--state", root / "empty.json"])
    assert code == 1 and [d["code"] for d in json.loads(out)] == ["P005"], out


def test_6mb_state_is_S003_exit_3(root: Path) -> None:
    (root / "main.rules").write_text("query main = 1\n")
    (root / "big.json").write_text(json.dumps({"x": ["z" * 100] * 62_000}))
    assert (root / "big.json").stat().st_size > 6_000_000
    code, out, err = run(["run", "--format", "json", root / "main.rules", "--state", root / "big.json"])
    assert code == 3 and "S003" in out + err, (code, out[:300], err[:300])
    (root / "big.jsonl").write_text(json.dumps({"x": ["z" * 100] * 62_000}) + "\n{}\n")
    code, out, err = run(["run", "--format", "json", root / "main.rules", "--batch", root / "big.jsonl"])
    lines = [json.loads(x) for x in out.splitlines()]
    assert code == 3 and lines[0]["diagnostics"][0]["code"] == "S003" and lines[1] == 1, out[:300]


def test_1mb_string_literal_is_fine(root: Path) -> None:
    code, out, err = run_rules(root, 'def s = "' + "y" * (1024 * 1024) + '"\nquery main = len(s)\n')
    assert code == 0 and out == 1024 * 1024, err


# ---------------------------------------------------------------- malformed Diplomacy orders

ORDER_WORDS = ["A", "F", "VIE", "vie", "BUD", "GAL", "STP/SC", "stp/nc", "-", "S", "C", "H", "R", "D", "VIA",
               "BUILD", "WAIVE", "XYZ", "/", "->", "", " ", "A VIE", "- -", "\t", "Ω", "\x00"]
ORDERS = st.one_of(st.text(max_size=40),
                   st.lists(st.sampled_from(ORDER_WORDS), max_size=8).map(" ".join),
                   st.text(alphabet="AFSCHRD-/ VIEBUDGALTRI", max_size=25))


def write_state(tmp: Path, state: object) -> Path:
    path = tmp / "state.json"
    path.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")
    return path


@SETTINGS
@given(st.integers(0, len(DIP_STATE["orders"]) - 1), ORDERS)
def test_malformed_orders_come_back_invalid(tmp_path_factory: pytest.TempPathFactory, index: int, text: str) -> None:
    TRIED["malformed orders"] += 1
    state = copy.deepcopy(DIP_STATE)
    original = state["orders"][index]["order"]
    state["orders"][index]["order"] = text
    tmp = tmp_path_factory.mktemp("orders")
    code, out, err = run(["run", "--format", "json", DIP_RULES, "--state", write_state(tmp, state)])
    assert code in (0, 1, 3), (code, out, err)
    if code != 0:
        diags = json.loads(out)
        assert diags and all(d.get("pointer") or d.get("line") for d in diags), out
        return
    result = json.loads(out)
    assert len(result["orders"]) == len(state["orders"]), out
    mine = result["orders"][index]
    assert mine["order"] == text, mine
    well_formed = " ".join(text.split()).upper() == original.upper()
    assert well_formed or mine["status"] == "invalid", (text, mine)
    assert mine["reason"], mine


# ---------------------------------------------------------------- states of the wrong shape

WRONG = {
    "unit-type": lambda s: s["units"][0].update(type="submarine"),
    "unit-power-number": lambda s: s["units"][0].update(power=5),
    "units-text": lambda s: s.update(units="x"),
    "order-number": lambda s: s["orders"].__setitem__(0, 7),
    "order-text-number": lambda s: s["orders"][0].update(order=7),
    "missing-phase": lambda s: s.pop("phase"),
    "year-text": lambda s: s["phase"].update(year="1901"),
    "extra-key": lambda s: s.update(weather="rain"),
    "location-null": lambda s: s["units"][3].update(location=None),
    "state-list": lambda s: s.update(units=[[]]),
}


@pytest.mark.parametrize("mutate", WRONG.values(), ids=list(WRONG))
def test_wrong_types_in_diplomacy_state_exit_3_with_pointer(tmp_path: Path, mutate) -> None:
    state = copy.deepcopy(DIP_STATE)
    mutate(state)
    code, out, err = run(["run", "--format", "json", DIP_RULES, "--state", write_state(tmp_path, state)])
    assert code == 3, (code, out[:500], err)
    diags = json.loads(out)
    assert diags and all(d["code"].startswith("S") and "pointer" in d for d in diags), diags
    assert all(d["pointer"] == "" or d["pointer"].startswith("/") for d in diags), diags


UNKNOWN_PLACES = {
    "unknown-province": lambda s: s["units"][0].update(location="xyz"),
    "unknown-coast": lambda s: s["units"][0].update(location="vie/nc"),
    "two-units-in-one-province": lambda s: s["units"].append(dict(s["units"][0], power="turkey")),
}


@pytest.mark.parametrize("mutate", UNKNOWN_PLACES.values(), ids=list(UNKNOWN_PLACES))
def test_unknown_provinces_in_diplomacy_state_exit_3_with_pointer(tmp_path: Path, mutate) -> None:
    state = copy.deepcopy(DIP_STATE)
    mutate(state)
    code, out, err = run(["run", "--format", "json", DIP_RULES, "--state", write_state(tmp_path, state)])
    assert code == 3, (code, out[:300], err)
    assert all(d["pointer"].startswith("/units/") for d in json.loads(out))


JOMINI_SMALL = json.loads((ROOT / "rulesets" / "jomini" / "examples" / "small.json").read_text())
JOMINI_WRONG = {
    "unit-hex-number": lambda s: s["units"][0].update(hex=102),
    "move-path-text": lambda s: s["moves"][0].update(path="0102"),
    "units-map": lambda s: s.update(units={}),
    "missing-board": lambda s: s.pop("board"),
}


@pytest.mark.parametrize("mutate", JOMINI_WRONG.values(), ids=list(JOMINI_WRONG))
def test_wrong_types_in_jomini_state_exit_3_with_pointer(tmp_path: Path, mutate) -> None:
    state = copy.deepcopy(JOMINI_SMALL)
    mutate(state)
    code, out, err = run(["run", "--format", "json", ROOT / "rulesets/jomini/re.rules", "--state", write_state(tmp_path, state)])
    assert code == 3, (code, out[:500], err)
    diags = json.loads(out)
    assert diags and all("pointer" in d for d in diags), diags


@pytest.mark.parametrize("body", ["query main = len(str(fold(range(14), 3, fn(a, i) => a * a)))\n",
                                  "query main = fold(range(14), 3, fn(a, i) => a * a)\n"], ids=["str", "result"])
def test_huge_number_as_text_is_located(root: Path, body: str) -> None:
    code, diags, err = run_rules(root, body)
    assert code == 1 and diags[0]["line"] == 1, (diags, err)


# ---------------------------------------------------------------- closed standard streams

def run_closed(argv: list[str], closed: int, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -m validator ARGV` started with file descriptor `closed` (0, 1 or 2) closed, as `<&-`,
    `>&-` or `2>&-` start it; the other streams captured (one that is closed reads as empty)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run([sys.executable, "-m", "validator", *map(str, argv)], cwd=cwd, env=env, text=True,
                          stdin=subprocess.DEVNULL if closed != 0 else None,
                          stdout=subprocess.PIPE if closed != 1 else None,
                          stderr=subprocess.PIPE if closed != 2 else None,
                          preexec_fn=lambda: os.close(closed), timeout=120)


@pytest.mark.parametrize("closed", [1, 2], ids=["stdout", "stderr"])
@pytest.mark.parametrize("argv, want", [(["check", "main.rules"], 0), (["run", "main.rules"], 0),
                                        (["check", "bad.rules"], 1), (["test", "empty.json"], 3)],
                         ids=["check-ok", "run-ok", "check-bad", "test-no-case"])
def test_a_closed_output_stream_keeps_the_exit_code(root: Path, closed: int, argv: list[str], want: int) -> None:
    (root / "main.rules").write_text("query main = 1\n")
    (root / "bad.rules").write_text("query main = \n")
    proc = run_closed(argv, closed, root)
    text = (proc.stdout or "") + (proc.stderr or "")
    assert proc.returncode == want and "Traceback" not in text and "I001" not in text, (proc.returncode, text)


@pytest.mark.parametrize("argv", [["run", "main.rules", "--state", "-"], ["lsp"]], ids=["run-state-stdin", "lsp"])
def test_a_closed_standard_input_is_a_usage_error(root: Path, argv: list[str]) -> None:
    pytest.importorskip("pygls") if argv == ["lsp"] else None
    (root / "main.rules").write_text("query main = 1\n")
    proc = run_closed(argv, 0, root)
    assert proc.returncode == 2 and "U001" in proc.stderr and "closed" in proc.stderr, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr


# ---------------------------------------------------------------- a ruleset named where case files go

TOOLS = ROOT / "tests" / "fixtures" / "tools"


@pytest.mark.parametrize("command", ["coverage", "test"])
def test_a_ruleset_named_as_a_case_file_is_said_so_and_fails_the_gate(command: str) -> None:
    code, out, err = run([command, TOOLS / "demo.rules", TOOLS / "cases.yaml"])
    assert code == 3, (code, out, err)
    assert f"{TOOLS / 'demo.rules'}:1:1: error[S004]: `{TOOLS / 'demo.rules'}` is a ruleset, not a case file" in err, err
    assert "cannot read test file" not in err, err  # (read as YAML, it blamed a line of the ruleset)
    if command == "coverage":  # the cases of the other file are still measured
        assert "demo.rules: 5/6 clauses" in out, out


def test_coverage_fails_when_a_named_case_file_cannot_be_read(root: Path) -> None:
    (root / "broken.yaml").write_text("cases: [\n")
    code, out, err = run(["coverage", root / "broken.yaml", TOOLS / "cases.yaml"])
    assert code == 3 and "broken.yaml:" in err and "S004" in err, (code, out, err)


@pytest.mark.parametrize("where, said", [("missing/j.xml", "the folder `{tmp}/missing` does not exist"),
                                         ("empty.json/j.xml", "`{tmp}/empty.json` is a file, not a folder"),
                                         (".", "it is a folder")])
def test_a_junit_report_that_cannot_be_written_is_said_before_the_cases_run(root: Path, monkeypatch: pytest.MonkeyPatch,
                                                                            where: str, said: str) -> None:
    from validator.tools import testing

    monkeypatch.setattr(testing, "run_suite", lambda *a, **k: pytest.fail("the cases were run"))
    code, out, err = run(["test", TOOLS / "cases.yaml", "--junit", f"{root}/{where}"])
    assert code == 2 and "U002" in err and said.format(tmp=root) in err, (code, err)


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_diff_whose_generator_fails_part_way_is_no_all_clear(root: Path, fmt: str) -> None:
    """`--generate 6` whose generator fails at seed 3 (E005) compared 3 states and said 'equivalent on
    all of them', exit 0: an error of the rules is a finding (exit 1), as a failing `random_orders` is."""
    (root / "gen.rules").write_text('def f(n) = f(n + 1)\ninput x: any at "/x" default 0\nquery main = x\n'
                                    "query generate(seed) = {x: if seed < 3 then seed else f(seed)}\n")
    code, out, err = run(["diff", root / "gen.rules", root / "gen.rules", "--generate", "6", "--jobs", "1", "--format", fmt])
    assert code == 1 and "`generate(3)` failed: E005" in err and "gen.rules:1" in err, (code, out, err)
    code, out, err = run(["diff", root / "gen.rules", root / "gen.rules", "--generate", "3", "--jobs", "1"])
    assert code == 0 and "equivalent on all of them" in out, (code, out, err)


def test_the_help_of_a_ruleset_that_cannot_be_drawn_names_files_that_exist(root: Path) -> None:
    """It sent authors to `validator/render.py`, which does not exist."""
    import re

    (root / "main.rules").write_text("query main = 1\n")
    code, out, err = run(["run", root / "main.rules", "--svg", root / "x.svg"])
    assert code == 1 and "E008" in err and "has no `render` query" in err, (code, err)
    help = " ".join(err.split("= help:", 1)[1].split())
    named = re.findall(r"[\w/]+\.(?:py|rules|md)\b", help)
    assert named and all((ROOT / p).is_file() for p in named), named


@pytest.mark.parametrize("where", ["old", "new", "start"])
def test_diff_says_a_folder_given_for_a_file_is_a_folder(root: Path, where: str) -> None:
    """It said `ruleset `x` not found` of a folder that is there, as `run` does not."""
    (root / "main.rules").write_text("query main = 1\n")
    (root / "x").mkdir()
    rules = [root / "x" if where == "old" else root / "main.rules", root / "x" if where == "new" else root / "main.rules"]
    code, out, err = run(["diff", *rules, "--games", "1", *(["--start", root / "x"] if where == "start" else [])])
    assert code == 2 and f"`{root / 'x'}` is not a regular file (a folder)" in err and "not found" not in err, err


def test_a_missing_state_file_of_a_case_is_said_where_the_case_names_it(root: Path) -> None:
    """It was said at `sub/nope.json`, a file that is not there, with no line: the place to fix is the
    case file's `state_file:`."""
    (root / "main.rules").write_text("query main = 1\n")
    (root / "sub").mkdir()
    (root / "sub" / "c.yaml").write_text("ruleset: ../main.rules\ncases:\n  - id: a\n    state_file: nope.json\n"
                                         "    expect: 1\n")
    code, out, err = run(["test", root / "sub" / "c.yaml", "--format", "json"])
    cases = json.loads(out)["cases"]
    assert code == 3 and cases[0]["status"] == "error", (code, out, err)
    assert f"{root / 'sub' / 'c.yaml'}:4:17: S001: cannot read state: `{root / 'sub' / 'nope.json'}` not found" \
        in cases[0]["message"], cases


def test_diff_says_a_case_state_it_cannot_read_and_fails(root: Path) -> None:
    """diff --cases left a case whose state_file is not there out without a word, and passed (exit 0)
    on the others: an errata check of fewer states than the author gave."""
    (root / "main.rules").write_text("query main = 1\n")
    (root / "c.yaml").write_text("ruleset: main.rules\ncases:\n  - id: a\n    state_file: nope.json\n    expect: 1\n"
                                 "  - id: b\n    state: {}\n    expect: 1\n")
    code, out, err = run(["diff", root / "main.rules", root / "main.rules", "--cases", root / "c.yaml", "--jobs", "1"])
    assert code == 3 and f"{root / 'c.yaml'}:4:17: error[S001]: cannot read state" in err, (code, out, err)
    assert "tried 1 state" in out


def test_a_ruleset_key_that_is_not_a_path_is_said_at_the_key(root: Path) -> None:
    """`ruleset: 5` was 'no `ruleset` for this case' at the case, though the key is there."""
    (root / "c.yaml").write_text("ruleset: 5\ncases:\n  - id: a\n    expect: 1\n  - id: b\n    ruleset: {a: 1}\n"
                                 "    expect: 1\n")
    code, out, err = run(["test", root / "c.yaml"])
    assert code == 3, (code, err)
    assert f"{root / 'c.yaml'}:1:1: error[S004]: `ruleset` must be a path (a text), not 5" in err, err
    assert f"{root / 'c.yaml'}:6:5: error[S004]: `ruleset` must be a path (a text), not {{a: 1}}" in err, err
    assert "no `ruleset`" not in err


@pytest.mark.parametrize("suffix", ["json", "jsonl", "yaml", "play.jsonl"])
def test_replay_places_a_refused_state_at_its_value_in_the_record(tmp_path: Path, suffix: str) -> None:
    """A refused state of a record was said at a 'file' named `rec.json:211` (line 0 in JSON, the
    pointer glued on with `#`): now at the line and column of the value in the record file."""
    import yaml

    bad = copy.deepcopy(DIP_STATE)
    bad["units"][2]["type"] = "submarine"
    path = tmp_path / f"rec.{suffix}"
    if suffix == "json":
        path.write_text(json.dumps([DIP_STATE, bad], indent=1))
    elif suffix == "yaml":
        path.write_text(yaml.safe_dump([DIP_STATE, bad]))
    else:
        lines = [DIP_STATE, bad] if suffix == "jsonl" else [{"phase": "S1901M", "state": s} for s in (DIP_STATE, bad)]
        path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, out, err = run(["replay", DIP_RULES, path, "--format", "json"])
    refusal = json.loads(out)["refusal"]
    assert code == 3 and len(refusal) == 1, (code, out, err)
    d = refusal[0]
    assert d["file"] == str(path) and d["pointer"] == "/units/2/type" and d["line"] >= 1 and d["col"] >= 1, d
    line = path.read_text().splitlines()[d["line"] - 1]
    assert line[d["col"] - 1:].startswith(("submarine", '"submarine"')), (line, d)


def test_diff_places_a_refused_start_state_at_its_value(tmp_path: Path) -> None:
    """`diff --games --start` said a refused start state at `start.json#/units/0/type`, no line; `play`
    places the same problem at its line and column."""
    bad = copy.deepcopy(DIP_STATE)
    bad["units"][0]["type"] = "submarine"
    start = tmp_path / "start.json"
    start.write_text(json.dumps(bad, indent=1))
    code, out, err = run(["diff", DIP_RULES, DIP_RULES, "--games", "1", "--start", start, "--jobs", "1"])
    line = next(i for i, text in enumerate(start.read_text().splitlines(), 1) if '"submarine"' in text)
    assert code == 3 and f"{start}:{line}:" in err and "= pointer: /units/0/type" in err, (code, err)


@pytest.mark.parametrize("command", ["run", "explain"])
@pytest.mark.parametrize("arg", ['{"a": 1', "[1, 2", '{"a": 1,}', '"M'])
def test_an_arg_that_opens_as_json_and_is_not_is_a_usage_error(root: Path, command: str, arg: str) -> None:
    """It was read as a text, and the query failed on it: E001 '`{"a": 1` has no fields' at the
    ruleset, exit 1, blaming the rules for a brace missing on the command line."""
    (root / "q.rules").write_text("query main(x) = x.a + 1\n")
    code, out, err = run([command, root / "q.rules", "--arg", arg])
    assert code == 2 and f"error[U001]: --arg `{arg}`: invalid JSON" in err and "E001" not in err, (code, err)
    code, out, err = run(["run", root / "q.rules", "--arg", "A VIE - GAL"])  # plain text stays text
    assert code == 1 and "`\"A VIE - GAL\"` has no fields" in err, (code, err)


@pytest.mark.parametrize("argv, target", [
    (["explain", "{r}", "-o", "{r}"], "r"),
    (["explain", "{r}", "--state", "{s}", "-o", "{s}"], "s"),
    (["explain", "{r}", "-o", "{m}"], "m"),  # the ruleset it extends
    (["run", "{r}", "--svg", "{r}"], "r"),
    (["render", "{r}", "--state", "{s}", "-o", "{s}"], "s"),
    (["test", "{c}", "--junit", "{c}"], "c"),
    (["test", "{d}", "--junit", "{c}"], "c"),  # a case file found in the folder given
    (["test", "{c}", "--junit", "{r}"], "r"),
    (["balance", "{r}", "--format", "json", "--records", "{r}"], "r"),
], ids=["explain-ruleset", "explain-state", "explain-module", "run-svg", "render-state", "junit-case", "junit-walked",
        "junit-ruleset", "balance-records"])
def test_an_output_file_that_is_an_input_is_refused_before_anything_is_written(root: Path, argv: list[str],
                                                                              target: str) -> None:
    """`explain r.rules -o r.rules` replaced the ruleset with its trace; `test c.yaml --junit c.yaml` the
    cases with their report. Each is now U001, the file left as it was."""
    (root / "cases").mkdir()
    files = {"r": root / "main.rules", "s": root / "state.svg", "m": root / "part.rules", "c": root / "cases" / "c.yaml",
             "d": root / "cases"}
    files["r"].write_text('extends "part.rules"\nquery main = part_value\n')
    files["m"].write_text("def part_value = 1\n")
    files["s"].write_text("{}")
    files["c"].write_text("ruleset: ../main.rules\ncases:\n  - id: a\n    state: {}\n    expect: 1\n")
    before = files[target].read_text()
    code, out, err = run([a.format(**{k: str(v) for k, v in files.items()}) for a in argv])
    assert code == 2 and "error[U001]" in err and "this command reads: writing there would replace it" in err, (code, err)
    assert files[target].read_text() == before


def test_test_import_of_a_query_the_ruleset_lacks_is_a_usage_error_as_for_replay() -> None:
    """It was E008 at the ruleset, exit 1 (a finding about the rules); `replay --import` says U001."""
    code, out, err = run(["test", TOOLS / "cases.yaml", "--import", "nope", "--ruleset", TOOLS / "demo.rules"])
    assert code == 2 and "error[U001]: " in err and "demo.rules` has no `query nope` to import" in err, (code, err)

"""Issue 24, rows 5, 7, 8, 9 and 14: a ruleset, schema or state from a stranger cannot make a run take
more than its step budget, however it is written: backtracking patterns, values that grow by sharing,
texts and numbers that grow by doubling, exact dice of many outcomes, expressions nested without
brackets. Each ends with a located diagnostic and a documented exit code; what bounds the work is
the budget the diagnostic names, not a clock (the runner's CPU limit only stops a runaway)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.conftest import Outcome

BOMB = "def up(x) = [x, x, x, x, x, x, x, x, x, x]\ndef big = up(up(up(up(up(up(up(up(up(1)))))))))\n"
EVIL = "a" * 40 + "!"


def run(hostile, repo: Path, source: str, *extra: str, state: str = "empty.json") -> Outcome:
    (repo / "main.rules").write_text(source)
    return hostile("run", str(repo / "main.rules"), "--state", str(repo / state), "--format", "json", *extra,
                   cwd=repo, seconds=30)


def codes(out: Outcome) -> set[str]:
    found = set()
    try:
        whole = json.loads(out.out)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, list):
        found |= {d.get("code") for d in whole if isinstance(d, dict)}
    for line in out.out.splitlines():
        try:
            data = json.loads(line)
        except json.JSONDecodeError:
            continue
        items = data if isinstance(data, list) else data.get("diagnostics", []) if isinstance(data, dict) else []
        found |= {d.get("code") for d in items if isinstance(d, dict)}
    for word in out.err.split():
        if word.startswith("error[") and word.endswith("]:"):
            found.add(word[6:-2])
    return found


@pytest.mark.parametrize("pattern", [r"(a+)+", r"(a|a)+b", r"(a|aa)*c", r"(.*a){12}"])
def test_backtracking_pattern_in_a_ruleset_is_linear(hostile, repo: Path, pattern: str) -> None:
    out = run(hostile, repo, f'query main = match("{EVIL}" + "{EVIL}", r"{pattern}")\n')
    assert out.code == 0 and json.loads(out.out) is None


def test_backtracking_pattern_from_the_state_is_linear(hostile, repo: Path) -> None:
    (repo / "s.json").write_text(json.dumps({"p": "(a+)+$", "t": "a" * 50000 + "!"}))
    out = run(hostile, repo, 'input p: str at "/p"\ninput t: str at "/t"\nquery main = search(t, p)\n', state="s.json")
    assert out.code == 0 and json.loads(out.out) is None


def test_backreference_is_refused_where_it_is_written(hostile, repo: Path) -> None:
    out = run(hostile, repo, 'query main = match("aa", r"(a)\\1")\n')
    assert out.code == 1 and "C014" in codes(out), out.text


def test_backtracking_schema_pattern_is_linear(hostile, repo: Path) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": {"name": {"type": "string", "pattern": "^(a+)+$"}},
              "patternProperties": {"^(b+)+$": {"type": "integer"}}}
    (repo / "schema.json").write_text(json.dumps(schema))
    (repo / "s.json").write_text(json.dumps({"name": "a" * 50000 + "!", "b" * 50000 + "!": 1}))
    out = run(hostile, repo, 'schema "schema.json"\nquery main = 1\n', state="s.json")
    assert out.code == 3 and "S002" in out.text, out.text


@pytest.mark.parametrize("query", ["big", "str(big)", "len(str(big))", "big == up(up(up(up(up(up(up(up(up(2)))))))))",
                                   "{(big[0][0], big) => 1}", "sorted(big)", "set([big])", "big in [big, 1]",
                                   "unique(big)", "join(big, \",\")"])
def test_a_value_that_grows_by_sharing_costs_its_size(hostile, repo: Path, query: str) -> None:
    out = run(hostile, repo, BOMB + f"query main = {query}\n")
    assert out.code in (1, 3) and codes(out) & {"E004", "E011", "E013"}, out.text


@pytest.mark.parametrize("body", [
    'len(fold(range(30), "ab", fn(acc, i) => replace(acc, "a", "aa")))',
    'len(fold(range(40), "ab", fn(acc, i) => join([acc, acc], "")))',
    'len(fold(range(40), "ab", fn(acc, i) => str([acc, acc])))',
    'fold(range(24), fraction(3, 7), fn(acc, i) => acc * acc) > 1',
    'fold(range(24), 3, fn(acc, i) => acc * acc) > 1',
    'len(fold(range(100000), [], fn(acc, i) => append(acc, i)))',
    'len(fold(range(40), {"a" => 1}, fn(acc, i) => merge(acc, {k + str(i) => v for k, v in acc})))',
])
def test_growth_is_charged_before_it_is_built(hostile, repo: Path, body: str) -> None:
    out = run(hostile, repo, f"query main = {body}\n")
    assert out.code == 1 and "E004" in codes(out), out.text


@pytest.mark.parametrize("body", ["roll(40d100) > 50", "roll(1000d1000) > 3",
                                  "sum(if roll(1d6) > 3 then 1 else 0 for i in range(20))"])
def test_exact_dice_are_bounded_over_the_whole_run(hostile, repo: Path, body: str) -> None:
    out = run(hostile, repo, f"query main = {body}\n", "--exact")
    assert out.code == 1 and codes(out) & {"E004", "E010"}, out.text


def test_a_long_sum_without_brackets_runs(hostile, repo: Path) -> None:
    out = run(hostile, repo, "query main = " + " + ".join(["1"] * 500) + "\n")
    assert out.code == 0 and json.loads(out.out) == 500


def test_a_sum_too_long_is_a_located_p006(hostile, repo: Path) -> None:
    (repo / "main.rules").write_text("query main = " + " + ".join(["1"] * 12000) + "\n")
    out = hostile("check", "--format", "json", str(repo / "main.rules"), cwd=repo)
    found = json.loads(out.out)
    assert out.code == 1 and [d["code"] for d in found] == ["P006"] and found[0]["line"] == 1


def test_split_by_nothing_is_a_located_error(hostile, repo: Path) -> None:
    out = run(hostile, repo, 'query main = split("abc", "")\n')
    assert out.code == 1 and "E011" in codes(out), out.text

"""The nodes of a traced run (``ruleval explain``): a call, a cited value and a procedure's step are
each a node, in one shape and key order (the JSON ``explain --format json`` writes), and a step that
ends its procedure by a jump (`goto`, `reject`) is still shown with what it called."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from validator.api import load_ruleset

RULES = '''ruleset t.trace "trace nodes"

const limit: int cite "T-2" = 3
rule double(x) cite "T-1" = x * 2

procedure go(n) cite "T-3" {
  var total = 0
  step first cite "T-4" {
    total := double(n)
    if total > 2 { goto last }
  }
  step skipped cite "T-5" {
    total := 0
  }
  step last cite "T-6" {
    require total < limit else "too many" cite "T-7"
  }
}

query main(n) = go(n)
'''


def trace_of(tmp_path: Path, n: int) -> list[dict[str, Any]]:
    (tmp_path / "t.rules").write_text(RULES)
    rs = load_ruleset(tmp_path / "t.rules")
    assert rs.ok, rs.diagnostics
    explained = rs.evaluate({}, query="main", args=[n], explain=True).explain
    assert isinstance(explained, dict)
    return explained["trace"]


def test_a_step_that_jumps_is_a_node_with_the_calls_made_in_it(tmp_path: Path) -> None:
    [call] = trace_of(tmp_path, 2)
    assert list(call) == ["rule", "args", "cites", "children", "kind", "value"], call
    assert (call["rule"], call["kind"], call["cites"], call["value"]["status"]) == ("go", "procedure", ["T-3"], "rejected")
    first, last = call["children"]  # (`skipped` was jumped over: no node)
    for step in (first, last):
        assert list(step) == ["rule", "kind", "args", "cites", "children"], step
        assert step["kind"] == "step" and step["args"] == []
    assert (first["rule"], first["cites"], last["rule"], last["cites"]) == ("first", ["T-4"], "last", ["T-6"])
    [double] = first["children"]
    assert list(double) == ["rule", "args", "cites", "children", "value"], double
    assert (double["rule"], double["args"], double["value"]) == ("double", [2], 4)
    [limit] = last["children"]  # read by the `require` that rejected
    assert (limit["rule"], limit["kind"], limit["args"], limit["value"]) == ("limit", "value", [], 3)


def test_each_step_run_is_a_node_in_order(tmp_path: Path) -> None:
    [call] = trace_of(tmp_path, 1)
    assert call["value"]["status"] == "completed", call
    assert [(s["rule"], s["kind"]) for s in call["children"]] == [("first", "step"), ("skipped", "step"), ("last", "step")]
    assert [c["rule"] for c in call["children"][0]["children"]] == ["double"]
    assert call["children"][1]["children"] == []

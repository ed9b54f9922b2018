"""`ruleval explain` prints the same thing each time it is run on the same input: a decision whose
argument is a record, list or map is named by its name and the order in which the run met it, never
by its memo key, which holds the argument's identity (an address that changes from process to process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DEMO = ["tests/fixtures/tools/demo.rules", "--state", "tests/fixtures/tools/swap.json"]


def _explain(fmt: str) -> str:
    done = subprocess.run([sys.executable, "-m", "validator", "explain", *DEMO, "--format", fmt],
                          cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("fmt", ["json", "dot"])
def test_two_processes_print_the_same(fmt: str) -> None:
    first, second = _explain(fmt), _explain(fmt)
    assert "#id" not in first
    assert first == second


def test_decisions_named_by_the_order_met() -> None:
    data = json.loads(_explain("json"))
    keys = [d["key"] for d in data["decisions"]]
    # each decision of the swap (two units, each `moves` then `blocked`) once, numbered as met
    assert [k[1] for k in keys] == list(range(len(keys)))
    assert [k[0] for k in keys] == [d["decision"] for d in data["decisions"]]
    assert sorted(k[0] for k in keys) == ["blocked", "blocked", "moves", "moves"]
    named = {tuple(k) for k in keys}
    assert data["decision_edges"] and all(tuple(a) in named and tuple(b) in named for a, b in data["decision_edges"])
    assert data["settled"] and all(tuple(s["decision"]) in named for s in data["settled"])
    # the cycle's members are the decisions of both units' moves, each settled by the policy's clause
    assert {tuple(s["decision"]) for s in data["settled"]} == {tuple(k) for k in keys if k[0] == "moves"}

"""The sound kinds (``validator.engine.facts``) against the values the reference computes: each node a
kind is claimed for, on random programs (``tests/programs.py``), evaluates to a value of that Python
type every time the reference evaluates it; a wrong claim fails here. ``RULEVAL_FUZZ_LONG=1`` runs
many more programs."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from programs import programs
from validator.api import load_ruleset
from validator.engine import reference as R
from validator.engine.facts import Facts
from validator.lib.runtime import ScriptedDice, SeededDice

LONG = bool(os.environ.get("RULEVAL_FUZZ_LONG"))
_ROOT = Path(tempfile.mkdtemp(prefix="ruleval-facts-"))
(_ROOT / "ruleval.toml").write_text("")


class Observed(R.Interpreter):
    """The reference, each value of a node a kind is claimed for looked at as it is computed."""

    def __init__(self, program: Any, claims: dict[int, type]):
        super().__init__(program)
        self.claims = claims
        self.seen = 0
        self.wrong: list[tuple[Any, type, Any]] = []

    def evaluate(self, run: R.Run, e: Any, env: R.Frame) -> Any:
        value = super().evaluate(run, e, env)
        kind = self.claims.get(id(e))
        if kind is not None:
            self.seen += 1
            if type(value) is not kind:
                self.wrong.append((e, kind, value))
        return value


def claims(program: Any) -> dict[int, type]:
    """Every kind claimed for a node of ``program``, by the node's identity."""
    facts = Facts(program)
    out: dict[int, type] = {}
    for unit in program.units.values():
        for node, kind in facts.of(unit).items():
            assert out.setdefault(node, kind) is kind
    return out


def observe(rs: Any, state: Any, options: dict[str, Any], claimed: dict[int, type] | None = None) -> Observed:
    """The reference's run of a query (the state check first), observed (``Observed``)."""
    seen = Observed(rs.program, claims(rs.program) if claimed is None else claimed)
    dice = ScriptedDice(options["dice"]) if "dice" in options else SeededDice(options.get("seed", 0))
    try:
        R.run_query(rs.program, state, options["query"], list(options.get("args") or []), dice,
                    options.get("budget", 5_000_000), engine=seen, check=lambda findings: None)
    except (R.EvalError, R.MissingInput):
        pass  # (what it computed before the error was looked at)
    return seen


def unit(rs: Any, name: str) -> Any:
    return rs.program.units[(rs.program.entry.key, name)]


SHARDS = 2


@pytest.mark.parametrize("shard", range(SHARDS))
@settings(max_examples=2500 if LONG else 150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])
@given(program=programs())
def test_every_kind_claimed_is_the_kind_of_the_values_the_reference_computes(
        shard: int, program: tuple[str, dict[str, Any], dict[str, Any]]) -> None:
    text, state, options = program
    path = _ROOT / f"program{shard}.rules"
    path.write_text(text)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, (text, [str(d) for d in rs.diagnostics if d.is_error])
    seen = observe(rs, state, options)
    assert not seen.wrong, (text, [(str(e.span), k.__name__, v) for e, k, v in seen.wrong])


KINDS = """input xs: any at "/xs" default [1, 2]
enum Side { left, right }
def n = len(xs) + 1
def half(k) = k // 2
def named = "x" + str(n)
def mixed(k) = if k > 0 then k else "none"
def big(k) = k > 9
def fits(k) = let m = n * 2; [m - k < 3, not (k in xs), -m, half(m), mixed(k), left, named ?? 1, big(k)]
query main(k) = fits(k)
"""


def test_kinds_are_claimed_where_the_language_fixes_them_and_looked_at(tmp_path: Path) -> None:
    """The claims on a program of every kind of fact are each seen in a run, and they are the ones the
    language fixes: what a parameter gives (`half(m)`), a call of a definition whose branches differ
    (`mixed(k)`) are not claimed."""
    path = tmp_path / "kinds.rules"
    path.write_text(KINDS)
    rs = load_ruleset(path, use_cache=False)
    assert rs.ok, rs.diagnostics
    claimed = claims(rs.program)
    seen = observe(rs, {"xs": [1, 2, 3]}, {"query": "main", "args": [1]})
    assert not seen.wrong and seen.seen > 20 and len(claimed) > 20
    body = unit(rs, "fits").body
    items = body.body.items  # type: ignore[union-attr]
    want = [bool, bool, int, None, None, str, str, bool]
    assert [claimed.get(id(i)) for i in items] == want
    assert claimed.get(id(body)) is list and claimed.get(id(body.value)) is int  # type: ignore[union-attr]


def test_a_wrong_claim_is_seen() -> None:
    """The observer sees a claim the values break: a parameter given a text claimed an integer."""
    path = _ROOT / "wrong.rules"
    path.write_text(KINDS)
    rs = load_ruleset(path, use_cache=False)
    param = unit(rs, "half").body.left  # type: ignore[union-attr]
    seen = observe(rs, {}, {"query": "main", "args": [1]}, {id(param): str})
    assert seen.seen and [(k, v) for _, k, v in seen.wrong] == [(str, 6)]


def test_the_backend_writes_no_type_test_of_a_value_whose_kind_is_sound(tmp_path: Path) -> None:
    """`len(xs) + 1 < 3`: an integer plus one, compared with a number, tested for nothing."""
    path = tmp_path / "sound.rules"
    path.write_text('input xs: any at "/xs" default []\ndef small = len(xs) + 1 < 3\nquery main = small\n')
    rs = load_ruleset(path, use_cache=False)
    source = "\n".join(rs.backend().source_of(unit(rs, "small")))
    assert "_type(" not in source and "_compare" not in source and "_arith" not in source, source
    assert rs.run({"xs": [1]}) is True and rs.run({"xs": [1, 2]}) is False

"""``ruleval coverage``: which clauses of each ruleset's catalogue the test cases exercise.

A clause is covered when running a case (in explain mode, with the case's own query, arguments and dice)
cites it: a traced rule, decision, procedure, table lookup or cited value, a cycle policy that settled
something, a procedure step that ran (a node of the trace, emitting or not) or an ``emit``/``reject``;
the ruleset's own state check, which a run makes first and whose trace it does not keep, is traced on
its own (``check_cites``). A clause a case names in ``clauses:`` is that case's claim, not a run of
it: it covers nothing, and one named that no run reached is said apart (``listed_only``).
Only the citations of what ran count (``run_cites``, ``cited_by``), never a clause id a value holds (a
`cites:` list a rule builds, a state's text): a ruleset could otherwise cover its whole catalogue with one
value. `diff`'s "cited only by" reads the same, state check included (``errata.cited_only``): one meaning of
"cited".
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from ..core.diagnostics import one_line, wrap_words
from .testing import Case, Suite, case_fault, load_suite, nothing_to_run, ruleset_missing, run_case


@dataclass
class RulesetCoverage:
    ruleset: str
    catalogue: list[str] | None
    listed: set[str] = field(default_factory=set)
    traced: set[str] = field(default_factory=set)
    cases: int = 0
    unknown: set[str] = field(default_factory=set)  # named by a case but not in the catalogue

    @property
    def covered(self) -> list[str]:
        return sorted(self.traced & set(self.catalogue or []))

    @property
    def uncovered(self) -> list[str]:
        return sorted(set(self.catalogue or []) - set(self.covered))

    @property
    def percent(self) -> float:
        total = len(self.catalogue or [])
        return 100.0 * len(self.covered) / total if total else 100.0

    def to_json(self) -> dict[str, Any]:
        return {"ruleset": self.ruleset, "cases": self.cases, "clauses": len(self.catalogue or []),
                "covered": self.covered, "uncovered": self.uncovered, "percent": round(self.percent, 2),
                "listed_only": sorted(self.listed - self.traced), "unknown": sorted(self.unknown),
                "catalogue": self.catalogue is not None}


def run_cites(explained: Any, events: list[Any]) -> set[str]:
    """The clauses a traced run cited as it ran: its trace's rules, decisions, procedures, the steps that
    ran, table lookups and cited values (``explained``: ``Result.explain``), the cycle policies that settled something, and its
    events (an ``emit``'s, a ``reject``'s), never the values those carry."""
    found: set[str] = set()

    def cited(node: Any) -> None:
        if isinstance(node, dict) and isinstance(node.get("cites"), list):
            found.update(c for c in node["cites"] if isinstance(c, str))

    explained = explained if isinstance(explained, dict) else {}
    nodes = list(explained.get("trace") or [])
    while nodes:  # (a loop, not recursion: a trace is as deep as the calls were)
        node = nodes.pop()
        cited(node)
        if isinstance(node, dict):
            nodes.extend(node.get("children") or [])
    for part in ("cycles", "settled"):
        for item in explained.get(part) or []:
            cited(item)
    for event in events:
        cited(event)
    return found


def cited_by(result: Any) -> set[str]:
    """The clauses a traced run (``Ruleset.evaluate(..., explain=True)``) cited: ``run_cites`` of its
    trace and events. What `coverage` counts and `diff` compares (its "cited only by")."""
    return run_cites(result.explain, result.events)


def traced_cites(case: Case) -> set[str]:
    """The citations met when running a case in explain mode (empty if it does not run), its state
    check's included (``check_cites``): an exact case (a distribution, which is not traced) is traced on
    one of its runs, with the dice of seed 0."""
    from ..api import RunError, load_ruleset
    from ..core.diagnostics import DiagnosticError
    from .testing import _state_of

    rs = load_ruleset(case.ruleset)
    if not rs.ok or case_fault(case) is not None:
        return set()
    data = case.data
    exact = bool(data.get("exact") or data.get("probabilities"))
    try:
        state = _state_of(case)
    except (RunError, DiagnosticError, OSError):
        return set()
    found = check_cites(rs, state)
    try:
        result = rs.evaluate(state, query=data.get("query", "main"), args=data.get("args"),
                             seed=0 if exact else data.get("seed"), dice=data.get("dice"), explain=True)
    except (RunError, DiagnosticError, OSError):
        return found
    return found | cited_by(result)


def check_cites(rs: Any, state: Any) -> set[str]:
    """The clauses the ruleset's own state check (``query validate_state``) cited on ``state``: a run makes
    the check first, in the same run, and keeps none of its trace (a rule the check called then answers
    the query from its memo, untraced), so it is traced here on its own. Only a state its schema and
    input types accept reaches the check; a check that finds problems (the case refused) still ran."""
    from ..api import VALIDATE_QUERY, RunError
    from ..core.diagnostics import DiagnosticError

    check = rs.program.query(VALIDATE_QUERY)
    if check is None or check.arity or rs.state_schema_errors(state):
        return set()
    try:
        result = rs.evaluate(state, query=VALIDATE_QUERY, validate=False, seed=0, explain=True)
    except (RunError, DiagnosticError, OSError):  # (inputs that do not fit: the check never ran)
        return set()
    return cited_by(result)


def measure(suite: Suite) -> list[RulesetCoverage]:
    from ..api import load_ruleset
    from ..lang.loader import display_path

    by_ruleset: dict[str, RulesetCoverage] = {}
    for case in suite.cases:
        # case files in different folders reach one ruleset by different relative paths
        name = display_path(Path(case.ruleset).resolve())
        cov = by_ruleset.get(name)
        if cov is None:
            rs = load_ruleset(case.ruleset)
            cat = sorted(rs.clauses) if rs.clauses is not None else None
            cov = by_ruleset[name] = RulesetCoverage(name, cat)
        cov.cases += 1
        outcome = run_case(case)
        named = case.data.get("clauses") or []
        named = [str(c) for c in (named if isinstance(named, list) else [named])]
        if outcome.status == "passed":
            cov.listed.update(named)
        if cov.catalogue is not None:
            cov.unknown.update(c for c in named if c not in cov.catalogue)
        cov.traced |= traced_cites(case)
    return sorted(by_ruleset.values(), key=lambda c: c.ruleset)


def totals(covs: list[RulesetCoverage]) -> tuple[int, int, float]:
    covered = sum(len(c.covered) for c in covs)
    total = sum(len(c.catalogue or []) for c in covs)
    return covered, total, (100.0 * covered / total if total else 100.0)


def coverage_text(covs: list[RulesetCoverage]) -> str:
    lines = []
    for c in covs:
        if c.catalogue is None:
            lines.append(f"{c.ruleset}: no clause catalogue ({c.cases} case{'s' if c.cases != 1 else ''})")
            continue
        lines.append(f"{c.ruleset}: {len(c.covered)}/{len(c.catalogue)} clauses ({c.percent:.1f}%), "
                     f"{c.cases} case{'s' if c.cases != 1 else ''}")
        if c.uncovered:
            lines += wrap_words("uncovered: " + ", ".join(c.uncovered), "  ", "    ")
        named = sorted((c.listed - c.traced) & set(c.catalogue))
        if named:
            lines += wrap_words("named by a case, reached by no run: " + ", ".join(named), "  ", "    ")
        if c.unknown:
            lines.append("  not in the catalogue: " + ", ".join(sorted(c.unknown)))
    covered, total, pct = totals(covs)
    lines.append(f"total: {covered}/{total} clauses ({pct:.1f}%)")
    return "\n".join(one_line(line) for line in lines)  # a line break from the input is shown, not obeyed


def cmd_coverage(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..core.exits import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError, exit_code
    from ..core.diagnostics import render_all, visible

    if args.fail_under is not None and not 0 <= args.fail_under <= 100:  # (nan too)
        raise UsageError(f"--fail-under takes a percentage from 0 to 100, not {args.fail_under:g}")
    suite = load_suite(args.paths)
    # a file that could not be read (a ruleset named as cases, bad YAML) measured nothing: the gate does not pass
    unread = exit_code([d for d in suite.diagnostics if d.is_error])
    if suite.diagnostics:
        err.write(render_all(suite.diagnostics, suite.sources, err) + "\n")
        if not suite.cases:
            return exit_code(suite.diagnostics)
    if not suite.cases:  # a gate that measured nothing must not pass
        nothing = nothing_to_run(args.paths)
        err.write(render_all(nothing, None, err) + "\n")
        return exit_code(nothing)
    # cases that cannot run as written (S004; one whose ruleset is not there too) cover nothing, and the
    # gate does not pass on them
    malformed = [fault for case in suite.cases
                 if (fault := case_fault(case) or ruleset_missing(case)) is not None]
    for d in malformed:
        err.write(one_line(f"{d.span}: {d.severity}[{d.code}]: {d.message}") + "\n")
    covs = measure(suite)
    covered, total, pct = totals(covs)
    if args.format == "json":
        out.write(json.dumps({"rulesets": [c.to_json() for c in covs],
                              "total": {"covered": covered, "clauses": total, "percent": round(pct, 2)}},
                             indent=2) + "\n")
    else:
        out.write(visible(coverage_text(covs)) + "\n")
    if malformed:  # (the coverage shown leaves them out; the gate does not pass on them)
        return max(unread, EXIT_INPUT)
    if args.fail_under is not None and pct < args.fail_under:
        err.write(f"coverage {pct:.1f}% is under {args.fail_under:g}%\n")
        return max(unread, EXIT_FINDINGS)
    return max(unread, EXIT_OK)


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("coverage", help="which catalogue clauses the test cases exercise")
    p.add_argument("paths", nargs="+", help="case files or folders")
    p.add_argument("--fail-under", type=float, metavar="N", help="exit 1 if total coverage is below N percent")
    p.add_argument("--format", choices=["text", "json"], default="text")
    commands["coverage"] = cmd_coverage

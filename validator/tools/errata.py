"""``ruleval diff OLD NEW``: where two versions of a ruleset disagree, with minimal counterexamples.

The two rulesets run on (a) the states of the given YAML cases, with each case's query, arguments
and dice, and (b) ``--generate N`` states made by the ruleset's own generator: by convention a
``query generate(seed)`` returning a state (NEW's generator if it has one, else OLD's; without one
only (a) runs). A case with ``exact: true`` or ``probabilities`` compares outcome distributions;
``--exact`` does the same for generated states. Other runs use the same seed in both rulesets.
The generator runs on the empty state without schema validation; inputs without a ``default`` are
bound to ``none`` there (see ``generator_state``).

With ``--games N``, whole games are played in both side by side from a start state with the same
random orders (``query random_orders(seed)``, ``query advance``: see ``play_games``), each stopping at
its first differing phase. ``--ignore-cites`` compares results without their ``cites`` fields.

Each differing state is shrunk greedily: remove list items, then drop map keys, keeping a change
only while the state still satisfies both rulesets' schemas and the two results still differ.
"""

from __future__ import annotations

import argparse
import json
import math
import textwrap
from collections import Counter
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any, Callable, Iterator, TextIO

from .coverage import check_cites, cited_by
from .textview import part_at
from ..core.diagnostics import one_line, wrap_words
from ..engine.state import pointer_parts

MAX_SHRINK_RUNS = 2000
SHRUNK = 3  # differences shrunk by default (`--shrink`; the playground's diff too)
SHOWN = 3  # differences printed in full by default (`--show`; the playground's diff too)
MAX_FIELD_COLUMN = 72  # wider field pointers are printed one per line, not as a table


@dataclass
class Probe:
    """One state to try, with how to run it."""

    name: str
    state: Any
    query: str = "main"
    args: list[Any] | None = None
    seed: int | None = None
    dice: list[int] | None = None
    exact: bool = False
    group_by: str | None = None  # exact: the distribution summed by this field of the outcomes (`--group-by`)
    case: bool = False  # a test case's state (`--cases`), summed apart from the generated ones
    record: str | None = None  # a game record's state (`--records`): the record's file, by which it is counted


@dataclass
class Difference:
    probe: Probe
    minimal: Any
    old: Any
    new: Any
    runs: int
    minimum: bool | None = None  # shrunk: to a local minimum (no smaller candidate keeps the difference), or
    # stopped by its budget (False); None: not shrunk (runs -1)


def _settings(probe: Probe, exact: bool | None = None) -> dict[str, Any]:
    """How a probe is run (``Ruleset.run``'s and ``Ruleset.evaluate``'s arguments but the state): its
    dice from one source, the first of an exact run (``exact``, the probe's unless given), its scripted
    dice and its seed (0 unless given)."""
    exact = probe.exact if exact is None else exact
    dice = None if exact else probe.dice
    seed = None if exact or dice is not None else probe.seed if probe.seed is not None else 0
    return {"query": probe.query, "args": probe.args, "seed": seed, "dice": dice, "exact": exact,
            "state_name": probe.name}


def outcome(rs: Any, probe: Probe, state: Any) -> Any:
    """The comparable result of a run: the JSON result, a {result: probability} map, or the error codes."""
    from ..api import RunError
    from ..core.diagnostics import DiagnosticError

    try:
        result = rs.run(state, **_settings(probe))
    except RunError as exc:
        return {"error": sorted({d.code for d in exc.diagnostics}), "kind": exc.kind}
    except DiagnosticError as exc:
        return {"error": sorted({d.code for d in exc.diagnostics}), "kind": "state"}
    if probe.exact and isinstance(result, dict) and result.get("exact"):
        dist = {"distribution": {json.dumps(o["result"], sort_keys=True): o["probability"] for o in result["outcomes"]}}
        # (grouped here, once: what is compared, shrunk, counted, printed and written as JSON is the same)
        return grouped_distribution(dist, probe.group_by) if probe.group_by else dist
    return result


# `--ignore-cites`: results that differ only in their citations are equal. Set by each task from its item
# (and by the command), read where results are compared: a context variable, so that the tasks of two
# comparisons run at once in one process's threads (a Dask worker's) each read their own
IGNORE_CITES: ContextVar[bool] = ContextVar("ignore_cites", default=False)


def without_cites(value: Any) -> Any:
    """A result with every `cites` field left out (for authors who changed only citations)."""
    if isinstance(value, dict):
        return {k: without_cites(v) for k, v in value.items() if k != "cites"}
    if isinstance(value, list):
        return [without_cites(v) for v in value]
    return value


def _differ(a: Any, b: Any) -> bool:
    if IGNORE_CITES.get():
        a, b = without_cites(a), without_cites(b)
    return json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True)


def refusal(rs: Any, side: str, probe: Probe) -> str:
    """Why a ruleset refuses a state, in one line: its first problem, where (the JSON pointer's
    numbers left out, so that like reasons are counted together)."""
    import re

    from ..core.diagnostics import DiagnosticError

    try:
        problems = rs.state_errors(probe.state, probe.name)
    except DiagnosticError as exc:
        problems = exc.diagnostics
    if not problems:
        return f"{side} refuses it"
    first = problems[0]
    where = first.span.file.split("#", 1)[1] if "#" in first.span.file else ""
    where = re.sub(r"/[0-9]+(?=/|$)", "/*", where)
    return f"{side} refuses it: {first.code} {first.message}" + (f" (at {where})" if where else "")


def skips_text(skips: Counter[str], limit: int = 3) -> str:
    """``N skipped: REASON (n), ...``: the states skipped, counted by reason, the commonest first."""
    total = sum(skips.values())
    ranked = sorted(skips.items(), key=lambda kv: (-kv[1], kv[0]))
    said = "; ".join(f"{n} × {reason}" for reason, n in ranked[:limit])
    more = f"; {len(ranked) - limit} other reasons" if len(ranked) > limit else ""
    return f"{total} skipped: {said}{more}"


def _refused(result: Any) -> bool:
    """A run that refused its state (the JSON Schema or the ruleset's own `query validate_state`): such
    a state is skipped, not a difference."""
    return isinstance(result, dict) and result.get("kind") == "state"


def _broken(result: Any) -> bool:
    """A run that failed while evaluating (an error of the rules, not of the state)."""
    return isinstance(result, dict) and "error" in result and result.get("kind") != "state"


def _failed(result: Any) -> bool:
    """A run that gave no result: it refused its state or failed while evaluating."""
    return _refused(result) or _broken(result)


def _disagree(a: Any, b: Any) -> bool:
    """Two outcomes to report: they differ, or either run failed (two runs that fail alike are not
    equivalent rules: nothing was compared)."""
    return _broken(a) or _broken(b) or _differ(a, b)


def _kinds(a: Any, b: Any) -> set[str]:
    """What kinds of field two outcomes differ in: their pointers with list positions left out
    (`/orders/*/status`), so that a shrunk state keeps each kind of change the found one had; the
    odds of an exact run are one kind. Lists are matched as collections first (``_kind_fields``), so
    that one unit gone from a sorted list does not make every unit after it a change of every field."""
    if IGNORE_CITES.get():
        a, b = without_cites(a), without_cites(b)
    return {"/distribution" if p.startswith("/distribution/") else p for p in _kind_fields(a, b, "")}


def _kind_fields(a: Any, b: Any, path: str) -> set[str]:
    """The pointers (list positions as `*`) of the leaves where ``b`` departs from ``a``: maps key by
    key; lists with the items found on both sides set aside (as many times as on both), the others
    paired in order, field by field, and an item left over on one side a change of the whole item."""
    if isinstance(a, dict) and isinstance(b, dict):
        out: set[str] = set()
        for k in list(a) + [k for k in b if k not in a]:
            key = f"{path}/{str(k).replace('~', '~0').replace('/', '~1')}"
            if k not in a or k not in b:
                out.add(key)
            else:
                out |= _kind_fields(a[k], b[k], key)
        return out
    if isinstance(a, list) and isinstance(b, list):
        texts_b = [json.dumps(y, sort_keys=True) for y in b]
        left_b = list(range(len(b)))
        only_a = []
        for x in a:
            tx = json.dumps(x, sort_keys=True)
            j = next((j for j in left_b if texts_b[j] == tx), None)
            if j is None:
                only_a.append(x)
            else:
                left_b.remove(j)
        only_b = [b[j] for j in left_b]
        out = set()
        for x, y in zip(only_a, only_b):
            out |= _kind_fields(x, y, f"{path}/*")
        if len(only_a) != len(only_b):
            out.add(f"{path}/*")
        return out
    return set() if not _differ(a, b) else {path or "/"}


def _smaller(value: Any) -> Iterator[Any]:
    """Candidate states smaller than ``value``: runs of list items removed (halves first, then
    quarters, ... down to single items), then one map key dropped, at any depth. Large cuts first let
    a long list shrink in a few runs; the single cuts last make the end a local minimum."""
    if isinstance(value, list):
        n = len(value)
        size = n // 2
        while size > 1:
            for i in range(0, n - size + 1, size):
                yield value[:i] + value[i + size:]
            size //= 2
        for i in range(n):
            yield value[:i] + value[i + 1:]
    if isinstance(value, dict):
        for k in list(value):
            yield {x: v for x, v in value.items() if x != k}
    children = list(enumerate(value)) if isinstance(value, list) else list(value.items()) if isinstance(value, dict) else []
    for k, child in children:
        for smaller in _smaller(child):
            if isinstance(value, list):
                yield value[:k] + [smaller] + value[k + 1:]
            else:
                yield {**value, k: smaller}


def _texts(value: Any) -> Iterator[str]:
    """Every text leaf of a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, dict)):
        for child in value if isinstance(value, list) else value.values():
            yield from _texts(child)


def _without(value: Any, text: str) -> Any:
    """``value`` less every list item holding ``text`` anywhere in it and every map entry whose value is ``text``."""
    if isinstance(value, list):
        return [_without(v, text) for v in value if text not in _texts(v)]
    if isinstance(value, dict):
        return {k: _without(v, text) for k, v in value.items() if v != text}
    return value


def _by_text(state: Any) -> Iterator[Any]:
    """For each text found more than once, most frequent first, the state without all that holds it:
    every item naming one side, say, which no single cut removes without upsetting a balance the
    difference needs."""
    counts = Counter(_texts(state))
    for text, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        if n > 1:
            smaller = _without(state, text)
            if smaller != state:
                yield smaller


def shrink(old: Any, new: Any, probe: Probe, a0: Any, b0: Any, budget: int = MAX_SHRINK_RUNS) -> Difference:
    """Greedy shrinking of ``probe.state`` (on which OLD gave ``a0`` and NEW ``b0``) while the two
    rulesets still disagree as they did on it: every kind of field that differed still differs (a
    smaller state where only a reason's wording differs does not stand for one where a build failed
    and now succeeds), and a run that failed still fails with the same errors. Returns the difference
    on the state kept, with the two outcomes found there and the runs made (``minimum`` false when the
    ``budget`` of runs stopped it before a local minimum)."""
    state, found = probe.state, (a0, b0)
    kinds0 = _kinds(a0, b0)
    runs = 0
    # single cuts down to a local minimum; then, only if no single cut is left, whole groups (which
    # may jump to another cause of the difference), and single cuts again after a group went
    candidates: Callable[[Any], Iterator[Any]] = _smaller
    while runs < budget:
        for cand in candidates(state):
            if runs >= budget:
                break
            # (not counted: a refusal runs no rule; where the found state was refused by one side, in a
            # game, the smaller states that side refuses alike are what is kept; a state OLD refuses
            # anew is not run on NEW)
            a = outcome(old, probe, cand)
            if _refused(a) and a != a0:
                continue
            b = outcome(new, probe, cand)
            if _refused(b) and b != b0:
                continue
            runs += 1
            if (_disagree(a, b) and _kinds(a, b) >= kinds0
                    and (not _failed(a0) or a == a0) and (not _failed(b0) or b == b0)):
                state, found = cand, (a, b)
                candidates = _smaller
                break
        else:
            if candidates is _by_text:
                return Difference(probe, state, *found, runs, minimum=True)
            candidates = _by_text
    return Difference(probe, state, *found, runs, minimum=False)


def tried_line(tried: int, skips: Counter[str], skipped: int, differ: int, compared: int, stopped: bool = False,
               played: str = "", aside: str = "") -> str:
    """The closing line of a diff (`tried 30 states (2 skipped: ...): 3 differ`), as the CLI and the
    playground print it: the skipped states by reason when ``skips`` counts them all."""
    why = skips_text(skips) if sum(skips.values()) == skipped else f"{skipped} skipped"
    return (f"tried {tried} state{'s' if tried != 1 else ''}{played}" + (f" ({why}{aside})" if skipped else "")
            + verdict(differ, compared, stopped))


def verdict(differ: int, compared: int, stopped: bool = False) -> str:
    """The end of a diff's summary line: never an all-clear for what was not compared, nor for games
    that stopped before their phases ran out."""
    if differ:
        return f": {differ} differ"
    if not compared:
        return ": nothing was compared"
    if stopped:
        return ": no difference in what was compared, but games stopped early (why: on standard error)"
    return ": equivalent on all of them"


ABSENT = "(absent)"  # a field one outcome has and the other has not, in ``changed_fields``


def changed_fields(a: Any, b: Any, path: str = "") -> list[tuple[str, Any, Any]]:
    """Leaves where two JSON values differ, as (JSON pointer, old, new)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for k in list(a) + [k for k in b if k not in a]:
            if k == "cites" and IGNORE_CITES.get():  # (`--ignore-cites`: a change of citations is no change)
                continue
            key = str(k).replace("~", "~0").replace("/", "~1")
            if k not in a or k not in b:
                out.append((f"{path}/{key}", a.get(k, ABSENT), b.get(k, ABSENT)))
            else:
                out.extend(changed_fields(a[k], b[k], f"{path}/{key}"))
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for i, (x, y) in enumerate(zip(a, b)):
            out.extend(changed_fields(x, y, f"{path}/{i}"))
        return out
    return [] if not _differ(a, b) else [(path or "/", a, b)]


def generator_state(rs: Any) -> dict[str, Any]:
    """The state a generator runs on: empty, except that an input without a ``default`` holds a simplest
    value of its declared type, ``none`` where it may be (a generator makes a state from its seed; it
    reads no input, but every input is bound first, and checked against its type: ``kinds.least``)."""
    state: dict[str, Any] = {}
    for unit in rs.program.inputs():
        if unit.body is not None or unit.pointer in ("", "/"):
            continue
        parts = pointer_parts(unit.pointer)
        cur: Any = state
        for p in parts[:-1]:
            if not isinstance(cur, dict):
                break
            cur = cur.setdefault(p, {})
        if isinstance(cur, dict):
            least = None if unit.ret is None else rs.program.loaded.namespaces[unit.ns].kinds.least(unit.ret)
            cur.setdefault(parts[-1], least)
    return state


@dataclass
class GameReport:
    """What `--games` did: games and phases played alike, and the differences (first phase of each game)."""

    games: int = 0
    phases: int = 0
    differences: list[Difference] | None = None
    note: str | None = None
    stopped: list[str] | None = None  # games that stopped before their phases ran out, the game not over: why
    broken: int = 0  # of them, games stopped by an error of the rules (in `random_orders`), not of a state
    interrupted: bool = False  # Ctrl-C: what was played before it
    found: list[Any] | None = None  # what each game found (``Found``), in order


def start_state(old: Any, new: Any, start: Any) -> tuple[Any, str | None]:
    """The state games start from: the one given, else the ruleset's `query start_state`."""
    from ..api import RunError

    if start is not None:
        return start, None
    gen = next((rs for rs in (new, old) if "start_state" in rs.queries()), None)
    if gen is None:
        return None, "give --start STATE: neither ruleset has `query start_state`"
    try:
        state = gen.run(generator_state(gen), query="start_state", validate=False)
    except RunError as exc:
        return None, f"`start_state` failed: {_said(exc.diagnostics[0])}"
    if state is None:  # the ruleset says it has no start position (a map without one, say)
        return None, "give --start STATE: the ruleset's `query start_state` gives none (no start position)"
    return state, None


@dataclass
class Found:
    """One piece of a sweep of ``diff``: a state tried (or a game played up to where it stopped), and
    what was found there: the two outcomes where they first differ (not yet shrunk), and where."""

    probe: Probe | None = None
    old: Any = None
    new: Any = None
    differ: bool = False
    refused: bool = False  # a state one ruleset refuses: skipped, not counted
    phases: int = 0  # phases played (games)
    stopped: str | None = None  # why a game stopped before its phases ran out, the game not over
    broken: bool = False  # stopped by an error of the rules (in `random_orders`), not of a state
    note: str | None = None  # a generator that failed: the sweep stops there
    note_code: str | None = None  # the code of what the failed generator said (its exit code is the command's)
    skip: str | None = None  # why a state was refused (``refusal``)
    where: dict[str, list[str]] | None = None  # for the summary: the phase, the kinds of field changed, clauses
    grouped: bool | None = None  # `--group-by` on an exact run: whether an outcome of either side has the field


def _where(old: Any, new: Any, probe: Probe, a: Any, b: Any) -> dict[str, list[str]]:
    """Where two outcomes first differ, for the summary: the phase (``advance``'s name for it without
    its digits), the kinds of field that changed (positions in lists as ``*``), or what failed, and the
    clauses cited by one side only."""
    phase = next((r["phase"] for r in (a, b) if isinstance(r, dict) and isinstance(r.get("phase"), str)), None)
    fails = [f"{side} {', '.join(r['error'])} ({'refused the state' if _refused(r) else 'failed to run'})"
             for side, r in (("OLD", a), ("NEW", b)) if _failed(r)]
    fields = fails or sorted(_kinds(a, b))
    only = cited_only(old, new, Difference(probe, probe.state, a, b, -1))
    clauses = [f"{c} (only {side})" for side, cs in only.items() for c in cs]
    return {"phase": [] if phase is None else ["".join(ch for ch in phase if not ch.isdigit()) or phase],
            "field": fields, "clause": clauses}


def _game_task(rulesets: list[Any], item: tuple[int, Any, int, int, bool]) -> Found:
    """One game of ``--games``, played until its first differing phase, its end, or its last phase."""
    from ..api import ADVANCE_QUERY, RunError, game_seed

    old, new = rulesets
    g, start, phases, seed, ignore = item
    IGNORE_CITES.set(ignore)
    gens = [rs for rs in (new, old) if "random_orders" in rs.queries()]
    gen = gens[g % len(gens)]
    state = start
    found = Found()
    for i in range(phases):
        s = game_seed(seed, g, i)
        try:
            orders = gen.run(state, query="random_orders", args=[s], seed=s)
        except RunError as exc:  # this game ends here; the others are played (another side's orders, say)
            where = "the start state" if i == 0 else f"the state the rules made after phase {i}"
            found.stopped = (f"game {g} stopped at phase {i + 1}: {'NEW' if gen is new else 'OLD'}'s `random_orders({s})` "
                             f"failed on {where}: {_said(exc.diagnostics[0])}")
            found.broken = exc.kind != "state"
            return found
        played = {**state, "orders": orders}
        probe = Probe(f"game {g} (seed {seed}), phase {i + 1}", played, ADVANCE_QUERY, seed=s)
        a, b = outcome(old, probe, played), outcome(new, probe, played)
        found.phases += 1
        if _differ(a, b):  # (both failing alike stops the game below, and says why)
            found.probe, found.old, found.new, found.differ = probe, a, b, True
            found.where = _where(old, new, probe, a, b)
            return found
        if not isinstance(a, dict) or "next" not in a:  # both refuse the phase alike: the game cannot go on
            why = _refusal(old, played, probe) if isinstance(a, dict) and "error" in a else "`advance` gave no `next` state"
            found.stopped = f"game {g} stopped at phase {i + 1}: {why}"
            return found
        if a.get("end") is not None and _made_accepted(old, a.get("next")):
            return found
        state = a["next"]  # (an end followed by a state the rules refuse: played on, the refusal stops the game)
    return found


def _made_accepted(rs: Any, made: Any) -> bool:
    """Whether the rules accept the state they made where a game ends, as ``api.play`` checks it. An `end`
    that says the end is not known (a fall played without the owners that decide it) is followed by a
    state they refuse: that game did not reach its end, and is no all-clear."""
    return not isinstance(made, dict) or not rs.state_errors({**made, "orders": []})


def _shrink_task(rulesets: list[Any], item: tuple[Probe, Any, Any, bool, int]) -> Difference:
    """A difference shrunk (``shrink``, with at most ``budget`` runs), with the outcomes on its minimal state."""
    old, new = rulesets
    probe, a, b, ignore, budget = item
    IGNORE_CITES.set(ignore)
    return shrink(old, new, probe, a, b, budget)


@dataclass
class Options:
    """How a sweep of ``diff`` runs: where (``jobs``, ``cluster``), and where its progress is shown."""

    jobs: int | None = 1
    cluster: str | None = None
    err: TextIO | None = None
    shrink_runs: int = MAX_SHRINK_RUNS  # runs each shrinking may make


def _shrunk(old: Any, new: Any, found: list[Found], max_shrunk: int | None, opts: Options) -> tuple[list[Difference], bool]:
    """The differences of ``found``, the first ``max_shrunk`` of them shrunk (all if None), the others as
    found; and whether the shrinking was interrupted (those not shrunk are then shown as found)."""
    from .sweep import run_sweep

    n = len(found) if max_shrunk is None else min(max_shrunk, len(found))
    todo = [(f.probe, f.old, f.new, IGNORE_CITES.get(), opts.shrink_runs) for f in found[:n]]
    sw = run_sweep(_shrink_task, [old, new], todo, jobs=opts.jobs, cluster=opts.cluster, what="shrinking", err=opts.err)
    diffs = list(sw.results)
    for f in found[len(diffs):]:
        assert f.probe is not None
        diffs.append(Difference(f.probe, f.probe.state, f.old, f.new, -1))
    return diffs, sw.interrupted


def play_games(old: Any, new: Any, start: Any, games: int, phases: int, seed: int,
               max_shrunk: int | None = None, opts: Options | None = None) -> GameReport:
    """Play ``games`` games of up to ``phases`` phases in both rulesets side by side, from ``start``,
    with the same orders each phase, from ``query random_orders(seed)``: NEW's in even games and OLD's
    in odd ones when both have it, so that orders only one of them allows are tried. A game stops
    at its first phase whose ``advance`` differs (result, next state or end), which is shrunk like any
    difference, or when the game ends. The games are a sweep (``tools/sweep``): one piece each."""
    from ..api import ADVANCE_QUERY
    from .sweep import run_sweep

    opts = opts or Options()
    report = GameReport(differences=[])
    assert report.differences is not None
    gens = [rs for rs in (new, old) if "random_orders" in rs.queries()]
    missing = [name for name, rs in (("OLD", old), ("NEW", new)) if ADVANCE_QUERY not in rs.queries()]
    if not gens or missing:
        report.note = ("neither ruleset has `query random_orders(seed)`" if not gens
                       else f"{' and '.join(missing)} has no `query {ADVANCE_QUERY}`") + ": no games were played"
        return report
    sw = run_sweep(_game_task, [old, new], [(g, start, phases, seed, IGNORE_CITES.get()) for g in range(games)],
                   jobs=opts.jobs, cluster=opts.cluster, what="games", err=opts.err)
    report.interrupted = sw.interrupted
    report.found = sw.results
    for f in sw.results:
        report.games += 1
        report.phases += f.phases
        if f.stopped:
            report.stopped = (report.stopped or []) + [f.stopped]
            report.broken += f.broken
    if not sw.interrupted:
        report.differences, report.interrupted = _shrunk(old, new, [f for f in sw.results if f.differ], max_shrunk, opts)
    else:
        report.differences = [Difference(f.probe, f.probe.state, f.old, f.new, -1) for f in sw.results
                              if f.differ and f.probe is not None]
    return report


def _refusal(rs: Any, state: Any, probe: Probe) -> str:
    """The first diagnostic of a run that failed or refused the state (the run ``outcome`` made), as one line."""
    from ..api import RunError
    from ..core.diagnostics import DiagnosticError

    try:
        rs.run(state, **_settings(probe))
    except (RunError, DiagnosticError) as exc:
        return _said(exc.diagnostics[0])
    return "the run failed"


def _said(d: Any) -> str:
    """A diagnostic as one line of a note: its code, message and where in the state or file it is."""
    where = f" (at {d.pointer})" if d.pointer else (f" (at {d.span.file}:{d.span.line})" if d.span.line else "")
    return f"{d.code} {d.message}{where}"


def case_probes(paths: list[str]) -> tuple[list[Probe], list[Any]]:
    from ..core.diagnostics import DiagnosticError
    from .testing import _state_of, case_fault, load_suite

    suite = load_suite(paths, expectations=False)  # (their states only)
    probes, said = [], list(suite.diagnostics)
    for case in suite.cases:
        d = case.data
        # a run the case cannot be given as written (`dice: [0]`, `seed: "7"`): said as `ruleval test` says it
        # (S004, exit 3), never passed to the run, which would refuse its options as a caller's mistake
        malformed = case_fault(case, run_only=True)
        if malformed is not None:
            said.append(malformed)
            continue
        try:
            state = _state_of(case)
        except DiagnosticError as exc:  # a state that cannot be read: said (exit 3), never left out without a word
            said += exc.diagnostics
            continue
        probes.append(Probe(f"{case.file}#{case.id}", state, d.get("query", "main"), d.get("args"), d.get("seed"),
                            d.get("dice"), bool(d.get("exact") or d.get("probabilities")), case=True))
    return probes, said


def record_probes(paths: list[str], old: Any, new: Any, import_with: str | None) -> tuple[list[Probe], list[Any], int]:
    """``--records``: every state of each game record played in its game (each but the last, the state
    the game came to, as ``replay`` plays them), with its orders, as a probe of ``query advance`` named
    by its place (``FILE:LINE``, a folder's file, or where an importer puts it), as ``replay`` reads
    records (a JSONL, JSON or YAML list of states, a folder ``play --out`` wrote, or another format
    read by the ``import_with`` query of NEW, else of OLD). Returns the probes, what was said of the
    records that could not be read (each left out whole: a diagnostic at its place, exit 3), and how
    many records were read."""
    from pathlib import Path

    from ..api import ADVANCE_QUERY
    from ..core.diagnostics import Diagnostic, DiagnosticError, Span
    from .common import require_regular
    from .play import _played_state, read_game_file, read_imported_record, read_out_folder

    probes: list[Probe] = []
    said: list[Any] = []
    read = 0
    for path in paths:
        if not Path(path).is_dir() or import_with:
            require_regular(path, "record")
        try:
            if import_with:
                rs = new if import_with in new.queries() else old
                states, _, unread = read_imported_record(rs, import_with, path)
                if unread:  # (never a comparison of a record read in part, as replay says)
                    raise DiagnosticError([Diagnostic(
                        "S001", f"the importer could not read {unread} part{'s' if unread != 1 else ''} of the record",
                        Span(path), help=f"`ruleval replay RULESET {path} --import {import_with}` names them")])
                places: list[Any] = [None] * len(states)
            elif Path(path).is_dir():
                states = read_out_folder(Path(path))
                places = [None] * len(states)
            else:
                items = read_game_file(path)
                states = [(item.where, _played_state(item.value)) for item in items]
                places = [item.start for item in items]
            if len(states) < 2:  # (as replay says it: a record of one state played no phase)
                raise DiagnosticError([Diagnostic(
                    "S006", "a record needs at least two states (a phase and the one after it)",
                    (places[0] if places and places[0] else Span(path, 1, 1, 1, 2)) if Path(path).is_file() else Span(path))])
            for (where, state), at in zip(states, places):
                if not isinstance(state, dict):
                    raise DiagnosticError([Diagnostic("S001", "a state must be a JSON object", at or Span(where),
                                                      help="a record is a list of states, each with its orders")])
        except DiagnosticError as exc:
            said += exc.diagnostics
            continue
        read += 1
        probes += [Probe(where, {**state, "orders": state.get("orders", [])}, ADVANCE_QUERY, seed=0, record=path)
                   for where, state in states[:-1]]
    return probes, said, read


def _probe_task(rulesets: list[Any], item: tuple[Any, bool]) -> Found:
    """One state of ``diff``: a case's probe as it is, or ``("generate", seed, exact, group_by)``: the
    state the generator makes from that seed; both rulesets run on it."""
    from ..api import RunError

    old, new = rulesets
    what, ignore = item
    IGNORE_CITES.set(ignore)
    if isinstance(what, Probe):
        probe = what
    else:
        _, s, exact, group_by = what
        gen = next(rs for rs in (new, old) if "generate" in rs.queries())
        try:
            state = gen.run(generator_state(gen), query="generate", args=[s], seed=s, validate=False)
        except RunError as exc:
            return Found(note=f"`generate({s})` failed: {_said(exc.diagnostics[0])}", note_code=exc.diagnostics[0].code)
        probe = Probe(f"generate({s})", state, seed=s, exact=exact, group_by=group_by if exact else None)
    a, b = outcome(old, probe, probe.state), outcome(new, probe, probe.state)
    # a recorded state was played in a real game: one side refusing it is a difference (as in `--games`);
    # a made state one side refuses is skipped, as is a recorded one both refuse (a phase the rules pass over)
    if (_refused(a) and _refused(b)) or ((_refused(a) or _refused(b)) and probe.record is None):
        return Found(probe, refused=True, skip=refusal(old if _refused(a) else new, "OLD" if _refused(a) else "NEW", probe))
    grouped = (_has_field(a) or _has_field(b)) if probe.group_by else None
    if not _disagree(a, b):
        return Found(probe, grouped=grouped)
    return Found(probe, a, b, differ=True, where=_where(old, new, probe, a, b), grouped=grouped)


def _has_field(grouped: Any) -> bool | None:
    """Whether a distribution summed by a field (``grouped_distribution``) has an outcome holding the
    field; None for a run that gave no distribution (an error)."""
    if not (isinstance(grouped, dict) and isinstance(grouped.get("distribution"), dict)):
        return None
    return any(ABSENT not in json.loads(k).values() for k in grouped["distribution"])


@dataclass
class StateReport:
    """What ``diff`` found on the states of cases and generated ones."""

    seen: int = 0
    tried: int = 0
    differences: list[Difference] | None = None
    found: list[Found] | None = None
    note: str | None = None
    note_code: str | None = None  # a generator that failed: the code of what it said
    interrupted: bool = False
    skips: Counter[str] = field(default_factory=Counter)  # states skipped, by reason


def compare_states(old: Any, new: Any, probes: list[Probe], count: int, seed: int, exact: bool,
                   max_shrunk: int | None, opts: Options, group_by: str | None = None) -> StateReport:
    """``compare`` as a sweep: the cases' states and ``count`` generated ones (up to a generator that
    fails), each a piece; the first ``max_shrunk`` differences shrunk. ``group_by``: exact runs compare
    (and report) their distributions summed by this field of the outcomes."""
    from .sweep import run_sweep

    report = StateReport()
    items: list[Any] = [(replace(p, group_by=group_by) if p.exact else p, IGNORE_CITES.get()) for p in probes]
    if count > 0:
        if any("generate" in rs.queries() for rs in (new, old)):
            items += [(("generate", s, exact, group_by), IGNORE_CITES.get()) for s in range(seed, seed + count)]
        else:
            report.note = "neither ruleset has `query generate(seed)`: only the cases were tried"
    sw = run_sweep(_probe_task, [old, new], items, jobs=opts.jobs, cluster=opts.cluster, what="states", err=opts.err,
                   ordered=lambda f: f.note is None)
    found = [f for f in sw.results if f.note is None]
    report.note = report.note or next((f.note for f in sw.results if f.note is not None), None)
    report.note_code = next((f.note_code for f in sw.results if f.note_code is not None), None)
    report.found = found
    report.seen = len(found)
    report.tried = sum(1 for f in found if not f.refused)
    report.skips.update(f.skip for f in found if f.refused and f.skip is not None)
    report.interrupted = sw.interrupted
    differing = [f for f in found if f.differ]
    if sw.interrupted:
        report.differences = [Difference(f.probe, f.probe.state, f.old, f.new, -1) for f in differing if f.probe is not None]
    else:
        report.differences, report.interrupted = _shrunk(old, new, differing, max_shrunk, opts)
    return report


def summary_json(found: list[Found], of: int, sample: bool = True) -> dict[str, Any]:
    """The figures of a sweep of ``diff``: the share that differ (a 95 % interval for a ``sample``, the
    generated states or games; none for the cases, chosen by hand), and the differences grouped by where
    they first differ."""
    from .impact import Share, grouped

    wheres = [f.where for f in found if f.differ and f.where is not None]
    share = Share(len(wheres), of).to_json()
    if not sample:
        del share["ci95"]
    return {"share": share, "by": {key: dict(grouped(w[key] for w in wheres)) for key in ("phase", "field", "clause")}}


def summary_text(found: list[Found], of: int, what: str, cap: int, sample: bool = True) -> list[str]:
    from .impact import Share, group_lines, grouped

    wheres = [f.where for f in found if f.differ and f.where is not None]
    share = Share(len(wheres), of)
    lines = [f"{what} that differ: {share.text() if sample else share.text().split(', 95% CI')[0] + ')'}"]
    if wheres:
        for key, title in (("phase", "first differing phase"), ("field", "fields changed"),
                           ("clause", "clauses cited by one side only")):
            lines += group_lines(title, grouped(w[key] for w in wheres), cap)
    return lines


def _show(v: Any, limit: int = 70) -> str:
    text = json.dumps(v, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _evaluated(rs: Any, probe: Probe, state: Any, explain: bool = False) -> Any:
    """The run ``outcome`` compares, as the language's values (an ``api.Result``), for the text view
    (``explain``: the same run traced, one outcome even of an exact probe, for the clauses it cites);
    None for a run that fails (what it said is shown instead)."""
    from ..api import RunError
    from ..core.diagnostics import DiagnosticError

    try:
        return rs.evaluate(state, **_settings(probe, probe.exact and not explain), explain=explain)
    except (RunError, DiagnosticError):
        return None


def _traced(old: Any, new: Any, d: Difference) -> list[Any]:
    """Both sides' traced runs on the difference's (minimal) state (``_evaluated``); none where a run
    failed (a run that stopped cites nothing to compare, and what it said is shown instead)."""
    if _failed(d.old) or _failed(d.new):
        return [None, None]
    return [_evaluated(old, d.probe, d.minimal, explain=True), _evaluated(new, d.probe, d.minimal, explain=True)]


def _shown(result: Any, pointer: str, v: Any, limit: int) -> str:
    """A changed field of an outcome in the language's notation: the run's own value at the field's
    pointer (``textview.part_at``), cut to ``limit``; ``(absent)`` where the field is not there; the
    JSON where the run gave no values (an exact run's odds)."""
    from ..lib.values import notation

    found, value = part_at(result, pointer) if result is not None and result.exact is None else (False, None)
    if not found:
        return v if v == ABSENT else _show(v, limit)
    text = notation(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def _fraction(text: str) -> Fraction | None:
    try:
        return Fraction(text)
    except (ValueError, ZeroDivisionError):
        return None


def _common_denominator(values: list[Any]) -> int | None:
    """The denominator to write odds over side by side (36 for 2d6: 11/36 beside 20/36, not 5/9),
    when it is small enough to read (``COMMON_DENOMINATOR_LIMIT``); None otherwise."""
    dens = [f.denominator for v in values if isinstance(v, str) and (f := _fraction(v)) is not None]
    if not dens:
        return None
    common = math.lcm(*dens)
    return common if common <= COMMON_DENOMINATOR_LIMIT else None


COMMON_DENOMINATOR_LIMIT = 6 ** 3  # past three dice's worth, a fraction is easier to read reduced


def shown_differences(old: Any, new: Any, diffs: list[Difference], show: int, how_more: str) -> list[str]:
    """The first ``show`` differences in full (``difference_text``: each runs both sides again, traced;
    -1: all), then how many more were found and ``how_more`` to see them: the summary counts them all."""
    shown = diffs if show < 0 else diffs[:show]
    texts = [difference_text(old, new, d) for d in shown]
    if len(shown) < len(diffs):
        more = len(diffs) - len(shown)
        texts.append(f"... and {more} more difference{'s' if more != 1 else ''} {how_more}")
    return texts


def difference_text(old: Any, new: Any, d: Difference) -> str:
    from .textview import MAX_LINES, WIDTH, outcome_labels, scalar

    sides = {f"{side} ({', '.join(r['error'])})": r for side, r in (("OLD", d.old), ("NEW", d.new)) if _failed(r)}
    what = " and ".join(f"{' and '.join(names)} {verb}" for verb, names in (
        ("failed to run", [n for n, r in sides.items() if _broken(r)]),
        ("refused the state", [n for n, r in sides.items() if _refused(r)])) if names) or "results differ"
    lines = [f"{d.probe.name}: {what} (query `{d.probe.query}`{', exact' if d.probe.exact else ''})"]
    if d.probe.record is not None:
        lines.append("  the phase as the record gives it (a recorded state is not shrunk)")
    elif d.runs < 0:
        lines.append("  not shrunk (`--shrink N` shrinks the first N differences)")
    else:
        state = json.dumps(d.minimal, ensure_ascii=False, sort_keys=True)
        what = "minimal state" if d.minimum else "smallest state found (the shrinking's budget ran out)"
        wrapped = textwrap.wrap(f"{what} ({d.runs} shrinking runs): {state}", WIDTH, initial_indent="  ",
                                subsequent_indent="    ", break_long_words=True, break_on_hyphens=False)
        if len(wrapped) > 2 * MAX_LINES:  # a large state is summarised; --format json has it whole
            wrapped = wrapped[:2 * MAX_LINES] + [f"    … {len(state)} characters in all (--format json has them)"]
        lines += wrapped
    said = _failures(old, new, d)
    for side, text in said.items():  # what a run that failed or refused the state said, in place of fields
        lines += wrap_words(f"{side}: {text}", "  ", "    ")
    rows = [] if said else changed_fields(d.old, d.new)
    # a run that did not fail is made once more, traced: its values are shown, its citations compared;
    # an exact probe's outcomes are shown from its exact run
    traced = _traced(old, new, d)
    exact = d.probe.exact and rows
    runs = [_evaluated(old, d.probe, d.minimal), _evaluated(new, d.probe, d.minimal)] if exact else traced
    outcomes = [r for r in rows if r[0].startswith("/distribution/")]
    if outcomes and len(outcomes) == len(rows):  # exact: the outcomes told apart by what differs in them
        keys = [json.loads(r[0][len("/distribution/"):].replace("~1", "/").replace("~0", "~")) for r in outcomes]
        values = {json.dumps(o["result"], sort_keys=True): v for r in runs if r is not None and r.exact is not None
                  for o, (v, _) in zip(r.exact["outcomes"], r.outcomes or [])}
        texts = [json.dumps(k, sort_keys=True) for k in keys]
        # each outcome's values in the notation, as `run --exact` shows them (a grouped sum has none: its JSON)
        labels = (outcome_labels([values[t] for t in texts], scalar) if all(t in values for t in texts)
                  else outcome_labels(keys))
        table = _common_denominator([v for _, x, y in rows for v in (x, y)])
        over = {id(r): table or _common_denominator([r[1], r[2]]) for r in rows}

        def odds(v: Any, row: Any = None) -> str:
            common = over.get(id(row))
            f = _fraction(v) if isinstance(v, str) else None
            if common and f is not None:
                return f"{f.numerator * (common // f.denominator)}/{common}"
            return v if isinstance(v, str) else _show(v)
        wo = max([len(odds(r[1], r)) for r in rows] + [3])
        wn = max([len(odds(r[2], r)) for r in rows] + [3])
        lines.append(f"  {'OLD'.ljust(wo)}  {'NEW'.ljust(wn)}  outcome")
        cap = EXACT_ROWS.get()
        for row, label in list(zip(outcomes, labels))[:cap if cap >= 0 else None]:
            x, y = odds(row[1], row), odds(row[2], row)
            parts = textwrap.wrap(label, max(30, WIDTH - wo - wn - 6), break_long_words=True, break_on_hyphens=False)
            lines.append(f"  {x.ljust(wo)}  {y.ljust(wn)}  {parts[0] if parts else ''}".rstrip())
            lines += [" " * (wo + wn + 6) + part for part in parts[1:MAX_LINES]]
        if 0 <= cap < len(outcomes):
            lines.append(f"  ... {len(outcomes) - cap} more outcomes differ (--rows N shows N; --group-by FIELD sums "
                         "them by one field)")
        rows = []
    w = max([len(p) for p, _, _ in rows] + [5])
    limit = 70
    if rows and 2 + w + 2 + 2 * limit + 2 > WIDTH:  # both values cut to fit the width beside the field
        limit = max(16, (WIDTH - w - 6) // 2)
    ra, rb = runs
    wo = max([len(_shown(ra, p, x, limit)) for p, x, _ in rows] + [3])
    if not rows:
        pass
    elif w <= MAX_FIELD_COLUMN:
        lines.append(f"  {'field'.ljust(w)}  {'OLD'.ljust(wo)}  NEW")
        for p, x, y in rows:
            lines.append(f"  {p.ljust(w)}  {_shown(ra, p, x, limit).ljust(wo)}  {_shown(rb, p, y, limit)}")
    else:  # long pointers (an exact distribution is keyed by whole results): one field per line
        for p, x, y in rows:
            lines.append(f"  {p}")
            half = (WIDTH - 16) // 2
            lines.append(f"      OLD {_shown(ra, p, x, half).ljust(min(wo, half))}  NEW {_shown(rb, p, y, half)}")
    for side, only in cited_only(old, new, d, traced).items():
        if only:
            head = f"  cited only by {side}: "
            lines += wrap_words(", ".join(only), head, " " * len(head))
    return "\n".join(one_line(line) for line in lines)  # a line break from the input is shown, not obeyed


# `--rows`: how many outcome rows of an exact table are shown (a context variable, as IGNORE_CITES: set by the
# command or a playground request, read where the table is written)
EXACT_ROWS: ContextVar[int] = ContextVar("exact_rows", default=12)


ABSENT = "(absent)"  # the value of `--group-by`'s field in an outcome without it


def grouped_distribution(result: Any, field: str) -> Any:
    """An exact run's distribution summed by one field of its outcomes (a dotted path, as the tables
    name fields: ``results.0.hit``): one outcome per value of the field, ``(absent)`` where an outcome
    has none. Anything else is returned as it is."""
    from .textview import leaves

    if not (isinstance(result, dict) and isinstance(result.get("distribution"), dict)):
        return result
    sums: dict[str, Fraction] = {}
    for key, p in result["distribution"].items():
        value = leaves(json.loads(key)).get(field, ABSENT)
        k = json.dumps({field: value}, sort_keys=True)
        sums[k] = sums.get(k, Fraction(0)) + Fraction(p)
    return {"distribution": {k: f"{v.numerator}/{v.denominator}" for k, v in sorted(sums.items())}}


def cited_only(old: Any, new: Any, d: Difference, traced: list[Any] | None = None) -> dict[str, list[str]]:
    """The clauses the runs of one side only cite on the difference's (minimal) state, by side, from
    the two sides' traced runs (``_traced``: made here unless given): what each run's trace and events
    cited (``coverage.cited_by``) and its state check (``coverage.check_cites``, which the run's trace
    leaves out), as coverage counts; never a clause id a value carries."""
    runs = traced or _traced(old, new, d)
    ca, cb = (cited_by(r) | check_cites(rs, d.minimal) if r is not None else set() for rs, r in zip((old, new), runs))
    return {"OLD": sorted(ca - cb), "NEW": sorted(cb - ca)}


def _failures(old: Any, new: Any, d: Difference) -> dict[str, str]:
    """What each side whose run failed or refused the (minimal) state said: its first diagnostic, by side."""
    return {side: _refusal(rs, d.minimal, d.probe) for side, rs, r in (("OLD", old, d.old), ("NEW", new, d.new))
            if _failed(r)}


MAX_SHOWN = 10  # problems shown with a start state a ruleset refuses


def _wrapped(text: str) -> str:
    """A message of ours (not an error's first line) over lines of at most 100 columns."""
    return "\n".join(wrap_words(text))


def _other_game(old: Any, new: Any) -> str:
    """A hint, when the two rulesets' state schemas differ: they may not be rulesets of one game."""
    return "the two rulesets' state schemas differ: are they of the same game?" if old.schema != new.schema else ""


def cmd_diff(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..core.exits import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError, exit_code, exit_for_code
    from .common import load_for_run
    from ..core.diagnostics import render_all, visible
    from pathlib import Path

    from .common import require_regular

    for p in (args.old, args.new):
        require_regular(p, "ruleset")  # (U001 saying what it is instead: not found, a folder, a FIFO)
    from .balance import MAX_GAMES

    for flag, value, least in (("--games", args.games, 0), ("--generate", args.generate, 0), ("--phases", args.phases, 1)):
        if value is not None and value < least:
            raise UsageError(f"{flag} takes a number from {least}, not {value}")
    for flag, value in (("--games", args.games), ("--generate", args.generate)):  # (listed before they are run)
        if value > MAX_GAMES:
            raise UsageError(f"{flag} takes at most {MAX_GAMES:,}, not {value:,}")
    for flag, value in (("--shrink", args.shrink), ("--show", args.show), ("--rows", args.rows)):
        if value < -1:
            raise UsageError(f"{flag} takes a number from 0, or -1 for all, not {value}")
    if args.show_groups < 1:
        raise UsageError(f"--show-groups takes a number from 1, not {args.show_groups}")
    if args.exact and not args.generate:  # (cases say `exact: true` themselves; games are played by seed)
        raise UsageError("--exact goes with --generate N: a case is exact by its own `exact: true`")
    if args.group_by is not None and not (args.exact or args.cases):  # (it was ignored without a word)
        raise UsageError("--group-by sums the outcomes of exact runs: give --exact, or cases that are exact")
    if (args.start is not None or args.phases is not None) and not args.games:
        raise UsageError("--start and --phases go with --games N")
    if args.import_with is not None and not args.records:
        raise UsageError("--import QUERY reads the records of --records FILE...")
    if args.start is not None:
        require_regular(args.start, "start state")
    old, new = load_for_run(args.old, err), load_for_run(args.new, err)
    if old is None or new is None:
        return EXIT_FINDINGS
    if not (args.cases or args.generate or args.games or args.records):
        raise UsageError("nothing to compare: give --cases PATH, --generate N, --games N or --records FILE...")
    probes: list[Probe] = []
    worst = EXIT_OK  # of what was said on the way (a case file that cannot be read)
    if args.cases:
        found, diags = case_probes(args.cases)
        if diags:
            err.write(render_all(diags, None, err) + "\n")
            worst = exit_code([d for d in diags if d.is_error])
        if any(d.code == "U001" for d in diags):  # (a path named that is not there: the command line's slip, said alone)
            return worst
        probes += found
    IGNORE_CITES.set(args.ignore_cites)
    EXACT_ROWS.set(args.rows)
    opts = Options(args.jobs, args.cluster, err)
    states = compare_states(old, new, probes, args.generate, args.seed, args.exact,
                            None if args.shrink < 0 else args.shrink, opts, args.group_by)
    assert states.differences is not None
    diffs, tried, seen = states.differences, states.tried, [states.seen]
    # the cases (chosen by hand: a count, no interval) are summed apart from the generated states (a sample)
    cases = [f for f in states.found or [] if f.probe is not None and f.probe.case]
    generated = [f for f in states.found or [] if f.probe is not None and not f.probe.case]
    cases_tried, generated_tried = (sum(1 for f in part if not f.refused) for part in (cases, generated))
    grouped = [f.grouped for f in states.found or [] if f.grouped is not None]
    if args.group_by is not None and tried and not any(grouped):  # every sum one `(absent)`: nothing compared
        raise UsageError(f"--group-by `{args.group_by}`: " + (
            f"no outcome of the {len(grouped)} exact run{'s' if len(grouped) != 1 else ''} has this field "
            "(a dotted path into an outcome, as the outcome tables name fields: `results.0.hit`)"
            if grouped else "none of the states tried was run exact (`--exact`, or a case's `exact: true`)"))
    notes = [states.note] if states.note else []
    skips = states.skips
    note = notes[0] if notes else None
    if note:
        err.write(_wrapped(f"note: {note}") + "\n")
    if states.note_code is not None:  # a generator that failed (E0xx: an error of the rules, exit 1), after the
        worst = max(worst, exit_for_code(states.note_code))  # states before it: never an all-clear for fewer
    recorded = StateReport()
    records_read = 0
    if args.records:  # (a recorded state is a real game's: never shrunk, shown with its place in the record)
        found_r, said, records_read = record_probes(args.records, old, new, args.import_with)
        if said:
            err.write(render_all(said, None, err) + "\n")
            worst = max(worst, EXIT_INPUT)
        recorded = compare_states(old, new, found_r, 0, 0, False, 0, opts)
        skips = skips + recorded.skips
    games = GameReport()
    if args.games:
        given, start_text = None, None
        if args.start:
            from ..engine.state import read_state_text, state_file_text
            from ..core.diagnostics import DiagnosticError

            try:  # (its text kept: what a ruleset says of the state is placed at its lines, as `play` does)
                start_text = state_file_text(Path(args.start))
                given = read_state_text(start_text, args.start)
            except DiagnosticError as exc:
                err.write(render_all(exc.diagnostics, None, err) + "\n")
                return EXIT_INPUT
        start, problem = start_state(old, new, given)
        if problem is not None:
            raise UsageError(problem)
        for side, rs, path in (("OLD", old, args.old), ("NEW", new, args.new)):
            problems = rs.state_errors(start, args.start or "start_state")
            if problems and args.start and given is start:
                from ..engine.state import at_lines

                problems = at_lines(problems, args.start, start_text)
            if problems:
                hint = _other_game(old, new)
                err.write(_wrapped(f"ruleval: {side} ({path}) refuses the start state{f' ({hint})' if hint else ''}:") + "\n")
                err.write(render_all(problems[:MAX_SHOWN], None, err) + "\n")
                if len(problems) > MAX_SHOWN:
                    err.write(f"ruleval: and {len(problems) - MAX_SHOWN} more problems with the start state\n")
                return EXIT_INPUT
        games = play_games(old, new, start, args.games, 30 if args.phases is None else args.phases, args.seed,
                           None if args.shrink < 0 else max(0, args.shrink - len(diffs)), opts)
        if games.note:  # the games could not be played as asked
            err.write(_wrapped(f"ruleval: {visible(games.note)}") + "\n")
        for why in games.stopped or []:
            err.write(_wrapped(f"ruleval: {visible(why)}") + "\n")
        if games.note or len(games.stopped or []) > games.broken:  # a state refused: exit 3
            worst = max(worst, EXIT_INPUT)
        if games.broken:  # an error of the rules: a finding (exit 1), as E0xx errors are
            worst = max(worst, EXIT_FINDINGS)
        diffs += games.differences or []
    diffs += recorded.differences or []
    in_records = recorded.found or []
    phases_tried = recorded.tried
    records_differ = len({f.probe.record for f in in_records if f.differ and f.probe is not None})
    if args.format == "json":
        from .common import result_json
        from ..api import RunError

        try:
            out.write(result_json(new, "main", {
                "tried": tried, "skipped": seen[0] - tried + recorded.seen - recorded.tried,
                "skip_reasons": dict(sorted(skips.items())),
                "games": games.games, "phases": games.phases,
                "records": records_read, "recorded_phases": phases_tried, "records_that_differ": records_differ,
                "stopped": games.stopped or [], "notes": [n for n in (note, games.note) if n],
                "interrupted": states.interrupted or games.interrupted or recorded.interrupted, "group_by": args.group_by,
                "summary": {"cases": summary_json(cases, cases_tried, sample=False),
                            "states": summary_json(generated, generated_tried),
                            "games": summary_json(games.found or [], games.games),
                            "recorded_phases": summary_json(in_records, phases_tried, sample=False)},
                "differences": [
                {"state": d.probe.name, "record": d.probe.record, "query": d.probe.query, "exact": d.probe.exact,
                 "shrunk": d.runs >= 0,
                 "seed": d.probe.seed, "shrinking_runs": max(d.runs, 0), "minimal": d.minimal,
                 "local_minimum": d.minimum is True,
                 "cited_only_by": cited_only(old, new, d), "failures": _failures(old, new, d),
                 "old": d.old, "new": d.new,
                 "changed": [{"pointer": p, "old": x, "new": y} for p, x, y in changed_fields(d.old, d.new)]}
                for d in diffs]}, indent=2) + "\n")
        except RunError as exc:
            err.write(render_all(exc.diagnostics, new.sources, err) + "\n")
            return EXIT_FINDINGS
    else:
        for text in shown_differences(old, new, diffs, args.show, "(--show N prints N; --format json has them all)"):
            out.write(visible(text) + "\n")
        figures = []
        if args.cases and cases_tried:
            figures += summary_text(cases, cases_tried, "cases", args.show_groups, sample=False)
        if args.generate and generated_tried and len(diffs) and (args.generate > 1 or args.summary):
            figures += summary_text(generated, generated_tried, "generated states", args.show_groups)
        if games.games and len(diffs) and (games.games > 1 or args.summary):
            figures += summary_text(games.found or [], games.games, "games", args.show_groups)
        if args.records and phases_tried and recorded.differences:
            from .impact import Share

            # (every record was compared: a count, not a sample, so no interval)
            figures.append(f"records that differ: {Share(records_differ, records_read).text(interval=False)}")
            figures += summary_text(in_records, phases_tried, "recorded phases", args.show_groups, sample=False)
        for line in figures:  # (before the verdict, which stays the last line)
            out.write(one_line(line) + "\n")
        skipped = seen[0] - tried + recorded.seen - phases_tried
        played = (f" and {games.phases} phase{'s' if games.phases != 1 else ''} of {games.games} "
                  f"game{'s' if games.games != 1 else ''}") if args.games else ""
        if args.records:
            played += (f" and {phases_tried:,} phase{'s' if phases_tried != 1 else ''} of {records_read} "
                       f"record{'s' if records_read != 1 else ''}")
        other = _other_game(old, new) if not tried else None
        out.write(_wrapped(tried_line(tried, skips, skipped, len(diffs), tried + games.phases + phases_tried,
                                      bool(games.stopped or games.note), played, f"; {other}" if other else "")) + "\n")
    if states.interrupted or games.interrupted or recorded.interrupted:
        err.write("ruleval: interrupted: the figures above are of what ran before it\n")
        return 130
    if not diffs and not tried and not games.phases and not phases_tried:  # never an all-clear for what was not compared
        return worst or EXIT_INPUT
    return max(worst, EXIT_FINDINGS if diffs else EXIT_OK)


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("diff", help="compare two rulesets on cases and generated states; shrink counterexamples")
    p.add_argument("old")
    p.add_argument("new")
    p.add_argument("--cases", nargs="+", default=[], metavar="PATH", help="YAML case files or folders")
    p.add_argument("--generate", type=int, default=0, metavar="N",
                   help="also try N states from the ruleset's `query generate(seed)`")
    p.add_argument("--seed", type=int, default=0, help="first seed for --generate (default 0)")
    p.add_argument("--exact", action="store_true", help="compare outcome distributions for generated states")
    p.add_argument("--games", type=int, default=0, metavar="N",
                   help="also play N whole games side by side with random orders (`query random_orders(seed)`, "
                        "`query advance`); report each game's first differing phase")
    p.add_argument("--phases", type=int, default=None, metavar="P", help="phases per game (default 30)")
    p.add_argument("--start", metavar="STATE", help="the state games start from (default: `query start_state`)")
    p.add_argument("--records", nargs="+", default=[], metavar="FILE",
                   help="also run every state of these game records (as `ruleval replay` reads them), with its orders, "
                        "under both (`query advance`); each differing phase is shown at its place in the record")
    p.add_argument("--import", dest="import_with", metavar="QUERY",
                   help="read the --records with this importer query (NEW's, else OLD's), as `ruleval replay --import`")
    p.add_argument("--ignore-cites", action="store_true", help="results that differ only in their citations are equal")
    p.add_argument("--shrink", type=int, default=SHRUNK, metavar="N",
                   help=f"shrink the first N differing states (default {SHRUNK}; -1: all); the others are shown as found")
    p.add_argument("--show", type=int, default=SHOWN, metavar="K",
                   help=f"print the first K differences in full (default {SHOWN}; -1: all); the summary counts them all")
    p.add_argument("--show-groups", type=int, default=5, metavar="N",
                   help="in the summary, the N most frequent of each grouping (default 5)")
    p.add_argument("--summary", action="store_true", help="the summary's figures even for a single game or state")
    p.add_argument("--group-by", metavar="FIELD", default=None,
                   help="exact runs: sum each distribution by this field of the outcomes (a dotted path, `results.0.hit`), "
                        "and compare, count and show the sums")
    p.add_argument("--rows", type=int, default=12, metavar="N",
                   help="exact runs: at most N outcome rows per difference (default 12; -1: all)")
    from .sweep import add_sweep_options

    add_sweep_options(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    commands["diff"] = cmd_diff

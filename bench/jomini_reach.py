"""Reachable hexes on a big seeded Jomini board: ruleval's `reach_all` query against networkx.

    .venv/bin/python bench/jomini_reach.py [--seed N] [--units N] [--size N] [--repeat N]
    .venv/bin/python bench/jomini_reach.py --instructions [--seed N] [--units N] [--size N]

The board is 100 x 100 (CCRR labels numbered from 0000) with mixed terrain, roads and rivers,
and 200 units. ruleval runs the Révolution et Empire ruleset once over all units (one run: the
grid and the edge-cost map are computed once). networkx runs `single_source_dijkstra_path_length`
with `cutoff` on the same weighted graph (ruleval's own edge-cost map, query `costs`), one call per
unit plus one on each road's subgraph for units on a road (each road is named: a road march follows
one road, JOM-R1), as ruleval does. Both are timed in the same process, taking turns round by round
(each round starting with the other); the script prints the best times, their ratio and the median of
the rounds' ratios, then checks that both give the same ends and costs for every unit (networkx with
the occupied hexes the unit may not cross taken out).

With ``--instructions``, the same work is counted by valgrind's callgrind instead of timed (the count
does not move with the machine's load, as ``bench.ab_instructions``'s does not): each side runs in a
process of its own (the two at once), builds the board and warms up with one untimed run of its work,
then runs it once more under the count (callgrind collects while ``itertools.starmap`` drives that
run, which nothing else in it uses; what the setup left is frozen out of the garbage collector's walks,
which otherwise moved networkx's count by 4% with ruleval's leftovers). Printed: both counts and their
ratio. Needs valgrind; a few minutes.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from validator import load_ruleset  # noqa: E402
from validator.lib.builtins import _hex_grid  # noqa: E402

TERRAIN = [("clear", 58), ("woods", 14), ("hills", 10), ("marsh", 5), ("village", 8), ("impassable", 5)]
UNITS = [("infantry", "light"), ("infantry", "medium"), ("infantry", "heavy"), ("cavalry", "light"),
         ("cavalry", "heavy"), ("camelry", "light"), ("horse_artillery", "very_light"),
         ("foot_artillery", "very_light"), ("foot_artillery", "very_heavy"), ("elephants", "heavy")]


def make_state(seed: int, size: int, nunits: int) -> dict[str, Any]:
    rng = random.Random(seed)
    grid = _hex_grid(size, size, "odd-q", 0)
    labels = sorted(grid)
    names, weights = zip(*TERRAIN)
    hexes = {h: {"terrain": t} for h in labels if (t := rng.choices(names, weights)[0]) != "clear"}
    # random walks of 2 * size hexes, avoiding impassable hexes, each a road of its own name: a road march
    # follows one road (JOM-R1), and links with no name meeting three at a hex are refused (S002)
    roads: set[tuple[str, str, str]] = set()
    for w in range(size // 8):
        h = rng.choice(labels)
        for _ in range(2 * size):
            nxt = [n for n in grid[h] if hexes.get(n, {}).get("terrain") != "impassable"]
            if not nxt:
                break
            n = rng.choice(nxt)
            roads.add((min(h, n), max(h, n), f"R{w}"))
            h = n
    edges = []
    seen: set[tuple[str, str]] = set()
    while len(edges) < size * 4:
        a = rng.choice(labels)
        b = rng.choice(grid[a])
        key = (min(a, b), max(a, b))
        if key not in seen:
            seen.add(key)
            edges.append({"a": a, "b": b, "feature": rng.choices(["river", "ford", "bridge"], [6, 2, 1])[0]})
    free = [h for h in labels if hexes.get(h, {}).get("terrain") != "impassable"]
    places = rng.sample(free, nunits)
    units = []
    for i, h in enumerate(places):
        kind, cls = ("officer", "light") if i % 20 == 0 else rng.choice(UNITS)
        flags = {"activated": True}
        if kind == "infantry" and rng.random() < 0.2:
            flags["mounted"] = True
        units.append({"id": f"U{i:03d}", "side": rng.choice(["blue", "red"]), "type": kind, "class": cls,
                      "hex": h, "flags": flags})
    return {"board": {"layout": "odd-q", "first": 0, "cols": size, "rows": size, "hexes": hexes,
                      "roads": [list(r) for r in sorted(roads)], "edges": edges}, "units": units}


def road_graphs(roads: list[list[str]]) -> dict[str, set[tuple[str, str]]]:
    """Each road's links, both ways, by the road's name (the graph a road march searches, JOM-R1)."""
    links: dict[str, set[tuple[str, str]]] = {}
    for a, b, name in roads:
        links.setdefault(f"road {name}", set()).update({(a, b), (b, a)})
    return links


def along_roads(nx: Any, graphs: dict[str, Any], p: dict[str, Any], weight: Any = "weight") -> dict[str, int]:
    """The least cost of each hex a road march from the unit's hex reaches along one road."""
    found: dict[str, int] = {}
    for name, g in graphs.items():
        if name.startswith("road ") and p["from"] in g:
            for h, c in nx.single_source_dijkstra_path_length(g, p["from"], cutoff=p["road"], weight=weight).items():
                found[h] = min(c, found.get(h, c))
    return found


def networkx_reach(nx: Any, graphs: dict[str, Any], plan: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    out = {}
    for p in plan:
        found = nx.single_source_dijkstra_path_length(graphs[p["graph"]], p["from"], cutoff=p["calm"])
        if p["road"] is not None:
            found = {**along_roads(nx, graphs, p), **found}
        out[p["unit"]] = found
    return out


def networkx_run(nx: Any, costs: dict[str, Any], roads: list[list[str]],
                 plan: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    """networkx's side: the weighted graphs built from ruleval's edge-cost map, then searched."""
    graphs = {"main": nx.DiGraph(), "lone": nx.DiGraph()}
    graphs["main"].add_weighted_edges_from((a, b, c) for a, row in costs["edges"].items() for b, c in row.items())
    for name, links in road_graphs(roads).items():
        graphs[name] = nx.DiGraph()
        graphs[name].add_weighted_edges_from((a, b, c) for a, row in costs["edges"].items() for b, c in row.items()
                                             if (a, b) in links)
    graphs["lone"].add_weighted_edges_from((a, b, costs["lone"][b]) for a, row in costs["edges"].items()
                                           for b in row if b in costs["lone"])
    for name in ("main", "lone"):
        graphs[name].add_nodes_from(costs["edges"])
    return graphs, networkx_reach(nx, graphs, plan)


def setup(args: argparse.Namespace) -> tuple[dict[str, Any], Any, list[Any], dict[str, Any], list[dict[str, Any]]]:
    """The board, the ruleset, one (untimed) `reach_all` run, the edge-cost map and networkx's plan. The
    runs measured skip the state check; the board is checked here once, by its schema and by the
    ruleset's own `validate_state`: a figure on a board the rules refuse measures nothing they define."""
    state = make_state(args.seed, args.size, args.units)
    rs = load_ruleset(ROOT / "rulesets/jomini/re.rules")
    if not rs.ok:
        raise SystemExit("ruleset does not check")
    refused = rs.state_errors(state, "<generated board>")
    if refused:
        raise SystemExit(f"the generated board is refused by the ruleset ({len(refused)} problems), the first: "
                         f"{refused[0].pointer}: {refused[0].message}")
    result = rs.run(state, query="reach_all", validate=False)
    costs = rs.run(state, query="costs", validate=False)
    plan = [{"unit": r["unit"], "from": r["from"], "calm": r["allowance"]["calm"], "road": r["allowance"]["road"],
             "graph": "lone" if u["type"] == "officer" else "main"} for r, u in zip(result, state["units"])]
    return state, rs, result, costs, plan


def count_child(args: argparse.Namespace, nx: Any) -> int:
    """Under callgrind: one side's work, warmed up, then run once under `itertools.starmap` (counted)."""
    state, rs, _, costs, plan = setup(args)
    if args.count == "ruleval":
        work: Any = lambda: rs.run(state, query="reach_all", validate=False)  # noqa: E731
    else:
        work = lambda: networkx_run(nx, costs, state["board"]["roads"], plan)[1]  # noqa: E731
    work()
    gc.collect()
    gc.freeze()  # (what the setup left is not walked by the collections the counted run makes)
    done = list(itertools.starmap(work, [()]))[0]
    print(f"{args.count}: {len(done)} units searched")
    return 0


def _total(out: Path) -> int:
    for line in out.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise SystemExit(f"no total in {out}")


def count_instructions(args: argparse.Namespace) -> int:
    """Both sides counted by callgrind, each in a process of its own, the two at once."""
    if shutil.which("valgrind") is None:
        print("--instructions needs valgrind (e.g. `apt install valgrind`)", file=sys.stderr)
        return 2
    env = {**os.environ, "PYTHONHASHSEED": "0"}  # the same dict and set layouts in every run
    sides = ("ruleval", "networkx")
    with tempfile.TemporaryDirectory() as tmp:
        outs = {side: Path(tmp) / f"{side}.out" for side in sides}
        runs = {side: subprocess.Popen(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={outs[side]}", "--collect-atstart=no",
             "--toggle-collect=starmap_next", sys.executable, __file__, "--count", side, "--seed", str(args.seed),
             "--size", str(args.size), "--units", str(args.units)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) for side in sides}
        for side, proc in runs.items():
            _, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"counting {side} failed:\n{err.decode(errors='replace').strip()[-2000:]}")
        counted = {side: _total(out) for side, out in outs.items()}
    print(f"board {args.size}x{args.size}, {args.units} units, seed {args.seed}; instructions of one run, "
          "counted by callgrind after a warm-up run")
    print(f"ruleval  reach_all : {counted['ruleval'] / 1e9:.3f} G instructions  (grid + edge costs + searches)")
    print(f"networkx dijkstra  : {counted['networkx'] / 1e9:.3f} G instructions  (graph build + searches)")
    print(f"ratio ruleval / networkx: {counted['ruleval'] / counted['networkx']:.3f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--size", type=int, default=100)
    ap.add_argument("--units", type=int, default=200)
    ap.add_argument("--repeat", type=int, default=7, help="rounds, each engine once a round")
    ap.add_argument("--instructions", action="store_true", help="count instructions with callgrind instead of timing")
    ap.add_argument("--count", choices=["ruleval", "networkx"], help=argparse.SUPPRESS)  # (a counted child's side)
    args = ap.parse_args(argv)
    try:
        import networkx as nx
    except ImportError:
        print("networkx is not installed: pip install -e '.[test]'", file=sys.stderr)
        return 2
    if args.count:
        return count_child(args, nx)
    if args.instructions:
        return count_instructions(args)

    # ruleval: one run of `reach_all` (grid, edge costs and 200 searches); the state's validation against
    # the schema is timed apart (networkx checks nothing; `setup` checked the board whole)
    state, rs, result, costs, plan = setup(args)
    t0 = time.perf_counter()
    rs.state_schema_errors(state)
    t_validate = time.perf_counter() - t0

    # the two take turns, each round starting with the other, so that the machine's load hits both alike
    times, nx_times = [], []
    graphs: dict[str, Any] = {}
    for i in range(args.repeat):
        for which in (("ruleval", "networkx") if i % 2 == 0 else ("networkx", "ruleval")):
            t0 = time.perf_counter()
            if which == "ruleval":
                result = rs.run(state, query="reach_all", validate=False)
                times.append(time.perf_counter() - t0)
            else:
                graphs, reach_nx = networkx_run(nx, costs, state["board"]["roads"], plan)
                nx_times.append(time.perf_counter() - t0)
    t_ruleval, t_nx = min(times), min(nx_times)

    print(f"board {args.size}x{args.size}, {len(state['board']['roads'])} road links, "
          f"{len(state['board']['edges'])} hex-side features, {args.units} units, best of {args.repeat}")
    print(f"ruleval  reach_all : {t_ruleval * 1000:8.1f} ms  (grid + edge costs + {len(plan)} searches; "
          f"schema validation of the state apart: {t_validate * 1000:.1f} ms)")
    print(f"networkx dijkstra  : {t_nx * 1000:8.1f} ms  (graph build + {len(plan)} searches)")
    print(f"ratio ruleval / networkx: {t_ruleval / t_nx:.2f}  (median runs {statistics.median(times) * 1000:.1f} "
          f"vs {statistics.median(nx_times) * 1000:.1f} ms; median of the rounds' ratios "
          f"{statistics.median(a / b for a, b in zip(times, nx_times)):.2f})")

    # same answers: networkx again, with the hexes a unit may not cross taken out of its graph
    # (JOM-O1, O2: a hex held by another is passed only by a crosser over artillery or over a lone officer of
    # its side, and ended on only where an officer and a unit of one side come together; every officer this
    # bench places is alone)
    occupied = {u["hex"]: u for u in state["units"]}
    crossers, artillery = {"infantry", "cavalry", "camelry"}, {"foot_artillery", "horse_artillery"}
    mismatches = 0
    for p, r, u in zip(plan, result, state["units"]):
        blocked = {h for h, o in occupied.items()
                   if o["id"] != u["id"] and not (u["type"] in crossers and o["type"] in artillery)
                   and not (o["type"] == "officer" and o["side"] == u["side"])}
        ends_on = {h for h, o in occupied.items()
                   if o["side"] == u["side"] and (o["type"] == "officer") != (u["type"] == "officer")}

        def weight_of(blocked: set[Any]) -> Any:
            return lambda a, b, d: None if a in blocked else d["weight"]

        found = nx.single_source_dijkstra_path_length(graphs[p["graph"]], p["from"], cutoff=p["calm"],
                                                      weight=weight_of(blocked))
        if p["road"] is not None:
            found = {**along_roads(nx, graphs, p, weight_of(blocked)), **found}
        want = {h: c for h, c in found.items() if h != p["from"] and (h not in occupied or h in ends_on)}
        got = {h: v["cost"] for h, v in r["hexes"].items()}
        if want != got:
            mismatches += 1
            if mismatches <= 3:
                print(f"  mismatch for {p['unit']}: only ruleval {sorted(set(got) - set(want))[:5]}, "
                      f"only networkx {sorted(set(want) - set(got))[:5]}")
    clear = sum(1 for r in result for h in r["hexes"] if h not in state["board"]["hexes"])
    print(f"same reachable hexes and costs: {len(plan) - mismatches}/{len(plan)} units "
          f"({sum(len(r['hexes']) for r in result)} ends, {clear} of them clear terrain)")
    del reach_nx
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())

"""The route study of issue 46, item 5: a Diplomacy movement turn on a typed representation.

This is **hand-derived Python**, written to mirror what a backend would generate from the standard
ruleset (``rulesets/diplomacy/standard.rules``) once the program is bound and typed, with every lever
of the issue on. It is not generated, it is no second engine anyone may use, and it knows only what
the bench and its test give it; it exists to measure how far such code goes against pydip
(``python -m bench.route``) before anyone builds the generator.

What the typed program would let generated code do, and this file does:

- **Places are interned small integers.** Provinces and fleet locations are numbered once per map
  (``Board``); adjacency is lists and sets of those numbers. Texts appear only at the edges: reading
  the state and orders in, writing the result out.
- **Orders and units are records of a known shape**, kept as fixed slots: one array per field,
  indexed by province (``kind[p]``, ``to[p]``, ``conv[p]``...), as a record type with known fields
  would be laid out. No field is looked up by name; no ``_type(x) is ...`` guard remains (the types
  are known); no step is counted (an upper bound per body, checked once, would stand for it).
- **Selective memo**: only the decisions (``moves``, ``given``, ``convoy_holds``) keep values, with
  the reference's guess-and-cycle algorithm (``reference.Interpreter.resolve``) and the ruleset's
  ``cycle`` policy; every other definition is recomputed, which is what the reference's memo gives
  (a value read under a guess is not kept there either).
- **Inlining and inline loops**: small definitions (``moving``, ``head_to_head``, ``path``...) are
  written in place and ``any``/``all``/``count`` become loops, not built-ins calling back.
- **Order texts read once per program**: a text's reading is kept, as the engine keeps a state-free
  definition's value for the program's life.

Each definition below names the rule of ``standard.rules`` it mirrors, in the same order of
evaluation (so that decisions are resolved in the reference's order, which matters in a paradox).
What it leaves out is the state check (schema and ``validate_state``: pydip checks nothing either)
and the result's texts (``reason``, ``cites``); an order or place it cannot read as the ruleset's
canonical notation (``A LON - NWY``, ``F NTH C A LON - NWY``, ``A MUN S A BER - SIL``, coasts as
``SPA/NC``) makes it give ``None``: it cannot take that turn, rather than guess.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

MAP = Path(__file__).resolve().parent.parent.parent / "rulesets" / "diplomacy" / "standard_map.yaml"

LAND, COAST, SEA, IMPASSABLE = 0, 1, 2, 3
_KINDS = {"land": LAND, "coast": COAST, "sea": SEA, "impassable": IMPASSABLE}
HOLD, MOVE, SUPPORT, CONVOY = 0, 1, 2, 3
# an order's reading: (form, unit place, supported/convoyed place, destination, via)
F_HOLD, F_MOVE, F_SHOLD, F_SMOVE, F_CONVOY = 0, 1, 2, 3, 4
# decisions: key = kind * NPROV + province
D_MOVES, D_GIVEN, D_CONVOY = 0, 1, 2
UNRESOLVED, GUESSING, RESOLVED = 0, 1, 2


class Board:
    """The map, interned: provinces 0..P-1, fleet locations (a province, or a province's coast)."""

    def __init__(self, path: Path = MAP):
        m = yaml.safe_load(path.read_text(encoding="utf-8"))
        provs = list(m["provinces"])
        self.pname = provs
        self.pindex = {p: i for i, p in enumerate(provs)}
        self.kind = [_KINDS[m["provinces"][p]["kind"]] for p in provs]
        self.coasts = [tuple(m["provinces"][p].get("coasts") or ()) for p in provs]
        self.convoy_place = [self.kind[i] == SEA or bool(m["provinces"][p].get("convoyable")) for i, p in enumerate(provs)]
        locs = list(provs) + [f"{p}/{c}" for p in provs for c in m["provinces"][p].get("coasts") or ()]
        for k in m["fleet"]:
            if k not in locs:
                locs.append(k)
        self.lname = locs
        self.lindex = {x: i for i, x in enumerate(locs)}
        self.lprov = [self.pindex[x.split("/")[0]] for x in locs]
        self.army_adj = [[self.pindex[x] for x in m["army"].get(p) or ()] for p in provs]
        self.army_adj_set = [frozenset(a) for a in self.army_adj]
        self.fleet = [[self.lindex[x] for x in m["fleet"].get(loc) or ()] for loc in locs]
        # fleet_padj: the provinces a fleet in p reaches from any of its coasts (`unique`: first seen first)
        padj: list[list[int]] = [[] for _ in provs]
        for k, targets in m["fleet"].items():
            row = padj[self.pindex[k.split("/")[0]]]
            for x in targets:
                q = self.pindex[x.split("/")[0]]
                if q not in row:
                    row.append(q)
        self.fleet_padj = padj
        self.fleet_padj_set = [frozenset(r) for r in padj]
        self.fleet_reach_provs = [frozenset(self.lprov[x] for x in self.fleet[loc]) for loc in range(len(locs))]
        self.powers = list(m.get("powers") or ())
        self.texts: dict[str, Any] = {}  # order texts read, for the program's life


def read_place(b: Board, tok: str) -> tuple[int, str | None] | None:
    """`read_loc` for the canonical notation: (province, coast as written or None); None when the
    token is not a province id (the ruleset would try names and aliases: not taken here)."""
    p, _, c = tok.partition("/")
    i = b.pindex.get(p)
    if i is None or (_ and not c):
        return None
    return i, (c or None)


_TYPES = frozenset({"a", "f", "army", "fleet"})
_SEPS = frozenset({"-", "->"})
_SUPPORT = frozenset({"s", "support", "supports"})
_CONVOY = frozenset({"c", "convoy", "convoys"})
_HOLDS = frozenset({"h", "hold", "holds"})


def read_order(b: Board, text: str) -> Any:
    """`read_order` for the canonical notation: a tuple (form, u, f, to, via), each place a
    (province, coast) pair; None when this prototype cannot read the text as the ruleset does."""
    t = text.casefold().replace("(", "/").replace(")", "").strip()
    if t.endswith("."):
        t = t[:-1].strip()
    toks = t.split()
    if ":" in t or not toks:
        return None
    i = 1 if toks[0] in _TYPES else 0
    if i >= len(toks):
        return None
    u = read_place(b, toks[i])
    rest = toks[i + 1:]
    if u is None or not rest:
        return None
    n = len(rest)
    if n == 1 and rest[0] in _HOLDS:
        return (F_HOLD, u, None, None, False)
    if rest[0] in _SEPS and n >= 2:
        to = read_place(b, rest[1])
        tail = rest[2:]
        if to is None or tail not in ([], ["via"], ["via", "convoy"], ["by", "convoy"]):
            return None
        return (F_MOVE, u, None, to, bool(tail))
    if rest[0] in _SUPPORT or rest[0] in _CONVOY:
        j = 2 if n > 1 and rest[1] in _TYPES else 1
        if j >= n:
            return None
        f = read_place(b, rest[j])
        tail = rest[j + 1:]
        if f is None:
            return None
        if rest[0] in _SUPPORT and (tail == [] or (len(tail) == 1 and tail[0] in _HOLDS)):
            return (F_SHOLD, u, f, None, False)
        if len(tail) == 2 and tail[0] in _SEPS:
            to = read_place(b, tail[1])
            if to is None:
                return None
            return (F_SMOVE if rest[0] in _SUPPORT else F_CONVOY, u, f, to, False)
    return None


def adjudicate(b: Board, state: dict[str, Any], stop: str | None = None) -> dict[str, Any] | None:
    """One movement turn (`movement_result` of standard.rules), or None when it cannot take the turn.
    ``stop`` ends it early, for ``python -m bench.route --stages`` only: after reading the state and
    checking the orders (``"read"``), or after the effective orders and what the decisions read
    (``"prepare"``), before any decision; it then gives an empty result."""
    pindex, lindex, lprov, kind = b.pindex, b.lindex, b.lprov, b.kind
    army_adj_set, fleet, fleet_padj, fleet_padj_set = b.army_adj_set, b.fleet, b.fleet_padj, b.fleet_padj_set
    fleet_reach_provs, coasts, pname, lname = b.fleet_reach_provs, b.coasts, b.pname, b.lname
    NP = len(pname)

    # ---- the state in: units (unit_rec, unit_at), interned
    units = state.get("units") or []
    u_power: list[Any] = [None] * NP  # a province's unit: its power (None: no unit), fleet?, location
    u_fleet = [False] * NP
    u_loc = [0] * NP
    order_of_units: list[int] = []  # the provinces of `unit_at`'s keys, in its order
    for u in units:
        loc = lindex.get(u["location"].casefold())
        if loc is None:
            return None
        p = lprov[loc]
        fl = u["type"] == "fleet"
        if u_power[p] is None:
            order_of_units.append(p)
        else:
            return None  # two units in a province: the state check's business
        u_power[p], u_fleet[p], u_loc[p] = u["power"], fl, loc if fl else p
    fleet_seas = {p for p in order_of_units if u_fleet[p] and b.convoy_place[p]}

    # ---- order legality (check_movement and what it calls)
    def path_exists(graph: Any, s: int, t: int, ok: Any) -> bool:  # the built-in, breadth-first
        if s == t:
            return True
        seen = {s}
        frontier = [s]
        while frontier:
            nxt = []
            for node in frontier:
                for n in graph[node]:
                    if n in seen:
                        continue
                    if n == t:
                        return True
                    seen.add(n)
                    if ok(n):
                        nxt.append(n)
            frontier = nxt
        return False

    def held(n: int) -> bool:
        return n in fleet_seas

    def convoy_possible(p: int, t: int) -> bool:
        if kind[p] != COAST or kind[t] != COAST:
            return False
        for s in fleet_padj[p]:
            if s in fleet_seas and path_exists(fleet_padj, s, t, held):
                return True
        return False

    def route_avoids(p: int, t: int, x: int) -> bool:
        def ok(n: int) -> bool:
            return n != x and n in fleet_seas
        for s in fleet_padj[p]:
            if s != x and s in fleet_seas and path_exists(fleet_padj, s, t, ok):
                return True
        return False

    def route_seas_from(path: list[int], t: int) -> set[int]:
        last = path[-1]
        acc: set[int] = set()
        before = path[:-1]
        for s in fleet_padj[last]:
            if s != t and s in fleet_seas and s not in path and not any(s in fleet_padj_set[x] for x in before):
                if t in fleet_padj_set[s]:
                    acc |= set(path[1:]) | {s}
                else:
                    acc |= route_seas_from(path + [s], t)
        return acc

    def order_coast(r: tuple[int, str | None]) -> str | None:
        c = r[1]
        return c if c is not None and c in coasts[r[0]] else None

    def unit_can_reach(p: int, t: int) -> bool:
        return t in fleet_reach_provs[u_loc[p]] if u_fleet[p] else t in army_adj_set[p]

    def supported_can_reach(v: int, t: int, x: int) -> bool:
        if not u_fleet[v]:
            return kind[t] != SEA and (t in army_adj_set[v] or (kind[v] == COAST and kind[t] == COAST
                                                                and route_avoids(v, t, x)))
        return kind[t] != LAND and t in fleet_reach_provs[u_loc[v]]

    # an order's slots: (kind, p, power, i, to, to_loc, via, adjacent, sf, sto, scoast, cf, cto)
    def check(i: int, power: str, f: Any) -> Any:
        form, ur, fr, tr, via = f
        p = ur[0]
        if u_power[p] is None or u_power[p] != power:
            return None
        if form == F_HOLD:
            return (HOLD, p, power, i, -1, -1, False, False, -1, -1, None, -1, -1)
        if form == F_MOVE:
            t = tr[0]
            if t == p or kind[t] == IMPASSABLE:
                return None
            if not u_fleet[p]:
                if kind[t] == SEA or (via and not convoy_possible(p, t)):
                    return None
                if t in army_adj_set[p]:
                    return (MOVE, p, power, i, t, t, via, True, -1, -1, None, -1, -1)
                if convoy_possible(p, t):
                    return (MOVE, p, power, i, t, t, True, False, -1, -1, None, -1, -1)
                return None
            if kind[t] == LAND:
                return None
            cands = [x for x in fleet[u_loc[p]] if lprov[x] == t]  # fleet_target
            c = order_coast(tr)
            if not cands:
                return None
            if c is not None:
                to = lindex.get(pname[t] + "/" + c)
                if to not in cands:
                    return None
            elif len(cands) == 1:
                to = cands[0]
            else:
                return None
            return (MOVE, p, power, i, t, to, False, True, -1, -1, None, -1, -1)
        s = fr[0]
        if form == F_SHOLD or form == F_SMOVE:
            if u_power[s] is None or s == p:
                return None
            if form == F_SHOLD:
                if unit_can_reach(p, s):
                    return (SUPPORT, p, power, i, -1, -1, False, False, s, -1, None, -1, -1)
                return None
            t = tr[0]
            if t == s or t == p or not unit_can_reach(p, t) or not supported_can_reach(s, t, p):
                return None
            return (SUPPORT, p, power, i, -1, -1, False, False, s, t, order_coast(tr), -1, -1)
        t = tr[0]  # a convoy
        if not u_fleet[p] or not b.convoy_place[p] or u_power[s] is None or u_fleet[s]:
            return None
        if kind[s] != COAST or kind[t] != COAST or s == t or p not in route_seas_from([s], t):
            return None
        return (CONVOY, p, power, i, -1, -1, False, False, -1, -1, None, s, t)

    texts = b.texts
    checked = []  # (valid order slots or None, the order as given)
    by_unit: dict[int, list[Any]] = {}
    for i, o in enumerate(state.get("orders") or []):
        text = o["order"]
        f = texts.get(text)
        if f is None:
            f = texts[text] = read_order(b, text) or False
        if f is False:
            return None
        c = check(i, o["power"], f)
        checked.append((c, o, f[1][0]))
        if c is not None:
            by_unit.setdefault(c[1], []).append(c)

    if stop == "read":
        return {}
    # ---- effective orders (effective, several_orders, eff), as slots by province
    e_kind = [HOLD] * NP
    e_i = [-1] * NP
    e_to = [-1] * NP
    e_to_loc = [-1] * NP
    e_via = [False] * NP
    e_adj = [False] * NP
    e_sf = [-1] * NP
    e_sto = [-1] * NP
    e_scoast: list[str | None] = [None] * NP
    e_cf = [-1] * NP
    e_cto = [-1] * NP
    conv = [False] * NP
    for p in order_of_units:
        vs = by_unit.get(p)
        if vs is None:
            continue
        e = vs[0]
        if len(vs) > 1 and any(v[:3] + v[4:] != e[:3] + e[4:] for v in vs):
            continue  # several different orders: it holds (i none)
        (e_kind[p], _, _, e_i[p], e_to[p], e_to_loc[p], e_via[p], e_adj[p], e_sf[p], e_sto[p], e_scoast[p],
         e_cf[p], e_cto[p]) = e
    convoys_for: dict[tuple[int, int], list[int]] = {}
    for p in order_of_units:
        if e_kind[p] == CONVOY:
            convoys_for.setdefault((e_cf[p], e_cto[p]), []).append(p)
    attackers: dict[int, list[int]] = {}
    movers = []
    for p in order_of_units:
        if e_kind[p] == MOVE:
            if not u_fleet[p]:  # goes_by_sea, adjacent_by_sea
                cs = convoys_for.get((p, e_to[p]))
                if not e_adj[p] or ((e_via[p] or cs is not None)
                                    and (e_via[p] or any(u_power[c] == u_power[p] for c in cs or ()))):
                    conv[p] = True
            attackers.setdefault(e_to[p], []).append(p)
            movers.append(p)
    moving = [False] * NP
    for p in movers:
        moving[p] = True
    h2h = [False] * NP  # opposed and head_to_head_static
    for p in movers:
        t = e_to[p]
        if moving[t] and e_to[t] == p and not conv[p] and not conv[t]:
            h2h[p] = True

    def support_matches(p: int) -> bool:
        s = e_sf[p]
        if e_sto[p] == -1:
            return e_kind[s] != MOVE
        return e_kind[s] == MOVE and e_to[s] == e_sto[p] and not other_coast(p)

    def other_coast(p: int) -> bool:
        s = e_sf[p]
        return (e_sto[p] != -1 and e_scoast[p] is not None and e_kind[s] == MOVE and u_fleet[s] and e_to[s] == e_sto[p]
                and lname[e_to_loc[s]] != pname[e_sto[p]] + "/" + e_scoast[p])

    move_sups: dict[int, list[int]] = {}
    hold_sups: dict[int, list[int]] = {}
    for p in order_of_units:
        if e_kind[p] == SUPPORT and support_matches(p):
            (hold_sups if e_sto[p] == -1 else move_sups).setdefault(e_sf[p], []).append(p)
    convoy_fleets: dict[int, set[int]] = {}
    convoy_graph: dict[int, dict[int, list[int]]] = {}
    for p in order_of_units:
        if e_kind[p] == MOVE and conv[p]:
            fs = convoy_fleets[p] = set(convoys_for.get((p, e_to[p]), ()))
            t = e_to[p]
            g = {s: [x for x in fleet_padj[s] if x in fs or x == t] for s in fs}
            g[p] = [s for s in fleet_padj[p] if s in fs]
            convoy_graph[p] = g

    if stop == "prepare":
        return {}
    # ---- decisions: the reference's guess algorithm over typed keys, and the ruleset's cycle policy
    dstate = [UNRESOLVED] * (3 * NP)
    dvalue = [False] * (3 * NP)
    deplist: list[int] = []

    def resolve(key: int) -> bool:
        st = dstate[key]
        if st == RESOLVED:
            return dvalue[key]
        if st == GUESSING:
            deplist.append(key)
            return dvalue[key]
        old = len(deplist)
        dstate[key] = GUESSING
        dvalue[key] = False
        first = body(key)
        if len(deplist) == old:
            if dstate[key] != RESOLVED:
                dstate[key] = RESOLVED
                dvalue[key] = first
            return dvalue[key]
        if deplist[old] != key:  # it rests on another decision's guess: provisional
            deplist.append(key)
            dvalue[key] = first
            return first
        for k in deplist[old:]:
            dstate[k] = UNRESOLVED
        del deplist[old:]
        dstate[key] = GUESSING
        dvalue[key] = True
        second = body(key)
        if first == second:
            for k in deplist[old:]:
                dstate[k] = UNRESOLVED
            del deplist[old:]
            dstate[key] = RESOLVED
            dvalue[key] = first
            return first
        members = deplist[old:]
        if key not in members:
            members.insert(0, key)
        del deplist[old:]
        # cycle moves, given, convoy_holds (DATC-4.A.2, DIP-S5)
        if any(m // NP == D_CONVOY for m in members):
            chosen, value = [m for m in members if m // NP == D_CONVOY], False
        elif any(m // NP == D_MOVES for m in members):
            chosen, value = [m for m in members if m // NP == D_MOVES], True
        else:
            chosen, value = members, False
        for m in chosen:
            dstate[m] = RESOLVED
            dvalue[m] = value
        for m in members:
            if dstate[m] != RESOLVED:
                dstate[m] = UNRESOLVED
        return resolve(key)

    def moves(p: int) -> bool:
        return resolve(p)

    def given(s: int) -> bool:
        return resolve(NP + s)

    def path(p: int) -> bool:
        return resolve(2 * NP + p) if conv[p] else True

    def body(key: int) -> bool:
        d, p = divmod(key, NP)
        if d == D_MOVES:  # move_ok
            t = e_to[p]
            a = attack(p)
            if not a > (1 + support_count(t, None) if h2h[p] else hold_strength(t)):
                return False
            for q in attackers[t]:
                if q != p and not a > prevent(q):
                    return False
            return True
        if d == D_GIVEN:  # support_ok
            return len(cut_by(p)) == 0 and not dislodged(p)
        fs = convoy_fleets[p]  # path_ok
        return path_exists(convoy_graph[p], p, e_to[p], lambda n: n in fs and not dislodged(n))

    def dislodged(q: int) -> bool:
        if u_power[q] is None or q not in attackers or (moving[q] and moves(q)):
            return False
        for m in attackers[q]:
            if moves(m):
                return True
        return False

    def support_count(p: int, against: Any) -> int:
        n = 0
        for s in move_sups.get(p, ()):
            if u_power[s] != against and given(s):
                n += 1
        return n

    def attack(p: int) -> int:
        if not path(p):
            return 0
        t = e_to[p]
        d = u_power[t]
        if d is None or (moving[t] and not h2h[p] and moves(t)):
            return 1 + support_count(p, None)
        if d == u_power[p]:
            return 0
        return 1 + support_count(p, d)

    def hold_strength(t: int) -> int:
        if u_power[t] is None:
            return 0
        if moving[t]:
            return 0 if moves(t) else 1
        n = 1
        for s in hold_sups.get(t, ()):
            if given(s):
                n += 1
        return n

    def prevent(q: int) -> int:
        if not path(q):
            return 0
        if h2h[q] and moves(e_to[q]):
            return 0
        return 1 + support_count(q, None)

    def cut_by(s: int) -> list[int]:
        return [q for q in attackers.get(s, ()) if q != e_sto[s] and u_power[q] != u_power[s] and path(q)]

    def winner(q: int) -> int:
        for m in attackers.get(q, ()):
            if moves(m):
                return m
        return -1

    now: list[Any] = []  # dislodged_now, worked out at its first use

    def dislodged_now() -> set[int]:
        if not now:
            now.append({p for p in order_of_units if p in attackers and dislodged(p)})
        return now[0]  # type: ignore[no-any-return]

    def on_used_route(a: int, s: int) -> bool:
        fs = convoy_fleets[a]

        def ok(n: int) -> bool:
            return n in fs and not dislodged(n)
        return path_exists(convoy_graph[a], a, s, ok) and path_exists(convoy_graph[a], s, e_to[a], ok)

    # ---- results (order_result, in the order of the orders; the reads its reasons make, without their texts)
    out = []
    for c, o, up in checked:
        if c is None:
            status = "invalid"
        else:
            p = c[1]
            k = e_kind[p]
            if e_i[p] == -1:
                status = "fails"
            elif k == MOVE:
                if moves(p):
                    status = "succeeds"
                else:
                    status = "fails"
                    if path(p):  # move_result's reasons
                        t = e_to[p]
                        a = attack(p)
                        rivals = [q for q in attackers[t] if q != p and prevent(q) >= a]
                        if not rivals:
                            if h2h[p]:
                                support_count(t, None)
                            elif not (u_power[t] is not None and u_power[t] == u_power[p]
                                      and not (moving[t] and moves(t))):
                                hold_strength(t)
            elif k == HOLD:
                if p in dislodged_now():
                    attack(winner(p))
                    status = "fails"
                else:
                    status = "succeeds"
            elif k == SUPPORT:
                if not support_matches(p):
                    status = "fails"
                elif p in dislodged_now():
                    attack(winner(p))
                    status = "fails"
                elif not given(p):
                    cut_by(p)
                    status = "fails"
                else:
                    status = "succeeds"
            else:
                a = e_cf[p]
                if p in dislodged_now():
                    attack(winner(p))
                    status = "fails"
                elif not (moving[a] and conv[a] and e_to[a] == e_cto[p]):
                    status = "fails"
                elif not moves(a):
                    status = "fails"
                elif not on_used_route(a, p):
                    status = "fails"
                else:
                    status = "succeeds"
        out.append({"power": o["power"], "order": o["order"], "unit": lname[u_loc[up]] if c is not None else None,
                    "status": status})

    gone = dislodged_now()
    after = []  # units_after, with each unit's province after the turn
    for p in order_of_units:
        if p not in gone:
            loc = e_to_loc[p] if moving[p] and moves(p) else u_loc[p]
            after.append((lname[loc], u_power[p], u_fleet[p], lprov[loc]))
    held_after = {x[3] for x in after}
    standoffs = set()
    for t, qs in attackers.items():  # standoffs_now
        if t not in held_after:
            n = 0
            for q in qs:
                if path(q) and not moves(q):
                    n += 1
            if n >= 2:
                standoffs.add(t)
    dislodged_out = []
    for p in order_of_units:  # dislodged_after, retreat_options
        if p in gone:
            w = winner(p)
            via = conv[w]
            steps = [pname[x] for x in b.army_adj[p] if kind[x] != SEA] if not u_fleet[p] \
                else [lname[x] for x in fleet[u_loc[p]]]
            retreats = sorted(x for x in steps if (q := pindex[x.split("/")[0]]) not in held_after
                              and not (q == w and not via) and q not in standoffs)
            dislodged_out.append({"power": u_power[p], "type": "fleet" if u_fleet[p] else "army",
                                  "location": lname[u_loc[p]], "attacker_from": pname[w], "attacker_via_convoy": via,
                                  "retreats": retreats})
    return {"orders": out,
            "units": [{"power": x[1], "type": "fleet" if x[2] else "army", "location": x[0]}
                      for x in sorted(after, key=lambda x: x[0])],
            "dislodged": sorted((d for d in dislodged_out if d["retreats"]), key=lambda d: d["location"]),
            "standoffs": sorted(pname[t] for t in standoffs),
            "destroyed": sorted(({"power": d["power"], "type": d["type"], "location": d["location"]}
                                 for d in dislodged_out if not d["retreats"]), key=lambda d: d["location"])}

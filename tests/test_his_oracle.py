"""Here I Stand's `main` and `interceptors` against a second reading of interception, written here in plain Python.

RULES.md section 3 (seed 003) read once more, apart from the ruleset, for interception declared by the
other players (`decisions.intercept`):
- the move (HIS-M1, M2) is one the state allows; it is not intercepted at all when it moves because of an
  avoid, an interception or a retreat (HIS-I2), enters a fortified space of its own side that is not under
  siege (no piece besieged there, no land unit at war with its controller standing there: HIS-I9), or enters
  a space where land units are besieged when it starts (HIS-I10); an attempt declared against such a move is
  refused;
- an attempt names at least one unit or leader, all of them in its space, of one side (a minor and its
  associated major are one side, HIS-F1), no more units than its leaders command (4 without a leader; the
  two best command ratings with leaders) (HIS-I7); its space touches the destination (HIS-I1), not by a
  mountain pass (HIS-I3); its power and every piece's power is at war with the mover, a minor sharing its
  major's wars (HIS-I4); no piece tried this impulse (HIS-I5) or is besieged or formerly besieged (HIS-I6);
  a leader without units tries only if units friendly to him stand in the destination or an earlier attempt
  of his power with units may have placed them there (HIS-I8); every land unit in the destination is of the
  interceptor's power or an ally's (HIS-I10); the destination's controller, if any, is the interceptor, its
  enemy or its ally (HIS-I11); no second attempt from the same space (HIS-IP1(4)). One attempt refused
  refuses the declaration, before any die;
- attempts are made in impulse order of their powers' sides, a power's own in the order declared (HIS-I1);
  once one succeeds only the attempts of its (acting) power go on (HIS-I1, IP1(3)); a leader without units
  rolls only if friendly units are in the destination or were placed there by then (HIS-I8);
- each rolls 2d6 + the best battle rating among its leaders, +1 for the Ottomans with a cavalry unit in the
  formation, -1 for another power against a mover holding Ottoman cavalry, +1 with the Telescope, and
  succeeds on 9 or more (HIS-IP1).
Random small worlds (majors, two minors with their majors, wars, alliances, controllers, passes,
fortresses, sieges, units already in the destination, earlier attempts, telescopes, cavalry) with 1 to 3
declared attempts are given to both. The verdict (refused or not) must agree; not refused, `interceptors`
must list exactly the attempts in the oracle's order, and `main --exact` must give each attempt the
oracle's probability of being rolled and of succeeding. RULEVAL_FUZZ_LONG=1 tries many more worlds.

The same worlds' interception is also compared over the ruleset's own `generate(seed)` states and every
HIS case and example state with random attempts declared, and with none declared (the default policy:
what `interceptors` proposes the oracle must accept, from every space where one unit alone could try).

Avoid battle (HIS-A1..A9) is read again the same way for declared avoids, nobody intercepting: the
pieces are the avoiding power's own in the destination (A1), at least one land unit goes (A8, A9), none
besieged (A6); the space is adjacent, no sea zone (A4), its own side's or an ally's (A2), not in unrest
nor holding land units at war with the avoider (A3), not the space the mover left (A5); the units within
the leaders' command (F1); 2d6 + the best battle rating and the Ottoman cavalry modifiers, no Telescope,
9 or more (A9). The verdict and each power's probability of avoiding must agree with `main --exact`.

Withdrawal (HIS-M7, HIS-W1): one enemy power left in the destination that chooses to withdraw may, only
into a fortified space of its own side or an ally's, with 4 land units or fewer outside (leaders not
counted); then no field battle is fought; else the choice is refused.

The oracle was checked against planted bugs, each an override of one rule or constant in a copy of the
ruleset (PLANTED, PLANTED_AVOID): each is caught within the default run.
"""

from __future__ import annotations

import copy
import json
import os
import random
from fractions import Fraction
from functools import cache
from itertools import product
from pathlib import Path
from typing import Any

import pytest
import yaml

from validator import load_ruleset
from validator.api import RunError
from validator.tools.errata import generator_state
from validator.tools.testing import load_suite

ROOT = Path(__file__).resolve().parent.parent
HIS = ROOT / "rulesets" / "his"
WORLDS = 10000 if os.environ.get("RULEVAL_FUZZ_LONG") else 400

MAJORS = ["ottoman", "hapsburg", "england", "france", "papacy", "protestant"]  # the impulse order, HIS-I1
MINORS = {"hungary": "hapsburg", "scotland": "france"}
POWERS = MAJORS + sorted(MINORS)
THRESHOLD = 9

# P(2d6 >= k), by counting the 36 throws.
TWO_D6 = [a + b for a, b in product(range(1, 7), repeat=2)]


def p_at_least(k: int) -> Fraction:
    return Fraction(sum(1 for t in TWO_D6 if t >= k), 36)


def side(p: str) -> str:
    return MINORS.get(p, p)


class World:
    """The relations of the powers, read as the rules say: a minor's wars and alliances are its major's."""

    def __init__(self, state: dict[str, Any]) -> None:
        self.wars = {frozenset(w) for w in state.get("wars", [])}
        self.alliances = {frozenset(w) for w in state.get("alliances", [])}
        self.majors = {p: v.get("major") for p, v in (state.get("powers") or {}).items()
                       if v.get("kind") == "minor" and v.get("major")}

    def side(self, p: str) -> str:
        """A minor's associated major, the side its units move with (HIS-F1, HIS-A1)."""
        return self.majors.get(p, p)

    def rank(self, p: str) -> int:
        """The place of p's side in the impulse order; a minor with no major after them all."""
        s = self.side(p)
        return MAJORS.index(s) if s in MAJORS else len(MAJORS)

    def _related(self, pairs: set, a: str, b: str) -> bool:
        side = self.side
        return a != b and any(frozenset((x, y)) in pairs for x in {a, side(a)} for y in {b, side(b)})

    def at_war(self, a: str, b: str) -> bool:
        return self._related(self.wars, a, b)

    def allied(self, a: str, b: str) -> bool:
        return a != b and not self.at_war(a, b) and (self.side(a) == self.side(b) or self._related(self.alliances, a, b))

    def friendly(self, a: str, b: str) -> bool:
        return a == b or self.allied(a, b)

    def acting(self, p: str, mover: str) -> str:
        """The power a minor's units act for against the mover: its major when the major is at war with it."""
        return self.side(p) if self.at_war(self.side(p), mover) else p


def random_state(rng: random.Random) -> dict[str, Any]:
    mover = rng.choice(MAJORS)
    others = [p for p in POWERS if side(p) != mover]
    wars = {frozenset((mover, q)) for q in rng.sample([p for p in MAJORS if p != mover], rng.randint(1, 4))}
    for _ in range(rng.randint(0, 2)):  # other wars, a minor's own now and then
        a, b = rng.sample(POWERS, 2)
        if side(a) != side(b):
            wars.add(frozenset((a, b)))
    powers = {**{p: {"kind": "major"} for p in MAJORS}, **{m: {"kind": "minor", "major": q} for m, q in MINORS.items()}}
    world = World({"wars": [sorted(w) for w in wars], "powers": powers})
    alliances = set()
    foes = [p for p in MAJORS if world.at_war(p, mover)]
    for _ in range(rng.randint(1, 4)):  # the mover's enemies allied more often than not
        a, b = rng.sample(foes, 2) if len(foes) > 1 and rng.random() < 0.6 else rng.sample(MAJORS, 2)
        if not world.at_war(a, b):
            alliances.add(frozenset((a, b)))
    k = rng.randint(2, 5)
    around = [f"s{i}" for i in range(1, k + 1)]
    enemies = [p for p in POWERS if world.at_war(p, mover)]
    spaces: dict[str, Any] = {"a": {"controller": mover},
                              "d": {"controller": rng.choice([mover, None, rng.choice(enemies), rng.choice(enemies),
                                                              rng.choice(others)]),
                                    "fortified": rng.random() < 0.4},
                              "far": {"controller": rng.choice(others)}}
    for s in around:
        spaces[s] = {"controller": rng.choice([None, *rng.sample(POWERS, 3)]), "fortified": rng.random() < 0.3}
    connections = [{"a": "a", "b": "d", "kind": "pass" if rng.random() < 0.1 else "normal"},
                   {"a": "far", "b": "a"}]
    connections += [{"a": s, "b": "d", "kind": "pass" if rng.random() < 0.1 else "normal"} for s in around]
    world = World({"wars": [sorted(w) for w in wars], "alliances": [sorted(w) for w in alliances], "powers": powers})
    units: list[dict[str, Any]] = []
    leaders: list[dict[str, Any]] = []

    def shelter(p: str, s: str) -> bool:  # a fortress a piece of p may be besieged in (the state check's)
        c = spaces[s].get("controller")
        return spaces[s].get("fortified", False) and c is not None and world.friendly(c, p)

    def piece(p: str, s: str, i: int, leader: bool) -> dict[str, Any]:
        x: dict[str, Any] = {"id": f"{s}_{p}_{'l' if leader else 'u'}{i}", "power": p, "space": s}
        if leader:
            x.update(battle=rng.randint(0, 3), command=rng.choice([1, 2, 4, 6, 8]))
        else:
            x["type"] = rng.choice(["regular", "regular", "mercenary", "cavalry"])
        r = rng.random()
        if r < 0.05 and shelter(p, s):
            x["besieged"] = True
        elif r < 0.08 and spaces[s].get("fortified"):
            x["formerly_besieged"] = True
        return x

    for s in around:
        for p in sorted({rng.choice(enemies if rng.random() < 0.75 else others) for _ in range(rng.choice([1, 1, 2]))}):
            n = rng.choice([0, 1, 1, 2, 2, 3, 3, 4, 5])
            units += [piece(p, s, i, False) for i in range(n)]
            if n == 0 or rng.random() < 0.5:
                leaders += [piece(p, s, i, True) for i in range(rng.choice([1, 2, 2]))]
    if rng.random() < 0.25:  # units already in the destination
        for p in sorted({rng.choice(rng.choice([POWERS, enemies])) for _ in range(rng.choice([1, 1, 2]))}):
            units += [piece(p, "d", i, False) for i in range(rng.randint(1, 2))]
    mine = [{"id": f"m{i}", "power": mover, "space": "a", "type": rng.choice(["regular", "cavalry"])}
            for i in range(rng.randint(1, 2))]
    tried = [x["id"] for x in units + leaders if x["space"] != "d" and rng.random() < 0.03]
    state: dict[str, Any] = {
        "spaces": spaces, "connections": connections,
        "powers": powers,
        "wars": [sorted(w) for w in wars], "alliances": [sorted(w) for w in alliances],
        "bonuses": {p: ["telescope"] for p in rng.sample(MAJORS, rng.choice([0, 0, 1, 2]))},  # (a major's: HIS-IP1)
        "units": mine + units, "leaders": leaders, "tried_to_intercept": tried,
        "action": {"power": mover, "units": [u["id"] for u in mine], "leaders": [], "from": "a", "to": "d"}}
    if rng.random() < 0.04:
        state["action"]["reason"] = rng.choice(["avoid_battle", "interception"])
    state["decisions"] = {"intercept": random_attempts(rng, state, world), "avoid": False, "withdraw": []}
    return state


def random_attempts(rng: random.Random, state: dict[str, Any], world: World) -> list[dict[str, Any]]:
    """1 to 3 attempts, mostly from spaces around the destination holding pieces of powers at war with the
    mover, each a random part of one side's pieces there, named after their power (or their side)."""
    mover = state["action"]["power"]
    act = state["action"]
    pieces = [x for x in state.get("units", []) + state.get("leaders", []) if x["space"] not in (act["from"], act["to"])]
    if not pieces:
        return []
    out: list[dict[str, Any]] = []
    for _ in range(rng.choice([1, 1, 2, 3])):
        hostile = [x for x in pieces if world.at_war(x["power"], mover)]
        fresh = [x for x in hostile if x["space"] not in [a["from"] for a in out]]
        pick = rng.choice(fresh if fresh and rng.random() < 0.85 else hostile if hostile and rng.random() < 0.9 else pieces)
        s, sd = pick["space"], world.side(pick["power"])
        mates = [x for x in pieces if x["space"] == s and world.side(x["power"]) == sd
                 and (world.at_war(x["power"], mover) or rng.random() < 0.1)] or [pick]
        chosen = [x for x in mates if rng.random() < 0.7] or [pick]
        if rng.random() < 0.05:  # a piece of elsewhere
            chosen.append(rng.choice(pieces))
        if rng.random() < 0.15:  # its leaders only
            chosen = [x for x in chosen if "command" in x] or chosen
        names = sorted({x["power"] for x in chosen})
        power = names[0] if len(names) == 1 and rng.random() < 0.8 else sd
        out.append({"power": power, "from": s if rng.random() < 0.97 else rng.choice([act["from"], act["to"]]),
                    "units": [x["id"] for x in chosen if "type" in x],
                    "leaders": [x["id"] for x in chosen if "command" in x]})
    return out


def fortified(state: dict[str, Any], s: str) -> bool:
    v = state["spaces"].get(s, {})
    return bool(v.get("fortified") or v.get("key"))


@cache
def bundled_map() -> dict[str, Any]:
    return yaml.safe_load((HIS / "map.yaml").read_text(encoding="utf-8"))


def filled(state: dict[str, Any]) -> dict[str, Any]:
    """The state with what it leaves out as the ruleset's state format says: the bundled map, no pieces."""
    out = {"units": [], "leaders": [], "tried_to_intercept": [], "bonuses": {}, "wars": [], "alliances": [], **state}
    if "spaces" not in state:
        out["spaces"], out["connections"] = bundled_map()["spaces"], bundled_map()["connections"]
    return out


def oracle(state: dict[str, Any], threshold: int = THRESHOLD) -> dict[str, Any]:
    """The verdict on the declared attempts, by the reading of this module's docstring: refused, or the
    attempts in the order they are made, each with its probability of being rolled and of succeeding."""
    state = filled(state)
    world = World(state)
    act = state["action"]
    mover, dest = act["power"], act["to"]
    by_id = {x["id"]: x for x in state["units"] + state["leaders"]}
    kind = {frozenset((c["a"], c["b"])): c.get("kind", "normal") for c in state["connections"]}
    in_dest = [u for u in state["units"] if u["space"] == dest]
    mover_units = [by_id[i] for i in act.get("units", [])]
    ctrl = state["spaces"][dest].get("controller")
    declared = (state.get("decisions") or {}).get("intercept") or []
    storms = [c for c in state.get("cards_in_play", []) if c["card"].strip().lower() == "storms"
              and world.side(c["by"]) != world.side(mover)]
    if not declared or storms:  # (a move cancelled by Storms comes to no interception, HIS-M4)
        return {"refused": False, "order": [], "rolled": {}, "success": {}, "cancelled": bool(storms)}

    under_siege = any(x.get("besieged") for x in by_id.values() if x["space"] == dest) or (
        fortified(state, dest) and any(world.at_war(u["power"], ctrl or "") for u in in_dest))
    if act.get("reason") in ("avoid_battle", "interception", "retreat"):
        return {"refused": True, "why": "HIS-I2"}
    if fortified(state, dest) and ctrl is not None and world.side(ctrl) == world.side(mover) and not under_siege:
        return {"refused": True, "why": "HIS-I9"}
    if any(u.get("besieged") for u in in_dest):
        return {"refused": True, "why": "HIS-I10"}

    # impulse order of the attempts' sides; a power's own attempts as declared (a stable sort)
    order = sorted(range(len(declared)), key=lambda i: world.rank(declared[i]["power"]))
    attempts = [declared[i] for i in order]

    def friendly_units_there(p: str, extra: list[dict[str, Any]]) -> bool:
        return any(world.friendly(u["power"], p) for u in in_dest + extra)

    def legal(a: dict[str, Any], before: list[dict[str, Any]]) -> str | None:
        xs = [by_id[i] for i in a["units"] + a["leaders"]]
        us = [by_id[i] for i in a["units"]]
        ls = [by_id[i] for i in a["leaders"]]
        if not xs:
            return "HIS-I7 empty"
        link = kind.get(frozenset((a["from"], dest)))
        if link is None:
            return "HIS-I1 not adjacent"
        if link == "pass":
            return "HIS-I3"
        if not world.at_war(a["power"], mover) or not all(world.at_war(x["power"], mover) for x in xs):
            return "HIS-I4"
        if not all(x["space"] == a["from"] and world.side(x["power"]) == world.side(a["power"]) for x in xs):
            return "HIS-I7 not one formation"
        cap = 4 if not ls else sum(sorted((ld["command"] for ld in ls), reverse=True)[:2])
        if len(us) > cap:
            return "HIS-I7 too large"
        if any(x["id"] in state["tried_to_intercept"] for x in xs):
            return "HIS-I5"
        if any(x.get("besieged") or x.get("formerly_besieged") for x in xs):
            return "HIS-I6"
        acting = world.acting(a["power"], mover)
        could_place = [by_id[i] for b in before if world.acting(b["power"], mover) == acting for i in b["units"]]
        if not us and not friendly_units_there(a["power"], could_place):
            return "HIS-I8"
        own = {x["power"] for x in xs}  # (I10 and I11 speak of the units' own power, as I4 does, not the name declared)
        if not all(world.friendly(u["power"], p) for u in in_dest for p in own):
            return "HIS-I10"
        if not (ctrl is None or all(ctrl == p or world.at_war(ctrl, p) or world.allied(ctrl, p) for p in own)):
            return "HIS-I11"
        if a["from"] in [b["from"] for b in before]:
            return "HIS-IP1(4)"
        return None

    whys = [legal(a, attempts[:i]) for i, a in enumerate(attempts)]
    if any(whys):
        return {"refused": True, "why": [w for w in whys if w],
                "listed": [a for a, w in zip(attempts, whys) if w is None]}

    mover_ottoman_cavalry = any(u["power"] == "ottoman" and u.get("type") == "cavalry" for u in mover_units)

    def chance(a: dict[str, Any]) -> Fraction:
        acting = world.acting(a["power"], mover)
        m = max([by_id[i].get("battle", 0) for i in a["leaders"]], default=0)
        if acting == "ottoman" and any(by_id[i].get("type") == "cavalry" for i in a["units"]):
            m += 1
        if acting != "ottoman" and mover_ottoman_cavalry:
            m -= 1
        if "telescope" in [b.strip().lower() for b in state["bonuses"].get(acting, [])]:  # (names as written, case aside)
            m += 1
        return p_at_least(threshold - m)

    rolled = [Fraction(0)] * len(attempts)
    success = [Fraction(0)] * len(attempts)

    def walk(i: int, p: Fraction, winner: str | None, placed: list[dict[str, Any]]) -> None:
        if i == len(attempts):
            return
        a = attempts[i]
        acting = world.acting(a["power"], mover)
        if (winner is not None and acting != winner) or (not a["units"] and not friendly_units_there(a["power"], placed)):
            walk(i + 1, p, winner, placed)
            return
        q = chance(a)
        rolled[i] += p
        success[i] += p * q
        if q:
            walk(i + 1, p * q, acting, placed + [by_id[u] for u in a["units"]])
        if q != 1:
            walk(i + 1, p * (1 - q), winner, placed)

    walk(0, Fraction(1), None, [])
    keys = [(a["power"], a["from"]) for a in attempts]
    return {"refused": False, "order": attempts, "rolled": dict(zip(keys, rolled)), "success": dict(zip(keys, success))}


def compare(rs: Any, state: dict[str, Any], threshold: int = THRESHOLD) -> str:
    """Where the ruleset and the oracle stand on one state: "made" or "refused" when they agree on it,
    "skip" for a state out of this oracle's reach (one the ruleset refuses as a state, a move refused at
    its declaration, a retreat into a space the texts leave open), else what differs."""
    try:
        listed = rs.run(state, query="interceptors")
        out = rs.run(state, exact=True)
    except RunError as exc:
        if exc.kind == "state":
            return "skip"
        raise
    first = out["outcomes"][0]["result"]
    if first["status"] == "rejected" and first.get("step") in ("declare", "destination"):
        return "skip"
    if any(e.get("event") == "undecided" for e in out["outcomes"][0]["events"]):
        return "skip"
    want = oracle(state, threshold)
    refused = first["status"] == "rejected" and first.get("step") == "interception"
    if refused != want["refused"]:
        return f"refused: ruleset {refused} ({first.get('message')}), oracle {want['refused']} ({want.get('why')})"
    # (refused, `interceptors` still lists the attempts that break no restriction, each judged after those
    # declared before it; refused as a whole before interception, none)
    got_order = [(a["power"], a["from"], a["units"], a["leaders"]) for a in listed]
    want_order = [(a["power"], a["from"], a["units"], a["leaders"]) for a in want.get("listed", want.get("order", []))]
    if got_order != want_order:
        return f"interceptors: ruleset {got_order}, oracle {want_order}"
    if refused:
        return "refused" if len(out["outcomes"]) == 1 else "a refusal that depends on the dice"
    rolled: dict[tuple[str, str], Fraction] = {}
    success: dict[tuple[str, str], Fraction] = {}
    for o in out["outcomes"]:
        p = Fraction(o["probability"])
        for e in o["events"]:
            if e.get("event") == "interception attempted":
                k = (e["power"], e["from"])
                rolled[k] = rolled.get(k, Fraction(0)) + p
                success[k] = success.get(k, Fraction(0)) + (p if e["success"] else 0)
    for k in want["rolled"]:
        if rolled.get(k, 0) != want["rolled"][k] or success.get(k, 0) != want["success"][k]:
            return (f"{k}: ruleset rolled {rolled.get(k, 0)} succeeded {success.get(k, 0)}, "
                    f"oracle rolled {want['rolled'][k]} succeeded {want['success'][k]}")
    if set(rolled) - set(want["rolled"]):
        return f"rolled, not in the oracle: {sorted(set(rolled) - set(want['rolled']))}"
    return "made"


def run_worlds(rs: Any, n: int, tag: str, stop_at_first: bool = False) -> tuple[dict[str, int], list[tuple[str, dict]]]:
    rng = random.Random(f"his-oracle-{tag}")
    kinds: dict[str, int] = {}
    wrong: list[tuple[str, dict]] = []
    for _ in range(n):
        state = random_state(rng)
        said = compare(rs, state)
        kind = said if said in ("skip", "made", "refused") else "wrong"
        kinds[kind] = kinds.get(kind, 0) + 1
        if kind == "wrong":
            wrong.append((said, state))
            if stop_at_first:
                break
    return kinds, wrong


def test_interception_agrees_with_a_second_reading_of_the_rules() -> None:
    rs = load_ruleset(HIS / "his.rules")
    kinds, wrong = run_worlds(rs, WORLDS, "main")
    assert not wrong, wrong[0]
    # both verdicts are reached often, and few worlds are out of reach
    assert kinds.get("made", 0) > WORLDS // 10 and kinds.get("refused", 0) > WORLDS // 4, kinds
    assert kinds.get("skip", 0) < WORLDS // 5, kinds


# Bugs planted in a copy of the ruleset, one override each, as a slip in writing a clause would make them.
PLANTED = {
    "I3 forgotten: interception across a pass": 'override rule not_across_pass(a) cite "HIS-I3" = true',
    "I5 forgotten: a unit tries twice in an impulse": 'override rule fresh(a) cite "HIS-I5" = true',
    "I6 half read: a formerly besieged group intercepts": 'override rule free_to_leave(a) cite "HIS-I6" = '
                                                          'all(not besieged(x) for x in concat(a.units, a.leaders))',
    "I8 half read: units an earlier attempt placed are forgotten":
        'override rule leader_alone_ok(a, placed_units) cite "HIS-I8" = '
        'len(a.units) > 0 or any(friendly(u.power, a.power) for u in units_at(action.to))',
    "I9 half read: a fortress under siege still protects": 'override rule own_safe_fortress cite "HIS-I9" = '
        'let c = space(action.to).controller; fortified(action.to) and c != none and side(c) == side(action.power)',
    "I10 half read: one friendly unit in the destination is enough": 'override rule occupants_allow(a) cite "HIS-I10" = '
        'len(units_at(action.to)) == 0 or any(friendly(u.power, p) for u in units_at(action.to) for p in piece_powers(a))',
    "I11 half read: an ally's space is barred": 'override rule control_allows(a) cite "HIS-I11" = '
        'let c = space(action.to).controller; c == none or all(c == p or at_war(c, p) for p in piece_powers(a))',
    "IP1: no -1 against Ottoman cavalry": 'override const against_cavalry: int cite "HIS-IP1" = 0',
    "IP1: +1 for Ottoman cavalry to anyone": 'override const cavalry_power: str cite "HIS-IP1" = "hapsburg"',
    "F1: the command of the best leader only": 'override const leaders_counted: int cite "HIS-F1" = 1',
    "I1: France before England in the impulse order": 'override const impulse_order: list[str] cite "HIS-I1" = '
        '["ottoman", "hapsburg", "france", "england", "papacy", "protestant"]',
    "I1: a minor's attempt after its major's success is read as another power's":
        'override rule intercepting_power(a) cite "HIS-I1", "HIS-IP1" = a.power',
}


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_the_oracle_catches_planted_bugs(name: str) -> None:
    from validator.api import check_text

    text = f'ruleset his.planted "planted"\nextends "his.rules"\n{PLANTED[name]}\n'
    rs = check_text(HIS / "planted.rules", text)
    kinds, wrong = run_worlds(rs, WORLDS, "main", stop_at_first=True)
    assert wrong, (name, kinds)


def generated(rs: Any, seed: int) -> dict[str, Any]:
    return rs.run(generator_state(rs), query="generate", args=[seed], seed=seed, validate=False)


def case_states() -> list[tuple[str, str, dict[str, Any]]]:
    cases = load_suite([str(ROOT / "tests" / "cases" / "his")]).cases
    found = [(c.id, Path(c.ruleset).name, c.data["state"]) for c in cases
             if isinstance(c.data.get("state"), dict) and not c.data.get("expect_error")]
    for path in sorted((HIS / "examples").glob("*.json")):
        found.append((path.stem, "his.rules", json.loads(path.read_text(encoding="utf-8"))))
    return found


def test_interception_agrees_on_generated_and_bundled_states_with_declared_attempts() -> None:
    """The ruleset's own generator's states (`generate(seed)`) and every state of the HIS cases and
    examples, each with random attempts declared in place of its own (HIS-I1..I11, IP1)."""
    rulesets = {name: load_ruleset(HIS / name) for name in ("his.rules", "his_threshold8.rules")}
    thresholds = {"his.rules": 9, "his_threshold8.rules": 8}
    states = [(f"generate({seed})", "his.rules", generated(rulesets["his.rules"], seed)) for seed in range(60)]
    states += [s for s in case_states() if s[1] in rulesets]
    kinds: dict[str, int] = {}
    for name, rules, state in states:
        rng = random.Random(f"his-oracle-{name}")
        world = World(filled(state))
        for k in range(3):
            attempts = random_attempts(rng, state, world)
            if not attempts:
                break
            s = copy.deepcopy(state)
            s["decisions"] = {**(s.get("decisions") or {}), "intercept": attempts}
            said = compare(rulesets[rules], s, thresholds[rules])
            assert said in ("skip", "made", "refused"), (name, k, said, s)
            kinds[said] = kinds.get(said, 0) + 1
    assert kinds.get("made", 0) > 50 and kinds.get("refused", 0) > 50, kinds


def test_the_default_policy_proposes_what_the_rules_allow() -> None:
    """With no attempt declared, every group around the destination that may intercept tries (the ruleset's
    default policy). What `interceptors` then lists, declared as such, the oracle accepts in that order and
    rolls as `main` does; and every space from which one unit alone could try (HIS-I1: "each adjacent group
    may try") is among the spaces listed."""
    rs = load_ruleset(HIS / "his.rules")
    rng = random.Random("his-oracle-default")
    states = [random_state(rng) for _ in range(WORLDS // 3)]
    states += [generated(rs, seed) for seed in range(30)]
    states += [s for _, rules, s in case_states() if rules == "his.rules"]
    kinds: dict[str, int] = {}
    for state in states:
        bare = copy.deepcopy(state)
        bare["decisions"] = {k: v for k, v in (bare.get("decisions") or {}).items() if k != "intercept"}
        try:
            listed = rs.run(bare, query="interceptors")
        except RunError as exc:
            if exc.kind == "state":
                continue
            raise
        declared = {**bare, "decisions": {**bare["decisions"], "intercept": listed}}
        if len(listed) <= 2:
            said = compare(rs, declared)
        else:  # (the order and the verdict only: many rolls and a battle make a long exact run)
            want = oracle(declared)
            said = "made" if not want["refused"] and [(a["power"], a["from"]) for a in want["order"]] == [
                (a["power"], a["from"]) for a in listed] else f"oracle: {want}"
        assert said in ("skip", "made"), (said, declared)
        kinds[said] = kinds.get(said, 0) + 1
        if said == "skip":
            continue
        full = filled(bare)
        world = World(full)
        mover = full["action"]["power"]
        froms = {a["from"] for a in listed}
        for u in full["units"]:
            if u["space"] in (full["action"]["from"], full["action"]["to"]) or not world.at_war(u["power"], mover):
                continue
            # (a space holding pieces of a minor and its major is tried by the policy as one group, named after the
            # major: where the minor's units alone could try and the whole group not (HIS-I10, I11 asked of every
            # piece's power), the policy makes no attempt from there; a policy, not a rule)
            if len({x["power"] for x in full["units"] + full["leaders"] if x["space"] == u["space"]
                    and world.side(x["power"]) == world.side(u["power"])}) > 1:
                continue
            alone = {"power": u["power"], "from": u["space"], "units": [u["id"]], "leaders": []}
            one = {**bare, "decisions": {"intercept": [alone]}}
            verdict = oracle(one)
            if not verdict["refused"] and not verdict.get("cancelled"):
                assert u["space"] in froms, ("a group that may try is not listed", u, listed, json.dumps(bare))
    assert kinds.get("made", 0) > 100, kinds


# ------------------------------------------------------------------ avoid battle (HIS-A1..A9)

def random_avoid_state(rng: random.Random) -> dict[str, Any]:
    """A move into a space holding land units of one or two powers at war with the mover, nobody
    intercepting, each such power declaring an avoid: a random part of its pieces there into a random
    space around (its own, an ally's, an enemy's, an independent one, in unrest, a sea zone, holding
    enemy units, the space the mover left, or one not adjacent)."""
    base = random_state(rng)
    world = World(base)
    mover = base["action"]["power"]
    foes = sorted({p for p in POWERS if world.at_war(p, mover)})
    spaces, units, leaders = base["spaces"], [u for u in base["units"] if u["space"] == "a"], []
    around = [s for s in spaces if s.startswith("s")]
    for s in around:
        if rng.random() < 0.5:  # an avoider's own space, or its ally's
            spaces[s]["controller"] = rng.choice(foes)
        if rng.random() < 0.15:
            spaces[s]["unrest"] = True
    if rng.random() < 0.3:  # the mover comes from a space of its enemy's (where A5 alone bars the avoid)
        spaces["a"]["controller"] = rng.choice(foes)
    spaces["sea"] = {"sea": True}
    base["connections"].append({"a": "sea", "b": "d"})
    for s in around:  # now and then land units in a space around (of a power at war with the avoider, or not)
        if rng.random() < 0.3:
            units.append({"id": f"{s}_x", "power": rng.choice(POWERS), "space": s, "type": "regular"})
    in_d = sorted({rng.choice(foes) for _ in range(rng.choice([1, 2, 2]))})
    c = spaces["d"].get("controller")
    for p in in_d:
        for i in range(rng.choice([0, 1, 2, 3, 4, 5])):
            u: dict[str, Any] = {"id": f"d_{p}_u{i}", "power": p, "space": "d", "type": rng.choice(["regular", "cavalry"])}
            if rng.random() < 0.08 and spaces["d"].get("fortified") and c is not None and world.friendly(c, p):
                u["besieged"] = True
            units.append(u)
        for i in range(rng.choice([0, 1, 1, 2])):
            leaders.append({"id": f"d_{p}_l{i}", "power": p, "space": "d", "battle": rng.randint(0, 3),
                            "command": rng.choice([1, 2, 4, 6])})
    base["units"], base["leaders"], base["tried_to_intercept"] = units, leaders, []
    avoids = []
    for side_ in sorted({world.acting(x["power"], mover) for x in units + leaders if x["space"] == "d"}):
        mine = [x for x in units + leaders if x["space"] == "d" and world.acting(x["power"], mover) == side_]
        chosen = [x for x in mine if rng.random() < 0.8]
        to = rng.choice([*around, "sea", "a", "far", rng.choice(around)])
        avoids.append({"power": side_, "to": to, "units": [x["id"] for x in chosen if "type" in x],
                       "leaders": [x["id"] for x in chosen if "command" in x]})
    base["decisions"] = {"intercept": False, "avoid": avoids, "withdraw": []}
    base["action"].pop("reason", None)
    return base


def avoid_oracle(state: dict[str, Any], threshold: int = THRESHOLD) -> dict[str, Any]:
    """Refused, or each avoiding power's probability of succeeding, by HIS-A1..A9 read again:
    the pieces are its own in the destination (A1), at least one land unit goes (A8: a leader alone
    may not; leaders go only with units, A9), none besieged (A6); the space named is adjacent (A9), no
    sea zone (A4), its own side's or an ally's (A2), not in unrest nor holding land units at war with
    the avoider (A3), not the space the mover left (A5); no more units than the leaders command (F1);
    2d6 + the best battle rating, the Ottoman cavalry modifiers, no Telescope, 9 or more (A9)."""
    state = filled(state)
    world = World(state)
    act = state["action"]
    mover, dest = act["power"], act["to"]
    by_id = {x["id"]: x for x in state["units"] + state["leaders"]}
    kind = {frozenset((c["a"], c["b"])): c.get("kind", "normal") for c in state["connections"]}
    mover_ottoman_cavalry = any(by_id[i]["power"] == "ottoman" and by_id[i].get("type") == "cavalry" for i in act["units"])
    out: dict[str, Any] = {"refused": False, "success": {}}
    for d in sorted(state["decisions"]["avoid"], key=lambda d: world.rank(d["power"])):
        p, to = d["power"], d["to"]
        us, ls = [by_id[i] for i in d["units"]], [by_id[i] for i in d["leaders"]]
        sp = state["spaces"].get(to, {})
        ctrl = sp.get("controller")
        cap = 4 if not ls else sum(sorted((ld["command"] for ld in ls), reverse=True)[:2])
        enemy_there = any(u["space"] == to and world.at_war(u["power"], p) and u["id"] not in act["units"]
                          for u in state["units"])
        why = ("A1" if not all(x["space"] == dest and world.acting(x["power"], mover) == p for x in us + ls)
               else "A8/A9" if not us
               else "A6" if any(x.get("besieged") for x in us + ls)
               else "A9 adjacency" if frozenset((dest, to)) not in kind
               else "A4" if sp.get("sea")
               else "A2" if ctrl is None or not world.friendly(ctrl, p)
               else "A3" if sp.get("unrest") or enemy_there
               else "A5" if to == act["from"]
               else "F1" if len(us) > cap
               else None)
        if why:
            return {"refused": True, "why": why}
        m = max([ld.get("battle", 0) for ld in ls], default=0)
        m += 1 if p == "ottoman" and any(u.get("type") == "cavalry" for u in us) else 0
        m -= 1 if p != "ottoman" and mover_ottoman_cavalry else 0
        out["success"][p] = p_at_least(threshold - m)
    return out


def compare_avoid(rs: Any, state: dict[str, Any]) -> str:
    try:
        out = rs.run(state, exact=True)
    except RunError as exc:
        if exc.kind == "state":
            return "skip"
        raise
    first = out["outcomes"][0]["result"]
    if first["status"] == "rejected" and first.get("step") in ("declare", "destination", "interception"):
        return "skip"
    want = avoid_oracle(state)
    refused = first["status"] == "rejected" and first.get("step") == "avoid"
    if refused != want["refused"]:
        return f"refused: ruleset {refused} ({first.get('message')}), oracle {want['refused']} ({want.get('why')})"
    if refused:
        # (the declarations are judged power by power, a later one after an earlier one rolled: refused, it is
        # refused in every branch)
        every = all(o["result"]["status"] == "rejected" and o["result"].get("step") == "avoid" for o in out["outcomes"])
        return "refused" if every else "a refusal that depends on the dice"
    got: dict[str, Fraction] = {}
    for o in out["outcomes"]:
        for e in o["events"]:
            if e.get("event") == "avoid battle attempted":
                got[e["power"]] = got.get(e["power"], Fraction(0)) + (Fraction(o["probability"]) if e["success"] else 0)
    if got != want["success"]:
        return f"avoid success: ruleset {got}, oracle {want['success']}"
    return "made"


def test_avoid_battle_agrees_with_a_second_reading_of_the_rules() -> None:
    rs = load_ruleset(HIS / "his.rules")
    rng = random.Random("his-oracle-avoid")
    kinds: dict[str, int] = {}
    for _ in range(WORLDS // 2):
        state = random_avoid_state(rng)
        said = compare_avoid(rs, state)
        assert said in ("skip", "made", "refused"), (said, json.dumps(state))
        kinds[said] = kinds.get(said, 0) + 1
    assert kinds.get("made", 0) > WORLDS // 20 and kinds.get("refused", 0) > WORLDS // 10, kinds


PLANTED_AVOID = {
    "A2 half read: an ally's space is barred": 'override rule independent_or_foreign_ok(p, s) cite "HIS-A2" = '
        'let c = space(s).controller; c != none and powers[c] != none and side(c) == p',
    "A3 half read: enemy units there forgotten": 'override rule calm_and_free(p, s) cite "HIS-A3" = space(s).unrest != true',
    "A1: a minor's units avoid apart from their major's": 'override rule war_power(p) cite "HIS-I4", "HIS-I1", "HIS-M8" = p',
    "A9: the Telescope counted": 'override rule roll_modifier(p, us, ls, with_telescope) cite "HIS-IP1", "HIS-A9" = '
        'best_battle(ls) + (if p == cavalry_power and has_cavalry(us, none) then with_cavalry else 0)'
        ' + (if p != cavalry_power and has_cavalry(mover_units, cavalry_power) then against_cavalry else 0)'
        ' + (if any(name_of(b) == telescope for b in bonuses[p] ?? []) then telescope_bonus else 0)',
}


@pytest.mark.parametrize("name", sorted(PLANTED_AVOID))
def test_the_avoid_oracle_catches_planted_bugs(name: str) -> None:
    from validator.api import check_text

    rs = check_text(HIS / "planted.rules", f'ruleset his.planted "planted"\nextends "his.rules"\n{PLANTED_AVOID[name]}\n')
    rng = random.Random("his-oracle-avoid")
    assert any(compare_avoid(rs, random_avoid_state(rng)) not in ("skip", "made", "refused") for _ in range(WORLDS // 2)), name


# ------------------------------------------------------------------ withdrawal into fortifications (HIS-M7, HIS-W1)

def test_withdrawal_agrees_with_a_second_reading_of_the_rules() -> None:
    """The enemy group left in the destination (one power at war with the mover, nobody intercepting or
    avoiding) chooses to withdraw: allowed only into a fortified space controlled by that power or an ally,
    with 4 land units or fewer outside the fortifications, leaders not counted (HIS-M7, HIS-W1); then they
    all go in and no field battle is fought (HIS-M8). Refused otherwise, before any die."""
    rs = load_ruleset(HIS / "his.rules")
    rng = random.Random("his-oracle-withdraw")
    kinds: dict[str, int] = {}
    for _ in range(WORLDS // 2):
        state = random_avoid_state(rng)
        world = World(state)
        mover = state["action"]["power"]
        sides = sorted({world.acting(x["power"], mover) for x in state["units"] + state["leaders"] if x["space"] == "d"})
        if len(sides) != 1:
            continue
        p = sides[0]
        state["decisions"] = {"intercept": False, "avoid": False, "withdraw": [p]}
        try:
            got = rs.run(state, seed=1)
        except RunError as exc:
            if exc.kind == "state":
                continue
            raise
        if got["status"] == "rejected" and got.get("step") in ("declare", "destination"):
            continue
        d = state["spaces"]["d"]
        ctrl = d.get("controller")
        outside = [u for u in state["units"] if u["space"] == "d" and not u.get("besieged") and world.at_war(u["power"], mover)]
        ok = bool(d.get("fortified") or d.get("key")) and ctrl is not None and world.friendly(ctrl, p) and len(outside) <= 4
        said = (state, got.get("message"), got.get("withdrew"), got.get("battle"))
        if not outside:  # (leaders alone: HIS-A8's, not this choice's)
            continue
        if ok:
            assert got["status"] == "completed" and got["withdrew"] == [p] and got["battle"] is None, said
        else:
            assert got["status"] == "rejected" and got.get("step") == "withdrawal", said
        kinds[str(ok)] = kinds.get(str(ok), 0) + 1
    assert kinds.get("True", 0) > WORLDS // 40 and kinds.get("False", 0) > WORLDS // 20, kinds


NAMED = {
    # HIS-I11: a Scottish unit into a space Hungary controls, the Hapsburgs at war with Scotland: made named
    # `scotland` (Hungary its enemy), refused named `france` (Hungary neither France's enemy nor its ally)
    "I11": ({"a": {"controller": "england"}, "d": {"controller": "hungary"}, "s1": {"controller": "england"}},
            [["england", "france"], ["hapsburg", "scotland"]], [], []),
    # HIS-I10: a Scottish unit into a space holding a Hapsburg unit, the Hapsburgs allied with France and at war
    # with Scotland (a state the state check accepts): refused named `scotland`, made named `france`
    "I10": ({"a": {"controller": "england"}, "d": {"controller": "england"}, "s1": {"controller": "england"}},
            [["england", "france"], ["hapsburg", "scotland"]], [["hapsburg", "france"]],
            [{"id": "h1", "power": "hapsburg", "space": "d", "type": "regular"}]),
}


EXPECTED_BY_NAME = {"I11": "completed", "I10": "rejected"}  # (Hungary is Scotland's enemy; a Hapsburg unit is no friend of it)


@pytest.mark.parametrize("clause", sorted(NAMED))
def test_an_attempts_verdict_does_not_depend_on_its_name(clause: str) -> None:
    """A Scottish unit (Scotland: France's minor) intercepts an English move. HIS-I11: "units may not
    intercept into a space controlled by another power unless that power is the interceptor's enemy or ally";
    HIS-I10: only "units of the same power as those units [in the destination], or of an ally of theirs".
    Read of the units' power (Scotland) or of the power they act for (France, whose units Scotland's move as,
    HIS-F1, and which rolls and goes on after a success in the ruleset, `intercepting_power`): the text
    leaves that to a reading; but the same unit's attempt is the same whether declared under Scotland's name
    or France's, and its verdict may not depend on the name. his.rules asks both clauses of each piece's own
    power, as HIS-I4 (I11 made, I10 refused, under either name)."""
    rs = load_ruleset(HIS / "his.rules")
    spaces, wars, alliances, extra = NAMED[clause]
    state = {
        "spaces": spaces, "connections": [{"a": "a", "b": "d"}, {"a": "s1", "b": "d"}],
        "powers": {**{p: {"kind": "major"} for p in MAJORS}, "hungary": {"kind": "minor", "major": "hapsburg"},
                   "scotland": {"kind": "minor", "major": "france"}},
        "wars": wars, "alliances": alliances,
        "units": [{"id": "e1", "power": "england", "space": "a", "type": "regular"},
                  {"id": "sc1", "power": "scotland", "space": "s1", "type": "regular"}, *extra],
        "action": {"power": "england", "units": ["e1"], "from": "a", "to": "d"}}
    verdicts = []
    for name in ("scotland", "france"):
        declared = {**state, "decisions": {"intercept": [{"power": name, "from": "s1", "units": ["sc1"], "leaders": []}]}}
        assert rs.run(declared, query="validate_state") == []
        verdicts.append(rs.run(declared, seed=1)["status"])
    assert verdicts == [EXPECTED_BY_NAME[clause]] * 2, verdicts

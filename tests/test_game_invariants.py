"""Invariants of whole Diplomacy games, on every bundled map: seeded games played by `play` with each
ruleset's own `random_orders`, every phase checked against what the rules' text says must hold
after it. The checks are plain Python over the JSON states, results and the map data
(rulesets/diplomacy/**/*.yaml); none of them calls the rulesets' code, so a ruleset that computes a
wrong next state is caught by a second, independent reading of the same clauses:

- DIP-MAP1/DIP-M2/DIP-M4/DIP-M6: every unit stands on a place of the map its type may stand on (an
  army on a land or coastal province, no coast named; a fleet on a sea or a coast, on a named coast
  of a province with several), of a power of the map, and no two units share a province (the coasts
  of one province are one province);
- DIP-M1/DIP-M2/DIP-M3/DIP-M4: a movement phase moves each unit whose move succeeds to its destination
  (a neighbour of its type, or a coast reached by convoy) and leaves every other unit where it was,
  except the dislodged ones; DIP-S4: no two units swap places without a convoy; DIP-M3/DIP-C1: an
  army arrives by convoy only along a chain of undislodged fleets at sea ordered to convoy it; DIP-M6:
  a fleet arrives on the coast its move names;
  DIP-P1: a unit supports only into a province it could move to; DIP-P2: a dislodged unit's province
  is taken by a unit of another power, which came from the origin listed for it;
- DIP-R1/DIP-G1: a retreat phase follows a movement phase exactly when a dislodged unit has somewhere
  to go; its retreats are exactly the empty neighbours that are no standoff and not the attacker's
  origin (that origin is open when the attacker came by convoy, DATC-4.A.5); a dislodged unit with
  none is destroyed at once; after the retreats nobody is dislodged and each retreat ends on one of
  those places, unless two units retreat to one province (both are then disbanded) or a unit has no
  retreat order (DIP-G4: disbanded); a standoff province is empty and was the aim of at least two
  moves that failed, and an empty province two moves failed to enter is one (DATC-4.A.7 aside);
- DIP-G2: supply centres change owner only at the end of the fall (after its retreats): each centre
  with a unit in it is its power's, an empty one keeps its owner;
- DIP-R1/DIP-G1: after an adjustment phase a power with more units than centres has as many units as
  centres, the others no fewer units than before nor more than centres, each new unit on a free
  centre of its own (a home centre, any owned one in a build-anywhere variant), and a power with no
  centre has no unit; the adjustment phase comes exactly when some power has a disband to make or a
  build it can make, and the phases follow spring movement, (retreats), fall movement, (retreats),
  (winter adjustment), next spring; DIP-G4/DATC-4.D.8: civil disorder removes the units farthest
  from the power's centres, fleets first, then by the province's English name;
- DIP-G3: the game ends exactly when a power owns the map's victory count of centres;
- every order `random_orders` writes is one the adjudication reads as valid, and every clause a
  result cites is in the catalogue; the same seed plays the same game; it orders every unit but
  those of a power the map marks as played by no one (`dummies`: known_world_901's neutral state),
  which get no order in any phase, so that they hold, are disbanded when dislodged and are disbanded
  by civil disorder, as the checks above say of a power without orders.

The same checks run over games where each order is left out with a chance of 0.3, as players in civil
disorder leave them out (DIP-G4: the unit holds, the dislodged unit is disbanded, the build waived,
the disband civil disorder's).

Each check is shown to catch a ruleset with one rule changed against the text
(test_a_ruleset_that_breaks_a_rule_is_caught), and the games to meet the situations the checks are
about (test_the_games_meet_the_situations_the_checks_are_about).

RULEVAL_GAMES=N plays N games a map, RULEVAL_YEARS=Y of Y game-years each (default 2 games a map of 4
years; with --slow, 10 games a map of 6 years). `ruleval play RULESET --random-orders SEED` plays one such
game from the command line."""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from validator import load_ruleset
from validator.api import play

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
CLAUSES = set(yaml.safe_load((DIP / "clauses.yaml").read_text(encoding="utf-8"))["clauses"])
# every ruleset of a game on a map
GAME_RULESETS = ["standard", "all_hold", "build_anywhere", "teaching", "standard_dpjudge", "ancmed", "ancmed_age_of_empires",
                 "colonial", "empire", "known_world_901", "modern", "pure", "standard_age_of_empires",
                 "standard_age_of_empires_2", "standard_fleet_rome", "standard_france_austria",
                 "standard_germany_italy", "world"]
# (importers of other formats, on the standard and the build-anywhere rules)
NOT_PLAYED = {"datc_text", "datc_text_build_anywhere", "godip_game"}
GAMES = int(os.environ.get("RULEVAL_GAMES", "0"))
SEEN: Counter[str] = Counter()  # the situations the checks met, so that a test can say they are met at all
YEARS = int(os.environ.get("RULEVAL_YEARS", "0"))


def _header(name: str) -> tuple[str | None, str | None]:
    """The map a ruleset file imports and the ruleset it extends, as its text says (no ruleset code run)."""
    text = (DIP / f"{name}.rules").read_text(encoding="utf-8")
    imp = re.search(r'^import "([^"]+)" as map\b', text, re.M)
    ext = re.search(r'^extends "([^"]+)\.rules"', text, re.M)
    return (imp.group(1) if imp else None), (ext.group(1) if ext else None)


def map_of(name: str) -> tuple[dict[str, Any], bool]:
    """The map data a ruleset plays on and whether it builds anywhere (it is, or extends,
    build_anywhere.rules: one rule changed, builds in any owned centre)."""
    path: str | None = None
    anywhere, at = False, name  # type: bool, str | None
    while at is not None:  # (the chain of `extends`, up to the ruleset importing the map)
        anywhere = anywhere or at == "build_anywhere"
        imp, ext = _header(at)
        path = path or imp
        at = ext
    assert path is not None, name
    return yaml.safe_load((DIP / path).read_text(encoding="utf-8")), anywhere


def prov(loc: str) -> str:
    return loc.split("/")[0]


class Board:
    """The map read as the rules' text reads it."""

    def __init__(self, data: dict[str, Any], anywhere: bool):
        self.powers = set(data["powers"])
        self.dummies = set(data.get("dummies", []))  # the powers no one plays: random orders give them none
        self.provinces = data["provinces"]
        self.army = {p: set(v) for p, v in data.get("army", {}).items()}
        self.fleet = {p: set(v) for p, v in data.get("fleet", {}).items()}
        self.centres = {p for p, v in self.provinces.items() if v.get("center")}
        self.victory = data.get("victory", len(self.centres) // 2 + 1)
        self.anywhere = anywhere
        self.start = data["start"]
        self.fleet_prov: dict[str, set[str]] = {}  # fleet adjacency between provinces (any coast)
        for a, bs in self.fleet.items():
            self.fleet_prov.setdefault(prov(a), set()).update(prov(x) for x in bs)
        # DATC-4.D.8: distances count moves over land and sea alike, province to province
        self.graph: dict[str, set[str]] = {p: set() for p in self.provinces}
        for table in (self.army, self.fleet):
            for a, bs in table.items():
                self.graph.setdefault(prov(a), set()).update(prov(x) for x in bs)

    def distance(self, start: str, targets: set[str]) -> int:
        """The fewest moves from a province to one of ``targets`` (99 when none is reached, as none owned)."""
        seen, frontier, d = {start}, {start}, 0
        while frontier:
            if frontier & targets:
                return d
            frontier = {y for x in frontier for y in self.graph.get(x, ()) if y not in seen}
            seen |= frontier
            d += 1
        return 99

    def kind(self, p: str) -> str | None:
        return (self.provinces.get(p) or {}).get("kind")

    def place_problem(self, u: dict[str, Any]) -> str | None:
        """Why a unit may not stand where it is (DIP-MAP1, DIP-M2, DIP-M4, DIP-M6), or None."""
        loc, p = u["location"], prov(u["location"])
        if u["power"] not in self.powers:
            return f"{u}: no power of the map"
        if p not in self.provinces:
            return f"{u}: no province of the map"
        if u["type"] == "army":
            return None if self.kind(p) in ("land", "coast") and loc == p else f"{u}: an army stands on land or a coast"
        if u["type"] != "fleet" or self.kind(p) not in ("sea", "coast"):
            return f"{u}: a fleet stands at sea or on a coast"
        coasts = self.provinces[p].get("coasts")
        if coasts and loc not in {f"{p}/{c}" for c in coasts}:
            return f"{u}: a fleet in a province of several coasts stands on a named one"
        if not coasts and loc != p:
            return f"{u}: a coast named where the province has one"
        if loc not in self.fleet:
            return f"{u}: no fleet may stand there (the map gives it no fleet adjacency)"
        return None

    def reach(self, u: dict[str, Any]) -> set[str]:
        """The provinces a unit could move to by itself: where it may support (DIP-P1)."""
        return {prov(x) for x in self.steps(u)}

    def convoys(self, p: str) -> bool:
        """A fleet there may convoy: a sea, or a coast the map marks convoyable (DIP-C1, DIP-MAP3)."""
        return self.kind(p) == "sea" or bool(self.provinces[p].get("convoyable"))

    def steps(self, u: dict[str, Any]) -> set[str]:
        """The places a unit may move or retreat to by itself (DIP-M2, DIP-M4, DIP-M5, DIP-M6)."""
        if u["type"] == "army":
            return self.army.get(u["location"], set())
        return self.fleet.get(u["location"], set())


def held(units: list[dict[str, Any]]) -> Counter:
    return Counter(prov(u["location"]) for u in units)


def key(u: dict[str, Any]) -> tuple[str, str, str]:
    return u["power"], u["type"], u["location"]


def phase_of(s: dict[str, Any]) -> tuple[str, int, str]:
    ph = s["phase"]
    return ph["season"], ph["year"], ph["type"]


def owner_counts(owners: dict[str, str]) -> Counter:
    return Counter(owners.values())


def check_board(b: Board, units: list[dict[str, Any]], where: str) -> None:
    for u in units:
        problem = b.place_problem(u)
        assert problem is None, f"{where}: {problem}"
    twice = [p for p, n in held(units).items() if n > 1]
    assert not twice, f"{where}: two units in {twice}"


def move_target(order: str) -> tuple[str, bool] | None:
    """The destination of a move order as `random_orders` writes it (`A PAR - PIC`, `F CON - BUL/SC`,
    `A ANK - BUL VIA`) and whether it goes by convoy; None for any other order."""
    m = re.fullmatch(r"[AF] (\S+) - (\S+)( VIA)?", order)
    return (m.group(2).lower(), m.group(3) is not None) if m else None


def by_convoy(order: str) -> bool:
    target = move_target(order)
    return target is not None and target[1]


def adjustment_due(b: Board, units: list[dict[str, Any]], owners: dict[str, str]) -> bool:
    """DIP-G1 with DIP-R1: some power has a disband to make or a build it can make (a free owned centre,
    its home one unless it builds anywhere)."""
    centres, counts, taken = owner_counts(owners), Counter(u["power"] for u in units), held(units)
    for pw in set(centres) | set(counts):
        if counts[pw] > centres[pw]:
            return True
        if counts[pw] < centres[pw] and any(o == pw and c not in taken and (b.anywhere or b.provinces[c].get("home") == pw)
                                            for c, o in owners.items()):
            return True
    return False


def check_step(b: Board, step: Any, every_unit_ordered: bool = True) -> None:
    s, r, n = step.state, step.result, step.next
    where = f"{step.phase} -> {step.next_phase}"
    season, year, kind = phase_of(s)
    owners = s.get("supply_centers", {})
    check_board(b, n["units"], f"{where} (next units)")
    assert set(n.get("supply_centers", {})) <= b.centres, f"{where}: owners of what is no centre"
    assert set(n.get("supply_centers", {}).values()) <= b.powers, f"{where}: a centre owned by no power of the map"
    # every order the rules' own player writes is valid, every clause cited is the catalogue's
    for o in r["orders"]:
        assert o["status"] in ("succeeds", "fails"), \
            f"{where}: random order {o['order']!r} came back {o['status']}: {o['reason']}"
        assert set(o["cites"]) <= CLAUSES, f"{where}: {o['order']!r} cites {set(o['cites']) - CLAUSES}"
        # a power the map marks as played by no one (`dummies`) is given no order: the rules play it (DIP-G4)
        assert o["power"] not in b.dummies, f"{where}: {o['order']!r} given to {o['power']}, which no one plays"
    if step.end is not None:
        assert set(step.end.get("cites", [])) <= CLAUSES, step.end

    if kind == "movement":
        check_movement(b, s, r, n, where, every_unit_ordered)
    elif kind == "retreat":
        check_retreat(b, s, r, n, where)
    else:
        check_adjustment(b, s, r, n, where)

    # DIP-G1: which phase follows
    nseason, nyear, nkind = phase_of(n)
    if nkind == "retreat":
        assert kind == "movement" and (nseason, nyear) == (season, year), where
    elif season == "spring":
        assert (nseason, nyear, nkind) == ("fall", year, "movement"), where
    elif kind == "adjustment":
        assert (nseason, nyear, nkind) == ("spring", year + 1, "movement"), where
    else:  # the end of the fall
        due = adjustment_due(b, n["units"], n.get("supply_centers", {}))
        assert (nseason, nyear, nkind) == (("winter", year, "adjustment") if due else ("spring", year + 1, "movement")), \
            f"{where}: an adjustment is {'' if due else 'not '}due"

    # DIP-G2: owners change at the end of the fall only
    if season == "fall" and nkind != "retreat" and kind != "adjustment":
        taken = {prov(u["location"]): u["power"] for u in n["units"]}
        expected = {c: taken.get(c, owners.get(c)) for c in b.centres if c in taken or c in owners}
        assert n.get("supply_centers", {}) == expected, f"{where}: owners after the fall"
    else:
        assert n.get("supply_centers", {}) == owners, f"{where}: owners changed outside the end of the fall"

    # DIP-G3: the game ends exactly when a power owns the victory count
    counts = owner_counts(n.get("supply_centers", {}))
    winners = sorted(pw for pw, k in counts.items() if k >= b.victory)
    assert (step.end is not None) == bool(winners), f"{where}: end {step.end}, centres {dict(counts)} (victory {b.victory})"
    if winners:
        assert step.end["winner"] in winners, step.end


def retreats_of(b: Board, d: dict[str, Any], units: list[dict[str, Any]], standoffs: set[str]) -> set[str]:
    """DIP-R1, DATC-4.A.5: an empty neighbour that is no standoff and not the attacker's origin (unless
    the attacker came by convoy)."""
    taken = held(units)
    return {x for x in b.steps(d) if prov(x) not in taken and prov(x) not in standoffs and
            (prov(x) != d["attacker_from"] or d.get("attacker_via_convoy"))}


def check_movement(b: Board, s: dict[str, Any], r: dict[str, Any], n: dict[str, Any], where: str,
                   every_unit_ordered: bool = True) -> None:
    before = {prov(u["location"]): u for u in s["units"]}
    after = {prov(u["location"]): u for u in n["units"]}
    dislodged, destroyed = r["dislodged"], r["destroyed"]
    gone = {prov(d["location"]) for d in dislodged + destroyed}
    assert len(s["units"]) == len(n["units"]) + len(dislodged) + len(destroyed), f"{where}: units appeared or vanished"
    ordered = {prov(o["unit"]): o for o in r["orders"]}
    played = {p for p, u in before.items() if u["power"] not in b.dummies}
    assert set(ordered) <= played and (set(ordered) == played or not every_unit_ordered), \
        f"{where}: random orders left out {played - set(ordered)}, or ordered a unit no one plays {set(ordered) - played}"
    # each unit either made its move or stayed (DIP-H1: so does a unit without an order), unless dislodged
    # (DIP-M1 .. DIP-M4, DIP-S*)
    unordered = {"order": "", "status": "", "reason": None}
    arrived: dict[str, str] = {}
    for p, u in before.items():
        if p in gone:
            continue
        target = move_target(ordered.get(p, unordered)["order"])
        if target is not None and ordered[p]["status"] == "succeeds":
            to, via = target
            if via:
                assert u["type"] == "army" and b.kind(prov(to)) == "coast" and b.kind(p) == "coast", f"{where}: {ordered[p]}"
            else:
                assert to in b.steps(u) or prov(to) in {prov(x) for x in b.steps(u)}, f"{where}: {ordered[p]} is no step"
            assert key(after.get(prov(to), {"power": "", "type": "", "location": ""}))[:2] == key(u)[:2] \
                and prov(after[prov(to)]["location"]) == prov(to), f"{where}: {ordered[p]['order']} succeeded, unit not there"
            # DIP-M6: a fleet arrives on the coast its move names (the places of the map's fleet adjacency)
            assert u["type"] == "army" or to not in b.fleet or after[prov(to)]["location"] == to, f"{where}: {ordered[p]}"
            arrived[prov(to)] = p
            SEEN["a move by convoy"] += via
        else:
            assert after.get(p) == u, f"{where}: {u} moved without a successful move ({ordered.get(p)})"
    for q, p in arrived.items():
        moved = ordered[p]["order"]
        # DIP-S4: two units never swap places unless one of them goes by convoy
        assert arrived.get(p) != q or by_convoy(moved) or by_convoy(ordered[q]["order"]), f"{where}: {p} and {q} swapped"
        # DIP-M3, DIP-C1: an army arrives by convoy along a chain of fleets at sea, each ordered to convoy that
        # move and not dislodged, from its coast to its destination's
        if by_convoy(moved):
            chain = {prov(o["unit"]) for o in r["orders"] if prov(o["unit"]) not in gone and b.convoys(prov(o["unit"]))
                     and re.fullmatch(rf"F \S+ C A {re.escape(p)} - {re.escape(q)}", o["order"], re.I)}
            seen = {x for x in b.fleet_prov.get(p, set()) if x in chain}
            frontier = set(seen)
            while frontier:
                frontier = {y for x in frontier for y in b.fleet_prov.get(x, set()) if y in chain and y not in seen}
                seen |= frontier
            assert any(q in b.fleet_prov.get(x, set()) for x in seen), f"{where}: {moved} arrived, no chain of convoys"
    # DIP-P1: a unit supports only into a province it could move to itself
    for o in r["orders"]:
        m = re.fullmatch(r"[AF] (\S+) S [AF] (\S+)(?: - (\S+))?", o["order"])
        if m:
            aim = prov((m.group(3) or m.group(2)).lower())
            assert aim in b.reach(before[prov(o["unit"])]), f"{where}: {o['order']} is a support it could not give"
    # a dislodged unit's province is taken by another power's unit, from the origin listed (DIP-P2)
    standoffs = set(n.get("standoffs", []))
    for d in dislodged + destroyed:
        p = prov(d["location"])
        assert key(d) == key(before[p]), f"{where}: {d} was not there"
        assert p in after and after[p]["power"] != d["power"], f"{where}: {d} dislodged, its province not taken by another power"
        assert p in arrived, f"{where}: {d} dislodged by no successful move"
        SEEN["a unit dislodged" if d in dislodged else "a dislodged unit destroyed"] += 1
        SEEN["a unit dislodged by a convoyed army"] += by_convoy(ordered[arrived[p]]["order"])
        if d in dislodged:
            assert d.get("attacker_from") == arrived[p], f"{where}: {d} lists its attacker from elsewhere than {arrived[p]}"
            assert bool(d.get("attacker_via_convoy")) == by_convoy(ordered[arrived[p]]["order"]), f"{where}: {d}"
    # the provinces left empty that two moves failed to enter (DIP-S1, DIP-R1), leaving out the move of a
    # unit dislodged in a head-to-head battle into its attacker's origin (DATC-4.A.7: it has no effect
    # there): `maybe` counting moves by convoy, `surely` counting only the others
    failed: dict[str, list[bool]] = {}
    for o in r["orders"]:
        target = move_target(o["order"])
        if target and o["status"] == "fails":
            p, x = prov(o["unit"]), prov(target[0])
            if not (p in gone and arrived[p] == x and not target[1] and not by_convoy(ordered[x]["order"])):
                failed.setdefault(x, []).append(target[1])
    empty = set(failed) - set(held(n["units"]))
    maybe = {x for x in empty if len(failed[x]) >= 2}
    surely = {x for x in empty if failed[x].count(False) >= 2}
    # the retreat phase: exactly when someone dislodged may retreat (DIP-G1, DIP-R1)
    if dislodged:
        assert phase_of(n)[2] == "retreat", f"{where}: {dislodged} dislodged, no retreat phase"
        assert sorted(map(str, n["dislodged"])) == sorted(map(str, dislodged)), f"{where}: the retreat phase's dislodged"
        for d in dislodged:
            assert set(d["retreats"]) == retreats_of(b, d, n["units"], standoffs), f"{where}: retreats of {d}"
        SEEN["a standoff"] += len(standoffs)
        # a standoff province is one left empty that two moves failed to enter; one that two moves not by
        # convoy failed to enter is one (a convoyed army whose convoy failed tried nothing)
        assert standoffs <= maybe, f"{where}: standoffs {sorted(standoffs)}, not all left empty by two failed moves"
        assert surely <= standoffs, f"{where}: standoffs {sorted(standoffs)} leave out {sorted(surely - standoffs)}"
    else:
        assert phase_of(n)[2] != "retreat" and not n.get("dislodged"), f"{where}: a retreat phase with nobody dislodged"
    for d in destroyed:
        attacker = {"attacker_from": arrived[prov(d["location"])],
                    "attacker_via_convoy": by_convoy(ordered[arrived[prov(d["location"])]]["order"])}
        # (when no retreat phase follows, the rules list no standoffs: those that may be one are taken)
        left = retreats_of(b, {**d, **attacker}, n["units"], standoffs if dislodged else maybe)
        assert not left, f"{where}: {d} destroyed with retreats {left} open"


def check_retreat(b: Board, s: dict[str, Any], r: dict[str, Any], n: dict[str, Any], where: str) -> None:
    assert not n.get("dislodged") and not n.get("standoffs"), f"{where}: dislodged units after the retreats"
    standoffs = set(s.get("standoffs", []))
    before = Counter(map(key, s["units"]))
    after = Counter(map(key, n["units"]))
    assert not before - after, f"{where}: a unit not dislodged left the board"
    new = after - before
    assert sum(new.values()) <= len(s["dislodged"]), where
    for k in new:
        d = next((d for d in s["dislodged"]
                  if (d["power"], d["type"]) == k[:2] and k[2] in retreats_of(b, d, s["units"], standoffs)), None)
        assert d is not None, f"{where}: {k} retreated where no dislodged unit may go"
    assert len(r["orders"]) <= len(s["dislodged"]), f"{where}: more retreat orders than dislodged units"
    # each retreat ordered ends there, unless two or more units retreat to one province: all are then
    # disbanded (DIP-R1); a unit without a retreat order is disbanded (DIP-G4)
    aims = []
    for o in r["orders"]:
        m = re.fullmatch(r"([AF]) (\S+) R (\S+)", o["order"])
        if m:
            aims.append(((o["power"], "army" if m.group(1) == "A" else "fleet", m.group(3).lower()), o))
    by_prov = Counter(prov(k[2]) for k, _ in aims)
    for k, o in aims:
        SEEN["a retreat"] += 1
        if by_prov[prov(k[2])] > 1:
            SEEN["two retreats to one province"] += 1
            assert o["status"] == "fails" and not any(prov(u["location"]) == prov(k[2]) for u in n["units"]
                                                      if key(u) not in before), f"{where}: two retreats to {k[2]}: {o}"
        else:
            assert (o["status"] == "succeeds") == (new[k] == 1), f"{where}: {o} and the board disagree"
    assert sum(new.values()) == sum(o["status"] == "succeeds" for _, o in aims), f"{where}: retreats carried out"
    assert len(r["destroyed"]) == len(s["dislodged"]) - sum(new.values()), f"{where}: the disbanded units listed"


def disorder_rank(b: Board, mine: set[str], u: dict[str, Any]) -> tuple[int, int, str]:
    """DATC-4.D.8: farthest from an owned centre first, then fleets, then by the province's English name."""
    p = prov(u["location"])
    return -b.distance(p, mine), 0 if u["type"] == "fleet" else 1, b.provinces[p]["name"].lower()


def check_adjustment(b: Board, s: dict[str, Any], r: dict[str, Any], n: dict[str, Any], where: str) -> None:
    owners = s["supply_centers"]
    centres = owner_counts(owners)
    before, after = Counter(u["power"] for u in s["units"]), Counter(u["power"] for u in n["units"])
    old = Counter(map(key, s["units"]))
    new = Counter(map(key, n["units"])) - old
    taken = held(s["units"])
    kept = Counter(map(key, n["units"]))
    for pw in b.powers | set(before) | set(after):
        figures = f"{where}: {pw}: {before[pw]} units, {centres[pw]} centres, {after[pw]} after"
        if centres[pw] == 0:
            assert after[pw] == 0, f"{where}: {pw} owns no centre and keeps {after[pw]} units"
        if before[pw] > centres[pw]:
            assert after[pw] == centres[pw], figures
        else:
            assert before[pw] <= after[pw] <= centres[pw], figures
            lost = [u for u in s["units"] if u["power"] == pw and key(u) not in kept]
            assert not lost, f"{where}: {pw} lost {lost} without a disband to make"
    for (pw, _, loc), k in new.items():
        c = prov(loc)
        assert k == 1 and owners.get(c) == pw and c not in taken and c in b.centres, f"{where}: {pw} built on {loc}"
        assert b.anywhere or b.provinces[c].get("home") == pw, f"{where}: {pw} built on {loc}, no home centre of its"
        SEEN["a build"] += 1
        SEEN["a build away from home"] += b.provinces[c].get("home") != pw
    # civil disorder (DIP-G4, DATC-4.D.8): the units removed beyond those ordered are those farthest from
    # the power's owned centres, fleets before armies, then by the province's English name
    gone = Counter(map(key, s["units"])) - Counter(map(key, n["units"]))
    ordered = {prov(m.group(1).lower()) for o in r["orders"] if o["status"] == "succeeds"
               for m in [re.fullmatch(r"[AF] (\S+) D", o["order"])] if m}
    for pw in b.powers | set(before):
        unordered = [u for u in s["units"] if u["power"] == pw and prov(u["location"]) not in ordered]
        removed = [u for u in unordered if gone[key(u)]]
        if not removed:
            continue
        mine = {c for c, o in owners.items() if o == pw}
        SEEN["civil disorder"] += 1
        chosen = sorted(unordered, key=partial(disorder_rank, b, mine))[:len(removed)]
        assert sorted(map(key, removed)) == sorted(map(key, chosen)), f"{where}: civil disorder removed {removed}, not {chosen}"
    assert sorted(map(key, r["destroyed"])) == sorted(gone.elements()), f"{where}: the removed units listed"
    built = sum(1 for o in r["orders"] if o["order"].startswith("BUILD") and o["status"] == "succeeds")
    assert built == sum(new.values()), f"{where}: {built} builds succeeded, {sum(new.values())} new units"


def play_games(name: str, games: int, years: int, first: int = 0, path: Path | None = None) -> tuple[int, int, Counter]:
    """Play and check ``games`` seeded games of a ruleset (``path``, or the bundled one of that name) on
    the map of ``name``; the number of games and phases, and the phase kinds seen."""
    rs = load_ruleset(path or DIP / f"{name}.rules")
    assert rs.ok, rs.diagnostics
    b = Board(*map_of(name))
    start = rs.run({"phase": {"season": "spring", "year": 1, "type": "movement"}, "units": [], "orders": []},
                   "start_state", validate=False)
    # DIP-MAP2, DIP-G1: the game starts from the map's start position, in the spring of its first year
    assert sorted(map(key, start["units"])) == sorted(map(key, b.start["units"])), name
    assert start["supply_centers"] == b.start.get("supply_centers", {}), name
    assert phase_of(start) == ("spring", b.start.get("year", 1901), "movement"), name
    check_board(b, start["units"], f"{name}: the start")
    assert set(start["supply_centers"]) <= b.centres and set(start["supply_centers"].values()) <= b.powers, name
    phases, kinds = 0, Counter[str]()
    for seed in range(first, first + games):
        until = f"S{start['phase']['year'] + years}M"
        for step in play(rs, start, [], random_orders=seed, until=until):
            check_step(b, step)
            phases += 1
            kinds[step.phase[-1]] += 1
            kinds["end"] += step.end is not None
    return games, phases, kinds


def play_disorder_games(name: str, games: int, years: int, drop: float, first: int = 0) -> tuple[int, Counter]:
    """Games where each order of ``random_orders`` is left out with the chance ``drop``, as players in
    civil disorder leave them out (DIP-G4: a unit without an order holds, a dislodged one is disbanded,
    a build not ordered is waived, a disband not ordered is civil disorder's); the phases and the kinds
    seen. (``play`` takes its random orders whole: the phases are played here by `advance` itself.)"""
    rs = load_ruleset(DIP / f"{name}.rules")
    b = Board(*map_of(name))
    start = rs.run({"units": []}, "start_state", validate=False)
    phases, kinds = 0, Counter[str]()
    for seed in range(first, first + games):
        dice, state = random.Random(seed), start
        for i in range(years * 5):
            if state["phase"]["year"] >= start["phase"]["year"] + years:
                break
            orders = [o for o in rs.run({**state, "orders": []}, "random_orders", [seed * 1000 + i]) if dice.random() >= drop]
            out = rs.run({**state, "orders": orders}, "advance")
            check_step(b, SimpleNamespace(**{**out, "state": {**state, "orders": orders}}), every_unit_ordered=False)
            phases += 1
            kinds[out["phase"][-1]] += 1
            if out["end"] is not None:
                break
            state = out["next"]
    return phases, kinds


@pytest.mark.parametrize("name", GAME_RULESETS)
def test_whole_games_keep_the_rules_invariants(name: str) -> None:
    games, phases, kinds = play_games(name, GAMES or 2, YEARS or 4)
    assert phases >= games * 2, (name, phases)


@pytest.mark.slow
@pytest.mark.parametrize("name", GAME_RULESETS)
def test_many_whole_games_keep_the_rules_invariants(name: str) -> None:
    games, phases, kinds = play_games(name, GAMES or 10, YEARS or 6, first=1000)
    assert kinds["M"] >= games * 2, (name, kinds)


@pytest.mark.parametrize("name", ["standard", "build_anywhere", "ancmed", "modern", "pure"])
def test_games_with_orders_left_out_keep_the_rules_invariants(name: str) -> None:
    phases, kinds = play_disorder_games(name, GAMES or 2, YEARS or 4, 0.3)
    assert kinds["M"] >= 2 and kinds["A"] > 0, kinds


@pytest.mark.slow
@pytest.mark.parametrize("name", GAME_RULESETS)
def test_many_games_with_orders_left_out_keep_the_rules_invariants(name: str) -> None:
    phases, kinds = play_disorder_games(name, GAMES or 10, YEARS or 6, 0.3, first=2000)
    assert kinds["M"] >= 2, kinds


def test_the_games_meet_the_situations_the_checks_are_about() -> None:
    """The checks above are not vacuous: over a few games, retreats, adjustments with builds and
    disbands, civil disorder, a solo victory (the small teaching map ends fast) and the rest happen."""
    SEEN.clear()
    _, _, kinds = play_games("standard", 6, 8)
    assert kinds["R"] and kinds["A"], kinds
    _, _, kinds = play_games("teaching", 3, 6)
    assert kinds["end"], kinds
    play_games("build_anywhere", 2, 4)
    # (rarer: two retreats to one province, a unit dislodged by a convoyed army; a few in 50 games a map)
    missing = {"a move by convoy", "a unit dislodged", "a dislodged unit destroyed", "a standoff", "a retreat",
               "civil disorder", "a build", "a build away from home"} - {k for k, n in SEEN.items() if n}
    assert not missing, SEEN


def test_every_bundled_diplomacy_ruleset_is_played() -> None:
    assert {p.stem for p in DIP.glob("*.rules")} - NOT_PLAYED == set(GAME_RULESETS)


def test_the_same_seed_plays_the_same_game() -> None:
    for name in ("standard", "ancmed", "build_anywhere"):
        rs = load_ruleset(DIP / f"{name}.rules")
        start = rs.run({"units": []}, "start_state", validate=False)
        until = f"S{start['phase']['year'] + 3}M"
        games = [[(s.phase, s.state, s.result, s.next, s.end) for s in play(rs, start, [], random_orders=7, until=until)]
                 for _ in range(2)]
        assert games[0] == games[1] and len(games[0]) >= 6, name


MUTANTS = [
    ("builds anywhere", 'override rule build_problem(pw, p, owners, held) cite "DIP-R1" =\n'
                        '  if owners[p] != pw then "not owned" elif p in held then "occupied" else none', "no home centre"),
    ("retreats to the attacker's origin", 'override rule retreat_problem(d, x, held, standoffs) cite "DIP-R1" =\n'
                                          '  if prov(x) in held then {reason: "occupied", cites: ["DIP-R1"]}\n'
                                          '  elif prov(x) in standoffs then {reason: "standoff", cites: ["DIP-R1"]} else none',
     "retreats of"),
    ("no standoffs", 'override rule standoffs_now cite "DIP-R1" = {t for t, qs in attackers if false}', "leave out"),
    ("civil disorder removes the nearest", 'override rule centre_distance(u) cite "DATC-4.D.8" =\n'
     '  -min([distance(any_adj, u.prov, {c for c, o in centre_owner if o == u.power}) ?? 99, 99])', "civil disorder removed"),
    ("owners never change", 'override rule owners_after(us) cite "DIP-G2" = centre_owner', "owners after the fall"),
    ("adjustments every winter", 'override rule has_adjustment(us, owners) cite "DIP-G1" = true', "an adjustment is"),
    ("victory one centre later", 'override def victory_count = map.victory + 1', "victory 3"),
]


@pytest.mark.parametrize("what,override,said", MUTANTS, ids=[m[0] for m in MUTANTS])
def test_a_ruleset_that_breaks_a_rule_is_caught(tmp_path: Path, what: str, override: str, said: str) -> None:
    """The checks find a wrong ruleset: the standard rules with one rule changed against the text."""
    path = tmp_path / "mutant.rules"
    name = "teaching" if "victory" in what else "standard"  # (the small map ends its games soon)
    path.write_text(f'ruleset mutant "mutant"\nextends "bundled:diplomacy/{name}.rules"\n{override}\n', encoding="utf-8")
    with pytest.raises(AssertionError, match=said):
        play_games(name, 8, 8, path=path)

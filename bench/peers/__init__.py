"""Peer Diplomacy adjudicators behind one normalised interface, plus a seeded position generator.

Modules:
    dip_positions     -- random_turn(seed, n_units) / random_turns(...): states in the common format
    engine_diplomacy  -- adapter for the PyPI `diplomacy` package (imported lazily)
    engine_pydip      -- adapter for the PyPI `pydip` package (imported lazily)

This file holds the small helpers both adapters share: parsing an order of the common
short notation, and turning what an engine reports into the normalised result::

    {"orders":    [{"power", "order", "status": "succeeds"|"fails"|"invalid"}],  # input order
     "units":     [{"power", "type", "location"}],   # after the phase, sorted by (location, power)
     "dislodged": [{"power", "type", "location"}]}   # sorted by location
"""

from __future__ import annotations

__all__ = ["parse_order", "finish_result"]

_TYPES = {"A": "army", "F": "fleet"}


def parse_order(text: str):
    """Parse 'A PAR - BUR', 'A PAR H', 'A MUN S A PAR[ - BUR]', 'F NTH C A LON - NWY', '... VIA'.

    Returns a dict with lower-case locations, or None when the text does not parse:
        {"type": "army"|"fleet", "loc": "par", "kind": "move"|"hold"|"support"|"convoy",
         "dest": "bur"|None, "via": bool,
         "target_type": ..., "target_loc": ..., "target_dest": ...|None}   # support / convoy
    """
    w = text.strip().upper().split()
    if len(w) < 3 or w[0] not in _TYPES:
        return None
    out = {"type": _TYPES[w[0]], "loc": w[1].lower(), "kind": None, "dest": None, "via": False,
           "target_type": None, "target_loc": None, "target_dest": None}
    rest = w[2:]
    if rest == ["H"]:
        out["kind"] = "hold"
        return out
    if rest[0] == "-":
        if len(rest) == 3 and rest[2] == "VIA":
            out["via"] = True
            rest = rest[:2]
        if len(rest) != 2:
            return None
        out["kind"] = "move"
        out["dest"] = rest[1].lower()
        return out
    if rest[0] in ("S", "C"):
        tgt = rest[1:]
        if tgt and tgt[-1] == "H" and rest[0] == "S":
            tgt = tgt[:-1]
        if len(tgt) < 2 or tgt[0] not in _TYPES:
            return None
        out["kind"] = "support" if rest[0] == "S" else "convoy"
        out["target_type"] = _TYPES[tgt[0]]
        out["target_loc"] = tgt[1].lower()
        if len(tgt) == 4 and tgt[2] == "-":
            out["target_dest"] = tgt[3].lower()
        elif len(tgt) != 2:
            return None
        if out["kind"] == "convoy" and out["target_dest"] is None:
            return None
        return out
    return None


def finish_result(orders, parsed, invalid, moved, support_ok, dislodged, units_after):
    """Build the normalised result from per-order engine facts.

    orders     -- the input order dicts (power, order)
    parsed     -- parse_order() of each (None if unparseable)
    invalid    -- per order: True if the engine rejected it (it then held)
    moved      -- per order: for moves, True iff the unit moved (ignored otherwise)
    support_ok -- per order: for supports, True iff the engine says the support was given
                  (not cut, not dislodged, matched the supported order)
    dislodged  -- list of {"power","type","location"} units dislodged this phase
    units_after -- list of {"power","type","location"} on the board after the phase

    Support: succeeds iff it matched what the supported unit really tried (support-hold of a
    unit that did not move away / support-move to the province the unit moved to), the engine
    did not cut it, and the supporter was not dislodged; a mismatched (void) support fails.
    Hold: succeeds unless dislodged.  Convoy: succeeds iff the fleet was not dislodged and
    the army at the convoy's source moved to the convoy's destination province.
    """
    dis_provs = {u["location"][:3] for u in dislodged}
    # What each unit really tried to do (invalid orders hold): province -> dest province | None
    attempt = {}
    for p, inv in zip(parsed, invalid):
        if p is not None:
            attempt[p["loc"][:3]] = p["dest"][:3] if (p["kind"] == "move" and not inv) else None
    army_moved_to = {}   # source province -> destination province, for moves that succeeded
    for p, inv, mv in zip(parsed, invalid, moved):
        if p and not inv and p["kind"] == "move" and mv:
            army_moved_to[p["loc"][:3]] = p["dest"][:3]
    statuses = []
    for p, inv, mv, sup in zip(parsed, invalid, moved, support_ok):
        if inv or p is None:
            statuses.append("invalid")
            continue
        here = p["loc"][:3]
        kind = p["kind"]
        if kind == "move":
            ok = bool(mv)
        elif kind == "hold":
            ok = here not in dis_provs
        elif kind == "support":
            tgt = p["target_loc"][:3]
            want = p["target_dest"][:3] if p["target_dest"] else None
            matched = tgt in attempt and attempt[tgt] == want
            ok = matched and bool(sup) and here not in dis_provs
        else:  # convoy
            ok = (here not in dis_provs
                  and army_moved_to.get(p["target_loc"][:3]) == p["target_dest"][:3])
        statuses.append("succeeds" if ok else "fails")
    return {
        "orders": [{"power": o["power"], "order": o["order"], "status": s}
                   for o, s in zip(orders, statuses)],
        "units": sorted((dict(u) for u in units_after), key=lambda u: (u["location"], u["power"])),
        "dislodged": sorted((dict(u) for u in dislodged), key=lambda u: (u["location"], u["power"])),
    }

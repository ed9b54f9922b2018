"""Adapter: adjudicate a ruleval Diplomacy state with the PyPI `pydip` package (tested: 0.1.8).

    handle = setup(state)      # builds pydip Players and Commands
    result = process(handle)   # resolves the movement phase, returns the normalised result
    adjudicate(state) == process(setup(state))

`pydip` is imported lazily, inside setup(); a missing package raises ImportError.
pydip names territories in English ('Mid-Atlantic Ocean', 'Spain North Coast'); the table
below maps the standard three-letter ids onto them.  pydip validates orders with `assert`
in the Command constructors: an order whose command cannot be built is reported `invalid`
and the unit is given a HoldCommand.  See README.md for the status mapping and limitations.
"""

from __future__ import annotations

from . import finish_result, parse_order

__all__ = ["NAME", "available", "setup", "process", "adjudicate"]

NAME = "pydip"

# Standard province id -> pydip territory name (pydip's vanilla map, which has no Switzerland).
_PROVINCE_NAMES = {
    'adr': 'Adriatic Sea',
    'aeg': 'Aegean Sea',
    'alb': 'Albania',
    'ank': 'Ankara',
    'apu': 'Apulia',
    'arm': 'Armenia',
    'bal': 'Baltic Sea',
    'bar': 'Barents Sea',
    'bel': 'Belgium',
    'ber': 'Berlin',
    'bla': 'Black Sea',
    'boh': 'Bohemia',
    'bot': 'Gulf of Bothnia',
    'bre': 'Brest',
    'bud': 'Budapest',
    'bul': 'Bulgaria',
    'bur': 'Burgundy',
    'cly': 'Clyde',
    'con': 'Constantinople',
    'den': 'Denmark',
    'eas': 'Eastern Mediterranean Sea',
    'edi': 'Edinburgh',
    'eng': 'English Channel',
    'fin': 'Finland',
    'gal': 'Galicia',
    'gas': 'Gascony',
    'gre': 'Greece',
    'hel': 'Helgoland Bight',
    'hol': 'Holland',
    'ion': 'Ionian Sea',
    'iri': 'Irish Sea',
    'kie': 'Kiel',
    'lon': 'London',
    'lvn': 'Livonia',
    'lvp': 'Liverpool',
    'lyo': 'Gulf of Lyon',
    'mao': 'Mid-Atlantic Ocean',
    'mar': 'Marseilles',
    'mos': 'Moscow',
    'mun': 'Munich',
    'naf': 'North Africa',
    'nao': 'North Atlantic Ocean',
    'nap': 'Naples',
    'nth': 'North Sea',
    'nwg': 'Norwegian Sea',
    'nwy': 'Norway',
    'par': 'Paris',
    'pic': 'Picardy',
    'pie': 'Piedmont',
    'por': 'Portugal',
    'pru': 'Prussia',
    'rom': 'Rome',
    'ruh': 'Ruhr',
    'rum': 'Rumania',
    'ser': 'Serbia',
    'sev': 'Sevastopol',
    'sil': 'Silesia',
    'ska': 'Skagerrak',
    'smy': 'Smyrna',
    'spa': 'Spain',
    'stp': 'St. Petersburg',
    'swe': 'Sweden',
    'syr': 'Syria',
    'tri': 'Trieste',
    'tun': 'Tunis',
    'tus': 'Tuscany',
    'tyr': 'Tyrolia',
    'tys': 'Tyrrhenian Sea',
    'ukr': 'Ukraine',
    'ven': 'Venice',
    'vie': 'Vienna',
    'wal': 'Wales',
    'war': 'Warsaw',
    'wes': 'Western Mediterranean Sea',
    'yor': 'Yorkshire',}
# Coasts of split provinces.  pydip calls Bulgaria's east coast its "North Coast".
_SPLIT_NAMES = {
    "bul/ec": "Bulgaria North Coast", "bul/sc": "Bulgaria South Coast",
    "spa/nc": "Spain North Coast", "spa/sc": "Spain South Coast",
    "stp/nc": "St. Petersburg North Coast", "stp/sc": "St. Petersburg South Coast",
}
_POWERS = ("austria", "england", "france", "germany", "italy", "russia", "turkey")

_CACHE = {}


def _lib():
    """Import pydip lazily and build (once) the map plus id <-> name tables."""
    if _CACHE:
        return _CACHE
    try:
        from pydip.map.predefined import vanilla_dip
        from pydip.map.territory import CoastTerritory, LandTerritory, SeaTerritory
        from pydip.player.command.command import (ConvoyMoveCommand, ConvoyTransportCommand,
                                                  HoldCommand, MoveCommand, SupportCommand)
        from pydip.player.player import Player
        from pydip.player.unit import UnitTypes
        from pydip.turn import resolve
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "bench.peers.engine_pydip needs the PyPI package 'pydip' "
            "(pip install pydip==0.1.8)") from exc
    game_map = vanilla_dip.generate_map()
    to_id = {}
    for pid, name in _PROVINCE_NAMES.items():
        terr = game_map.name_map[name]
        to_id[name] = pid
        if isinstance(terr, LandTerritory) and len(terr.coasts) == 1:
            to_id[terr.coasts[0].name] = pid
    for cid, name in _SPLIT_NAMES.items():
        to_id[name] = cid
    _CACHE.update(
        map=game_map, to_id=to_id, Coast=CoastTerritory, Land=LandTerritory, Sea=SeaTerritory,
        Move=MoveCommand, Hold=HoldCommand, Support=SupportCommand,
        ConvoyMove=ConvoyMoveCommand, ConvoyTransport=ConvoyTransportCommand,
        Player=Player, UnitTypes=UnitTypes, resolve=resolve)
    return _CACHE


def available() -> bool:
    try:
        _lib()
    except ImportError:
        return False
    return True


def _position(lib, utype, loc):
    """pydip position name of a unit of type utype at ruleval location loc (KeyError if impossible)."""
    if loc in _SPLIT_NAMES:
        if utype != "fleet":
            raise KeyError(loc)
        return _SPLIT_NAMES[loc]
    name = _PROVINCE_NAMES[loc]
    terr = lib["map"].name_map[name]
    if utype == "army" or isinstance(terr, lib["Sea"]):
        return name
    if len(terr.coasts) == 1:
        return terr.coasts[0].name
    raise KeyError(loc)   # fleet in a split province without a coast, or inland


def _fleet_target(lib, unit, dest, lenient=False):
    """Where a fleet moving (or, lenient=True, supported) to ruleval `dest` goes in pydip terms.

    A move to a split province without a coast is only accepted when one coast is reachable;
    a support is about the province, so any reachable coast will do.
    """
    if dest in _SPLIT_NAMES:
        return _SPLIT_NAMES[dest]
    name = _PROVINCE_NAMES[dest]
    terr = lib["map"].name_map[name]
    if isinstance(terr, lib["Sea"]):
        return name
    coasts = [c.name for c in terr.coasts]
    if len(coasts) == 1:
        return coasts[0]
    reach = [c for c in coasts if c in lib["map"].adjacency[unit.position]]
    if len(reach) == 1 or (lenient and reach):
        return sorted(reach)[0]
    raise KeyError(dest)  # inland, or split coast that cannot be told


class _Handle:
    __slots__ = ("state", "parsed", "invalid", "commands", "cmd_of_order", "lib")


def setup(state: dict) -> _Handle:
    lib = _lib()
    game_map, UT = lib["map"], lib["UnitTypes"]
    phase = state.get("phase") or {}
    if phase.get("type", "movement") != "movement":
        raise ValueError("engine_pydip only adjudicates movement phases")

    configs = {p: [] for p in _POWERS}
    for u in state["units"]:
        configs.setdefault(u["power"], []).append({
            "territory_name": _position(lib, u["type"], u["location"]),
            "unit_type": UT.TROOP if u["type"] == "army" else UT.FLEET})
    players = {p: lib["Player"](p, game_map, cfg) for p, cfg in configs.items()}
    at = {}   # province id -> (player, Unit)
    for player in players.values():
        for unit in player.units:
            at[lib["to_id"][unit.position][:3]] = (player, unit)

    orders = state.get("orders", [])
    parsed = [parse_order(o["order"]) for o in orders]
    n = len(orders)
    invalid = [True] * n
    cmd_of_order = [None] * n
    taken = {}   # province -> command (first order for a unit wins)

    def own_unit(i):
        p = parsed[i]
        if p is None or p["loc"][:3] not in at:
            return None
        player, unit = at[p["loc"][:3]]
        want = UT.TROOP if p["type"] == "army" else UT.FLEET
        if player.name != orders[i]["power"] or unit.unit_type != want or p["loc"][:3] in taken:
            return None
        return player, unit

    def other_unit(loc, utype):
        if loc[:3] not in at:
            raise KeyError(loc)
        unit = at[loc[:3]][1]
        if unit.unit_type != (UT.TROOP if utype == "army" else UT.FLEET):
            raise KeyError(loc)
        return unit

    def record(i, cmd):
        invalid[i] = False
        cmd_of_order[i] = cmd
        taken[parsed[i]["loc"][:3]] = cmd

    # pass 1: holds, moves, convoys; pass 2: supports (they need the supported command)
    for i, p in enumerate(parsed):
        if p is None or p["kind"] == "support":
            continue
        owner = own_unit(i)
        if owner is None:
            continue
        player, unit = owner
        try:
            if p["kind"] == "hold":
                cmd = lib["Hold"](player, unit)
            elif p["kind"] == "move":
                if unit.unit_type == UT.TROOP:  # (a coast written for an army is ignored: DATC 6.B.12)
                    dest = _PROVINCE_NAMES[p["dest"].split("/")[0]]
                    if p["via"] or dest not in game_map.adjacency[unit.position]:
                        cmd = lib["ConvoyMove"](player, unit, dest)
                    else:
                        cmd = lib["Move"](player, unit, dest)
                else:
                    if p["via"]:
                        raise AssertionError("fleets cannot move via convoy")
                    cmd = lib["Move"](player, unit, _fleet_target(lib, unit, p["dest"]))
            else:  # convoy
                army = other_unit(p["target_loc"], p["target_type"])
                cmd = lib["ConvoyTransport"](player, unit, army, _PROVINCE_NAMES[p["target_dest"][:3]])
        except (AssertionError, KeyError, ValueError, TypeError):
            continue
        record(i, cmd)
    for i, p in enumerate(parsed):
        if p is None or p["kind"] != "support":
            continue
        owner = own_unit(i)
        if owner is None:
            continue
        player, unit = owner
        try:
            supported = other_unit(p["target_loc"], p["target_type"])
            if p["target_dest"] is None:
                dest = supported.position
            else:
                d = p["target_dest"][:3]
                theirs = taken.get(p["target_loc"][:3])
                if (isinstance(theirs, (lib["Move"], lib["ConvoyMove"]))
                        and not isinstance(theirs, lib["Hold"])
                        and lib["to_id"].get(theirs.destination, "")[:3] == d):
                    dest = theirs.destination          # pydip matches supports by exact name
                elif supported.unit_type == UT.TROOP:
                    dest = _PROVINCE_NAMES[d]
                else:
                    dest = _fleet_target(lib, supported, p["target_dest"], lenient=True)
            cmd = lib["Support"](player, unit, supported, dest)
        except (AssertionError, KeyError, ValueError, TypeError):
            continue
        record(i, cmd)

    commands = list(taken.values())
    for prov, (player, unit) in sorted(at.items()):
        if prov not in taken:      # unordered or invalidly ordered units hold
            commands.append(lib["Hold"](player, unit))

    h = _Handle()
    h.state, h.parsed, h.invalid, h.commands, h.cmd_of_order, h.lib = \
        state, parsed, invalid, commands, cmd_of_order, lib
    return h


def process(handle: _Handle) -> dict:
    lib = handle.lib
    resolve, to_id = lib["resolve"], lib["to_id"]
    UT = lib["UnitTypes"]
    outcome = resolve.resolve_turn(lib["map"], handle.commands)
    # resolve_turn keeps each command's resolution (keyed by unit position) in this module
    # global; read it straight after the call.
    resolution = dict(resolve.resolution_map)

    units_after, dislodged = [], []
    for power, units in outcome.items():
        for unit, retreats in units.items():
            entry = {"power": power, "type": "army" if unit.unit_type == UT.TROOP else "fleet",
                     "location": to_id[unit.position]}
            (units_after if retreats is None else dislodged).append(entry)

    moved, support_ok = [], []
    for cmd in handle.cmd_of_order:
        ok = bool(cmd is not None and resolution.get(cmd.unit.position, False))
        moved.append(ok)
        support_ok.append(ok)
    return finish_result(handle.state.get("orders", []), handle.parsed, handle.invalid,
                         moved, support_ok, dislodged, units_after)


def adjudicate(state: dict) -> dict:
    return process(setup(state))

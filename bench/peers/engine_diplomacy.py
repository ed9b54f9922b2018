"""Adapter: adjudicate a ruleval Diplomacy state with the PyPI `diplomacy` package (tested: 1.1.2).

    handle = setup(state)      # builds a diplomacy.Game with the units and orders
    result = process(handle)   # adjudicates the movement phase, returns the normalised result
    adjudicate(state) == process(setup(state))

`diplomacy` is imported lazily, inside setup(); a missing package raises ImportError.
See README.md next to this file for the status mapping and known limitations.
"""

from __future__ import annotations

from . import finish_result, parse_order

__all__ = ["NAME", "available", "setup", "process", "adjudicate"]

NAME = "diplomacy"
_LETTER = {"army": "A", "fleet": "F"}
_TYPE = {"A": "army", "F": "fleet"}
_SEASON = {"spring": "S", "fall": "F"}
_FAILED_MOVE = {"bounce", "void", "no convoy", "disrupted", "dislodged"}


def _game_class():
    try:
        from diplomacy import Game
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(
            "bench.peers.engine_diplomacy needs the PyPI package 'diplomacy' "
            "(pip install diplomacy==1.1.2)") from exc
    return Game


def available() -> bool:
    try:
        _game_class()
    except ImportError:
        return False
    return True


class _Handle:
    __slots__ = ("game", "state", "parsed", "invalid", "unit_keys")


def setup(state: dict) -> _Handle:
    """Create a Game positioned at the state's phase with its units, and submit every order.

    Orders the engine refuses at submission (its legality check) are recorded as invalid;
    the engine then holds those units.
    """
    Game = _game_class()
    game = Game()   # default rules; the standard map is cached by the package after first use
    game.clear_units()
    phase = state.get("phase") or {}
    if phase.get("type", "movement") != "movement":
        raise ValueError("engine_diplomacy only adjudicates movement phases")
    game.set_current_phase("%s%dM" % (_SEASON[phase.get("season", "spring")], int(phase.get("year", 1901))))

    per_power = {}
    for u in state["units"]:
        per_power.setdefault(u["power"].upper(), []).append(
            "%s %s" % (_LETTER[u["type"]], u["location"].upper()))
    for power, units in per_power.items():
        game.set_units(power, units, reset=True)

    orders = state.get("orders", [])
    parsed = [parse_order(o["order"]) for o in orders]
    unit_keys = []
    by_power = {}
    for o, p in zip(orders, parsed):
        key = None if p is None else "%s %s" % (_LETTER[p["type"]], p["loc"].upper())
        unit_keys.append(key)
        by_power.setdefault(o["power"].upper(), []).append(o["order"].upper())
    for power, texts in by_power.items():
        if game.get_power(power) is not None:
            game.set_orders(power, texts)
    game.error = []

    invalid = []
    for o, key in zip(orders, unit_keys):
        power = game.get_power(o["power"].upper())
        invalid.append(power is None or key is None or key not in power.orders)

    h = _Handle()
    h.game, h.state, h.parsed, h.invalid, h.unit_keys = game, state, parsed, invalid, unit_keys
    return h


def process(handle: _Handle) -> dict:
    """Adjudicate the phase prepared by setup() and return the normalised result."""
    game = handle.game
    owners = {}
    for power in game.powers.values():
        for unit in power.units:
            owners[unit] = power.name.lower()
    game.process()
    results = {unit: {str(code) for code in codes}
               for unit, codes in game.result_history.last_value().items()}

    dislodged = []
    for unit, codes in results.items():
        if "dislodged" in codes:
            dislodged.append({"power": owners.get(unit, "?"), "type": _TYPE[unit[0]],
                              "location": unit[2:].lower()})
    units_after = []
    for power in game.powers.values():
        for unit in power.units:
            units_after.append({"power": power.name.lower(), "type": _TYPE[unit[0]],
                                "location": unit[2:].lower()})

    moved, support_ok = [], []
    for _, key in zip(handle.parsed, handle.unit_keys):
        codes = results.get(key, set()) if key else set()
        moved.append(not (codes & _FAILED_MOVE))
        # A support counts as given unless the engine cut it or dislodged the supporter;
        # whether it matched the supported order is checked from the orders themselves.
        support_ok.append(not ({"cut", "dislodged"} & codes))
    return finish_result(handle.state.get("orders", []), handle.parsed, handle.invalid,
                         moved, support_ok, dislodged, units_after)


def adjudicate(state: dict) -> dict:
    return process(setup(state))

"""Seeded random Diplomacy movement-phase positions in the common ruleval format.

``random_turn(seed, n_units)`` returns a state dict::

    {"phase": {"season": "spring"|"fall", "year": 1901, "type": "movement"},
     "units": [{"power": "england", "type": "army"|"fleet", "location": "stp/sc"}],
     "orders": [{"power": "england", "order": "F NTH C A LON - NWY"}]}

The position is legal on the standard map (one unit per province, fleets only on
coasts/seas with the right coast of split provinces, armies only on land) and carries
one order per unit with a mix of moves, holds, supports (of real neighbouring
orders), convoy chains and a few odd/illegal orders.  Everything is derived from
``random.Random(seed)`` and the map facts below; no Diplomacy engine is needed.
"""

from __future__ import annotations

import random

__all__ = ["POWERS", "random_turn", "random_turns", "province", "fleet_locations",
           "army_can_move", "fleet_can_move", "can_support_into"]

POWERS = ("austria", "england", "france", "germany", "italy", "russia", "turkey")

# ---------------------------------------------------------------------------
# STANDARD MAP ADJACENCY FACTS.
# Facts of the standard Diplomacy board, dumped once with a throwaway script from the
# standard map shipped with the `diplomacy` package (diplomacy==1.1.2) and pasted here
# as plain data.  Switzerland (impassable) is omitted.
#   SEAS / INLAND / COASTAL  - province kinds
#   SPLIT_COASTS             - provinces with two coasts, and their coast ids
#   ARMY_ADJ[p]              - provinces an army in p can move to (symmetric)
#   FLEET_ADJ[loc]           - locations (coast-specific) a fleet at loc can move to (symmetric)
# ---------------------------------------------------------------------------
SEAS = 'adr aeg bal bar bla bot eas eng hel ion iri lyo mao nao nth nwg ska tys wes'
INLAND = 'boh bud bur gal mos mun par ruh ser sil tyr ukr vie war'
COASTAL = ('alb ank apu arm bel ber bre bul cly con den edi fin gas gre hol kie lon lvn lvp mar naf nap nwy pic pie por '
           'pru rom rum sev smy spa stp swe syr tri tun tus ven wal yor')
SPLIT_COASTS = {'bul': ('bul/ec', 'bul/sc'), 'spa': ('spa/nc', 'spa/sc'), 'stp': ('stp/nc', 'stp/sc')}
ARMY_ADJ = {
    'alb': 'gre ser tri',
    'ank': 'arm con smy',
    'apu': 'nap rom ven',
    'arm': 'ank sev smy syr',
    'bel': 'bur hol pic ruh',
    'ber': 'kie mun pru sil',
    'boh': 'gal mun sil tyr vie',
    'bre': 'gas par pic',
    'bud': 'gal rum ser tri vie',
    'bul': 'con gre rum ser',
    'bur': 'bel gas mar mun par pic ruh',
    'cly': 'edi lvp',
    'con': 'ank bul smy',
    'den': 'kie swe',
    'edi': 'cly lvp yor',
    'fin': 'nwy stp swe',
    'gal': 'boh bud rum sil ukr vie war',
    'gas': 'bre bur mar par spa',
    'gre': 'alb bul ser',
    'hol': 'bel kie ruh',
    'kie': 'ber den hol mun ruh',
    'lon': 'wal yor',
    'lvn': 'mos pru stp war',
    'lvp': 'cly edi wal yor',
    'mar': 'bur gas pie spa',
    'mos': 'lvn sev stp ukr war',
    'mun': 'ber boh bur kie ruh sil tyr',
    'naf': 'tun',
    'nap': 'apu rom',
    'nwy': 'fin stp swe',
    'par': 'bre bur gas pic',
    'pic': 'bel bre bur par',
    'pie': 'mar tus tyr ven',
    'por': 'spa',
    'pru': 'ber lvn sil war',
    'rom': 'apu nap tus ven',
    'ruh': 'bel bur hol kie mun',
    'rum': 'bud bul gal ser sev ukr',
    'ser': 'alb bud bul gre rum tri',
    'sev': 'arm mos rum ukr',
    'sil': 'ber boh gal mun pru war',
    'smy': 'ank arm con syr',
    'spa': 'gas mar por',
    'stp': 'fin lvn mos nwy',
    'swe': 'den fin nwy',
    'syr': 'arm smy',
    'tri': 'alb bud ser tyr ven vie',
    'tun': 'naf',
    'tus': 'pie rom ven',
    'tyr': 'boh mun pie tri ven vie',
    'ukr': 'gal mos rum sev war',
    'ven': 'apu pie rom tri tus tyr',
    'vie': 'boh bud gal tri tyr',
    'wal': 'lon lvp yor',
    'war': 'gal lvn mos pru sil ukr',
    'yor': 'edi lon lvp wal',
}
FLEET_ADJ = {
    'adr': 'alb apu ion tri ven',
    'aeg': 'bul/sc con eas gre ion smy',
    'alb': 'adr gre ion tri',
    'ank': 'arm bla con',
    'apu': 'adr ion nap ven',
    'arm': 'ank bla sev',
    'bal': 'ber bot den kie lvn pru swe',
    'bar': 'nwg nwy stp/nc',
    'bel': 'eng hol nth pic',
    'ber': 'bal kie pru',
    'bla': 'ank arm bul/ec con rum sev',
    'bot': 'bal fin lvn stp/sc swe',
    'bre': 'eng gas mao pic',
    'bul/ec': 'bla con rum',
    'bul/sc': 'aeg con gre',
    'cly': 'edi lvp nao nwg',
    'con': 'aeg ank bla bul/ec bul/sc smy',
    'den': 'bal hel kie nth ska swe',
    'eas': 'aeg ion smy syr',
    'edi': 'cly nth nwg yor',
    'eng': 'bel bre iri lon mao nth pic wal',
    'fin': 'bot stp/sc swe',
    'gas': 'bre mao spa/nc',
    'gre': 'aeg alb bul/sc ion',
    'hel': 'den hol kie nth',
    'hol': 'bel hel kie nth',
    'ion': 'adr aeg alb apu eas gre nap tun tys',
    'iri': 'eng lvp mao nao wal',
    'kie': 'bal ber den hel hol',
    'lon': 'eng nth wal yor',
    'lvn': 'bal bot pru stp/sc',
    'lvp': 'cly iri nao wal',
    'lyo': 'mar pie spa/sc tus tys wes',
    'mao': 'bre eng gas iri naf nao por spa/nc spa/sc wes',
    'mar': 'lyo pie spa/sc',
    'naf': 'mao tun wes',
    'nao': 'cly iri lvp mao nwg',
    'nap': 'apu ion rom tys',
    'nth': 'bel den edi eng hel hol lon nwg nwy ska yor',
    'nwg': 'bar cly edi nao nth nwy',
    'nwy': 'bar nth nwg ska stp/nc swe',
    'pic': 'bel bre eng',
    'pie': 'lyo mar tus',
    'por': 'mao spa/nc spa/sc',
    'pru': 'bal ber lvn',
    'rom': 'nap tus tys',
    'rum': 'bla bul/ec sev',
    'sev': 'arm bla rum',
    'ska': 'den nth nwy swe',
    'smy': 'aeg con eas syr',
    'spa/nc': 'gas mao por',
    'spa/sc': 'lyo mao mar por wes',
    'stp/nc': 'bar nwy',
    'stp/sc': 'bot fin lvn',
    'swe': 'bal bot den fin nwy ska',
    'syr': 'eas smy',
    'tri': 'adr alb ven',
    'tun': 'ion naf tys wes',
    'tus': 'lyo pie rom tys',
    'tys': 'ion lyo nap rom tun tus wes',
    'ven': 'adr apu tri',
    'wal': 'eng iri lon lvp',
    'wes': 'lyo mao naf spa/sc tun tys',
    'yor': 'edi lon nth',
}
# --------------------------------------------------------------------------- end of map facts

_SEAS = tuple(SEAS.split())
_INLAND = tuple(INLAND.split())
_COASTAL = tuple(COASTAL.split())
_PROVINCES = tuple(sorted(_SEAS + _INLAND + _COASTAL))
_SEA_SET = frozenset(_SEAS)
_COASTAL_SET = frozenset(_COASTAL)
_ARMY = {p: tuple(v.split()) for p, v in ARMY_ADJ.items()}
_FLEET = {p: tuple(v.split()) for p, v in FLEET_ADJ.items()}


def province(loc: str) -> str:
    """'stp/sc' -> 'stp'."""
    return loc[:3]


def fleet_locations(prov: str) -> tuple:
    """Locations a fleet may occupy in a province ('' tuple for inland provinces)."""
    if prov in SPLIT_COASTS:
        return SPLIT_COASTS[prov]
    if prov in _SEA_SET or prov in _COASTAL_SET:
        return (prov,)
    return ()


def army_can_move(src: str, dst: str) -> bool:
    return province(dst) in _ARMY.get(province(src), ())


def fleet_can_move(src: str, dst: str) -> bool:
    """dst may be a province (any coast counts) or a specific coast."""
    adj = _FLEET.get(src, ())
    if "/" in dst:
        return dst in adj
    return any(loc in adj for loc in fleet_locations(dst))


def can_support_into(unit_type: str, loc: str, dst_prov: str) -> bool:
    """Whether a unit at loc could move into dst_prov (the test for a support order)."""
    if unit_type == "army":
        return army_can_move(loc, dst_prov)
    return fleet_can_move(loc, dst_prov)


# Province-level neighbourhood (army or fleet adjacency), used to cluster units.
_NEIGH = {}
for _p in _PROVINCES:
    _n = set(_ARMY.get(_p, ()))
    for _loc in fleet_locations(_p):
        _n.update(province(x) for x in _FLEET.get(_loc, ()))
    _NEIGH[_p] = tuple(sorted(_n))
# Seas adjacent to each sea, and coastal provinces touching each sea.
_SEA_SEAS = {s: tuple(x for x in _FLEET[s] if x in _SEA_SET) for s in _SEAS}
_SEA_SHORE = {s: tuple(sorted({province(x) for x in _FLEET[s] if province(x) in _COASTAL_SET}))
              for s in _SEAS}
_SHORE_SEAS = {c: tuple(s for s in _SEAS if c in _SEA_SHORE[s]) for c in _COASTAL}
del _p, _n, _loc

_LETTER = {"army": "A", "fleet": "F"}


def _unit_str(unit: dict) -> str:
    return "%s %s" % (_LETTER[unit["type"]], unit["location"].upper())


class _Builder:
    def __init__(self, rng: random.Random, n_units: int):
        self.rng = rng
        self.n = n_units
        self.units = {}      # province -> unit dict
        self.orders = {}     # province -> order string
        self.kind = {}       # province -> 'move' | 'hold' | 'support' | 'convoy' | 'other'
        self.move_dest = {}  # province -> destination location of a real move order
        self.in_chain = set()

    # -- placement -----------------------------------------------------------------
    def free(self, prov):
        return prov not in self.units

    def place(self, prov, utype, power, loc=None):
        if loc is None:
            loc = prov
            if utype == "fleet" and prov in SPLIT_COASTS:
                loc = self.rng.choice(SPLIT_COASTS[prov])
        self.units[prov] = {"power": power, "type": utype, "location": loc}

    def add_convoy_chain(self):
        rng = self.rng
        starts = [c for c in _COASTAL if self.free(c) and any(self.free(s) for s in _SHORE_SEAS[c])]
        if not starts:
            return 0
        src = rng.choice(starts)
        length = rng.choices((1, 2, 3), weights=(5, 3, 2))[0]
        # Usually a shortest chain: no fleet is superfluous (the army's coast does not touch a
        # later sea, no sea touches a non-consecutive one, the destination touches only the last
        # sea).  About one chain in ten is left redundant, as players sometimes order.
        minimal = rng.random() < 0.9
        chain = [rng.choice([s for s in _SHORE_SEAS[src] if self.free(s)])]
        while len(chain) < length:
            nxt = [s for s in _SEA_SEAS[chain[-1]] if self.free(s) and s not in chain]
            if minimal:
                nxt = [s for s in nxt if src not in _SEA_SHORE[s]
                       and not any(s in _SEA_SEAS[c] for c in chain[:-1])]
            if not nxt:
                break
            chain.append(rng.choice(nxt))
        shore = [c for c in _SEA_SHORE[chain[-1]] if c != src]
        if minimal:
            shore = [c for c in shore if not any(c in _SEA_SHORE[s] for s in chain[:-1])]
            # prefer destinations that are not also a land step away
            far = [c for c in shore if c not in _ARMY[src]]
            if far and rng.random() < 0.85:
                shore = far
        if not shore:
            return 0
        dst = rng.choice(shore)
        power = rng.choice(POWERS)
        self.place(src, "army", power)
        self.kind[src] = "convoy"
        self.move_dest[src] = dst
        self.orders[src] = "A %s - %s VIA" % (src.upper(), dst.upper())
        self.in_chain.add(src)
        for sea in chain:
            fpower = power if rng.random() < 0.8 else rng.choice(POWERS)
            self.place(sea, "fleet", fpower)
            self.kind[sea] = "convoy"
            self.orders[sea] = "F %s C A %s - %s" % (sea.upper(), src.upper(), dst.upper())
            self.in_chain.add(sea)
        return 1 + len(chain)

    def add_rest(self):
        rng = self.rng
        while len(self.units) < self.n:
            occupied = sorted(self.units)
            near = sorted({q for p in occupied for q in _NEIGH[p] if self.free(q)})
            if near and rng.random() < 0.75:
                prov = rng.choice(near)
                anchors = [p for p in occupied if prov in _NEIGH[p]]
                anchor_power = self.units[rng.choice(anchors)]["power"]
            else:
                free = [p for p in _PROVINCES if self.free(p)]
                if not free:
                    break
                prov = rng.choice(free)
                anchor_power = None
            if prov in _SEA_SET:
                utype = "fleet"
            elif prov in _COASTAL_SET:
                utype = "fleet" if rng.random() < 0.4 else "army"
            else:
                utype = "army"
            if anchor_power is not None and rng.random() < 0.5:
                power = anchor_power
            else:
                power = rng.choice(POWERS)
            self.place(prov, utype, power)

    def spread_powers(self):
        """Make sure every power owns at least one unit when there are enough units."""
        rng = self.rng
        if len(self.units) < len(POWERS):
            return
        for power in POWERS:
            counts = {}
            for u in self.units.values():
                counts[u["power"]] = counts.get(u["power"], 0) + 1
            if counts.get(power):
                continue
            donors = [p for p in sorted(self.units)
                      if p not in self.in_chain and counts[self.units[p]["power"]] > 1]
            if donors:
                self.units[rng.choice(donors)]["power"] = power

    # -- orders --------------------------------------------------------------------
    def move_targets(self, prov):
        u = self.units[prov]
        if u["type"] == "army":
            return list(_ARMY[prov])
        return list(_FLEET[u["location"]])

    def assign_moves(self, provs):
        rng = self.rng
        targeted = []
        for prov in provs:
            u = self.units[prov]
            targets = self.move_targets(prov)
            attacks = [t for t in targets if province(t) in self.units]
            bounces = [t for t in targets if province(t) in targeted]
            r = rng.random()
            if bounces and r < 0.25:
                dst = rng.choice(bounces)
            elif attacks and r < 0.7:
                dst = rng.choice(attacks)
            else:
                dst = rng.choice(targets)
            targeted.append(province(dst))
            self.kind[prov] = "move"
            self.move_dest[prov] = dst
            self.orders[prov] = "%s - %s" % (_unit_str(u), dst.upper())

    def assign_hold(self, prov):
        self.kind[prov] = "hold"
        self.orders[prov] = "%s H" % _unit_str(self.units[prov])

    def assign_support(self, prov, pending):
        """pending: provinces whose (non-moving) order is still to be decided."""
        rng = self.rng
        u = self.units[prov]
        move_opts, hold_opts = [], []
        for q in sorted(self.units):
            if q == prov:
                continue
            v = self.units[q]
            weight = 3 if v["power"] == u["power"] else 1
            k = self.kind.get(q)
            if q in self.move_dest and k in ("move", "convoy"):
                d = province(self.move_dest[q])
                if d != prov and can_support_into(u["type"], u["location"], d):
                    move_opts.append((weight, q, d))
            elif k in ("hold", "support") or (k == "convoy" and v["type"] == "fleet") or q in pending:
                if can_support_into(u["type"], u["location"], q):
                    hold_opts.append((weight, q))
        if move_opts and (not hold_opts or rng.random() < 0.65):
            _, q, d = rng.choices(move_opts, weights=[o[0] for o in move_opts])[0]
            order = "%s S %s - %s" % (_unit_str(u), _unit_str(self.units[q]), d.upper())
        elif hold_opts:
            _, q = rng.choices(hold_opts, weights=[o[0] for o in hold_opts])[0]
            order = "%s S %s" % (_unit_str(u), _unit_str(self.units[q]))
        else:
            return self.assign_hold(prov)
        self.kind[prov] = "support"
        self.orders[prov] = order

    def assign_other(self, prov):
        """Odd but plausible orders: void supports/convoys, impossible moves, lonely VIA moves."""
        rng = self.rng
        u = self.units[prov]
        options = []
        # a move two steps away (illegal: not adjacent)
        two = sorted({t for s in self.move_targets(prov) for t in self.move_targets_of(u["type"], s)}
                     - set(self.move_targets(prov)) - {u["location"]})
        if u["type"] == "army":
            two = [t for t in two if not (province(t) in _COASTAL_SET and prov in _COASTAL_SET)]
        if two:
            options.append(("far", two))
        # a support-move into a province the supported unit is not moving to (void)
        void = []
        for q in sorted(self.units):
            if q == prov or self.move_dest.get(q):
                continue
            for t in self.move_targets(q):
                d = province(t)
                if d != prov and can_support_into(u["type"], u["location"], d):
                    void.append((q, d))
        if void:
            options.append(("void_support", void))
        # a fleet at sea convoying a neighbouring army that is not going anywhere by sea
        if u["type"] == "fleet" and prov in _SEA_SET:
            armies = [c for c in _SEA_SHORE[prov]
                      if c in self.units and self.units[c]["type"] == "army" and c not in self.move_dest]
            dests = [c for c in _SEA_SHORE[prov]]
            if armies and len(dests) > 1:
                options.append(("void_convoy", [(a, d) for a in armies for d in dests if d != a]))
        # an army moving VIA convoy with no fleets ordered to carry it
        if u["type"] == "army" and prov in _COASTAL_SET:
            dests = sorted({c for s in _SHORE_SEAS[prov] for c in _SEA_SHORE[s] if c != prov})
            if dests:
                options.append(("lonely_via", dests))
        if not options:
            return self.assign_hold(prov)
        what, choices = rng.choice(options)
        pick = rng.choice(choices)
        if what == "far":
            order = "%s - %s" % (_unit_str(u), pick.upper())
        elif what == "void_support":
            q, d = pick
            order = "%s S %s - %s" % (_unit_str(u), _unit_str(self.units[q]), d.upper())
        elif what == "void_convoy":
            a, d = pick
            order = "%s C A %s - %s" % (_unit_str(u), a.upper(), d.upper())
        else:
            order = "%s - %s VIA" % (_unit_str(u), pick.upper())
        self.kind[prov] = "other"
        self.orders[prov] = order

    @staticmethod
    def move_targets_of(utype, loc):
        if utype == "army":
            return _ARMY.get(province(loc), ()) if province(loc) not in _SEA_SET else ()
        return _FLEET.get(loc, ())

    def assign_orders(self):
        rng = self.rng
        free = [p for p in sorted(self.units) if p not in self.orders]
        rng.shuffle(free)
        # shares of all units: move .35, hold .15, support .30, convoy ~.15 (chains), rest odd
        cats = {}
        for p in free:
            cats[p] = rng.choices(("move", "hold", "support", "other"), weights=(35, 15, 30, 5))[0]
        self.assign_moves([p for p in free if cats[p] == "move"])
        for p in free:
            if cats[p] == "hold":
                self.assign_hold(p)
            elif cats[p] == "other":
                self.assign_other(p)
        supporters = [p for p in free if cats[p] == "support"]
        pending = set(supporters)
        for p in supporters:
            pending.discard(p)
            self.assign_support(p, pending)


def random_turn(seed: int, n_units: int = 34) -> dict:
    """A random but legal movement-phase position with one order per unit (deterministic in seed)."""
    n_units = max(0, min(int(n_units), len(_PROVINCES)))
    rng = random.Random(seed)
    b = _Builder(rng, n_units)
    convoy_target = round(0.15 * n_units)
    convoy_units = 0
    attempts = 0
    while convoy_units < convoy_target and attempts < 10:
        attempts += 1
        if len(b.units) + 4 > n_units:   # a chain takes up to 4 units
            break
        convoy_units += b.add_convoy_chain()
    b.add_rest()
    b.spread_powers()
    b.assign_orders()
    provs = sorted(b.units, key=lambda p: b.units[p]["location"])
    return {
        "phase": {"season": rng.choice(("spring", "fall")), "year": rng.randint(1901, 1915),
                  "type": "movement"},
        "units": [dict(b.units[p]) for p in provs],
        "orders": [{"power": b.units[p]["power"], "order": b.orders[p]} for p in provs],
    }


def random_turns(seed: int, count: int, n_units: int = 34) -> list:
    """`count` positions; turn i is random_turn of a seed derived from (seed, i)."""
    return [random_turn(seed * 1_000_003 + i, n_units) for i in range(count)]

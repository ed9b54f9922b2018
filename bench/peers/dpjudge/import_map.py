"""Convert DPjudge-style `.map` files (those of the PyPI `diplomacy` package) into ruleval's map data.

    python -m bench.peers.dpjudge.import_map            # every map of the installed package
    python -m bench.peers.dpjudge.import_map ancmed     # one map
    python -m bench.peers.dpjudge.import_map --check    # compare with rulesets/diplomacy/maps/, write nothing

Where the package also ships an SVG drawing of the map (`svg/<name>.svg`), the point each place's
unit is drawn at becomes the map's `board` (what the playground and `ruleval render` draw).

Each map becomes `rulesets/diplomacy/maps/<name>.yaml` (schemas/diplomacy/map.schema.json) and a
variant ruleset `rulesets/diplomacy/<name>.rules` that extends the standard rules (or the
build-anywhere rules, for a map with `RULE BUILD_ANY`) and imports it. Who may go where is worked out
as the `diplomacy` package reads the file: an army moves along the lower- and upper-case names of
its province's list to land and coasts, a fleet along the upper-case and capitalised names of its
place's list to seas and coasts, and to a province with several coasts only by a named coast. An
adjacency that holds one way only is listed in `one_way`.

A map on the standard board (every province the package's DAIDE module has a token for is one of the
map's) gets the map's `daide` tokens from that module: each of the map's powers DAIDE names, and the
provinces whose token is not their id (`ECH: eng`), so that orders in DAIDE's syntax are read on it.
"""

from __future__ import annotations

import argparse
import math
import re
import sys
import xml.etree.ElementTree as ET
from importlib import metadata
from pathlib import Path

import yaml

from .mapfile import MapFile, MapFileError, read_map

ROOT = Path(__file__).resolve().parents[3]
MAPS_OUT = ROOT / "rulesets" / "diplomacy" / "maps"
RULES_OUT = ROOT / "rulesets" / "diplomacy"
KINDS = {"LAND": "land", "COAST": "coast", "PORT": "coast", "WATER": "sea", "SHUT": "impassable"}
ID = re.compile(r"^[a-z][a-z0-9_]*$")
DRAWN_ID = re.compile(r"^[a-z][a-z0-9_]*(?:-[a-z]+)?$")  # a province, or its coast
# every map of the package, base maps first
MAP_NAMES = ("standard", "ancmed", "modern", "pure", "colonial", "empire", "known_world_901", "world",
             "standard_age_of_empires", "standard_age_of_empires_2", "standard_fleet_rome",
             "standard_france_austria", "standard_germany_italy", "ancmed_age_of_empires")


def package_maps() -> Path:
    """The folder of map files of the installed `diplomacy` package (without importing it)."""
    dist = metadata.distribution("diplomacy")
    return Path(str(dist.locate_file("diplomacy/maps")))


def package_version() -> str:
    return metadata.version("diplomacy")


OUTLINE_TOLERANCE = 1.5  # drawing units a simplified outline may stray from the drawn one (~1 px)
PATH_TOKEN = re.compile(r"[A-Za-z]|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?")
TRANSLATE = re.compile(r"^\s*translate\(\s*([-+\d.eE]+)[\s,]+([-+\d.eE]+)\s*\)\s*$")

Point = tuple[float, float]


def path_rings(d: str) -> list[list[Point]]:
    """The closed rings of an SVG path's data, curves flattened (each cubic Bézier sampled at four
    points): the commands the package's drawings use, M, L, H, V, C and Z, absolute or relative."""
    tokens = PATH_TOKEN.findall(d)
    rings: list[list[Point]] = []
    ring: list[Point] = []
    x = y = 0.0
    i, command = 0, ""

    def number() -> float:
        nonlocal i
        value = float(tokens[i])
        i += 1
        return value

    while i < len(tokens):
        if tokens[i].isalpha():
            command = tokens[i]
            i += 1
            if command in "Zz":
                if len(ring) >= 3:
                    rings.append(ring)
                x, y = ring[0] if ring else (x, y)
                ring = []
                continue
        rel = command.islower()
        dx, dy = (x, y) if rel else (0.0, 0.0)
        kind = command.upper()
        if kind == "M":
            if len(ring) >= 3:
                rings.append(ring)
            x, y = dx + number(), dy + number()
            ring = [(x, y)]
            command = "l" if rel else "L"  # pairs after a moveto are linetos
        elif kind == "L":
            x, y = dx + number(), dy + number()
            ring.append((x, y))
        elif kind == "H":
            x = dx + number()
            ring.append((x, y))
        elif kind == "V":
            y = dy + number()
            ring.append((x, y))
        elif kind == "C":
            p0 = (x, y)
            p1, p2 = (dx + number(), dy + number()), (dx + number(), dy + number())
            p3 = (dx + number(), dy + number())
            for t in (0.25, 0.5, 0.75, 1.0):
                u = 1 - t
                ring.append((u ** 3 * p0[0] + 3 * u * u * t * p1[0] + 3 * u * t * t * p2[0] + t ** 3 * p3[0],
                             u ** 3 * p0[1] + 3 * u * u * t * p1[1] + 3 * u * t * t * p2[1] + t ** 3 * p3[1]))
            x, y = p3
        else:
            raise ValueError(f"path command `{command}` is not read (only M, L, H, V, C, Z)")
    if len(ring) >= 3:
        rings.append(ring)
    return rings


def simplified(ring: list[Point], tolerance: float = OUTLINE_TOLERANCE) -> list[Point]:
    """A ring with the points dropped that lie within ``tolerance`` of the line their neighbours
    kept draw (Douglas and Peucker's algorithm, the ring cut at its first point)."""
    closed = ring + [ring[0]]
    keep = [False] * len(closed)
    keep[0] = keep[-1] = True
    stack = [(0, len(closed) - 1)]
    while stack:
        a, b = stack.pop()
        (ax, ay), (bx, by) = closed[a], closed[b]
        length = math.hypot(bx - ax, by - ay)
        far, far_at = 0.0, -1
        for k in range(a + 1, b):
            px, py = closed[k]
            dist = (abs((bx - ax) * (ay - py) - (ax - px) * (by - ay)) / length if length
                    else math.hypot(px - ax, py - ay))
            if dist > far:
                far, far_at = dist, k
        if far > tolerance:
            keep[far_at] = True
            stack += [(a, far_at), (far_at, b)]
    return [p for p, kept in zip(closed[:-1], keep[:-1]) if kept]


def outline_of(element: ET.Element, offset: Point) -> list[str]:
    """A province's outline in the package's drawing, from its element of the drawing's mouse layer
    (a path, a polygon, or a group of them): each ring its corners in whole drawing units, shifted by
    the layer's translation, written as an SVG polygon's points (`x,y x,y ...`: one text a ring, read
    in a blink where a list a corner would take a YAML loader a tenth of a second)."""
    rings: list[list[Point]] = []
    for part in element.iter():
        tag = part.tag.rsplit("}", 1)[-1]
        if part.get("transform"):
            raise ValueError(f"`{element.get('id')}`: a transform inside the mouse layer is not read")
        if tag == "path":
            rings += path_rings(part.get("d") or "")
        elif tag == "polygon":
            numbers = [float(v) for v in PATH_TOKEN.findall(part.get("points") or "")]
            rings.append(list(zip(numbers[0::2], numbers[1::2])))
    out: list[str] = []
    for ring in rings:
        corners: list[list[int]] = []
        for px, py in simplified(ring):
            point = [round(px + offset[0]), round(py + offset[1])]
            if not corners or corners[-1] != point:
                corners.append(point)
        if len(corners) > 1 and corners[0] == corners[-1]:
            corners.pop()
        if len(corners) >= 3:
            out.append(" ".join(f"{x},{y}" for x, y in corners))
    return out


def package_outlines(root: ET.Element) -> dict[str, list[str]]:
    """Each area's outline in the package's drawing: its element in the mouse layer (the areas the
    drawing takes clicks on, one per province, a coast's apart as `stp-nc`), by its id there (which
    may be an alias of the map's: `convert` names them as the map does)."""
    layer = next((e for e in root.iter() if e.get("id") == "MouseLayer"), None)
    if layer is None:
        return {}
    offset = (0.0, 0.0)
    if layer.get("transform"):
        moved = TRANSLATE.match(layer.get("transform") or "")
        if moved is None:
            raise ValueError(f"the mouse layer's transform `{layer.get('transform')}` is not read (only translate)")
        offset = (float(moved.group(1)), float(moved.group(2)))
    outlines: dict[str, list[str]] = {}
    for element in layer:
        ident = (element.get("id") or "").lower()
        if DRAWN_ID.match(ident):
            rings = outline_of(element, offset)
            if rings:
                outlines[ident] = rings
    return dict(sorted(outlines.items()))


def package_board(name: str, folder: Path | None = None) -> dict[str, object] | None:
    """Where the package's own SVG drawing of a map (`diplomacy/maps/svg/<name>.svg`, shipped for
    some maps only) puts each place: `{size: [w, h], places: {loc: [x, y]}, outlines: {province:
    [ring, ...]}}`, the point a unit is drawn at (its `jdipNS:UNIT`), rounded, and each province's
    outline (`package_outlines`), in the drawing's viewBox units; None without a drawing."""
    path = (folder or package_maps()) / "svg" / f"{name}.svg"
    if not path.is_file():
        return None
    root = ET.parse(path).getroot()  # the package's own file; its DTD is not read
    box = [float(v) for v in (root.get("viewBox") or "").replace(",", " ").split()]
    places: dict[str, list[int]] = {}
    for prov in root.iter():
        if not prov.tag.endswith("}PROVINCE"):
            continue
        unit = next((c for c in prov if c.tag.endswith("}UNIT")), None)
        if unit is None or prov.get("name") is None:
            continue
        places[str(prov.get("name")).lower().replace("-", "/")] = [round(float(unit.get("x", 0))),
                                                                  round(float(unit.get("y", 0)))]
    if len(box) != 4 or not places:
        return None
    return {"size": [round(box[2]), round(box[3])], "places": dict(sorted(places.items())),
            "outlines": package_outlines(root)}


def power_id(power: str) -> str:
    return power.lower().replace("-", "_")


def loc_id(loc: str) -> str:
    return loc.lower()


def province_of(loc: str) -> str:
    return loc.split("/")[0].lower()


def army_moves(m: MapFile) -> dict[str, list[str]]:
    """Province -> the provinces an army there may move to."""
    out: dict[str, list[str]] = {}
    for key, terrain in m.places.items():
        if "/" in key or terrain not in ("LAND", "COAST", "PORT"):
            continue
        own = key.upper() if key.upper() in m.abuts else key.lower()
        dests: list[str] = []
        for place in m.abuts.get(own, []):
            if place == place.title() and place != place.upper():
                continue  # capitalised: fleets only
            dest = place.upper().split("/")[0]
            if m.terrain(dest) in (None, "WATER", "SHUT"):
                continue
            if province_of(dest) not in dests and province_of(dest) != province_of(key):
                dests.append(province_of(dest))
        out[province_of(key)] = sorted(dests)
    return out


def fleet_places(m: MapFile) -> list[str]:
    """Where a fleet may stand: seas and coasts, a province with several coasts only on one of them."""
    return [k for k, t in m.places.items() if t in ("WATER", "COAST", "PORT") and k.upper().lower() not in m.abuts]


def fleet_moves(m: MapFile) -> dict[str, list[str]]:
    """Fleet place (`bul/ec`) -> the places a fleet there may move to."""
    upper_keys = {k for k in m.places if k == k.upper()}
    out: dict[str, list[str]] = {}
    for key in fleet_places(m):
        own = key.upper() if key.upper() in m.abuts else key.lower()
        dests: list[str] = []
        for place in m.abuts.get(own, []):
            if not place[0].isupper():
                continue  # lower case: armies only
            dest = place.upper()
            if dest not in upper_keys or m.terrain(dest) in ("LAND", "SHUT"):
                continue
            if loc_id(dest) not in dests and loc_id(dest) != loc_id(key):
                dests.append(loc_id(dest))
        out[loc_id(key)] = sorted(dests)
    return out


def one_way_of(adjacency: dict[str, list[str]]) -> dict[str, list[str]]:
    """The edges of an adjacency whose reverse it lacks."""
    out: dict[str, list[str]] = {}
    for src, dests in adjacency.items():
        lone = [d for d in dests if src not in adjacency.get(d, [])]
        if lone:
            out[src] = lone
    return out


def daide_tokens(provinces: dict[str, object], powers: list[str]) -> dict[str, dict[str, str]] | None:
    """The map's DAIDE tokens, from the package's DAIDE module (its token set, `daide/tokens.py`, and
    the names it reads them as, `daide/clauses.py`): only for a map holding every province DAIDE
    names (the standard board), whose powers DAIDE names get their tokens."""
    from diplomacy.daide import clauses, tokens
    named = {str(t): str(t) for t in tokens.PROVINCE_TOKENS}
    named.update({k: v for k, v in clauses.Province._alias_from_bytes.items() if not v.startswith("/")})
    if any(v.lower() not in provinces for v in named.values()):
        return None
    power_tokens = {str(t) for t in tokens.POWER_TOKENS}
    return {"powers": {k: power_id(v) for k, v in sorted(clauses.Power._alias_from_bytes.items())
                       if k in power_tokens and power_id(v) in powers},
            "provinces": {k: v.lower() for k, v in sorted(named.items()) if k != v}}


def convert(m: MapFile, board: dict[str, object] | None = None) -> dict[str, object]:
    """The ruleval map data of a read map file (with the board drawing's points, where there is one)."""
    centres = {c.lower() for c in m.supply_centres()}
    home_of = {c.lower(): power_id(p) for p in m.powers for c in m.homes.get(p, [])}
    provinces: dict[str, dict[str, object]] = {}
    for key in sorted(m.places, key=str.lower):
        pid = province_of(key)
        if pid in provinces:
            continue
        terrain = m.terrain(pid) or m.places[key]
        entry: dict[str, object] = {"name": m.full_names.get(pid.upper(), pid.upper()), "kind": KINDS[terrain]}
        coasts = sorted(k.split("/")[1].lower() for k in m.places if "/" in k and province_of(k) == pid)
        if pid in centres:
            entry["center"] = True
        if pid in home_of:
            entry["home"] = home_of[pid]
        if coasts:
            entry["coasts"] = coasts
        if terrain == "PORT":
            entry["convoyable"] = True
        provinces[pid] = entry
    aliases = {}
    for alias, place in sorted(m.aliases.items()):
        a = alias.lower()
        if ID.match(a) and "/" not in place and place.lower() in provinces and a not in provinces:
            aliases[a] = place.lower()
    army = army_moves(m)
    fleet = fleet_moves(m)
    one_way = {k: v for k, v in (("army", one_way_of(army)), ("fleet", one_way_of(fleet))) if v}
    units = []
    for power in m.powers:
        for unit in m.units.get(power, []):
            kind, loc = unit.split()
            units.append({"power": power_id(power), "type": "army" if kind == "A" else "fleet", "location": loc_id(loc)})
    year = int(m.begin.split()[1])
    unknown = [p for p in m.dummies if p not in m.powers]
    if unknown:
        raise MapFileError(f"{m.files[0]}: DUMMY names `{unknown[0]}`, which is no power")
    data: dict[str, object] = {
        "name": m.name,
        "powers": [power_id(p) for p in m.powers],
        **({"dummies": [power_id(p) for p in m.dummies]} if m.dummies else {}),
        "victory": m.victory[0] if m.victory else len(centres) // 2 + 1,
        "start": {"year": year, "units": units,
                  "supply_centers": {c.lower(): power_id(p) for c, p in m.start_owners().items()}},
        "provinces": provinces,
    }
    if aliases:
        data["aliases"] = aliases
    daide = daide_tokens(provinces, [power_id(p) for p in m.powers])
    if daide is not None:
        data["daide"] = daide
    data["army"] = {p: v for p, v in army.items() if v}
    data["fleet"] = fleet
    if one_way:
        data["one_way"] = one_way
    if board is not None:
        places = board["places"]
        assert isinstance(places, dict)
        known = {loc_id(k) for k in m.places}
        data["board"] = {"size": board["size"], "places": {k: v for k, v in places.items() if k in known}}
        outlines = board.get("outlines")
        if isinstance(outlines, dict) and outlines:
            data["board"]["outlines"] = province_outlines(outlines, provinces, m.aliases)
    return data


def province_outlines(drawn: dict[str, object], provinces: dict[str, object],
                      aliases: dict[str, str]) -> dict[str, object]:
    """The drawing's outlines named as the map names its provinces: an id that is an alias is the
    province's; a province the drawing outlines only by its coasts (`irn-nc`, `irn-sc`) is their
    union; a coast of a province outlined whole is left out."""
    def named(ident: str) -> str:
        return ident if ident in provinces else aliases.get(ident.upper(), ident).lower()

    whole = {named(k): v for k, v in drawn.items() if "-" not in k}
    out: dict[str, object] = {k: v for k, v in whole.items() if k in provinces}
    for ident, rings in drawn.items():
        if "-" in ident:
            province = named(ident.split("-")[0])
            if province in provinces and province not in whole and isinstance(rings, list):
                got = out.setdefault(province, [])
                assert isinstance(got, list)
                got.extend(rings)
    return dict(sorted(out.items()))


def header(m: MapFile, source: str) -> str:
    files = ", ".join(m.files)
    victory = "its VICTORY line" if m.victory else "more than half the centres, the package's default"
    dummies = (f"\n# Played by no one (its DUMMY mark): {', '.join(power_id(p) for p in m.dummies)}; its units take no orders."
               if m.dummies else "")
    return (f"# The `{m.name}` map of the PyPI package `diplomacy` {package_version()}, converted from its\n"
            f"# DPjudge-style map file {source} (read: {files}) by `python -m bench.peers.dpjudge.import_map`.\n"
            f"# Do not edit: re-run the importer (tests/test_dpjudge_maps.py compares). Victory: {victory}."
            f"{dummies}\n# Fields: docs/maps.md.\n")


def to_yaml(data: dict[str, object]) -> str:
    return yaml.safe_dump(data, sort_keys=False, default_flow_style=None, width=110, allow_unicode=True)


def uses_build_any(m: MapFile) -> bool:
    return "BUILD_ANY" in m.rules


def ruleset_text(m: MapFile) -> str:
    base = "build_anywhere.rules" if uses_build_any(m) else "standard.rules"
    why = ("with builds in any owned centre (its RULE BUILD_ANY)" if uses_build_any(m)
           else "with the standard rules")
    title = m.name.replace("_", " ")
    return (f"# Diplomacy on the `{m.name}` map of the PyPI package `diplomacy` ({why}): only the map import\n"
            f"# is re-bound; the map is converted by `python -m bench.peers.dpjudge.import_map`.\n"
            f'ruleset diplomacy.{ruleset_name(m.name)} "Diplomacy — {title} map"\n'
            f'extends "{base}"\n'
            f'import "maps/{m.name}.yaml" as map with schema "../../schemas/diplomacy/map.schema.json"\n')


def ruleset_name(name: str) -> str:
    """The variant ruleset's file stem: the map's name, but `standard_dpjudge` for the standard board
    (`standard.rules` is the standard rules themselves)."""
    return "standard_dpjudge" if name == "standard" else name


def converted(name: str, folder: Path | None = None) -> tuple[str, str]:
    """The map YAML text and the variant ruleset text for one map of the package."""
    folder = folder or package_maps()
    m = read_map(folder / f"{name}.map")
    source = f"`diplomacy/maps/{name}.map`"
    return header(m, source) + to_yaml(convert(m, package_board(name, folder))), ruleset_text(m)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.peers.dpjudge.import_map", description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help=f"maps to convert (default: all {len(MAP_NAMES)})")
    parser.add_argument("--check", action="store_true", help="compare with the committed files, write nothing")
    args = parser.parse_args(argv)
    stale = 0
    for name in args.names or MAP_NAMES:
        try:
            map_text, rules_text = converted(name)
        except (MapFileError, OSError, metadata.PackageNotFoundError) as e:
            print(f"{name}: {e}", file=sys.stderr)
            return 3
        for path, text in ((MAPS_OUT / f"{name}.yaml", map_text), (RULES_OUT / f"{ruleset_name(name)}.rules", rules_text)):
            if args.check:
                if not path.is_file() or path.read_text(encoding="utf-8") != text:
                    print(f"{path.relative_to(ROOT)}: differs from the conversion of the installed package")
                    stale += 1
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
                print(f"wrote {path.relative_to(ROOT)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())

"""A reader for DPjudge-style `.map` files, as shipped in the PyPI `diplomacy` package.

The format, line by line (`#` starts a comment; words are separated by blanks):

- `MAP name` / `USE name...`: read another map file first, in place (a variant on a base board);
- `BEGIN SPRING 1901 MOVEMENT`: the first phase; `VICTORY n`: the centres for a solo win;
  `RULE(S) word...`: rule switches (`BUILD_ANY`: builds in any owned centre);
- `Full Name = abbr alias...`: a place's name and the words orders may use for it;
- `POWER (ADJECTIVE) CENTRE...`: a power and its home centres (`-X` removes one); `UNOWNED` (or
  `NEUTRAL`, `CENTERS`) followed by centres: neutral supply centres; then `A LOC` / `F LOC` lines
  give the power's start units; `OWNS`/`CENTERS`, `HOME(S)`/`INHABITS`, `UNITS` amend the current
  power; `UNPLAYED P...` removes powers; `DROP X...` removes places (every place whose name begins
  with X, its coasts among them, as the package's own reader does);
- `LAND|COAST|WATER|PORT|SHUT X ABUTS Y...`: a place, its terrain and what it touches (`AMEND X
  ABUTS ...` edits one; `-Y` removes an adjacency). A province with several coasts is written as
  the lower-case `bul` (its army place) and the upper-case `BUL/EC`, `BUL/SC` (its fleet places).
  In an adjacency list the case of a name says who may use it: upper case both kinds of unit,
  lower case armies only, capitalised (`Bal`) fleets only. `PORT` is a coastal place a fleet may
  convoy through; `SHUT` an impassable one.

Only what the board and the start position need is kept; the rest (aliases with blanks, power
adjectives) is read and set aside. A power marked `DUMMY` (no player controls it) is listed in
`dummies`: `DUMMY` on a power's lines marks that power; `DUMMY NAME...` (or `DUMMIES NAME...`) the powers
named; `DUMMY ALL` (or `DUMMIES ALL`) every power declared so far, `... ALL EXCEPT NAME...` all but
those. The package reads the mark the same way (`Map.dummies`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

TERRAINS = ("LAND", "COAST", "WATER", "PORT", "SHUT")


class MapFileError(ValueError):
    """A map file the reader cannot make sense of: the file, the line and why."""


@dataclass
class MapFile:
    """What a DPjudge map file (with the files it includes) says, in its own terms."""

    name: str
    files: list[str] = field(default_factory=list)
    begin: str = "SPRING 1901 MOVEMENT"
    victory: list[int] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    full_names: dict[str, str] = field(default_factory=dict)   # place (upper case) -> its name
    aliases: dict[str, str] = field(default_factory=dict)      # alias (upper case) -> place
    powers: list[str] = field(default_factory=list)            # in the order they are declared
    homes: dict[str, list[str]] = field(default_factory=dict)  # power (or UNOWNED) -> home centres
    owns: dict[str, list[str]] = field(default_factory=dict)   # power -> centres owned at the start, if given
    units: dict[str, list[str]] = field(default_factory=dict)  # power -> ["A BUD", "F STP/SC"]
    places: dict[str, str] = field(default_factory=dict)       # place as written -> terrain
    abuts: dict[str, list[str]] = field(default_factory=dict)  # place as written -> adjacencies as written
    dummies: list[str] = field(default_factory=list)           # powers no player controls (`DUMMY`), in mark order

    # --------------------------------------------------------------- derived facts

    def terrain(self, loc: str) -> str | None:
        """The terrain of a place written in any case (`bul`, `BUL`, `BUL/EC`)."""
        return self.places.get(loc.upper()) or self.places.get(loc.lower())

    def supply_centres(self) -> list[str]:
        """Every supply centre: the home centres of every power and the unowned ones."""
        out: list[str] = []
        for centres in list(self.homes.values()) + list(self.owns.values()):
            out.extend(c for c in centres if c not in out)
        return out

    def start_owners(self) -> dict[str, str]:
        """Centre -> owner at the start: a power's `OWNS` list if it has one, else its home centres."""
        owners: dict[str, str] = {}
        for power in self.powers:
            for centre in self.owns.get(power, self.homes.get(power, [])):
                owners[centre] = power
        return owners


def norm_power(word: str) -> str:
    """A power's name as the file writes it, without punctuation (`AUSTRIA,` -> `AUSTRIA`)."""
    return re.sub(r"[.:+,]", "", word.upper())


class _Reader:
    def __init__(self, folder: Path, name: str) -> None:
        self.folder = folder
        self.map = MapFile(name=name)
        self.power: str | None = None

    def fail(self, where: str, message: str) -> MapFileError:
        return MapFileError(f"{where}: {message}")

    def read(self, file_name: str, where: str) -> None:
        if "." not in file_name:
            file_name += ".map"
        if file_name in self.map.files:
            raise self.fail(where, f"`{file_name}` is included twice")
        path = self.folder / file_name
        if not path.is_file():
            raise self.fail(where, f"no map file `{file_name}` in {self.folder}")
        self.map.files.append(file_name)
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            self.line(words, line, f"{file_name}:{number}")

    def line(self, words: list[str], line: str, where: str) -> None:
        m = self.map
        head = words[0].upper()
        if head == "VICTORY":
            if not words[1:] or not all(w.isdigit() for w in words[1:]):
                raise self.fail(where, f"VICTORY gives the centres a solo win needs, as numbers: not `{line.strip()}`")
            m.victory = [int(w) for w in words[1:]]
        elif head in ("MAP", "USE", "USES"):
            for name in words[1:]:
                self.read(name, where)
        elif head == "BEGIN":
            first = [w.upper() for w in words[1:]]
            if len(first) != 3 or first[0] != "SPRING" or not first[1].isdigit() or first[2] != "MOVEMENT":
                raise self.fail(where, f"BEGIN gives the first phase as `BEGIN SPRING year MOVEMENT`: not `{line.strip()}`")
            m.begin = " ".join(first)
        elif head in ("RULE", "RULES"):
            m.rules += [w.upper() for w in words[1:]]
        elif "=" in line:
            self.names(line, where)
        elif head in ("OWNS", "CENTERS") and self.power:
            owned = m.owns.setdefault(self.power, [])
            if head == "CENTERS":
                owned.clear()
            owned.extend(w.upper() for w in words[1:] if w.upper() not in owned)
        elif head in ("INHABITS", "HOME", "HOMES") and self.power:
            self.add_homes(self.power, words[1:], reset=True)
        elif head == "UNITS" and self.power:
            m.units[self.power] = []
        elif head in ("A", "F"):
            if self.power is None or len(words) != 2:
                raise self.fail(where, f"a unit `{line.strip()}` outside a power's lines")
            unit = f"{head} {words[1].upper()}"
            for units in m.units.values():  # one unit per province: a later one replaces it
                units[:] = [u for u in units if u[2:].split("/")[0] != unit[2:].split("/")[0]]
            m.units.setdefault(self.power, []).append(unit)
        elif head in ("DUMMY", "DUMMIES"):
            self.dummy(head, [norm_power(w) for w in words[1:]], line, where)
        elif head == "DROP":
            for place in words[1:]:
                self.drop(place.upper())
        elif head in TERRAINS + ("AMEND",) and len(words) > 1:
            self.terrain(head, words, where)
        elif head == "UNPLAYED":
            gone = [norm_power(w) for w in words[1:]] if len(words) > 1 else [self.power] if self.power else []
            if gone[:1] == ["ALL"]:
                keep = [norm_power(w) for w in words[3:]]
                gone = [p for p in m.powers if p not in keep]
            for power in gone:
                if power not in m.powers:
                    raise self.fail(where, f"UNPLAYED names `{power}`, which is no power")
                m.powers.remove(power)
                m.dummies = [p for p in m.dummies if p != power]
                for table in (m.homes, m.owns, m.units):
                    table.pop(power, None)
            self.power = None
        else:
            self.power_line(words)

    def dummy(self, head: str, names: list[str], line: str, where: str) -> None:
        """A `DUMMY` or `DUMMIES` line: the powers it marks as played by no one, added to `dummies`."""
        m = self.map
        if not names:
            if head == "DUMMIES" or self.power is None:
                raise self.fail(where, f"`{line.strip()}` marks no power: `DUMMY` alone goes on a power's lines, "
                                       "else name the powers (or ALL)")
            marked = [self.power]
        else:
            self.power = None
            if names[0] != "ALL":
                marked = names
            elif len(names) == 1:
                m.dummies = []
                marked = list(m.powers)
            elif names[1] != "EXCEPT" or len(names) == 2:
                raise self.fail(where, f"`{line.strip()}`: after ALL, only EXCEPT and the powers left out")
            else:
                m.dummies = []
                marked = [p for p in m.powers if p not in names[2:]]
        m.dummies.extend(p for p in marked if p not in m.dummies)

    def names(self, line: str, where: str) -> None:
        name, _, rest = line.partition("=")
        words = rest.split()
        if not words:
            raise self.fail(where, f"`{line.strip()}` gives no abbreviation")
        place = words[0].upper()
        self.map.full_names.setdefault(place, name.strip())
        for alias in words[1:]:
            self.map.aliases.setdefault(alias.upper(), place)

    def add_homes(self, power: str, words: list[str], reset: bool) -> None:
        homes = self.map.homes
        if reset or power not in homes:
            homes[power] = []
        homes.setdefault("UNOWNED", [])
        for word in " ".join(words).upper().split():
            remove = word.startswith("-")
            centre = word.lstrip("-")
            if not centre:
                continue
            if centre in homes[power]:
                homes[power].remove(centre)
            if power != "UNOWNED" and centre not in homes["UNOWNED"]:
                homes["UNOWNED"].append(centre)  # a centre whose power leaves the game is neutral
            if not remove:
                homes[power].append(centre)

    def power_line(self, words: list[str]) -> None:
        head = words[0].upper()
        if head in ("UNOWNED", "NEUTRAL", "CENTERS"):
            self.power = None
            self.add_homes("UNOWNED", words[1:], reset=False)
            return
        power = norm_power(head)
        if power not in self.map.powers:
            self.map.powers.append(power)
        rest = words[1:]
        if rest and rest[0].startswith("("):
            rest = rest[1:]
        self.power = power
        self.add_homes(power, rest, reset=False)

    def terrain(self, head: str, words: list[str], where: str) -> None:
        m = self.map
        place, other = words[1], words[1].swapcase()
        if other in m.places and other != place:
            if head == "AMEND":
                m.places[place] = m.places[other]
                m.abuts[place] = m.abuts[other]
            del m.places[other]
            m.abuts.pop(other, None)
        if head != "AMEND":
            m.places[place] = head
            if len(words) > 2:
                m.abuts[place] = []
        elif place not in m.places:
            raise self.fail(where, f"AMEND of `{place}`, which is no place yet")
        if len(words) > 2 and words[2].upper() != "ABUTS":
            raise self.fail(where, f"expected ABUTS after `{place}`, found `{words[2]}`")
        adjacent = m.abuts.setdefault(place, [])
        for dest in words[3:]:
            if dest.startswith("-"):
                adjacent[:] = [s for s in adjacent if not s.upper().startswith(dest[1:].upper())]
            else:
                adjacent.append(dest)

    def drop(self, place: str) -> None:
        m = self.map
        for table in (m.places, m.abuts):
            for key in [k for k in table if k.upper().startswith(place)]:
                del table[key]
        for adjacent in m.abuts.values():
            adjacent[:] = [s for s in adjacent if not s.upper().startswith(place)]
        for table in (m.homes, m.owns):
            for centres in table.values():
                centres[:] = [c for c in centres if not c.startswith(place)]
        for units in m.units.values():
            units[:] = [u for u in units if not u[2:].startswith(place)]
        m.full_names = {k: v for k, v in m.full_names.items() if not k.startswith(place)}
        m.aliases = {k: v for k, v in m.aliases.items() if not v.startswith(place)}


def read_map(path: Path) -> MapFile:
    """Read a DPjudge map file and the files it includes (from the same folder)."""
    reader = _Reader(path.parent, path.stem)
    reader.read(path.name, path.name)
    m = reader.map
    neutral = m.homes.pop("UNOWNED", [])
    # a centre that is some power's home is not neutral
    taken = {c for p in m.powers for c in m.homes.get(p, [])}
    m.homes = {p: m.homes.get(p, []) for p in m.powers}
    m.homes["UNOWNED"] = [c for c in neutral if c not in taken]
    return m

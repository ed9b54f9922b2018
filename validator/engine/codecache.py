"""What a fresh process would work out again for the backend, kept across processes (``core.blobcache``)
(and the code compiled from each text, kept for the process's life, ``_CODE``):

- **compiled code** (``compiled``): a fresh process writes the source of each definition it calls as
  the warm one did, but need not compile it again: the code compiled from a source text is found by a
  digest of that text (with ruleval's own code and the Python version, ``blobcache.name``), signed with
  the user's key. This is the one cache whose content is run: docs/security.md ("Caches") says why
  that is safe and what it does not cover. What is read back must be a code object compiled from a
  file of the name asked for, else it is ignored and the source compiled.
- **sound kinds** (``solve``): what ``facts.Facts.solve`` finds for a program (a walk of all its units
  until the kinds of the parameters settle, a fifth of the work of a fresh process playing the standard rules), found by a
  digest of all the program is made from (``_program_parts``), as JSON of node numbers and kinds, none
  of it run: read at the first need of a kind, it must name this program's units and nodes, else it is
  ignored and the program solved.
- **writings** (``writing``, ``keep_writing``, ``keep_program``): the writings of a program's units
  (``written``: for each, the constants it named, the units it called and the source texts it compiled,
  in order) with the code compiled from those texts, one entry per program, found by the program's
  digest (the kinds' entry's name: with the kinds solved, all a writing reads is fixed by the program)
  and whether it can roll dice, as ``marshal`` data, read once by a backend (a file, a signature, one
  decoding) and stored again at the end of a run that wrote a unit it lacked (``keep_program``).
  In a writing, units are named by where they are and their number, nodes by their unit and their place
  among its nodes, and values by a fixed list of tags: read back, the entry must name this program's
  units, and each writing its units and nodes (else it is ignored and the unit written); its texts are
  made again as a writing's are (``written._replay``), each with the code kept with it if that is a code
  object compiled from the file name asked for (``compiled``: else from the per-text entries or
  compiled). Nothing else in it is run.
"""

from __future__ import annotations

import json
import marshal
import sys
import types
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable

from ..core import blobcache
from ..core.diagnostics import Span
from ..lang import ast as A
from ..lang import bind
from ..lib.builtins import BUILTINS, DiceSpec
from ..lib.values import Map
from . import facts as F  # (its ``NOTHING``, read at a call: ``facts`` imports ``written``, which imports this)
from . import written

if TYPE_CHECKING:
    from ..lang.program import Program, Unit
    from .backend import Backend
    from .facts import Facts

KIND = "code"
MAX_CODE_BYTES = 4_000_000


# Code compiled from generated source, by (source, filename), for the process's life (docs/architecture.md,
# "Caches": a definition written alike for another program reuses the code). Bounded by the text it keeps.
_CODE: dict[tuple[str, str], types.CodeType] = {}
_code_chars = 0  # the length of the sources _CODE keeps
MAX_CODE_CHARS = 32_000_000


def compiled(source: str, filename: str, compile_text: Callable[[str, str], types.CodeType],
             kept: "Kept | None" = None) -> types.CodeType:
    """The code of ``source`` (written by ``Backend`` alone): compiled once per process (``_CODE``, else
    ``_code_of``), and noted among ``kept``'s codes (its backend's: kept with its writings)."""
    global _code_chars
    key = (source, filename)
    code = _CODE.get(key)
    if code is None:
        code = _code_of(source, filename, compile_text)
        if _code_chars + len(source) > MAX_CODE_CHARS:
            _CODE.clear()
            _code_chars = 0
        _CODE[key] = code
        _code_chars += len(source)
    if kept is not None:
        kept.codes[key] = code
    return code


def _code_of(source: str, filename: str, compile_text: Callable[[str, str], types.CodeType]) -> types.CodeType:
    """The code of ``source``: read back with a program's writings (``_HELD``) or from the cache if a
    signed entry for this very text is there, else ``compile_text(source, filename)``, kept for the next
    process."""
    held = _HELD.get((source, filename))  # (read back with a program's writings: empty when no cache is used)
    if isinstance(held, types.CodeType) and held.co_filename == filename:
        return held
    if not blobcache.in_use(KIND):
        return compile_text(source, filename)
    entry = blobcache.name(KIND, filename, source)
    code = _marshalled(KIND, entry, MAX_CODE_BYTES)
    if isinstance(code, types.CodeType) and code.co_filename == filename:
        return code
    code = compile_text(source, filename)
    blobcache.store(KIND, entry, marshal.dumps(code))
    return code


def _marshalled(kind: str, entry: str, limit: int) -> Any:
    """The ``marshal`` data of a signed entry, or None: no such entry, or not ``marshal`` data."""
    data = blobcache.load(kind, entry, limit)
    if data is None:
        return None
    try:
        return marshal.loads(data)
    except (ValueError, EOFError, TypeError):
        return None


# ---------------------------------------------------------------- sound kinds

KINDS = "kinds"
KINDS_FORMAT = "1"
MAX_KINDS_BYTES = 16_000_000
# the Python types a kind names (``facts``: a value's), by their number in an entry; -1 is ``NOTHING``
_TYPES: tuple[type, ...] = (int, bool, str, type(None), Fraction, float, list, frozenset, tuple, dict, Map)
_NUMBERS = {t: i for i, t in enumerate(_TYPES)}


class _Refused(Exception):
    """A kind this entry format cannot hold, or an entry that does not fit the program."""


def solve(facts: "Facts", then: Callable[[], None]) -> None:
    """``facts.solve(then)``, deferred to the first need of a kind (``Facts.defer``, ``_settle``; ``then()``
    now, as ``solve`` calls it): the kinds a process that solved the same program kept, if a signed entry
    for it is there, else solved then and kept for the next process. (A run that plays kept writings alone
    needs no kind: the entry is not even read.)

    What ``solve`` sets is what is kept (``_solution``): the parameters' kinds, each unit's nodes' kinds
    and the inputs' kinds, by unit number and by the number of the node among its unit's fields
    (``_numbered``), which the same texts make alike in every process. The entry is found by a digest
    of every text and value the program is made from (``_program_parts``) with ruleval's own code, and
    must name the same units with the same numbers of nodes, else it is ignored."""
    with written.LOCK:  # (``Facts.solve``'s: no unit is written while the kinds change)
        if facts.solved:
            return
        try:
            parts = _program_parts(facts.program, facts.typed) if blobcache.in_use(KINDS) else None
        except RecursionError:  # (data nested past ``repr``'s depth: not kept)
            parts = None
        if parts is None:
            facts.solve(then)
            return
        entry = facts.digest = blobcache.name(KINDS, KINDS_FORMAT, *parts)
        facts.defer(lambda: _settle(facts, entry), then)


def _settle(facts: "Facts", entry: str) -> None:
    """The kinds of ``facts``' program at their first need (``Facts.defer``; under ``written.LOCK``): the
    signed entry's, read and checked whole (``_read``) before any is used, else solved here and kept."""
    kept = blobcache.load(KINDS, entry, MAX_KINDS_BYTES)
    if kept is not None:
        try:
            found = _read(facts.program, json.loads(kept))
        except (_Refused, ValueError, TypeError, IndexError, KeyError, RecursionError):
            found = None
        if found is not None:
            facts.adopt(*found)
            return
    facts.solved_here()
    try:
        body = _written(facts)
    except _Refused:
        return
    blobcache.store(KINDS, entry, json.dumps(body, separators=(",", ":")).encode())


def _program_parts(program: "Program", typed: bool) -> list[str]:
    """Every text and value a program is built from, in order: its modules' texts (by shown path, as the
    load parsed them), and per namespace its key, the modules it names, its chain, its state schema
    and the data it imports (each value as read, ``repr``: a set's order may differ between processes,
    which only misses the entry); and whether the inputs' kinds come from the schema (``typed``)."""
    loaded = program.loaded
    parts = [repr(typed), program.entry.key]
    for shown in sorted(loaded.modules):
        parts += [shown, loaded.sources.get(shown, "")]
    for ns in loaded.namespaces.values():
        parts.append(repr([ns.key, sorted(ns.modules.items()), ns.chain, ns.schema, ns.schema_resources,
                           [(k, b.path, b.readable, b.value, b.schema and (b.schema.value, b.schema.resources))
                            for k, b in ns.data.items()]]))
    return parts


def _numbered(unit: Any) -> list[Any]:
    """A unit's nodes in the order ``ast.nodes`` gives them, from the fields a run reads (not its
    declaration, which the engines do not read once the program is bound): a node none of them holds has
    no number, and a solution giving it a kind is not kept (``_Refused``)."""
    return list(A.nodes((unit.params, unit.ret, unit.body, unit.stmts, unit.grid, unit.overrides, unit.cycle)))


def _units(program: "Program") -> list[list[Any]]:
    return [[u.ns, u.name, u.kind, u.index] for u in program.units.values()]


def _written(facts: "Facts") -> dict[str, Any]:
    """``facts``' solution as an entry's JSON body: each kind once (``kinds``), named by its place there."""
    units = {u.index: u for u in facts.program.units.values()}
    table: dict[Any, int] = {}
    encoded: list[Any] = []

    def kind(k: Any) -> int:
        found = table.get(k)
        if found is None:
            encoded.append(_encode(k))
            found = table[k] = len(table)
        return found

    deep: list[Any] = []
    for i, kinds in facts.deep.items():
        if not kinds:
            deep.append([i, None, []])
            continue
        nodes = _numbered(units[i])
        at = {id(n): j for j, n in enumerate(nodes)}
        if any(k not in at for k in kinds):
            raise _Refused
        deep.append([i, len(nodes), [x for n, k in kinds.items() for x in (at[n], kind(k))]])
    params = {id(p): (u.index, j) for u in units.values() for j, p in enumerate(u.params)}
    if any(k not in params for k in facts.params):
        raise _Refused
    return {"units": _units(facts.program), "deep": deep,
            "params": [[*params[p], kind(k)] for p, k in facts.params.items()],
            "inputs": [[i, kind(k)] for i, k in facts.inputs.items()], "kinds": encoded}


def _read(program: "Program", body: Any) -> tuple[dict[int, Any], dict[int, dict[int, Any]], dict[int, Any]] | None:
    """The solution an entry's body holds for ``program``, or None when it names other units."""
    if type(body) is not dict or body.get("units") != _units(program):
        return None
    units = {u.index: u for u in program.units.values()}
    table = [_decode(v) for v in body["kinds"]]
    deep: dict[int, dict[int, Any]] = {}
    for i, count, pairs in body["deep"]:
        if i in deep:
            return None
        if count is None and pairs == []:
            deep[i] = {}
            continue
        nodes = _numbered(units[i])
        if len(nodes) != count or not _places(pairs):
            return None
        deep[i] = {id(nodes[pairs[j]]): table[pairs[j + 1]] for j in range(0, len(pairs), 2)}
    params = {id(units[i].params[j]): table[k] for i, j, k in body["params"] if _places([j, k])}
    inputs = {i: table[k] for i, k in body["inputs"] if units[i].kind == "input" and _places([k])}
    if len(params) != len(body["params"]) or len(inputs) != len(body["inputs"]):
        return None
    return params, deep, inputs


def _places(numbers: Any) -> bool:
    """Whether ``numbers`` are places in a list counted from its start (numbers, none negative, no
    truth value): an entry's node, parameter and kind numbers (``IndexError`` past the end)."""
    return type(numbers) is list and all(type(n) is int for n in numbers) and (not numbers or min(numbers) >= 0)


def _encode(k: Any) -> Any:
    if k is F.NOTHING:
        return -1
    t = type(k)
    if t is tuple:
        if k == F.NOTHING:
            raise _Refused
        return [_encode(x) for x in k]
    if t is str or k is None:
        return k
    if t is type and k in _NUMBERS:
        return _NUMBERS[k]
    raise _Refused


def _decode(v: Any) -> Any:
    t = type(v)
    if t is int:
        if v == -1:
            return F.NOTHING
        if 0 <= v < len(_TYPES):
            return _TYPES[v]
        raise _Refused
    if t is list:
        return tuple([_decode(x) for x in v])
    if t is str or v is None:
        return v
    raise _Refused


# ---------------------------------------------------------------- writings

PROGRAMS = "programs"
PROGRAM_FORMAT = "1"
MAX_PROGRAM_BYTES = 64_000_000
# code read back with a program's writings (``Kept.codes``), by (text, file name): ``compiled`` looks here first
_HELD: dict[tuple[str, str], Any] = {}
MAX_HELD = 20_000


class Kept:
    """A backend's writings kept across processes (one entry per program and dice flag, ``_program_entry``):
    each unit's writing as an entry's body (``_writing_body``), by the unit's number, and the code
    compiled from the texts the backend compiled, by (text, file name); ``grown``: how many writings
    were added since the entry was read or stored."""

    __slots__ = ("entry", "writings", "codes", "grown")

    def __init__(self, entry: str, writings: dict[int, Any], codes: dict[Any, Any]):
        self.entry, self.writings, self.codes, self.grown = entry, writings, codes, 0


def _kept(backend: "Backend") -> Kept | None:
    """``backend``'s kept writings: read once (a file, a signature, one ``marshal.loads``) from the entry
    of its program, or none yet; None before the kinds are known or where no entry is kept. (Its name
    is made once: the program's digest and dice flag do not change once the kinds are solved.)"""
    if backend.kept is not None:
        return backend.kept
    entry = _program_entry(backend)
    if entry is None:
        return None
    writings: dict[int, Any] = {}
    codes: dict[Any, Any] = {}
    body = _marshalled(PROGRAMS, entry, MAX_PROGRAM_BYTES)
    if (type(body) is dict and body.get("units") == _units(backend.program) and type(body.get("writings")) is dict
            and type(body.get("codes")) is dict):
        writings, codes = body["writings"], body["codes"]
        if len(_HELD) + len(codes) > MAX_HELD:
            _HELD.clear()
        _HELD.update(codes)
    backend.kept = kept = Kept(entry, writings, codes)
    return kept


def writing(backend: "Backend", unit: "Unit") -> "written._Template | None":
    """The writing of ``unit`` (``written``: the calls to make again) that a process running the same
    program kept (``keep_writing``), or None: none kept, or one that does not name this program's units
    and nodes, or holds what no recipe makes."""
    kept = _kept(backend)
    body = kept.writings.get(unit.index) if kept is not None else None
    if body is None:
        return None
    try:
        return _read_writing(backend.program, unit, body)
    except (_Refused, ValueError, TypeError, IndexError, KeyError, AttributeError, RecursionError):
        return None


def keep_writing(backend: "Backend", unit: "Unit", t: "written._Template", units: list["Unit"]) -> None:
    """Keep ``t``, the writing of ``unit`` (with ``units``, the definitions written at their calls in
    it), among the backend's writings for the next process running the same program (``keep_program``);
    not kept if it names what an entry cannot hold."""
    kept = _kept(backend)
    if kept is None:
        return
    try:
        body = _writing_body(backend.program, unit, t, units)
    except (_Refused, RecursionError, KeyError):  # (KeyError: a unit it names is not this program's)
        return
    kept.writings[unit.index] = body
    kept.grown += 1


def keep_program(backend: "Backend") -> None:
    """Store the backend's writings, with the code of the texts it compiled since it read them (``compiled``)
    and the code read back with them, as its program's entry, when writings were added since it was read or
    stored: at the end of a run or ``Backend.write_all`` that wrote a unit (its first runs; then seldom)."""
    kept = backend.kept
    if kept is None or not kept.grown:
        return
    with written.LOCK:
        kept.grown = 0
        body = {"units": _units(backend.program), "writings": kept.writings, "codes": kept.codes}
        try:
            data = marshal.dumps(body)
        except ValueError:  # (nested past marshal's depth: not kept)
            return
        blobcache.store(PROGRAMS, kept.entry, data)


def _program_entry(backend: "Backend") -> str | None:
    """The name of the entry of ``backend``'s writings: a digest of the program (``solve``'s, with
    ruleval's own code: what a writing reads that the program fixes, the memo choices included,
    ``written.key``) and of whether it can roll dice; None before the kinds are known (a writing then
    reads none) or where no entry is kept."""
    facts = backend.facts
    if facts.digest is None or not facts.solved:
        return None
    return blobcache.name(PROGRAMS, PROGRAM_FORMAT, facts.digest, repr(backend.dice))


def _writing_body(program: "Program", unit: "Unit", t: "written._Template", units: list["Unit"]) -> dict[str, Any]:
    """``t`` as an entry's JSON body: each unit by where it is and its number (``_unit_at``), each node
    by its unit and its place among that unit's nodes (``_numbered``), each value by ``_value``."""
    entry = program.entry.key
    numbers: dict[int, tuple[Any, int]] = {}  # the nodes of ``units``, by identity: their unit and number

    def at(where: tuple[str, str]) -> list[Any]:
        return [where[0], where[1], program.units[(where[0] or entry, where[1])].index]

    def node(n: Any) -> list[Any]:
        if not numbers:
            numbers.update((id(x), (u, j)) for u in units for j, x in enumerate(_numbered(u)))
        if id(n) not in numbers:
            raise _Refused
        u, j = numbers[id(n)]
        return [at((bind.place(u.ns, entry), u.name)), j, type(n).__name__]

    def value(v: Any) -> Any:
        t = type(v)
        if t is str or t is int or t is bool or t is type(None):
            return v
        if t is Fraction:
            return ["fraction", v.numerator, v.denominator]
        if t is float:
            return ["float", v.hex()]
        if t is Span:
            return ["span", v.file, v.line, v.col, v.end_line, v.end_col]
        if t is list or t is tuple:
            return [t.__name__, [value(x) for x in v]]
        if t is DiceSpec:
            return ["dice", v.count, v.sides, value(v.faces)]
        if t is types.FunctionType:  # (one of ruleval's own, ``written._same``: by its module and name there)
            named = [v.__module__, v.__name__]
            if getattr(sys.modules.get(named[0]), named[1], None) is v:
                return ["function", *named]
        if isinstance(v, A.Node):
            return ["node", *node(v)]
        raise _Refused

    def recipe(r: tuple[Any, ...]) -> list[Any]:
        kind = r[0]
        if kind == "same":
            return [kind, value(r[1])]
        if kind == "data":
            place, name, node_id = r[1]
            found = [j for j, n in enumerate(_numbered(program.units[(place or entry, name)])) if id(n) == node_id]
            if not found:
                raise _Refused
            return [kind, at((place, name)), found[0]]
        if kind in ("unit", "unit function"):
            return [kind, at(r[1])]
        if kind == "builtin function":
            bname = r[1].name
            if BUILTINS.get(bname) is not r[1]:
                raise _Refused
            return [kind, bname, value(r[2])]
        if kind == "cells":
            return [kind, [[value(k), how if how[0] == "code" else ["same", value(how[1])]] for k, how in r[1]]]
        return list(r)  # (a code's number, a new table)

    events = [list(ev) if ev[0] == "code" else
              [ev[0], ev[1], at(ev[2]) if ev[0] == "unit" else recipe(ev[2])] for ev in t.events]
    return {"unit": at((bind.place(unit.ns, entry), unit.name)), "name": t.name, "body": t.body, "events": events}


def _read_writing(program: "Program", unit: "Unit", body: Any) -> "written._Template | None":
    """The writing an entry's body holds for ``unit`` of ``program``, or None (or ``_Refused``, or an error of
    a value of the wrong JSON type) when it names other units, nodes or built-ins, or a name in its texts
    that none of its calls gives (``written._template``'s checks)."""
    entry = program.entry.key

    def unit_at(u: Any) -> Any:
        place, name, index = u
        found = program.units[(place or entry, name)]
        if type(place) is not str or found.index != index or type(index) is not int:
            raise _Refused
        return found

    def at(u: Any) -> tuple[str, str]:
        unit_at(u)
        return (u[0], u[1])

    def node_at(u: Any, k: Any) -> Any:
        if type(k) is not int or k < 0:
            raise _Refused
        return _numbered(unit_at(u))[k]

    def value(v: Any) -> Any:
        t = type(v)
        if t is not list:
            if t is str or t is int or t is bool or v is None:
                return v
            raise _Refused
        tag, *rest = v
        if tag == "span" and len(rest) == 5 and type(rest[0]) is str and type(rest[1]) is type(rest[2]) is \
                type(rest[3]) is type(rest[4]) is int:
            return Span(*rest)
        if (tag == "list" or tag == "tuple") and type(rest[0]) is list and len(rest) == 1:
            items = [value(x) for x in rest[0]]
            return items if tag == "list" else tuple(items)
        if tag == "fraction" and _ints(rest, 2) and rest[1] > 0:
            return Fraction(rest[0], rest[1])
        if tag == "float" and type(rest[0]) is str and len(rest) == 1:
            return float.fromhex(rest[0])
        if tag == "dice" and _ints(rest[:2], 2) and len(rest) == 3:
            faces = value(rest[2])
            if faces is None or type(faces) is tuple and all(type(f) is int for f in faces):
                return DiceSpec(rest[0], rest[1], faces)
        if tag == "function" and type(rest[0]) is str and rest[0].startswith("validator.") and type(rest[1]) is str:
            fn = getattr(sys.modules[rest[0]], rest[1], None)
            if type(fn) is types.FunctionType and fn.__module__ == rest[0] and fn.__name__ == rest[1]:
                return fn
        if tag == "node" and type(n := node_at(rest[0], rest[1])).__name__ == rest[2]:
            return n
        raise _Refused

    if type(body["name"]) is not str:
        raise _Refused
    codes = 0  # the texts compiled so far (what a recipe's code number may name)
    given = {body["name"]}
    events: list[tuple[Any, ...]] = []
    for ev in body["events"]:
        kind, vname = ev[0], ev[1]
        if kind == "code":
            if not vname.startswith(body["name"]) or any(n not in given for n in written._names(ev[2])):
                raise _Refused
            events.append(("code", vname, ev[2]))
            codes += 1
            continue
        if type(vname) is not str:
            raise _Refused
        given.add(vname)
        if kind == "unit":
            events.append(("unit", vname, at(ev[2])))
            continue
        r = ev[2]
        if kind != "const":
            raise _Refused
        if r[0] == "same":
            made: tuple[Any, ...] = ("same", value(r[1]))
        elif r[0] == "data":
            node = node_at(r[1], r[2])
            if not isinstance(unit_at(r[1]).bound.get(id(node)), bind.DataRef):
                raise _Refused
            made = ("data", (r[1][0], r[1][1], id(node)))
        elif r[0] == "code" and type(r[1]) is int and 0 <= r[1] < codes:
            made = ("code", r[1])
        elif r[0] in ("unit", "unit function"):
            made = (r[0], at(r[1]))
        elif r[0] == "builtin function":
            made = (r[0], BUILTINS[r[1]], value(r[2]))
            if type(made[2]) is not Span:
                raise _Refused
        elif r[0] == "table" and len(r) == 1:
            made = ("table",)
        elif r[0] == "cells":
            cells: list[tuple[Any, tuple[str, Any]]] = []
            for k, how in r[1]:
                if how[0] == "code" and type(how[1]) is int and 0 <= how[1] < codes:
                    cells.append((value(k), ("code", how[1])))
                elif how[0] == "same" and type(fn := value(how[1])) is types.FunctionType:
                    cells.append((value(k), ("same", fn)))
                else:
                    raise _Refused
            made = ("cells", cells)
        else:
            raise _Refused
        events.append(("const", vname, made))
    b = body["body"]
    if (body["unit"] != [bind.place(unit.ns, entry), unit.name, unit.index] or not events or events[-1][0] != "code"
            or not (b is None if unit.kind != "decision" else type(b) is int and 0 <= b < codes)):
        return None
    return written._Template(body["name"], events, b, [])


def _ints(values: Any, n: int) -> bool:
    return len(values) == n and all(type(v) is int for v in values)

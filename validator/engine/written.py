"""A unit's writing (``backend.Backend.write``) kept per process and played again for another program.

The variants of a base ruleset write most base definitions alike: in a cold check, 423 of the 483
units written gave a source text already written for another program (452 are now played again,
and a cold check takes 6% fewer instructions, ``bench.startup --instructions``). Writing is a pure
function of what the writer reads, so a unit is written once per key of all it reads (``key``):

- the unit as ``bind.unit_key`` names it (its declaration by identity: variants share their base's
  declaration objects; its name, where it is, kind, arity and the analysis's flags), its number in
  the program and whether its memo is left out (``memos.Memos.memo_free``, which depends on its
  callers), a table's cells;
- what each global name and member it writes is bound to (``bind.bound_globals``: a definition by
  its declaration, a member or built-in by its name, data by its kind and, a number or text, its
  value: the writer folds the type tests of a constant), and the same flags of every definition it
  names, and the sound kind of its value (``facts``: it depends on what that definition names in
  turn); a definition written at its call (``Backend.inlines``) is read as the unit is, in full;
- the sound kinds of the unit's nodes and parameters (``facts.Facts.key``: they depend on the
  program, its data and the calls of its definitions, which differ between programs sharing a
  declaration: two maps may hold values of other kinds);
- whether the program can roll dice (``Backend.dice``: what is forced).

What the writing did to the backend is recorded as it happens (``Backend.log``): the constants it
named, the units' functions it named and the code it compiled, in order. Played again for another
program, the same calls are made there in the same order, each with that program's object where the
recorded one was the program's own (a unit, a function value, a built-in used as a value, imported
data, a table the function keeps, a function compiled by the same writing); anything else it named
is a value of the declarations (a literal, a location, a node) and is named as it is. The names the
other program gives them (``_u7``, ``_k7_3``: by the unit's number there) replace the recorded
ones in the recorded texts (the same names, but where a constant's name was taken: ``Backend.const``; a
text so renamed is compiled). A writing that named an object of no kind listed here, or whose text holds a name
that no recorded call gave, is not kept (the unit is written each time, as before). Entries hold
what their keys name by ``id``; writings are made one at a time in a process (``LOCK``).

A writing is also kept across processes for its own program, with the code of its texts, in one entry
per program (``codecache.writing``): a fresh process running a program an earlier one ran plays each
unit's writing from there, before looking here.
"""

from __future__ import annotations

import re
import threading
import types
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable

from ..core.diagnostics import Span
from ..lang import ast as A
from ..lang.bind import DataRef, UnitRef, bound_globals, place, unit_key
from ..lang.program import DEFS, Unit
from ..lib.builtins import DiceSpec
from . import codecache  # (it imports this module: its functions are read at a call)
from . import reference as R, shares

if TYPE_CHECKING:
    from .backend import Backend

_SCALARS = (str, int, bool, type(None), Fraction, float)
# a unit's function (``_u7``), a constant of a writing (``_k7_3``: its unit's number, then its own) or one
# named outside a writing, or past a name already taken (``_k12``)
_NAME = re.compile(r"(?<![\w'])_(?:k[0-9]+_[0-9]+|[ku][0-9]+)")  # (a text literal is quoted: a quote before it)
_NAME_AT = re.compile(r"_(?:k[0-9]+_[0-9]+|[ku][0-9]+)")  # (``_names``: a literal first character, which ``re`` looks for fast)
MAX_KEPT = 4096
_KEPT: dict[Any, "_Template"] = {}
# one writing at a time in the process (a writing records into its backend's log, and a backend's units
# may be written from several threads), and none while a program's kinds are solved (``facts.Facts.solve``,
# ``codecache.solve``: a writing reads them)
LOCK = threading.RLock()


class _Template:
    __slots__ = ("name", "events", "body", "holds")

    def __init__(self, name: str, events: list[tuple[Any, ...]], body: int | None, holds: list[Any]):
        self.name, self.events, self.body, self.holds = name, events, body, holds


def write(backend: "Backend", unit: Unit, name: str, write_unit: Callable[[Unit, str], Callable[..., Any]]) -> Callable[..., Any]:
    """``write_unit(unit, name)``'s function, written by it or played again from a writing of the
    same key for another program."""
    with LOCK:
        if backend.shown is not None:  # (``source_of``: the texts are shown under the unit's own name)
            return write_unit(unit, name)
        found = codecache.writing(backend, unit)  # (kept by a process that ran this very program)
        if found is not None:
            return _replay(backend, unit, name, found)
        holds: list[Any] = []
        units: list[Unit] = []
        k = key(backend, unit, holds, units)
        found = _KEPT.get(k)
        if found is not None:  # (another program's writing, which this program's next process will find)
            codecache.keep_writing(backend, unit, found, units)
            return _replay(backend, unit, name, found)
        log: list[tuple[Any, ...]] = []
        backend.log = log
        try:
            fn = write_unit(unit, name)
        finally:
            backend.log = None
        made = _template(backend, unit, name, log, fn, holds, units)
        if made is not None:
            _keep(k, made)
            codecache.keep_writing(backend, unit, made, units)
        return fn


def _keep(k: tuple[Any, ...], t: "_Template") -> None:
    if len(_KEPT) >= MAX_KEPT:
        _KEPT.clear()
    _KEPT[k] = t


def key(backend: "Backend", unit: Unit, holds: list[Any], units: list[Unit]) -> tuple[Any, ...]:
    """All the writer reads to write ``unit`` (the module's docstring), as a hashable key; ``holds``
    gets the objects it names by ``id``, ``units`` the unit and the definitions written at their
    calls in its function."""
    program = backend.program
    entry = program.entry.key

    def data(v: Any) -> Any:
        return (type(v), v) if type(v) in _SCALARS else type(v)

    known = backend.summaries

    def flags(u: Unit) -> tuple[Any, ...]:
        holds.append(u.decl)
        found = known.get(u.index)
        if found is None:
            found = known[u.index] = (unit_key(u, entry), u.index, u.kind in DEFS and backend.memos.memo_free(u),
                                      backend.facts.result(u), shares.shared(backend, u))
        return found

    parts: list[Any] = [backend.dice]
    todo, seen = [unit], {id(unit)}
    while todo:  # the unit, and each definition written at its call (read in full)
        u = todo.pop()
        units.append(u)
        named = {id(r.unit): r.unit for r in u.bound.values() if isinstance(r, UnitRef)}
        if u.cells:
            holds.append(u.cells)
        parts.append((flags(u), tuple((k, id(c)) for k, c in u.cells.items()), bound_globals(u, entry, holds, data),
                      frozenset(flags(n) for n in named.values()), backend.facts.key(u)))
        for i, n in named.items():
            if i not in seen and backend.inlines(n):
                seen.add(i)
                todo.append(n)
    return tuple(parts)


def _template(backend: "Backend", unit: Unit, name: str, log: list[tuple[Any, ...]], fn: Any,
              holds: list[Any], units: list[Unit]) -> _Template | None:
    """The writing ``log`` of ``units`` (``key``'s) as calls to make again for another program, or
    None when one of them named what no recipe here makes again."""
    program = backend.program
    entry = program.entry.key

    def where(u: Unit) -> tuple[str, str]:
        return (place(u.ns, entry), u.name)

    # imported data the writing may name (that the units written name), by identity: where it is bound
    data = {id(r.value): (*where(u), node) for u in units for node, r in u.bound.items() if isinstance(r, DataRef)}
    codes: dict[int, int] = {}  # the functions compiled by the writing, by identity: their number
    events: list[tuple[Any, ...]] = []
    given = {name}
    for ev in log:  # (a name met again is the same value again: its first call alone is made again)
        if ev[0] == "code":
            _, cname, source, made = ev
            if not cname.startswith(name) or any(n not in given for n in _names(source)):
                return None
            codes[id(made)] = len(codes)
            events.append(("code", cname, source))
            continue
        _, value, vname = ev
        if vname in given:
            continue
        given.add(vname)
        if ev[0] == "unit":
            events.append(("unit", vname, where(value)))
            continue
        recipe = _recipe(value, where, data, codes)
        if recipe is None:
            return None
        events.append(("const", vname, recipe))
    if not events or events[-1][0] != "code" or codes.get(id(fn)) != len(codes) - 1:
        return None
    body = None
    if unit.kind == "decision":
        body = codes.get(id(backend.bodies.get((unit.ns, unit.name))))
        if body is None:
            return None
    return _Template(name, events, body, holds)


def _recipe(value: Any, where: Callable[[Unit], tuple[str, str]], data: dict[int, tuple[Any, ...]],
            codes: dict[int, int]) -> tuple[Any, ...] | None:
    """How to make again, for another program, a constant a writing named."""
    t = type(value)
    if id(value) in data:
        return ("data", data[id(value)])
    if id(value) in codes:
        return ("code", codes[id(value)])
    if t is Unit:
        return ("unit", where(value))
    if t is R.UnitFunction:
        return ("unit function", where(value.unit))
    if t is R.BuiltinFunction:
        return ("builtin function", value.builtin, value.span)
    if t is dict:  # a table the function keeps (new), or a table's cells (functions compiled for them, or absent)
        if not value:
            return ("table",)
        cells = [(k, ("code", codes[id(c)]) if id(c) in codes else ("same", c)) for k, c in value.items()]
        if all(_same(k) and (how[0] == "code" or type(how[1]) is types.FunctionType and _same(how[1]))
               for k, how in cells):
            return ("cells", cells)
        return None
    return ("same", value) if _same(value) else None


def _same(value: Any) -> bool:
    """Whether ``value`` is a value of the declarations, the same for every program: a literal, a
    location, a node, a dice's kind, a function of ruleval's own, or a list or tuple of those."""
    t = type(value)
    if t in _SCALARS or t is Span or t is DiceSpec or isinstance(value, A.Node):
        return True
    if t in (list, tuple):
        return all(map(_same, value))
    if t is types.FunctionType:
        return (value.__module__ or "").startswith("validator.")
    return False


def _names(text: str) -> list[str]:
    """``_NAME.findall(text)``, found five times faster: each ``_NAME_AT`` match not right after a word
    character or a quote (what ``_NAME``'s look-behind refuses; a match is all word characters after
    its ``_``, so no refused match hides another)."""
    return [m.group() for m in _NAME_AT.finditer(text)
            if not ((i := m.start()) and ((c := text[i - 1]).isalnum() or c in "_'"))]


def _replay(backend: "Backend", unit: Unit, name: str, t: _Template) -> Callable[..., Any]:
    """The calls of a recorded writing made again for ``backend``'s program, with its objects and names."""
    program = backend.program
    entry = program.entry.key

    def unit_at(at: tuple[str, str]) -> Unit:
        return program.units[(at[0] or entry, at[1])]

    names = {t.name: name}

    def renamed(text: str) -> str:
        return _NAME.sub(lambda m: names[m.group()], text) if any(k != v for k, v in names.items()) else text

    made: list[Callable[..., Any]] = []
    for ev in t.events:
        if ev[0] == "code":
            text = renamed(ev[2])
            made.append(backend.compiled(name + ev[1][len(t.name):], text))
            continue
        if ev[0] == "unit":
            names[ev[1]] = backend.unit_name(unit_at(ev[2]))
            continue
        kind, *how = ev[2]
        if kind == "same":  # (a list made again, as each writing makes its own)
            value = list(how[0]) if type(how[0]) is list else how[0]
        elif kind == "data":
            value = unit_at(how[0][:2]).bound[how[0][2]].value  # type: ignore[union-attr]
        elif kind == "unit":
            value = unit_at(how[0])
        elif kind == "code":
            value = made[how[0]]
        elif kind == "unit function":
            value = R.UnitFunction(unit_at(how[0]), backend.interp)
        elif kind == "builtin function":
            value = R.BuiltinFunction(how[0], how[1], backend.interp)
        elif kind == "table":
            value = {}
        else:  # cells
            value = {k: made[c[1]] if c[0] == "code" else c[1] for k, c in how[0]}
        names[ev[1]] = backend.const(value)  # (the name a writing of the unit gives it: the same text)
    if t.body is not None:
        backend.bodies[(unit.ns, unit.name)] = made[t.body]
    return made[-1]

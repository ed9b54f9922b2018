"""What a fresh process would work out again for the backend, kept across processes (``core.blobcache``):

- **compiled code** (``compiled``): a fresh process writes the source of each definition it calls as
  the warm one did, but need not compile it again: the code compiled from a source text is found by a
  digest of that text (with ruleval's own code and the Python version, ``blobcache.name``), signed with
  the user's key. This is the one cache whose content is run: docs/security.md ("Caches") says why
  that is safe and what it does not cover. What is read back must be a code object compiled from a
  file of the name asked for, else it is ignored and the source compiled.
- **sound kinds** (``solve``): what ``facts.Facts.solve`` finds for a program (a walk of all its units
  until the kinds of the parameters settle, a fifth of the work of a fresh process playing the standard rules), found by a
  digest of all the program is made from (``_program_parts``), as JSON of node numbers and kinds, none
  of it run: read back, it must name this program's units and nodes, else it is ignored and the
  program solved.
"""

from __future__ import annotations

import json
import marshal
import types
from fractions import Fraction
from typing import TYPE_CHECKING, Any, Callable

from ..core import blobcache
from ..lang import ast as A
from ..lib.values import Map
from . import written
from .facts import NOTHING

if TYPE_CHECKING:
    from ..lang.program import Program
    from .facts import Facts

KIND = "code"
MAX_CODE_BYTES = 4_000_000


def compiled(source: str, filename: str, compile_text: Callable[[str, str], types.CodeType]) -> types.CodeType:
    """The code of ``source``: from the cache if a signed entry for this very text is there, else
    ``compile_text(source, filename)``, kept for the next process."""
    if not blobcache.in_use(KIND):
        return compile_text(source, filename)
    entry = blobcache.name(KIND, filename, source)
    kept = blobcache.load(KIND, entry, MAX_CODE_BYTES)
    if kept is not None:
        try:
            code = marshal.loads(kept)
        except (ValueError, EOFError, TypeError):
            code = None
        if isinstance(code, types.CodeType) and code.co_filename == filename:
            return code
    code = compile_text(source, filename)
    blobcache.store(KIND, entry, marshal.dumps(code))
    return code


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
    """``facts.solve(then)``: the kinds a process that solved the same program kept, if a signed entry
    for it is there (then ``then()`` as ``solve`` calls it), else solved and kept for the next process.

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
        entry = blobcache.name(KINDS, KINDS_FORMAT, *parts)
        kept = blobcache.load(KINDS, entry, MAX_KINDS_BYTES)
        if kept is not None:
            try:
                found = _read(facts.program, json.loads(kept))
            except (_Refused, ValueError, TypeError, IndexError, KeyError, RecursionError):
                found = None
            if found is not None:
                facts.adopt(*found, then)
                return
        facts.solve(then)
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
    if k is NOTHING:
        return -1
    t = type(k)
    if t is tuple:
        if k == NOTHING:
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
            return NOTHING
        if 0 <= v < len(_TYPES):
            return _TYPES[v]
        raise _Refused
    if t is list:
        return tuple([_decode(x) for x in v])
    if t is str or v is None:
        return v
    raise _Refused

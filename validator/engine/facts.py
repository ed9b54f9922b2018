"""Sound kinds: the Python type a node's value always has, in both engines, whatever the state, the
arguments and the other definitions hold. Unlike the type pass (``lang.types``), which trusts
annotations and inputs, a kind is claimed only where the language or the program fixes it: the rules
and the argument for each are in docs/architecture.md, "Sound kinds"; ``tests/test_facts.py`` holds
every claim to the values the reference computes.

Inside, a kind is *deep* (``Deep``): a Python type for a plain value, or ``("list", item)``,
``("set", item)``, ``("map", key, value)``, ``("rec", fields, rest)`` (a plain
``dict``, a record: the kinds of the fields it holds, or None where they are not all known, and the
join of all its values, ``rest``), ``("?", kind)`` (that kind or none); None where nothing is known
(of a whole value or a part) and ``NOTHING`` for no value at all (an empty list's items, a parameter
no call reaches). ``Facts.of`` gives the shallow kind, the Python type the writer folds its tests on.
"""

from __future__ import annotations

import heapq
from types import SimpleNamespace
from fractions import Fraction
from typing import Any, Callable

from ..lang import ast as A
from ..lang.kinds import DeclaredKinds, Unfit
from ..lang.bind import BuiltinRef, DataRef, Local, Member, ModuleRef, Scope, UnitRef, Walker
from ..lang.program import DEFS, Program, Unit, escaped
from ..lib.builtins import RESULTS
from ..lib.values import Map
from .state import ref_target, Unsupported, pointer_parts
from . import written

Kind = type
Deep = Any
NOTHING: Any = ("nothing",)  # the kind of no value (a join's unit)
_NONE = type(None)
_SCALARS = (int, bool, str, _NONE, Fraction, float)
# the nodes whose kind is their node's: literals, truth values
_FIXED: dict[type, Kind] = {A.Int: int, A.Str: str, A.Bool: bool, A.NoneLit: _NONE, A.Compare: bool, A.Not: bool,
                            A.BoolOp: bool}
_SHALLOW = {"list": list, "set": frozenset, "map": Map, "rec": dict}
_NUMBER_OPS = ("+", "-", "*", "//", "%")
PLAIN = (int, bool, str, type(None), Fraction)  # (never a die, never a collection)
DEPTH = 4  # the deepest a kind is kept (a part deeper is unknown): a recursion cannot grow one without end
MAX_FIELDS = 48  # a record (of data) with more fields is kept by the join of its values alone
ROUNDS = 16  # the most rounds of ``Facts.solve``: past them, no parameter has a kind


def shallow(k: Deep) -> Kind | None:
    """The Python type every value of kind ``k`` has, if one."""
    if type(k) is type:
        return k
    if type(k) is tuple:
        return _SHALLOW.get(k[0])
    return None


def join(a: Deep, b: Deep) -> Deep:
    """The least kind both ``a``'s and ``b``'s values have."""
    if a is NOTHING or a == b:
        return b
    if b is NOTHING:
        return a
    if a is None or b is None:
        return None
    if a is _NONE or b is _NONE:
        other = b if a is _NONE else a
        return other if type(other) is tuple and other[0] == "?" else ("?", other)
    if _maybe(a) or _maybe(b):
        inner = join(a[1] if _maybe(a) else a, b[1] if _maybe(b) else b)
        return None if inner is None else ("?", inner)
    if type(a) is not tuple or type(b) is not tuple:
        return None
    if a[0] != b[0]:  # (a record and a map, `d ?? {}`, kept as a dict of known keys and values made no turn faster)
        return None
    tag = a[0]
    if tag in ("list", "set"):
        return (tag, join(a[1], b[1]))
    if tag == "map":
        return (tag, join(a[1], b[1]), join(a[2], b[2]))
    fields = None  # ("rec": a field one side lacks reads none there)
    if a[1] is not None and b[1] is not None:
        fa, fb = dict(a[1]), dict(b[1])
        fields = tuple((f, join(fa.get(f, _NONE), fb.get(f, _NONE))) for f in sorted({*fa, *fb}))
    return ("rec", fields, join(a[2], b[2]))


def _maybe(k: Deep) -> bool:
    return type(k) is tuple and k[0] == "?"


def capped(k: Deep, depth: int = DEPTH) -> Deep:
    """``k``, its parts deeper than ``depth`` unknown."""
    if type(k) is not tuple or k is NOTHING:
        return k
    if depth <= 0:
        return None
    d = depth - 1
    tag = k[0]
    if tag == "?":
        inner = capped(k[1], depth)
        return None if inner is None else ("?", inner)
    if tag in ("list", "set"):
        return (tag, capped(k[1], d))
    if tag == "map":
        return (tag, capped(k[1], d), capped(k[2], d))
    return ("rec", None if k[1] is None else tuple((f, capped(x, d)) for f, x in k[1]), capped(k[2], d))


def of_value(v: Any, depth: int = DEPTH) -> Deep:
    """The kind of an imported value (data is fixed for the program's life, and no rule changes it)."""
    t = type(v)
    if t in _SCALARS:
        return t
    if depth <= 0:
        return None
    d = depth - 1
    if t is list:
        item = NOTHING
        for x in v:
            item = join(item, of_value(x, d))
            if item is None:
                break
        return ("list", item)
    if t is dict:
        rest = NOTHING
        kinds = {}
        for f, x in v.items():
            if type(f) is not str:
                return None
            kinds[f] = k = of_value(x, d)
            rest = join(rest, k)
        return ("rec", tuple(sorted(kinds.items())) if len(kinds) <= MAX_FIELDS else None, rest)
    return None


def field_kind(obj: Deep, name: str) -> Deep:
    """The kind of `obj.name` (a record's field, or none when it has none; a map's entry by the text)."""
    if _maybe(obj):  # (none has no fields: no value)
        obj = obj[1]
    if obj is NOTHING:
        return NOTHING
    if type(obj) is not tuple:
        return None
    if obj[0] == "rec":
        if obj[1] is not None:
            for f, k in obj[1]:
                if f == name:
                    return k
        return join(_NONE, obj[2])
    if obj[0] == "map":
        return join(_NONE, obj[2])
    return None


def index_kind(obj: Deep, key: Deep, key_node: Any) -> Deep:
    """The kind of `obj[key]`: an entry of a record or map (none when the key misses), an item of a
    list (an index that misses gives no value)."""
    if _maybe(obj):  # (indexing none: no value)
        obj = obj[1]
    if obj is NOTHING:
        return NOTHING
    if obj is str:
        return str
    if type(obj) is not tuple:
        return None
    if obj[0] == "rec":
        return field_kind(obj, key_node.value) if isinstance(key_node, A.Str) else join(_NONE, obj[2])
    if obj[0] == "map":
        return join(_NONE, obj[2])
    if obj[0] == "list":
        return obj[1]
    return None


def items_kind(seq: Deep, names: int) -> tuple[Deep, ...]:
    """The kinds of what a loop of ``names`` names over a collection of kind ``seq`` binds, per name
    (``reference.loop_items``: a set's items and a map's keys as the values they stand for)."""
    unknown = (None,) * names
    if _maybe(seq):  # (none is not walked: no item)
        seq = seq[1]
    if type(seq) is not tuple or seq is NOTHING:
        return unknown
    tag = seq[0]
    if names == 1 and tag in ("list", "set", "map"):
        return (seq[1],)
    if names == 1 and tag == "rec":
        return (str,)
    if names == 2 and tag == "map":
        return (seq[1], seq[2])
    if names == 2 and tag == "rec":
        return (str, seq[2])
    return unknown


def over(a: Deep, b: Deep) -> Deep:
    """The kind of a record holding ``b``'s fields over ``a``'s, both records (none given: an error, no value);
    None for any other: a field of both is either's (``b`` may lack it, reading none there)."""
    a, b = (k[1] if _maybe(k) else k for k in (a, b))
    if type(a) is not tuple or type(b) is not tuple or a[0] != "rec" or b[0] != "rec":
        return None
    fields = None
    if a[1] is not None and b[1] is not None:
        fa, fb = dict(a[1]), dict(b[1])
        fields = tuple((f, join(fa[f], fb[f]) if f in fa and f in fb else fa.get(f, fb.get(f))) for f in sorted({*fa, *fb}))
    return ("rec", fields, join(a[2], b[2]))


# what a built-in's result kind (``builtins.Builtin.kind``) is made of: a list of items of a kind, a join,
# what walking a collection of a kind gives (``items_kind``, as a loop: ``reference.iterate``), a map's or
# record's values, a record's fields over another's
BUILT = SimpleNamespace(list=lambda item: ("list", item), join=lambda a, b: join(a, b),
                        walked=lambda k: items_kind(k, 1)[0], values=lambda k: items_kind(k, 2)[1], over=over)


def schema_kind(root: Any, s: Any, depth: int = DEPTH, hops: int = 16) -> Deep:
    """The kind of every value of exact JSON types (``api``: a state that marshals, or that the fast
    check took) that the JSON Schema ``s`` (a part of ``root``) accepts: each keyword only narrows what
    a schema accepts, so the kind one keyword gives is sound whatever the others say. A local `$ref`
    alone is followed (draft 7 ignores its siblings); a text, integer (a state's decimals are read
    first: 2.0 is 2), truth value, none, a list of items of one schema (no `prefixItems`), a record
    whose keys are texts (`additionalProperties: false` or `propertyNames` of type string), an enum
    or const of texts, truth values and none; None for anything else."""
    if s is False:
        return NOTHING
    if not isinstance(s, dict) or depth < 0 or hops < 0:
        return None
    if "$ref" in s:
        ref = s["$ref"]
        try:
            return schema_kind(root, ref_target(root, ref), depth, hops - 1) if _local(ref) else None
        except Unsupported:
            return None
    values = s["enum"] if isinstance(s.get("enum"), list) else [s["const"]] if "const" in s else None
    if values and all(v is None or type(v) in (str, bool) for v in values):
        found = NOTHING
        for v in values:
            found = join(found, type(v))
        return found
    branches = s.get("anyOf", s.get("oneOf"))
    if isinstance(branches, list) and branches:
        found = NOTHING
        for x in branches:
            found = join(found, schema_kind(root, x, depth, hops))
        if found is not None:
            return found
    named = s.get("type")
    found = NOTHING
    for t in [named] if isinstance(named, str) else named if isinstance(named, list) else [None]:
        k = _JSON_KINDS.get(t) if isinstance(t, str) else None
        if t == "array" and "prefixItems" not in s and isinstance(s.get("items", True), (dict, bool)):
            k = ("list", schema_kind(root, s.get("items", True), depth - 1, hops))
        elif t == "object":
            k = _object_kind(root, s, depth - 1, hops)
        if k is None:
            return None
        found = join(found, k)
    return found


def _object_kind(root: Any, s: dict[str, Any], depth: int, hops: int) -> Deep:
    props, extra = s.get("properties", {}), s.get("additionalProperties", True)
    closed = extra is False and "patternProperties" not in s
    if not isinstance(props, dict) or not (closed or (s.get("propertyNames") or {}).get("type") == "string"):
        return None  # (a key of another type is not refused)
    need = s.get("required", [])
    need = set(need) if isinstance(need, list) else set()
    fields = {f: schema_kind(root, x, depth, hops) for f, x in props.items()}
    rest = NOTHING
    for k in fields.values():
        rest = join(rest, k)
    if not closed:
        rest = join(rest, None if "patternProperties" in s else schema_kind(root, extra, depth, hops))
    shape = tuple(sorted((f, k if f in need else join(_NONE, k)) for f, k in fields.items()))
    return ("rec", shape if closed and len(shape) <= MAX_FIELDS else None, rest)


def schema_at(root: Any, s: Any, parts: tuple[str, ...], hops: int = 16) -> tuple[Any, bool]:
    """The part of the schema ``s`` (a part of ``root``) that every value a pointer (``parts``) reaches in a
    state it accepts satisfies, and whether the pointer may reach nothing (``state.resolve_pointer``: an
    object's key, a list's index): None where no one part says it, False (the schema no value satisfies)
    where nothing can be there. A local `$ref` alone is followed, as ``schema_kind`` follows it."""
    if not parts:
        return s, False
    if not isinstance(s, dict) or hops < 0:
        return None, True
    if "$ref" in s:
        try:
            ref = s["$ref"]
            return schema_at(root, ref_target(root, ref), parts, hops - 1) if _local(ref) else (None, True)
        except Unsupported:
            return None, True
    part, named = parts[0], s.get("type")
    if named == "array":
        if not part.isdigit():
            return False, True
        return (None if "prefixItems" in s else schema_at(root, s.get("items", True), parts[1:], hops)[0]), True
    if named != "object":
        return None, True
    props = s.get("properties", {})
    if isinstance(props, dict) and part in props and "patternProperties" not in s:
        at, absent = schema_at(root, props[part], parts[1:], hops)
        need = s.get("required", [])
        return at, absent or not (isinstance(need, list) and part in need)
    if s.get("additionalProperties", True) is False and "patternProperties" not in s:
        return False, True
    return None, True


def _inner_id(s: Any, top: bool = False) -> bool:
    """Whether a schema holds an `$id` below its root."""
    if isinstance(s, list):
        return any(_inner_id(x) for x in s)
    return isinstance(s, dict) and (not top and "$id" in s or any(_inner_id(x) for x in s.values()))


def _local(ref: Any) -> bool:
    """Whether a `$ref` is a JSON pointer into its own schema (``state.ref_target``)."""
    return isinstance(ref, str) and (ref == "#" or ref.startswith("#/"))


def schema_proves(root: Any, s: Any, t: A.TypeRef, kinds: DeclaredKinds, hops: int = 24) -> bool:
    """Whether every value the schema ``s`` (a part of ``root``, which holds no inner `$id`) accepts fits
    the type ``t`` (``kinds``): then a state that passed the schema needs no check of ``t`` there
    (``backend``'s inputs). Sound, not complete: each keyword used only narrows what ``s`` accepts, so
    one that proves it is enough (a `$ref` beside others, one of `allOf`; every one of `anyOf`, `oneOf`,
    `type`'s list); what is not understood proves nothing."""
    if t.name == "any" and not t.args:
        return True
    if s is False:
        return True
    if not isinstance(s, dict) or hops < 0:
        return False
    ref = s.get("$ref")
    if ref is not None and _local(ref):
        try:
            if schema_proves(root, ref_target(root, ref), t, kinds, hops - 1):
                return True
        except Unsupported:
            pass
    for key in ("anyOf", "oneOf"):
        alts = s.get(key)
        if isinstance(alts, list) and alts and all(schema_proves(root, a, t, kinds, hops - 1) for a in alts):
            return True
    subs = s.get("allOf")
    if isinstance(subs, list) and any(schema_proves(root, a, t, kinds, hops - 1) for a in subs):
        return True
    members = s.get("enum")
    if isinstance(members, list) and all(_fits(kinds, m, t) for m in members):
        return True
    if "const" in s and _fits(kinds, s["const"], t):
        return True
    named = s.get("type")
    names = named if isinstance(named, list) else [named] if isinstance(named, str) else None
    return names is not None and len(names) > 0 and all(_type_proves(root, s, n, t, kinds, hops) for n in names)


def _fits(kinds: DeclaredKinds, v: Any, t: A.TypeRef) -> bool:
    try:
        kinds.fit(v, t)
    except Unfit:
        return False
    return True


# the scalar types every value of a JSON type fits (``kinds.SCALARS``)
_SCALAR_PROOFS = {"string": ("str",), "integer": ("int", "number"), "number": ("number",), "boolean": ("bool",)}


def _type_proves(root: Any, s: dict[str, Any], named: str, t: A.TypeRef, kinds: DeclaredKinds, hops: int) -> bool:
    """Whether every value of JSON's type ``named`` that the schema ``s`` accepts fits ``t``."""
    if named == "null":
        return t.optional or (t.name == "none" and not t.args)
    name, args = t.name, t.args
    if named in _SCALAR_PROOFS:  # (a state's numbers are read exactly first: 2.0 is 2, 0.5 is 1/2; true no number)
        return not args and name in _SCALAR_PROOFS[named]
    if named == "array":
        if name not in ("list", "set") or len(args) != 1 or "prefixItems" in s:
            return False
        return schema_proves(root, s.get("items", True), args[0], kinds, hops - 1)
    if named != "object":
        return False
    props = s.get("properties", {})
    patterns = s.get("patternProperties", {})
    other = s.get("additionalProperties", True)
    if not isinstance(props, dict) or not isinstance(patterns, dict):
        return False
    if name == "map" and len(args) == 2:  # (a key is a text: `K` a text, or what `propertyNames` proves)
        key = args[0]
        keys = (not key.args and key.name in ("str", "any")) or schema_proves(root, s.get("propertyNames", True), key,
                                                                                kinds, hops - 1)
        return keys and all(schema_proves(root, x, args[1], kinds, hops - 1)
                            for x in (other, *props.values(), *patterns.values()))
    decl = kinds.defs.get(name) if not args else None
    if not isinstance(decl, A.RecordDecl):
        return False
    need = s.get("required", [])
    for f in decl.fields:
        if not f.optional and not (isinstance(need, list) and f.name in need):
            return False
        if f.name not in props and patterns:
            return False
        if not schema_proves(root, props.get(f.name, other), f.type, kinds, hops - 1):
            return False
    return True


_JSON_KINDS: dict[str, Deep] = {"string": str, "integer": int, "boolean": bool, "null": _NONE}


class Facts:
    """The sound kinds of a program's nodes, per unit, made at the first need (after ``solve``: none
    before, which a check that only runs the data check never asks for). With ``typed``, the kinds of
    the inputs are those the ruleset's state schema gives (``input_kind``): only for runs on a state
    that passed it (``api``)."""

    def __init__(self, program: Program, typed: bool = False):
        self.program = program
        self.typed = typed
        self.inputs: dict[int, Deep] = {}  # by input unit number: its kind (``input_kind``)
        self.deep: dict[int, dict[int, Deep]] = {}  # by unit number: the deep kinds of its nodes, by identity
        self.shallow: dict[int, dict[int, Kind]] = {}  # by unit number: the kinds ``of`` gives
        self.busy: set[int] = set()
        self.data: dict[int, Deep] = {}  # imported values' kinds, by identity
        # by a parameter's identity (of a `def` only the program's calls run): its kind (none known until
        # ``solve``, which a run asks for: a check that only runs the data check pays no walk of the program)
        self.params: dict[int, Deep] = {}
        self.solved = False
        # what names the program's entries across processes (``codecache.solve`` sets it), or None
        self.digest: str | None = None
        # (``codecache.solve``) the kinds a signed entry may hold, read and checked at the first need of a
        # kind (``_settle``): a run that plays kept writings alone reads none; None once settled
        self.pending: Callable[[], None] | None = None
        self.calls: dict[int, dict[int, list[Deep]]] = {}  # (while solving) by unit: the kinds its calls give
        self.solving = False

    def of(self, unit: Unit) -> dict[int, Kind]:
        """The Python type of the value of each node of ``unit`` that has one."""
        if not self.known():
            return {}
        found = self.shallow.get(unit.index)
        if found is None:
            found = self.shallow[unit.index] = {n: s for n, k in self.deep_of(unit).items()
                                                if (s := shallow(k)) is not None}
        return found

    def key(self, unit: Unit) -> tuple[Any, ...]:
        """All the kinds a writing of ``unit`` may read (``written.key``): its nodes' and its parameters'
        (a node by its identity: the declaration, shared by the programs, holds it)."""
        if not self.solved:
            return ()
        return (tuple(sorted((n, k.__name__) for n, k in self.of(unit).items())),
                tuple(getattr(self.param(p), "__name__", None) for p in unit.params))

    def param(self, p: A.Param) -> Kind | None:
        """The Python type of every value a parameter of a `def` is given, if one (once solved)."""
        return shallow(self.params.get(id(p))) if self.known() else None

    def deep_of(self, unit: Unit) -> dict[int, Deep]:
        found = self.deep.get(unit.index)
        if found is None:
            self.busy.add(unit.index)
            try:
                walk = _Kinds(self, unit)
                walk.walk_unit(unit)
            finally:
                self.busy.discard(unit.index)
            found = self.deep[unit.index] = walk.kinds
            if self.solving:
                self.calls[unit.index] = walk.calls
        return found

    def result(self, unit: Unit) -> Kind | None:
        """The Python type of every value of a `def`, `const` or input ``unit`` (a writing's key reads it)."""
        return shallow(self.result_deep(unit)) if self.known() else None

    def result_deep(self, unit: Unit) -> Deep:
        """The kind of every value of a `def` or `const` (its body's); none for one on a cycle of calls being
        looked at (its kind would depend on itself)."""
        if unit.kind == "input":
            return self.input_kind(unit)
        if unit.kind not in (*DEFS, "const") or unit.body is None or unit.index in self.busy:
            return None
        return self.deep_of(unit).get(id(unit.body))

    def input_kind(self, unit: Unit) -> Deep:
        """The kind of an input's value in a run on a state its ruleset's schema accepts (``typed``): what
        the schema gives at its pointer, or its default's (where the state may lack it); None for an
        input whose declared type makes sets or maps (``reference.bind_inputs`` reads it so)."""
        schema = self.program.entry.schema
        if not self.typed or schema is None or unit.index in self.busy:
            return None
        found = self.inputs.get(unit.index, NOTHING)
        if found is NOTHING:  # (a `$ref` under another `$id` is read in that resource, not from the root)
            kinds = self.program.loaded.namespaces[unit.ns].kinds
            at, absent = (None, True) if unit.ret is not None and kinds.converts(unit.ret) or \
                _inner_id(schema, True) else schema_at(schema, schema, tuple(pointer_parts(unit.pointer)))
            found = None if at is None else schema_kind(schema, at)
            if found is not None and absent and unit.body is not None:
                found = join(found, self.deep_of(unit).get(id(unit.body)))
            self.inputs[unit.index] = found = capped(found)
        return found

    def input_proven(self, unit: Unit) -> bool:
        """Whether a state that passed the ruleset's schema holds the input's value of its declared type
        (``schema_proves`` at its pointer; ``typed`` runs only): then its walk only makes the sets and maps
        the type declares (``kinds.DeclaredKinds.fitter``)."""
        schema = self.program.entry.schema
        if unit.ret is None or not self.typed or schema is None or _inner_id(schema, True):
            return False
        at = schema_at(schema, schema, tuple(pointer_parts(unit.pointer)))[0]
        return at is not None and schema_proves(schema, at, unit.ret, self.program.loaded.namespaces[unit.ns].kinds)

    def value(self, v: Any) -> Deep:
        found = self.data.get(id(v), NOTHING)
        if found is NOTHING:
            found = self.data[id(v)] = of_value(v)
        return found

    def solve(self, then: Callable[[], None] | None = None) -> None:
        """The kinds of the parameters of each `def` run only by the program's own calls: the join of the
        kinds of its calls' arguments, at a fixed point of walks (docs/architecture.md, "Sound kinds");
        none past ``ROUNDS`` walks of each unit. Before it no node has a kind (``of``; the backend writes
        again, ``then``, the units written before it, under the same lock)."""
        with written.LOCK:  # (a unit is written under it: none is written while the kinds change)
            if not self.solved:
                self.solved_here()
                self.solved = True
                if then is not None:
                    then()

    def adopt(self, params: dict[int, Deep], deep: dict[int, dict[int, Deep]], inputs: dict[int, Deep]) -> None:
        """What ``solve`` would find, found by another process (``codecache._settle``, under the same lock)."""
        self.params, self.deep, self.inputs, self.shallow = params, deep, inputs, {}

    def defer(self, settle: Callable[[], None], then: Callable[[], None]) -> None:
        """The kinds known from now on, found by ``settle`` at their first need (``codecache.solve``, under
        the same lock): by then either adopted from an entry checked whole, or solved here."""
        self.pending = settle
        self.solved = True
        then()

    def known(self) -> bool:
        """Whether the kinds are known (``solve``), those deferred (``defer``) found first: the one gate of
        the readers from outside (``of``, ``param``, ``result``); the walks they start need none."""
        if self.pending is not None:
            self._settle()
        return self.solved

    def _settle(self) -> None:
        with written.LOCK:  # (another thread that needs a kind meanwhile waits here for them)
            settle = self.pending
            if settle is None or settle is _settling:  # (``_settling``: asked by the solving itself)
                return
            self.pending = _settling
            try:
                settle()
            except BaseException:
                self.pending = settle  # (asked again at the next need, as an unfinished ``solve``)
                raise
            self.pending = None

    def solved_here(self) -> None:
        """``solve``'s walk, also called for a program whose kinds were deferred (``defer``) and found in no
        entry."""
        program = self.program
        for u in program.units.values():  # (knowing no parameter's kind: they hold whatever the solving finds)
            if u.kind == "input":
                self.input_kind(u)
        gone = {u.index for u in escaped(program)}
        eligible = {u.index: u for u in program.units.values() if u.kind in DEFS and u.arity and u.index not in gone}
        order = _callees_first(program)
        at = {u.index: i for i, u in enumerate(order)}
        readers: dict[int, list[int]] = {}
        for k, named in program.refs.items():
            for n in named:
                if n in program.units:
                    readers.setdefault(program.units[n].index, []).append(program.units[k].index)
        units = {u.index: u for u in order}
        self.params = {id(p): None for u in eligible.values() for p in u.params}
        self.solving, self.calls, self.deep = True, {}, {}
        callers: dict[int, set[int]] = {}  # by unit: the units whose code calls it

        def given(i: int) -> bool:
            """Whether the kinds of ``i``'s parameters (the join of its calls' arguments) changed."""
            kinds: list[Deep] = [NOTHING] * len(eligible[i].params)
            for c in callers.get(i, ()):
                got = self.calls[c].get(i)
                if got is not None:
                    kinds = [join(a, b) for a, b in zip(kinds, got)]
            changed = False
            for p, k in zip(eligible[i].params, kinds):
                k = capped(k)
                if self.params[id(p)] != k:  # type: ignore[index]
                    self.params[id(p)] = k  # type: ignore[index]
                    changed = True
            return changed

        queue: list[tuple[int, int]] = []  # (callers first: a parameter's kind comes down from its calls)
        queued: set[int] = set()

        def push(i: int) -> None:
            if i not in queued:
                queued.add(i)
                heapq.heappush(queue, (-at[i], i))

        left = ROUNDS * len(order)
        try:
            for unit in order:
                self.deep_of(unit)
            for c, calls in self.calls.items():
                for callee in calls:
                    callers.setdefault(callee, set()).add(c)
            for i in eligible:
                if given(i):
                    push(i)
            while queue:
                _, i = heapq.heappop(queue)
                queued.discard(i)
                left -= 1
                if left < 0:
                    raise _Unsolved
                unit = units[i]
                before, calls = self.deep[i].get(id(unit.body)), self.calls[i]
                del self.deep[i]
                after = self.deep_of(unit).get(id(unit.body))
                if after != before:
                    for r in readers.get(i, ()):
                        push(r)
                for callee in {*calls, *self.calls[i]}:
                    callers.setdefault(callee, set()).add(i)
                    if callee in eligible and given(callee):
                        push(callee)
        except _Unsolved:
            self.params, self.deep = {}, {}
            for unit in order:
                self.deep_of(unit)
        finally:
            self.solving, self.calls = False, {}
        self.shallow = {}


def _settling() -> None:
    """``Facts.pending`` while its kinds are being read or solved."""


class _Unsolved(Exception):
    pass


def _callees_first(program: Program) -> list[Unit]:
    """The program's units, each after those it names (but on a cycle): a walk then finds the kinds of
    the definitions it calls made (and nests no walk deeper than a cycle)."""
    units, refs = program.units, program.refs
    out: list[Unit] = []
    seen: set[Any] = set()
    for root in units:
        if root in seen:
            continue
        seen.add(root)
        work = [(root, iter(sorted(refs.get(root, ()))))]
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                out.append(units[node])
            elif child not in seen and child in units:
                seen.add(child)
                work.append((child, iter(sorted(refs.get(child, ())))))
    return out


class _Kinds(Walker):
    """Every node's kind, by a walk of the unit (its parts before it)."""

    def __init__(self, facts: Facts, unit: Unit):
        self.facts, self.bound = facts, unit.bound
        self.kinds: dict[int, Deep] = {}
        self.locals: dict[tuple[int, str], Deep] = {}  # by binder and name: a `let`'s, a loop's item's
        self.own = {id(p) for p in unit.params}  # (a lambda's parameters are not the unit's)
        self.calls: dict[int, list[Deep]] = {}  # by unit number: the join of the kinds its calls here give
        self.env: Scope = {}

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        if isinstance(binder, (A.Let, A.LetStmt)):
            self.locals[(id(binder), names[0])] = self.kinds.get(id(binder.value))
        elif isinstance(binder, (A.CompFor, A.For)):
            for n, k in zip(names, items_kind(self.kinds.get(id(binder.iter)), len(names))):
                self.locals[(id(binder), n)] = k
        elif isinstance(binder, A.Param) and id(binder) in self.own:
            assert self.facts.params is not None
            self.locals[(id(binder), names[0])] = self.facts.params.get(id(binder))
        return super().bind(env, binder, names)

    def expr(self, e: Any, env: Scope) -> None:
        Walker.expr(self, e, env)
        self.env = env
        t = type(e)
        if t is A.Let:
            k = self.kinds.get(id(e.body))
        else:
            k = _FIXED.get(t)
            if k is None:
                how = _RULES.get(t)
                k = None if how is None else how(self, e)
        if k is not None:
            self.kinds[id(e)] = k

    def part(self, e: Any) -> Deep:
        return self.kinds.get(id(e))

    def joined(self, items: Any) -> Deep:
        found = NOTHING
        for i in items:
            found = join(found, self.part(i))
        return found

    def k_ListLit(self, e: A.ListLit) -> Deep:
        return ("list", self.joined(e.items))

    def k_SetLit(self, e: A.SetLit) -> Deep:
        return ("set", self.joined(e.items))

    def k_TupleLit(self, e: A.TupleLit) -> Deep:
        return tuple  # (its items' kinds are not kept: kept, they made no turn faster)

    def k_MapLit(self, e: A.MapLit) -> Deep:
        return ("map", self.joined(k for k, _ in e.items), self.joined(v for _, v in e.items))

    def k_RecordLit(self, e: A.RecordLit) -> Deep:
        fields = {f: self.part(v) for f, v in e.items}  # (a label written twice: the names pass refuses it)
        return ("rec", tuple(sorted(fields.items())), self.joined(v for _, v in e.items))

    def k_Comp(self, e: A.Comp) -> Deep:
        if e.kind in ("list", "set"):
            return (e.kind, self.part(e.elem))
        if e.kind == "map":
            return ("map", self.part(e.key), self.part(e.elem))
        return None

    def k_Neg(self, e: A.Neg) -> Deep:
        return int if self.part(e.operand) is int else None

    def k_BinOp(self, e: A.BinOp) -> Deep:
        a = self.part(e.left)
        if e.op == "??":
            if a is _NONE:
                return self.part(e.right)
            if _maybe(a):
                return join(a[1], self.part(e.right))
            return a  # (a kind that is not none's, or nothing known: as it is)
        b = self.part(e.right)
        return a if a is int and b is int and e.op in _NUMBER_OPS or a is str and b is str and e.op == "+" else None

    def k_If(self, e: A.If) -> Deep:
        first = self.part(e.otherwise)
        for _, v in e.branches:
            first = join(first, self.part(v))
        return first

    def k_Name(self, e: A.Name) -> Deep:
        ref = self.bound.get(id(e))
        if isinstance(ref, Local):
            binder = self.env.get(e.id)
            return None if binder is None else self.locals.get((id(binder), e.id))
        return self.named(ref, None)

    def k_Field(self, e: A.Field) -> Deep:
        if isinstance(self.bound.get(id(e.obj)), ModuleRef):
            return self.named(self.bound.get(id(e)), None)
        return field_kind(self.part(e.obj), e.name)

    def k_Index(self, e: A.Index) -> Deep:
        if id(e) in self.bound or len(e.keys) != 1:  # (a table's lookup)
            return None
        return index_kind(self.part(e.obj), self.part(e.keys[0]), e.keys[0])

    def k_Call(self, e: A.Call) -> Deep:
        if not isinstance(e.func, A.Name):
            return None
        ref = self.bound.get(id(e.func))
        if isinstance(ref, UnitRef) and ref.unit.arity:
            n = ref.unit.arity
            given = [self.part(a) for a in e.args] if not e.kwargs and len(e.args) == n else [None] * n
            site = self.calls.get(ref.unit.index)
            self.calls[ref.unit.index] = given if site is None else [join(s, g) for s, g in zip(site, given)]
        if isinstance(ref, BuiltinRef) and not e.kwargs and ref.builtin.kind is not None:
            return ref.builtin.kind(BUILT, *(self.part(a) for a in e.args))
        return None if isinstance(ref, Local) else self.named(ref, len(e.args) + len(e.kwargs))

    def named(self, ref: Any, args: int | None) -> Deep:
        """What a global name gives (``args`` None), or its call."""
        if isinstance(ref, Member):
            return str if args is None else None
        if isinstance(ref, DataRef):
            return self.facts.value(ref.value) if args is None else None
        if isinstance(ref, BuiltinRef):
            return RESULTS.get(ref.builtin.name) if args is not None else None
        if isinstance(ref, UnitRef):
            u = ref.unit
            if u.kind == "input":
                return self.facts.input_kind(u) if args is None else None
            if (args is None) == (u.arity is None) and (args is None or args == u.arity) and \
                    (u.kind in DEFS or u.kind == "const" and args is None):
                return self.facts.result_deep(u)
        return None


_RULES: dict[type, Callable[[_Kinds, Any], Deep]] = {
    A.ListLit: _Kinds.k_ListLit, A.SetLit: _Kinds.k_SetLit, A.TupleLit: _Kinds.k_TupleLit, A.MapLit: _Kinds.k_MapLit,
    A.RecordLit: _Kinds.k_RecordLit, A.Comp: _Kinds.k_Comp, A.Neg: _Kinds.k_Neg, A.BinOp: _Kinds.k_BinOp,
    A.If: _Kinds.k_If, A.Name: _Kinds.k_Name, A.Field: _Kinds.k_Field, A.Index: _Kinds.k_Index,
    A.Call: _Kinds.k_Call}

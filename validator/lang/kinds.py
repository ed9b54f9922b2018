"""A value given from outside checked against its declared type and made the kinds that type says, in
one walk (docs/language.md, "Declarations" and "Records and maps"). What is read so: a query's
arguments given from outside (its parameters' types: ``engine.arguments``), a state's inputs
(``input x: T at "/p"``: ``reference.Interpreter.bind_inputs``) and a data import with a type
(``import "f.yaml" as d: T``: ``loader.read_data``).

Each value is read as JSON's values are (after ``jsontext.exact_numbers``): a scalar type takes the
values its entry of ``SCALARS`` tests for (``int`` a whole number, ``number`` any number, ``str`` a text, ``bool`` true or
false, ``none`` null); ``any`` (and an untyped declaration) anything; ``list[T]`` a list of ``T``;
``set[T]`` a list of ``T`` (JSON has no sets), made the set of its items; ``map[K, V]`` an object whose
keys are ``K`` and values ``V``, made a ``Map`` (every other object stays a record); ``T?`` null or a
``T``; an enum one of its members; a record an object holding each declared field (a field declared
``f?`` may be absent) with its type, other fields kept as given and not checked (records are
structural). ``dice`` and ``fn`` take no value from outside. A type the checker refused (an unknown
name: C001) runs nothing, so takes anything here.

A type's walk is compiled once (``DeclaredKinds.fitter``, by the type's identity: the declarations hold
them): a function that gives the value it is given, or a copy holding the sets and maps its type
declares, and raises ``Unfit`` at the first part that does not fit; none for a type that takes anything
as it is (nothing is walked). A list whose items need no making is not copied.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any, Callable

from . import ast as A
from ..core.jsontext import shown
from ..lib.values import Map, as_key

# what each scalar type takes of a value given from outside: its words in a message, and its test
# (a Python caller's subclass of a JSON type, a ``str`` subclass, is read as that type, as a state's is)
SCALARS: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "int": ("an integer", lambda v: type(v) is int or (type(v) is Fraction and v.denominator == 1)
            or (isinstance(v, int) and type(v) is not bool)),
    "number": ("a number", lambda v: type(v) is int or type(v) is Fraction  # (`0.5` read exactly: 1/2)
               or (isinstance(v, int) and type(v) is not bool)),
    "str": ("a text", lambda v: type(v) is str or isinstance(v, str)),
    "bool": ("true or false", lambda v: type(v) is bool),
    "none": ("null", lambda v: v is None),
}

Fit = Callable[[Any], Any]


class Unfit(Exception):
    """A value that does not fit its declared type: ``message``, and ``path``, the keys and indexes
    from the value given to the part at fault (collected as the walk unwinds: the walk of a value that
    fits pays nothing for them)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message
        self.parts: list[Any] = []

    @property
    def path(self) -> tuple[Any, ...]:
        return tuple(reversed(self.parts))

    def pointer(self) -> str:
        """``path`` as a JSON pointer (``/units/3/type``)."""
        return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in self.path)


class DeclaredKinds:
    """The walks of the types declared in a namespace (``defs``: its records and enums, a variant's own
    included), each compiled at its first use."""

    def __init__(self, defs: dict[str, A.Decl]):
        self.defs = defs
        # by the type's identity (held, so kept), and whether a schema proved the value fits (``fitter``)
        self._fits: dict[tuple[int, bool], tuple[A.TypeRef, Fit | None]] = {}
        self._records: dict[tuple[str, bool], list[Any]] = {}  # a record's compiled fields (filled after its walk is made)
        self._converts: dict[int, bool] = {}

    def fit(self, v: Any, t: A.TypeRef) -> Any:
        """``v`` as a value of ``t``; raises ``Unfit``."""
        f = self.fitter(t)
        return v if f is None else f(v)

    def fitter(self, t: A.TypeRef, proven: bool = False) -> Fit | None:
        """The walk of ``t`` (none: ``t`` takes anything as it is). With ``proven`` (a value its caller
        knows to fit ``t``: ``facts.schema_proves``), the walk that only makes the sets and maps ``t``
        declares, none where it declares none."""
        found = self._fits.get((id(t), proven))
        if found is None:
            found = self._fits[(id(t), proven)] = (t, self._compile(t, proven))
        return found[1]

    def converts(self, t: A.TypeRef) -> bool:
        """Whether a value that fits ``t`` may be given as another (a set or a map somewhere within it,
        named records' fields included): else its walk gives the very value it is given."""
        found = self._converts.get(id(t))
        if found is None:
            found = self._converts[id(t)] = self._makes(t, frozenset())
        return found

    def least(self, t: A.TypeRef, seen: frozenset[str] = frozenset()) -> Any:
        """A simplest JSON value that fits ``t`` (null where it may be, an empty list or object, 0, the
        first member of an enum, a record of its required fields): what a state holds for an input no
        rule reads (``errata.generator_state``). Null for a type no value fits (``dice``, ``fn``) or a
        record that must hold itself."""
        name = t.name
        if t.optional or name in ("any", "none", "dice", "fn"):
            return None
        if name in ("list", "set"):
            return []
        if name == "map":
            return {}
        if name in SCALARS:
            return {"int": 0, "number": 0, "str": "", "bool": False}.get(name)
        decl = self.defs.get(name)
        if isinstance(decl, A.EnumDecl):
            return decl.members[0] if decl.members else None
        if isinstance(decl, A.RecordDecl) and name not in seen:
            return {f.name: self.least(f.type, seen | {name}) for f in decl.fields if not f.optional}
        return None

    def _makes(self, t: A.TypeRef, seen: frozenset[str]) -> bool:
        if t.name in ("map", "set") and t.args:
            return True
        record = self.defs.get(t.name) if not t.args else None
        if isinstance(record, A.RecordDecl):
            return t.name not in seen and any(self._makes(f.type, seen | {t.name}) for f in record.fields)
        return any(self._makes(a, seen) for a in t.args)

    def _compile(self, t: A.TypeRef, proven: bool) -> Fit | None:
        if proven and not self.converts(t):
            return None
        inner = self._compile_plain(t, proven, " or null" if t.optional else "")
        if not t.optional or inner is None:
            return inner

        def optional(v: Any) -> Any:
            return v if v is None else inner(v)
        return optional

    def _compile_plain(self, t: A.TypeRef, proven: bool, or_null: str = "") -> Fit | None:
        """The walk of ``t``, its ``?`` aside (``_compile`` lets null through); ``or_null`` ends what its
        message says it expected, where null is accepted too."""
        name, args = t.name, t.args
        written = A.type_text(t)
        if name == "any" and not args:
            return None
        scalar = SCALARS.get(name) if not args else None
        if scalar is not None:
            words, ok = scalar
            said = f"`{written}` ({words}{or_null})"

            def fit_scalar(v: Any) -> Any:
                if ok(v):
                    return v
                raise Unfit(_expected(said, v))
            return fit_scalar
        if name in ("list", "set") and len(args) == 1:
            return (_list if name == "list" else _set)(f"`{written}` (a list{or_null})", self.fitter(args[0], proven))
        if name == "map" and len(args) == 2:
            return _map(f"`{written}` (an object{or_null})", self.fitter(args[0], proven), self.fitter(args[1], proven))
        decl = self.defs.get(name) if not args else None
        if isinstance(decl, A.EnumDecl):
            return _enum(name, decl.members, or_null)
        if isinstance(decl, A.RecordDecl):
            return self._record(name, decl, proven, or_null)
        if name in ("dice", "fn") and not args:
            def fit_none(v: Any) -> Any:
                raise Unfit(_expected(f"`{written}`, which no value given from outside is", v))
            return fit_none
        return None  # (a type the checker did not accept: C001 runs nothing, so never met)

    def _record(self, name: str, decl: A.RecordDecl, proven: bool, or_null: str = "") -> Fit:
        compiled = self._records.get((name, proven))
        if compiled is None:  # (its fields' walks are made after it is listed: a record may hold itself)
            compiled = self._records[(name, proven)] = [(), ()]
            required = () if proven else tuple(f.name for f in decl.fields if not f.optional)
            walked = [(f.name, self.fitter(f.type, proven)) for f in decl.fields]
            compiled[:] = [required, tuple((n, f) for n, f in walked if f is not None)]
        said = f"the record `{name}` (an object){or_null}"

        def fit_record(v: Any) -> Any:
            if type(v) is not dict and not isinstance(v, dict):
                raise Unfit(_expected(said, v))
            required, walked = compiled
            for n in required:
                if n not in v:
                    missing = [m for m in required if m not in v]
                    listed = ", ".join(f"`{m}`" for m in missing)
                    raise Unfit(f"the record `{name}` needs the field{'s' if len(missing) > 1 else ''} {listed}, "
                                f"missing from {shown(v)}")
            out = v
            for n, f in walked:
                if n in v:
                    x = v[n]
                    y = _part(f, x, n)
                    if y is not x:
                        if out is v:
                            out = dict(v)
                        out[n] = y
            return out
        return fit_record


def _part(f: Fit, x: Any, at: Any) -> Any:
    """``f(x)``, ``x`` the part ``at`` (a key or index) of the value walked: an ``Unfit`` names it on its way out."""
    try:
        return f(x)
    except Unfit as bad:
        bad.parts.append(at)
        raise


def _list(said: str, item: Fit | None) -> Fit:
    if item is None:
        def fit_list_of_any(v: Any) -> Any:
            if type(v) is not list and not isinstance(v, list):
                raise Unfit(_expected(said, v))
            return v
        return fit_list_of_any

    def fit_list(v: Any) -> Any:
        if type(v) is not list and not isinstance(v, list):
            raise Unfit(_expected(said, v))
        out = None
        for i, x in enumerate(v):
            y = _part(item, x, i)
            if y is not x:
                if out is None:
                    out = list(v)
                out[i] = y
        return v if out is None else out
    return fit_list


def _set(said: str, item: Fit | None) -> Fit:
    def fit_set(v: Any) -> Any:
        if type(v) is not list and not isinstance(v, list):
            raise Unfit(_expected(said, v))
        out = set()
        for i, x in enumerate(v):
            y = x if item is None else _part(item, x, i)
            try:
                out.add(as_key(y))
            except TypeError:  # (``KeyError_`` among them: a tuple holding a truth value)
                unheld = Unfit(_expected("an item a set can hold (a text, number, truth value or null)", y))
                unheld.parts.append(i)
                raise unheld from None
        return frozenset(out)
    return fit_set


def _map(said: str, key: Fit | None, value: Fit | None) -> Fit:
    def fit_map(v: Any) -> Any:
        if not isinstance(v, dict):
            raise Unfit(_expected(said, v))
        if key is None and value is None:
            return Map(v)
        out = Map()
        for k, x in v.items():
            if key is not None:
                _part(key, k, k)
            out[k] = x if value is None else _part(value, x, k)
        return out
    return fit_map


def _enum(name: str, members: Any, or_null: str = "") -> Fit:
    known = frozenset(members)
    said = f"a member of the enum `{name}` ({', '.join(members)}){or_null}"

    def fit_enum(v: Any) -> Any:
        if (type(v) is str or isinstance(v, str)) and v in known:
            return v
        raise Unfit(_expected(said, v))
    return fit_enum


def _expected(what: str, v: Any) -> str:
    # (a Python caller's tuple is the language's tuple, no list: JSON notation alone would show it as one)
    return f"expected {what}, got {'the tuple ' if type(v) is tuple else ''}{shown(v)}"

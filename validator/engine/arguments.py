"""A query's arguments given from outside (``Ruleset.evaluate``'s ``args``: `--arg`, a test case's
`args`, the playground's, an API caller's values) checked against the types its parameters declare,
at the query's entry and before anything runs, for both engines alike (docs/language.md, "Declarations";
docs/diagnostics.md, S008).

The checker trusts a parameter's annotation inside the ruleset; nothing else would hold it to a value
that comes from outside, so a wrong one was met later as an error placed in the ruleset (E001), or not
at all (a text ``"3"`` for ``n: int``: ``n == 3`` false, a wrong answer without warning). Each argument
is read as JSON's values are (after ``jsontext.exact_numbers``): ``int`` takes a whole number, ``str`` a
text, ``bool`` true or false, ``none`` null, ``any`` and an untyped parameter anything; ``list[T]`` a
list of ``T``; ``set[T]`` a list of ``T`` (JSON has no sets), made the set of its items; ``map[K, V]``
an object whose keys are ``K`` and values ``V``; ``T?`` null or a ``T``; an enum one of its members;
a record an object holding each declared field (a field declared ``f?`` may be absent) with its type,
other fields kept as given and not checked (records are structural: docs/language.md). ``dice`` and
``fn`` take no value from outside. A type the checker refused (C001) runs nothing, so is not met here.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from ..core.diagnostics import Diagnostic, Related, Span
from ..lang import ast as A
from ..lang.loader import Namespace
from ..lang.program import Program, Unit
from ..lib.values import as_key
from .schema_messages import shown

ARGS_NAME = "<args>"  # the file a diagnostic of an argument names (a caller may name its own: `--arg`)

_SCALARS = {"int": "an integer", "number": "a number", "str": "a text", "bool": "true or false", "none": "null"}


class _Mismatch(Exception):
    def __init__(self, path: tuple[Any, ...], message: str):
        self.path, self.message = path, message


def has_typed_params(unit: Unit) -> bool:
    """Whether any parameter of ``unit`` declares a type (else its arguments are taken as they are)."""
    return any(p.type is not None for p in unit.params)


def checked_args(program: Program, unit: Unit, args: list[Any], shown_as: str = ARGS_NAME) \
        -> tuple[list[Any], list[Diagnostic]]:
    """``args`` (as many as ``unit`` has parameters) as the query takes them, a list given for a
    ``set[T]`` made that set; and an S008 for each argument that does not fit its parameter's declared
    type, at its JSON pointer (``/0``, ``/1/units/2``) in the file ``shown_as``, the parameter's
    declaration as a note."""
    ns = program.loaded.namespaces[unit.ns]
    out, diags = [], []
    for i, (value, param) in enumerate(zip(args, unit.params)):
        if param.type is None:
            out.append(value)
            continue
        try:
            out.append(_fit(ns, value, param.type, (i,)))
        except _Mismatch as bad:
            declared = A.type_text(param.type)
            said = f"query `{unit.name}`, argument {i + 1}, `{param.name}` (declared `{declared}`): {bad.message}"
            diags.append(Diagnostic(
                "S008", said, Span(shown_as),
                pointer="".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in bad.path),
                related=(Related(param.span, f"`{param.name}` is declared `{declared}` here"),),
                help=f"give `{param.name}` a value of its declared type `{declared}`"))
            out.append(value)
    return out, diags


def _fit(ns: Namespace, v: Any, t: A.TypeRef, path: tuple[Any, ...]) -> Any:
    """``v`` as a value of ``t`` (itself, or a copy with the sets ``t`` declares made sets); raises
    ``_Mismatch`` at the first part that does not fit."""
    if v is None and t.optional:
        return v
    name, args = t.name, t.args
    if name == "any" and not args:
        return v
    if name in _SCALARS and not args:
        if name == "int":
            ok = type(v) is int or (type(v) is Fraction and v.denominator == 1)
        elif name == "number":  # (a fraction too: JSON's `0.5` is read exactly, 1/2)
            ok = type(v) is int or type(v) is Fraction
        elif name == "str":
            ok = type(v) is str
        elif name == "bool":
            ok = type(v) is bool
        else:
            ok = v is None
        if not ok:
            raise _Mismatch(path, _expected(f"`{A.type_text(t)}` ({_SCALARS[name]})", v))
        return v
    if name in ("list", "set") and len(args) == 1:
        if type(v) is not list:
            raise _Mismatch(path, _expected(f"`{A.type_text(t)}` (a list)", v))
        items = [_fit(ns, x, args[0], (*path, i)) for i, x in enumerate(v)]
        if name == "list":
            return v if all(a is b for a, b in zip(items, v)) else items
        out = set()
        for i, x in enumerate(items):
            try:
                out.add(as_key(x))
            except TypeError:
                raise _Mismatch((*path, i), _expected("an item a set can hold (a text, number, truth value "
                                                      "or null)", x)) from None
        return frozenset(out)
    if name == "map" and len(args) == 2:
        if not isinstance(v, dict):
            raise _Mismatch(path, _expected(f"`{A.type_text(t)}` (an object)", v))
        changed = False
        out_map = {}
        for k, x in v.items():
            _fit(ns, k, args[0], (*path, k))
            y = _fit(ns, x, args[1], (*path, k))
            changed = changed or y is not x
            out_map[k] = y
        return type(v)(out_map) if changed else v
    decl = ns.defs.get(name) if not args else None
    if isinstance(decl, A.EnumDecl):
        if type(v) is not str or v not in decl.members:
            members = ", ".join(decl.members)
            raise _Mismatch(path, _expected(f"a member of the enum `{name}` ({members})", v))
        return v
    if isinstance(decl, A.RecordDecl):
        if type(v) is not dict:
            raise _Mismatch(path, _expected(f"the record `{name}` (an object)", v))
        missing = [f.name for f in decl.fields if not f.optional and f.name not in v]
        if missing:
            listed = ", ".join(f"`{m}`" for m in missing)
            raise _Mismatch(path, f"the record `{name}` needs the field{'s' if len(missing) > 1 else ''} {listed}, "
                                  f"missing from {shown(v)}")
        record = v
        for f in decl.fields:
            if f.name in v:
                y = _fit(ns, v[f.name], f.type, (*path, f.name))
                if y is not v[f.name]:
                    record = dict(record) if record is v else record
                    record[f.name] = y
        return record
    if name in ("dice", "fn") and not args:
        raise _Mismatch(path, _expected(f"`{A.type_text(t)}`, which no value given from outside is", v))
    return v  # (a type the checker did not accept: C001 runs nothing, so never met)


def _expected(what: str, v: Any) -> str:
    # (a Python caller's tuple is the language's tuple, no list: JSON notation alone would show it as one)
    return f"expected {what}, got {'the tuple ' if type(v) is tuple else ''}{shown(v)}"

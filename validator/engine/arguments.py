"""A query's arguments given from outside (``Ruleset.evaluate``'s ``args``: `--arg`, a test case's
`args`, the playground's, an API caller's values) checked against the types its parameters declare,
at the query's entry and before anything runs, for both engines alike (docs/language.md, "Declarations";
docs/diagnostics.md, S008).

The checker trusts a parameter's annotation inside the ruleset; nothing else would hold it to a value
that comes from outside, so a wrong one was met later as an error placed in the ruleset (E001), or not
at all (a text ``"3"`` for ``n: int``: ``n == 3`` false, a wrong answer without warning). Each argument
is checked and made the kinds its type declares (a list given for a ``set[T]`` made that set, an object
given for a ``map[K, V]`` a map) by the walk a state's inputs and a typed data import are read by
(``lang.kinds``, which says what each type takes); an untyped parameter takes anything.
"""

from __future__ import annotations

from typing import Any

from ..core.diagnostics import Diagnostic, Related, Span
from ..lang import ast as A
from ..lang.kinds import Unfit
from ..lang.program import Program, Unit

ARGS_NAME = "<args>"  # the file a diagnostic of an argument names (a caller may name its own: `--arg`)


def has_typed_params(unit: Unit) -> bool:
    """Whether any parameter of ``unit`` declares a type (else its arguments are taken as they are)."""
    return any(p.type is not None for p in unit.params)


def checked_args(program: Program, unit: Unit, args: list[Any], shown_as: str = ARGS_NAME) \
        -> tuple[list[Any], list[Diagnostic]]:
    """``args`` (as many as ``unit`` has parameters) as the query takes them, made the kinds their
    parameters' types declare (``kinds.DeclaredKinds``: a list given for a ``set[T]`` made that set, an
    object for a ``map[K, V]`` a map); and an S008 for each argument that does not fit its parameter's
    declared type, at its JSON pointer (``/0``, ``/1/units/2``) in the file ``shown_as``, the parameter's
    declaration as a note."""
    kinds = program.loaded.namespaces[unit.ns].kinds
    out, diags = [], []
    for i, (value, param) in enumerate(zip(args, unit.params)):
        if param.type is None:
            out.append(value)
            continue
        try:
            out.append(kinds.fit(value, param.type))
        except Unfit as bad:
            bad.parts.append(i)
            declared = A.type_text(param.type)
            said = f"query `{unit.name}`, argument {i + 1}, `{param.name}` (declared `{declared}`): {bad.message}"
            diags.append(Diagnostic(
                "S008", said, Span(shown_as), pointer=bad.pointer(),
                related=(Related(param.span, f"`{param.name}` is declared `{declared}` here"),),
                help=f"give `{param.name}` a value of its declared type `{declared}`"))
            out.append(value)
    return out, diags

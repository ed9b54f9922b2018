"""The AST classes (validator/lang/ast.py, ``node``) are made as frozen dataclasses would be, without
dataclass's compiled methods: every class is held here to the frozen dataclass of the fields its source
declares (read from the source with Python's own parser, not from the class ``node`` made), on every call
that gives some fields by position and any set of the others by name, with too many arguments, repeated
ones and an unknown one: the same fields set, or the same error with the same message."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import itertools
from pathlib import Path
from typing import Any

import pytest

from validator.lang import ast as A

SOURCE = Path(A.__file__).read_text(encoding="utf-8")


def _default(expr: ast.expr) -> Any:
    """A default as the source writes it: ``_span()`` (the empty span) or a literal."""
    if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "_span" and not expr.args:
        return A._span()
    return ast.literal_eval(expr)


def _declared() -> dict[str, list[tuple[str, bool, Any]]]:
    """Each class decorated with ``node``: its annotated fields in order, whether each has a default, and it."""
    found = {}
    for stmt in ast.parse(SOURCE).body:
        if isinstance(stmt, ast.ClassDef) and any(isinstance(d, ast.Name) and d.id == "node" for d in stmt.decorator_list):
            found[stmt.name] = [(s.target.id, s.value is not None, _default(s.value) if s.value is not None else None)
                                for s in stmt.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]
    return found


DECLARED = _declared()


def _oracle(name: str) -> type:
    specs: list[Any] = [(f, object, dataclasses.field(default=v)) if has else (f, object) for f, has, v in DECLARED[name]]
    return dataclasses.make_dataclass(name, specs, frozen=True)


def _outcome(make: type, args: tuple[Any, ...], kw: dict[str, Any]) -> tuple[Any, ...]:
    try:
        made = make(*args, **kw)
    except TypeError as exc:
        return ("TypeError", str(exc))
    return ("made", tuple((f, getattr(made, f)) for f, _, _ in DECLARED[make.__name__]))


def test_every_ast_class_is_declared_and_every_number_of_fields_has_its_maker() -> None:
    made = {n: c for n, c in vars(A).items() if isinstance(c, type) and issubclass(c, A.Node) and c is not A.Node}
    assert sorted(made) == sorted(DECLARED)
    for name, cls in made.items():
        assert cls._fields == tuple(f for f, _, _ in DECLARED[name])
    counts = {len(fields) for fields in DECLARED.values()}
    assert counts == set(range(1, len(A._INITS) + 1)), "a maker no class uses, or a class with no maker"


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_a_node_is_constructed_as_the_frozen_dataclass_of_its_fields(name: str) -> None:
    cls, oracle = getattr(A, name), _oracle(name)
    fields = [f for f, _, _ in DECLARED[name]]
    calls = 0
    for given in range(len(fields) + 2):  # (one too many by position too)
        args = tuple(("by position", i) for i in range(given))
        for chosen in itertools.product((False, True), repeat=len(fields)):
            named = [f for f, c in zip(fields, chosen) if c]
            for extra in ({}, {"unknown": 1}):
                kw = {**{f: ("by name", f) for f in named}, **extra}
                assert _outcome(cls, args, kw) == _outcome(oracle, args, kw), (name, args, kw)
                calls += 1
    assert calls == (len(fields) + 2) * 2 ** len(fields) * 2
    # its signature (names, order, kinds, defaults) is the dataclass's, and its name in tracebacks the class's
    def parameters(made: type) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(made).parameters.values()]

    assert parameters(cls) == parameters(oracle)
    assert cls.__init__.__qualname__ == f"{name}.__init__"


@pytest.mark.parametrize("name", sorted(DECLARED))
def test_a_node_is_frozen_and_equal_to_one_written_alike_elsewhere(name: str) -> None:
    cls = getattr(A, name)
    values = {f: (v if has else ("value", f)) for f, has, v in DECLARED[name]}
    a = cls(**values)
    b = cls(**{**values, "span": A.Span("elsewhere.rules", 3, 1, 3, 9)}) if "span" in values else cls(**values)
    assert a == b and hash(a) == hash(b)
    first = next(iter(values))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(a, first, 1)
    if first != "span":
        assert a != cls(**{**values, first: ("other", first)})


def test_node_refuses_a_class_it_cannot_make() -> None:
    def declared(fields: str) -> type:
        return type("T", (), {"__annotations__": dict.fromkeys(fields.split(), "int")})

    for fields in ("", "a b c d e f g h i", "self", "a d", "k0 k1"):
        with pytest.raises(TypeError):
            A.node(declared(fields))
    late = declared("a b")
    late.a = 1  # type: ignore[attr-defined]  (a default before a field without one)
    with pytest.raises(TypeError):
        A.node(late)

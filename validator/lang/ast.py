"""The ruleset AST: frozen dataclasses, each with a ``span`` that takes no part in equality."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, TypeVar, Union

from ..core.diagnostics import NO_SPAN, Span

_T = TypeVar("_T")


def _span() -> Span:
    return field(default=NO_SPAN, compare=False, repr=False)  # type: ignore[return-value]


# ---------------------------------------------------------------- types


@dataclass(frozen=True)
class TypeRef:
    name: str
    args: tuple["TypeRef", ...] = ()
    optional: bool = False
    span: Span = _span()


# ---------------------------------------------------------------- expressions


@dataclass(frozen=True)
class Int:
    value: int
    span: Span = _span()


@dataclass(frozen=True)
class Str:
    value: str
    raw: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class Bool:
    value: bool
    span: Span = _span()


@dataclass(frozen=True)
class NoneLit:
    span: Span = _span()


@dataclass(frozen=True)
class Dice:
    count: int
    sides: int
    span: Span = _span()


@dataclass(frozen=True)
class Name:
    id: str
    span: Span = _span()


@dataclass(frozen=True)
class ListLit:
    items: tuple["Expr", ...]
    span: Span = _span()


@dataclass(frozen=True)
class TupleLit:
    """``(a, b)``: a fixed sequence that may be a map's key or a set's item."""

    items: tuple["Expr", ...]
    span: Span = _span()


@dataclass(frozen=True)
class SetLit:
    items: tuple["Expr", ...]
    span: Span = _span()


@dataclass(frozen=True)
class RecordLit:
    items: tuple[tuple[str, "Expr"], ...]
    span: Span = _span()


@dataclass(frozen=True)
class MapLit:
    items: tuple[tuple["Expr", "Expr"], ...]
    span: Span = _span()


@dataclass(frozen=True)
class CompFor:
    names: tuple[str, ...]
    iter: "Expr"
    cond: "Expr | None"
    span: Span = _span()


@dataclass(frozen=True)
class Comp:
    """``[e for ...]`` (list), ``{e for ...}`` (set), ``{k => v for ...}`` (map), ``f(e for ...)`` (gen)."""

    kind: str
    elem: "Expr"
    fors: tuple[CompFor, ...]
    key: "Expr | None" = None
    span: Span = _span()


@dataclass(frozen=True)
class Let:
    name: str
    value: "Expr"
    body: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class If:
    branches: tuple[tuple["Expr", "Expr"], ...]
    otherwise: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class Param:
    name: str
    type: TypeRef | None
    span: Span = _span()


@dataclass(frozen=True)
class Lambda:
    params: tuple[Param, ...]
    body: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class BoolOp:
    op: str  # "and" | "or"
    items: tuple["Expr", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Not:
    operand: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class Compare:
    op: str  # == != < <= > >= in notin
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class BinOp:
    op: str  # + - * / // % ??
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class Neg:
    operand: "Expr"
    span: Span = _span()


@dataclass(frozen=True)
class Call:
    func: "Expr"
    args: tuple["Expr", ...]
    kwargs: tuple[tuple[str, "Expr"], ...] = ()
    span: Span = _span()


@dataclass(frozen=True)
class Field:
    obj: "Expr"
    name: str
    span: Span = _span()


@dataclass(frozen=True)
class Index:
    obj: "Expr"
    keys: tuple["Expr", ...]
    span: Span = _span()


@dataclass(frozen=True)
class With:
    obj: "Expr"
    items: tuple[tuple[str, "Expr"], ...]
    span: Span = _span()


@dataclass(frozen=True)
class Absent:
    span: Span = _span()


Expr = Union[
    Int, Str, Bool, NoneLit, Dice, Name, ListLit, TupleLit, SetLit, RecordLit, MapLit, Comp, Let, If, Lambda,
    BoolOp, Not, Compare, BinOp, Neg, Call, Field, Index, With, Absent,
]

# ---------------------------------------------------------------- statements


@dataclass(frozen=True)
class Step:
    name: str
    cites: tuple[str, ...]
    body: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Var:
    name: str
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class Assign:
    name: str
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class LetStmt:
    name: str
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class IfStmt:
    branches: tuple[tuple[Expr, tuple["Stmt", ...]], ...]
    otherwise: tuple["Stmt", ...] | None
    span: Span = _span()


@dataclass(frozen=True)
class For:
    name: str
    iter: Expr
    cond: Expr | None
    body: tuple["Stmt", ...]
    span: Span = _span()


@dataclass(frozen=True)
class Goto:
    target: str
    span: Span = _span()


@dataclass(frozen=True)
class Stop:
    span: Span = _span()


@dataclass(frozen=True)
class Break:
    span: Span = _span()


@dataclass(frozen=True)
class Continue:
    span: Span = _span()


@dataclass(frozen=True)
class Emit:
    event: str
    payload: tuple[tuple[str, Expr], ...]
    cites: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Require:
    cond: Expr
    message: str
    cites: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class Reject:
    message: str
    cites: tuple[str, ...]
    span: Span = _span()


Stmt = Union[Step, Var, Assign, LetStmt, IfStmt, For, Goto, Stop, Break, Continue, Emit, Require, Reject]

# ---------------------------------------------------------------- declarations


@dataclass(frozen=True)
class Header:
    name: str
    title: str | None
    span: Span = _span()


@dataclass(frozen=True)
class Extends:
    path: str
    span: Span = _span()


@dataclass(frozen=True)
class Import:
    path: str
    alias: str
    span: Span = _span()
    schema: str | None = None  # `with schema "file.json"`: the JSON Schema a data import must satisfy


@dataclass(frozen=True)
class Clauses:
    path: str
    span: Span = _span()


@dataclass(frozen=True)
class Schema:
    path: str
    span: Span = _span()


@dataclass(frozen=True)
class EnumDecl:
    name: str
    members: tuple[str, ...]
    cites: tuple[str, ...]
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class FieldDecl:
    name: str
    type: TypeRef
    optional: bool
    span: Span = _span()


@dataclass(frozen=True)
class RecordDecl:
    name: str
    fields: tuple[FieldDecl, ...]
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class InputDecl:
    name: str
    type: TypeRef
    pointer: str
    default: Expr | None
    cites: tuple[str, ...]
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class ConstDecl:
    name: str
    type: TypeRef | None
    cites: tuple[str, ...]
    value: Expr
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class TableDecl:
    name: str
    params: tuple[Param, ...]
    ret: TypeRef | None
    cites: tuple[str, ...]
    grid: tuple[tuple[Expr, ...], ...] | None
    source: Expr | None
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class CellOverride:
    """``override t[k1, k2] cite "X" = value``: one cell of an extended ruleset's table."""

    table: str
    keys: tuple[Expr, ...]
    cites: tuple[str, ...]
    value: Expr
    span: Span = _span()


@dataclass(frozen=True)
class DefDecl:
    kind: str  # "def" | "rule"
    name: str
    params: tuple[Param, ...] | None  # None: a value definition written without parentheses
    ret: TypeRef | None
    cites: tuple[str, ...]
    body: Expr
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class DecisionDecl:
    name: str
    params: tuple[Param, ...]
    cites: tuple[str, ...]
    body: Expr
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class Policy:
    when: Expr | None  # None: otherwise
    targets: Expr
    value: Expr
    cites: tuple[str, ...]
    span: Span = _span()


@dataclass(frozen=True)
class CycleDecl:
    """``cycle a, b { policy... }``: how a cycle among the decisions named is settled."""

    names: tuple[str, ...]
    cites: tuple[str, ...]
    policies: tuple[Policy, ...]
    override: bool = False
    span: Span = _span()

    @property
    def name(self) -> str:
        """Its key among a namespace's definitions (``cycle a,b``)."""
        return ",".join(self.names)


@dataclass(frozen=True)
class ProcedureDecl:
    name: str
    params: tuple[Param, ...]
    cites: tuple[str, ...]
    body: tuple[Stmt, ...]
    override: bool = False
    span: Span = _span()


@dataclass(frozen=True)
class QueryDecl:
    name: str
    params: tuple[Param, ...]
    ret: TypeRef | None
    body: Expr
    override: bool = False
    span: Span = _span()


Decl = Union[EnumDecl, RecordDecl, InputDecl, ConstDecl, TableDecl, DefDecl, DecisionDecl, CycleDecl,
             ProcedureDecl, QueryDecl]
Directive = Union[Header, Extends, Import, Clauses, Schema, CellOverride]


@dataclass(frozen=True)
class Module:
    path: str
    directives: tuple[Directive, ...]
    decls: tuple[Decl, ...]
    span: Span = _span()


# ---------------------------------------------------------------- per-node memo

_WALKS: dict[tuple[str, int], tuple[object, object]] = {}
_WALKS_LIMIT = 100_000


def per_node(kind: str, node: object, compute: Callable[[object], _T]) -> _T:
    """The result of a pure walk over ``node``, kept per node object.

    Parsed modules are cached per process, so the variants of one base ruleset share its
    declaration objects; walks that only read a declaration (names it mentions, citations it
    carries) then run once per declaration, not once per variant. Results must be immutable.
    Keyed by identity (hashing a frozen dataclass would walk it all), holding the node so that
    its identity cannot be reused while the entry lives."""
    key = (kind, id(node))
    hit = _WALKS.get(key)
    if hit is not None and hit[0] is node:
        return hit[1]  # type: ignore[return-value]
    value = compute(node)
    if len(_WALKS) >= _WALKS_LIMIT:
        _WALKS.clear()
    _WALKS[key] = (node, value)
    return value


class ContextMemo:
    """Results of a check of one declaration that reads, besides the declaration, only what a
    *context* summarises: what the names it mentions mean where it is checked, say.

    The variants of a base ruleset share its declaration objects (parsed modules are cached per
    process), and most of them change none of what a given declaration's check reads: that check then
    runs once, not once per variant. A context is a hashable value; it may name objects by ``id``
    when the entry ``holds`` them, so that no identity is reused while the entry lives."""

    def __init__(self, limit: int = 10_000):  # (a check of every bundled ruleset keeps some 500)
        self.limit = limit
        self.entries: dict[tuple[int, object], tuple[object, object, object]] = {}

    def get(self, node: object, context: object) -> object:
        """What was kept for ``node`` in ``context``, else ``MISSING``."""
        hit = self.entries.get((id(node), context))
        return hit[2] if hit is not None and hit[0] is node else MISSING

    def put(self, node: object, context: object, value: object, holds: object = ()) -> None:
        if len(self.entries) >= self.limit:
            self.entries.clear()
        self.entries[(id(node), context)] = (node, holds, value)


MISSING = object()


# ---------------------------------------------------------------- depth


def deepest(roots: object) -> tuple[int, Span]:
    """How deep the deepest node under ``roots`` (nodes, or tuples and lists of them) lies, and the
    span of the innermost node with a place in the text on the way to it. Iterative, so it answers
    for trees too deep for the recursive walks (``api.load_ruleset`` locates their P006 with it)."""
    best, where = 0, NO_SPAN
    todo: list[tuple[object, int, Span]] = [(roots, 0, NO_SPAN)]
    while todo:
        node, depth, span = todo.pop()
        if isinstance(node, (tuple, list)):
            todo.extend((x, depth, span) for x in node)
            continue
        fields = getattr(node, "__dataclass_fields__", None)
        if fields is None:
            continue
        own = getattr(node, "span", None)
        if isinstance(own, Span) and own.line:
            span = own
        if depth > best:
            best, where = depth, span
        todo.extend((getattr(node, name), depth + 1, span) for name in fields if name != "span")
    return best, where

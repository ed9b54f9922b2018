"""The ruleset AST: immutable records (``node``), each with a ``span`` that takes no part in equality."""

from __future__ import annotations

from dataclasses import FrozenInstanceError
from operator import itemgetter
from typing import Any, Callable, Iterator, TypeVar, Union, dataclass_transform

from ..core.diagnostics import NO_SPAN, Span

_T = TypeVar("_T")
_C = TypeVar("_C", bound=type)


def _span() -> Span:
    return NO_SPAN


class Node:
    """What every AST class is: its fields (``_fields``, in order) set once by ``__init__``, compared
    and hashed as a tuple of all but ``span`` (so two nodes written alike in two places are equal), as
    frozen dataclasses would be. Made by ``node`` with no code compiled: ``dataclass`` writes and
    compiles six methods per class, a third of ruleval's start-up for the sixty classes here."""

    _fields: tuple[str, ...] = ()
    _compared: tuple[str, ...] = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    # the compared fields' values, from a node's __dict__ (an ``itemgetter``: one value, or a tuple)
    _key: Callable[[dict[str, Any]], Any] = staticmethod(lambda d: ())
    # the compared fields' values, from a node's __dict__, always as a tuple (the walks' descent)
    _values: Callable[[dict[str, Any]], tuple[Any, ...]] = staticmethod(lambda d: ())

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key(self.__dict__) == self._key(other.__dict__)  # type: ignore[no-any-return]

    def __hash__(self) -> int:
        return hash(self._key(self.__dict__))

    def __repr__(self) -> str:
        d = self.__dict__
        return f"{type(self).__name__}({', '.join(f'{f}={d[f]!r}' for f in self._compared)})"


# the fields that say where a node, or a part of it, is written: no part of its equality, nor of a walk's descent
_PLACES = frozenset({"span", "label_spans"})


@dataclass_transform(frozen_default=True)
def node(cls: _C) -> _C:
    """An AST class from its annotated fields (a default where one is given; ``span`` last, not
    compared): a ``Node`` with an ``__init__`` taking them by position or name."""
    names = tuple(cls.__dict__.get("__annotations__", {}))
    defaults = {n: cls.__dict__[n] for n in names if n in cls.__dict__}
    count = len(names)
    after = [frozenset(names[i:]) for i in range(count + 1)]  # what may be named after i given by position

    def __init__(self: Node, *args: Any, **kw: Any) -> None:
        d = self.__dict__
        if len(args) != count:
            if len(args) > count:
                raise TypeError(f"{cls.__name__}() takes {count} arguments, not {len(args)}")
            d.update(defaults)
        d.update(zip(names, args))
        if kw:
            if not kw.keys() <= after[len(args)]:
                raise TypeError(f"{cls.__name__}() got an unexpected or repeated argument: {', '.join(kw)}")
            d.update(kw)
        if len(d) != count:
            raise TypeError(f"{cls.__name__}() missing {', '.join(n for n in names if n not in d)}")

    body = {k: v for k, v in cls.__dict__.items() if k not in defaults and k not in ("__dict__", "__weakref__")}
    compared = tuple(n for n in names if n not in _PLACES)
    values = (itemgetter(*compared) if len(compared) > 1
              else (lambda d, f=compared[0]: (d[f],)) if compared else (lambda d: ()))
    made = type(cls.__name__, (Node,), {**body, "__init__": __init__, "_fields": names, "_compared": compared,
                                        "_values": staticmethod(values),
                                        **({"_key": itemgetter(*compared)} if compared else {})})
    made.__qualname__ = cls.__qualname__
    return made  # type: ignore[return-value]


# ---------------------------------------------------------------- types


@node
class TypeRef:
    name: str
    args: tuple["TypeRef", ...] = ()
    optional: bool = False
    span: Span = _span()


def type_text(t: TypeRef) -> str:
    """A type as a ruleset writes it: ``map[str, list[int]]?``."""
    inner = f"{t.name}[{', '.join(type_text(a) for a in t.args)}]" if t.args else t.name
    return inner + "?" if t.optional else inner


# ---------------------------------------------------------------- expressions


@node
class Int:
    value: int
    span: Span = _span()


@node
class Str:
    value: str
    raw: bool = False
    span: Span = _span()


@node
class Bool:
    value: bool
    span: Span = _span()


@node
class NoneLit:
    span: Span = _span()


@node
class Dice:
    count: int
    sides: int
    span: Span = _span()


@node
class Name:
    id: str
    span: Span = _span()


@node
class ListLit:
    items: tuple["Expr", ...]
    span: Span = _span()


@node
class TupleLit:
    """``(a, b)``: a fixed sequence that may be a map's key or a set's item."""

    items: tuple["Expr", ...]
    span: Span = _span()


@node
class SetLit:
    items: tuple["Expr", ...]
    span: Span = _span()


@node
class RecordLit:
    items: tuple[tuple[str, "Expr"], ...]
    span: Span = _span()


@node
class MapLit:
    items: tuple[tuple["Expr", "Expr"], ...]
    span: Span = _span()


@node
class CompFor:
    names: tuple[str, ...]
    iter: "Expr"
    cond: "Expr | None"
    span: Span = _span()


@node
class Comp:
    """``[e for ...]`` (list), ``{e for ...}`` (set), ``{k => v for ...}`` (map), ``f(e for ...)`` (gen)."""

    kind: str
    elem: "Expr"
    fors: tuple[CompFor, ...]
    key: "Expr | None" = None
    span: Span = _span()


@node
class Let:
    name: str
    value: "Expr"
    body: "Expr"
    span: Span = _span()


@node
class If:
    branches: tuple[tuple["Expr", "Expr"], ...]
    otherwise: "Expr"
    span: Span = _span()


@node
class Param:
    name: str
    type: TypeRef | None
    span: Span = _span()


@node
class Lambda:
    params: tuple[Param, ...]
    body: "Expr"
    span: Span = _span()


@node
class BoolOp:
    op: str  # "and" | "or"
    items: tuple["Expr", ...]
    span: Span = _span()


@node
class Not:
    operand: "Expr"
    span: Span = _span()


@node
class Compare:
    op: str  # == != < <= > >= in notin
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@node
class BinOp:
    op: str  # + - * / // % ??
    left: "Expr"
    right: "Expr"
    span: Span = _span()


@node
class Neg:
    operand: "Expr"
    span: Span = _span()


@node
class Call:
    func: "Expr"
    args: tuple["Expr", ...]
    kwargs: tuple[tuple[str, "Expr"], ...] = ()
    span: Span = _span()


@node
class Field:
    obj: "Expr"
    name: str
    span: Span = _span()


@node
class Index:
    obj: "Expr"
    keys: tuple["Expr", ...]
    span: Span = _span()


@node
class With:
    obj: "Expr"
    items: tuple[tuple[str, "Expr"], ...]
    span: Span = _span()
    label_spans: tuple[Span, ...] = ()  # (each item's label's place, where a finding of the label points: not compared)


@node
class Absent:
    span: Span = _span()


Expr = Union[
    Int, Str, Bool, NoneLit, Dice, Name, ListLit, TupleLit, SetLit, RecordLit, MapLit, Comp, Let, If, Lambda,
    BoolOp, Not, Compare, BinOp, Neg, Call, Field, Index, With, Absent,
]

# ---------------------------------------------------------------- statements


@node
class Step:
    name: str
    cites: tuple[str, ...]
    body: tuple["Stmt", ...]
    span: Span = _span()


@node
class Var:
    name: str
    value: Expr
    span: Span = _span()


@node
class Assign:
    name: str
    value: Expr
    span: Span = _span()


@node
class LetStmt:
    name: str
    value: Expr
    span: Span = _span()


@node
class IfStmt:
    branches: tuple[tuple[Expr, tuple["Stmt", ...]], ...]
    otherwise: tuple["Stmt", ...] | None
    span: Span = _span()


@node
class For:
    name: str
    iter: Expr
    cond: Expr | None
    body: tuple["Stmt", ...]
    span: Span = _span()


@node
class Goto:
    target: str
    span: Span = _span()


@node
class Stop:
    span: Span = _span()


@node
class Break:
    span: Span = _span()


@node
class Continue:
    span: Span = _span()


@node
class Emit:
    event: str
    payload: tuple[tuple[str, Expr], ...]
    cites: tuple[str, ...]
    span: Span = _span()


@node
class Require:
    cond: Expr
    message: str
    cites: tuple[str, ...]
    span: Span = _span()


@node
class Reject:
    message: str
    cites: tuple[str, ...]
    span: Span = _span()


Stmt = Union[Step, Var, Assign, LetStmt, IfStmt, For, Goto, Stop, Break, Continue, Emit, Require, Reject]

_JUMPS = (Reject, Stop, Goto, Break, Continue)


def leaves(stmts: tuple[Stmt, ...], *, in_loop: bool = True) -> bool:
    """Whether a block certainly leaves, never running what follows it: its last statement jumps (`reject`,
    `stop`, `goto`, `break`, `continue`), or is an `if` with an `else` every block of which certainly leaves.
    (Anything else may fall through: a `for` may take no turn, a failed `require` is not known to fail.)
    Not ``in_loop`` (a step's body), `break` and `continue` leave nothing: there they are refused (C020)."""
    last = stmts[-1] if stmts else None
    if isinstance(last, IfStmt):
        return (last.otherwise is not None and leaves(last.otherwise, in_loop=in_loop)
                and all(leaves(b, in_loop=in_loop) for _, b in last.branches))
    return isinstance(last, _JUMPS) and (in_loop or not isinstance(last, (Break, Continue)))


# ---------------------------------------------------------------- declarations


@node
class Header:
    name: str
    title: str | None
    span: Span = _span()


@node
class Extends:
    path: str
    span: Span = _span()


@node
class Import:
    path: str
    alias: str
    span: Span = _span()
    schema: str | None = None  # `with schema "file.json"`: the JSON Schema a data import must satisfy
    type: TypeRef | None = None  # `as name: T`: the type a data file is read by (its maps, ``kinds``)


@node
class Clauses:
    path: str
    span: Span = _span()


@node
class Schema:
    path: str
    span: Span = _span()


@node
class EnumDecl:
    name: str
    members: tuple[str, ...]
    cites: tuple[str, ...]
    override: bool = False
    span: Span = _span()


@node
class FieldDecl:
    name: str
    type: TypeRef
    optional: bool
    span: Span = _span()


@node
class RecordDecl:
    name: str
    fields: tuple[FieldDecl, ...]
    override: bool = False
    span: Span = _span()


@node
class InputDecl:
    name: str
    type: TypeRef
    pointer: str
    default: Expr | None
    cites: tuple[str, ...]
    override: bool = False
    span: Span = _span()


@node
class ConstDecl:
    name: str
    type: TypeRef | None
    cites: tuple[str, ...]
    value: Expr
    override: bool = False
    span: Span = _span()


@node
class TableDecl:
    name: str
    params: tuple[Param, ...]
    ret: TypeRef | None
    cites: tuple[str, ...]
    grid: tuple[tuple[Expr, ...], ...] | None
    source: Expr | None
    override: bool = False
    span: Span = _span()


@node
class CellOverride:
    """``override t[k1, k2] cite "X" = value``: one cell of an extended ruleset's table."""

    table: str
    keys: tuple[Expr, ...]
    cites: tuple[str, ...]
    value: Expr
    span: Span = _span()


@node
class DefDecl:
    kind: str  # "def" | "rule"
    name: str
    params: tuple[Param, ...] | None  # None: a value definition written without parentheses
    ret: TypeRef | None
    cites: tuple[str, ...]
    body: Expr
    override: bool = False
    span: Span = _span()


@node
class DecisionDecl:
    name: str
    params: tuple[Param, ...]
    cites: tuple[str, ...]
    body: Expr
    override: bool = False
    span: Span = _span()


@node
class Policy:
    when: Expr | None  # None: otherwise
    targets: Expr
    value: Expr
    cites: tuple[str, ...]
    span: Span = _span()


@node
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


@node
class ProcedureDecl:
    name: str
    params: tuple[Param, ...]
    cites: tuple[str, ...]
    body: tuple[Stmt, ...]
    override: bool = False
    span: Span = _span()


@node
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


@node
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
    Keyed by identity (hashing a node would walk it all), holding the node so that
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


BASE = "base"  # in an `override`, the definition it replaces


def renamed(node: Any, old: str, new: str) -> Any:
    """``node`` with every name ``old`` read as ``new``; the same object where there is none."""
    if isinstance(node, Name):
        return Name(new, span=node.span) if node.id == old else node
    if isinstance(node, tuple):
        items = tuple(renamed(x, old, new) for x in node)
        return node if all(a is b for a, b in zip(items, node)) else items
    if isinstance(node, Node):
        fields = {f: renamed(getattr(node, f), old, new) for f in node._compared}
        if all(v is getattr(node, f) for f, v in fields.items()):
            return node
        return type(node)(**fields, span=node.__dict__["span"])  # type: ignore[call-arg]
    return node


def nodes(root: Any) -> Iterator[Any]:
    """Every node under ``root`` (a node, or tuples of them), each before the nodes under it, in order."""
    todo = [root]
    while todo:
        x = todo.pop()
        if isinstance(x, tuple):
            todo += reversed(x)
        elif isinstance(x, Node):
            yield x
            todo += x._values(x.__dict__)[::-1]


class ContextMemo:
    """The checks of one declaration that found nothing, each with its *context*: a summary of all the
    check reads besides the declaration (what the names it mentions mean where it is checked, say).

    The variants of a base ruleset share its declaration objects (parsed modules are cached per
    process), and most of them change none of what a given declaration's check reads: that check then
    runs once, not once per variant. A context is a hashable value; it may name objects by ``id``
    when the entry ``holds`` them, so that no identity is reused while the entry lives."""

    def __init__(self, limit: int = 10_000):  # (a check of every bundled ruleset keeps some 500)
        self.limit = limit
        self.entries: dict[tuple[int, object], tuple[object, object]] = {}

    def once(self, node: object, context: object, holds: object, diags: list[Any], check: Callable[..., object],
             *args: Any) -> None:
        """``check(*args)``, which adds what it finds to ``diags``, unless it found nothing before for
        ``node`` in ``context`` (none: a check not shared, run each time)."""
        key = (id(node), context)
        hit = self.entries.get(key) if context is not None else None
        if hit is not None and hit[0] is node:
            return
        before = len(diags)
        check(*args)
        if context is not None and len(diags) == before:
            if len(self.entries) >= self.limit:
                self.entries.clear()
            self.entries[key] = (node, holds)


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
        if not isinstance(node, Node):
            continue
        own = getattr(node, "span", None)
        if isinstance(own, Span) and own.line:
            span = own
        if depth > best:
            best, where = depth, span
        todo.extend((getattr(node, name), depth + 1, span) for name in node._compared)
    return best, where

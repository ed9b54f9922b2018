"""A light static type pass: it infers what it can and reports only certain mistakes.

Types are ``int``, ``number``, ``str``, ``bool``, ``none``, ``dice``, ``fn``, ``list[T]``, ``set[T]``,
``map[K, V]``, record and enum names, a record literal's shape (``{a: int}``), ``T?`` (a ``T`` or
none), and ``any`` (unknown: never an error). Inputs, annotated parameters, ``const`` and
``def ... -> T`` give types; literals and operators propagate them; a ``def`` with no declared result
gives its body's (``result_of``; a recursive one's own calls are ``any``); a test of a name against
``none`` narrows it where the test decides (``facts``), in an `if` expression or statement, and after a
`require` or an `if` whose other blocks certainly jump (``stmt``).
A record-typed value's fields are checked against its declaration (``C012`` with did-you-mean).
A record literal is held to the type declared where it is written, part by part (``misfits``): a record, no
map but `{}`, and the record ``R`` where it has ``R``'s required fields, each of its type (``stands_for``), and,
written there, no label ``R`` does not declare. A value known to be none (the literal, a name bound to it)
fits only a ``T?`` (or ``none``, ``any``); a ``T?`` is looked at as its ``T``, where it is none left to the run.
A ``number`` is any number, a fraction too (`1/2`); an ``int`` a whole one, which fits where a ``number``
is expected (not the reverse). An arithmetic expression is of its operator's type (``arithmetic``), not
its value's: `4/2` is a ``number``.

The pass is a ``bind.Walker``: its scopes are the language's, each local typed where it is bound.
The type of every expression node of a unit is kept beside its binding (``node_types``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

from . import ast as A
from ..core.diagnostics import Diagnostic, Related, Suggestions
from .loader import Namespace
from .bind import BuiltinRef, DataRef, Member, ModuleRef, Referee, Scope, UnitRef, Walker, checks_key
from .program import Program, Unit, member_help

ANY = ("any",)
INT, STR, BOOL, NONE, DICE, FN = ("int",), ("str",), ("bool",), ("none",), ("dice",), ("fn",)
NUMBER = ("number",)  # any number: a whole one (an ``int``) or a fraction
PRIMS = {"int": INT, "number": NUMBER, "str": STR, "bool": BOOL, "any": ANY, "none": NONE, "dice": DICE, "fn": FN}
T = tuple[Any, ...]
# the types of the nodes whose type is their kind's, a literal's first (a const's type, when it is one), with
# no ``t_`` method of ``TypeChecker``: their parts are walked, then typed (and any other such node is ``any``)
_LITERALS = {A.Int: INT, A.Str: STR, A.Bool: BOOL, A.NoneLit: NONE, A.Dice: DICE}
_KINDS = {**_LITERALS, A.BoolOp: BOOL, A.Not: BOOL, A.Lambda: FN}


def show(t: T) -> str:
    if t[0] == "opt":
        return show(t[1]) + "?"
    if t[0] == "shape":
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in t[1]) + "}"
    if t[0] in ("list", "set", "map"):
        return f"{t[0]}[{', '.join(map(show, t[1:]))}]"
    if t[0] in ("record", "enum"):
        return t[1]  # type: ignore[no-any-return]
    return t[0]  # type: ignore[no-any-return]


@dataclass
class Inferred:
    """What the checkers of one program share: each `def`'s result, by the unit's identity
    (``TypeChecker.result_of``), and the results of those it calls; each unit walked for it before
    its own check, with the types and findings of that walk; the checker of each namespace; how many
    such walks are under way."""

    of: dict[int, T] = field(default_factory=dict)
    called: dict[int, tuple[T, ...]] = field(default_factory=dict)  # (what ``of`` was found from: ``_called_results``)
    walked: dict[int, tuple[dict[int, T], list[Diagnostic]]] = field(default_factory=dict)
    checkers: dict[str, TypeChecker] = field(default_factory=dict)
    depth: int = 0


@dataclass
class TypeChecker(Walker):
    ns: Namespace
    diags: list[Diagnostic]
    program: Program
    types: dict[int, T] = field(default_factory=dict)  # each expression node's, by its identity
    locals: dict[tuple[int, str], T] = field(default_factory=dict)  # by the binder's identity and the name
    bound: dict[int, Referee] = field(default_factory=dict)  # what the names of the unit checked mean
    narrow: dict[Any, T] = field(default_factory=dict)  # the names a test against none decides here (``facts``)
    vars: set[int] = field(default_factory=set)  # the binders of the procedure's `var`s (``forget``), by identity
    inferred: Inferred = field(default_factory=lambda: Inferred())  # (shared by the checkers of one program)
    # the `override` whose result gave a node (by identity), or a local (by binder and name), its type
    # (``related``): a finding in the code of the definitions it replaces points at it
    origins: dict[Any, Unit] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.suggestions = Suggestions()
        self.records = {d.name: d for d in self.ns.defs.values() if isinstance(d, A.RecordDecl)}
        self.enums = {d.name: d for d in self.ns.defs.values() if isinstance(d, A.EnumDecl)}
        self.members = {m: e.name for e in self.enums.values() for m in e.members}
        self.inferred.checkers.setdefault(self.ns.key, self)
        self.entry = self.program.entry.key

    @cached_property
    def shared(self) -> Any:
        """What the check of any declaration of the namespace reads of it, as a part of a cache key:
        its records and enums (by identity) and their members."""
        kinds = tuple((n, id(d)) for n, d in [*self.records.items(), *self.enums.items()])
        return kinds, frozenset(self.members.items())

    def resolve(self, ref: A.TypeRef | None) -> T:
        if ref is None:
            return ANY
        t = self.plain(ref)
        return optional(t) if ref.optional else t

    def plain(self, ref: A.TypeRef) -> T:
        """The type ``ref`` names, its ``?`` aside."""
        if ref.name in PRIMS and not ref.args:
            return PRIMS[ref.name]
        if ref.name in ("list", "set") and len(ref.args) == 1:
            return (ref.name, self.resolve(ref.args[0]))
        if ref.name == "map" and len(ref.args) == 2:
            return ("map", self.resolve(ref.args[0]), self.resolve(ref.args[1]))
        if ref.name in self.records and not ref.args:
            return ("record", ref.name)
        if ref.name in self.enums and not ref.args:
            return ("enum", ref.name)
        known = list(PRIMS) + ["list", "set", "map"] + list(self.records) + list(self.enums)
        close = self.suggestions.closest(ref.name, known)
        self.diags.append(Diagnostic("C001", f"unknown type `{ref.name}`", ref.span,
                                     help=f"did you mean `{close}`?" if close else None))
        return ANY

    # -- globals
    def referee(self, e: Any, env: Scope) -> Referee | None:
        """What a name means when no local hides it (``Unit.bound``)."""
        return self.bound.get(id(e)) if isinstance(e, A.Name) and e.id not in env else None

    def unit_type(self, u: Unit) -> T:
        """The type of a definition named as a value."""
        if u.kind in _DEFS and u.arity is None and u.ret is None and u.body is not None:
            found = self.result_of(u)  # (a `def` named as a value: its declared type, else its inferred one
            return found if found in _WORDS else ANY  # where that is one word, see ``result_of``)
        if u.kind == "input" or (u.kind == "const" and u.ret is not None) or (u.kind in _DEFS and u.arity is None):
            return self.resolve(u.ret)
        if u.kind == "const":
            return _LITERALS.get(type(u.body), ANY)
        return FN if u.kind in (*_DEFS, "decision", "procedure", "query") else ANY

    # -- declarations
    def check_unit(self, unit: Unit) -> dict[int, T]:
        """The types of a unit's expression nodes; what is declared checked against what is inferred."""
        self.types, self.locals, self.bound, self.origins, self.vars = {}, {}, unit.bound, {}, set()
        inferred = unit.kind in _DEFS and unit.ret is None and unit.body is not None
        if inferred:  # (while it is walked, its own result, met in a call of itself or of a caller, is unknown)
            self.inferred.of[id(unit)] = ANY
        self.walk_unit(unit)
        if inferred:
            self.inferred.of[id(unit)] = self.types[id(unit.body)]
        if unit.kind in (*_DEFS, "query", "const") and unit.ret is not None and unit.body is not None:
            what = "is declared as" if unit.kind == "const" else "is declared to return"
            self.expect(self.resolve(unit.ret), self.types[id(unit.body)], unit.body, f"`{unit.written}` {what}")
        elif unit.kind == "decision" and unit.body is not None:  # (a read of it is `bool`: ``t_Call``)
            self.expect(BOOL, self.types[id(unit.body)], unit.body, f"decision `{unit.written}` must give")
        elif unit.kind == "input":  # (a value of the state is checked at run time: ``kinds``; its default here)
            declared = self.resolve(unit.ret)
            if unit.body is not None and unit.ret is not None:
                self.expect(declared, self.types[id(unit.body)], unit.body, f"the default of `{unit.written}` is declared as")
        elif unit.cycle is not None:
            for pol in unit.cycle.policies:
                self.expect(BOOL, self.types[id(pol.value)], pol.value, "a cycle policy must settle decisions as")
        elif unit.kind == "table":
            want = self.resolve(unit.ret)
            for cell in unit.cells.values():
                if not isinstance(cell, A.Absent):
                    self.expect(want, self.types[id(cell)], cell, f"the cells of `{unit.written}` are declared as")
        return self.types

    def result_of(self, u: Unit) -> T:
        """What a `def` gives: its declared result, else its body's type, its parameters of their declared
        types (``any`` where none is declared), found by walking it once (its types and findings kept
        for its own check, ``Inferred.walked``) or, where the same declaration was walked in the same
        context before (another variant of its ruleset), kept from then (``_RESULTS``). Within that walk
        a call of itself, or of one calling it, is ``any``, as is the result at the end of a long chain
        of such walks (no walk is deeper). (A `def` with no parameters, named as a value, is of its
        inferred type only where that is one word, a number, text, truth value or dice, ``unit_type``:
        a wider one, a map of records say, would widen `explain`'s lines past what docs/tools.md promises.)"""
        if u.ret is not None or u.body is None:
            return self.resolve(u.ret)
        inf, uid = self.inferred, id(u)
        found = inf.of.get(uid)
        if found is not None:
            return found
        if inf.depth >= MAX_RESULT_DEPTH:
            return ANY
        checker = inf.checkers.get(u.ns) or TypeChecker(self.program.loaded.namespaces[u.ns], [], self.program,
                                                        inferred=inf)
        inf.of[uid] = ANY
        inf.depth += 1
        called = inf.called[uid] = _called_results(checker, u)
        kept = _RESULTS.get(checker.result_key(u, called))
        if kept is not None and kept[0] is u.decl:
            found = inf.of[uid] = kept[2]
        else:
            saved = (checker.types, checker.locals, checker.bound, checker.narrow, checker.diags, checker.origins,
                     checker.vars)
            checker.narrow, checker.diags = {}, []
            inf.walked[uid] = (checker.check_unit(u), checker.diags)
            (checker.types, checker.locals, checker.bound, checker.narrow, checker.diags, checker.origins,
             checker.vars) = saved
            found = checker.keep_result(u, called)
        inf.depth -= 1
        return found

    def result_key(self, u: Unit, called: tuple[T, ...]) -> tuple[int, Any]:
        """The key of ``u``'s result in ``_RESULTS``: its declaration, and all its walk reads besides
        (as a type check's context, ``check_types``, with the results of the `def`s it calls)."""
        return id(u.decl), (self.shared, checks_key(u, self.entry)[0], called)

    def keep_result(self, u: Unit, called: tuple[T, ...]) -> T:
        """``u``'s result, just found by walking it, for the next program that has it in the same context."""
        if len(_RESULTS) >= _RESULTS_LIMIT:
            _RESULTS.clear()
        holds = (checks_key(u, self.entry)[1], [*self.records.values(), *self.enums.values()])
        found = self.inferred.of[id(u)]
        _RESULTS[self.result_key(u, called)] = (u.decl, holds, found)
        return found

    def bind(self, env: Scope, binder: Any, names: tuple[str, ...]) -> Scope:
        """Each local's type: a parameter's annotation, a `let`'s or `var`'s value's, a loop's items' (a
        map's keys and values, where a loop over one names two)."""
        if isinstance(binder, A.Param):
            found = [self.resolve(binder.type)]
        elif isinstance(binder, (A.For, A.CompFor)):
            over = strip(self.types[id(binder.iter)])
            if over[0] in _NO_LOOP:  # (as ``reference.iterate`` refuses it)
                self.diags.append(Diagnostic("C004", f"cannot loop over `{show(over)}`", binder.iter.span,
                                             related=self.related(binder.iter),
                                             help="use split(text) for its words" if over[0] in ("str", "enum")
                                             else None))
            found = [self.element(over)] if len(names) == 1 else list(over[1:]) if over[0] == "map" else []
        else:
            found = [self.types[id(binder.value)]] if isinstance(binder, (A.Let, A.LetStmt, A.Var)) else []
            if isinstance(binder, A.Var) and found == [NONE]:
                found = [ANY]  # (a `var` set to none at first is set to something else later)
        if isinstance(binder, A.Var):
            self.vars.add(id(binder))
        self.locals.update(((id(binder), n), t) for n, t in zip(names, found))
        if found and isinstance(binder, (A.Let, A.LetStmt, A.Var)) and id(binder.value) in self.origins:
            self.origins[(id(binder), names[0])] = self.origins[id(binder.value)]
        return super().bind(env, binder, names)

    def from_override(self, e: Any, u: Unit, t: T) -> T:
        """``t``, the type ``u`` gives at ``e``, noted as an override's where ``u`` is one (``origins``)."""
        if getattr(u.decl, "override", False):
            self.origins[id(e)] = u
        return t

    def related(self, *nodes: Any) -> tuple[Related, ...]:
        """The overrides whose results gave ``nodes`` their types (``origins``): where a finding is made of
        them, in the code of the definitions they replace, it points at them too."""
        out: list[Related] = []
        for n in nodes:
            u = self.origins.get(id(n))
            if u is not None and all(r.span != u.span for r in out):
                out.append(Related(u.span, f"the `override` of `{u.written}` that gives this type"))
        return tuple(out)

    def expect(self, want: T, got: T, node: Any, what: str) -> None:
        """C004 where the value ``node`` gives, of type ``got``, is known not to be a ``want``: where it is written
        as a literal (a list, set or map, a record literal, an `if`'s or a `let`'s value), at each of its parts
        that is not (``misfits``)."""
        for part, role, part_want, part_got in self.misfits(want, got, node):
            if isinstance(part, A.Str) and strip(part_want)[0] == "enum":  # (no member of it: ``misfits``)
                enum = strip(part_want)[1]
                self.diags.append(Diagnostic("C016", f"`{part.value}` is not a member of enum `{enum}`", part.span,
                                             help=member_help(part.value, {m: enum for m in self.enums[enum].members})))
                continue
            head = f"{what} `{show(want)}` but this is `{show(part_got)}`" if not role else \
                f"{what} `{show(want)}`: this {role} is `{show(part_got)}`, not `{show(part_want)}`"
            self.diags.append(Diagnostic("C004", head, part.span, related=self.related(part),
                                         help=self.why_not(part_want, part_got, _written_items(part) is not None)))

    def misfits(self, want: T, got: T, node: Any, role: str = "") -> Any:
        """The parts of the value ``node`` gives that are known not to be of the types ``want`` says, each as
        (its node, its role in the literal it is a part of, the type it should be, its type): ``node`` itself
        where its type shows it, else, where it is written as a literal of ``want``'s kind (a list, set or
        map, a record literal where ``want`` is a record) or as an `if`'s or a `let`'s values, the parts of
        it that are not, where they are written (the items of a list of two shapes are of no one type). A
        record literal written where a record is declared is that record's only with no label the record
        does not declare (``record_faults``): a label no read of the record reaches is a slip there."""
        if not compatible(want, got, self.stands_for) or (got == NONE and want[0] not in _TAKE_NONE):
            yield node, role, want, got  # (none, where it is known to be, only where none is declared: a `T?`)
            return
        plain = strip(want)
        if plain[0] == "enum" and isinstance(node, A.Str) and node.value not in self.enums[plain[1]].members:
            yield node, role, want, got  # (a text is a member's value only where it is one: C016, ``expect``)
            return
        if isinstance(node, A.If):
            for v in (*(v for _, v in node.branches), node.otherwise):
                yield from self.misfits(want, self.types[id(v)], v, role)
        elif isinstance(node, A.Let):
            yield from self.misfits(want, self.types[id(node.body)], node.body, role)
        elif isinstance(node, (A.ListLit, A.SetLit)) and plain[0] == ("list" if isinstance(node, A.ListLit) else "set"):
            for item in node.items:
                yield from self.misfits(plain[1], self.types[id(item)], item, "item")
        elif isinstance(node, A.MapLit) and plain[0] == "map":
            for key, value in node.items:
                yield from self.misfits(plain[1], self.types[id(key)], key, "key")
                yield from self.misfits(plain[2], self.types[id(value)], value, "value")
        elif isinstance(node, (A.RecordLit, A.With)) and plain[0] == "record":
            written = _written_items(node)
            if written is None:  # (a `with` on what is no literal: its labels are held by ``t_With``, if a record's)
                return
            # (it stands for the record, so that the one fault it may have is of labels: the whole literal's)
            labels = {label: self.types[id(v)] for label, v in written.items()}
            if any(kind == "unknown" for kind, _ in self.record_faults(plain[1], labels, True)):
                yield node, role, want, got
            fields = {f.name: f for f in self.records[plain[1]].fields}
            for label, v in written.items():
                if label in fields:
                    yield from self.misfits(self.field_type_of(fields[label]), self.types[id(v)], v, f"field `{label}`")

    def field_type_of(self, f: A.FieldDecl) -> T:
        """What a record's field holds: its declared type, or none too where the field may be left out
        (`a?: int`, whose absence reads as none)."""
        declared = self.resolve(f.type)
        return optional(declared) if f.optional else declared

    def stands_for(self, got: T, name: str) -> bool:
        """Whether a value of the record type or the record literal's shape ``got`` may stand for the record
        ``name``. Records are structural: a record with every field of another (same types) may stand for it,
        and a record literal's where it gives every field the record requires, each of its type (more labels
        too: where the literal is written there, ``misfits`` refuses them): where ``record_faults`` finds none."""
        if got[0] == "shape":
            return not self.record_faults(name, dict(got[1]))
        have = {f.name: f for f in self.records[got[1]].fields}
        for f in self.records[name].fields:
            mine = have.get(f.name)
            if mine is None or (mine.optional and not f.optional):
                return False
            if not compatible(self.resolve(f.type), self.resolve(mine.type), self.stands_for):
                return False
        return True

    def record_faults(self, name: str, labels: dict[str, T], written: bool = False) -> list[tuple[str, str]]:
        """What keeps a record literal of ``labels`` (each with its value's type) from being a record ``name``,
        each as (its kind, how a C004's help says it), in the order the help says them: the fields it requires
        that are not given ("missing"), where it is ``written`` where the record is declared the labels the
        record does not declare, with a did-you-mean ("unknown"), and the fields given a value known not to be
        of the field's type ("type"); empty where nothing does. The one walk of a literal's labels against the
        record's fields: ``stands_for`` asks whether there is any, ``misfits`` whether one is of labels,
        ``why_not`` says them."""
        fields = {f.name: f for f in self.records[name].fields}
        faults = []
        missing = [f"`{n}`" for n, f in fields.items() if not f.optional and n not in labels]
        if missing:
            faults.append(("missing", f"`{name}` needs the field{'s' if len(missing) > 1 else ''} {', '.join(missing)}"))
        for k in labels if written else ():
            if k not in fields:
                close = self.suggestions.closest(k, [n for n in fields if n not in labels])
                faults.append(("unknown", f"`{name}` has no field `{k}`" + (f" (did you mean `{close}`?)" if close else "")))
        for n, f in fields.items():
            if n in labels:
                declared = self.resolve(f.type)
                if not compatible(declared, labels[n], self.stands_for):
                    faults.append(("type", f"its field `{n}` is `{show(labels[n])}`, not `{show(declared)}`"))
        return faults

    def why_not(self, want: T, got: T, written: bool = False) -> str | None:
        """The help of a C004 for ``got`` where ``want`` is declared (``expect``), where there is one to give:
        what keeps a record literal (``written`` there, or given by a definition) from being the record
        declared (or, at any depth of a list, set or map, one of them: ``record_faults``), that it is no map,
        or that a number may be a fraction where a whole one is declared."""
        if got == NONE:
            return f"`{show(want)}` is never none: declare `{show(optional(want))}` where none is meant"
        want, got = strip(want), strip(got)
        if got[0] == "shape" and want[0] == "record":
            return "; ".join(text for _, text in self.record_faults(want[1], dict(got[1]), written)) or None
        if got[0] == "shape" and want[0] == "map":
            return ("a record literal makes a record, never a map: a map is written with `=>` "
                    "(`{\"a\" => 1}`), or declare the record's type")
        if want[0] == got[0] and want[0] in ("list", "set", "map"):
            return next((h for h in map(self.why_not, want[1:], got[1:]) if h is not None), None)
        return _WHOLE_HELP if want == INT and got == NUMBER else None  # (`//`, or `number` declared, mends it)

    @staticmethod
    def element(t: T) -> T:
        """What walking a value of type ``t`` gives: a list's or set's items, a map's keys."""
        t = strip(t)
        return t[1] if t[0] in ("list", "set", "map") else ANY  # type: ignore[no-any-return]

    # -- narrowing
    def key_of(self, e: A.Name, env: Scope) -> Any:
        """How ``narrow`` names what ``e`` names: a local by its binder, a global by its name."""
        return (id(env[e.id]), e.id) if e.id in env else ("global", e.id)

    def path_key(self, e: Any, env: Scope) -> Any:
        """How ``narrow`` names what a name (``key_of``), or a path of fields of one (`r.a.b`), reads; None
        for anything else. (Values never change: two reads of one path in an expression read one value,
        and no expression assigns; a `let` naming the name again binds another.)"""
        if isinstance(e, A.Name):
            return self.key_of(e, env)
        if isinstance(e, A.Field):
            inner = self.path_key(e.obj, env)
            return None if inner is None else ("field", inner, e.name)
        return None

    def facts(self, c: Any, env: Scope) -> tuple[dict[Any, T], dict[Any, T]]:
        """What the condition ``c``, already typed, tells of the names (or paths of fields of them,
        ``path_key``) it tests against none where it
        holds and where it fails: `x == none` (or `!=`), under `not`, and each item of an `and` where it
        holds, of an `or` where it fails. (A name certainly none is unknown where it is not: that code
        runs only where a definition it came from gives something else, as another variant's may.)"""
        if isinstance(c, A.Not):
            yes, no = self.facts(c.operand, env)
            return no, yes
        if isinstance(c, A.Compare) and c.op in ("==", "!="):
            x = c.left if isinstance(c.right, A.NoneLit) else c.right if isinstance(c.left, A.NoneLit) else None
            key = self.path_key(x, env)
            if key is not None:
                t = self.types.get(id(x), ANY)
                other = ANY if t == NONE else strip(t)
                return ({key: NONE}, {key: other}) if c.op == "==" else ({key: other}, {key: NONE})
        elif isinstance(c, A.BoolOp):
            told: dict[Any, T] = {}
            for item in c.items:
                told.update(self.facts(item, env)[0 if c.op == "and" else 1])
            return (told, {}) if c.op == "and" else ({}, told)
        return {}, {}

    def forget(self, told: dict[Any, T], names: Any = None) -> dict[Any, T]:
        """``told`` without what it tells of a procedure's `var` (of those named ``names``, or any): a value
        that `:=` may change between the test and the read."""
        def var(key: Any) -> bool:
            while key[0] == "field":
                key = key[1]
            return key[0] in self.vars and (names is None or key[1] in names)

        return {k: t for k, t in told.items() if not var(k)} if told else told

    # -- statements
    def block(self, stmts: tuple[A.Stmt, ...], env: Scope) -> None:
        """What a `require` in a block told (``stmt``) holds to the block's end, no further: code after
        the block also runs where the block did not (an `if`'s other branch, a loop's no turn, a step
        reached by `goto`)."""
        outside = self.narrow
        super().block(stmts, env)
        if self.narrow is not outside:
            self.narrow = self.forget(outside, _assigned(stmts))

    def stmt(self, s: Any, env: Scope) -> Scope:
        """A procedure's statement. A test against none in an `if` narrows in its blocks as in an `if`
        expression (``t_If``), and a `require`'s in the rest of its block (which runs only where it holds),
        as does an `if`'s when the rest runs only one way through it (its other blocks certainly jump,
        ``_leaves``): what its tests tell there, less what that way's block may change. What they told of
        a `var` holds until the `var` may be changed: at a `:=` of it, and from the start of a loop (or to
        the end of a block) whose body changes it."""
        if isinstance(s, A.Require):
            env = super().stmt(s, env)
            self.hold(self.facts(s.cond, env)[0])
            return env
        if isinstance(s, A.Assign):
            env = super().stmt(s, env)
            self.narrow = self.forget(self.narrow, (s.name,))
            return env
        if isinstance(s, A.For):
            changed = _assigned(s.body)
            self.narrow = self.forget(self.narrow, changed)
            env = super().stmt(s, env)
            self.narrow = self.forget(self.narrow, changed)
            return env
        if not isinstance(s, A.IfStmt):
            return super().stmt(s, env)
        outside = self.narrow
        tested: dict[Any, T] = {}  # what the tests told where each so far failed
        through = []  # what holds after each block that may fall through to the rest (its way's tests)
        for c, b in s.branches:
            self.expr(c, env)
            yes, no = self.facts(c, env)
            failed = self.narrow
            self.narrow = {**failed, **yes} if yes else failed
            self.block(b, env)
            if not A.leaves(b):
                through.append(self.forget({**tested, **yes}, _assigned(b)))
            self.narrow = {**failed, **no} if no else failed
            tested = {**tested, **no}
        if s.otherwise is None:
            through.append(tested)
        else:
            self.block(s.otherwise, env)
            if not A.leaves(s.otherwise):
                through.append(self.forget(tested, _assigned(s.otherwise)))
        self.narrow = self.forget(outside, _assigned(s))
        if len(through) == 1:  # (the rest runs only that way, as after a `require` of its tests)
            self.hold(through[0])
        return env

    def hold(self, told: dict[Any, T]) -> None:
        """``told`` holds in the rest of the block (``block`` ends it there): after a `require` of the tests
        that told it, or an `if` whose one way through is where they hold."""
        if told:
            self.narrow = {**self.narrow, **told}

    def x_Lambda(self, e: A.Lambda, env: Scope) -> None:
        """A lambda is called later, when a `var` it reads may have been changed: nothing told of one holds."""
        outside, self.narrow = self.narrow, self.forget(self.narrow)
        super().x_Lambda(e, env)
        self.narrow = outside

    # -- expressions
    _typings: ClassVar[dict[type, Any]] = {}  # ``t_KIND`` of each node class (None: the walk's, and the kind's type)

    def expr(self, e: Any, env: Scope) -> None:
        kind = type(e)
        try:
            method = self._typings[kind]
        except KeyError:
            method = self._typings[kind] = getattr(type(self), "t_" + kind.__name__, None)
        if method is None:
            super().expr(e, env)
        self.types[id(e)] = _KINDS.get(kind, ANY) if method is None else method(self, e, env)

    def infer(self, e: Any, env: Scope) -> T:
        if e is None:
            return ANY
        self.expr(e, env)
        return self.types[id(e)]

    def t_Name(self, e: A.Name, env: Scope) -> T:
        if self.narrow:
            told = self.narrow.get(self.key_of(e, env))
            if told is not None:
                return told
        if e.id in env:
            key = (id(env[e.id]), e.id)
            if key in self.origins:
                self.origins[id(e)] = self.origins[key]
            return self.locals.get(key, ANY)
        found = self.bound.get(id(e))
        if isinstance(found, UnitRef):
            return self.from_override(e, found.unit, self.unit_type(found.unit))
        return ("enum", self.members[e.id]) if isinstance(found, Member) else ANY

    def t_ListLit(self, e: A.ListLit, env: Scope) -> T:
        items = [self.infer(i, env) for i in e.items]
        return ("list", unify(items))

    def t_SetLit(self, e: A.SetLit, env: Scope) -> T:
        return ("set", unify([self.infer(i, env) for i in e.items]))

    def t_MapLit(self, e: A.MapLit, env: Scope) -> T:
        ks = [self.infer(k, env) for k, _ in e.items]
        vs = [self.infer(v, env) for _, v in e.items]
        return ("map", unify(ks), unify(vs))

    def t_Comp(self, e: A.Comp, env: Scope) -> T:
        outside = self.narrow
        if e.kind == "gen":  # (walked later, as a lambda is called: ``x_Lambda``)
            self.narrow = self.forget(outside)
        self.x_Comp(e, env)
        self.narrow = outside
        elem = self.types[id(e.elem)]
        if e.kind == "set":
            return ("set", elem)
        if e.kind == "map":
            return ("map", self.types[id(e.key)], elem)
        return ("list", elem)

    def t_Let(self, e: A.Let, env: Scope) -> T:
        self.x_Let(e, env)
        if id(e.body) in self.origins:
            self.origins[id(e)] = self.origins[id(e.body)]
        return self.types[id(e.body)]

    def t_RecordLit(self, e: A.RecordLit, env: Scope) -> T:
        return ("shape", tuple(sorted((k, self.infer(v, env)) for k, v in e.items)))

    def t_If(self, e: A.If, env: Scope) -> T:
        """Each branch with what its condition tells (``facts``), each later one with what the earlier
        ones' failing tells."""
        outs, outside = [], self.narrow
        for c, v in e.branches:
            self.infer(c, env)
            yes, no = self.facts(c, env)
            failed = self.narrow
            self.narrow = {**failed, **yes} if yes else failed
            outs.append(self.infer(v, env))
            self.narrow = {**failed, **no} if no else failed
        outs.append(self.infer(e.otherwise, env))
        self.narrow = outside
        return unify(outs)

    def t_BoolOp(self, e: A.BoolOp, env: Scope) -> T:
        """Each item with what the items before it tell, holding (`and`) or failing (`or`)."""
        outside = self.narrow
        for item in e.items:
            self.infer(item, env)
            told = self.facts(item, env)[0 if e.op == "and" else 1]
            if told:
                self.narrow = {**self.narrow, **told}
        self.narrow = outside
        return BOOL

    def t_Compare(self, e: A.Compare, env: Scope) -> T:
        a, b = self.infer(e.left, env), self.infer(e.right, env)
        if e.op in ("<", "<=", ">", ">=") and _kinds_differ(a, b):
            self.diags.append(Diagnostic("C004", f"cannot compare `{show(a)}` {e.op} `{show(b)}`", e.span,
                                         related=self.related(e.left, e.right)))
        if e.op in ("in", "notin") and b[0] in ("int", "number", "bool"):  # (`x in none` is false)
            self.diags.append(Diagnostic("C004", f"`in` needs a collection on its right, not `{show(b)}`", e.right.span,
                                         related=self.related(e.right)))
        return BOOL

    def t_BinOp(self, e: A.BinOp, env: Scope) -> T:
        a, b = self.infer(e.left, env), self.infer(e.right, env)
        if e.op == "??":
            return b if a == NONE else unify([strip(a), b])
        left, right = a, b
        a, b = strip(a), strip(b)  # (none is no operand either: what an operator refuses of a `T?`'s `T` it refuses of it)
        kinds = {a[0], b[0]}
        if "any" in kinds:
            return ANY
        if a[0] in _NUMERIC and b[0] in _NUMERIC:
            return arithmetic(e.op, a, b)
        if e.op == "+":
            if a == b and a[0] in ("str", "list"):
                return a
            if a[0] == "list" and b[0] == "list":
                return ("list", unify([a[1], b[1]]))
        self.diags.append(Diagnostic("C004", f"cannot compute `{show(left)}` {e.op} `{show(right)}`", e.span,
                                     related=self.related(e.left, e.right),
                                     help=_ROLL_HELP if DICE in (a, b) else None))
        return ANY

    def t_Neg(self, e: A.Neg, env: Scope) -> T:
        t = strip(self.infer(e.operand, env))
        if t[0] not in ("int", "number", "any"):
            self.diags.append(Diagnostic("C004", f"cannot negate `{show(t)}`", e.span, related=self.related(e.operand)))
        return t

    def t_Field(self, e: A.Field, env: Scope) -> T:
        """The field's type; where a test against none decided its path (``facts``), what it told."""
        t = self.field_type(e, env)
        if self.narrow:
            key = self.path_key(e, env)
            told = self.narrow.get(key) if key is not None else None
            if told is not None:
                return told
        return t

    def field_type(self, e: A.Field, env: Scope) -> T:
        if isinstance(self.referee(e.obj, env), (ModuleRef, DataRef)):
            return ANY
        t = strip(self.infer(e.obj, env))
        if t[0] == "shape":
            return next((v for k, v in t[1] if k == e.name), ANY)
        if t[0] == "record":
            rec = self.records[t[1]]
            fields = {f.name: f for f in rec.fields}
            if e.name not in fields:
                close = self.suggestions.closest(e.name, fields)
                self.diags.append(Diagnostic("C012", f"record `{rec.name}` has no field `{e.name}`", e.span,
                                             related=self.related(e.obj),
                                             help=f"did you mean `{close}`?" if close else
                                             f"fields: {', '.join(list(fields)[:20])}" + (", ..." if len(fields) > 20 else "")))
                return ANY
            return self.resolve(fields[e.name].type)
        if t[0] in ("int", "number", "str", "bool", "list", "set", "dice"):
            self.diags.append(Diagnostic("C012", f"`{show(t)}` has no field `{e.name}`", e.span,
                                         related=self.related(e.obj)))
        return ANY

    def t_Index(self, e: A.Index, env: Scope) -> T:
        table = self.bound.get(id(e))  # (a table's lookup)
        if isinstance(table, UnitRef):
            for k in e.keys:
                self.infer(k, env)
            return self.resolve(table.unit.ret)
        t = strip(self.infer(e.obj, env))
        keys = [self.infer(k, env) for k in e.keys]
        if id(e.obj) in self.origins:  # (an item of an override's list is of the type it gives)
            self.origins[id(e)] = self.origins[id(e.obj)]
        if t[0] in ("list", "str") and len(keys) == 1:
            self.list_index(e.keys[0], keys[0])
        if t[0] == "list":
            return t[1]  # type: ignore[no-any-return]
        if t[0] == "map":
            return t[2]  # type: ignore[no-any-return]
        return ANY

    def list_index(self, key: A.Expr, t: T) -> None:
        """A list (or a text) is read at a whole-number position: a key known to be anything else (a
        `number`, which may be a fraction, a text, a truth value, none...) is C004, as the run refuses it (E001,
        E011 in `get`). A map's key may be any value: not looked at."""
        got = strip(t)
        if got[0] not in _INDEX_KINDS:
            self.diags.append(Diagnostic("C004", f"a list index must be a whole number, not `{show(got)}`", key.span,
                                         related=self.related(key),
                                         help=_WHOLE_HELP if got == NUMBER else _ROLL_HELP if got == DICE else None))

    def t_With(self, e: A.With, env: Scope) -> T:
        t = strip(self.infer(e.obj, env))
        for _, v in e.items:
            self.infer(v, env)
        if t[0] == "shape":
            return ("shape", tuple(sorted({**dict(t[1]), **{k: self.types[id(v)] for k, v in e.items}}.items())))
        if t[0] == "record":  # (each value held to its field's declared type, as a record literal's are)
            fields = {f.name: f for f in self.records[t[1]].fields}
            for i, (k, v) in enumerate(e.items):
                if k not in fields:  # (at the label, where the slip is: its place, where the parser gave it)
                    at = e.label_spans[i] if i < len(e.label_spans) else v.span
                    self.diags.append(Diagnostic("C012", f"record `{t[1]}` has no field `{k}`", at))
                else:
                    self.expect(self.field_type_of(fields[k]), self.types[id(v)], v, f"the field `{k}` of `{t[1]}` is")
        return t

    def t_Call(self, e: A.Call, env: Scope) -> T:
        arg_types = [self.infer(a, env) for a in e.args]
        for _, v in e.kwargs:
            self.infer(v, env)
        found = self.referee(e.func, env)
        if isinstance(e.func, A.Name) and e.func.id not in env:
            u = found.unit if isinstance(found, UnitRef) else None
            if u is not None and u.kind in (*_DEFS, "decision", "procedure") and u.arity is not None:
                for p, t, a in zip(u.params, arg_types, e.args):
                    if p.type is not None:
                        self.expect(self.resolve(p.type), t, a, f"parameter `{p.name}` of `{u.written}` is")
                if u.kind in _DEFS:
                    return self.from_override(e, u, self.result_of(u))
                if u.kind == "decision":
                    return BOOL
            if isinstance(found, BuiltinRef):
                return self.builtin_type(e, e.func.id, arg_types, env)
        else:
            self.infer(e.func, env)
        return ANY


    def builtin_type(self, e: A.Call, name: str, arg_types: list[T], env: Scope) -> T:
        """A call of a built-in: its arguments checked (``taken``; `get(xs, i)` reads a list as `xs[i]` does),
        and what it gives: as its arguments say where they say more than its definition declares
        (``builtin_call``, ``typed_builtin``, ``_BY_ARGUMENT``), else as that declares (``_builtin_result``)."""
        if not self.taken(e, name, arg_types):
            return ANY
        if name == "get" and len(e.args) > 1 and strip(arg_types[0])[0] == "list":
            self.list_index(e.args[1], arg_types[1])
        if name in _COLLECTION_FIRST and e.args:
            return self.builtin_call(e, name, arg_types, env)
        if name in _TYPED_BUILTINS:
            return self.typed_builtin(e, name, arg_types)
        by_argument = _BY_ARGUMENT.get(name, {}).get(strip(arg_types[0])) if arg_types else None
        return by_argument if by_argument is not None else _builtin_result(name)

    def typed_builtin(self, e: A.Call, name: str, arg_types: list[T]) -> T:
        """`closest(text, names)`: a text (or none) from a text and a list or set of texts; `rows(t)` and
        `columns(t)`: a list."""
        if name != "closest":
            return ("list", ANY)
        self.expect(STR, arg_types[0], e.args[0], "`closest` reads a text: its first argument must be")
        names = arg_types[1] if len(arg_types) > 1 else ANY
        if names[0] not in ("list", "set", "any") or self.element(names)[0] not in ("str", "enum", "any"):
            self.diags.append(Diagnostic("C004", f"`closest` chooses among a list or set of texts, not `{show(names)}`",
                                         e.args[1].span))
        return STR

    def taken(self, e: A.Call, name: str, arg_types: list[T]) -> bool:
        """Whether each argument of a built-in is of the kind its definition declares it takes
        (``lib.builtins.Builtin.takes``: a collection, or a whole number), and no truth value where it reads numbers
        (``lib.builtins.NO_TRUTH``), where its type is known; else a C004 for the first that is not
        (``min(a, b)`` is ``min`` of ``a`` with ``b`` for no items)."""
        from ..lib.builtins import BUILTINS, NO_TRUTH, TAKES, takes_none

        b = BUILTINS.get(name)
        for i, (kind, t, arg) in enumerate(zip(b.takes if b is not None else (), arg_types, e.args)):
            got = ANY if t[0] == "shape" else strip(t)  # (a record literal's shape: a map of its fields)
            if not kind or got[0] in _TAKEN_KINDS[kind] or (got == NONE and b is not None and takes_none(b, i)):
                continue
            extra = (f"its second argument is the value when there are no items: write `{name}([...])` "
                     "for the least or greatest of several") if name in ("min", "max") and len(e.args) > 1 else \
                _WHOLE_HELP if got == NUMBER else None
            self.diags.append(Diagnostic("C004", f"`{name}` needs {TAKES[kind]} as its {_ORDINALS[i]} argument, "
                                                 f"not `{show(got)}`", arg.span, related=self.related(arg), help=extra))
            return False
        read = _READ_BY_INT if name == "int" else _NUMERIC_READ
        for i, (t, arg) in enumerate(zip(arg_types if name in NO_TRUTH else (), e.args)):
            got = strip(t)
            if got[0] not in read:  # (a truth value is no number: ``lib.builtins._no_truth``; nor is a list...)
                number = "a number or a text" if name == "int" else "a number"
                truth = "a truth value is no number: `if b then 1 else 0` counts it"
                self.diags.append(Diagnostic("C004", f"`{name}` needs {number} as its {_ORDINALS[i]} argument, "
                                                     f"not `{show(got)}`", arg.span, related=self.related(arg),
                                             help=truth if got == BOOL else _ROLL_HELP if got == DICE else None))
                return False
        return True

    def builtin_call(self, e: A.Call, name: str, arg_types: list[T], env: Scope) -> T:
        """A built-in that reads a collection (its first argument one: ``taken``), not a generator where
        it is counted, and items it compares or adds must be of one kind. What it gives, where that is known."""
        first, arg = arg_types[0], e.args[0]
        first = ANY if first[0] == "shape" else strip(first)  # (a record's a map of its fields)
        if isinstance(arg, A.Comp) and arg.kind == "gen" and name == "len":
            self.diags.append(Diagnostic("C004", "`len` needs a list, set, map or text, not a generator", arg.span,
                                         help="write the comprehension in brackets: `len([...])`, or use `count`"))
            return INT
        if name in _ORDERING and isinstance(arg, (A.ListLit, A.SetLit)):
            items = [self.infer(i, env) for i in arg.items]
            for x in items[1:]:
                if _kinds_differ(items[0], x):
                    verb = "adds" if name == "sum" else "compares"
                    self.diags.append(Diagnostic("C004", f"`{name}` {verb} its items, and these mix "
                                                         f"`{show(items[0])}` and `{show(x)}`", arg.span))
                    return ANY
        if name == "sum":
            added = strip(self.element(first))
            if added[0] not in ("int", "number", "any"):
                self.diags.append(Diagnostic("C004", f"`sum` adds numbers, not `{show(added)}`", arg.span,
                                             related=self.related(arg)))
            return added if added[0] in _NUMERIC else ANY  # (of items of unknown type: a number, whole or not)
        if name in ("len", "count"):
            return INT
        if name in ("min", "max") and first[0] in ("list", "set") and len(e.args) == 1:
            return self.element(first)
        if name in ("sorted", "sort_by") and first[0] in ("list", "set"):
            return ("list", first[1])
        return ANY


# built-ins whose first argument is a collection, and those that compare (or add) its items
_DEFS = ("def", "rule")  # the kinds of a `def`
# the inferred types a `def` named as a value is given (``unit_type``): one word each, so `explain`'s lines
# stay short; `none` is left out (a `def` that is none is a place a variant's override fills)
_WORDS = frozenset({INT, NUMBER, STR, BOOL, DICE})
# the kinds of value no loop walks (a text neither: ``reference.iterate``; none is left to the run)
_NO_LOOP = frozenset({"int", "number", "str", "bool", "enum", "dice", "fn"})
# built-ins checked further than what their arguments are (``TypeChecker.builtin_call``)
_COLLECTION_FIRST = frozenset({"len", "count", "sum", "min", "max", "sorted", "sort_by"})
# the types of value each kind a built-in takes (``lib.builtins.TAKES``) admits: any other is known not to be one
_TAKEN_KINDS = {"items": frozenset({"list", "set", "map", "any"}),
                "sized": frozenset({"list", "set", "map", "str", "enum", "any"}),
                "map": frozenset({"map", "record", "any"}), "keyed": frozenset({"list", "map", "record", "any"}),
                "whole": frozenset({"int", "any"})}  # (none where it is the default: ``lib.builtins.takes_none``)
# the types of a list's index the run takes (``reference.index_of``): a whole number, or what the check does not
# know; not `none`, known to be none, which is no position (a `T?` is looked at as its `T`: where it is none is
# left to the run, as everywhere: ``compatible``), nor dice (`2d6` is dice, no face: `roll(d)`'s face, `any`, is)
_INDEX_KINDS = frozenset({"int", "any"})
# the declared types a value known to be none fits (``TypeChecker.misfits``): a `T?`, none, or what is not known
_TAKE_NONE = frozenset({"opt", "none", "any"})
_ORDINALS = ("first", "second", "third", "fourth", "fifth")
# the types of value the built-ins that read numbers take (``lib.builtins.NO_TRUTH``; dice are no number, a roll's
# face is), and `int`, which reads a text too (an enum's member is one): any other, none too, is refused by the run
# (E011) and, where the check knows it, by the check (``TypeChecker.taken``)
_NUMERIC_READ = frozenset({"int", "number", "any"})
_READ_BY_INT = _NUMERIC_READ | {"str", "enum"}
_TYPED_BUILTINS = frozenset({"closest", "rows", "columns"})  # (``TypeChecker.typed_builtin``)
_SCALAR_RESULT: dict[Any, T] = {int: INT, bool: BOOL, str: STR}  # a built-in's result of one kind, as a type
# a built-in's declared result that is no one kind of value (``lib.builtins.RESULTS`` has none for it), as a type
_DECLARED_RESULT: dict[str, T] = {"Number": NUMBER, "int | None": ("opt", INT)}
_BUILTIN_RESULTS: dict[str, T] = {}  # by name, from ``lib.builtins.RESULTS`` (filled at the first need)
# what a built-in gives by its argument's type, where that says more than its definition declares
# (``TypeChecker.builtin_type``): `abs(x)` is of `x`'s type, a number or what the check does not know (an `int`
# may be given: not a `number`), and `int(x)` of a number an `int`, never none (of a text, `int?`: declared)
_BY_ARGUMENT: dict[str, dict[T, T]] = {"abs": {INT: INT, NUMBER: NUMBER, ANY: ANY}, "int": {INT: INT, NUMBER: INT}}


def _builtin_result(name: str) -> T:
    """The type of what a built-in gives whatever its arguments, where its definition declares it: one
    kind, a number or a whole number or none."""
    if not _BUILTIN_RESULTS:
        from ..lib.builtins import BUILTINS, RESULTS  # (its definition's declared result: read there, once)

        _BUILTIN_RESULTS.update({n: _DECLARED_RESULT.get(b.fn.__annotations__.get("return", ""), ANY)
                                 for n, b in BUILTINS.items()})
        _BUILTIN_RESULTS.update({n: _SCALAR_RESULT.get(k, ANY) for n, k in RESULTS.items()})
    return _BUILTIN_RESULTS.get(name, ANY)
_ORDERING = frozenset({"sum", "min", "max"})  # (`sorted` orders values of every kind: none, numbers, texts, lists)
_ORDERED_KINDS = frozenset({"int", "number", "str", "bool", "list", "set", "map", "record", "none", "dice", "fn"})


def _kinds_differ(a: T, b: T) -> bool:
    """Two values certain to be of different kinds, which the language does not order one against
    the other (an enum's member is its text)."""
    ka, kb = _ORDER_KIND.get(a[0], a[0]), _ORDER_KIND.get(b[0], b[0])
    return ka != kb and ka in _ORDERED_KINDS and kb in _ORDERED_KINDS and "none" not in (ka, kb)


# the arithmetic types, and what an operator gives of them (``arithmetic``)
_NUMERIC = frozenset({"int", "number"})
_WHOLE_OPS = frozenset({"+", "-", "*", "%"})  # (whole of whole numbers; `/` may give a fraction, `//` never)
_ORDER_KIND = {"enum": "str", "number": "int"}  # (an enum's member is its text; numbers are ordered together)
_ROLL_HELP = "dice are not a roll: `roll(d)` rolls the dice `d`"
_WHOLE_HELP = ("a `number` may be a fraction (`/` divides exactly): `//` divides to a whole number, "
               "rounded down; or declare `number` where a fraction is meant")


def arithmetic(op: str, a: T, b: T) -> T:
    """The type of ``a op b``, of two numbers: the operator's, not the values'. `/` gives a `number`
    (even `4/2`, which is 2), `//` an `int`; `+ - * %` an `int` of two `int`s, else a `number` (`7/2 % 1`
    is `1/2`)."""
    if op == "//":
        return INT
    if op in _WHOLE_OPS and a == INT and b == INT:
        return INT
    return NUMBER


def compatible(want: T, got: T, stands_for: Any = None) -> bool:
    """Whether a value of type ``got`` may be one of type ``want`` (where it is not, certainly: none, whose
    `T?` is not tracked, and what is not known pass). ``stands_for(got, name)`` (``TypeChecker.stands_for``)
    says whether a record, or a record literal's shape, may stand for the record ``name``. A record
    literal makes a record (docs/language.md, "Records and maps"): it is no map, but `{}`, which is both."""
    want, got = strip(want), strip(got)
    if want == ANY or got == ANY or want == got or want[0] == "shape":  # (no declared type is a shape)
        return True
    if got[0] == "shape" and want[0] != "record":
        return want[0] == "map" and not got[1]
    if want == NUMBER and got == INT:
        return True  # (a whole number is a number; a number may be no whole one)
    if got == NONE:
        return True  # optional-ness is not tracked; none is checked at run time
    if want[0] == got[0] and want[0] in ("list", "set"):
        return compatible(want[1], got[1], stands_for)
    if want[0] == "map" and got[0] == "map":
        return compatible(want[1], got[1], stands_for) and compatible(want[2], got[2], stands_for)
    if want[0] == "enum" and got == STR:
        return True
    if got[0] == "enum" and want == STR:
        return True
    if want[0] == "record" and got[0] in ("record", "shape"):
        return stands_for is not None and bool(stands_for(got, want[1]))
    return False


def unify(ts: list[T]) -> T:
    """The type of a value of one of the types ``ts``: their one type, ``T?`` where some may be none,
    ``none`` where all are; ``any`` where one is, or where they differ."""
    first: T | None = None
    maybe_none = False
    for t in ts:
        if t == ANY:
            return ANY
        if t == NONE:
            maybe_none = True
            continue
        if t[0] == "opt":
            maybe_none, t = True, t[1]
        if t != first:
            if first is None:
                first = t
            elif {t, first} == {INT, NUMBER}:
                first = NUMBER  # (a whole number or a fraction: a number)
            else:
                return ANY
    if first is None:
        return NONE if maybe_none else ANY
    return ("opt", first) if maybe_none else first


def optional(t: T) -> T:
    """``T?``: a ``T`` or none."""
    return t if t in (ANY, NONE) or t[0] == "opt" else ("opt", t)


def strip(t: T) -> T:
    """What a ``T?`` is where it is not none."""
    return t[1] if t[0] == "opt" else t  # type: ignore[no-any-return]


MAX_RESULT_DEPTH = 40  # how many walks for a `def`'s result may be within one another (``result_of``)
# each `def`'s inferred result by its declaration and the context of its walk (``result_of``), with what
# the context names by identity; as ``_TYPED``, kept across the programs of one process
_RESULTS: dict[tuple[int, Any], tuple[object, object, T]] = {}
_RESULTS_LIMIT = 10_000

# the declarations whose check found nothing, by declaration and context (``check_types``)
_TYPED = A.ContextMemo()


def check_types(program: Program) -> list[Diagnostic]:
    """The type check of every declaration, each unit's types kept (``Unit.types``). A declaration's
    check reads, besides the declaration, the namespace's records, enums and their members, and what
    each global name it mentions is (the declaration it names, or data, or a module): one that found
    nothing finds nothing again where those are the same (``_TYPED``), as in each variant of a base
    ruleset for most of the base's (their types are then made at the first need: ``node_types``)."""
    diags: list[Diagnostic] = []
    inferred = Inferred()
    for ns in program.loaded.namespaces.values():
        checker = TypeChecker(ns, diags, program, inferred=inferred)
        inferred.checkers[ns.key] = checker
        for binding in ns.data.values():  # (a data import's declared type: its names are known types)
            if binding.type is not None:
                checker.resolve(binding.type)
        shared = checker.shared
        kinds = [*checker.records.values(), *checker.enums.values()]
        for key, d in ns.defs.items():
            unit = program.units.get((ns.key, key))
            own, unit_holds, _ = checks_key(unit, program.entry.key) if unit is not None else ((), None, ())
            holds: list[Any] = [kinds, ns.cell_overrides.get(key), unit_holds]
            if unit is not None and unit.kind in _DEFS and id(unit) not in inferred.of:
                checker.result_of(unit)  # (its result first: kept, or found by walking it now)
            called = inferred.called.get(id(unit)) or _called_results(checker, unit)  # (a callee overridden
            context = (shared, own,  # (of data, nothing)                        may give another type)
                       id(ns.cell_overrides.get(key)), called)  # (a variant's cells of a table are its own)
            _TYPED.once(d, context, holds, diags, _check_decl, checker, unit, d)
    return diags


def _written_items(node: Any) -> dict[str, Any] | None:
    """The labels of a record written as a literal, each with the value written for it: a record literal's, or
    a `with` on one (`{a: 1} with {b: 2}`, a `with` of those's too), its values over the literal's; None for a
    `with` on anything else."""
    if isinstance(node, A.RecordLit):
        return dict(node.items)
    inner = _written_items(node.obj) if isinstance(node, A.With) else None
    return None if inner is None else {**inner, **dict(node.items)}


def _assigned(stmts: Any) -> set[str]:
    """The names `:=` sets anywhere in ``stmts``."""
    return {s.name for s in A.nodes(stmts) if isinstance(s, A.Assign)}


def _called_results(checker: TypeChecker, unit: Unit | None) -> tuple[T, ...]:
    """The results of the `def`s without a declared one that ``unit`` names, each inferred (``result_of``)."""
    if unit is None:
        return ()
    of, out = checker.inferred.of, []
    for r in unit.globals:
        if type(r) is UnitRef:
            u = r.unit
            if u.ret is None and u.kind in _DEFS:
                found = of.get(id(u))
                out.append(checker.result_of(u) if found is None else found)
    return tuple(out)


def _check_decl(checker: TypeChecker, unit: Unit | None, d: A.Decl) -> None:
    if unit is not None:
        walked = checker.inferred.walked.pop(id(unit), None)  # (walked for its result: its findings are made)
        if walked is not None:
            unit.types = walked[0]
            checker.diags.extend(walked[1])
        else:
            unit.types = checker.check_unit(unit)
    for f in d.fields if isinstance(d, A.RecordDecl) else ():
        checker.resolve(f.type)


def node_types(program: Program, unit: Unit) -> dict[int, T]:
    """The type the check inferred for each expression node of ``unit``, by the node's identity (as
    ``bind.binding`` keeps its referees); made now for a unit whose declaration was checked before."""
    if unit.types is None:
        unit.types = TypeChecker(program.loaded.namespaces[unit.ns], [], program).check_unit(unit)
    return unit.types

"""Static checks: an ordered list of named passes over the loaded and compiled program.

Binding, the reference graph, names, arities, tables, steps and statements are ``program.PASSES``,
run as the program is made; the passes here add what needs the whole program.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, get_args

from . import ast as A
from .bind import DataRef, ModuleRef, UnitRef, sites
from .program import Program
from ..core.diagnostics import Diagnostic, Related, Span, Suggestions, closest_name


MAX_COMPARED_LINES = 1000


# An expression carries no citation, nor does anything under it (expressions, a comprehension's
# clauses, a lambda's parameters and their types): the walk for citations stops at one, where most of
# a declaration's nodes lie (tests/test_diagnostics.py holds the grammar's node types to this)
UNCITED = frozenset(get_args(A.Expr))


def _cites_in(decl: Any) -> Iterator[tuple[str, Span]]:
    """Every ``cite`` string in a declaration, with the span of what carries it, in the order of
    ``ast.nodes`` (each node before those under it); expressions are not entered (``UNCITED``)."""
    todo = [decl]
    while todo:
        x = todo.pop()
        if isinstance(x, tuple):
            todo += reversed(x)
        elif isinstance(x, A.Node) and type(x) not in UNCITED:
            d = x.__dict__  # (a node's fields, its span among them)
            for c in d.get("cites", ()):
                yield c, d["span"]
            todo += x._values(d)[::-1]


def check_citations(program: Program) -> list[Diagnostic]:
    out = []
    for ns in program.loaded.namespaces.values():
        if ns.clauses is None:
            continue
        known = ns.clauses
        suggestions = Suggestions()
        overrides = [ov for ovs in ns.cell_overrides.values() for ov in ovs]
        for decl in [*ns.defs.values(), *overrides]:
            for cite, span in A.per_node("cites", decl, lambda d: tuple(_cites_in(d))):
                if cite not in known:
                    close = suggestions.closest(cite, known)
                    out.append(Diagnostic("C010", f"`{cite}` is not a clause of the catalogue", span,
                                          help=f"did you mean `{close}`?" if close else
                                          f"add it to the catalogue named at `{ns.clauses_span}`"))
    return out


def check_unused(program: Program) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    entry = program.entry
    if entry.base_missing:  # (what the base it names would use is unknown: its error is said)
        return out
    for (nskey, name), unit in program.units.items():
        if nskey != entry.key or unit.used or name.startswith("_"):
            continue
        if unit.kind in ("query", "cycle policy"):
            continue
        if entry.origin.get(name) != entry.entry:
            continue  # definitions inherited from an extended ruleset are the base's business
        out.append(Diagnostic("W101", f"`{name}` is never used", unit.span,
                              help="remove it, or prefix its name with `_` to keep it"))
    aliases = {alias for alias, span in entry.import_spans.items() if span.file == entry.entry}
    used_names: set[str] = set()
    for unit in program.units.values() if aliases else ():  # (until each alias is found used)
        if unit.ns == entry.key:
            used_names.update(name for found in sites(unit) for name in aliases.intersection(found.names)
                              if isinstance(unit.bound.get(found.names[name][0]), (ModuleRef, DataRef)))
            if len(used_names) == len(aliases):
                break
    inherited = [alias for alias, span in entry.import_spans.items() if span.file != entry.entry]
    for alias, span in entry.import_spans.items():
        if alias in aliases and alias not in used_names:
            close = closest_name(alias, inherited)  # (a re-binding misnamed leaves the base's data in play)
            out.append(Diagnostic("W103", f"import `{alias}` is never used", span,
                                  help=f"did you mean `{close}`, the name the extended ruleset imports its data as?"
                                  if close else None))
    return out


def check_copied_overrides(program: Program) -> list[Diagnostic]:
    """An override of the entry ruleset that repeats most lines of the definition it replaces: it
    should call `base` for what stays (a later errata of the base would be lost in the copy)."""
    out = []
    entry = program.entry
    lines: dict[str, list[str]] = {}
    for decl, prev in entry.replaced:
        if decl.span.file != entry.entry or isinstance(decl, A.CycleDecl):  # a policy is not called: no `base`
            continue
        sources = program.loaded.sources
        mine, theirs = _lines_of(lines, decl.span, sources), _lines_of(lines, prev.span, sources)
        # (the comparison costs the product of the lengths: a definition of thousands of lines is not compared)
        import difflib  # (here: a ruleset that overrides nothing does not import it)

        if (4 <= len(theirs) <= MAX_COMPARED_LINES and len(mine) <= MAX_COMPARED_LINES
                and difflib.SequenceMatcher(None, mine, theirs, autojunk=False).ratio() >= 0.75):
            out.append(Diagnostic("W104", f"`{decl.name}` copies the definition it overrides nearly line for line",
                                  decl.span, help="call `base(...)` for what stays, and write only what changes",
                                  related=(Related(prev.span, "the definition it overrides"),)))
    return out


def _lines_of(lines: dict[str, list[str]], span: Span, sources: dict[str, str]) -> list[str]:
    """A declaration's lines, stripped, without the word `override` (``lines``: the files split)."""
    if span.file not in lines:
        lines[span.file] = sources.get(span.file, "").splitlines()
    text = lines[span.file][span.line - 1:span.end_line]
    return [ln.strip().removeprefix("override ") for ln in text if ln.strip()]


def check_module_data(program: Program) -> list[Diagnostic]:
    """A ruleset imported as a module runs against its own imports: where the importer binds other
    data under a name the module reads, calling into the module does not read the importer's."""
    out = []
    entry = program.entry
    for alias, key in entry.modules.items():
        sub = program.loaded.namespaces.get(key)
        span = entry.import_spans.get(alias)
        if sub is None or span is None or span.file != entry.entry:
            continue
        for name, mine in entry.data.items():
            theirs = sub.data.get(name)
            if theirs is not None and theirs.path != mine.path:
                out.append(Diagnostic("W105", f"`{alias}` reads its own `{name}` ({theirs.path}), not this ruleset's",
                                      span, help=f"`{alias}.NAME` runs against the module's own data; to change a "
                                                 f"rule for this ruleset's `{name}`, `extends` the ruleset and "
                                                 "`override` the rule (calling `base`)"))
    return out


def check_endless(program: Program) -> list[Diagnostic]:
    """A definition of the entry ruleset that calls (or reads) itself in every evaluation of its body:
    no run that reaches it ever ends (each fails at the recursion limit, E005)."""
    out = []
    entry = program.entry
    for (nskey, name), unit in program.units.items():
        if (nskey != entry.key or unit.kind not in ("def", "rule", "query") or unit.body is None
                or entry.origin.get(name) != entry.entry or not any(name in s.names for s in sites(unit))):
            continue  # (a definition that names itself nowhere, as most, is not walked)
        found = _certain_self_use(unit.body, unit)
        if found is not None:
            out.append(Diagnostic("W106", f"`{name}` {'calls' if isinstance(found, A.Call) else 'reads'} itself "
                                          "whatever happens: no run that reaches it can compute it", found.span,
                                  help="let some case give a value without it (`if ... then ... else ...`)",
                                  related=(Related(unit.span, "its definition"),)))
    return out


def _certain_self_use(e: Any, unit: Any) -> Any:
    """A call (or read) of ``unit`` itself that every evaluation of ``e`` makes, or None: the parts of
    an expression evaluated only sometimes (branches past the first condition, the operands after the
    first of `and`/`or`, the right of `??`, a comprehension's items and filters past its first source,
    a function's body) are not looked into."""
    if isinstance(e, A.Name):
        found = unit.bound.get(id(e))
        return e if isinstance(found, UnitRef) and found.unit is unit and unit.arity is None else None
    if isinstance(e, A.Lambda):
        return None
    if isinstance(e, A.If):
        parts: tuple[Any, ...] = (e.branches[0][0],)
    elif isinstance(e, A.BoolOp):
        parts = e.items[:1]
    elif isinstance(e, A.BinOp) and e.op == "??":
        parts = (e.left,)
    elif isinstance(e, A.Comp):
        parts = (e.fors[0].iter,)
    elif isinstance(e, A.Call):
        parts = (e.func, *e.args, *(v for _, v in e.kwargs))
    elif isinstance(e, A.Node):
        parts = tuple(getattr(e, f) for f in e._compared)
    elif isinstance(e, tuple):
        parts = e
    else:
        return None
    for part in parts:
        found = _certain_self_use(part, unit)
        if found is not None:
            return found
    if isinstance(e, A.Call):
        target = unit.bound.get(id(e.func))
        if isinstance(target, UnitRef) and target.unit is unit:
            return e
    return None


def check_queries(program: Program) -> list[Diagnostic]:
    if program.entry.defs and not program.queries() and not _is_library(program):
        first = next(iter(program.entry.defs.values()))
        return [Diagnostic("W101", "ruleset declares no `query`, so nothing can run it", first.span,
                           help="add `query main = ...`")]
    return []


def _is_library(program: Program) -> bool:
    return any(program.entry.key in ns.modules.values() for ns in program.loaded.namespaces.values())


def check_types_pass(program: Program) -> list[Diagnostic]:
    from .types import check_types

    return check_types(program)


PASSES: list[tuple[str, Callable[[Program], list[Diagnostic]]]] = [
    ("types", check_types_pass),
    ("citations", check_citations),
    ("unused", check_unused),
    ("copied overrides", check_copied_overrides),
    ("module data", check_module_data),
    ("endless", check_endless),
    ("queries", check_queries),
]


def run_passes(program: Program) -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for _name, check in PASSES:
        out.extend(check(program))
    return out

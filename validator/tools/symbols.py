"""What each name of a ruleset's text refers to, for the language server (``lsp``): where names
are defined and used, what a name under the cursor means, what may be written at a place, and
what renaming a definition changes.

It reads the modules and namespaces of a ruleset checked by ``api.check_text`` (the checks are
``check``'s own, never repeated here) and adds only what an editor needs that the checker does
not keep: the place of each name in the text. Positions are 0-based (line, column in
characters); the server converts them to the protocol's units.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..core import confine
from ..core.diagnostics import Span, one_line
from ..lang import ast as A
from ..lang.bind import BuiltinRef, DataRef, Member, ModuleRef, Scope, TypeRef, UnitRef, Walker, meaning
from ..lang.loader import Namespace, kind_of
from ..lang.program import Program
from ..lang.syntax import KEYWORDS
from ..lang.types import ANY, TypeChecker, show
from ..lib.builtins import BUILTINS

IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# a place inside the quotes of a citation: `cite "A-1", "B-` (the cursor at the end)
_IN_CITE = re.compile(r"""\bcite\s+(?:"[^"\n]*"\s*,\s*)*"([^"\n]*)$""")
_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


@dataclass(frozen=True)
class Occurrence:
    """A name written in the text. ``kind``: "decl" (the name a declaration defines), "global",
    "local" (``binder`` is what binds it), "member" (``m.x`` of an imported module: ``binder`` is
    ``m``), "field" (``x.f`` otherwise: ``binder`` binds ``x`` when it is a local; or a record's
    field where it is declared: ``binder`` is the record), "type" (a type
    annotation's name), "table" (``override t[...]``), "cycle" (a decision a cycle policy names)."""

    span: Span
    name: str
    kind: str
    binder: Any = None

    def covers(self, line: int, col: int) -> bool:
        """Whether the 0-based position lies on the name (its end included, where a cursor stops)."""
        return self.span.line - 1 == line and self.span.col - 1 <= col <= self.span.end_col - 1


# ---------------------------------------------------------------- places in the text


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_\[\]<>!&#|~])")


def markdown_text(text: str) -> str:
    """A text from a ruleset or a catalogue shown as itself in a Markdown hover: every character that
    could start a link, an image (fetched by the editor from anywhere), an HTML tag, an entity, code or
    emphasis is escaped with a backslash, which CommonMark allows before any ASCII punctuation."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", text)


def markdown_code(text: str) -> str:
    """A text (a file name, say) shown as inline code in a Markdown hover, whatever it holds: fenced by
    one backtick more than its longest run of backticks (a backslash escapes nothing inside a code
    span, so a backtick in the text would end it), with a space inside each fence when the text
    begins or ends with a backtick or a space (CommonMark strips one such pair), and its line breaks
    and control characters shown escaped (``one_line``: a blank line would end the span)."""
    text = one_line(text)
    fence = "`" * (max(map(len, re.findall("`+", text)), default=0) + 1)
    pad = " " if text[:1] in ("`", " ") or text[-1:] in ("`", " ") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def _line_starts(text: str) -> list[int]:
    return [0] + [m.end() for m in re.finditer("\n", text)]


def _offset(starts: list[int], line: int, col: int) -> int:
    return starts[min(line, len(starts)) - 1] + col - 1


def _span_at(path: str, starts: list[int], offset: int, length: int) -> Span:
    line = max(i for i, s in enumerate(starts, 1) if s <= offset)
    col = offset - starts[line - 1] + 1
    return Span(path, line, col, line, col + length)


def name_spans(decl: A.Decl | A.CellOverride, text: str, starts: list[int], names: list[str]) -> list[Span]:
    """Where a declaration writes each of ``names``, first occurrence after the previous (a
    declaration's own name comes before anything it holds; keywords are never names)."""
    if not decl.span.line:
        return []
    pos = _offset(starts, decl.span.line, decl.span.col)
    end = _offset(starts, decl.span.end_line, decl.span.end_col) if decl.span.end_line else len(text)
    out = []
    for name in names:
        m = re.compile(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])").search(text, pos, end)
        if m is None:
            break
        out.append(_span_at(decl.span.file, starts, m.start(), len(name)))
        pos = m.end()
    return out


# ---------------------------------------------------------------- the walk


class _Walk(Walker):
    """Every name of a module with what it is, locals told from globals by their scopes (``Walker``:
    each local with the node that binds it)."""

    def __init__(self, module: A.Module, text: str):
        self.module = module
        self.text = text
        self.starts = _line_starts(text)
        self.out: list[Occurrence] = []
        self.modules: set[str] = set()

    def run(self, module_aliases: set[str]) -> list[Occurrence]:
        self.modules = module_aliases
        for d in self.module.directives:
            if isinstance(d, A.CellOverride):
                for sp in name_spans(d, self.text, self.starts, [d.table]):
                    self.out.append(Occurrence(sp, d.table, "table"))
                self.node((d.keys, d.value), {})
            elif isinstance(d, A.Import):
                self.typeref(d.type)  # (`import "f.yaml" as d: T`: the types it names)
        for decl in self.module.decls:
            self.decl(decl)
        return self.out

    def decl(self, d: Any) -> None:
        if isinstance(d, A.CycleDecl):
            for sp, name in zip(name_spans(d, self.text, self.starts, list(d.names)), d.names):
                self.out.append(Occurrence(sp, name, "cycle"))
            self.node(d.policies, {"cycle": d})
            return
        for sp in name_spans(d, self.text, self.starts, [d.name]):
            self.out.append(Occurrence(sp, d.name, "decl"))
        params = getattr(d, "params", None) or ()
        env = self.bind_params(params, {})
        for attr in ("type", "ret"):
            self.typeref(getattr(d, attr, None))
        if isinstance(d, A.RecordDecl):
            for f in d.fields:
                if f.span.line:
                    self.out.append(Occurrence(Span(f.span.file, f.span.line, f.span.col, f.span.line,
                                                    f.span.col + len(f.name)), f.name, "field", d))
                self.typeref(f.type)
        elif isinstance(d, A.EnumDecl):
            for sp, member in zip(name_spans(d, self.text, self.starts, [d.name, *d.members])[1:], d.members):
                self.out.append(Occurrence(sp, member, "global"))
        elif isinstance(d, A.ProcedureDecl):
            self.block(d.body, env)
        elif isinstance(d, A.TableDecl):
            grid = d.grid or ()
            if len(d.params) == 2:
                grid = grid[1:]  # the header row: column keys, not references
            self.node(tuple(row[1:] for row in grid), {})  # (a row's first cell is its key)
            self.node((d.source,), {})
        else:
            self.node(tuple(getattr(d, attr, None) for attr in ("value", "body", "default")), env)

    def bind_params(self, params: Any, env: dict[str, Any]) -> dict[str, Any]:
        env = dict(env)
        for p in params:
            if p.span.line:
                self.out.append(Occurrence(Span(p.span.file, p.span.line, p.span.col, p.span.line,
                                                p.span.col + len(p.name)), p.name, "local", p))
            self.typeref(p.type)
            env[p.name] = p
        return env

    def typeref(self, t: A.TypeRef | None) -> None:
        if t is None:
            return
        if t.span.line:
            self.out.append(Occurrence(Span(t.span.file, t.span.line, t.span.col, t.span.line,
                                            t.span.col + len(t.name)), t.name, "type"))
        for a in t.args:
            self.typeref(a)

    def x_Name(self, e: A.Name, env: Scope) -> None:
        self.out.append(Occurrence(e.span, e.id, "local", env[e.id]) if e.id in env else Occurrence(e.span, e.id, "global"))

    def x_Field(self, e: A.Field, env: Scope) -> None:
        if e.span.line:
            end = e.span.end_col
            where = Span(e.span.file, e.span.end_line, end - len(e.name), e.span.end_line, end)
            if isinstance(e.obj, A.Name) and e.obj.id not in env and e.obj.id in self.modules:
                self.out.append(Occurrence(where, e.name, "member", e.obj.id))
            else:  # a record's field (or a data mapping's key): `binder` is what it is read from
                local = env.get(e.obj.id) if isinstance(e.obj, A.Name) else None
                self.out.append(Occurrence(where, e.name, "field", local))
        self.expr(e.obj, env)


def occurrences(module: A.Module, text: str, module_aliases: set[str]) -> list[Occurrence]:
    """Every name ``module`` writes, in text order."""
    found = _Walk(module, text).run(module_aliases)
    return sorted(found, key=lambda o: (o.span.line, o.span.col))


# ---------------------------------------------------------------- a checked ruleset, for an editor


@dataclass
class Target:
    """What a name means: ``kind`` "def" (``obj``, its declaration, in namespace ``ns``), "member" (an enum's
    member: ``obj`` is the enum), "field" (``obj`` the first field of that name, ``extra`` every
    (record, field) it may be), "local", "data", "module" or "builtin"."""

    kind: str
    name: str
    obj: Any = None  # a declaration, a local's binder, a field, a data file, a namespace or a built-in
    ns: Namespace | None = None
    extra: Any = None


class Index:
    """The names of a ruleset checked with ``api.check_text`` (``rs``)."""

    def __init__(self, rs: Any):
        self.rs = rs
        self.program = rs.program
        self.loaded = rs.program.loaded
        self._occ: dict[str, list[Occurrence]] = {}

    # -- where things are
    def namespace_of(self, shown: str) -> Namespace:
        """The namespace a module is read in: the entry's if it is the entry or what it extends."""
        if shown in self.loaded.entry.chain:
            return self.loaded.entry
        for ns in self.loaded.namespaces.values():
            if shown in ns.chain:
                return ns  # type: ignore[no-any-return]
        return self.loaded.entry  # type: ignore[no-any-return]

    def occurrences(self, shown: str) -> list[Occurrence]:
        if shown not in self._occ:
            module = self.loaded.modules.get(shown)
            text = self.loaded.sources.get(shown, "")
            aliases = set(self.namespace_of(shown).modules)
            self._occ[shown] = occurrences(module, text, aliases) if module is not None else []
        return self._occ[shown]

    def at(self, shown: str, line: int, col: int) -> Occurrence | None:
        for occ in self.occurrences(shown):
            if occ.covers(line, col):
                return occ
        return None

    # -- what a name means
    def meaning(self, shown: str, occ: Occurrence) -> Target | None:
        ns = self.namespace_of(shown)
        if occ.kind == "local":
            return Target("local", occ.name, occ.binder, ns)
        if occ.kind == "member":
            sub_key = ns.modules.get(occ.binder)
            sub = self.loaded.namespaces.get(sub_key) if sub_key else None
            return self.global_target(sub, occ.name) if sub is not None else None
        if occ.kind == "field":
            return self.field_target(ns, occ)
        if occ.kind == "decl":  # this very declaration (a base's, where a variant overrides it)
            module = self.loaded.modules.get(shown)
            for d in module.decls if module is not None else ():
                if getattr(d, "name", None) == occ.name and d.span.line <= occ.span.line <= d.span.end_line:
                    return Target("def", occ.name, d, ns)
        if occ.name == A.BASE:  # in an override, the definition it replaces (``loader.extend``)
            for d, prev in ns.replaced:
                if d.span.file == shown and d.span.line <= occ.span.line <= d.span.end_line:
                    return Target("def", prev.name, prev, ns)
        return self.global_target(ns, occ.name)

    def field_target(self, ns: Namespace, occ: Occurrence) -> Target | None:
        """A field read with ``x.f``: the fields of that name among the records (of ``x``'s record
        when it is known: see ``binder_type``)."""
        records = [d for d in ns.defs.values() if isinstance(d, A.RecordDecl)]
        typed = None if isinstance(occ.binder, A.RecordDecl) else _record_name(self.program, ns, occ.binder, None)
        if isinstance(occ.binder, A.RecordDecl):  # the field's own declaration
            records = [occ.binder]
        elif any(r.name == typed for r in records):
            records = [r for r in records if r.name == typed]
        found = [(r, f) for r in records for f in r.fields if f.name == occ.name]
        return Target("field", occ.name, found[0][1], ns, found) if found else None

    def global_target(self, ns: Namespace, name: str) -> Target | None:
        """What the engines bind the name to (``bind.meaning``)."""
        found = meaning(self.program, ns, name)
        if isinstance(found, (UnitRef, TypeRef)):
            return Target("def", name, ns.defs[name], ns)
        if isinstance(found, Member):
            return Target("member", name, ns.defs[self.program.members(ns.key)[name]], ns)
        if isinstance(found, DataRef):
            return Target("data", name, ns.data[name], ns)
        if isinstance(found, ModuleRef):
            return Target("module", name, found.ns, ns)
        return Target("builtin", name, found.builtin, ns) if isinstance(found, BuiltinRef) else None

    def definition(self, t: Target) -> Span | None:
        """Where a name is defined: a definition's name, an enum's member, a local's binder, an
        imported data file or ruleset (at its start)."""
        if t.kind == "def":
            return self.decl_name(t.obj) or t.obj.span  # type: ignore[no-any-return]
        if t.kind == "member":
            src = self.loaded.sources.get(t.obj.span.file, "")
            spans = name_spans(t.obj, src, _line_starts(src), [t.obj.name, t.name])
            return spans[1] if len(spans) == 2 else t.obj.span  # type: ignore[no-any-return]
        if t.kind in ("local", "field"):
            span = getattr(t.obj, "span", None)  # (a field's starts with its name)
            return Span(span.file, span.line, span.col, span.line, span.col + len(t.name)) \
                if t.kind == "field" and span is not None and span.line else span
        if t.kind == "data":
            return Span(t.obj.path, 1, 1, 1, 1)
        if t.kind == "module" and t.obj is not None:
            return Span(t.obj.entry, 1, 1, 1, 1)
        return None

    def decl_name(self, decl: A.Decl) -> Span | None:
        src = self.loaded.sources.get(decl.span.file)
        if src is None:
            return None
        spans = name_spans(decl, src, _line_starts(src), [decl.name])
        return spans[0] if spans else None

    def hover(self, t: Target) -> str:
        """Markdown: what the name is, its type, and the text of each clause it cites."""
        if t.kind == "builtin":
            return f"```\n{t.name}  (built-in)\n```\n\n{t.obj.doc}".rstrip()
        if t.kind == "local":
            b = t.obj
            what = {A.Param: "parameter", A.Let: "local", A.LetStmt: "local", A.Var: "procedure variable",
                    A.For: "loop variable", A.CompFor: "loop variable"}.get(type(b), "local")
            typ = f": {A.type_text(b.type)}" if isinstance(b, A.Param) and b.type is not None else self._local_type(t)
            return f"```\n{t.name}{typ}  ({what})\n```"
        if t.kind == "data":
            return f"```\n{t.name}  (data)\n```\n\nimported from {markdown_code(str(t.obj.path))}"
        if t.kind == "module":
            return f"```\n{t.name}  (module)\n```\n\nimported ruleset {markdown_code(str(t.obj.entry) if t.obj else '?')}"
        if t.kind == "member":
            return f"```\n{t.name}: {t.obj.name}  (member of enum {t.obj.name})\n```"
        if t.kind == "field":
            return "```\n" + "\n".join(f"{r.name}.{f.name}{'?' if f.optional else ''}: {A.type_text(f.type)}"
                                         for r, f in t.extra) + "\n```"
        assert t.ns is not None
        return self._hover_decl(t.obj, t.ns)

    def _local_type(self, t: Target) -> str:
        """``: TYPE`` of a local (see ``binder_type``); "" when nothing is known of it."""
        found = binder_type(self.program, t.ns, t.obj, t.name) if t.ns is not None else None
        return f": {show(found)}" if found is not None else ""

    def _hover_decl(self, d: Any, ns: Namespace) -> str:
        kind = kind_of(d)
        params = getattr(d, "params", None)
        sig = f"{kind} {d.name}"
        if params is not None:
            sig += "(" + ", ".join(p.name + (f": {A.type_text(p.type)}" if p.type else "") for p in params) + ")"
        checker = TypeChecker(ns, [], self.program, bound=bound_in(self.program, ns))
        if isinstance(d, A.RecordDecl):
            sig += " {" + ", ".join(f"{f.name}{'?' if f.optional else ''}: {A.type_text(f.type)}" for f in d.fields) + "}"
        elif isinstance(d, A.EnumDecl):
            sig += " {" + ", ".join(d.members) + "}"
        elif getattr(d, "ret", None) is not None:
            sig += f" -> {A.type_text(d.ret)}"
        elif isinstance(d, A.DefDecl):
            inferred = checker.infer(d.body, checker.bind_params(d.params or (), {}))
            if inferred[0] != "any":
                sig += f" -> {show(inferred)}" if d.params is not None else f": {show(inferred)}"
        elif params is None or isinstance(d, A.InputDecl):
            unit = self.program.units.get((ns.key, d.name))
            sig += f": {show(checker.unit_type(unit) if unit is not None else ANY)}"
        parts = [f"```\n{sig}\n```"]
        origin = ns.origin.get(d.name)
        if origin is not None and origin != ns.entry:
            parts.append(f"defined in {markdown_code(str(origin))}")
        cites = getattr(d, "cites", ()) or ()
        for c in cites:
            text = (ns.clauses or {}).get(c)
            parts.append(f"**{markdown_text(c)}**: {markdown_text(text.strip())}" if text
                         else f"**{markdown_text(c)}**: not in the clause catalogue")
        return "\n\n".join(parts)

    def clause(self, shown: str, clause_id: str) -> str | None:
        clauses = self.namespace_of(shown).clauses or {}
        text = clauses.get(clause_id)
        return f"**{markdown_text(clause_id)}**: {markdown_text(text.strip())}" if text is not None else None

    # -- what may be written here
    def completions(self, shown: str, line_text: str, line: int, col: int) -> list[tuple[str, str, str]]:
        """(label, kind, detail) for the place: clause ids inside a citation's quotes, a module's
        definitions or a data mapping's keys after ``m.``, record fields after ``x.``, else names."""
        ns = self.namespace_of(shown)
        before = line_text[:col]
        cite = _IN_CITE.search(before)
        if cite is not None:
            return [(cid, "clause", text.strip()) for cid, text in (ns.clauses or {}).items()]
        if _inside_string(before):
            return []
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\.([A-Za-z_0-9]*)$", before)
        if m is not None:
            obj = m.group(1)
            if obj in ns.modules and obj not in self._locals_at(shown, line, col):
                sub = self.loaded.namespaces.get(ns.modules[obj])
                return [(n, _kind_of(d), "") for n, d in (sub.defs if sub else {}).items() if " " not in n]
            if obj in ns.data and isinstance(ns.data[obj].value, dict):
                return [(str(k), "field", f"data `{obj}`") for k in ns.data[obj].value]
            return self._fields(ns, self._locals_at(shown, line, col).get(obj))
        items = [(n, "local", "") for n in self._locals_at(shown, line, col)]
        items += [(n, _kind_of(d), "") for n, d in ns.defs.items() if " " not in n and "," not in n]
        items += [(m, "enum member", d.name) for d in ns.defs.values() if isinstance(d, A.EnumDecl) for m in d.members]
        items += [(n, "data", ns.data[n].path) for n in ns.data]
        items += [(n, "module", "") for n in ns.modules]
        items += [(n, "builtin", b.doc.split("\n")[0]) for n, b in BUILTINS.items()]
        items += [(k, "keyword", "") for k in sorted(KEYWORDS)]
        first: dict[str, tuple[str, str, str]] = {}
        for item in items:  # a local hides a global of its name, a definition a built-in
            first.setdefault(item[0], item)
        return list(first.values())

    def _fields(self, ns: Namespace, binder: Any) -> list[tuple[str, str, str]]:
        records = [d for d in ns.defs.values() if isinstance(d, A.RecordDecl)]
        typed = _record_name(self.program, ns, binder, None)
        if typed is not None and any(r.name == typed for r in records):
            records = [r for r in records if r.name == typed]
        out: dict[str, tuple[str, str, str]] = {}
        for r in records:
            for f in r.fields:
                out.setdefault(f.name, (f.name, "field", f"{r.name}.{f.name}: {A.type_text(f.type)}"))
        return list(out.values())

    def _locals_at(self, shown: str, line: int, col: int) -> dict[str, Any]:
        """The locals whose names are used in the declaration around the position (their binders)."""
        module = self.loaded.modules.get(shown)
        if module is None:
            return {}
        for d in module.decls:
            sp = d.span
            if sp.line and sp.line - 1 <= line <= sp.end_line - 1:
                out: dict[str, Any] = {p.name: p for p in (getattr(d, "params", None) or ())}
                for occ in self.occurrences(shown):
                    if occ.kind == "local" and sp.line - 1 <= occ.span.line - 1 <= sp.end_line - 1:
                        out.setdefault(occ.name, occ.binder)
                return out
        return {}

    # -- renaming
    def base_file(self, t: Target) -> str:
        """The file of a definition's first version: the base-most module of its namespace's chain
        that defines it (a variant's overrides and uses are renamed with it)."""
        assert t.ns is not None
        for shown in reversed(t.ns.chain):
            module = self.loaded.modules.get(shown)
            if module is not None and any(getattr(d, "name", None) == t.name for d in module.decls):
                return shown  # type: ignore[no-any-return]
        return t.ns.origin.get(t.name, t.ns.entry)  # type: ignore[no-any-return]

    def rename_spans(self, name: str, base: str) -> dict[str, list[Span]]:
        """Every place of this ruleset's modules that writes the definition ``name`` first made in
        the file ``base``: definitions, overrides, uses not hidden by a local, ``m.name`` through
        an import of a namespace that holds it."""
        out: dict[str, list[Span]] = {}
        for shown in self.loaded.modules:
            ns = self.namespace_of(shown)
            here = name in ns.defs and base in ns.chain
            for occ in self.occurrences(shown):
                if occ.name != name:
                    continue
                if occ.kind in ("decl", "global", "type", "table", "cycle") and here:
                    out.setdefault(shown, []).append(occ.span)
                elif occ.kind == "member":
                    sub = self.loaded.namespaces.get(ns.modules.get(occ.binder, ""))
                    if sub is not None and name in sub.defs and base in sub.chain:
                        out.setdefault(shown, []).append(occ.span)
        return out

    def captured(self, new: str, spans: dict[str, list[Span]]) -> Span | None:
        """A place to rename that a local named ``new`` would capture (the declaration around it
        binds ``new``), if any."""
        for shown, found in spans.items():
            module = self.loaded.modules.get(shown)
            for d in module.decls if module is not None else ():
                inside = [s for s in found if d.span.line <= s.line <= d.span.end_line]
                if inside and any(o.kind == "local" and o.name == new and d.span.line <= o.span.line <= d.span.end_line
                                  for o in self.occurrences(shown)):
                    return inside[0]
        return None


def _inside_string(before: str) -> bool:
    return '"' in _STRING.sub("", before)


def _kind_of(d: Any) -> str:
    return getattr(d, "kind", None) or type(d).__name__.removesuffix("Decl").lower()


def string_at(line_text: str, col: int) -> str | None:
    """The text of the string literal around a column of a line, if any."""
    for m in _STRING.finditer(line_text):
        if m.start() < col < m.end() or (col == m.end() and m.end() == len(line_text)):
            return m.group(1)
    return None


def resolve_reference(ref: str, base: str) -> Path | None:
    """The file an ``extends``/``import`` path names, from the file that writes it (``bundled:``
    names in ruleval's own bundle); None when there is none."""
    bundled = confine.bundle_roots()
    real = Path(os.path.realpath(base))
    root: confine.Root | None = (bundled if bundled is not None and confine.is_inside(real, bundled)
                                 else confine.find_root(real))
    if ref.startswith(confine.BUNDLE_PREFIX):
        bundle, root = confine.bundle_root(), confine.bundle_roots()
        target = bundle / "rulesets" / ref[len(confine.BUNDLE_PREFIX):] if bundle is not None else None
    else:
        target = Path(base).parent / ref
    if target is None or root is None:
        return None
    try:  # the rule the loader follows: inside its root, a regular file
        return confine.check_file(target, root)
    except confine.Refused:
        return None


def ruleset_files_under(root: Path, limit: int = 500) -> Iterator[Path]:
    """The rulesets under a folder (a bounded number, hidden folders and virtual environments
    skipped): the files a rename may have to change. Only regular files that resolve inside the
    folder (``confine``): a symlink to a device or out of the workspace, a FIFO, is skipped."""
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in ("node_modules", "__pycache__"))
        for f in sorted(filenames):
            if f.endswith(".rules"):
                count += 1
                if count > limit:
                    return
                try:
                    confine.check_file(Path(dirpath) / f, root)
                except confine.Refused:
                    continue
                yield Path(dirpath) / f


def is_identifier(text: str) -> bool:
    return bool(IDENT.fullmatch(text)) and text not in KEYWORDS



def binder_type(program: Program, ns: Namespace, b: Any, name: str | None) -> Any:
    """The type of the local ``name`` bound by ``b`` (``name`` None: the one a single-name binder
    binds) as the type pass gives it (``TypeChecker.bind``), read with the globals alone in scope;
    None when that says nothing (the value reads other locals, or its type is `any`)."""
    checker = TypeChecker(ns, [], program, bound=bound_in(program, ns))
    try:
        names = b.names if isinstance(b, A.CompFor) else (b.name,)
        checker.infer(getattr(b, "value", None) or getattr(b, "iter", None), {})
        checker.bind({}, b, names)
        found = checker.locals.get((id(b), name or names[0]))
    except Exception:  # a half-typed text: no type, never a failure of the editor's request
        return None
    return None if found is None or found[0] == "any" else found


def bound_in(program: Program, ns: Namespace) -> dict[int, Any]:
    """What the names of a namespace's units mean (``Unit.bound``), for a type read outside a unit's check."""
    return {k: r for u in program.units.values() if u.ns == ns.key for k, r in u.bound.items()}


def _record_name(program: Program, ns: Namespace, b: Any, name: str | None) -> str | None:
    t = binder_type(program, ns, b, name)
    return t[1] if t is not None and t[0] == "record" else None

__all__ = ["Index", "Occurrence", "Target", "is_identifier", "occurrences", "resolve_reference", "ruleset_files_under",
           "string_at"]

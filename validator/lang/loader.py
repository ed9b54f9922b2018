"""Module stage: resolve ``extends`` and ``import`` into namespaces of definitions.

A namespace is one entry module merged with everything it extends (a variant's ``override``
definitions replace the base's). ``import "x.rules" as m`` makes another namespace reachable as
``m.name``; ``import "x.yaml" as d`` binds data. Every path is resolved inside the ruleset root
(the nearest folder holding ``ruleval.toml``, else the entry file's folder), symlinks included.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from . import ast as A
from ..core import jsontext
from ..core import blobcache, confine
from ..core.frozen import frozen
from . import astcache, schemarefs
from ..core.confine import ROOT_MARKER, Refused, display_path, path_view, root_of_resolved
from ..core.confine import real_path as real_path  # (where the tools find it, beside ``display_path``)
from ..core.diagnostics import Diagnostic, DiagnosticError, Related, Span, closest_name, utf8_fault
from .kinds import DeclaredKinds, Unfit
from .syntax import MAX_SOURCE_BYTES, RefusedSource, decode_source, parse_module

CLAUSE_ID = re.compile(r"[^\s\x00-\x1f\x7f]{1,80}")  # one word, as rules cite it (`DIP-S4`, `R1`)

MAX_DATA_BYTES = 20_000_000
RULESET_SUFFIXES = (".rules",)
DATA_SUFFIXES = (".yaml", ".yml", ".json")
DATA_KIND, DATA_FORMAT = "data", "1"  # (the entries of YAML data files' values: ``_yaml_value``)
MAX_KEPT_DATA_BYTES = 40_000_000


@dataclass
class DataSchema:
    """A JSON Schema loaded for a data import (``with schema``): the schema, its shown path, the files
    its ``$ref``s name (by URI, and shown), and the import that named it."""

    value: dict[str, Any]
    path: str
    resources: dict[str, Any]
    files: list[str]
    span: Span


@dataclass
class DataBinding:
    value: Any
    path: str
    span: Span
    schema: DataSchema | None = None
    readable: bool = True  # read without a C008 (its value is then the file's)
    root: confine.Root | None = None  # the root it was read under (the bundle's, for a bundled ruleset's data)
    unfit: tuple[str, str] | None = None  # where and how its value does not fit its declared type (``read_data``)
    type: A.TypeRef | None = None  # `import "f.yaml" as d: T`: what ``value`` is read by, once declarations are known


@dataclass
class Namespace:
    key: str
    entry: str
    defs: dict[str, A.Decl] = field(default_factory=dict)
    origin: dict[str, str] = field(default_factory=dict)
    data: dict[str, DataBinding] = field(default_factory=dict)
    modules: dict[str, str] = field(default_factory=dict)
    import_spans: dict[str, Span] = field(default_factory=dict)
    clauses: dict[str, str] | None = None
    clauses_span: Span | None = None
    clauses_path: str | None = None
    schema: dict[str, Any] | None = None
    schema_path: str | None = None
    schema_resources: dict[str, Any] = field(default_factory=dict)  # the files its `$ref`s name, by URI
    schema_files: list[str] = field(default_factory=list)  # and where they are (shown paths)
    schema_span: Span | None = None  # the `schema` directive's
    schema_root: confine.Root | None = None  # the root its file was read under
    header: A.Header | None = None
    chain: list[str] = field(default_factory=list)
    cell_overrides: dict[str, list[A.CellOverride]] = field(default_factory=dict)
    replaced: list[tuple[A.Decl, A.Decl]] = field(default_factory=list)  # (an override, what it replaced)
    base_missing: bool = False  # an `extends` found no ruleset (C005...): what its base would use is unknown

    @cached_property
    def kinds(self) -> DeclaredKinds:
        """How a value read from outside is checked against a type declared here and made the kinds it
        says, with this namespace's records and enums, a variant's own included (``kinds.DeclaredKinds``): one for the namespace,
        made at its first use, once its declarations are merged (``read_data``, then the engines:
        ``reference.Interpreter.kinds``)."""
        return DeclaredKinds({n: d for n, d in self.defs.items() if isinstance(d, (A.RecordDecl, A.EnumDecl))})


@dataclass
class Loaded:
    root: Path
    entry: Namespace
    namespaces: dict[str, Namespace]
    sources: dict[str, str]
    diagnostics: list[Diagnostic]
    read: list[str] = field(default_factory=list)  # every file resolved or read (resolved paths), failed or not
    modules: dict[str, A.Module] = field(default_factory=dict)  # the parsed modules, by shown path
    missing: list[str] = field(default_factory=list)  # where a reference found no file (resolved paths: C005)


# A module's parse and a data file's value, per process, found by the file's path (``_key``) and kept by its
# content: each entry holds the bytes it was made from, and is used only while the file reads the same
# (``_same``: its bytes are read at each use, through ``confine``), so a file rewritten at the same size
# within one tick of its clock is read afresh, and each file holds one entry, its latest. So what is made
# from an entry (kept elsewhere by the identity of its nodes and values) is kept by content too, which is
# what lets a sweep's workers forked from a process that checked a ruleset use its caches
# (``tools.sweep._on_warm_pool``).
_module_cache: dict[str, tuple[A.Module | None, str, list[Diagnostic], bytes]] = {}
_data_cache: dict[str, tuple[Any, list[Diagnostic], bytes]] = {}


def _same(raw: bytes | None, entry: tuple[Any, ...]) -> bool:
    return raw is not None and entry[-1] == raw


def _key(path: Path) -> str:
    # a parse holds its shown paths, so a cached one is only good where paths are shown the same way
    return f"{path_view().key}\0{path}"


# a schema file's value as the loader hands it out (``_read_only``), by the key of its read (``_data_cache``)
_schema_cache: dict[str, tuple[Any, Any]] = {}


def _read_only(path: Path, value: Any) -> Any:
    """A schema file's value (``load_data_file``'s), read-only (``core.frozen``): its verdicts are kept by its
    identity (``engine.state``, ``engine.facts``), so it must not change. The same copy while the file reads
    the same, so that the variants of a ruleset share one schema and its verdicts."""
    key = _key(path)
    kept = _schema_cache.get(key)
    if kept is None or kept[0] is not value:
        kept = _schema_cache[key] = (value, frozen(value))
    return kept[1]


def load_data_file(path: Path, shown: str, span: Span | None = None,
                   root: confine.Root | None = None) -> tuple[Any, list[Diagnostic]]:
    """Read YAML (``safeyaml``: safe tags, an alias budget) or JSON of a regular file under ``root``
    (``confine``); errors become C008 with the file's own line, a refused file C007 or C024."""
    key = _key(path)
    diags: list[Diagnostic] = []
    value: Any = None
    try:
        raw = confine.read_bytes(path, MAX_DATA_BYTES, root, shown)
    except Refused as exc:
        diags.append(refusal(exc, span or Span(shown, 1, 1, 1, 2), "data file"))
        return value, diags
    kept = _data_cache.get(key)
    if kept is not None and _same(raw, kept):
        return kept[0], kept[1]
    else:
        try:
            text = raw.decode("utf-8")
            if path.suffix == ".json":
                value = jsontext.loads(text, shown)  # as strictly as a state: no NaN, no huge number
            else:
                value = _yaml_value(text, shown, diags)
                if value is not None:
                    value = jsontext.exact_numbers(value)  # (0.1 is 1/10, as in a JSON data file)
        except DiagnosticError as exc:  # jsontext's S001, located in the file: here a fault of the ruleset's data
            d = exc.diagnostics[0]  # (its message says what is wrong: a syntax error's begins `invalid JSON`)
            said = d.message if d.message.startswith("invalid JSON") else f"invalid JSON: {d.message}"
            diags.append(Diagnostic("C008", said, d.span))
        except UnicodeDecodeError as exc:
            line, col, problem = utf8_fault(exc)
            diags.append(Diagnostic("C008", f"data file `{shown}` is not UTF-8: {problem}",
                                    Span(shown, line, col, line, col + 1)))
        except json.JSONDecodeError as exc:
            where = Span(shown, exc.lineno, exc.colno, exc.lineno, exc.colno + 1)
            diags.append(Diagnostic("C008", f"invalid JSON: {exc.msg}", where))
        except (ValueError, OverflowError) as exc:  # a YAML integer past Python's digit limit, say
            diags.append(Diagnostic("C008", f"data file `{shown}` cannot be read: {str(exc)[:120]}", Span(shown, 1, 1, 1, 2)))
        except RecursionError:
            diags.append(Diagnostic("C008", f"data file `{shown}` is nested too deeply", Span(shown, 1, 1, 1, 2)))
    _data_cache[key] = (value, diags, raw)
    return value, diags


def _yaml_value(text: str, shown: str, diags: list[Diagnostic]) -> Any:
    """A YAML data file's value as ``safeyaml`` reads it (its floats not yet read exactly), or None with
    its faults added to ``diags`` (a YAML error, a value JSON could not hold: C008).

    A value that passed is kept across processes (``core.blobcache``, ``DATA_KIND``) as JSON text, under
    a digest of the file's text with ruleval's own code and the Python version: such a value is
    mappings with text keys, lists, texts, whole numbers, finite floats, truth values and none
    (``jsontext.value_problem``), which JSON writes and reads back as the very same value, types and
    key order included (a float by its shortest decimal, which reads back as that float). Reading it
    back spares a process that reads only known data files parsing them and importing the YAML library
    at all (together about 3 % of the fresh-process benchmark's instructions, docs/speed.md)."""
    entry = blobcache.name(DATA_KIND, DATA_FORMAT, text) if blobcache.in_use(DATA_KIND) else None
    if entry is not None:
        kept = blobcache.load(DATA_KIND, entry, MAX_KEPT_DATA_BYTES)
        if kept is not None:
            try:
                return json.loads(kept)
            except (ValueError, RecursionError):  # (not expected of a signed entry: read the YAML)
                pass
    import yaml

    from ..core import safeyaml

    try:
        value = safeyaml.load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line, col = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        started, context = getattr(exc, "context_mark", None), getattr(exc, "context", None)
        # where what the parser was reading began (a `{` never closed, say), when not where it stopped
        related = (Related(Span(shown, started.line + 1, started.column + 1, started.line + 1, started.column + 2),
                           context),) if started is not None and context and started.line + 1 != line else ()
        diags.append(Diagnostic("C008", f"invalid YAML: {problem}", Span(shown, line, col, line, col + 1),
                                related=related))
        return None
    fault = jsontext.value_problem(value)
    if fault is not None:
        parts = tuple(x.replace("~1", "/").replace("~0", "~") for x in fault[0].split("/")[1:])
        not_text = "not text" in fault[1]
        try:
            spots = safeyaml.Positions(text)
            at = (spots.key_not_text(parts) if not_text else None) or (spots.of(parts) if parts else None)
        except (yaml.YAMLError, RecursionError):
            at = None
        hint = ("YAML reads yes, no, on, off, true and false as truth values and bare numbers as "
                "numbers: quote a key meant as text" if not_text else None)
        diags.append(Diagnostic("C008", f"data file `{shown}` holds {fault[1]} at `{fault[0] or '/'}`",
                                Span(shown, *at) if at else Span(shown, 1, 1, 1, 2), pointer=fault[0], help=hint))
        return None
    if entry is not None:
        body = json.dumps(value).encode("ascii")
        if len(body) <= MAX_KEPT_DATA_BYTES:
            blobcache.store(DATA_KIND, entry, body)
    return value


def refusal(exc: Refused, span: Span, kind: str) -> Diagnostic:
    """The diagnostic of a file the confinement rule refused (never with the file's content)."""
    if exc.reason == "outside":
        return Diagnostic("C007", f"{kind} {exc.message}", span,
                          help=exc.help or f"keep imported files under the folder holding `{ROOT_MARKER}`")
    if exc.reason == "special":
        return Diagnostic("C024", f"{kind} {exc.message}", span,
                          help="a ruleset reads only regular files (no devices, FIFOs, folders or /proc)")
    if exc.reason == "large":
        return Diagnostic("C008", f"{kind} {exc.message}", span, help="split the file, or keep only what the ruleset reads")
    if exc.reason == "missing":
        return Diagnostic("C005", f"{kind} {exc.message}", span)
    return Diagnostic("C008", f"{kind} {exc.message}", span)



def read_data(ns: Namespace) -> None:
    """Each data import declared with a type (``import "f.yaml" as d: T``) read by it, as a state's input
    is (``kinds.DeclaredKinds``, with the namespace's records and enums, the variant's own included): the
    objects the type declares maps are maps, the lists it declares sets sets; every other object of a
    data file stays a record. Data that does not fit its type is kept as the file gives it, what is
    wrong with it noted (``DataBinding.unfit``: ``data.type_findings`` says it, C030)."""
    for alias, binding in ns.data.items():
        if binding.type is not None and binding.readable:
            try:
                value = ns.kinds.fit(binding.value, binding.type)
            except Unfit as bad:
                ns.data[alias] = replace(binding, unfit=(bad.pointer(), bad.message))
            else:
                if value is not binding.value:
                    ns.data[alias] = replace(binding, value=value)


class Loader:
    def __init__(self, entry: Path, overlay: dict[str, str] | None = None):
        self.entry = entry.resolve()
        self.overlay = overlay or {}  # resolved path -> text to read instead of the file (an editor's buffers)
        self.modules: dict[str, A.Module] = {}
        self.root = root_of_resolved(self.entry.parent)  # (``find_root(entry)``, the entry resolved once)
        self.roots: dict[Path, confine.Root] = {}  # ``root_for``'s, by the file asked about
        self.sources: dict[str, str] = {}
        self.diags: list[Diagnostic] = []
        self.namespaces: dict[str, Namespace] = {}
        self.loading: list[str] = []
        self.read: list[str] = [str(self.entry)]
        self.missing: list[str] = []

    # -- paths
    def root_for(self, base: Path) -> confine.Root:
        """The root a file's references must stay under: the bundled rulesets and schemas for a
        ruleset shipped with ruleval (it reads its own data, catalogue and schema), else the entry's
        ruleset root. ``base`` is resolved (symlinks followed): the entry and every file the loader
        found (``confine.check_file``'s); a schema's ``$ref`` is resolved by its caller."""
        found = self.roots.get(base)  # (each file's, once a load: a ruleset names many files from one)
        if found is None:
            bundle = confine.bundle_roots()
            inside = bundle is not None and confine.is_inside(base, bundle)
            found = self.roots[base] = bundle if inside and bundle is not None else self.root
        return found

    def resolve(self, ref: str, base: Path, span: Span, kind: str) -> Path | None:
        if "\x00" in ref or not ref:
            self.diags.append(Diagnostic("C005", f"invalid {kind} path `{ref}`", span))
            return None
        root = self.root_for(base)
        where = base.parent / ref
        if ref.startswith(confine.BUNDLE_PREFIX):
            bundle = confine.bundle_root()
            roots = confine.bundle_roots()
            if bundle is None or roots is None:
                self.diags.append(Diagnostic("C005", f"{kind} `{ref}` not found: this ruleval has no bundled rulesets",
                                             span, help="reinstall ruleval, or refer to the file by its path"))
                return None
            root, where = roots, bundle / "rulesets" / ref[len(confine.BUNDLE_PREFIX):]
        try:
            target = confine.check_file(where, root, ref)
            self.read.append(str(target))
            return target
        except Refused as exc:
            if exc.reason == "missing":
                self.missing.append(os.path.realpath(where))
                bundled = ref.startswith(confine.BUNDLE_PREFIX)
                same = [] if bundled or not ref.endswith(".rules") else [
                    n for n in bundled_names() if ("/" + n[len(confine.BUNDLE_PREFIX):]).endswith("/" + ref.lstrip("./"))]
                self.diags.append(Diagnostic("C005", f"{kind} `{ref}` not found", span,
                                             help=f"looked for `{display_path(Path(os.path.realpath(where)))}`"
                                             + (("; did you mean `" + close + "`?" if (close := _close_bundled(ref))
                                                 else "; bundled rulesets: " + ", ".join(bundled_names()))
                                                 if bundled else "")
                                             + (f"; did you mean `{' or '.join(same)}`, the ruleset shipped with "
                                                "ruleval?" if 0 < len(same) <= 3 else "")))
            else:
                self.diags.append(refusal(exc, span, kind))
            return None

    def read_module(self, path: Path) -> A.Module | None:
        shown = display_path(path)
        unsaved = self.overlay.get(str(path))
        if unsaved is not None:  # an editor's text, not the file's: parsed afresh, never cached
            return self._read(shown, *_parse_unsaved(unsaved, shown))
        key = _key(path)
        cached = _module_cache.get(key)
        raw: bytes | None = None
        diags: list[Diagnostic] = []
        try:
            raw = self.read_source(path, shown)
        except DiagnosticError as err:
            diags = list(err.diagnostics)
        if cached is None or not _same(raw, cached):
            module: A.Module | None = None
            text = ""
            if raw is not None:
                try:
                    text = decode_source(raw, shown)
                    module = astcache.parsed(text, shown)  # parse_module's, kept across processes
                except RefusedSource as err:  # (its lines are shown under its diagnostics)
                    diags, text = list(err.diagnostics), err.text
                except DiagnosticError as err:
                    diags = list(err.diagnostics)
            cached = (module, text, diags, raw or b"")
            if raw is not None:
                _module_cache[key] = cached
        return self._read(shown, *cached[:3])

    def _read(self, shown: str, module: A.Module | None, text: str, diags: list[Diagnostic]) -> A.Module | None:
        self.sources[shown] = text
        self.diags.extend(diags)
        if module is not None:
            self.modules[shown] = module
        return module

    @staticmethod
    def read_source(path: Path, shown: str) -> bytes:
        """A module's bytes, bounded (a regular file of at most ``MAX_SOURCE_BYTES``)."""
        try:
            return confine.read_bytes(path, MAX_SOURCE_BYTES, None, shown)
        except Refused as exc:
            where = Span(shown, 1, 1, 1, 2)
            if exc.reason == "large":
                size = f"{exc.size} bytes" if exc.size is not None else "too large"
                raise DiagnosticError([Diagnostic("P005", f"file is {size}, more than the limit of {MAX_SOURCE_BYTES}",
                                                  where)]) from None
            raise DiagnosticError([refusal(exc, where, "ruleset")]) from None

    # -- namespaces
    def load(self) -> Loaded:
        entry_ns = self.namespace(self.entry, Span(display_path(self.entry)))
        if entry_ns is None:
            entry_ns = Namespace(str(self.entry), display_path(self.entry))
        return Loaded(self.root, entry_ns, self.namespaces, self.sources, self.diags, list(dict.fromkeys(self.read)),
                      self.modules, list(dict.fromkeys(self.missing)))

    def namespace(self, path: Path, span: Span) -> Namespace | None:
        key = str(path)
        if key in self.namespaces:
            return self.namespaces[key]
        if key in self.loading:
            cycle = " -> ".join(display_path(Path(p)) for p in self.loading[self.loading.index(key):] + [key])
            self.diags.append(Diagnostic("C006", f"import cycle: {cycle}", span))
            return None
        self.loading.append(key)
        try:
            ns = Namespace(key, display_path(path))
            if not self.merge(ns, path, span, []):
                return None
            read_data(ns)
            self.namespaces[key] = ns
            return ns
        finally:
            self.loading.pop()

    def merge(self, ns: Namespace, path: Path, span: Span, chain: list[str]) -> bool:
        """Fold ``path`` (and what it extends, first) into ``ns``."""
        if str(path) in chain:
            cycle = " -> ".join(display_path(Path(p)) for p in chain + [str(path)])
            self.diags.append(Diagnostic("C006", f"extends cycle: {cycle}", span))
            return False
        module = self.read_module(path)
        if module is None:
            return False
        chain = chain + [str(path)]
        ns.chain.append(module.path)
        for d in module.directives:
            if isinstance(d, A.Extends):
                base = self.resolve(d.path, path, d.span, "extended ruleset")
                if base is not None:
                    self.merge(ns, base, d.span, chain)
                else:
                    ns.base_missing = True
        is_variant = len(chain) > 1 or any(isinstance(d, A.Extends) for d in module.directives)
        for d in module.directives:
            if isinstance(d, A.Header):
                ns.header = d
            elif isinstance(d, A.CellOverride):
                if not is_variant:
                    self.diags.append(Diagnostic("C013", f"`override {d.table}[...]` in a ruleset that extends nothing",
                                                 d.span, help="a cell override changes a table of an extended ruleset"))
                ns.cell_overrides.setdefault(d.table, []).append(d)
            elif isinstance(d, A.Import):
                self.bind_import(ns, d, path)
            elif isinstance(d, A.Clauses):
                target = self.resolve(d.path, path, d.span, "clause catalogue")
                if target is not None:
                    self.bind_clauses(ns, target, d.span)
            elif isinstance(d, A.Schema):
                target = self.resolve(d.path, path, d.span, "state schema")
                if target is not None:
                    self.bind_schema(ns, target, d)
        for decl in module.decls:
            self.bind_decl(ns, decl, module.path, is_variant)
        return True

    def bind_import(self, ns: Namespace, d: A.Import, path: Path) -> None:
        target = self.resolve(d.path, path, d.span, "import")
        if target is None:
            return
        ns.import_spans[d.alias] = d.span
        if target.suffix in RULESET_SUFFIXES:
            if d.schema is not None:
                self.diags.append(Diagnostic("C015", f"`with schema` checks a data file, and `{d.path}` is a ruleset",
                                             d.span, help="import a ruleset without `with schema`"))
            if d.type is not None:
                self.diags.append(Diagnostic("C004", f"a type reads a data file, and `{d.path}` is a ruleset",
                                             d.type.span, help="import a ruleset without a type"))
            sub = self.namespace(target, d.span)
            if sub is not None:
                ns.modules[d.alias] = sub.key
                ns.data.pop(d.alias, None)
        elif target.suffix in DATA_SUFFIXES:
            value, diags = load_data_file(target, display_path(target), d.span, self.root_for(target))
            self.diags.extend(diags)
            before = ns.data.get(d.alias)
            schema = before.schema if before is not None else None  # a variant's re-binding keeps the base's
            if d.schema is not None:
                schema_file = self.resolve(d.schema, path, d.span, "data schema")
                schema = self.load_schema(schema_file, d.schema, d.span, "data schema") if schema_file else None
            typed = d.type if d.type is not None else before.type if before is not None else None  # (kept alike)
            ns.data[d.alias] = DataBinding(value, display_path(target), d.span, schema, readable=not diags,
                                           root=self.root_for(target), type=typed)
            ns.modules.pop(d.alias, None)
        else:
            self.diags.append(Diagnostic("C008", f"cannot import `{d.path}`: unknown file kind `{target.suffix}`", d.span,
                                         help="import rulesets (.rules) or data (.yaml, .yml, .json)"))

    def bind_clauses(self, ns: Namespace, target: Path, span: Span) -> None:
        value, diags = load_data_file(target, display_path(target), span, self.root_for(target))
        self.diags.extend(diags)
        if diags:
            return
        entries = value.get("clauses") if isinstance(value, dict) else None
        if not isinstance(entries, dict):
            close = closest_name("clauses", [k for k in value if isinstance(k, str)]) if isinstance(value, dict) else None
            self.diags.append(Diagnostic("C008", "a clause catalogue needs a `clauses:` mapping of id to text", span,
                                         help=f"`{display_path(target)}` has `{close}:`: did you mean `clauses:`?"
                                         if close is not None and close != "clauses" else None))
            return
        bad = [(k, v) for k, v in entries.items()
               if not (isinstance(k, str) and CLAUSE_ID.fullmatch(k)) or not (isinstance(v, str) and v.strip())]
        if bad:
            k, v = bad[0]
            where = None
            if isinstance(k, str) and target.suffix.lower() in (".yaml", ".yml"):
                import yaml

                from ..core import safeyaml
                try:
                    where = safeyaml.Positions(target.read_text(encoding="utf-8")).of(("clauses", k))
                except (OSError, UnicodeDecodeError, yaml.YAMLError):
                    where = None
            at = Span(display_path(target), *where) if where else span
            one_word = isinstance(k, str) and CLAUSE_ID.fullmatch(k)
            what = (f"clause `{k}` has no text: a catalogue gives each clause its wording" if one_word
                    else f"clause id `{k}` is not one word of at most 80 characters (e.g. `DIP-S4`)")
            self.diags.append(Diagnostic("C008", what, at, pointer=f"/clauses/{k}",
                                         help="results and explanations show this text beside the rules that cite it"))
            return
        # a variant's catalogue extends its base's: it adds clauses and restates some (same id)
        ns.clauses = {**(ns.clauses or {}), **entries}
        ns.clauses_span = span
        ns.clauses_path = display_path(target)

    def bind_schema(self, ns: Namespace, target: Path, d: A.Schema) -> None:
        found = self.load_schema(target, d.path, d.span, "state schema")
        if found is not None:
            ns.schema, ns.schema_path, ns.schema_resources, ns.schema_files = \
                found.value, found.path, found.resources, found.files
            ns.schema_span, ns.schema_root = d.span, self.root_for(target)

    def load_schema(self, target: Path, written: str, span: Span, kind: str) -> DataSchema | None:
        """A JSON Schema file and the files its ``$ref``s name (``schemarefs``), or None after a C015 or
        C025 at ``span``. ``kind`` says whose schema it is ("state schema", "data schema")."""
        shown = display_path(target)
        value, diags = load_data_file(target, shown, span, self.root_for(target))
        if diags or not isinstance(value, dict):
            where = tuple(Related(x.span, x.message) for x in diags if x.span.file == shown and x.span.line)
            why = "the note says where the file goes wrong" if where else diags[0].message if diags else \
                "a JSON Schema is a JSON object"
            self.diags.append(Diagnostic("C015", f"{kind} `{written}` cannot be loaded", span, related=where,
                                         help=why))
            return None
        value = _read_only(target, value)
        files: list[str] = []

        def load_ref(ref_path: Path, ref: str) -> Any:
            ref_value, ref_diags = load_data_file(ref_path, display_path(ref_path), span,
                                                 self.root_for(Path(os.path.realpath(ref_path))))
            if ref_diags:
                raise schemarefs.RefProblem(ref, f"`$ref` `{ref}`: {ref_diags[0].message}")
            files.append(display_path(ref_path))
            self.read.append(os.path.realpath(ref_path))
            return _read_only(ref_path, ref_value)

        try:
            resources = schemarefs.collect(value, target, self.root_for(target), load_ref)
        except schemarefs.RefProblem as problem:
            if problem.missing is not None:  # (stale once a file is there, as an import's: ``Loaded.missing``)
                self.missing.append(os.path.realpath(problem.missing))
            holder = problem.file or target  # the file whose text makes the reference
            text = self.text_of(holder)
            at = schemarefs.locate(text, problem.ref) if text else None
            related = (Related(Span(display_path(holder), at[0], at[1], at[0], at[1] + len(problem.ref)), "the reference"),) \
                if at else ()
            self.diags.append(Diagnostic("C025", f"{kind} `{written}`: {problem.message}", span, related=related,
                                         help="refer only to schema files inside the ruleset root "
                                              "(`\"$ref\": \"defs.json#/$defs/unit\"`), or copy the schema in"))
            return None
        return DataSchema(value, shown, frozen(resources), files, span)

    @staticmethod
    def text_of(path: Path) -> str:
        """A (confined, already read) schema file's text, to locate a reference in it."""
        try:
            return confine.read_bytes(path, MAX_DATA_BYTES).decode("utf-8", "replace")
        except Refused:
            return ""

    def bind_decl(self, ns: Namespace, decl: A.Decl, module_path: str, is_variant: bool) -> None:
        name = decl_key(decl)
        prev = ns.defs.get(name)
        prev_origin = ns.origin.get(name)
        if prev is not None and prev_origin == module_path:
            self.diags.append(Diagnostic("C002", f"`{name}` is defined twice", decl.span,
                                         related=(Related(prev.span, "first defined here"),)))
            return
        if prev is not None and not decl.override:
            self.diags.append(Diagnostic("C021", f"`{name}` redefines a definition of the extended ruleset", decl.span,
                                         help=f"write `override` before it to replace `{name}`",
                                         related=(Related(prev.span, "defined here"),)))
            return
        if prev is None and decl.override:
            self.diags.append(Diagnostic("C013", f"`override` of `{name}`, which the extended rulesets do not define",
                                         decl.span, help="remove `override`, or check the name"))
        if prev is not None and type(prev) is not type(decl):
            self.diags.append(Diagnostic("C004", f"`{name}` overrides a {kind_of(prev)} with a {kind_of(decl)}", decl.span,
                                         related=(Related(prev.span, "defined here"),)))
            return
        if prev is not None:
            ns.replaced.append((decl, prev))
            if A.BASE in A.per_node("names", decl, _names):
                decl = self.extend(ns, name, decl, prev)
        ns.defs[name] = decl
        ns.origin[name] = module_path
        if isinstance(decl, A.TableDecl):
            ns.cell_overrides.pop(name, None)  # a whole new table replaces earlier cell overrides

    def extend(self, ns: Namespace, name: str, decl: A.Decl, prev: A.Decl) -> A.Decl:
        """An override that names `base`: the definition it replaces is kept under a name no ruleset
        can write (``base of NAME``; the one before it, if it too was extended, under its own), and
        `base` in the override is that name, resolved here once."""
        for node in A.nodes(decl):  # the locals it binds: parameters, `let`, `var`, loop and comprehension names
            bound = (node.name,) if isinstance(node, (A.Param, A.Let, A.LetStmt, A.Var, A.For)) else \
                node.names if isinstance(node, A.CompFor) else ()
            if A.BASE in bound:
                self.diags.append(Diagnostic("C002", "`base` is the definition this override replaces", node.span,
                                             help="give this local name another name"))
        hidden = f"base of {name}"
        while hidden in ns.defs:
            hidden = f"base of {hidden}"
        ns.defs[hidden] = prev
        ns.origin[hidden] = ns.origin[name]
        if name in ns.cell_overrides:  # the replaced table keeps its cell overrides
            ns.cell_overrides[hidden] = ns.cell_overrides.pop(name)
        return A.per_node(f"extends {hidden}", decl, lambda d: A.renamed(d, A.BASE, hidden))  # type: ignore[no-any-return]


def _names(node: Any) -> frozenset[str]:
    """Every name a declaration reads."""
    return frozenset(n.id for n in A.nodes(node) if isinstance(n, A.Name))


def _parse_unsaved(unsaved: str, shown: str) -> tuple[A.Module | None, str, list[Diagnostic]]:
    """An editor's text parsed as the file's bytes would be: the same size limit, the byte order
    mark dropped."""
    try:
        text = decode_source(unsaved.encode("utf-8", "surrogatepass"), shown)
    except DiagnosticError as err:
        return None, "", list(err.diagnostics)
    try:
        return parse_module(text, shown), text, []
    except DiagnosticError as err:
        return None, text, list(err.diagnostics)


def bundled_names() -> list[str]:
    """The names of the rulesets shipped with ruleval, as `extends` writes them."""
    bundle = confine.bundle_root()
    if bundle is None:
        return []
    top = bundle / "rulesets"
    return sorted(confine.BUNDLE_PREFIX + p.relative_to(top).as_posix() for p in top.rglob("*.rules"))


def decl_key(decl: A.Decl) -> str:
    """Cycle policies share their decision's name; they live under ``cycle NAME``."""
    return f"cycle {decl.name}" if isinstance(decl, A.CycleDecl) else decl.name


_KINDS: dict[type, str] = {
    A.EnumDecl: "enum", A.RecordDecl: "record", A.InputDecl: "input", A.ConstDecl: "const", A.TableDecl: "table",
    A.DecisionDecl: "decision", A.CycleDecl: "cycle policy", A.ProcedureDecl: "procedure", A.QueryDecl: "query",
}


def kind_of(decl: A.Decl) -> str:
    """A declaration's kind as messages name it (a definition's: `def`, `rule`, ...); asked for every
    unit of every program, so the table is made once."""
    kind = _KINDS.get(type(decl))
    return kind if kind is not None else getattr(decl, "kind", "definition")


def load(path: Path, overlay: dict[str, str] | None = None) -> Loaded:
    """Load a ruleset and everything it extends and imports; ``overlay`` maps resolved paths of
    rulesets to text read instead of the file (the unsaved buffers of an editor)."""
    return Loader(path, overlay).load()


def _close_bundled(ref: str) -> str | None:
    """The bundled ruleset a misspelt ``bundled:`` name most likely means: one of the same folder whose
    file name, without `.rules`, is close to the one written (`standrd`: `standard`, not `nope`: `pure`)."""
    folder, _, name = ref.rpartition("/")
    stems = {n.rpartition("/")[2].removesuffix(".rules"): n for n in bundled_names() if n.rpartition("/")[0] == folder}
    close = closest_name(name.removesuffix(".rules"), stems)
    return None if close is None else stems[close]

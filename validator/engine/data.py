"""Data checks: what a ruleset's imported data must be, checked once when the ruleset loads.

Two checks, each finding an error located in the data file itself (line and column of the offending
value, and its JSON pointer in that file):

- a data import that names a JSON Schema (``import "x.yaml" as d with schema "x.schema.json"``, or a
  variant's re-binding of that alias, which keeps the schema) must satisfy it: each violation is a
  ``C026``;
- a data import that declares a type (``import "x.yaml" as d: T``) must fit it, as a state's input fits
  its own (``lang.kinds``): data that does not is a ``C030``, at the first part that does not fit
  (``loader.read_data`` found it);
- then, when the ruleset checked without errors, its ``query validate_data`` (no parameters, and it
  reads no input: a ``C028`` otherwise) is run once with no state. It returns a list of
  ``{pointer, message, cites}`` records whose pointer starts with an import's alias
  (``/d/rows/3/kind``), for what a schema cannot say; each is a ``C027``, located where the pointer
  leads in that file, else at the import.

The findings depend only on the ruleset's files, so they are kept with the ruleset (``api``) and in
the check cache (``core.checkcache``), never computed per run. Bounds: positions are read for a data
file of at most ``MAX_LOCATED_BYTES`` (a larger one's findings stand at its first line, with their
pointers), and at most ``MAX_FINDINGS`` findings of the data check are listed.
"""

from __future__ import annotations

from collections import deque
from pathlib import Path
from typing import Any, Callable

from ..core import confine, jsontext
from ..core.diagnostics import Diagnostic, Related, Span
from ..lang.ast import type_text
from ..lang.bind import bound_globals, place, unit_key
from ..lang.loader import MAX_DATA_BYTES, DataBinding, Loaded
from ..lang.program import Program, Unit
from ..lib.runtime import DEFAULT_STEP_BUDGET, EvalError, Unwritable, writer_bug
from ..lib.values import to_json
from . import reference as R
from .state import pointer_parts, schema_errors, schema_problem

DATA_CHECK = R.DATA_CHECK
MAX_LOCATED_BYTES = 2_000_000  # a larger data file is not parsed again for positions: findings stand at its top
MAX_FINDINGS = 200  # of the data check, listed; past it, one more says how many were left out
__all__ = ["DATA_CHECK", "MAX_DATA_BYTES", "data_findings", "query_findings", "schema_findings", "type_findings"]


class _Locator:
    """Positions of pointers in the data files of a load, each file read and parsed once, and only
    when something is to be located in it; the texts read are added to the load's sources (for the
    source line under a diagnostic)."""

    def __init__(self, loaded: Loaded):
        self.loaded = loaded
        self.files: dict[str, Any] = {}

    def span(self, binding: DataBinding, pointer: str) -> Span | None:
        return self.span_in(binding.path, binding.root or self.loaded.root, pointer)

    def span_in(self, shown: str, root: confine.Root, pointer: str) -> Span | None:
        if shown not in self.files:
            self.files[shown] = self._positions(shown, root)
        positions = self.files[shown]
        if positions is None:
            return None
        try:
            where = positions.of(pointer_parts(pointer))
        except (RecursionError, ValueError):
            where = None
        return None if where is None else Span(shown, *where)

    def _positions(self, shown: str, root: confine.Root) -> Any:
        path = Path(shown)
        try:
            text = confine.read_bytes(path, MAX_LOCATED_BYTES, root, shown).decode("utf-8")
        except (confine.Refused, UnicodeDecodeError, OSError):  # (a file over the limit is refused as large)
            return None
        import yaml  # (here only: a load whose data files are kept, and all pass, never imports it)

        from ..core import safeyaml
        try:
            positions = jsontext.Positions(text) if path.suffix == ".json" else safeyaml.Positions(text)
        except (yaml.YAMLError, RecursionError, ValueError, IndexError):  # read once already: not expected
            return None
        self.loaded.sources.setdefault(shown, text[1:] if text.startswith("\ufeff") else text)
        return positions


def schema_findings(loaded: Loaded, locator: _Locator | None = None) -> list[Diagnostic]:
    """A ``C015`` at the `schema` directive of a state schema that cannot be used (not valid against its
    draft's meta-schema, a pattern RE2 cannot run), and a ``C026`` for each way a data import breaks the
    JSON Schema it names (the schema itself unusable: ``C015``/``C025`` at the import). Each state schema
    and each (file, schema) pair is checked once."""
    locator = locator or _Locator(loaded)
    out: list[Diagnostic] = []
    seen: set[tuple[str, str]] = set()
    for ns in loaded.namespaces.values():
        if ns.schema is not None and ns.schema_path is not None and ("", ns.schema_path) not in seen:
            seen.add(("", ns.schema_path))
            problem = schema_problem(ns.schema, ns.schema_resources)
            if problem is not None:
                message, at = problem
                where = locator.span_in(ns.schema_path, ns.schema_root or loaded.root, at) if at else None
                named = ns.schema_span or Span(ns.schema_path)
                out.append(Diagnostic("C015", f"the state schema {message}", where or named,
                                      pointer=at if where else None,
                                      related=(Related(named, "the state schema is named here"),) if where else (),
                                      help="a state schema must be a valid JSON Schema of its `$schema` draft"))
    for ns in loaded.namespaces.values():
        for binding in ns.data.values():
            schema = binding.schema
            if schema is None or not binding.readable or (binding.path, schema.path) in seen:
                continue
            seen.add((binding.path, schema.path))
            found = schema_errors(binding.value, schema.value, binding.path, schema.resources,
                                  whose=f"the data schema `{schema.path}`")
            for d in found:
                if d.code != "S002":  # the schema cannot be used: say so where it is named
                    out.append(Diagnostic(d.code, d.message, schema.span, help=d.help))
                    continue
                where = locator.span(binding, d.pointer or "") or Span(binding.path, 1, 1, 1, 2)
                out.append(Diagnostic("C026", d.message, where, pointer=d.pointer or "", schema_rule=d.schema_rule,
                                      help=f"`{binding.path}` must satisfy `{schema.path}`" + (f"; {d.help}" if d.help else "")))
    return out


def type_findings(loaded: Loaded, locator: _Locator | None = None) -> list[Diagnostic]:
    """A ``C030`` for each data import whose data does not fit the type it declares (``DataBinding.unfit``),
    at the part at fault in the data file, the import as a note."""
    locator = locator or _Locator(loaded)
    out: list[Diagnostic] = []
    for ns in loaded.namespaces.values():
        for alias, binding in ns.data.items():
            if binding.unfit is None or binding.type is None:
                continue
            pointer, message = binding.unfit
            declared = type_text(binding.type)
            where = locator.span(binding, pointer) or Span(binding.path, 1, 1, 1, 2)
            out.append(Diagnostic("C030", f"data file `{binding.path}`, imported as `{alias}: {declared}`: {message}",
                                  where, pointer=pointer,
                                  related=(Related(ns.import_spans.get(alias, binding.span),
                                                   f"`{alias}` is declared `{declared}` here"),),
                                  help=f"make the data fit `{declared}`, or declare the type it has"))
    return out


def state_read_by(program: Program, unit: Unit) -> list[str] | None:
    """The chain of definitions by which ``unit`` reaches an input (``[unit, ..., input]``), or None
    when it reads none: breadth first over the reference graph, so the chain is a shortest one."""
    start = (unit.ns, unit.name)
    came: dict[Any, Any] = {start: None}
    todo = deque([start])
    while todo:
        k = todo.popleft()
        u = program.units.get(k)
        if u is not None and u.kind == "input":
            chain = []
            while k is not None:
                chain.append(k[1])
                k = came[k]
            return chain[::-1]
        for nxt in sorted(program.refs.get(k, ())):
            if nxt not in came and nxt in program.units:
                came[nxt] = k
                todo.append(nxt)
    return None


# What runs of `validate_data` gave, per process, by everything a run reads (``run_key``): the
# rulesets of a check that run the same check over the same data (a base and the variants that change
# nothing the check reads, on the base's map) run it once. Each entry holds the objects its key
# names by `id`.
_RUNS: dict[tuple[Any, ...], tuple[list[Any], tuple[bool, Any], list[Unwritable]]] = {}
MAX_KEPT_RUNS = 64


def run_key(program: Program, unit: Unit, budget: int) -> tuple[tuple[Any, ...], list[Any]]:
    """Everything a run of ``unit`` with no state reads of its program, as a hashable key, and the
    objects the key names by ``id`` (to hold while it is kept). For each definition the run may reach
    (the reference graph from ``unit``, and the cycle policies of the decisions on it): the unit
    (``bind.unit_key``: where it is, its declaration, the analysis's flags), a table's cells, a
    decision's cycle policy, and what each global name it mentions is bound to there (the
    definition, data object, type, member or built-in)."""
    entry = program.entry.key
    holds: list[Any] = []
    parts = []
    seen = {(unit.ns, unit.name)}
    todo = [(unit.ns, unit.name)]
    while todo:
        k = todo.pop()
        u = program.units[k]
        holds.append(u.decl)
        names = bound_globals(u, entry, holds)
        extra: tuple[Any, ...] = ()
        nexts = set(program.refs.get(k, ()))
        if u.cells:
            holds.append(u.cells)
            extra = tuple((k, id(cell)) for k, cell in u.cells.items())
        elif u.policy is not None:
            extra = (place(u.policy.ns, entry), u.policy.name)
            nexts.add((u.policy.ns, u.policy.name))
        parts.append((unit_key(u, entry), names, extra))
        for nxt in nexts:
            if nxt not in seen and nxt in program.units:
                seen.add(nxt)
                todo.append(nxt)
    return (budget, place(unit.ns, entry), unit.name, frozenset(parts)), holds


def query_findings(program: Program, engine: Any = None, budget: int = DEFAULT_STEP_BUDGET,
                   locator: _Locator | None = None) -> list[Diagnostic]:
    """The ruleset's ``query validate_data``, run once with no state: a ``C027`` for each finding; a
    ``C028`` when it takes parameters or reads an input; an ``E`` diagnostic when it fails. It runs on
    ``engine`` (a ``Backend``: the same values, steps and errors as the reference, which runs it when
    ``engine`` is None or the generated code is too deep for Python)."""
    unit = program.query(DATA_CHECK)
    if unit is None:
        return []
    span = unit.span
    if unit.arity:
        return [Diagnostic("C028", f"`{DATA_CHECK}` takes parameters: it is run once, with nothing to pass", span,
                           help=f"write `query {DATA_CHECK} = ...`")]
    chain = state_read_by(program, unit)
    if chain is not None:
        how = "" if len(chain) == 2 else " through " + ", ".join(f"`{n}`" for n in chain[1:-1])
        return [Diagnostic("C028", f"`{DATA_CHECK}` reads the input `{chain[-1]}`{how}: it is run with no state",
                           span, help="check the imported data only; what a state must be is `validate_state`'s")]
    key, holds = run_key(program, unit, budget)
    kept = _RUNS.get(key)
    if kept is None:
        bugs: list[Unwritable] = []
        try:  # (False, what it gives) or (True, its failure); a check the backend cannot write is run by the reference
            kept = (holds, (False, R.run_without_state(program, unit, budget, engine, bugs)), bugs)
        except EvalError as err:
            kept = (holds, (True, (err.diagnostic(),)), bugs)
        if len(_RUNS) >= MAX_KEPT_RUNS:
            _RUNS.clear()
        _RUNS[key] = kept
    failed, found = kept[1]
    # (I002, a warning of the ruleset's, which a command hears from its load: the reference's answer is the check's)
    said = [writer_bug(b) for b in kept[2]]
    if failed:
        return list(found) + said
    if not isinstance(found, (list, tuple)):
        return [Diagnostic("E001", f"`{DATA_CHECK}` must give a list of {{pointer, message, cites}}, not "
                                   f"`{str(to_json(found))[:40]}`", span)] + said
    locator = locator or _Locator(program.loaded)
    entry = program.entry
    out = []
    if len(found) > MAX_FINDINGS:
        out.append(Diagnostic("C027", f"... and {len(found) - MAX_FINDINGS} more findings of `{DATA_CHECK}` (the first "
                                      f"{MAX_FINDINGS} are shown)", span))
    for item in found[:MAX_FINDINGS]:
        item = item if isinstance(item, dict) else {"message": str(to_json(item))}
        pointer = str(item.get("pointer", ""))
        cites = item.get("cites")
        rule = f"ruleset query `{DATA_CHECK}`" + (f" ({', '.join(map(str, cites))})" if cites else "")
        alias, _, rest = pointer.lstrip("/").partition("/")
        binding = entry.data.get(alias) if pointer.startswith("/") else None
        where: Span | None = None
        if binding is not None:
            rest = "/" + rest if rest else ""
            where = locator.span(binding, rest)
            if where is not None:
                pointer = rest
            else:
                where = entry.import_spans.get(alias, binding.span)
        out.append(Diagnostic("C027", str(item.get("message", "invalid data")), where or span, pointer=pointer,
                              schema_rule=rule))
    return out + said


def data_findings(program: Program, engine: Callable[[], Any] | None = None, run_query: bool = True) -> list[Diagnostic]:
    """Every data finding of a loaded program: schema violations and data that does not fit its type,
    then (``run_query``: the ruleset has no errors, and no data broke its schema or type) the ruleset's
    own data check, on ``engine()``."""
    locator = _Locator(program.loaded)
    out = schema_findings(program.loaded, locator) + type_findings(program.loaded, locator)
    if run_query and not any(d.is_error for d in out):
        out += query_findings(program, engine() if engine is not None else None, locator=locator)
    return out

"""Work shared between the rulesets of one `ruleval check` gives each ruleset its own findings.

The data checks run on the backend, whose code for a definition is compiled once per process and
reused by every program that writes the same source (``codecache._CODE``): each variant of
standard.rules checks its own map with the base's definitions. These tests hold the findings so
made equal to the reference's, whichever rulesets were checked before in the process.
"""

from __future__ import annotations

import contextlib
import re
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest

from validator import api
from validator.engine import backend as B
from validator.engine import data, written
from validator.engine import reference as R
from validator.core.diagnostics import Diagnostic, sort_diagnostics
from validator.lib.runtime import SeededDice, Unwritable

ROOT = Path(__file__).resolve().parent.parent
MAPS = ROOT / "tests" / "maps"

# mistakes added together to the teaching map (as the single-mistake fixtures of tests/maps/ do), so
# that one data check finds several things at once
MISTAKES = [
    ("fen: [hil, nor, sou]", "fen: [hil, nor, sou, swp]"),
    ("for: [hil]\n  sou:", "for: [hil, fen]\n  sou:"),
    ("hil: {name: Hills, kind: land, center: true}", "hil: {name: Hills, kind: land, home: green}"),
    ("victory: 3", "victory: 30"),
    ("{power: blue, type: army, location: sou}", "{power: blue, type: fleet, location: for}"),
]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The Diplomacy rulesets, schemas and test maps under a ruleset root of their own, with a map
    holding several mistakes (``tests/maps/many.rules``)."""
    (tmp_path / "ruleval.toml").write_text("")
    shutil.copytree(ROOT / "rulesets" / "diplomacy", tmp_path / "rulesets" / "diplomacy")
    shutil.copytree(ROOT / "schemas" / "diplomacy", tmp_path / "schemas" / "diplomacy")
    shutil.copytree(MAPS, tmp_path / "tests" / "maps")
    text = (ROOT / "rulesets" / "diplomacy" / "teaching_map.yaml").read_text(encoding="utf-8")
    for old, new in MISTAKES:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    (tmp_path / "tests" / "maps" / "many.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "tests" / "maps" / "many.rules").write_text(
        'ruleset maps.many "a map with several mistakes"\nextends "../../rulesets/diplomacy/standard.rules"\n'
        'import "many.yaml" as map\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@contextlib.contextmanager
def nothing_shared() -> Iterator[None]:
    """As in a process that checked nothing before: every process-wide memo empty, the modules parsed
    again (new declaration objects)."""
    from validator.lang import ast as A
    from validator.lang import loader, program, types

    with pytest.MonkeyPatch.context() as m:
        m.setattr(program, "_RESOLVED", A.ContextMemo())
        m.setattr(program, "_ARITIES", A.ContextMemo())
        m.setattr(types, "_TYPED", A.ContextMemo())
        m.setattr(loader, "_module_cache", {})
        m.setattr(loader, "_data_cache", {})
        m.setattr(B.codecache, "_CODE", {})
        m.setattr(written, "_KEPT", {})
        m.setattr(data, "_RUNS", {})
        yield


def forget_runs_and_code(monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's data check runs, compiled code and writings forgotten (the modules stay parsed)."""
    monkeypatch.setattr(B.codecache, "_CODE", {})
    monkeypatch.setattr(written, "_KEPT", {})
    monkeypatch.setattr(data, "_RUNS", {})


def reference_findings(path: Path) -> list[Diagnostic]:
    """The data findings of a ruleset loaded in a process of its own, its data check run on the
    reference (every ruleset here checks without errors but in its data), in the order a check lists
    them."""
    with nothing_shared():
        rs = api.load_ruleset(path, use_cache=False, check_cache=False)
        return sort_diagnostics(data.data_findings(rs.program, None))


def data_diagnostics(path: Path) -> list[Diagnostic]:
    """The data findings among the diagnostics of a ruleset loaded afresh (its data check on the
    backend), check cache off."""
    return [d for d in api.load_ruleset(path, use_cache=False, check_cache=False).diagnostics
            if d.code in ("C026", "C027")]


def test_the_data_check_on_the_backend_finds_what_the_reference_finds(tree: Path) -> None:
    rulesets = sorted(Path("tests/maps").glob("*.rules")) + [Path("rulesets/diplomacy/standard.rules")]
    many = reference_findings(Path("tests/maps/many.rules"))
    assert len([d for d in many if d.code == "C027"]) >= len(MISTAKES)  # the fixture is what it says
    for path in rulesets:
        want = reference_findings(path)
        rs = api.load_ruleset(path, use_cache=False, check_cache=False)
        assert sort_diagnostics(data.data_findings(rs.program, rs.backend)) == want, path
        assert [d for d in rs.diagnostics if d.code in ("C026", "C027")] == want, path


@pytest.mark.parametrize("order", ["clean first", "broken first"])
def test_variants_reusing_compiled_code_keep_their_own_findings(tree: Path, order: str,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    clean, broken = Path("rulesets/diplomacy/teaching.rules"), Path("tests/maps/many.rules")
    want = {p: reference_findings(p) for p in (clean, broken)}
    assert want[clean] == [] and want[broken] != []
    compiles: list[str] = []
    real_compile = B.codecache._code_of  # (what the process's code table, ``codecache._CODE``, does not hold)

    def counted(source: str, filename: str, compile_text: Any) -> object:
        compiles.append(filename)
        return real_compile(source, filename, compile_text)

    monkeypatch.setattr(B.codecache, "_code_of", counted)
    first, second = (clean, broken) if order == "clean first" else (broken, clean)
    forget_runs_and_code(monkeypatch)
    assert data_diagnostics(second) == want[second]
    alone = len(compiles)  # what the second one's check compiles in a process of its own
    forget_runs_and_code(monkeypatch)
    assert data_diagnostics(first) == want[first]
    before = len(compiles)
    assert data_diagnostics(second) == want[second]
    assert len(compiles) - before < alone  # after the first, it reused some of the first one's code


def test_a_variant_overriding_a_rule_the_data_check_reads_gets_its_own_findings(tree: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The map of ``many.rules`` checked by the standard rules, and by a variant whose edge rule
    accepts every listed neighbour (``lenient.rules``): each its own findings, whichever is first."""
    Path("tests/maps/lenient.rules").write_text(
        'ruleset maps.lenient "a lenient edge check"\nextends "many.rules"\n'
        'override rule army_edge_problem(p, q) cite "DIP-MAP1" = none\n', encoding="utf-8")
    strict, lenient = Path("tests/maps/many.rules"), Path("tests/maps/lenient.rules")
    want = {p: reference_findings(p) for p in (strict, lenient)}
    edges = [d for d in want[strict] if (d.pointer or "").startswith("/army/")]
    assert edges and not [d for d in want[lenient] if (d.pointer or "").startswith("/army/")]
    assert [d for d in want[strict] if d not in edges] == want[lenient]  # the rest is found by both
    for order in ((strict, lenient), (lenient, strict)):
        forget_runs_and_code(monkeypatch)
        for p in order:
            assert data_diagnostics(p) == want[p], (order, p)


def test_a_data_check_too_deep_for_generated_code_gives_the_reference_value(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Python limits the nesting of the source the backend writes (100 indented blocks), the
    reference does not: such a data check is run on the reference, and finds what it finds."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "d.yaml").write_text("rows: [1, 2]\n")
    depth = 110
    body = "if true then " * depth + '[{pointer: "/d/rows/1", message: "deep"}]' + " else []" * depth
    (tmp_path / "d.rules").write_text(f'ruleset t.deep "deep"\nimport "d.yaml" as d\nquery validate_data = {body}\n'
                                      "query main = d.rows\n")
    monkeypatch.chdir(tmp_path)
    rs = api.load_ruleset(Path("d.rules"), use_cache=False, check_cache=False)
    unit = rs.program.query("validate_data")
    with pytest.raises(Unwritable, match="nested too deeply"):  # what the generated code alone says
        B.Backend(rs.program).function(unit)(R.Run(None, SeededDice(0), 10**6))
    assert R.run_without_state(rs.program, unit, 10**6, B.Backend(rs.program)) == \
        R.run_without_state(rs.program, unit, 10**6, None)
    assert [(d.code, d.message, d.span.file, d.span.line) for d in rs.diagnostics] == \
        [("C027", "deep", "d.yaml", 1)]
    assert rs.diagnostics == reference_findings(Path("d.rules"))


# ---------------------------------------------------------------- checks shared between variants

BASE = '''ruleset t.base "base"
import "d.yaml" as d
enum colour { red, blue }
record unit { name: str, strength: int }
input units: list[unit] at "/units"
const n: int = 1
def f(x: int) = x + n
def g(x) = x
def size = d.size + f(1)
def is_blue(c: colour) = c == blue or blue != "red"
def total(us: list[unit]) = sum([u.strength for u in us])
table odds[a] cite "T1" {
  | 1 | 2 |
  | 2 | 3 |
}
def first = odds[1] + g(2)
query main = [size, first, total(units), is_blue(blue)]
'''

# variant name -> (its text after `extends`, its data file or None, a code its check must report,
# where the mistake shows: in the base's text, not the variant's)
VARIANTS = {
    "data": ('import "other.yaml" as d\n', "rows: [1]\n", "C012"),  # the data has no `size`
    # `f(1)` in the base now misses an argument: said once, at the override (the variant's line)
    "arity": ('override def f(x, y) = x + y\n', None, "C003"),
    "value": ('override def g = 2\n', None, "C018"),  # `g(2)` calls a value
    "type": ('override const n: str = "one"\n', None, "C004"),  # `x + n` adds a text to a number
    "enum": ('override enum colour { green, blue }\n', None, "C016"),  # `blue != "red"`: no such member
    "record": ('override record unit { name: str, power: int }\n', None, "C012"),  # `u.strength`
    "table": ('override table odds[a, b] cite "T1" {\n  | a | x |\n  | 1 | 2 |\n}\n', None, "C003"),  # `odds[1]`
    "same": ('import "d.yaml" as d\n', None, None),  # the base's own data, re-bound: nothing to report
    # `f`'s declaration kept, its flags changed (it reads an input through `n`): `size`'s check is the base's
    "flags": ('override const n: int = len(units)\n', None, None),
}


@pytest.fixture
def family(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A base ruleset and variants, each changing one thing the base's definitions are checked against."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "clauses.yaml").write_text("clauses: {T1: a table}\n")
    (tmp_path / "d.yaml").write_text("size: 3\n")
    (tmp_path / "base.rules").write_text(BASE.replace('ruleset t.base "base"\n', 'ruleset t.base "base"\n'
                                                                                 'clauses "clauses.yaml"\n'))
    for name, (text, data_text, _) in VARIANTS.items():
        if data_text is not None:
            (tmp_path / "other.yaml").write_text(data_text)
        (tmp_path / f"{name}.rules").write_text(f'ruleset t.{name} "{name}"\nextends "base.rules"\n{text}')
    monkeypatch.chdir(tmp_path)
    return tmp_path


def alone(path: Path) -> list[Diagnostic]:
    """A ruleset's diagnostics in a process that checked nothing before (``nothing_shared``)."""
    with nothing_shared():
        return api.load_ruleset(path, use_cache=False, check_cache=False).diagnostics


@pytest.mark.parametrize("base_first", [True, False])
def test_variants_checked_after_their_base_get_their_own_findings(family: Path, base_first: bool) -> None:
    names = ["base", *VARIANTS] if base_first else [*VARIANTS, "base"]
    paths = [Path(f"{n}.rules") for n in names]
    want = {p: alone(p) for p in paths}
    assert not [d for d in want[Path("base.rules")] if d.is_error]
    for name, (_, _, code) in VARIANTS.items():  # each variant breaks the base where the test says
        found = [d for d in want[Path(f"{name}.rules")] if d.is_error]
        assert [d.code for d in found] == ([code] if code else []), (name, found)
        assert all(d.span.file == ("arity.rules" if name == "arity" else "base.rules") for d in found), found
    for p in paths:  # in one process, one after another: what each finds alone
        assert api.load_ruleset(p, use_cache=False, check_cache=False).diagnostics == want[p], p


def test_the_checks_kept_by_context_read_no_analysis_flag(family: Path) -> None:
    """The names, arity and type checks of a declaration are kept by a context that names each
    definition it mentions by its declaration (``bind.bound_globals``), without the analysis's flags
    ``bind.unit_key`` adds: a variant may set them otherwise for a declaration it keeps (``flags``
    above). So no such check may read them: with every unit's flags flipped, each finds the same."""
    from validator.lang import checker, loader, program as P

    def flipped(p: P.Program) -> None:
        P.analyse(p)
        for u in p.units.values():
            u.state_free, u.recursive, u.counted, u.uses_decisions = \
                not u.state_free, not u.recursive, not u.counted, not u.uses_decisions

    def checks(path: Path, passes: Any) -> list[Diagnostic]:
        with nothing_shared(), pytest.MonkeyPatch.context() as m:
            m.setattr(P, "PASSES", passes)
            p = P.build_program(loader.load(path))
            return p.diagnostics + checker.check_types_pass(p)

    flipping = tuple((name, flipped if name == "reference graph" else check) for name, check in P.PASSES)
    paths = [Path(f"{n}.rules") for n in ("base", *VARIANTS)] + \
        [ROOT / "rulesets" / f for f in ("diplomacy/standard.rules", "jomini/re.rules", "his/his.rules")]
    flags = [(u.state_free, u.recursive, u.counted, u.uses_decisions)
             for u in P.build_program(loader.load(Path("flags.rules"))).units.values()]
    assert len(set(flags)) > 1  # (the fixture's units differ in their flags: flipping changes what they say)
    found = {p: checks(p, P.PASSES) for p in paths}
    assert [d.code for d in found[Path("arity.rules")]] == ["C003"]  # (what is compared holds findings)
    for p in paths:
        assert checks(p, flipping) == found[p], p


def test_the_checks_key_kept_on_a_unit_is_the_one_made_afresh_after_every_pass(family: Path) -> None:
    """The names, arity and type checks share one key per unit, made at the first of them and kept
    on the unit (``bind.checks_key``): after every pass (and the type check), each unit's kept key is
    what ``bind.bound_globals`` and its data give afresh, so nothing the key is made of changed after
    it was made. Checked one after another (the base's declarations shared), a variant that binds a
    base's name otherwise (data without a field, a definition of another arity or type, a table of
    other keys) gives some base definition another key, as its own findings above need; one that
    imports the same data again gives every definition the base's key."""
    from validator.lang import bind, checker, loader, program as P

    def keys(path: Path) -> dict[str, tuple[Any, ...]]:
        p = P.build_program(loader.load(path))
        checker.check_types_pass(p)
        found = {}
        for k, u in p.units.items():
            assert u.checks_key is not None, k  # (made by the checks, each unit's)
            key, holds, values = u.checks_key
            afresh: list[Any] = []
            assert key == bind.bound_globals(u, p.entry.key, afresh, lambda v: None), k
            assert [id(x) for x in holds] == [id(x) for x in afresh], k
            assert values == tuple(r.value for r in u.globals if isinstance(r, bind.DataRef)), k
            if u.ns == p.entry.key:  # (by its name: each program's namespace is its own file's)
                found[u.name] = (id(u.decl), key, tuple(frozenset(v) if isinstance(v, dict) else None for v in values))
        return found

    paths = [Path(f"{n}.rules") for n in ("base", *VARIANTS)] + \
        [ROOT / "rulesets" / f for f in ("diplomacy/standard.rules", "jomini/re.rules", "his/his.rules")]
    with nothing_shared():
        found = {p: keys(p) for p in paths}
    base = found[Path("base.rules")]
    assert found[Path("same.rules")] == base
    for name in ("data", "arity", "value", "type", "table"):  # (enum, record: the type check's own part)
        variant = found[Path(f"{name}.rules")]
        changed = [k for k, v in base.items() if variant.get(k, (None,))[0] == v[0] and variant[k] != v]
        assert changed, name


def test_checks_of_broken_rulesets_are_the_same_shared_or_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The golden corpus of tests/fixtures (every kind of mistake), checked one after another in one
    process, then each alone."""
    fixtures = ROOT / "tests" / "fixtures"
    monkeypatch.chdir(fixtures)
    paths = sorted(p.relative_to(fixtures) for p in fixtures.rglob("*.rules"))
    assert len(paths) > 20
    shared = {p: api.load_ruleset(p, use_cache=False, check_cache=False).diagnostics for p in paths}
    for p in paths:
        assert alone(p) == shared[p], p


def test_a_schema_that_refers_to_no_file_is_walked_again_once_edited(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A data schema whose references all stay inside it is walked once per process for every ruleset
    importing data with it (``schemarefs._SELF_CONTAINED``); edited to refer to a file outside the
    root, it is walked again and refused (C025), and each ruleset's data is checked against it."""
    import json

    (tmp_path / "ruleval.toml").write_text("")
    properties: dict[str, object] = {"n": {"$ref": "#/$defs/n"}}
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": properties, "$defs": {"n": {"type": "integer"}}}
    (tmp_path / "s.json").write_text(json.dumps(schema))
    (tmp_path / "good.yaml").write_text("n: 1\n")
    (tmp_path / "bad.yaml").write_text("n: one\n")
    for name in ("good", "bad"):
        (tmp_path / f"{name}.rules").write_text(f'ruleset t.{name} "{name}"\nimport "{name}.yaml" as d with schema '
                                                '"s.json"\nquery main = d.n\n')
    monkeypatch.chdir(tmp_path)

    def codes(name: str) -> list[str]:
        return [d.code for d in api.load_ruleset(Path(f"{name}.rules"), use_cache=False, check_cache=False).diagnostics]

    assert codes("good") == [] and codes("bad") == ["C026"]
    properties["m"] = {"$ref": "../outside.json"}
    (tmp_path / "s.json").write_text(json.dumps(schema, indent=1))
    assert codes("good") == ["C025"] and codes("bad") == ["C025"]


def test_the_same_data_check_on_the_same_data_runs_once_in_a_process(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``data._RUNS``: the standard rules and three variants that change nothing the map check reads (a
    cycle policy, the build rule, definitions added) check standard_map.yaml with one run; another map,
    or a rule of the check overridden, is a run of its own. Each finds what it finds alone."""
    Path("tests/maps/lenient.rules").write_text(
        'ruleset maps.lenient "a lenient edge check"\nextends "many.rules"\n'
        'override rule army_edge_problem(p, q) cite "DIP-MAP1" = none\n', encoding="utf-8")
    # the same names, meaning the same, in another body: only the declaration tells them apart
    Path("tests/maps/demanding.rules").write_text(
        'ruleset maps.demanding "a demanding victory"\nextends "many.rules"\n'
        'override def victory_needed = (map.victory ?? 0) * 100\n', encoding="utf-8")
    same = [Path(f"rulesets/diplomacy/{n}.rules") for n in ("standard", "all_hold", "build_anywhere", "datc_text")]
    others = [Path("rulesets/diplomacy/teaching.rules"), Path("tests/maps/many.rules"), Path("tests/maps/lenient.rules"),
              Path("tests/maps/demanding.rules")]
    want = {p: alone(p) for p in same + others}
    runs: list[str] = []
    real = R.run_without_state

    def counted(program: object, unit: object, budget: int, engine: object = None, bugs: Any = None) -> object:
        runs.append(program.entry.entry)  # type: ignore[attr-defined]
        return real(program, unit, budget, engine, bugs)

    monkeypatch.setattr(R, "run_without_state", counted)
    monkeypatch.setattr(data, "_RUNS", {})
    for p in same + others:
        assert api.load_ruleset(p, use_cache=False, check_cache=False).diagnostics == want[p], p
    assert runs == [str(same[0])] + [str(p) for p in others]
    assert want[others[1]] != want[others[2]] and want[others[1]] != want[others[3]]  # (each differs, as said)


def test_a_variant_s_table_cells_are_typed_though_the_base_table_was_checked_before(tmp_path: Path) -> None:
    """The type check of a declaration found clean is not made again where what it reads is the same
    (``types._TYPED``); a variant's `override t[...]` cells are read by its table's check, so a base
    table checked clean before does not hide a variant's cell of the wrong type (it did: the variant
    loaded after its base had no C004)."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "base.rules").write_text('ruleset t.base\ntable cost[kind] -> int cite "R2" {\n'
                                         '  | foot  | 1 |\n  | horse | 2 |\n}\nquery main = cost["foot"]\n')
    (tmp_path / "variant.rules").write_text('ruleset t.variant\nextends "base.rules"\n'
                                            'override cost["foot"] cite "R2" = "cheap"\n')
    assert not api.load_ruleset(tmp_path / "base.rules", use_cache=False).diagnostics
    found = api.load_ruleset(tmp_path / "variant.rules", use_cache=False).diagnostics
    assert [(d.code, d.span.line) for d in found] == [("C004", 3)]


def test_a_data_check_that_reaches_a_procedure_s_steps_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The run key of a data check (``data.run_key``) names what each reached unit's global names are
    bound to; a procedure's `goto` is bound to its step, which is no global name (it was summarised
    as one, and the check stopped with an internal error, I001)."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "p.rules").write_text(
        'ruleset t.steps "steps"\nprocedure p() cite "X" {\n  step a cite "X" {\n    goto b\n  }\n'
        '  step b cite "X" {\n    stop\n  }\n}\n'
        'query validate_data = if p().status == "stopped" then [{pointer: "", message: "stopped"}] else []\n')
    monkeypatch.chdir(tmp_path)
    found = api.load_ruleset(Path("p.rules"), use_cache=False, check_cache=False).diagnostics
    assert [(d.code, d.message) for d in found] == [("C027", "stopped")]


# ---------------------------------------------------------------- writings played again (``written``)


def units_written(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the units the backend writes from now on (not those played again, ``written``)."""
    names: list[str] = []
    real = B.Backend.write_unit

    def counted(self: B.Backend, unit: Any, name: str) -> Any:
        names.append(unit.name)
        return real(self, unit, name)

    monkeypatch.setattr(B.Backend, "write_unit", counted)
    return names


def writings(path: Path, every: bool = False) -> list[tuple[Any, ...]]:
    """What loading ``path`` defines in its backend (its data check's functions; with ``every``, then the
    function of every definition, ``Backend.write_all``): each function's name,
    its source and what each constant its source names is, said of the program itself (its own unit,
    data alias or function, and of a function value or built-in value whether it runs in this
    program), in the order they are made."""
    import types

    from validator.lang.program import Unit

    out: list[tuple[Any, ...]] = []
    real = B.define

    def what(program: Any, g: dict[str, Any], v: Any) -> Any:
        aliases = {id(b.value): (ns.key == program.entry.key, a) for ns in program.loaded.namespaces.values()
                   for a, b in ns.data.items()}
        if id(v) in aliases:
            return ("data", *aliases[id(v)])
        if isinstance(v, Unit):
            return ("unit", v.name, program.units[(v.ns, v.name)] is v)
        if isinstance(v, R.UnitFunction):
            return ("function value", v.unit.name, program.units[(v.unit.ns, v.unit.name)] is v.unit,
                    v.interp is g["_PROTO"])
        if isinstance(v, R.BuiltinFunction):
            return ("built-in value", v.builtin.name, v.interp is g["_PROTO"])
        if isinstance(v, types.FunctionType):
            return ("function", v.__name__, v.__globals__ is g or v.__module__)
        if isinstance(v, dict):
            return ("table", [what(program, g, c) for c in v.values()])
        return (type(v).__name__, repr(v))

    def define(source: str, filename: str, g: dict[str, Any], *kept: Any) -> Any:
        program = g["_PROTO"].program
        named = set(re.findall(r"\b_k[0-9]+(?:_[0-9]+)?\b", source))  # (``_k12``, ``_k7_3``)
        out.append((filename, source, [(k, what(program, g, g[k])) for k in sorted(g) if k in named]))
        return real(source, filename, g, *kept)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(B, "define", define)
        rs = api.load_ruleset(path, use_cache=False, check_cache=False)
        if every:
            rs.backend(typed=True).write_all()
    return out


BUNDLED = sorted(p.relative_to(ROOT) for p in (ROOT / "rulesets").rglob("*.rules"))


def test_every_bundled_ruleset_s_code_played_again_is_the_code_it_writes_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every bundled ruleset loaded in the order a check takes them, in one process, each running its
    own data check and with the function of every definition written (most played again from another
    program's writing, ``written``), defines the same sources with the same constants, each of its own
    program, as when it is loaded in a process that wrote nothing: the key of a writing misses nothing
    the bundled rules make the writer read (it fails without ``memo_free`` or the inlined units in it)."""
    monkeypatch.chdir(ROOT)
    together = {}
    played: list[str] = []
    real = written._replay

    def counted(backend: Any, unit: Any, name: str, found: Any) -> Any:
        played.append(name)
        return real(backend, unit, name, found)

    monkeypatch.setattr(written, "_replay", counted)
    with nothing_shared():
        for p in BUNDLED:
            data._RUNS.clear()  # (each its own data check: the same functions met in the same order as alone)
            together[p] = writings(p, every=True)
    assert sum(len(w) for w in together.values()) > 300 and len(played) > 300  # (most played again)
    for p in BUNDLED:
        with nothing_shared():
            assert writings(p, every=True) == together[p], p


def test_a_variant_plays_the_base_s_writing_again_with_its_own_objects(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The standard rules' data check on the teaching map, then on another map (``many.rules``): the
    second program writes none of the functions the first wrote again, yet defines the same sources, each
    constant its own (its map, its units), as in a process that wrote nothing before; and it finds
    what the reference finds."""
    first, second = Path("rulesets/diplomacy/teaching.rules"), Path("tests/maps/many.rules")
    with nothing_shared():
        alone = writings(second)
    assert any(c[1][:2] == ("data", True) for _, _, consts in alone for c in consts)  # (it names its own map)
    want = reference_findings(second)
    forget_runs_and_code(monkeypatch)
    written_here = units_written(monkeypatch)
    writings(first)
    by_first = set(written_here)
    assert len(by_first) > 20  # (the first wrote its functions)
    del written_here[:]
    assert writings(second) == alone
    # none of those written for the first is written again (only those its own mistakes reach)
    assert len(alone) > len(written_here) and not by_first & set(written_here), written_here
    assert data_diagnostics(second) == want != []


INLINED = """ruleset t.inlined "inlined"
input k: int at "/k"
def h(x) = x * 10 + k
def g(x) = h(x) + 1
def v = g(3)
def w = k + 7
query main = [v, w]
"""


@pytest.mark.parametrize("base_first", [True, False])
def test_a_variant_overriding_a_definition_written_into_another_writes_that_one_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_first: bool) -> None:
    """`h` and `g` read the state and are each named once, so the backend writes them where they are
    called (``Backend.inlines``): `v`'s function holds `g`'s code, which holds `h`'s. A variant
    overriding `h` gets a `v` written for it, never the base's played again, and the answer its own,
    on both engines; a variant overriding `w` alone plays the base's `v` again."""
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "base.rules").write_text(INLINED)
    (tmp_path / "deep.rules").write_text('ruleset t.deep "deep"\nextends "base.rules"\noverride def h(x) = x * 100 + k\n')
    (tmp_path / "other.rules").write_text('ruleset t.other "other"\nextends "base.rules"\noverride def w = k + 8\n')
    monkeypatch.chdir(tmp_path)
    want = {"base": [33, 9], "deep": [303, 9], "other": [33, 10]}
    forget_runs_and_code(monkeypatch)
    written_here = units_written(monkeypatch)
    order = ["base", "deep", "other"] if base_first else ["deep", "other", "base"]
    for name in order:
        rs = api.load_ruleset(Path(f"{name}.rules"), use_cache=False, check_cache=False)
        inlined = [u for u in rs.program.units.values() if u.name in ("g", "h")]
        assert len(inlined) == 2 and all(rs.backend(typed=True).inlines(u) for u in inlined)  # (as the test says)
        del written_here[:]
        for engine in ("backend", "reference"):
            assert rs.run({"k": 2}, engine=engine) == want[name], (name, engine)
        assert "g" not in written_here and "h" not in written_here  # (written in `v`)
        # `v` played again in the last (after a program with the same `h`: "other" after "base", "base"
        # after "other"), never in "deep"; `w` written in the first and in "other" (its own `w`)
        assert ("v" not in written_here) == (name == order[-1]), (name, written_here)
        assert ("w" in written_here) == (name in (order[0], "other")), (name, written_here)


def test_a_writing_played_again_is_its_very_text(monkeypatch: pytest.MonkeyPatch) -> None:
    """A writing is played again only for a unit of the same number (``written.key``), and names are
    the units' numbers (``Backend.unit_name``, ``const``): the ancmed and pure maps' checks play the
    standard map's writings again with the very texts recorded, whose code the first writing compiled:
    nothing is compiled while a writing is played again (before names were by unit number, 10 and more
    texts a check were renamed, and their code made anew)."""
    from validator.engine import written

    compiled_in_replay: list[str] = []
    played: list[str] = []
    real, replay = B._compile_text, written._replay
    replaying = [False]

    def compile_text(source: str, filename: str) -> Any:
        if replaying[0]:
            compiled_in_replay.append(filename)
        return real(source, filename)

    def counted(backend: Any, unit: Any, name: str, t: Any) -> Any:
        played.append(name)
        replaying[0] = True
        try:
            return replay(backend, unit, name, t)
        finally:
            replaying[0] = False

    monkeypatch.setattr(B, "_compile_text", compile_text)
    monkeypatch.setattr(written, "_replay", counted)
    with nothing_shared():
        for name in ("standard", "ancmed", "pure"):
            api.load_ruleset(ROOT / "rulesets" / "diplomacy" / f"{name}.rules", use_cache=False, check_cache=False)
    assert len(played) > 10 and compiled_in_replay == []

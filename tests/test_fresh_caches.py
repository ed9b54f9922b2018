"""The caches that bring a fresh process near a warm one (``core.blobcache``): parsed modules
(``lang.astcache``), the backend's compiled code, a program's sound kinds and its units' writings
(``engine.codecache``). A warm process gives
exactly what a cold one gives; a changed source is another entry; an entry anyone else wrote or
changed is ignored; the folder is private and per-user."""

from __future__ import annotations

import json
import marshal
import os
import pickle
import subprocess
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator import api
from validator.core import blobcache, checkcache
from validator.core.diagnostics import Span
from validator.engine import backend, codecache, data, facts, written
from validator.lang import ast as A
from validator.lang import astcache, loader, syntax

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("RULEVAL_CACHE_DIR", str(folder))
    monkeypatch.delenv("RULEVAL_NO_CACHE", raising=False)
    return folder


class Counted:
    """How often the work a cache saves was done (parsing a module, compiling generated code, solving
    a program's kinds, writing a unit once its program's kinds are known)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.parses = self.compiles = self.solves = self.writes = 0
        self.compiled: list[str] = []  # the file names of the code compiled (``<ruleval _u7>``)
        self.sources: dict[str, str] = {}  # the texts the backends defined, by file name (written or played again)
        self.loads: dict[str, int] = {}  # the entries read, by kind
        parse, compile_text, solve = astcache.parse_module, backend._compile_text, facts.Facts.solved_here
        write_unit, define, load = backend.Backend.write_unit, backend.define, blobcache.load

        def counted_parse(*a: Any) -> Any:
            self.parses += 1
            return parse(*a)

        def counted_compile(*a: Any) -> Any:
            self.compiles += 1
            self.compiled.append(a[1])
            return compile_text(*a)

        def counted_solve(*a: Any) -> Any:
            self.solves += 1
            return solve(*a)

        def counted_write(b: backend.Backend, *a: Any) -> Any:
            self.writes += b.facts.solved  # (before, a writing reads no kind, and is not kept across processes)
            return write_unit(b, *a)

        def counted_define(source: str, filename: str, g: Any, *kept: Any) -> Any:
            if g["_PROTO"].backend.facts.solved:
                self.sources[filename] = source
            return define(source, filename, g, *kept)

        def counted_load(kind: str, *a: Any, **k: Any) -> Any:
            self.loads[kind] = self.loads.get(kind, 0) + 1
            return load(kind, *a, **k)

        monkeypatch.setattr(astcache, "parse_module", counted_parse)
        monkeypatch.setattr(blobcache, "load", counted_load)
        monkeypatch.setattr(backend, "_compile_text", counted_compile)
        monkeypatch.setattr(facts.Facts, "solved_here", counted_solve)
        monkeypatch.setattr(backend.Backend, "write_unit", counted_write)
        monkeypatch.setattr(backend, "define", counted_define)


def new_process(monkeypatch: pytest.MonkeyPatch) -> Counted:
    """Forget what this process keeps of loaded rulesets, parsed modules, data checks, writings and
    compiled code, as a new process would; count the parses, compilations and solvings from now on."""
    monkeypatch.setattr(api, "_cache", {})
    monkeypatch.setattr(loader, "_module_cache", {})
    monkeypatch.setattr(loader, "_data_cache", {})
    monkeypatch.setattr(data, "_RUNS", {})
    monkeypatch.setattr(codecache, "_CODE", {})
    monkeypatch.setattr(written, "_KEPT", {})
    monkeypatch.setattr(codecache, "_HELD", {})
    return Counted(monkeypatch)


def entries(cache: Path, kind: str) -> list[Path]:
    folder = cache / kind
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _same_spans(a: Any, b: Any) -> None:
    """Spans take no part in AST equality: compare them node by node."""
    if isinstance(a, A.Node):
        assert type(a) is type(b) and a.span == b.span, (a, b)
        for f in type(a)._compared:
            _same_spans(getattr(a, f), getattr(b, f))
    elif type(a) is tuple:
        assert len(a) == len(b)
        for x, y in zip(a, b):
            _same_spans(x, y)


@pytest.mark.parametrize("path", sorted(str(p.relative_to(ROOT)) for p in (ROOT / "rulesets").rglob("*.rules")))
def test_a_kept_parse_is_the_parse(cache: Path, monkeypatch: pytest.MonkeyPatch, path: str) -> None:
    text = (ROOT / path).read_text(encoding="utf-8")
    fresh = syntax.parse_module(text, path)
    count = new_process(monkeypatch)
    assert astcache.parsed(text, path) == fresh and count.parses == 1  # parsed, and kept
    kept = astcache.parsed(text, path)
    assert count.parses == 1  # read back, not parsed
    assert kept == fresh and type(kept) is A.Module
    _same_spans(kept, fresh)


CASES = ["tests/cases/jomini", "tests/cases/his", "tests/cases/diplomacy/impassable.yaml"]


def test_a_warm_process_gives_what_a_cold_one_gives(cli, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                   tmp_path: Path) -> None:
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    new_process(monkeypatch)
    uncached = [cli("test", case) for case in CASES] + [cli("check", "rulesets", "--jobs", "1", "--format", "json")]
    assert not cache.exists() or entries(cache, "parsed") == entries(cache, "code") == []  # off: nothing kept
    monkeypatch.delenv("RULEVAL_NO_CACHE")
    cold = new_process(monkeypatch)
    first = [cli("test", case) for case in CASES] + [cli("check", "rulesets", "--jobs", "1", "--format", "json")]
    assert cold.parses > 0 and cold.compiles > 0 and entries(cache, "parsed") and entries(cache, "code")
    # (the second process finds the check results kept by the first, so it writes some definitions in
    # another order, numbering their constants otherwise: other texts, compiled once more)
    second, third = [], []
    for outputs in (second, third):
        warm = new_process(monkeypatch)
        outputs += [cli("test", case) for case in CASES] + [cli("check", "rulesets", "--jobs", "1", "--format", "json")]
        assert warm.parses == 0 and warm.compiles < cold.compiles  # read back
    assert warm.compiles == 0 and warm.solves == 0  # everything read back
    for a, b, c, d in zip(uncached, first, second, third):
        assert (a.code, a.out, a.err) == (b.code, b.out, b.err) == (c.code, c.out, c.err) == (d.code, d.out, d.err)
        assert a.code == 0, a.out + a.err


@pytest.fixture
def project(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ruleval.toml").write_text("")
    (root / "main.rules").write_text("def double(x) = x * 2\nquery main = [double(n) for n in range(4)]\n")
    monkeypatch.chdir(root)
    return root


def run_main(monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Counted]:
    count = new_process(monkeypatch)
    rs = api.load_ruleset("main.rules")
    assert rs.ok, rs.diagnostics
    return rs.run({}, validate=False), count


KINDS = ("parsed", "code", codecache.KINDS, codecache.PROGRAMS)  # the folders of the kept entries


def test_a_changed_source_is_read_afresh(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert run_main(monkeypatch)[0] == [0, 2, 4, 6]
    before = {kind: entries(cache, kind) for kind in KINDS}
    again = run_main(monkeypatch)[1]
    assert again.parses == again.compiles == again.solves == again.writes == 0
    (project / "main.rules").write_text("def double(x) = x * 3\nquery main = [double(n) for n in range(4)]\n")
    result, count = run_main(monkeypatch)
    assert result == [0, 3, 6, 9]  # the new text's meaning, not the kept one's
    assert count.parses == 1 and count.compiles >= 1 and count.solves == 1 and count.writes == 2
    for kind in KINDS:
        assert set(before[kind]) < set(entries(cache, kind))  # another entry: the old one is never read for it


def _rewrite_as_before(path: Path, text: str) -> None:
    """The file given another text of its size, its modification time set back to the old one's."""
    st = path.stat()
    assert len(text.encode()) == st.st_size
    path.write_text(text)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_mtime_ns, path.stat().st_size) == (st.st_mtime_ns, st.st_size)


def test_what_a_process_keeps_of_a_file_is_kept_by_its_content(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A module's parse and a data file's value, kept in the process (``loader._module_cache``,
    ``_data_cache``), are used only while the file reads the same: a file rewritten at the same size and
    time is read afresh. (The warm workers of a check's sweep, forked from a process that checked a
    ruleset, use what it keeps: ``tools.sweep._on_warm_pool``.)"""
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    new_process(monkeypatch)
    assert api.load_ruleset("main.rules", use_cache=False).run({}, validate=False) == [0, 2, 4, 6]
    assert api.load_ruleset("main.rules", use_cache=False).run({}, validate=False) == [0, 2, 4, 6]
    _rewrite_as_before(project / "main.rules", "def double(x) = x * 3\nquery main = [double(n) for n in range(4)]\n")
    assert api.load_ruleset("main.rules", use_cache=False).run({}, validate=False) == [0, 3, 6, 9]
    (project / "d.yaml").write_text("a: 1\n")
    assert loader.load_data_file(project / "d.yaml", "d.yaml") == ({"a": 1}, [])
    _rewrite_as_before(project / "d.yaml", "a: 2\n")
    assert loader.load_data_file(project / "d.yaml", "d.yaml") == ({"a": 2}, [])
    # one entry a file, its latest text's: a process that sees a file edited many times (a server, an
    # editor's) keeps none of the earlier texts
    (project / "d.yaml").write_text("a: 30\n")
    assert loader.load_data_file(project / "d.yaml", "d.yaml") == ({"a": 30}, [])
    assert [k for k in loader._module_cache if k.endswith("main.rules")] == [loader._key(project / "main.rules")]
    assert [k for k in loader._data_cache if k.endswith("d.yaml")] == [loader._key(project / "d.yaml")]


def _tamper(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("how", ["edited", "unsigned", "renamed", "cut short"])
def test_an_entry_anyone_else_wrote_is_ignored(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch,
                                               how: str) -> None:
    run_main(monkeypatch)
    found = [entry for kind in KINDS for entry in entries(cache, kind)]
    assert len(found) >= 4 and entries(cache, codecache.KINDS) and entries(cache, codecache.PROGRAMS)
    bodies = [entry.read_bytes() for entry in found]
    for i, entry in enumerate(found):
        if how == "edited":
            _tamper(entry)
        elif how == "unsigned":  # the body as it was, under a signature not made with the key
            entry.write_bytes(bytes(blobcache.MAC_BYTES) + bodies[i][blobcache.MAC_BYTES:])
        elif how == "renamed":  # another entry's signed body (of another text, or kind) under this name
            entry.write_bytes(bodies[(i + 1) % len(found)])
        else:
            entry.write_bytes(bodies[i][:blobcache.MAC_BYTES - 1])
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6]
    assert count.parses == 1 and count.compiles >= 1 and count.solves == 1 and count.writes == 2  # each entry
    # ignored: the work done afresh


class _Runs:
    """What a pickle may name to be run when it is read: here, a program."""

    def __init__(self, argv: list[str]):
        self.argv = argv

    def __reduce__(self) -> Any:
        return (subprocess.call, (self.argv,))


def test_signed_entries_hold_only_what_they_should(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a signed entry is read back only as what it must be: a code object of the file asked for, an
    AST of ``lang.ast``'s classes."""
    run_main(monkeypatch)
    text = (project / "main.rules").read_text()
    # a signed pickle that would run a program: the reader finds no class but the AST's, and runs nothing
    ran = project / "ran"
    planted = pickle.dumps(_Runs(["touch", str(ran)]), protocol=5)
    blobcache.store("parsed", blobcache.name("parsed", astcache.FORMAT, "main.rules", text), planted)
    for entry in entries(cache, "code"):
        entry.unlink()
    source = "def f(ctx):\n    return 1\n"
    blobcache.store("code", blobcache.name("code", "<ruleval _u1>", source), marshal.dumps(("not", "code")))
    count = new_process(monkeypatch)
    assert codecache.compiled(source, "<ruleval _u1>", backend._compile_text).co_filename == "<ruleval _u1>"
    assert count.compiles == 1
    other = compile(source, "<elsewhere>", "exec")  # a real code object, of another file
    blobcache.store("code", blobcache.name("code", "<ruleval _u2>", source), marshal.dumps(other))
    assert codecache.compiled(source, "<ruleval _u2>", backend._compile_text).co_filename == "<ruleval _u2>"
    assert count.compiles == 2
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6] and count.parses == 1 and not ran.exists()
    pickle.loads(planted)  # (what any other unpickler would have done with it)
    assert ran.exists()


def test_the_folders_are_private_and_per_user(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_main(monkeypatch)
    for kind in KINDS:
        assert ((cache / kind).stat().st_mode & 0o777) == 0o700
    assert ((cache / "key").stat().st_mode & 0o777) == 0o600
    # an entry that is a link to a file elsewhere is not followed
    outside = project / "planted"
    entry = entries(cache, "parsed")[0]
    outside.write_bytes(entry.read_bytes())
    entry.unlink()
    entry.symlink_to(outside)
    assert run_main(monkeypatch)[1].parses == 1
    # a folder others may write to is not used at all: nothing read from it, nothing written to it
    # (the code is in two folders: per text, and with the program's writings)
    for kind in ("code", codecache.PROGRAMS):
        (cache / kind).chmod(0o777)
    before = [(e, e.read_bytes()) for kind in ("code", codecache.PROGRAMS) for e in entries(cache, kind)]
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6] and count.compiles >= 1 and count.writes == 2
    assert [(e, e.read_bytes()) for kind in ("code", codecache.PROGRAMS) for e in entries(cache, kind)] == before
    for kind in ("code", codecache.PROGRAMS):
        (cache / kind).chmod(0o700)
    assert run_main(monkeypatch)[1].compiles == 0
    # nor one of another user's
    if hasattr(os, "getuid"):
        uid = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: uid + 1)
        assert checkcache.private_dir("code") is None
        result, count = run_main(monkeypatch)
        assert result == [0, 2, 4, 6] and count.parses == 1 and count.compiles >= 1


def test_no_cache_means_none(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_main(monkeypatch)
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6] and count.parses == 1 and count.compiles >= 1 and count.solves == 1  # nothing read back


def test_spans_of_other_files_are_kept() -> None:
    module = A.Module("a.rules", (), (A.Name("x", Span("b.rules", 1, 2, 3, 4)),), Span("a.rules", 1, 1, 2, 1))
    back = astcache._read(pickle.dumps(module, protocol=5))
    assert back == module
    _same_spans(back, module)


def test_a_folder_past_its_bound_is_emptied(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run_main(monkeypatch)
    assert len(entries(cache, "code")) > 2
    monkeypatch.setattr(blobcache, "_CHECKED", set())
    monkeypatch.setattr(blobcache, "MAX_FOLDER_BYTES", 1)
    blobcache.store("code", "0" * 40, b"x")
    assert [p.name for p in entries(cache, "code")] == ["0" * 40]  # the old entries gone, the new one kept
    monkeypatch.setattr(blobcache, "_CHECKED", set())
    monkeypatch.setattr(blobcache, "MAX_FOLDER_BYTES", 10**9)
    monkeypatch.setattr(blobcache, "MAX_ENTRIES", 1)
    blobcache.store("code", "1" * 40, b"y")
    assert [p.name for p in entries(cache, "code")] == ["1" * 40]


_RUN_STATES = """
import json, sys
from validator import load_ruleset
rs = load_ruleset(sys.argv[1])
assert rs.ok, rs.diagnostics
for state in json.loads(sys.argv[2]):
    try:
        print(json.dumps(rs.run(state, "main", seed=1)))
    except Exception as exc:
        print(type(exc).__name__, [d.code for d in exc.diagnostics])
print("jsonschema" in sys.modules)
"""


def test_a_process_whose_states_all_pass_the_fast_check_needs_no_jsonschema(cache: Path, tmp_path: Path) -> None:
    """A state schema's usability is a finding of the ruleset's check (C015), kept by the check cache: a
    warm process runs states the fast check accepts without importing jsonschema (a fifth of a second), and
    one it does not accept still gets jsonschema's verdict and diagnostics. (A schema that is surely usable,
    ``state._surely_usable``, as this one is, needs no jsonschema in the first process either.)"""
    import subprocess
    import sys

    pig = str(ROOT / "docs" / "tutorial" / "pig.rules")
    env = {**os.environ, "RULEVAL_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("RULEVAL_NO_CACHE", None)

    def process(*states: Any) -> list[str]:
        done = subprocess.run([sys.executable, "-c", _RUN_STATES, pig, json.dumps(states)], env=env, cwd=tmp_path,
                              capture_output=True, text=True, check=True)
        return done.stdout.splitlines()

    good, bad = {"score": 10, "rolls": 2}, {"score": -1, "rolls": 2}
    cold = process(good)
    # the first process checks the ruleset, its schema against the meta-schema: surely usable, without jsonschema
    assert cold[0].startswith("{") and cold[-1] == "False"
    warm = process(good, good)
    assert warm[:-1] == cold[:-1] * 2 and warm[-1] == "False"
    refused = process(good, bad)
    assert refused[0] == cold[0] and refused[1:] == ["RunError ['S002']", "True"]


def test_the_checkers_findings_are_kept_with_the_files_they_read(project: Path, cache: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """A load finds the checker's passes' findings (and the data checks') in the check cache while
    none of the files it read changed: the passes do not run again; a changed file runs them."""
    (project / "main.rules").write_text("def double(x) = x * 2\ndef spare(y) = y\n"
                                        "query main = [double(n) for n in range(4)]\n")
    ran: list[int] = []
    passes = api.run_passes

    def counted(program: Any) -> Any:
        ran.append(1)
        return passes(program)

    monkeypatch.setattr(api, "run_passes", counted)

    def codes() -> list[tuple[str, str]]:
        new_process(monkeypatch)
        return [(d.code, d.message) for d in api.load_ruleset("main.rules").diagnostics]

    assert codes() == [("W101", "`spare` is never used")] and len(ran) == 1
    assert codes() == [("W101", "`spare` is never used")] and len(ran) == 1  # read back, not checked again
    (project / "main.rules").write_text("def double(x) = x * 2\ndef extra(y) = y\n"
                                        "query main = [double(n) for n in range(4)]\n")
    assert codes() == [("W101", "`extra` is never used")] and len(ran) == 2  # another text: checked afresh
    for entry in cache.glob("*.json"):
        _tamper(entry)
    assert codes() == [("W101", "`extra` is never used")] and len(ran) == 3  # a damaged entry: ignored
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    assert codes() == [("W101", "`extra` is never used")] and len(ran) == 4


def test_the_programs_checking_passes_are_kept_and_a_warm_program_is_the_cold_one(project: Path, cache: Path,
                                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """A load that finds its check kept makes the program (binding, the reference graph) but runs none of
    its checking passes (names, arities, tables, steps, statements): their findings come from the entry,
    the same and in the same order as a cold load's; a changed file runs them again. The program the warm
    load made is bound and analysed as a cold one is: every unit's referees and flags, and its runs."""
    from validator.lang import program as P

    clean = ("def double(x) = x * 2\ndef twice(x) = double(double(x))\ndef spare(y) = y\n"
             "table t[k] -> int cite \"T1\" {\n  | a | 1 |\n  | b | 2 |\n}\n"
             "rule r(n) cite \"R1\" = n > 1\nquery main = [twice(n) + t[\"a\"] for n in range(4) if r(n)]\n")
    # the names, arities and tables passes' findings (and a citation's)
    faulty = clean.replace(' cite \"R1\"', "").replace('t[\"a\"]', 't[\"a\", 1] + doubel(n) + double(1, 2)')
    checked: list[int] = []
    check_program = api.check_program

    def counted(program: Any) -> None:
        checked.append(1)
        check_program(program)

    monkeypatch.setattr(api, "check_program", counted)

    def a_load(text: str) -> tuple[Any, list[Any], list[Any]]:
        (project / "main.rules").write_text(text)
        new_process(monkeypatch)
        rs = api.load_ruleset("main.rules")
        unbound = [type(u) is not P.Unit for u in rs.program.units.values()]
        units = [sorted(rs.program.refs.items()), unbound] + [
            (k, u.used, u.recursive, u.counted, u.uses_decisions, u.state_free, len(u.globals),
             sorted((type(r).__name__, getattr(getattr(r, "unit", None), "name", None), getattr(r, "name", None))
                    for r in u.bound.values())) for k, u in rs.program.units.items()]
        return rs, [(d.code, d.message, d.span) for d in rs.diagnostics], units

    for text, codes in ((faulty, {"C001", "C003", "C011", "W101"}), (clean, {"W101"})):
        ran = len(checked)
        cold, cold_diags, cold_units = a_load(text)
        assert len(checked) == ran + 1 and codes == {c for c, _, _ in cold_diags}, cold_diags
        warm, warm_diags, warm_units = a_load(text)
        assert len(checked) == ran + 1  # the findings read back, the passes not run
        assert warm_diags == cold_diags and warm_units[2:] == cold_units[2:] and warm_units[0] == cold_units[0]
        assert not any(cold_units[1]) and all(warm_units[1])  # (each unit bound at its first need)
        monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
        off, off_diags, off_units = a_load(text)
        monkeypatch.delenv("RULEVAL_NO_CACHE")
        assert len(checked) == ran + 2 and off_diags == cold_diags and off_units == cold_units
    assert warm.run({}, validate=False) == cold.run({}, validate=False) == [9, 13]
    # a changed file: its graph made afresh, not the entry's (`double` now recursive, `spare` used)
    changed = clean.replace("x * 2", "x * 2 + (if x > 9 then 0 else double(x + 1) - double(x + 1))").replace(
        "if r(n)]", "if r(spare(n))]")
    again, again_diags, again_units = a_load(changed)
    assert len(checked) == 5 and not any(again_units[1]) and "W101" not in {c for c, _, _ in again_diags}
    units = {u.name: u for u in again.program.units.values()}
    assert units["double"].recursive and units["spare"].used
    assert again.run({}, validate=False) == [9, 13]
    _, _, kept_units = a_load(changed)
    assert len(checked) == 5 and all(kept_units[1]) and kept_units[0] == again_units[0] and kept_units[2:] == again_units[2:]


@pytest.mark.parametrize("path", ["rulesets/diplomacy/standard.rules", "rulesets/diplomacy/standard_germany_italy.rules",
                                  "rulesets/jomini/am.rules", "rulesets/his/his.rules", "docs/tutorial/pig.rules"])
def test_a_kept_reference_graph_and_a_lazy_binding_are_the_made_ones(cache: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     path: str) -> None:
    """A load that finds its check kept takes the reference graph from the entry and binds no unit until
    something reads its binding: every flag and reference, and every unit's binding made at its first
    need, are what a load that made them finds; a run of every query a state-free program has agrees."""
    from validator.lang import program as P

    def summary(rs: Any) -> list[Any]:
        return [(k, [getattr(u, f) for f in P._FLAGS], sorted(rs.program.refs[k]), rs.program.rolls,
                 [(n, type(r).__name__, getattr(getattr(r, "unit", None), "index", None), getattr(r, "name", None),
                   getattr(r, "slot", None)) for n, r in u.bound.items()], len(u.globals))
                for k, u in rs.program.units.items()]

    new_process(monkeypatch)
    made = api.load_ruleset(ROOT / path)
    assert made.ok and all(type(u) is P.Unit for u in made.program.units.values())
    # (the same declarations: the parsed modules are this process's, so nodes are named by identity alike)
    monkeypatch.setattr(api, "_cache", {})
    kept = api.load_ruleset(ROOT / path)
    assert kept.ok and kept.program is not made.program
    assert all(type(u) is not P.Unit for u in kept.program.units.values())
    assert summary(kept) == summary(made)
    assert P.PASSES[P.MAKING - 1][0] == "reference graph"  # (what a warm load makes: binding and the graph)


TURNS = 8  # random turns after the example's: the first three of them write the last functions 200 turns write


def test_a_process_that_finds_the_check_kept_writes_the_code_the_first_one_wrote(cache: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """The data checks of a load run on a backend of their own: the ruleset's backend names its
    functions in the order its runs first call them, whether the load ran the checks (the first
    process) or found them in the check cache (every later one), so that a later process finds in the
    code cache the code the first one wrote, and compiles none of it again; nor solves the kinds again,
    nor writes any unit (it plays the writings the first one kept, with their code, ``codecache.writing``: the same texts).
    Over the example's turn and random ones (``bench.ab_instructions --fresh``'s), which write every
    function 200 of them write."""
    from bench.peers.dip_positions import random_turns

    rules = ROOT / "rulesets" / "diplomacy" / "standard.rules"
    states = [json.loads((ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json").read_text()),
              *random_turns(777, TURNS, 34)]

    def a_process() -> tuple[dict[int, str], list[Any], Counted]:
        counted = new_process(monkeypatch)
        rs = api.load_ruleset(rules)
        assert rs.ok
        results = [rs.run(state) for state in states]
        return dict(rs.backend(typed=True).unit_names), results, counted

    first, results, cold = a_process()
    second, again, warm = a_process()
    assert cold.compiles > 100 and cold.solves >= 1 and cold.writes > 100 and first == second and again == results
    assert warm.compiles == 0 and warm.solves == 0 and warm.writes == 0  # (each writing played from the first's)
    # (one entry of writings per backend, which holds their code: no entry of a single text is read)
    assert "code" not in warm.loads and 1 <= warm.loads[codecache.PROGRAMS] <= 2, warm.loads
    assert warm.sources == cold.sources  # (the very texts, with the very names)


def test_a_process_of_other_runs_compiles_no_function_the_first_one_wrote(cache: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A function's text depends on its unit alone, not on what the process wrote before it: its name is
    the unit's number, its constants' names are its unit's number and their own (``Backend.const``). So a
    process whose runs call the functions in another order (other turns) finds the code of every
    function the first process wrote, and compiles only functions that one never wrote (before, names
    were given in the order of the first calls: 136 of 192 functions compiled again)."""
    from bench.peers.dip_positions import random_turns

    rules = ROOT / "rulesets" / "diplomacy" / "standard.rules"

    def a_process(seed: int) -> tuple[list[Any], Counted]:
        counted = new_process(monkeypatch)
        rs = api.load_ruleset(rules)
        assert rs.ok
        return [rs.run(state) for state in random_turns(seed, TURNS, 34)], counted

    _, first = a_process(777)
    first_compiled = set(first.compiled)  # (taken now: its counters, still patched in, count the next process's too)
    results, second = a_process(778)
    assert len(first_compiled) > 100 and not set(second.compiled) & first_compiled
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    assert a_process(778)[0] == results  # (as a process with no cache runs them)


SOLVED = ("rulesets/diplomacy/standard.rules", "rulesets/diplomacy/teaching.rules", "rulesets/his/his.rules",
          "rulesets/jomini/errata_heavy_infantry.rules", "docs/tutorial/pig.rules")


@pytest.mark.parametrize("typed", [True, False])
@pytest.mark.parametrize("path", SOLVED)
def test_kept_kinds_are_the_kinds_solved(cache: Path, monkeypatch: pytest.MonkeyPatch, path: str, typed: bool) -> None:
    """A later process reads back the kinds the first one solved (``codecache.solve``): the very
    parameters', nodes' and inputs' kinds a solving of its own program gives. ``Facts`` holds nothing
    else ``solve`` sets (a new field: say whether solving sets it, and keep it in the entry)."""
    def backend_of() -> backend.Backend:
        rs = api.load_ruleset(ROOT / path)
        assert rs.ok
        return backend.Backend(rs.program, typed)

    def a_kind(b: backend.Backend) -> None:  # (the first need of a kind: ``Facts.defer``)
        b.facts.of(next(iter(b.program.units.values())))

    new_process(monkeypatch)
    b = backend_of()
    codecache.solve(b.facts, b.unwritten)
    a_kind(b)
    count = new_process(monkeypatch)
    b = backend_of()
    codecache.solve(b.facts, b.unwritten)
    assert count.loads.get(codecache.KINDS, 0) == 0 and b.facts.pending is not None
    a_kind(b)
    assert count.solves == 0 and b.facts.solved and b.facts.pending is None
    assert count.loads[codecache.KINDS] == 1
    solved = facts.Facts(b.program, typed)
    solved.solve()
    assert count.solves == 1
    assert set(vars(b.facts)) == set(vars(solved)) == {"program", "typed", "inputs", "deep", "shallow", "busy", "data",
                                                        "params", "solved", "calls", "solving", "digest", "pending"}
    assert solved.digest is None and b.facts.digest  # (``codecache.solve`` names the program, not the solving)
    assert (b.facts.params, b.facts.deep, b.facts.inputs) == (solved.params, solved.deep, solved.inputs)
    assert b.facts.deep and all(set(kinds) == set(solved.deep[i]) for i, kinds in b.facts.deep.items())
    assert not b.facts.busy and not b.facts.calls and not b.facts.solving


def test_kept_kinds_must_name_the_programs_nodes(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a signed entry of kinds is read back only if it names the program's units, with as many
    nodes, and only node numbers, kind numbers, types and tags: else it is ignored and the program solved."""
    run_main(monkeypatch)
    [entry] = entries(cache, codecache.KINDS)
    body = json.loads(blobcache.load(codecache.KINDS, entry.name, codecache.MAX_KINDS_BYTES))
    assert body["deep"] and body["units"]

    def planted(**changed: Any) -> tuple[Any, Counted]:  # (no writings kept: the run writes, so reads kinds)
        blobcache.store(codecache.KINDS, entry.name, json.dumps({**body, **changed}).encode())
        for kept in entries(cache, codecache.PROGRAMS):
            kept.unlink()
        result, count = run_main(monkeypatch)
        assert count.writes and count.loads[codecache.KINDS] == 1
        return result, count

    def pairs(f: Any) -> list[Any]:  # each unit's (node number, kind number) pairs, changed by f(number, is_node)
        return [[i, count, [f(x, n % 2 == 0) for n, x in enumerate(flat)]] for i, count, flat in body["deep"]]

    other_units = [[ns, name + "x", kind, i] for ns, name, kind, i in body["units"]]
    more_nodes = [[i, count + 1 if count is not None else None, flat] for i, count, flat in body["deep"]]
    a_float = [0.5 for _ in body["kinds"]]
    from_the_end = pairs(lambda x, node: -1 - x if node else x)
    past_the_kinds = pairs(lambda x, node: x if node else x + len(body["kinds"]))
    truth = pairs(lambda x, node: x == 1 if not node and x in (0, 1) else x)
    assert from_the_end != body["deep"] and json.dumps(truth) != json.dumps(body["deep"])  # (False == 0 in Python)
    for changed in ({"units": other_units}, {"deep": more_nodes}, {"kinds": a_float}, {"deep": from_the_end},
                    {"deep": past_the_kinds}, {"deep": truth}):
        result, count = planted(**changed)
        assert result == [0, 2, 4, 6] and count.solves == 1, changed
    result, count = planted()  # (the body as it was: read back)
    assert result == [0, 2, 4, 6] and count.solves == 0


def test_a_run_that_plays_kept_writings_reads_no_kinds(project: Path, cache: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run whose units are all played from its program's kept writings needs no kind: the kinds' entry is
    not read (``Facts.defer``); even an entry that names other units is then never looked at, and a run
    that does write reads it whole, finds it unfit and solves the program."""
    run_main(monkeypatch)
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6] and count.loads.get(codecache.KINDS, 0) == 0 and count.solves == count.writes == 0
    [entry] = entries(cache, codecache.KINDS)
    body = json.loads(blobcache.load(codecache.KINDS, entry.name, codecache.MAX_KINDS_BYTES))
    unfit = {**body, "units": [[ns, name + "x", kind, i] for ns, name, kind, i in body["units"]]}
    blobcache.store(codecache.KINDS, entry.name, json.dumps(unfit).encode())
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6] and count.loads.get(codecache.KINDS, 0) == 0 and count.solves == 0
    for kept in entries(cache, codecache.PROGRAMS):
        kept.unlink()
    result, count = run_main(monkeypatch)
    assert result == [0, 2, 4, 6] and count.writes and count.loads[codecache.KINDS] == 1 and count.solves == 1


def test_a_writing_played_from_another_program_is_kept_for_this_one(project: Path, cache: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Two variants of one base in a process: the second plays the base's units from the first's
    writings (``written``: the same key) and keeps them for its own program too, so that a process
    running the second alone writes none of them; it gives what the reference gives."""
    (project / "a.rules").write_text('ruleset t.a\nextends "main.rules"\ndef extra = 1\n')
    (project / "b.rules").write_text('ruleset t.b\nextends "main.rules"\ndef extra = 2\n')

    def process(*names: str) -> tuple[list[Any], Counted]:
        count = new_process(monkeypatch)
        out = []
        for name in names:
            rs = api.load_ruleset(f"{name}.rules")
            assert rs.ok, rs.diagnostics
            out.append(rs.run({}, validate=False))
        return out, count

    first, count = process("a", "b")
    assert first == [[0, 2, 4, 6]] * 2 and count.writes == 2  # (b wrote nothing: a's writings played)
    second, count = process("b")
    assert second == [[0, 2, 4, 6]] and count.writes == 0
    rs = api.load_ruleset("b.rules")
    assert rs.run({}, validate=False, engine="reference") == second[0]


def test_kept_writings_must_name_the_programs_units_and_nodes(project: Path, cache: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """Even a signed writing (``codecache.writing``) is played again only if it names the program's units
    (where they are, with their numbers), nodes and built-ins, ruleval's own functions, and in its texts
    only names its calls give: else it is ignored and the unit written (each plant below changes every
    entry, and both units are written again)."""
    run_main(monkeypatch)
    [entry] = entries(cache, codecache.PROGRAMS)
    kept = marshal.loads(blobcache.load(codecache.PROGRAMS, entry.name, codecache.MAX_PROGRAM_BYTES))
    bodies = kept["writings"]
    assert len(bodies) == 2 and all(b["unit"][0] == "" for b in bodies.values()) and kept["codes"]

    def planted(change: Any) -> tuple[Any, Counted]:
        writings = {}
        for i, body in bodies.items():
            writings[i] = change(json.loads(json.dumps(body)))
            assert writings[i] != body
        blobcache.store(codecache.PROGRAMS, entry.name, marshal.dumps({**kept, "writings": writings}))
        return run_main(monkeypatch)

    def each_const(f: Any) -> Any:  # each constant's recipe changed by f
        return lambda b: {**b, "events": [[*ev[:2], f(ev[2])] if ev[0] == "const" else ev for ev in b["events"]]}

    def each_span(f: Any) -> Any:
        return each_const(lambda r: ["same", f(r[1])] if r[0] == "same" and type(r[1]) is list else r)

    plants = [
        lambda b: {**b, "unit": [*b["unit"][:2], b["unit"][2] + 1]},  # another unit's number
        lambda b: {**b, "unit": ["elsewhere", *b["unit"][1:]]},  # a unit of another namespace
        lambda b: {**b, "events": [ev for ev in b["events"] if ev[0] != "const"]},  # names no call gives
        lambda b: {**b, "events": [[*ev[:2], ev[2] + "\n# _k1_99"] if ev[0] == "code" else ev for ev in b["events"]]},
        each_span(lambda v: ["span", v[1], *v[2:5], "0"]),  # a span of a wrong shape
        each_span(lambda v: ["function", "os", "system"]),  # a function not ruleval's own
        each_span(lambda v: ["function", "validator.engine.backend", "Backend"]),  # a class
        each_span(lambda v: ["node", ["", "double", 1], 10 ** 6, "Name"]),  # past the unit's nodes
        each_span(lambda v: 0.5),  # a value of another JSON type
        # a code number past the texts compiled, a table of another shape, a unit named with another's number
        lambda b: each_const(lambda r: ["code", 7] if r[0] == "code" else ["table", 1] if r[0] == "table" else r)(
            {**b, "events": [[*ev[:2], [*ev[2][:2], 7]] if ev[0] == "unit" else ev for ev in b["events"]]}),
    ]
    for i, plant in enumerate(plants):
        result, count = planted(plant)
        assert result == [0, 2, 4, 6] and count.writes == 2, i
    result, count = planted(lambda b: {**b, "padding": 1})  # (another key: ignored, the writing played)
    assert result == [0, 2, 4, 6] and count.writes == 0
    # the entry as a whole: of other units, it is ignored; its code is run only if compiled from the file
    # name asked for (the per-text entries removed: what the program's entry lacks is compiled)
    other_units = [[ns, name + "x", kind, i] for ns, name, kind, i in kept["units"]]
    for changed, writes in (({"units": other_units}, 2), ({"writings": [], "codes": []}, 2), ({}, 0)):
        blobcache.store(codecache.PROGRAMS, entry.name, marshal.dumps({**kept, **changed}))
        result, count = run_main(monkeypatch)
        assert result == [0, 2, 4, 6] and count.writes == writes, changed
    elsewhere = {(text, name): compile(text, "<elsewhere>", "exec") for text, name in kept["codes"]}
    texts = len(kept["codes"])
    for codes, compiles in ((elsewhere, texts), ({k: ("not", "code") for k in kept["codes"]}, texts),
                            (kept["codes"], 0)):
        for e in entries(cache, "code"):
            e.unlink()
        blobcache.store(codecache.PROGRAMS, entry.name, marshal.dumps({**kept, "codes": codes}))
        result, count = run_main(monkeypatch)
        assert result == [0, 2, 4, 6] and count.writes == 0 and count.compiles == compiles
        assert all(name.startswith("<ruleval ") for name in count.compiled)


def test_kinds_not_kept_for_a_program_too_deep_to_digest(project: Path, cache: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """A program whose values cannot be digested (``repr`` past the recursion limit: data files are
    bounded well below it, so only a guard) is solved in each process, and runs as any other."""
    def too_deep(*a: Any) -> Any:
        raise RecursionError

    monkeypatch.setattr(codecache, "_program_parts", too_deep)
    for _ in range(2):
        result, count = run_main(monkeypatch)
        assert result == [0, 2, 4, 6] and count.solves == 1
    assert entries(cache, codecache.KINDS) == []


def _typed(v: Any) -> Any:
    """A value with the type of every part in it (``==`` takes ``True`` for ``1`` and ``1.0`` for ``1``)."""
    if type(v) is dict:
        return ("dict", [(k, _typed(x)) for k, x in v.items()])
    if type(v) is list:
        return ("list", [_typed(x) for x in v])
    return (type(v).__name__, repr(v))


DATA = ("b: [1, 2.0, 0.1, -0.0, 1e300, true, null, 'x', \"\\u00e9\", 123456789012345678901234567890]\n"
        "a: {z: {}, y: [], yes_: on, '1': 1}\n")


def test_a_kept_data_file_is_the_data_file(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A YAML data file's value is kept across processes (``loader._yaml_value``): a later process reads it
    back without reading the YAML, as the same value, types and key order included, floats read exactly."""
    from validator.core import safeyaml

    (project / "d.yaml").write_text(DATA, encoding="utf-8")
    reads: list[str] = []
    load = safeyaml.load
    monkeypatch.setattr(safeyaml, "load", lambda text: reads.append(text) or load(text))
    values, kept = [], None
    for _ in range(3):
        new_process(monkeypatch)
        kept, diags = loader.load_data_file(project / "d.yaml", "d.yaml")
        assert diags == []
        values.append(_typed(kept))
    assert len(reads) == 1 and len(entries(cache, loader.DATA_KIND)) == 1  # read once, then read back
    assert values[0] == values[1] == values[2]
    assert type(kept["b"][2]) is Fraction and kept["b"][2] == Fraction(1, 10)  # 0.1 read as the decimal it writes
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    new_process(monkeypatch)
    assert _typed(loader.load_data_file(project / "d.yaml", "d.yaml")[0]) == values[0]  # as the YAML reads


_TEXT = st.text(st.characters(whitelist_categories=("L", "N", "P", "S", "Zs")), max_size=6)  # (YAML folds breaks)
_JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4), max_leaves=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(value=_JSONISH)
def test_any_kept_yaml_value_reads_back_as_read(value: Any, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``_yaml_value`` keeps is JSON text that reads back as the very value the YAML gave, every part's type
    and every map's key order included (the claim it stores an entry on, without reading it back to check)."""
    import yaml

    from validator.core import safeyaml

    text = yaml.safe_dump({"v": value}, allow_unicode=True, sort_keys=False)
    faults: list[Any] = []
    read = safeyaml.load(text)
    assert read == {"v": value}  # (the YAML reads what was dumped)
    loader._yaml_value(text, "d.yaml", faults)  # kept (or read back, if an earlier example wrote this text)
    with monkeypatch.context() as m:
        m.setattr(safeyaml, "load", lambda text: pytest.fail("a kept value was read from its YAML"))
        assert _typed(loader._yaml_value(text, "d.yaml", faults)) == _typed(read) and faults == []


def test_a_data_file_with_a_fault_is_not_kept(project: Path, cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "d.yaml").write_text("a: .nan\n1: x\n", encoding="utf-8")
    for _ in range(2):
        new_process(monkeypatch)
        value, diags = loader.load_data_file(project / "d.yaml", "d.yaml")
        assert value is None and [d.code for d in diags] == ["C008"]
    assert entries(cache, loader.DATA_KIND) == []


def test_a_process_whose_data_files_are_kept_needs_no_yaml(cache: Path, tmp_path: Path) -> None:
    """The YAML library is imported only to read a data file not kept (or to locate a finding in one)."""
    import subprocess
    import sys

    env = {**os.environ, "RULEVAL_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    env.pop("RULEVAL_NO_CACHE", None)
    child = ("import sys; from validator import load_ruleset; rs = load_ruleset(sys.argv[1]); "
             "print(rs.ok, 'yaml' in sys.modules)")
    standard = str(ROOT / "rulesets" / "diplomacy" / "standard.rules")

    def process() -> str:
        return subprocess.run([sys.executable, "-c", child, standard], env=env, cwd=tmp_path, capture_output=True,
                              text=True, check=True).stdout.strip()

    assert process() == "True True"  # the first reads the map's YAML
    assert process() == "True False"

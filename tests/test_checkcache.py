"""The check cache: unchanged rulesets are not parsed again; any change to any file they read
(module, extended base, data, schema, catalogue) brings a fresh check."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from validator import api

from validator.core import checkcache


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("RULEVAL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("RULEVAL_NO_CACHE", raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ruleval.toml").write_text("")
    (root / "clauses.yaml").write_text("clauses: {R-1: a rule}\n")
    (root / "data.yaml").write_text("k: 3\n")
    (root / "base.rules").write_text('clauses "clauses.yaml"\nimport "data.yaml" as data\n'
                                     'rule r cite "R-1" = data.k\nquery main = r\n')
    (root / "variant.rules").write_text('extends "base.rules"\noverride rule r cite "R-1" = data.k + 1\n')
    monkeypatch.chdir(root)
    return root


def _no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a, **k):
        raise AssertionError("the ruleset was loaded although nothing changed")
    monkeypatch.setattr(api, "load_ruleset", refuse)


def test_second_check_reuses_the_result(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first, diags = api.check_paths(["."])
    assert len(first) == 2 and not diags
    _no_parsing(monkeypatch)
    again, diags2 = api.check_paths(["."])
    assert [r.path for r in again] == [r.path for r in first] and diags2 == diags


@pytest.mark.parametrize("changed", ["base.rules", "data.yaml", "clauses.yaml"])
def test_a_change_to_any_file_read_means_a_fresh_check(project: Path, changed: str) -> None:
    api.check_paths(["variant.rules"])
    path = project / changed
    if changed == "base.rules":
        path.write_text(path.read_text().replace("query main = r", "query main = rr"))  # inherited
    elif changed == "data.yaml":
        path.write_text("k: [unclosed\n")
    else:
        path.write_text("clauses: {R-2: another}\n")
    _, diags = api.check_paths(["variant.rules"])
    assert diags, f"changing {changed} must be noticed"


def test_cached_diagnostics_are_identical(project: Path) -> None:
    (project / "bad.rules").write_text('query main = undefined_name + 1\n')
    _, fresh = api.check_paths(["bad.rules"])
    _, cached = api.check_paths(["bad.rules"])
    assert fresh == cached and fresh[0].code == "C001"


def test_no_cache_and_corrupt_entries(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api.check_paths(["base.rules"])
    entry = next(Path(checkcache.cache_dir()).glob("*.json"))
    entry.write_text("{not json")
    _, diags = api.check_paths(["base.rules"])  # a corrupt entry is a miss, not an error
    assert not diags
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    assert checkcache.cache_dir() is None
    assert checkcache.lookup(project / "base.rules") is None


def test_cache_holds_only_json(project: Path) -> None:
    api.check_paths(["."])
    for entry in Path(checkcache.cache_dir()).glob("*.json"):
        doc = json.loads(entry.read_text())
        assert set(doc) == {"mac", "body"}  # signed: see tests/adversarial/test_files.py
        assert set(doc["body"]) - {"extra"} == {"tool", "cwd", "ruleset", "files", "placed", "diagnostics", "kind"}
        # (a load's check keeps the reference graph it found: numbers and truth values, ``program.graph_json``)
        assert set(doc["body"].get("extra") or {"units": 0, "refs": 0, "flags": 0, "rolls": 0}) == {
            "units", "refs", "flags", "rolls"}


def test_a_change_to_ruleval_itself_means_a_fresh_check(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    api.check_paths(["base.rules"])
    assert checkcache.lookup(project / "base.rules") is not None
    monkeypatch.setattr(checkcache, "_KEY_CACHE", ["another-build"])
    assert checkcache.lookup(project / "base.rules") is None


@pytest.mark.parametrize("name", ["diplomacy/standard.rules", "diplomacy/standard_fleet_rome.rules", "his/his.rules"])
def test_the_files_read_are_each_shown_path_resolved(name: str) -> None:
    """``api.files_read`` takes a shown path's resolved file from the load (``Loaded.read``) rather than
    resolving it again: the same files, in the same order, as resolving each shown path it names."""
    from validator.lang.loader import real_path

    root = Path(__file__).resolve().parent.parent
    loaded = api.load_ruleset(root / "rulesets" / name, use_cache=False, check_cache=False).program.loaded
    expected: dict[str, int] = {}
    for ns in loaded.namespaces.values():
        data_schemas = [b.schema for b in ns.data.values() if b.schema is not None]
        for shown in [*ns.chain, *(b.path for b in ns.data.values()), ns.schema_path, ns.clauses_path,
                      *ns.schema_files, *(sc.path for sc in data_schemas), *(f for sc in data_schemas for f in sc.files)]:
            if shown is not None:
                expected[str(real_path(shown))] = real_path(shown).stat().st_mtime_ns
    for real in loaded.read:
        expected.setdefault(real, Path(real).stat().st_mtime_ns)
    assert len(expected) > 3  # (a ruleset, its catalogue, schema and data at least)
    assert list(api.files_read(loaded).items()) == list(expected.items())


@pytest.mark.parametrize("how", ["one process", "checked apart"])
def test_a_file_saved_while_it_is_checked_is_checked_again(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                          how: str) -> None:
    """A file saved after the check read it and before its result is kept (an editor saving while a check
    runs): the result kept is the text the check read, never the new text's, so the new text is checked."""
    base = project / "base.rules"
    real = api._data_findings

    def save_meanwhile(*args, **kwargs):
        if '"a"' not in base.read_text():  # (a finding of the checker's passes, which the cache keeps)
            base.write_text(base.read_text().replace("query main = r", 'query main = 1 + "a"'))
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "_data_findings", save_meanwhile)
    if how == "one process":
        first = api.load_ruleset(base, check_cache=True, use_cache=False)
    else:
        first = api.check_paths(["base.rules"])[0][0]
    assert not first.diagnostics  # (the text it read was sound)
    monkeypatch.setattr(api, "_data_findings", real)
    _, diags = api.check_paths(["base.rules"])
    expected = api.check_paths(["base.rules"], use_cache=False)[1]  # (the new text's, read afresh)
    assert "C004" in [d.code for d in expected]
    assert diags == expected, "the text saved during the check must not take its result"
    assert api.load_ruleset(base, check_cache=True, use_cache=False).diagnostics == \
        api.load_ruleset(base, check_cache=False, use_cache=False).diagnostics


def test_an_entry_never_completes_a_program_made_from_another_text(project: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """The load read one text, the file holds another by the time the cache is asked (saved meanwhile),
    and the cache has that other text's findings: they are not taken for the program made from the first."""
    base = project / "base.rules"
    sound = base.read_text()
    broken = sound.replace("query main = r", 'query main = 1 + "a"')
    base.write_text(broken)
    assert "C004" in [d.code for d in api.load_ruleset(base, use_cache=False).diagnostics]  # (its entry kept)
    base.write_text(sound)
    real = api.build_program

    def save_meanwhile(*args, **kwargs):
        base.write_text(broken)
        return real(*args, **kwargs)

    monkeypatch.setattr(api, "build_program", save_meanwhile)
    got = api.load_ruleset(base, use_cache=False)
    monkeypatch.setattr(api, "build_program", real)
    base.write_text(sound)
    assert got.diagnostics == api.load_ruleset(base, check_cache=False, use_cache=False).diagnostics
    assert "C004" not in [d.code for d in got.diagnostics]


def test_one_entry_per_real_path_shown_as_the_command_line_writes_it(project: Path, cli,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """`check ./x.rules` and `check x.rules` kept an entry each (the key held how paths were shown): the
    entry is now the real file's, its diagnostics' files kept as absolute paths and shown as they are
    where it is read: as written on the command line, from another folder relative to it."""
    (project / "w.rules").write_text('def unused = 1\nquery main = 1\n')  # (a warning, W101, at line 1)
    cache = Path(checkcache.cache_dir())
    assert "w.rules:1:" in cli("check", "w.rules").err
    entries = set(cache.glob("*.json"))
    r = cli("check", "./w.rules")
    assert set(cache.glob("*.json")) == entries, "a second entry for the same file"
    assert "./w.rules:1:" in r.err and " w.rules:1:" not in r.err, r.err
    _no_parsing(monkeypatch)  # (a cache hit from here on: nothing is loaded)
    assert "./w.rules:1:" in cli("check", "./w.rules").err
    (project / "sub").mkdir()
    monkeypatch.chdir(project / "sub")
    r = cli("check", "../w.rules")
    assert r.err.startswith("../w.rules:1:"), r.err
    assert set(cache.glob("*.json")) == entries


def test_an_entry_quoting_a_shown_path_is_used_where_paths_are_shown_the_same(project: Path, cli) -> None:
    """A message that names a file as shown then (an import cycle) would name it wrongly elsewhere: such
    an entry is used only under the same way of showing paths, and checked afresh otherwise."""
    (project / "a.rules").write_text('import "b.rules" as b\nquery main = 1\n')
    (project / "b.rules").write_text('import "a.rules" as a\ndef x = 1\n')
    first = cli("check", "a.rules").err
    assert "a.rules -> b.rules -> a.rules" in first, first
    assert cli("check", "a.rules").err == first
    again = cli("check", "./a.rules").err
    assert "./a.rules -> b.rules -> ./a.rules" in again, again

"""The rulesets a process keeps (``api._cache``: the playground, any long-lived user of the API) are served
again only while every file they were loaded from holds what the load read (``api._fresh``,
``confine.still``): a file is compared by what it was when its bytes were read, not after the load, and a
file saved within its clock's tick of the read (racy) by its bytes; a file that is not racy costs a
``stat``, its bytes unread."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from validator import api
from validator.core import confine


@pytest.fixture(params=["check cache", "no check cache"])
def project(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A ruleset reading a module and a data file; loaded with the check cache on (every file's bytes
    hashed as the load reads them) or off (only a racy file's)."""
    monkeypatch.setenv("RULEVAL_CACHE_DIR", str(tmp_path / "cache"))
    if request.param == "no check cache":
        monkeypatch.setenv("RULEVAL_NO_CACHE", "1")
    else:
        monkeypatch.delenv("RULEVAL_NO_CACHE", raising=False)
    monkeypatch.setattr(api, "_cache", {})
    root = tmp_path / "proj"
    root.mkdir()
    (root / "ruleval.toml").write_text("")
    (root / "data.yaml").write_text("k: 3\n")
    (root / "lib.rules").write_text('import "data.yaml" as data\ndef base = data.k * 10\n')
    (root / "main.rules").write_text('extends "lib.rules"\nquery main = base + 1\n')
    monkeypatch.chdir(root)
    return root


# each file given a new text of its old size, and what `main` then answers
NEW = {"main.rules": ('extends "lib.rules"\nquery main = base + 2\n', 32),
       "lib.rules": ('import "data.yaml" as data\ndef base = data.k * 20\n', 61),
       "data.yaml": ("k: 4\n", 41)}


def answer(rs: api.Ruleset) -> Any:
    assert rs.ok, rs.diagnostics
    return rs.run({}, validate=False)


def rewrite(path: Path, text: str) -> None:
    """``path`` given ``text`` in place, at its old size."""
    assert len(text.encode()) == path.stat().st_size
    with open(path, "r+b") as f:
        f.write(text.encode())


@pytest.mark.parametrize("when", ["within its tick", "past its tick"])
@pytest.mark.parametrize("name", sorted(NEW))
def test_a_file_rewritten_at_its_size_and_time_is_read_again(project: Path, name: str, when: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """Read within its tick, a file is racy: its bytes tell. Read past it, its stamp does: the change
    time the rewrite moved on (what the wall clock chose between these two, before)."""
    if when == "within its tick":
        read_as_saved(project, monkeypatch)
    else:
        later(monkeypatch, 60)
    rs = api.load_ruleset("main.rules")
    assert all(s.racy == (when == "within its tick") for s in rs.files.values())
    assert answer(rs) == 31
    st = (project / name).stat()
    rewrite(project / name, NEW[name][0])
    os.utime(project / name, ns=(st.st_atime_ns, st.st_mtime_ns))  # its modification time set back
    assert (project / name).stat().st_mtime_ns == st.st_mtime_ns
    again = api.load_ruleset("main.rules")
    assert again is not rs and answer(again) == NEW[name][1]


def read_as_saved(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's files read in the instant they were saved, however long the load takes to reach
    them (seconds, on a loaded machine): each given the clock's time as its modification time, and the
    clock held there, so every file is racy when it is read (``confine.Seen.racy``)."""
    now = time.time_ns()
    for f in project.iterdir():
        os.utime(f, ns=(now, now))
    monkeypatch.setattr(confine, "_clock", lambda: now, raising=False)


@pytest.mark.parametrize("name", sorted(NEW))
def test_a_file_rewritten_within_its_tick_is_read_again(project: Path, name: str,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """On a file system whose clock did not move between the read and the rewrite (FAT's 2 s steps,
    say: here a stamp without the times), a racy file's bytes tell. The files are racy when read
    (``read_as_saved``): a file read past its tick is rightly trusted by its stamp, which on a real
    file system its rewrite changes (``test_a_file_rewritten_at_its_size_and_time_is_read_again``)."""
    read_as_saved(project, monkeypatch)
    monkeypatch.setattr(confine, "stamp", lambda st: (st.st_size, st.st_ino, st.st_dev), raising=False)
    rs = api.load_ruleset("main.rules")
    assert answer(rs) == 31
    rewrite(project / name, NEW[name][0])
    again = api.load_ruleset("main.rules")
    assert again is not rs and answer(again) == NEW[name][1]


@pytest.mark.parametrize("name", sorted(NEW))
def test_a_file_saved_while_the_load_runs_is_read_again(project: Path, name: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A file saved just after the load read its bytes, before the load ended: the ruleset holds the
    old text, and is not served again for the new one."""
    read_bytes = confine.read_bytes
    saved = []

    def then_saved(path: Path, *a: Any, **k: Any) -> bytes:
        data = read_bytes(path, *a, **k)
        if Path(path).name == name and not saved:
            rewrite(project / name, NEW[name][0])
            saved.append(path)
        return data

    monkeypatch.setattr(confine, "read_bytes", then_saved)
    rs = api.load_ruleset("main.rules")
    assert saved and answer(rs) == 31  # (what was read before the save)
    monkeypatch.setattr(confine, "read_bytes", read_bytes)
    again = api.load_ruleset("main.rules")
    assert again is not rs and answer(again) == NEW[name][1]


def counted_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    reads: list[str] = []
    read_bytes = confine.read_bytes

    def counted(path: Path, *a: Any, **k: Any) -> bytes:
        reads.append(Path(path).name)
        return read_bytes(path, *a, **k)

    monkeypatch.setattr(confine, "read_bytes", counted)
    return reads


def later(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """The clock the files' times are compared with, moved on (the files are that much older)."""
    clock = getattr(confine, "_clock", time.time_ns)
    monkeypatch.setattr(confine, "_clock", lambda: clock() + int(seconds * 1e9), raising=False)


def test_an_unchanged_old_ruleset_is_served_for_a_stat_a_file(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    later(monkeypatch, 60)
    rs = api.load_ruleset("main.rules")
    assert answer(rs) == 31 and len(rs.files) == 3
    reads = counted_reads(monkeypatch)
    assert api.load_ruleset("main.rules") is rs
    assert api.load_ruleset("main.rules") is rs
    assert reads == []  # no file's bytes read


def test_a_racy_file_is_compared_by_its_bytes_until_its_tick_has_passed(project: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Files just written are racy: each check reads them again (the same bytes: the same ruleset); a
    check once their tick has passed finds them safe, and the next ones read nothing."""
    read_as_saved(project, monkeypatch)
    rs = api.load_ruleset("main.rules")
    reads = counted_reads(monkeypatch)
    assert api.load_ruleset("main.rules") is rs
    assert sorted(reads) == sorted(NEW)  # each file read again, and found the same
    later(monkeypatch, getattr(confine, "TICK_NS", 0) / 1e9 + 1)
    assert api.load_ruleset("main.rules") is rs
    assert len(reads) == 2 * len(NEW)  # read once more, now past its tick: safe from then on
    reads.clear()
    assert api.load_ruleset("main.rules") is rs and reads == []
    assert answer(rs) == 31


@pytest.mark.parametrize("how", ["removed", "replaced"])
def test_a_file_removed_or_replaced_is_noticed(project: Path, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    later(monkeypatch, 60)
    rs = api.load_ruleset("main.rules")
    assert answer(rs) == 31
    if how == "removed":
        (project / "data.yaml").unlink()
        again = api.load_ruleset("main.rules")
        assert again is not rs and any(d.code == "C005" for d in again.diagnostics)
    else:  # by another file of the same size and time (an editor's save)
        st = (project / "data.yaml").stat()
        (project / "new.yaml").write_text("k: 4\n")
        os.utime(project / "new.yaml", ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(project / "new.yaml", project / "data.yaml")
        again = api.load_ruleset("main.rules")
        assert again is not rs and answer(again) == 41


def test_a_file_that_appears_where_an_import_found_none_is_read(project: Path) -> None:
    (project / "main.rules").write_text('import "more.yaml" as more\nextends "lib.rules"\nquery main = base + more.n\n')
    rs = api.load_ruleset("main.rules")
    assert [d.code for d in rs.diagnostics if d.is_error][:1] == ["C005"]
    (project / "more.yaml").write_text("n: 5\n")
    again = api.load_ruleset("main.rules")
    assert again is not rs and answer(again) == 35


def test_a_load_that_failed_reading_is_not_kept(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A load that raised (``api._unreadable``: a path the system refuses, a value Python's readers
    refuse) knows no file to find it stale by."""
    load = api.load

    def refused(*a: Any) -> Any:
        raise OSError(36, "File name too long")

    monkeypatch.setattr(api, "load", refused)
    rs = api.load_ruleset("main.rules")
    assert [d.code for d in rs.diagnostics] == ["C008"]
    monkeypatch.setattr(api, "load", load)
    assert answer(api.load_ruleset("main.rules")) == 31


@pytest.mark.parametrize("depth", ["the schema's own", "a referenced file's"])
def test_a_file_that_appears_where_a_schema_ref_found_none_is_read(project: Path, depth: str) -> None:
    """A state schema's `$ref` naming no file is refused (C025), located at the reference in the file
    that makes it; the file appearing later makes the ruleset stale, as a file appearing where an import
    found none does (``Loaded.missing``)."""
    unit = {"type": "object", "required": ["n"]}
    if depth == "the schema's own":
        (project / "state.schema.json").write_text('{"type": "object",\n "properties": {"u": {"$ref": "defs.json"}}}\n')
        holder, written = "state.schema.json", "defs.json"
    else:
        (project / "state.schema.json").write_text('{"type": "object", "properties": {"u": {"$ref": "mid.json"}}}\n')
        (project / "mid.json").write_text('{"type": "object",\n  "properties": {"v": {"$ref": "defs.json"}}}\n')
        holder, written = "mid.json", "defs.json"
    (project / "main.rules").write_text('schema "state.schema.json"\nextends "lib.rules"\nquery main = base + 1\n')
    rs = api.load_ruleset("main.rules")
    errors = [d for d in rs.diagnostics if d.is_error]
    assert [d.code for d in errors] == ["C025"] and "defs.json" in errors[0].message
    assert (errors[0].span.file, errors[0].span.line) == ("main.rules", 1)  # the schema's declaration
    ref = [r.span for r in errors[0].related]  # and the reference, in the file that makes it
    line = (project / holder).read_text().splitlines()[1]
    assert [(s.file, s.line, s.col) for s in ref] == [(holder, 2, line.index('"defs.json"') + 1)]
    assert api.load_ruleset("main.rules") is rs  # (nothing changed)
    (project / written).write_text(json.dumps(unit))
    again = api.load_ruleset("main.rules")
    assert again is not rs and answer(again) == 31

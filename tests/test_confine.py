"""The reading and writing rules of issue 24 as units: `confine` (paths, bounded reads, atomic writes),
`safeyaml` (the alias budget reads every bundled YAML file as the plain safe loader does) and
`caseupdate` (expectations rewritten in place). The attacks themselves are in tests/adversarial/."""

from __future__ import annotations

import os
import threading
import stat
from pathlib import Path

import pytest
import yaml

from validator.tools import caseupdate

from validator.core import confine, safeyaml
from validator.tools.testing import Case, Outcome

ROOT = Path(__file__).resolve().parent.parent
BUNDLED_YAML = sorted(p for d in ("rulesets", "tests/cases", "schemas") for p in (ROOT / d).rglob("*.y*ml"))


# ------------------------------------------------------------------ confine


def test_a_root_found_once_still_confines_and_is_never_looser_than_resolving_it_again(tmp_path: Path) -> None:
    """``is_inside`` takes a root that ``root_of_folder`` found as it is (no second resolution): a
    symlink out of it is still refused, one inside it still followed; and once the root's folder is
    replaced by a symlink to another folder, files there are refused, where resolving the root
    again would have let them through."""
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    for folder in (project, elsewhere):
        folder.mkdir()
        (folder / "data.yaml").write_text("a: 1\n")
    (project / confine.ROOT_MARKER).write_text("")
    (project / "out.yaml").symlink_to(elsewhere / "data.yaml")
    (project / "in.yaml").symlink_to(project / "data.yaml")
    root = confine.root_of_folder(project)
    assert str(root) in confine._RESOLVED  # (taken as it is from now on)
    assert confine.read_bytes(project / "in.yaml", 100, root) == b"a: 1\n"
    with pytest.raises(confine.Refused) as out:
        confine.read_bytes(project / "out.yaml", 100, root)
    assert out.value.reason == "outside"
    moved = tmp_path / "moved"
    project.rename(moved)
    project.symlink_to(elsewhere)  # the root's own path now leads elsewhere
    again = tmp_path / "moved" / ".." / "project"  # (a root not found here: resolved at each call, as before)
    assert confine.is_inside(Path(os.path.realpath(project / "data.yaml")), again) is True
    with pytest.raises(confine.Refused) as swapped:
        confine.read_bytes(project / "data.yaml", 100, root)
    assert swapped.value.reason == "outside"


def test_read_bytes_is_bounded_and_refuses_what_is_not_a_regular_file(tmp_path: Path) -> None:
    (tmp_path / "ok.txt").write_bytes(b"12345")
    assert confine.read_bytes(tmp_path / "ok.txt", 5, tmp_path) == b"12345"
    with pytest.raises(confine.Refused) as big:
        confine.read_bytes(tmp_path / "ok.txt", 4, tmp_path)
    assert big.value.reason == "large" and big.value.size == 5
    os.mkfifo(tmp_path / "fifo")
    for path, reason in [(tmp_path / "fifo", "special"), (tmp_path, "special"), (Path("/dev/zero"), "special"),
                         (Path("/proc/self/environ"), "special"), (tmp_path / "nothing", "missing")]:
        with pytest.raises(confine.Refused) as refused:
            confine.read_bytes(path, 100)
        assert refused.value.reason == reason, path


def test_paths_resolve_inside_the_root_or_are_refused(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    (tmp_path / "outside.txt").write_text("secret")
    (root / "in.txt").write_text("x")
    (root / "link_in.txt").symlink_to(root / "in.txt")
    (root / "link_out.txt").symlink_to(tmp_path / "outside.txt")
    assert confine.check_file(root / "link_in.txt", root) == root / "in.txt"
    for bad in (root / "link_out.txt", root / ".." / "outside.txt"):
        with pytest.raises(confine.Refused) as refused:
            confine.read_bytes(bad, 100, root)
        assert refused.value.reason == "outside" and "secret" not in refused.value.message


def test_walk_refuses_links_out_of_the_root_and_special_files(tmp_path: Path) -> None:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "one.rules").write_text("")
    (tmp_path / "a" / "_skip.rules").write_text("")
    (tmp_path / "b.rules").symlink_to("/etc/hostname")
    os.mkfifo(tmp_path / "c.rules")
    (tmp_path / "dangling.rules").symlink_to(tmp_path / "nowhere")
    found, refused = confine.walk(tmp_path, (".rules",), skip_prefix="_")
    assert found == [tmp_path / "a" / "one.rules"]
    assert [(p.name, r.reason) for p, r in refused] == [("b.rules", "outside"), ("c.rules", "special")]


def test_write_atomic_keeps_the_old_file_and_its_mode(tmp_path: Path) -> None:
    target = tmp_path / "out.txt"
    target.write_text("old")
    target.chmod(0o640)
    confine.write_atomic(target, "new")
    assert target.read_text() == "new" and stat.S_IMODE(target.stat().st_mode) == 0o640
    with pytest.raises(confine.WriteFailed):
        confine.write_atomic(target, "bad \ud800")  # no UTF-8 for a lone surrogate: nothing is opened
    with pytest.raises(confine.WriteFailed):
        confine.write_atomic(tmp_path / "missing" / "x.txt", "x")
    assert target.read_text() == "new" and sorted(os.listdir(tmp_path)) == ["out.txt"]


def test_write_atomic_writes_through_a_symlink(tmp_path: Path) -> None:
    (tmp_path / "real.txt").write_text("old")
    (tmp_path / "link.txt").symlink_to(tmp_path / "real.txt")
    confine.write_atomic(tmp_path / "link.txt", "new")
    assert (tmp_path / "link.txt").is_symlink() and (tmp_path / "real.txt").read_text() == "new"


def test_write_atomic_writes_to_a_device_or_pipe_and_refuses_a_folder(tmp_path: Path) -> None:
    """`-o /dev/null` (a device) was replaced by a regular file, as root even the system's; a full device
    was never reported. A device or a pipe is written to; a folder is refused."""
    null = os.stat("/dev/null")
    confine.write_atomic("/dev/null", "x")
    assert os.stat("/dev/null").st_ino == null.st_ino and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    if os.path.exists("/dev/full"):
        with pytest.raises(confine.WriteFailed, match="No space left"):
            confine.write_atomic("/dev/full", "x")
        assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(fifo.read_bytes()))
    reader.start()
    confine.write_atomic(fifo, "through the pipe")
    reader.join(timeout=30)
    assert got == [b"through the pipe"] and stat.S_ISFIFO(os.stat(fifo).st_mode)
    with pytest.raises(confine.WriteFailed, match="it is a folder"):
        confine.write_atomic(tmp_path, "x")


# ------------------------------------------------------------------ safeyaml


@pytest.mark.parametrize("path", BUNDLED_YAML, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_bundled_yaml_reads_as_with_the_safe_loader(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert safeyaml.load(text) == yaml.load(text, Loader=yaml.CSafeLoader)


ALIAS_FORMS = ["a: &x 1\nb: *x\n", "- &x 1\n- *x\n", "[&x 1, *x]", "{a: &x 1, b: *x}", "{a: &x 1,b: *x}",
               "[&x 1,*x]", "a: &x {k: 1}\nb: {<<: *x}\n", "? &x k\n: *x\n", "a: &x 1\nb: [ *x ]\n",
               "\ufeffa: &x 1\nb: *x\n", '{"a": &x 1, "b":*x}', "--- &x [1]\n--- \n", "a: &x 1\nb:\n  *x\n"]


@pytest.mark.parametrize("text", ALIAS_FORMS)
def test_every_alias_sends_the_text_to_the_counting_path(text: str) -> None:
    aliases = sum(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=yaml.SafeLoader))
    assert aliases == 0 or safeyaml._MAYBE_ALIAS.search(text) is not None


def test_the_budget_counts_what_aliases_add() -> None:
    lines = ["a0: &a0 [" + ", ".join(["x"] * 99) + "]"] + [f"a{i}: *a0" for i in range(1, 900)]
    text = "\n".join(lines) + "\n"  # 900 aliases of 100 nodes: 89 900 nodes added, within the budget
    assert len(safeyaml.load(text)) == 900
    with pytest.raises(safeyaml.AliasBudgetError) as err:
        safeyaml.load(text + "".join(f"b{i}: *a0\n" for i in range(200)))
    assert err.value.problem_mark is not None and err.value.problem_mark.line >= 900


# ------------------------------------------------------------------ caseupdate


def _failed(cid: str, expect: object, actual: object) -> Outcome:
    return Outcome(Case(cid, "cases.yaml", 1, {"id": cid, "expect": expect}, "main.rules"), "failed", "", 0.0, actual)


def test_block_values_are_rewritten_at_their_column_and_comments_stay() -> None:
    text = ("cases:\n  - id: a\n    expect:\n      units:   # the units\n        - {id: u1, at: x}\n"
            "        - {id: u2, at: y}\n      log: [1]\n    # after\n")
    new, done, left = caseupdate.edit_expectations(
        text, {"a": _failed("a", {"units": [{"id": "u1", "at": "x"}, {"id": "u2", "at": "y"}], "log": [1]},
                            {"units": [{"id": "u1", "at": "z"}], "log": [1]})})
    assert done == 1 and not left
    assert new == ("cases:\n  - id: a\n    expect:\n      units:   # the units\n        - id: u1\n          at: z\n"
                   "      log: [1]\n    # after\n")


def test_an_alias_gives_way_to_the_new_value_and_its_anchor_stays() -> None:
    text = "x: &same {v: 1}\ncases:\n  - id: a\n    expect: *same\n  - id: b\n    expect: *same\n"
    new, done, _ = caseupdate.edit_expectations(text, {"a": _failed("a", {"v": 1}, {"v": 2})})
    assert done == 1 and new == "x: &same {v: 1}\ncases:\n  - id: a\n    expect: {v: 2}\n  - id: b\n    expect: *same\n"


def test_awkward_text_is_written_so_that_it_reads_back() -> None:
    text = "cases:\n  - id: a\n    expect: {t: plain}\n"
    awkward = "two\nlines: # and \"quotes\" ünïcode"
    new, done, _ = caseupdate.edit_expectations(text, {"a": _failed("a", {"t": "plain"}, {"t": awkward})})
    assert done == 1 and safeyaml.load(new)["cases"][0]["expect"] == {"t": awkward}


# ------------------------------------------------------------------ keys given twice, whole numbers

@pytest.mark.parametrize("text,line,col", [("a: 1\nb: 2\na: 3\n", 3, 1), ("{a: 1, a: 2}", 1, 8),
                                           ("- x: 1\n  y:\n    z: 1\n    z: 2\n", 4, 5),
                                           # two spellings of one key (one of the values was lost silently)
                                           ("1: x\n0x1: y\n", 2, 1), ("1: x\n1.0: y\n", 2, 1),
                                           ("true: x\n1: y\n", 2, 1), ("a:\n  yes: 1\n  true: 2\n", 3, 3)])
def test_yaml_refuses_a_key_given_twice_at_the_second(text: str, line: int, col: int) -> None:
    for numbered in (False, True):
        with pytest.raises(yaml.constructor.ConstructorError) as err:
            safeyaml.load(text, line_numbers=numbered)
        assert "given twice" in str(err.value.problem)
        assert (err.value.problem_mark.line + 1, err.value.problem_mark.column + 1) == (line, col)


def test_yaml_merge_keys_may_be_given_again_and_whole_floats_are_integers() -> None:
    assert safeyaml.load("b: &b {x: 1, y: 2}\nd:\n  <<: *b\n  x: 3\n")["d"] == {"x": 3, "y": 2}
    assert safeyaml.load("year: 1901.0\nhalf: 0.5\nbig: 1.0e+300\n") == {"year": 1901, "half": 0.5, "big": 1e300}
    assert type(safeyaml.load("year: 1901.0\n")["year"]) is int


def test_json_refuses_a_key_given_twice_with_its_place_and_pointer() -> None:
    from validator.core import jsontext
    from validator.core.diagnostics import DiagnosticError

    with pytest.raises(DiagnosticError) as err:
        jsontext.loads('{"a": 1,\n "b": {"c": 1, "c": 2}}', "s.json")
    [d] = err.value.diagnostics
    assert (d.code, d.message, d.pointer) == ("S001", 'key "c" given twice in one object', "/b/c")
    assert (d.span.line, d.span.col) == (2, 16)
    assert jsontext.loads('[{"a": 1}, {"a": 2}]', "s.json") == [{"a": 1}, {"a": 2}]
    year = jsontext.loads('{"year": 1901.0, "p": 0.25}', "s.json")
    assert year == {"year": 1901, "p": 0.25} and type(year["year"]) is int

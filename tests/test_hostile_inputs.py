"""Hostile input, as a user may give it to any command, the playground or the Python API: each is
answered with a located diagnostic and a documented exit code (docs/diagnostics.md, "Exit codes"),
never I001 nor a traceback. Each test here failed before the fix it names."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path

import pytest
from fuzzing import bounded
from hypothesis import given
from hypothesis import strategies as st

from validator.api import load_ruleset, play
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy" / "standard.rules"
DIP_START = ROOT / "rulesets" / "diplomacy" / "examples" / "movement_1901.json"
PIG = ROOT / "docs" / "tutorial" / "pig.rules"
PROJECTS = ROOT / "tests" / "projects"


def run(argv: list[object]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main([str(a) for a in argv], stdout=out, stderr=err)
    said = out.getvalue() + err.getvalue()
    assert "Traceback" not in said and "I001" not in said, said
    return code, out.getvalue(), err.getvalue()


# ---------------------------------------------------------------- play: --max-phases past a machine word

def test_play_with_more_phases_allowed_than_a_machine_word_counts_plays() -> None:
    # (was I001: the orders were read through islice, whose stop is at most sys.maxsize)
    code, out, err = run(["play", DIP, DIP_START, "--random-orders", "1", "--until", "F1901M",
                          "--max-phases", 10**30])
    assert code == 0 and "now at F1901M" in out + err, out + err


def test_api_play_with_more_phases_allowed_than_a_machine_word_counts_plays() -> None:
    rs = load_ruleset(DIP)
    steps = list(play(rs, json.loads(DIP_START.read_text()), [], until="F1901M", random_orders=1, max_phases=10**30))
    assert [s.next_phase for s in steps] == ["F1901M"], steps


# ---------------------------------------------------------------- check --cluster of rulesets all in the cache

def test_check_on_a_cluster_of_rulesets_all_in_the_cache_asks_nothing_of_it(tmp_path: Path) -> None:
    # (was I001 `commonpath() arg is an empty sequence`: no file to send, and a sweep of none made)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_text('ruleset a "a"\nquery main = 1\n')
    assert run(["check", tmp_path / "a.rules"])[0] == 0  # (now in the check cache)
    code, out, err = run(["check", tmp_path / "a.rules", "--cluster", "tcp://127.0.0.1:9"])
    assert code == 0 and "0 errors" in out + err, out + err


# ---------------------------------------------------------------- the playground: a text no file can hold

@pytest.fixture(scope="module")
def threefold():
    from validator.tools.serve import Playground

    pg = Playground(PROJECTS / "threefold_map")
    yield pg
    pg.close()


@pytest.mark.parametrize("where", ["text", "edits"])
def test_a_lone_surrogate_in_an_edited_file_is_a_bad_request_at_its_line_and_column(threefold, where: str) -> None:
    # (was a 500 "cannot be written": the request's JSON may hold "\ud800", which no UTF-8 file holds)
    from validator.tools.serve import Playground

    name = "threefold_map.yaml" if where == "edits" else "threefold.rules"
    text = (PROJECTS / "threefold_map" / name).read_text(encoding="utf-8")
    lines = text.split("\n")
    lines[2] = lines[2][:3] + "\ud800" + lines[2][3:]
    body = {"base": "threefold.rules"} | ({"text": "\n".join(lines)} if where == "text"
                                          else {"edits": {name: "\n".join(lines)}})
    status, answer = threefold._answer_here(Playground.check, body)
    assert status == 400, (status, answer)
    said = json.loads(answer)["error"]
    assert "line 3, column 4" in said and "U+D800" in said, said
    status, answer = threefold._answer_here(Playground.check, {"base": "threefold.rules"})
    assert status == 200 and json.loads(answer)["errors"] == 0, answer  # (nothing of it was kept)


# ---------------------------------------------------------------- the API: check_text of what is no text

@pytest.mark.parametrize("text", [None, 7, b"query main = 1", ["query main = 1"]])
def test_check_text_of_what_is_no_text_is_a_type_error(tmp_path: Path, text: object) -> None:
    # (was AttributeError `'int' object has no attribute 'encode'`, as parse's TypeError is documented)
    from validator.api import check_text

    (tmp_path / "ruleval.toml").write_text("")
    with pytest.raises(TypeError, match="as str, not"):
        check_text(tmp_path / "a.rules", text)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="as str, not"):
        check_text(tmp_path / "a.rules", "query main = 1", {str(tmp_path / "b.rules"): text})  # type: ignore[dict-item]
    assert check_text(tmp_path / "a.rules", 'ruleset a "a"\nquery main = 1\n').ok


# ---------------------------------------------------------------- a working folder since removed

@pytest.mark.parametrize("argv", [["check", PIG], ["run", PIG, "--state", PIG.parent / "start.json"]])
def test_a_working_folder_since_removed_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          argv: list[object]) -> None:
    # (was I001 `FileNotFoundError`: a shell left in a folder another removed)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    code, out, err = run(argv)
    assert code == 2 and "error[U001]: the working folder no longer exists" in err, (code, out, err)


# ---------------------------------------------------------------- a byte that is not UTF-8: its column in characters



def test_a_bad_byte_of_a_ruleset_is_placed_at_its_character_column(tmp_path: Path) -> None:
    # (was the byte's offset in the line: one column right for each character of several bytes before it)
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "a.rules").write_bytes(b'ruleset a "a"\n# ' + "é".encode() + b"\xff\n")
    code, out, err = run(["check", "--format", "json", tmp_path / "a.rules"])
    assert code == 1 and [(d["code"], d["line"], d["col"]) for d in json.loads(out)] == [("P004", 2, 4)], out


def test_a_bad_byte_of_a_state_on_standard_input_or_a_batch_line_is_placed_at_its_column(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # (was column 1 on standard input, and the byte's offset on a batch line; a state file says 1:9)
    state = b'{"a": "' + "é".encode() + b'\xff"}'
    (tmp_path / "s.json").write_bytes(state)
    (tmp_path / "b.jsonl").write_bytes(b"{}\n" + state + b"\n")
    code, out, err = run(["run", PIG, "--state", tmp_path / "s.json"])
    assert code == 3 and ":1:9: error[S001]" in err, err
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(state)))
    code, out, err = run(["run", PIG, "--state", "-"])
    assert code == 3 and "<stdin>:1:9: error[S001]: byte 0xff is not valid UTF-8" in err, err
    code, out, err = run(["run", PIG, "--batch", tmp_path / "b.jsonl", "--format", "json"])
    said = json.loads(out.splitlines()[1])["diagnostics"][0]
    assert code == 3 and (said["code"], said["line"], said["col"]) == ("S001", 2, 9), out


# ---------------------------------------------------------------- balance --player: a file that is not UTF-8

def test_a_player_file_that_is_not_utf8_is_p004_at_its_byte(tmp_path: Path) -> None:
    # (was I001 UnicodeDecodeError: the player's text was read without the ruleset's decoding)
    (tmp_path / "p.rules").write_bytes(b'ruleset p "p"\nextends "x.rules"\n# ' + "é".encode() + b"\xff\n")
    code, out, err = run(["balance", DIP, "--games", "1", "--max-phases", "1", "--player", tmp_path / "p.rules"])
    assert code == 1 and f"{tmp_path / 'p.rules'}:3:4: error[P004]: byte 0xff is not valid UTF-8" in err, err


# ---------------------------------------------------------------- any command line made of hostile pieces

HOSTILE_FILES = {
    "empty.json": b"", "binary.json": bytes(range(256)), "bom.json": b"\xef\xbb\xbf{}", "crlf.json": b"{\r\n}\r\n",
    "latin1.json": b'{"a": "\xe9"}', "deep.json": b"[" * 5000 + b"]" * 5000, "number.json": b"7", "null.json": b"null",
    "list.json": b"[1, [2]]", "wrong.json": b'{"score": "x", "rolls": [1]}', "huge.json": b'{"score": 1e999, "rolls": 2}',
    "negative.json": b'{"score": 1, "rolls": -5}', "bomb.yaml": b"a: &a [x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\n"
    b"c: &c [*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c]\ne: &e [*d,*d,*d,*d,*d,*d,*d,*d]\nf: [*e,*e,*e,*e,*e]\n",
    "list.yaml": b"- 1\n- 2\n", "tab.yaml": b"a:\n\t- b\n", "dup.yaml": b"a: 1\na: 2\n",
    "tag.yaml": b"!!python/object:os.system x\n",
    "cases_wrong.yaml": b"ruleset: pig.rules\ncases: {id: 1}\n", "cases_ok.yaml": b"ruleset: pig.rules\ncases:\n  - id: a\n"
    b"    state: {score: 1, rolls: 1}\n    dice: [2]\n    expect: {points: 2}\n",
    "garbage.rules": b'ruleset x "x"\nquery main = \n', "self.rules": b'ruleset x "x"\nextends "self.rules"\nquery main = 1\n',
    "recursion.rules": b'ruleset x "x"\ndef f(n) = f(n + 1)\nquery main = f(0)\n', "nul.rules": b"\x00",
    "orders_numbers.json": b"[7, null, [1]]", "record.jsonl": b'{"score": 1, "rolls": 1}\n7\n\n[]\n',
}
ARG_VALUES = ["0", "-1", "1", "99999999999999999999", "1.5", "nan", "", "x", "main", "start_state", "S1901M", "A PAR",
              "1,2", "a=1", "random", "/", "é", "\x1b[2J"]
OPTIONS = {  # each command's options that take a value, and its flags
    "check": (["--jobs"], ["--deny-warnings", "--no-cache"]),
    "run": (["--state", "--query", "--arg", "--seed", "--dice", "--batch"], ["--exact", "--explain"]),
    "test": (["-k", "--import", "--ruleset", "--jobs"], ["--deny-warnings", "-v"]),
    "fmt": ([], ["--check", "--diff"]),
    "explain": (["--state", "--query", "--arg", "--order", "--unit", "--seed", "--dice"], ["--full"]),
    "coverage": (["--fail-under"], []),
    "replay": (["--seed", "--import"], []),
    "play": (["--orders", "--random-orders", "--until", "--seed"], []),
    "render": (["--state", "--unit"], []),
}
POSITIONALS = {"check": 1, "run": 1, "test": 1, "fmt": 1, "explain": 1, "coverage": 1, "replay": 2, "play": 2, "render": 1}
TAIL = {"play": ["--max-phases", "2"], "render": ["-o", "out/x.svg"]}
LOCATED = re.compile(r"^(?P<where>[^\s].*?): (?:error|warning)\[(?P<code>[A-Z]\d{3})\]", re.M)


@pytest.fixture(scope="module")
def hostile_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    (root / "ruleval.toml").write_text("")
    for f in (PIG.parent).iterdir():
        if f.is_file():
            (root / f.name).write_bytes(f.read_bytes())
    for name, data in HOSTILE_FILES.items():
        (root / name).write_bytes(data)
    (root / "folder.json").mkdir()
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    return root


@st.composite
def command_lines(draw: st.DrawFn, root: Path) -> list[str]:
    files = sorted(HOSTILE_FILES) + ["pig.rules", "start.json", "cases.yaml", "folder.json", "loop1", "missing.json",
                                     str(DIP), str(DIP_START)]
    command = draw(st.sampled_from(sorted(OPTIONS)))
    argv = [command] + [draw(st.sampled_from(files)) for _ in range(POSITIONALS[command])]
    valued, flags = OPTIONS[command]
    for option in draw(st.lists(st.sampled_from(valued + flags), max_size=3, unique=True)):
        argv.append(option)
        if option in valued:
            argv.append(draw(st.sampled_from(files if option in ("--state", "--batch", "--orders", "--ruleset")
                                             else ARG_VALUES)))
    return argv + TAIL.get(command, [])


@bounded(40, 1500)
@given(data=st.data())
def test_any_command_line_of_hostile_pieces_exits_as_documented_and_places_what_it_says(
        hostile_folder: Path, data: st.DataObject) -> None:
    argv = data.draw(command_lines(hostile_folder))
    old = os.getcwd()
    os.chdir(hostile_folder)
    try:
        out, err = io.StringIO(), io.StringIO()
        code = main(argv, stdout=out, stderr=err)
    finally:
        os.chdir(old)
    said = out.getvalue() + err.getvalue()
    assert "Traceback" not in said and "I001" not in said, (argv, said)
    assert code in (0, 1, 2, 3), (argv, code, said)
    for m in LOCATED.finditer(said):  # every diagnostic names its place: a file, else a path of the command line
        line = said[m.start():said.find("\n", m.start())]
        assert m["where"] != "ruleval" or m["code"].startswith("U") or any(f"in {a}" in line for a in argv[1:]), \
            (argv, said)
    if code == 3:
        assert LOCATED.search(said), (argv, said)

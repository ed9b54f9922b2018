"""A bug of the backend's writer (code Python refuses for another reason than its nesting) is told apart
from nesting in one place (``backend._compile_text``): a user's run still gets the reference's answer, with
a warning that says it is a bug of ruleval (I002, docs/diagnostics.md), while nesting stays E005 and unsaid;
every test fails on such a bug (``conftest.loud_writing_everywhere``). The bug is planted here: the writer
made to write a `return` Python refuses in each function whose code reads the text `planted`."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any, Iterator

import pytest

from fuzzing import UnwrittenByMistake
from validator.api import check_text, listening, load_ruleset
from validator.engine import backend as B
from validator.lib.runtime import WRITER_BUG, Unwritable
from validator.tools.cli import main
from validator.tools.testing import load_suite, run_case

RULES = 'def tag(x) = if x == "planted" then 1 else 2\nquery main = [tag("planted"), tag("other"), tag(3)]\n'
ANSWER = [1, 2, 2]
DEEP = "query main = [x0" + "".join(f" for x{i} in [1, 2]" for i in range(3)) + \
       "".join(f" for y{i} in [1]" for i in range(22)) + "]\n"  # (25 nested loops: past Python's 20)
CASES = "ruleset: main.rules\ncases:\n  - id: planted\n    state: {}\n    expect: [1, 2, 2]\n"


@pytest.fixture
def planted(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    real = B.define

    def define(source: str, filename: str, g: dict[str, Any], kept: Any = None) -> Any:
        if "'planted'" in source:
            source = source.replace("return ", "return return ", 1)
        return real(source, filename, g, kept)

    monkeypatch.setattr(B, "define", define)
    yield


def project(tmp_path: Path, rules: str = RULES) -> Path:
    (tmp_path / "ruleval.toml").write_text("")
    (tmp_path / "main.rules").write_text(rules)
    (tmp_path / "state.json").write_text("{}")
    (tmp_path / "cases.yaml").write_text(CASES)
    return tmp_path


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    assert "Traceback" not in out.getvalue() + err.getvalue(), err.getvalue()
    return code, out.getvalue(), err.getvalue()


@pytest.mark.planted_writer_bug
def test_compile_text_tells_nesting_from_a_bug_of_the_writer() -> None:
    loops = "def f(ctx):\n" + "".join("    " * (i + 1) + f"for _v{i} in ctx:\n" for i in range(25)) + "    " * 26 + "pass"
    indents = "def f(ctx):\n" + "".join("    " * (i + 1) + "if ctx:\n" for i in range(105)) + "    " * 106 + "pass"
    brackets = "def f(ctx):\n    return " + "(" * 250 + "1" + ")" * 250
    for source in (loops, indents, brackets):
        with pytest.raises(Unwritable) as nested:
            B._compile_text(source, "<ruleval _u1>")
        assert nested.value.code == "E005" and "nested too deeply" in nested.value.message
    for source in ("def f(ctx):\n    return return 1", "def f(ctx):\n    x = = 1", "def f(ctx):\n  return 1\n    pass"):
        with pytest.raises(Unwritable) as bug:
            B._compile_text(source, "<ruleval _u1>")
        assert bug.value.code == WRITER_BUG and bug.value.message.startswith(
            "the backend wrote code Python refuses, a bug of ruleval: "), bug.value.message


@pytest.mark.planted_writer_bug
def test_a_planted_bug_is_said_by_run_and_the_answer_is_the_references(tmp_path: Path, planted: None) -> None:
    root = project(tmp_path)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"), "--format", "json")
    assert code == 0 and json.loads(out) == ANSWER, (code, out, err)
    assert "main.rules:2:1: warning[I002]: the backend wrote code Python refuses, a bug of ruleval: invalid syntax" in err
    assert "the reference interpreter ran it instead" in err
    (root / "states.jsonl").write_text("{}\n{}\n")
    code, out, err = cli("run", str(root / "main.rules"), "--batch", str(root / "states.jsonl"), "--format", "json")
    assert code == 0 and [json.loads(x) for x in out.splitlines()] == [ANSWER, ANSWER], (code, out, err)
    assert err.count("warning[I002]: the backend wrote code Python refuses, a bug of ruleval") == 1, err  # (once a command)
    rs = load_ruleset(root / "main.rules", use_cache=False)
    result = rs.evaluate({})
    assert result.json() == ANSWER == rs.run({}, engine="reference")
    assert [(d.code, d.severity) for d in result.warnings] == [(WRITER_BUG, "warning")]
    assert rs.evaluate({}, exact=True).warnings  # (an exact run is the reference's too, and says so)


@pytest.mark.planted_writer_bug
def test_a_planted_bug_is_said_by_explain_ir(tmp_path: Path, planted: None) -> None:
    root = project(tmp_path)
    code, out, err = cli("explain", str(root / "main.rules"), "--ir", "tag")
    assert code == 0, err
    assert "# not written: the backend wrote code Python refuses, a bug of ruleval: invalid syntax" in out, out
    assert "(the reference runs it)" in out


def test_without_a_bug_nothing_is_said(tmp_path: Path) -> None:
    root = project(tmp_path)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"), "--format", "json")
    assert (code, json.loads(out), err) == (0, ANSWER, "")
    assert "# not written" not in cli("explain", str(root / "main.rules"), "--ir", "tag")[1]


def test_deep_nesting_is_still_e005_unsaid_and_not_loud(tmp_path: Path) -> None:
    """Under the loud fixture: code nested past Python's limits is no bug, given up as before (E005)."""
    root = project(tmp_path, DEEP)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"), "--format", "json")
    assert (code, json.loads(out), err) == (0, [1, 1, 1, 1, 2, 2, 2, 2], "")
    shown = cli("explain", str(root / "main.rules"), "--ir", "main")[1]
    assert "# not written: a definition is nested too deeply to write (SyntaxError) (the reference runs it)" in shown


def test_the_loud_fixture_fails_a_case_on_a_planted_bug(tmp_path: Path, planted: None) -> None:
    """Not marked: the conftest's fixture is on, and the case fails (as every bundled case would, through
    tests/test_cases.py's ``test_case``), where a user's run gives the right answer."""
    import test_cases

    root = project(tmp_path)
    (case,) = load_suite([str(root / "cases.yaml")]).cases
    with pytest.raises(UnwrittenByMistake, match="a bug of ruleval"):
        load_ruleset(root / "main.rules", use_cache=False).run({})
    with pytest.raises(UnwrittenByMistake, match="return return"):  # (the code written, shown)
        test_cases.test_case(case)


@pytest.mark.planted_writer_bug
def test_the_same_case_passes_without_the_loud_fixture(tmp_path: Path, planted: None) -> None:
    root = project(tmp_path)
    (case,) = load_suite([str(root / "cases.yaml")]).cases
    assert run_case(case).status == "passed"


# Every command that runs rules says a writer's bug once for each unit given up, however many runs met it
# (a game's phases, a batch's lines, a sweep's games in other processes), and gets the right answer.

SWEEP = Path(__file__).resolve().parent / "fixtures" / "sweep"
PLANTED_TAG = 'def tag(x) = if x == "planted" then 1 else 2\n'


def said_once(err: str) -> list[str]:
    """The I002 warnings said on ``err``: at least one, and each unit's once."""
    said = [line.split(": warning[I002]")[0] for line in err.splitlines() if "warning[I002]" in line]
    assert said and len(said) == len(set(said)), err
    assert "the reference interpreter ran it instead" in err, err
    return said


def race(tmp_path: Path, extra: str = "") -> Path:
    """The sweep's race, a whole game in a few phases, whose `advance` calls a unit carrying the plant
    (``tag("planted")`` is 1: the rules' answers are the race's own)."""
    for name in ("clauses.yaml", "ruleval.toml"):
        (tmp_path / name).write_bytes((SWEEP / name).read_bytes())
    (tmp_path / "players").mkdir()
    for player in (SWEEP / "players").iterdir():
        (tmp_path / "players" / player.name).write_bytes(player.read_bytes())
    text = (SWEEP / "race.rules").read_text().replace("next: {round: round + 1,", 'next: {round: round + tag("planted"),')
    assert 'tag("planted")' in text
    (tmp_path / "race.rules").write_text(text + PLANTED_TAG + extra)
    return tmp_path / "race.rules"


@pytest.mark.planted_writer_bug
def test_a_planted_bug_is_said_once_by_play_and_replay(tmp_path: Path, planted: None) -> None:
    rules = race(tmp_path)
    code, out, err = cli("play", str(rules), "--random-orders", "1", "--format", "jsonl")
    assert code == 0 and len(out.splitlines()) > 3, (code, err)
    said_once(err)
    (tmp_path / "record.jsonl").write_text(out)
    code, out, err = cli("replay", str(rules), str(tmp_path / "record.jsonl"))
    assert code == 0 and "every next state agrees with the record" in out, (code, out, err)
    said_once(err)


@pytest.mark.planted_writer_bug
def test_a_planted_bug_is_said_once_by_diff(tmp_path: Path, planted: None) -> None:
    rules = race(tmp_path)
    other = tmp_path / "other.rules"
    other.write_text(rules.read_text())
    code, out, err = cli("diff", str(rules), str(other), "--games", "2", "--jobs", "1")
    assert code == 0 and "equivalent on all of them" in out, (code, out, err)
    assert {s.split(":")[0].rsplit("/", 1)[-1] for s in said_once(err)} == {"race.rules", "other.rules"}, err


@pytest.mark.planted_writer_bug
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_planted_bug_is_said_once_by_balance_in_this_process_or_a_pool(tmp_path: Path, planted: None,
                                                                         jobs: str) -> None:
    """With two processes, the games run in forked workers (the plant is forked with them): what they
    meet is sent back with their results and said here."""
    rules = race(tmp_path)
    code, out, err = cli("balance", str(rules), "--games", "4", "--player", "random", "--format", "json",
                         "--jobs", jobs)
    assert code == 0 and json.loads(out)["games"] == 4, (code, out, err)
    said_once(err)


@pytest.mark.planted_writer_bug
@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_planted_bug_is_said_once_by_test(tmp_path: Path, planted: None, jobs: str) -> None:
    root = project(tmp_path)
    (root / "cases.yaml").write_text(CASES + "  - id: again\n    state: {}\n    expect: [1, 2, 2]\n")
    code, out, err = cli("test", str(root / "cases.yaml"), "--jobs", jobs)
    assert code == 0 and "2 passed" in out + err, (code, out, err)
    said_once(err)


@pytest.mark.planted_writer_bug
def test_state_errors_gives_errors_alone_and_a_planted_bug_is_heard(tmp_path: Path, planted: None) -> None:
    """`validate_state` run on the backend: the state is accepted (no error), the bug heard as I002 by an open
    ``listening`` block, never in the list of errors; a game whose every state is checked is played whole."""
    rules = race(tmp_path, 'query validate_state = [{pointer: "/round", message: "too late"} '
                           'for x in [tag("planted")] if round > 50 * x]\n')
    rs = load_ruleset(rules, use_cache=False)
    with listening() as bugs:
        assert rs.state_errors({"round": 1, "at": {}, "orders": []}) == []
        found = rs.state_errors({"round": 99, "at": {}, "orders": []})
    assert [(d.code, d.severity) for d in found] == [("S002", "error")], found
    assert [(d.code, d.severity) for d in bugs.warnings] == [(WRITER_BUG, "warning")], bugs.warnings
    code, out, err = cli("play", str(rules), "--random-orders", "1", "--format", "jsonl")
    assert code == 0 and len(out.splitlines()) > 3, (code, err)
    said_once(err)


DATA_CHECKED = 'query validate_data = [{pointer: "", message: "never"} for x in [tag("planted")] if x == 2]\n'


@pytest.mark.planted_writer_bug
def test_a_planted_bug_in_the_data_check_is_a_warning_of_check_and_of_every_load(tmp_path: Path,
                                                                                 planted: None) -> None:
    """The data check runs on the backend at each load: its I002 is one of the ruleset's diagnostics (what
    `check` lists and the language server publishes, ``check_text``), kept with them by the check cache (every
    command that loads the ruleset says it, from a cached load too)."""
    root = project(tmp_path, PLANTED_TAG + "query main = 1\n" + DATA_CHECKED)
    for _ in range(2):  # (the second check finds the first's results in the cache)
        code, out, err = cli("check", str(root / "main.rules"))
        assert code == 0 and "0 errors, 1 warning" in err, (code, err)
        said_once(err)
    assert cli("check", str(root / "main.rules"), "--deny-warnings")[0] == 4  # (denied, a bug of ruleval: I, exit 4)
    code, out, err = cli("run", str(root / "main.rules"), "--state", str(root / "state.json"))
    assert (code, out) == (0, "1\n"), (code, out, err)
    said_once(err)
    found = check_text(root / "main.rules", (root / "main.rules").read_text()).diagnostics
    assert [(d.code, d.severity) for d in found] == [(WRITER_BUG, "warning")], found
    (root / "cases.yaml").write_text("ruleset: main.rules\ncases:\n  - id: one\n    state: {}\n    expect: 1\n")
    for argv in ([], ["--deny-warnings"]):  # (listed among the ruleset's warnings there: not said twice)
        code, out, err = cli("test", str(root / "cases.yaml"), "--jobs", "1", *argv)
        assert "1 passed" in out and code == (1 if argv else 0), (code, out, err)
        said_once(err)


@pytest.mark.planted_writer_bug
def test_the_language_server_publishes_a_planted_bug_as_a_warning(tmp_path: Path, planted: None) -> None:
    """The server's own handler (``lsp.build_server``), in this process where the plant is."""
    pytest.importorskip("pygls")
    from lsprotocol import types as T

    from validator.tools.lsp import build_server

    root = project(tmp_path, PLANTED_TAG + "query main = 1\n" + DATA_CHECKED)
    server = build_server()
    started = server.protocol.lsp_initialize(T.InitializeParams(T.ClientCapabilities(), root_uri=root.as_uri()))
    for _ in started:  # (pygls's handler is a generator: run to its end, the workspace is made)
        pass
    published: list[Any] = []
    server.text_document_publish_diagnostics = published.append
    uri = (root / "main.rules").as_uri()
    opened = T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, "ruleval", 1, (root / "main.rules").read_text()))
    for handler, args, _ in server.protocol.lsp_text_document__did_open(opened):  # (the workspace takes the text,
        handler(*args)  # then ours: the check, published)
    (sent,) = [p for p in published if p.uri == uri]
    assert [(d.code, d.severity) for d in sent.diagnostics] == [(WRITER_BUG, T.DiagnosticSeverity.Warning)], sent


@pytest.mark.planted_writer_bug
def test_each_thread_hears_its_own_runs(tmp_path: Path, planted: None) -> None:
    """``listening`` is the API caller's, and a ruleset may run in several threads at once: a block hears what
    its own thread met, not what another thread's run met meanwhile (both blocks open while one run meets it)."""
    import threading

    for name in ("a", "b"):
        (tmp_path / name).mkdir()
    planted_rs = load_ruleset(project(tmp_path / "a") / "main.rules", use_cache=False)
    sown_rs = load_ruleset(project(tmp_path / "b", RULES.replace("planted", "sown")) / "main.rules", use_cache=False)
    both_open, planted_ran, sown_ran = threading.Barrier(2), threading.Event(), threading.Event()
    heard: dict[str, list[str]] = {}

    def listen(name: str, rs: Any, after: threading.Event | None, then: threading.Event) -> None:
        with listening() as bugs:
            both_open.wait(30)
            if after is not None:
                after.wait(30)
            assert rs.run({}) == ANSWER
            then.set()
            if after is None:  # (this block stays open until the other thread has run too)
                sown_ran.wait(30)
        heard[name] = [d.code for d in bugs.warnings]

    threads = [threading.Thread(target=listen, args=("planted", planted_rs, None, planted_ran)),
               threading.Thread(target=listen, args=("sown", sown_rs, planted_ran, sown_ran))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert heard == {"planted": [WRITER_BUG], "sown": []}, heard

"""The text output for people (`ruleval run` and the others by default): shaped by the result alone,
every value in the language's notation (so it reads back), no line past the width, colour only on a
terminal, odds over the dice's own denominator."""

from __future__ import annotations

import io
import json
from fractions import Fraction
from pathlib import Path

import pytest

from validator.tools.cli import main
from validator.tools.textview import WIDTH, result_text

ROOT = Path(__file__).resolve().parent.parent


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(*argv: str, out: io.StringIO | None = None) -> tuple[int, str, str]:
    stdout, stderr = out or io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=stdout, stderr=stderr)
    return code, stdout.getvalue(), stderr.getvalue()


def write(tmp_path: Path, text: str) -> str:
    (tmp_path / "ruleval.toml").write_text("")
    path = tmp_path / "main.rules"
    path.write_text(text, encoding="utf-8")
    return str(path)


def test_records_that_share_their_fields_are_a_table_one_line_each(tmp_path: Path) -> None:
    rules = write(tmp_path, 'query main = {orders: [{who: "a", what: "x", ok: true}, {who: "bb", what: "y", ok: false}]}\n')
    code, out, err = run("run", rules)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "orders: 2"
    assert lines[1].split() == ["who", "what", "ok"]
    assert lines[2].split() == ['"a"', '"x"', "true"] and lines[3].split() == ['"bb"', '"y"', "false"]
    # the columns line up
    assert lines[2].index('"x"') == lines[3].index('"y"') == lines[1].index("what")


def test_no_line_is_longer_than_the_width(tmp_path: Path) -> None:
    rules = write(tmp_path, 'query main = {long: join([str(i) for i in range(0, 3000)], " "), '
                            'rows: [{a: join([str(i) for i in range(0, 500)], ","), b: 1}]}\n')
    code, out, err = run("run", rules)
    assert code == 0, err
    assert max(len(line) for line in out.splitlines()) <= WIDTH
    assert "characters in all (--format json has them)" in out  # summarised, not 14 000 characters
    code, out, _ = run("run", rules, "--format", "json")
    assert len(json.loads(out)["long"].split()) == 3000  # the machine form has it all


def test_a_procedure_event_log_is_one_line_per_event() -> None:
    events = [{"event": "rolled", "step": "roll", "cites": ["T-5"], "value": 4},
              {"event": "moved", "step": "move", "cites": [], "to": "b"}]
    text = result_text({"events": events})
    assert text.splitlines() == ["events: 2", "   1. roll: rolled  value=4  [T-5]", '   2. move: moved  to="b"']


def test_exact_distribution_is_a_table_of_odds_over_the_dice_denominator(tmp_path: Path) -> None:
    rules = write(tmp_path, 'query main = {hit: roll(2d6) >= 7, who: "me"}\n')
    code, out, err = run("run", rules, "--exact")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "2 outcomes over 2 dice paths (total 1/1)"
    assert lines[1].split() == ["odds", "%", "outcome"]
    assert lines[2].split() == ["21/36", "58.33%", "hit=true"]  # 7/12 written as a 2d6 player counts it
    assert lines[3].split() == ["15/36", "41.67%", "hit=false"]
    code, out, _ = run("run", rules, "--exact", "--format", "json")
    outcomes = json.loads(out)["outcomes"]
    assert [o["probability"] for o in outcomes] == ["7/12", "5/12"]  # the JSON keeps its reduced form
    assert [Fraction(o["odds"]) for o in outcomes] == [Fraction(7, 12), Fraction(5, 12)]


def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = write(tmp_path, 'query main = {rows: [{a: 1}, {a: 2}], nested: {x: 1}}\n')
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert "\x1b[" not in run("run", rules)[1]
    assert "\x1b[" in run("run", rules, out=Tty())[1]
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run("run", rules, out=Tty())[1]


def test_text_from_the_state_cannot_drive_the_terminal(tmp_path: Path) -> None:
    rules = write(tmp_path, 'input name: str at "/name"\nquery main = {name: name, rows: [{n: name}, {n: "b"}]}\n')
    (tmp_path / "s.json").write_text(json.dumps({"name": "\x1b[31mred\u202e"}))
    code, out, _ = run("run", rules, "--state", str(tmp_path / "s.json"), out=Tty())
    assert code == 0 and "\x1b[31m" not in out and "\u202e" not in out and '"\\u001b[31mred\\u202e"' in out


def test_state_errors_are_text_on_stderr_by_default(tmp_path: Path) -> None:
    code, out, err = run("run", str(ROOT / "tests/fixtures/schema/main.rules"), "--state",
                         str(ROOT / "tests/fixtures/schema/bad.json"))
    assert code == 3 and out == "" and "error[S002]" in err


def test_diplomacy_orders_one_line_each() -> None:
    code, out, err = run("run", str(ROOT / "rulesets/diplomacy/standard.rules"), "--state",
                         str(ROOT / "rulesets/diplomacy/examples/movement_1901.json"))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == "orders: 22"
    vie = next(line for line in lines if "A VIE - GAL" in line)
    assert vie.split()[:2] == ['"austria"', '"A'] and '"fails"' in vie and '"bounce with A WAR"' in vie


def test_diff_and_explain_lines_stay_within_the_width() -> None:
    code, out, _ = run("diff", str(ROOT / "rulesets/his/his.rules"), str(ROOT / "rulesets/his/his_threshold8.rules"),
                       "--exact", "--generate", "2")
    assert code == 1 and max(len(line) for line in out.splitlines()) <= WIDTH
    code, out, _ = run("explain", str(ROOT / "rulesets/diplomacy/standard.rules"), "--state",
                       str(ROOT / "rulesets/diplomacy/examples/movement_1901.json"))
    assert code == 0 and max(len(line) - (len(line) - len(line.lstrip())) for line in out.splitlines()) <= WIDTH


VALUES = ('[{"k" => 1, "a text of a few words" => "and another text of a few words, which is long"}, '
          '{k: 1}, {"if": 2, "two words": 3}, {1, 2}, set(), (1,), tuple([]), 1/2, -3, none, true, '
          '"a\\nb", "none", {}, [[1], {2 => (3, "x")}]]')


def test_a_value_printed_by_run_reads_back_as_itself(tmp_path: Path) -> None:
    """The text output writes a value in the language's notation: pasted into a ruleset, it is the
    value the run gave (a record stays a record, a map a map, a set a set, a text a text)."""
    rules = write(tmp_path, f"query main = {VALUES}\n")
    code, out, err = run("run", rules)
    assert code == 0, err
    printed = out.rstrip("\n")
    assert "\n" in printed and '"and another text of a few words, which is long"}' in printed  # wrapped, not in a text
    pasted = tmp_path / "pasted"
    pasted.mkdir()
    again = write(pasted, f"def given = {VALUES}\ndef printed = {printed}\n"
                          "query main = [printed == given, [str(x) for x in printed] == [str(x) for x in given]]\n")
    code, out, err = run("run", again)
    assert (code, out) == (0, "[true, true]\n"), err


def test_each_field_of_a_record_and_each_entry_of_a_map_is_shown_in_the_notation(tmp_path: Path) -> None:
    rules = write(tmp_path, 'query main = {name: "a", gone: none, tags: {"b", "a"}, pos: (1, 2), share: 1/3, '
                            'inner: {"x" => {y: "z"}, 2 => [1]}, "if": "keyword"}\n')
    code, out, err = run("run", rules)
    assert code == 0, err
    assert out.splitlines() == ['name: "a"', "gone: none", 'tags: {"a", "b"}', "pos: (1, 2)", "share: 1/3",
                                "inner:", '  "x" =>', '    y: "z"', "  2 => [1]", '"if": "keyword"']
    code, out, _ = run("run", rules, "--format", "json")  # the JSON answer is as it was
    assert json.loads(out) == {"name": "a", "gone": None, "tags": ["a", "b"], "pos": [1, 2], "share": "1/3",
                               "inner": {"\"x\"": {"y": "z"}, "2": [1]}, "if": "keyword"}


def test_a_map_of_records_is_a_table_keyed_by_the_keys_in_the_notation(tmp_path: Path) -> None:
    rules = write(tmp_path, 'query main = {"a" => {n: 1}, "b" => {n: 2}}\n')
    code, out, err = run("run", rules)
    assert code == 0, err
    assert [line.split() for line in out.splitlines()] == [["n"], ['"a"', "1"], ['"b"', "2"]]


def test_exact_outcomes_are_told_apart_in_the_notation(tmp_path: Path) -> None:
    rules = write(tmp_path, 'query main = if roll(1d2) == 1 then {who: "a", m: {"k" => 1}} else {who: none, m: {k: 1}}\n')
    code, out, err = run("run", rules, "--exact")
    assert code == 0, err
    assert [line.split() for line in out.splitlines()[2:]] == [
        ["1/2", "50.00%", 'who="a"'], ["1/2", "50.00%", "who=none"]]
    rules = write(tmp_path, 'query main = if roll(1d2) == 1 then {"k" => 1} else {k: 2}\n')
    code, out, err = run("run", rules, "--exact")
    assert code == 0, err
    assert [line.split()[2:] for line in out.splitlines()[2:]] == [['["k"]=1'], ["k=2"]]


# ---------------------------------------------------------------- the other reports, as a user reads them


def test_a_failed_case_says_what_the_run_gave_in_the_notation(tmp_path: Path) -> None:
    """`ruleval test` compares JSON (a case expects what `--format json` writes), but says what the run
    gave as the language writes it: `1/2` is a fraction, not the text `"1/2"`; a tuple, a set and a
    map with keys of two kinds are themselves, not the arrays and objects JSON makes of them."""
    write(tmp_path, 'query main = {r: {k: 1/2}, t: (1, "x"), s: {3, 1}, m: {1 => "a", "1" => "b"}}\n')
    (tmp_path / "cases.yaml").write_text(
        "ruleset: main.rules\ncases:\n"
        "  - {id: fraction, expect: {r: {k: \"1/3\"}}}\n"
        "  - {id: tuple, expect: {t: 5}}\n"
        "  - {id: set, expect: {s: 2}}\n"
        "  - {id: map, expect: {m: 1}}\n"
        "  - {id: entry, expect: {m: {\"\\\"1\\\"\": \"c\"}}}\n", encoding="utf-8")
    code, out, err = run("test", str(tmp_path / "cases.yaml"))
    assert code == 1, err
    said = [line.strip() for line in out.splitlines() if line.startswith("    ")]
    assert said == ['/r/k: expected "1/3", got 1/2', '/t: expected 5, got (1, "x")',
                    "/s: expected 2, got {1, 3}", '/m: expected 1, got {1 => "a", "1" => "b"}',
                    '/m/"1": expected "c", got "b"']


def test_diff_shows_the_fields_that_differ_in_the_notation(tmp_path: Path) -> None:
    """`ruleval diff` compares the JSON answers of OLD and NEW and shows each changed field as the
    language writes it (`3/2`, a set as a set); the minimal state stays JSON, as a state file is."""
    (tmp_path / "ruleval.toml").write_text("")
    head = 'ruleset t "t"\ninput xs: list[int] at "/xs" default []\n'
    (tmp_path / "old.rules").write_text(head + "query main = {total: sum(xs) / 2, s: {(x, x) for x in xs}}\n")
    (tmp_path / "new.rules").write_text(head + "query main = {total: sum(xs) / 3, s: str(xs)}\n")
    (tmp_path / "cases.yaml").write_text("ruleset: old.rules\ncases:\n  - {id: a, state: {xs: [1, 2]}, expect: {}}\n")
    code, out, err = run("diff", str(tmp_path / "old.rules"), str(tmp_path / "new.rules"),
                         "--cases", str(tmp_path / "cases.yaml"))
    assert code == 1, err
    lines = out.splitlines()
    assert lines[1].startswith("  minimal state (") and lines[1].endswith(' {"xs": [2]}')
    assert [line.split() for line in lines[2:5]] == [["field", "OLD", "NEW"], ["/total", "1", "2/3"],
                                                     ["/s", "{(2,", "2)}", '"[2]"']]


def test_explain_unit_and_the_decision_graph_write_values_in_the_notation(tmp_path: Path) -> None:
    """`explain --unit` tells a piece's story, and `--format dot` labels each decision, with the
    values in the language's notation (`1/2`, `{"b" => 1}`, `true`), whatever the shape of the query's
    result (a list here: the trace was dropped for any result but a record). (A decision is a truth value:
    the values of other kinds are a rule's, which the decision reads.)"""
    write(tmp_path, 'input pieces: list[str] at "/pieces" default []\n'
                    'rule share(p) cite "T-1" = if p == "a" then 1/2 else {p => 1}\n'
                    'decision has(p) cite "T-2" = share(p) != none\n'
                    'query main = [has(p) for p in pieces]\n')
    (tmp_path / "view.yaml").write_text("explain:\n  unit: '^(?P<key>[a-z]+)'\n  say:\n"
                                        "    share: \"{0} has a share of {value}\"\n")
    (tmp_path / "state.json").write_text('{"pieces": ["a", "b"]}')
    rules, state = str(tmp_path / "main.rules"), str(tmp_path / "state.json")
    code, out, err = run("explain", rules, "--state", state, "--unit", "b")
    assert code == 0, err
    assert out == 'B has a share of {"b" => 1}  [T-1]\n'
    code, out, err = run("explain", rules, "--state", state, "--format", "dot", "-o", str(tmp_path / "g.dot"))
    assert code == 0, err
    labels = [line.split("label=", 1)[1] for line in (tmp_path / "g.dot").read_text().splitlines() if "label=" in line]
    assert labels == ['"has(\\"a\\")\\n= true"];', '"has(\\"b\\")\\n= true"];']


def test_play_says_statuses_and_the_end_in_the_notation(tmp_path: Path) -> None:
    """`ruleval play`'s lines: a status that is no text written as the language writes it (`true`, not
    Python's `True`), and a game's end without a `reason` in the notation."""
    write(tmp_path, 'input turn: int at "/turn" default 0\ninput orders: list[any] at "/orders" default []\n'
                    'query advance = {phase: "p" + str(turn), result: {orders: [{status: o > 1} for o in orders]},\n'
                    '  next: {turn: turn + 1}, next_phase: "p" + str(turn + 1),\n'
                    '  end: if turn >= 1 then {winner: {"a" => 1/2}} else none}\n')
    (tmp_path / "start.json").write_text('{"turn": 0}')
    (tmp_path / "orders.json").write_text("[[1, 2, 3], [4]]")
    code, out, err = run("play", str(tmp_path / "main.rules"), str(tmp_path / "start.json"),
                         "--orders", str(tmp_path / "orders.json"))
    assert code == 0, err
    assert out.splitlines() == ["p0: orders 1 false, 2 true -> p1", "p1: orders 1 true -> p2",
                                'game over: {winner: {"a" => 1/2}}']


def test_explain_unit_tells_a_decision_once_when_another_of_the_piece_told_it(tmp_path: Path) -> None:
    """A piece's decision that another of its own decisions consulted is told inside that one's story,
    not again as a line of its own after it (it was, the sentence twice in a row)."""
    write(tmp_path, 'input pieces: list[str] at "/pieces" default []\n'
                    'decision strong(p) cite "T-1" = p == "a"\n'
                    'decision moves(p) cite "T-2" = strong(p)\n'
                    'query main = {moved: [p for p in pieces if moves(p)]}\n')
    (tmp_path / "view.yaml").write_text("explain:\n  unit: '^(?P<key>[a-z]+)'\n  say:\n"
                                        "    strong: \"{0} is strong: {value}\"\n    moves: \"{0} moves: {value}\"\n")
    (tmp_path / "state.json").write_text('{"pieces": ["a"]}')
    code, out, err = run("explain", str(tmp_path / "main.rules"), "--state", str(tmp_path / "state.json"),
                         "--unit", "a")
    assert code == 0, err
    assert out.splitlines() == ["A moves: true  [T-2]", "  A is strong: true  [T-1]"]

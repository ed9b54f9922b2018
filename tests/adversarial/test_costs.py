"""Issue 45, the costs that were not charged: each a small file that made ruleval work for minutes or
gigabytes. Each runs as CI runs a stranger's pull request (`hostile`: a subprocess capped in memory and
CPU time that fails when its CPU limit stops it, on exit 4 or on a traceback), or calls the bounded
function directly; each failed on the code before its fix (checked by running it there).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adversarial.test_budgets import codes
from validator.lib.values import MAX_OUTPUT_BYTES, too_large, written


def run(hostile, repo: Path, source: str, *extra: str, command: str = "run") -> object:
    (repo / "main.rules").write_text(source)
    return hostile(command, str(repo / "main.rules"), "--state", str(repo / "empty.json"), "--format", "json", *extra,
                   cwd=repo, seconds=30)


# ---------------------------------------------------------------- the output limit, in bytes


def test_a_long_text_listed_many_times_is_e013_not_gigabytes(hostile, repo: Path) -> None:
    # 20 000 parts (far under the limit of parts) of one 100 kB text: a 2 GB answer
    out = run(hostile, repo, 'def s = join(["aaaaaaaaaa" for i in range(10000)], "")\n'
                             "query main = [s for i in range(20000)]\n")
    assert out.code == 1 and codes(out) == {"E013"}, out.text
    assert "bytes of text" in out.out


def test_the_output_limit_counts_bytes_not_characters() -> None:
    emoji = "\U0001f600" * 1000  # 1 000 characters, 4 000 bytes in UTF-8
    copies = MAX_OUTPUT_BYTES // 1000 // 2  # half the limit in characters, twice it in bytes
    with pytest.raises(ValueError) as err:
        written([emoji] * copies)
    assert too_large(err.value) and "bytes" in str(err.value)
    assert written(["a" * 1000] * copies) == ["a" * 1000] * copies  # the same in ASCII is written


@pytest.mark.parametrize("value", [
    {"names": ["a" * 1000] * 60_000},  # a list of texts in a record (its parts were not counted either)
    {"a" * 1000: 1, "k": [{"a" * 1000: 1}] * 60_000},  # the keys of records
    [10 ** 4000] * 20_000,  # the digits of long numbers
])
def test_the_output_limit_counts_texts_keys_and_digits_wherever_they_stand(value: object) -> None:
    with pytest.raises(ValueError) as err:
        written(value)
    assert too_large(err.value)


# ---------------------------------------------------------------- the copies a trace keeps


def test_explain_charges_the_copies_of_its_trace(hostile, repo: Path) -> None:
    # a value of 10^9 parts by sharing, passed to a cited rule: the trace copied it whole, uncharged
    source = ("def up(x) = [x, x, x, x, x, x, x, x, x, x]\ndef big = up(up(up(up(up(up(up(up(up(1)))))))))\n"
              'rule f(x) cite "A1" = 1\nquery main = f(big)\n')
    for command in ("explain", "run"):
        out = run(hostile, repo, source, *(("--explain",) if command == "run" else ()), command=command)
        assert out.code == 1 and "E004" in codes(out), out.text


# ---------------------------------------------------------------- "did you mean", bounded


def test_did_you_mean_is_bounded_however_many_names(hostile, repo: Path) -> None:
    # 20 000 unknown names, each compared with 20 000 known ones: minutes before, seconds now
    n = 20_000
    source = "".join(f"def name_{i:05d} = {i}\n" for i in range(n))
    source += "query main = [" + ", ".join(f"nome_{i:05d}" for i in range(n)) + "]\n"
    (repo / "main.rules").write_text(source)
    out = hostile("check", "--format", "json", str(repo / "main.rules"), cwd=repo, seconds=60)
    assert out.code == 1
    unknown = [d for d in json.loads(out.out) if d["code"] == "C001"]
    assert len(unknown) == n
    assert unknown[0]["help"] == "did you mean `name_00000`?"  # the first ones still get their suggestion


# ---------------------------------------------------------------- compiling regular expressions


@pytest.mark.parametrize("call", ['match("x", p + str(i))', 'search("x", p + str(i))', 'match_first("x", [p + str(i)])'])
def test_compiling_a_pattern_is_charged_by_its_size(hostile, repo: Path, call: str) -> None:
    # 100 000 patterns of 20 characters, each a program of 3 000 instructions (6 ms to compile): the
    # loop took some 3 million steps, and ten minutes compiling, uncharged
    out = run(hostile, repo, 'def p = "((a|b|c){100}){10}"\n'
                             f"query main = len([i for i in range(100000) if {call} != none])\n")
    assert out.code == 1 and "E004" in codes(out), out.text


def test_patterns_kept_compiled_are_bounded() -> None:
    from validator.lib import patterns

    patterns.compiled.cache_clear()
    for i in range(patterns.KEPT_PATTERNS * 3):
        patterns.compiled(f"x{i}")
    assert patterns.compiled.cache_info().currsize == patterns.KEPT_PATTERNS


# ---------------------------------------------------------------- uniqueItems


def _unique_items_repo(repo: Path, items: list) -> None:
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
              "properties": {"xs": {"type": "array", "uniqueItems": True}}}
    (repo / "schema.json").write_text(json.dumps(schema))
    (repo / "main.rules").write_text('schema "schema.json"\nquery main = 1\n')
    (repo / "s.json").write_text(json.dumps({"xs": items}))


def test_unique_items_over_objects_is_linear(hostile, repo: Path) -> None:
    # 30 000 distinct objects: jsonschema compared them pairwise (450 million comparisons)
    _unique_items_repo(repo, [{"a": i} for i in range(30_000)])
    out = hostile("run", str(repo / "main.rules"), "--state", str(repo / "s.json"), cwd=repo)
    assert out.code == 0 and out.out.strip() == "1", out.text


@pytest.mark.parametrize("items, unique", [([{"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0}], False),
                                           ([1, True], True), ([[1], [True]], True), ([{"a": [1, 2]}, {"a": [2, 1]}], True),
                                           ([{"a": 1}] + [{"a": i} for i in range(5000)], False)])
def test_unique_items_means_what_json_schema_says(hostile, repo: Path, items: list, unique: bool) -> None:
    _unique_items_repo(repo, items)
    out = hostile("run", str(repo / "main.rules"), "--state", str(repo / "s.json"), cwd=repo)
    if unique:
        assert out.code == 0, out.text
    else:
        said = "expected unique items, but item"
        assert out.code == 3 and "S002" in out.text and said in out.text and "/xs" in out.text, out.text
        assert len(out.text) < 2000  # the list is not printed whole


# ---------------------------------------------------------------- the values of a YAML game file


def test_a_yaml_game_file_of_millions_of_values_is_refused_early(hostile, repo: Path) -> None:
    # 40 MB (under the 64 MB a game file may take) of 20 million values: gigabytes once composed
    (repo / "main.rules").write_text("query main = 1\n")
    (repo / "record.yaml").write_text("- [0" + ",0" * 20_000_000 + "]\n")
    out = hostile("replay", str(repo / "main.rules"), str(repo / "record.yaml"), cwd=repo, seconds=90)
    assert out.code == 3 and "error[S001]" in out.err and "values" in out.err, out.text
    assert "record.yaml:1:" in out.err  # at the first value past the bound


@pytest.mark.parametrize("name, text", [
    ("record.json", "[[0" + ",0" * 20_000_000 + "]]\n"),
    ("record.jsonl", '{"a": 1}\n[0' + ",0" * 20_000_000 + "]\n"),
])
def test_a_json_game_file_of_millions_of_values_is_refused_early(hostile, repo: Path, name: str, text: str) -> None:
    # 40 MB (under the 64 MB a game file may take) of 20 million values: gigabytes once read
    (repo / "main.rules").write_text("query main = 1\n")
    (repo / name).write_text(text)
    out = hostile("replay", str(repo / "main.rules"), str(repo / name), cwd=repo, seconds=90)
    assert out.code == 3 and "error[S001]" in out.err and "values" in out.err, out.text
    assert f"{name}:{1 if name.endswith('.json') else 2}:" in out.err  # at the first value past the bound


def test_commas_inside_texts_are_no_values_of_a_game_file(repo: Path) -> None:
    """The bound counts values, not the commas a text holds: a state with one long text of commas is
    read (the record is then refused for what it is, not for its size)."""
    from validator.core.diagnostics import DiagnosticError
    from validator.tools.play import MAX_GAME_FILE_VALUES, read_game_file

    (repo / "record.json").write_text('[{"note": "' + "," * (2 * MAX_GAME_FILE_VALUES) + '"}]\n')
    assert read_game_file(str(repo / "record.json"))[0].value["note"] == "," * (2 * MAX_GAME_FILE_VALUES)
    (repo / "record.json").write_text('[{"note": "' + "," * (2 * MAX_GAME_FILE_VALUES) + '"}, [0'
                                      + ",0" * MAX_GAME_FILE_VALUES + "]]\n")
    with pytest.raises(DiagnosticError) as exc:
        read_game_file(str(repo / "record.json"))
    assert "values" in exc.value.diagnostics[0].message


def test_map_keys_are_bounded_before_their_texts_are_made(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: the texts of a map's keys (`key_text`) were counted once all of them were made: 2 000 keys
    holding one 100 kB text made 200 MB of keys before the limit was looked at."""
    from validator.lib import values

    made: list[object] = []
    real = values.key_text
    monkeypatch.setattr(values, "key_text", lambda k, quoted=False: made.append(k) or real(k, quoted))
    long = "a" * 100_000
    with pytest.raises(ValueError) as err:
        written({(long, i): i for i in range(2_000)})
    assert too_large(err.value) and made == []
    small = {(long, i): i for i in range(3)}  # under the limit: written, each key once
    assert written(small) == {f'("{long}", {i})': i for i in range(3)} and len(made) == 3

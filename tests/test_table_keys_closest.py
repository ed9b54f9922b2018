"""`rows`, `columns` and `closest` (docs/language.md, "Tables" and "Built-ins"): their documented
meaning on both engines, `closest` against the docs' definition computed here from the docs alone
(never by ``difflib``, which the checker's own did-you-mean calls)."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from validator.api import RunError, load_ruleset
from validator.core.diagnostics import closest_name

ENGINES = ["reference", "backend"]


def ruleset(root: Path, text: str, name: str = "main.rules", **files: str) -> Any:
    (root / "ruleval.toml").write_text("")
    for fname, body in files.items():
        (root / fname.replace("__", ".")).write_text(body, encoding="utf-8")
    (root / name).write_text(text, encoding="utf-8")
    return load_ruleset(root / name, use_cache=False)


def loaded(root: Path, text: str, name: str = "main.rules", **files: str) -> Any:
    rs = ruleset(root, text, name, **files)
    errors = [f"{d.code} {d.span}: {d.message}" for d in rs.diagnostics if d.is_error]
    assert not errors, errors
    return rs


# ---------------------------------------------------------------- rows and columns

GRID = '''table cost[kind, ground] -> int? cite "R1" {
  | kind  | flat | hill | 3 |
  | foot  | 1    | 2    | - |
  | horse | 1    | -    | - |
  | ghost | -    | -    | - |
}
table speed[kind] cite "R2" {
  | foot  | 1 |
  | 7     | 3 |
}
'''


@pytest.mark.parametrize("engine", ENGINES)
def test_rows_and_columns_are_the_keys_of_a_grid_in_the_order_written(tmp_path: Path, engine: str) -> None:
    """A row of absent cells is a row; a number key is a number; a one-key table's keys are its rows."""
    rs = loaded(tmp_path, GRID + "query main = [rows(cost), columns(cost), rows(speed)]\n")
    assert rs.run({}, engine=engine) == [["foot", "horse", "ghost"], ["flat", "hill", 3], ["foot", 7]]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_variants_added_cell_adds_its_keys_after_the_grids(tmp_path: Path, engine: str) -> None:
    (tmp_path / "base.rules").write_text(GRID + "query main = [rows(cost), columns(cost)]\n")
    rs = loaded(tmp_path, 'extends "base.rules"\noverride cost["ship", "sea"] cite "E1" = 4\n'
                          'override cost["foot", "flat"] cite "E2" = 9\n', name="variant.rules")
    assert rs.run({}, engine=engine) == [["foot", "horse", "ghost", "ship"], ["flat", "hill", 3, "sea"]]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_data_tables_keys_are_its_sources_in_the_order_walked(tmp_path: Path, engine: str) -> None:
    """The outer map's keys; the columns: each row's map's keys, each once, in the order first met."""
    rs = loaded(tmp_path, 'import "costs.yaml" as data\n'
                          'table dcost[kind, ground] -> int? cite "R3" = data.cost\n'
                          'table dspeed[kind] -> int? cite "R3" = data.speed\n'
                          'import "lib.rules" as lib\n'
                          'query main = [rows(dcost), columns(dcost), rows(dspeed), rows(lib.t)]\n',
                costs__yaml="cost:\n  foot: {flat: 1, hill: 3}\n  horse: {swamp: 2, flat: 1}\n  elf: 5\n"
                            "speed: {b: 1, a: 2}\n",
                lib__rules='table t[k] cite "L" {\n  | x | 1 |\n}\n')
    assert rs.run({}, engine=engine) == [["foot", "horse", "elf"], ["flat", "hill", "swamp"], ["b", "a"], ["x"]]


@pytest.mark.parametrize("text, code, message", [
    ("def f(x) = rows(x)\nquery main = f(1)", "C004", "`rows` takes a table's name"),
    ("query main = rows([1, 2])", "C004", "`rows` takes a table's name"),
    ("query main = columns(speed)", "C003", "table `speed` has one key"),
    ("query main = rows(cost) + 1", "C004", "cannot compute"),
    ("query main = cost", "C004", "table `cost` is looked up"),
])
def test_rows_and_columns_take_a_tables_name_alone(tmp_path: Path, text: str, code: str, message: str) -> None:
    rs = ruleset(tmp_path, GRID + text + "\n")
    assert [(d.code, d.message[:len(message)]) for d in rs.diagnostics if d.is_error] == [(code, message)]


# ---------------------------------------------------------------- closest, as the docs define it


def matched(n: str, text: str) -> int:
    """docs: `m`, the characters `n` and `text` match: their longest common stretch (the first in `n`,
    then in `text`, of several as long), plus `m` of the parts before it and of the parts after it."""
    best = (0, 0, 0)  # (length, start in n, start in text)
    for i in range(len(n)):
        for j in range(len(text)):
            k = 0
            while i + k < len(n) and j + k < len(text) and n[i + k] == text[j + k]:
                k += 1
            if k > best[0]:  # (i, then j, increasing: the first of several as long is kept)
                best = (k, i, j)
    k, i, j = best
    if k == 0:
        return 0
    return k + matched(n[:i], text[:j]) + matched(n[i + k:], text[j + k:])


def likeness(n: str, text: str) -> Fraction:
    total = len(n) + len(text)
    return Fraction(2 * matched(n, text), total) if total else Fraction(1)


def documented_closest(text: str, names: list[str]) -> str | None:
    if len(text) > 80:
        return None
    near = [n for n in names if len(n) <= 80]
    if len(near) > 500:  # the 500 nearest in length, the first walked of those equally near
        near = [n for _, _, n in sorted((abs(len(n) - len(text)), i, n) for i, n in enumerate(near))[:500]]
    liked = [(likeness(n, text), n) for n in near]
    liked = [(v, n) for v, n in liked if v >= Fraction(3, 5)]
    return max(liked)[1] if liked else None  # (equally like: the greatest text)


CLOSEST = 'input t: any at "/t"\ninput names: any at "/names"\nquery main = closest(t, names)\n'
words = st.text(alphabet="abcé", max_size=7)


@pytest.fixture(scope="module")
def closest_rs(tmp_path_factory: Any) -> Any:
    return loaded(tmp_path_factory.mktemp("closest"), CLOSEST)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=words, names=st.lists(words, max_size=6))
def test_closest_is_the_documented_choice_on_both_engines(closest_rs: Any, text: str, names: list[str]) -> None:
    want = documented_closest(text, names)
    for engine in ENGINES:
        assert closest_rs.run({"t": text, "names": names}, engine=engine) == want
    assert closest_name(text, names) == want  # (the checker's did-you-mean: the same choice)


@pytest.mark.parametrize("text, names, want", [
    ("cavlry", ["infantry", "cavalry"], "cavalry"),  # the docs' examples
    ("ligth", ["light"], "light"),
    ("ab", ["abc", "abd"], "abd"),  # equally like: the greatest text
    ("abcde", ["abxyz"], None),  # 2/5, under 3/5
    ("abc", ["abcxy"], "abcxy"),  # 3/5 exactly
    ("", [""], ""),  # both empty: 1
    ("a" * 81, ["a" * 81, "a" * 80], None),  # a text past 80 has none
    ("a" * 80, ["a" * 81, "a" * 79], "a" * 79),  # a name past 80 is not considered
    ("abcd", ["wxyz"] * 500 + ["abcdzz"], None),  # past 500 names: the 500 nearest in length
    ("abcd", ["wxyz"] * 499 + ["abcdzz"], "abcdzz"),
])
@pytest.mark.parametrize("engine", ENGINES)
def test_closest_examples(closest_rs: Any, engine: str, text: str, names: list[str], want: str | None) -> None:
    assert documented_closest(text, names) == want
    assert closest_rs.run({"t": text, "names": names}, engine=engine) == want


@pytest.mark.parametrize("engine", ENGINES)
def test_closest_chooses_among_a_set_walked_in_the_order_of_values(tmp_path: Path, engine: str) -> None:
    rs = loaded(tmp_path, 'query main = [closest("mediun", {"heavy", "medium"}), closest("x", set())]\n')
    assert rs.run({}, engine=engine) == ["medium", None]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("state, message", [
    ({"t": 1, "names": ["a"]}, "closest needs text"),
    ({"t": "a", "names": ["a", 2]}, "closest chooses among texts"),
    ({"t": "a", "names": 3}, "closest needs a list, set or map"),
])
def test_closest_refuses_what_is_no_text(closest_rs: Any, engine: str, state: dict[str, Any], message: str) -> None:
    with pytest.raises(RunError) as err:
        closest_rs.run(state, engine=engine)
    [d] = err.value.diagnostics
    assert d.code == "E011" and message in d.message and d.span.line == 3


@pytest.mark.parametrize("engine", ENGINES)
def test_closest_charges_each_name_and_the_product_of_the_lengths(closest_rs: Any, engine: str) -> None:
    """40 names of 80 characters against a text of 80: 40 + 40 * 6400 steps, past a budget of 200 000."""
    state = {"t": "a" * 80, "names": ["b" * 80] * 40}
    assert closest_rs.run(state, engine=engine, budget=300_000) is None
    with pytest.raises(RunError) as err:
        closest_rs.run(state, engine=engine, budget=200_000)
    assert err.value.diagnostics[0].code == "E004"


@pytest.mark.parametrize("text, message", [
    ("query main = closest(1, [\"a\"])", "`closest` reads a text"),
    ("query main = closest(\"a\", {\"a\" => 1})", "`closest` chooses among a list or set of texts"),
    ("query main = closest(\"a\", [1, 2])", "`closest` chooses among a list or set of texts"),
    ("query main = closest(\"a\", [\"a\"]) * 2", "cannot compute"),
])
def test_the_checker_knows_closests_kinds(tmp_path: Path, text: str, message: str) -> None:
    rs = ruleset(tmp_path, text + "\n")
    assert [(d.code, d.message[:len(message)]) for d in rs.diagnostics if d.is_error] == [("C004", message)]

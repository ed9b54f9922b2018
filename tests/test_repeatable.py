"""A seed is a promise: the same ruleset, state and seed give the same output in every process.

Python salts the hashes of texts per process (``PYTHONHASHSEED``), so a set walked in hash order
gives another game in another process. Each command below (a seeded game of every family, every
bundled example with seeded and exact dice, every generator, a program that walks sets of
texts in every way; then every bundled example with every ruleset of its family, as `ruleval run`
prints it) is run in fresh processes under several hash seeds, and the outputs must be identical
byte for byte (docs/language.md, "Order").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A program walking sets of texts (and of mixed kinds) every way the language can: loops,
# comprehensions, the built-ins that walk, dice rolled in a set's order, `str` and JSON.
SET_PROGRAM = """ruleset t.sets "sets walked in order"
def fruit = {"pear", "apple", "fig", "plum", "kiwi", "date", "lime", "yuzu"}
def mixed = {"b", 3, none, true, (1, "a"), "a", -2, (1, 0), false, 1/2}
def words(xs) = join(xs, ",")
query main = {
  rolled: {x => roll(1d6) for x in fruit},
  listed: list(fruit), first: first(fruit), last: last(fruit), joined: words(fruit),
  folded: fold(fruit, "", fn(acc, x) => acc + x[0]),
  scanned: scan(fruit, "", fn(acc, x) => acc + x[0]),
  enumerated: [e.index for e in enumerate(fruit) if e.item != "fig"],
  sliced: slice(fruit, 1, 4), zipped: zip(fruit, range(8)), reversed: reverse(fruit),
  grouped: group_by(fruit, fn(x) => len(x)), indexed: index_by(fruit, fn(x) => len(x)),
  sorted_ties: sort_by(fruit, fn(x) => len(x)), max_by: max_by(fruit, fn(x) => len(x)),
  min_by: min_by(fruit, fn(x) => len(x)), unique: unique(fruit), tupled: tuple(fruit),
  union: list(union(fruit, {"zzz", "aaa"})), shown: str(mixed), mixed: list(mixed),
  nested: [[x, y] for x in {"q", "r", "p"} for y in {"b", "a"}],
  dice_order: [roll(1d20) for x in fruit],
  picked: choice(7, "k", fruit), shuffled: shuffle(7, "k", fruit),
  keyed: keys({x => 1 for x in fruit}),
  proc: walk()
}
procedure walk cite "T-1" {
  var out = []
  step go cite "T-1" {
    for x in fruit { out := append(out, x + str(roll(1d6))) }
  }
}
"""

_SCRIPT = r"""
import io, json, sys
from validator.tools.cli import main
for argv in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    sys.stdout.write(f"$ {' '.join(argv)} -> {code}\n{out.getvalue()}{err.getvalue()}")
"""


def _commands(tmp: Path) -> list[list[str]]:
    program = tmp / "sets.rules"
    program.write_text(SET_PROGRAM)
    (tmp / "ruleval.toml").write_text("")
    r = ROOT / "rulesets"
    dip, his, jom = str(r / "diplomacy/standard.rules"), str(r / "his/his.rules"), str(r / "jomini/re.rules")
    cmds = [["run", str(program), "--seed", "42"], ["run", str(program), "--seed", "42", "--format", "json"],
            ["play", dip, "--random-orders", "3", "--until", "S1903M", "--seed", "5", "--format", "jsonl"],
            ["play", str(r / "diplomacy/ancmed.rules"), "--random-orders", "8", "--until", "F1902M", "--format", "jsonl"],
            ["play", dip, str(ROOT / "docs/examples/game/start.json"), "--orders", str(ROOT / "docs/examples/game/orders.yaml"),
             "--format", "jsonl"]]
    for rules, family in ((dip, "diplomacy"), (his, "his"), (jom, "jomini"), (str(r / "jomini/am.rules"), "jomini")):
        for seed in ("1", "2"):
            cmds.append(["run", rules, "--query", "generate", "--arg", seed, "--format", "json"])
        for example in sorted((r / family / "examples").glob("*.json")):
            cmds.append(["run", rules, "--state", str(example), "--seed", "7", "--format", "json"])
            if family != "diplomacy":
                cmds.append(["run", rules, "--state", str(example), "--exact", "--format", "json"])
    return cmds + bundled_example_runs()


def bundled_example_runs() -> list[list[str]]:
    """Every bundled example with every ruleset of its family, as the playground offers them (and as
    `ruleval run` prints them: the text output), seeded; with exact dice too where the family rolls
    dice whose every outcome can be enumerated (not Diplomacy, which rolls none)."""
    cmds = []
    for family in sorted(p for p in (ROOT / "rulesets").iterdir() if (p / "examples").is_dir()):
        examples = sorted((family / "examples").glob("*.json"))
        assert examples, family
        for rules in sorted(family.glob("*.rules")):
            for example in examples:
                cmds.append(["run", str(rules), "--state", str(example), "--seed", "7"])
                if family.name != "diplomacy":
                    cmds.append(["run", str(rules), "--state", str(example), "--exact"])
    return cmds


def _output(commands: list[list[str]], hash_seed: str) -> str:
    env = {**os.environ, "PYTHONHASHSEED": hash_seed}
    done = subprocess.run([sys.executable, "-c", _SCRIPT, json.dumps(commands)], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.slow
def test_seeded_games_and_set_walks_repeat_under_every_hash_seed(tmp_path: Path) -> None:
    commands = _commands(tmp_path)
    outputs = {seed: _output(commands, seed) for seed in ("0", "1", "2", "3")}
    first = outputs["0"]
    assert "Traceback" not in first and "-> 0\n" in first, first[:2000]
    for seed, text in outputs.items():
        assert text == first, f"PYTHONHASHSEED={seed} gave another output"


def test_every_bundled_example_is_run_with_every_ruleset_of_its_family() -> None:
    """What the repeat test covers: each example file of each family with each of its rulesets."""
    runs = {(Path(c[1]).name, Path(c[3]).name) for c in bundled_example_runs()}
    for family in ("diplomacy", "his", "jomini"):
        for example in (ROOT / "rulesets" / family / "examples").glob("*.json"):
            for rules in (ROOT / "rulesets" / family).glob("*.rules"):
                assert (rules.name, example.name) in runs


def test_a_set_of_texts_is_walked_in_the_order_of_values(tmp_path: Path) -> None:
    """One process suffices to see the order: it is the order of values, whatever the hashes."""
    text = _output(_commands(tmp_path)[1:2], "5")
    result = json.loads(text.split("\n", 1)[1])
    fruit = ["apple", "date", "fig", "kiwi", "lime", "pear", "plum", "yuzu"]
    assert result["listed"] == fruit and result["keyed"] == fruit and result["first"] == "apple"
    assert result["sorted_ties"] == ["fig", "date", "kiwi", "lime", "pear", "plum", "yuzu", "apple"]
    assert result["shown"] == '{none, false, true, -2, 1/2, 3, "a", "b", (1, 0), (1, "a")}'

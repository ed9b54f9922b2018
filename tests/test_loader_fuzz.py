"""Issue 45, step 3: every loader maps every failure of its input to a located diagnostic.

Each test mutates a real input of its loader thousands of times (seeded: the same inputs on every run)
with the edits an attacker or a slip makes (bytes flipped, cut, doubled; YAML tags, impossible dates,
5 000-digit and base-60 integers, NaN, aliases, deep brackets, control characters, invalid UTF-8) and
calls the loader as the CLI does. The only exception allowed out is the documented one
(`DiagnosticError`, or `UsageError` for a file the command line names wrongly), whose diagnostics
carry a code and a place: anything else would be exit 4 at the command line. `--slow` runs 20 times
as many inputs.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import pytest

from validator import api
from validator.core.diagnostics import Diagnostic, DiagnosticError
from validator.core.exits import UsageError
from validator.engine.state import read_state_text
from validator.lang.loader import load_data_file
from validator.tools import play, testing

ROOT = Path(__file__).resolve().parent.parent
TEACHING = ROOT / "rulesets" / "diplomacy"

# what the mutations insert: each a known way a loader used to fail, or a plausible neighbour of one
HOSTILE = [
    "!!bool maybe", "!!timestamp abc", '!!int ""', "!!int 0x", "!!float abc", "!!binary ***", "!!set {a}",
    "!!omap [a]", "!!python/object:os.system", "!!str", "!<tag:yaml.org,2002:int> x", "2020-02-30",
    "2020-13-01", "2001-12-14t21:59:43.10-99:00", "9" * 5000, "-" + "9" * 4400, "1:" * 3000 + "1",
    "0b" + "1" * 5000, "0o" + "7" * 5000, "0x" + "f" * 5000, "1e999", "-1e999", ".nan", ".inf", "NaN",
    "Infinity", "1e308", "&a [*a]", "*nope", "&a x", "<<: *a", "<<: 5", "? [a]", "{[a]: b}", "[" * 200,
    "{" * 200, "]" * 5, "}", ":", "- - -", "\t", "\x00", "\x1b[2J", "\u202e", "\ud800", "\"\\ud800\"",
    "\"\\u0000\"", "'", '"', "#", "%YAML 9.9", "---", "...", "|", ">", "~", "null", "true", "{}", "[]",
    "\"" + "x" * 100 + "\"", "1" * 61, "-0", "0.0000001e-999",
]
RAW = [b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"\x00", b"\r", b"\n\n", b"\x85"]


def mutations(seed_text: bytes, count: int, seed: int) -> list[bytes]:
    """``count`` inputs made from ``seed_text`` by one to four random edits each."""
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        data = bytearray(seed_text)
        for _ in range(rng.randint(1, 4)):
            at = rng.randint(0, len(data))
            kind = rng.randrange(7)
            if kind == 0 and data:
                data[min(at, len(data) - 1)] = rng.randrange(256)
            elif kind == 1:
                data[at:at] = rng.choice(HOSTILE).encode("utf-8", "surrogatepass")
            elif kind == 2:  # a value replaced by a hostile one (after a `: ` or `- `)
                where = data.find(b": ", at)
                where = where if where >= 0 else data.find(b"- ", at)
                if where >= 0:
                    end = data.find(b"\n", where)
                    end = end if end >= 0 else len(data)
                    cut = min(end, where + 2 + rng.randint(0, 20))
                    data[where + 2:cut] = rng.choice(HOSTILE).encode("utf-8", "surrogatepass")
            elif kind == 3:
                data[at:at + rng.randint(1, 30)] = b""
            elif kind == 4:
                data[at:at] = rng.choice(RAW)
            elif kind == 5 and data:
                start = rng.randint(0, len(data) - 1)
                data[at:at] = data[start:start + rng.randint(1, 200)]
            else:
                data[at:at] = b"\n" + rng.choice(HOSTILE).encode("utf-8", "surrogatepass") + b"\n"
        out.append(bytes(data))
    return out


def count(slow: bool, normal: int) -> int:
    return normal * 20 if slow else normal


@pytest.fixture
def slow(request: pytest.FixtureRequest) -> bool:
    return bool(request.config.getoption("--slow"))


def located(diags: list[Diagnostic]) -> None:
    assert diags, "a failure with no diagnostic"
    for d in diags:
        assert d.code[0] in "PCSU" and d.span.file, d


def only_diagnostics(call: Callable[[], Any]) -> None:
    """``call`` returns, or raises a documented error with located diagnostics; anything else fails."""
    try:
        call()
    except DiagnosticError as exc:
        located(list(exc.diagnostics))
    except UsageError:
        pass


def data_files_loaded(tmp_path: Path, inputs: Iterable[bytes], suffix: str) -> Iterator[bytes]:
    """Each input written as a data file and loaded: its diagnostics, if any, located; yields it."""
    for i, data in enumerate(inputs):
        path = tmp_path / f"d{i}{suffix}"
        path.write_bytes(data)
        _, diags = load_data_file(path, path.name)
        if diags:
            located(diags)
        path.unlink()
        yield data


def test_yaml_data_files_fail_only_with_located_diagnostics(tmp_path: Path, slow: bool) -> None:
    seed = (TEACHING / "clauses.yaml").read_bytes()[:3000] + b"\nextra: {a: 1, b: [1, 2.5, -3], c: 2020-01-01}\n"
    for _ in data_files_loaded(tmp_path, mutations(seed, count(slow, 2000), 1), ".yaml"):
        pass


def test_json_data_and_states_fail_only_with_located_diagnostics(tmp_path: Path, slow: bool) -> None:
    seed = (TEACHING / "examples" / "movement_1901.json").read_bytes()[:3000]
    for data in data_files_loaded(tmp_path, mutations(seed, count(slow, 2000), 2), ".json"):
        text = data.decode("utf-8", "surrogateescape")
        only_diagnostics(lambda text=text: read_state_text(text, "state.json"))


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_game_records_and_orders_fail_only_with_located_diagnostics(tmp_path: Path, slow: bool, suffix: str) -> None:
    seeds = {".yaml": b"- {phase: S1901M, orders: [A PAR - BUR, F BRE H], n: 1, d: 2020-01-01}\n- [A MUN H]\n"
                      b"- phase: F1901M\n  orders: []\n",
             ".json": b'[{"phase": "S1901M", "orders": ["A PAR - BUR"]}, ["A MUN H"], {"state": {"units": []}}]',
             ".jsonl": b'{"phase": "S1901M", "state": {"units": [1, 2]}, "result": {}, "end": null}\n["A MUN H"]\n'}
    for i, data in enumerate(mutations(seeds[suffix], count(slow, 1500), 3)):
        path = tmp_path / f"g{i}{suffix}"
        path.write_bytes(data)
        only_diagnostics(lambda path=path: [play._played_state(item.value) for item in play.read_game_file(str(path))])
        path.unlink()


def test_test_case_files_fail_only_with_located_diagnostics(tmp_path: Path, slow: bool) -> None:
    (tmp_path / "main.rules").write_text('input st: any at ""\nquery main = st\n')
    seed = (b"ruleset: main.rules\ncases:\n  - id: a\n    state: {x: 1, y: [a, b]}\n    expect: {x: 1, y: [a, b]}\n"
            b"  - id: b\n    state: {}\n    args: [1]\n    expect: {}\n    dice: [1, 2]\n")
    for i, data in enumerate(mutations(seed, count(slow, 1000), 4)):
        path = tmp_path / f"c{i}.yaml"
        path.write_bytes(data)
        suite = testing.load_suite([str(path)])
        if suite.diagnostics:
            located(list(suite.diagnostics))
        for case in suite.cases:
            if testing.case_fault(case) is None:  # a case that can run runs: a bug there would be I001
                outcome = testing.run_case(case)
                assert outcome.code != "I001", outcome.message
        path.unlink()


def test_maps_fail_only_with_located_diagnostics(tmp_path: Path, slow: bool) -> None:
    # the map file alone, thousands of times (its reader); then whole checks of the map by its ruleset
    seed = (TEACHING / "teaching_map.yaml").read_bytes()
    for _ in data_files_loaded(tmp_path, mutations(seed, count(slow, 1500), 5), ".yaml"):
        pass
    root = tmp_path / "root"
    shutil.copytree(ROOT / "rulesets", root / "rulesets")
    shutil.copytree(ROOT / "schemas", root / "schemas")
    (root / "ruleval.toml").write_text("")
    target = root / "rulesets" / "diplomacy" / "teaching_map.yaml"
    for data in mutations(seed, count(slow, 15), 6):
        target.write_bytes(data)
        only_diagnostics(lambda: api.check_paths([str(root / "rulesets" / "diplomacy" / "teaching.rules")]))

"""``ruleval fmt``: idempotent, meaning-preserving, comment-preserving."""

from __future__ import annotations

import os
import random
import re
from pathlib import Path

import pytest

from validator.core.diagnostics import DiagnosticError
from validator.tools.fmt import format_text
from validator.lang.syntax import parse_module

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures"


def _all_rules() -> list[Path]:
    """Every ruleset that parses (fixtures with deliberate syntax errors are left out)."""
    found = []
    for p in sorted((ROOT / "rulesets").rglob("*.rules")) + sorted(FIXTURES.rglob("*.rules")):
        try:
            parse_module(p.read_text(encoding="utf-8"), str(p))
        except (DiagnosticError, UnicodeDecodeError):
            continue
        found.append(p)
    return found


def _comments(text: str) -> list[str]:
    # comments outside strings, in order (strings in these files never hold `#`... except raw ones; drop strings first)
    no_strings = re.sub(r'r?"(\\.|[^"\\\n])*"', '""', text)
    return [m.group(0).rstrip() for m in re.finditer(r"#[^\n]*", no_strings)]


@pytest.mark.parametrize("path", _all_rules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_ruleset_formats_idempotently_and_keeps_its_meaning(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    once = format_text(text, str(path))
    assert format_text(once, str(path)) == once
    assert parse_module(once, "x") == parse_module(text, "x")
    assert _comments(once) == _comments(text)
    assert all(line == line.rstrip() for line in once.splitlines())
    assert "\n\n\n" not in once


def test_messy_input_matches_golden() -> None:
    src = (FIXTURES / "fmt" / "messy.rules").read_text(encoding="utf-8")
    expected_path = FIXTURES / "fmt" / "messy.expected"
    got = format_text(src, "messy.rules")
    if os.environ.get("UPDATE_GOLDEN"):
        expected_path.write_text(got, encoding="utf-8")
    assert got == expected_path.read_text(encoding="utf-8")
    assert format_text(got) == got


MESSY = [
    "def   f(x,y)=x+y  # add\n\n\n\n# two\nconst c=-1\n",
    "query main={a:[1,2 ,3],b:{1=>2},c:{},d:r\"x\\d\"}\n",
    "table t[a]{\n|a|b|\n|1|-|\n|22|f(1,2)|\n}\n",
    "procedure p cite \"A\" {\nvar x=0\nstep s {\nif x>1{stop}elif x<0{ x:=1 }\nelse{reject \"no\" cite \"B\"}\n}\n}\n",
    "rule r(o) cite \"A\" =\n      let n = 1;\n   if n>0 then\n          n\n  else\n -n\n",
    "def g = fn(x)=>x*2\ndef h = [x for x in range(3) if x%2==0]\n",
]


@pytest.mark.parametrize("src", MESSY)
def test_hand_written_messy_inputs(src: str) -> None:
    once = format_text(src)
    assert format_text(once) == once
    assert parse_module(once, "x") == parse_module(src, "x")
    assert _comments(once) == _comments(src)


def test_grid_columns_are_aligned() -> None:
    once = format_text("table t[a, b] {\n|a|x|yy|\n|one|1|-|\n}\n")
    rows = [line for line in once.splitlines() if line.strip().startswith("|")]
    assert len({len(r) for r in rows}) == 1
    assert rows[1].strip() == "| one | 1 | -  |"


def test_random_whitespace_does_not_change_the_result() -> None:
    """Re-spacing a formatted file (spaces, blank lines, indentation) formats back to the same text."""
    rng = random.Random(7)
    for path in _all_rules():
        canonical = format_text(path.read_text(encoding="utf-8"))
        for _ in range(1):
            lines = []
            for line in canonical.splitlines():
                pad = " " * rng.randint(0, 6)
                body = line.strip() if '"' in line else re.sub(r"(?<=[,=+(]) ", lambda m: " " * rng.randint(1, 3), line.strip())
                lines.append(pad + body + " " * rng.randint(0, 2))
                if rng.random() < 0.1:
                    lines.append("")
            perturbed = "\n".join(lines) + "\n"
            assert parse_module(perturbed, "x") == parse_module(canonical, "x")
            again = format_text(perturbed)
            assert parse_module(again, "x") == parse_module(canonical, "x")
            assert format_text(again) == again


def test_syntax_error_is_a_diagnostic() -> None:
    with pytest.raises(DiagnosticError) as info:
        format_text("def f(x = \n")
    assert info.value.diagnostics[0].code.startswith("P")


def test_cli_check_write_and_diff(cli, tmp_path: Path) -> None:
    f = tmp_path / "a.rules"
    f.write_text("def   f(x)=x+1\n", encoding="utf-8")
    r = cli("fmt", "--check", str(f))
    assert r.code == 1 and "would reformat" in r.err
    r = cli("fmt", "--diff", str(f))
    assert r.code == 0 and "-def   f(x)=x+1" in r.out and "+def f(x) = x + 1" in r.out
    # an absolute path's headers as git writes them (they were `a//tmp/...`), a relative one's as written
    assert r.out.splitlines()[:2] == [f"--- a{f}", f"+++ b{f}"], r.out
    r = cli("fmt", str(f))
    assert r.out == "def f(x) = x + 1\n"
    assert f.read_text() == "def   f(x)=x+1\n"
    r = cli("fmt", "-w", str(f))
    assert r.code == 0 and f.read_text() == "def f(x) = x + 1\n"
    assert cli("fmt", "--check", str(f)).code == 0
    bad = tmp_path / "bad.rules"
    bad.write_text("def f(x) = \n", encoding="utf-8")
    r = cli("fmt", "--check", str(bad))
    assert r.code == 1 and "error[P" in r.err
    assert cli("fmt", str(tmp_path / "missing.rules")).code == 2


def test_a_file_that_does_not_parse_is_shown_with_its_line(cli, tmp_path: Path) -> None:
    """`fmt --check` on a file with a syntax error said `path:line:col: error[P001]` with no source line
    and caret under it, where `check` shows them: a CI log reader saw only the message."""
    (tmp_path / "ruleval.toml").write_text("")
    bad = tmp_path / "syn.rules"
    bad.write_text('ruleset t "t"\nconst a: int = 1 +\nrule b = a\n')
    r = cli("fmt", "--check", str(bad))
    assert r.code == 1 and f"{bad}:3:6: error[P001]" in r.err, r.err
    assert "   3 | rule b = a\n            ^\n" in r.err, r.err


def test_fmt_diff_headers_of_a_relative_path(cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.rules").write_text("def   f(x)=x+1\n", encoding="utf-8")
    for given in ("sub/a.rules", "./sub/a.rules"):
        r = cli("fmt", "--diff", given)
        assert r.out.splitlines()[:2] == [f"--- a/{given}", f"+++ b/{given}"], r.out


@pytest.mark.parametrize("flag", [[], ["--check"], ["-w"], ["--diff"]], ids=["print", "check", "write", "diff"])
def test_a_folder_without_a_ruleset_is_a_usage_error(cli, tmp_path: Path, flag: list[str]) -> None:
    """`fmt --check wrong/folder` said `0 files would be reformatted, 0 unchanged` and exited 0: a CI
    gate pointed at the wrong folder passed without looking at a file (as `check` refuses too)."""
    (tmp_path / "notes.txt").write_text("def   f(x)=x+1\n")
    r = cli("fmt", *flag, str(tmp_path))
    assert r.code == 2 and f"no ruleset (`.rules` file) found in {tmp_path}" in r.err, (r.code, r.err)


def test_bundled_rulesets_are_in_canonical_form(cli) -> None:
    result = cli("fmt", "--check", str(ROOT / "rulesets"), str(ROOT / "bench" / "peers" / "readings"))
    assert result.code == 0, result.out + result.err


def test_a_chain_too_deep_to_check_is_p006_for_fmt_too() -> None:
    """`1 + 1 + ... + 1` past the parser's depth limit: `check` says P006, `fmt` said I001 ("the formatted
    text does not parse: ... this is a bug in `ruleval fmt`") with exit 1."""
    with pytest.raises(DiagnosticError) as exc:
        format_text("query main = " + " + ".join(["1"] * 10_050) + "\n", "deep.rules")
    assert [d.code for d in exc.value.diagnostics] == ["P006"] and exc.value.diagnostics[0].span.line == 1

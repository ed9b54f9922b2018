"""Property tests: mutated rulesets and states never crash the CLI.

Every bundled ruleset under rulesets/ and every fixture is mutated (character edits, token shuffles,
truncation, deep nesting, huge literals, non-UTF-8 bytes) and checked: exit 0 or 1, stderr holds
`error[`/`warning[` diagnostics or nothing, never a traceback or I001. Mutated states against the
schema'd fixture exit 0 or 3 with a pointer. The formatter, given the mutated rulesets, gives
idempotent output or located diagnostics. RULEVAL_FUZZ_LONG=1 runs many more examples.

Hostile values (issue 24): rulesets spliced with control characters, byte order marks, surrogate
escapes, huge literals and long chains go through the API, which may raise only `DiagnosticError`
(`RunError` is one); state texts spliced with NaN, infinities, huge integers, surrogates and deep
nesting exit 0, 1 or 3 and never print invalid JSON or a raw control character; diagnostics of
any text render to one safe terminal text, one GitHub command each and parsable JUnit XML.
"""

from __future__ import annotations

import io
import json
import re
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from fuzzing import bounded
from hypothesis import given
from hypothesis import strategies as st

from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).resolve().parent / "fixtures"
SETTINGS = bounded(40, 2000)
TRIED = {"rulesets": 0, "states": 0, "formatted": 0}


def sources() -> list[Path]:
    files = sorted(ROOT.glob("rulesets/**/*.rules")) + sorted(FIXTURES.glob("**/*.rules"))
    return [f for f in files if f.stat().st_size < 200_000]


SOURCES = sources()
TEXTS = [f.read_bytes() for f in SOURCES]
TOKEN = re.compile(rb'"[^"\n]*"|[A-Za-z_][A-Za-z0-9_]*|\d+|\S')


@pytest.fixture(scope="module", autouse=True)
def report_count():
    yield
    print(f"\nfuzz: {TRIED['rulesets']} mutated rulesets checked, {TRIED['formatted']} formatted, "
          f"and {TRIED['states']} mutated states tried")


def run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    text = draw(st.sampled_from(TEXTS))
    kind = draw(st.sampled_from(["edit", "shuffle", "truncate", "nest", "huge", "bytes", "splice"]))
    if kind == "edit":
        for _ in range(draw(st.integers(1, 5))):
            pos = draw(st.integers(0, len(text)))
            op = draw(st.sampled_from(["insert", "delete", "replace"]))
            ch = draw(st.sampled_from(list(b'(){}[]|,:;=."-?#\\\n x1') + [0x27, 0x09]))
            if op == "insert":
                text = text[:pos] + bytes([ch]) + text[pos:]
            elif op == "delete":
                text = text[:pos] + text[pos + 1:]
            else:
                text = text[:pos] + bytes([ch]) + text[pos + 1:]
    elif kind == "shuffle":
        toks = TOKEN.findall(text)
        if len(toks) > 1:
            for _ in range(draw(st.integers(1, 4))):
                i, j = draw(st.integers(0, len(toks) - 1)), draw(st.integers(0, len(toks) - 1))
                toks[i], toks[j] = toks[j], toks[i]
        text = b" ".join(toks)
    elif kind == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif kind == "nest":
        depth = draw(st.integers(50, 400))
        opener = draw(st.sampled_from([b"(", b"[", b"{", b"-", b"not ", b"f("]))
        closer = {b"(": b")", b"[": b"]", b"{": b"}", b"-": b"", b"not ": b"", b"f(": b")"}[opener]
        text += b"\nquery deep = " + opener * depth + b"1" + closer * depth + b"\n"
    elif kind == "huge":
        lit = draw(st.sampled_from([b"9" * draw(st.integers(55, 5000)), b"999999d999999", b"1d0", b"0d6",
                                    b'"' + b"x" * 100_000 + b'"', b"r\"" + b"(" * 500 + b"\""]))
        text += b"\nquery huge = " + lit + b"\n"
    elif kind == "bytes":
        pos = draw(st.integers(0, len(text)))
        junk = draw(st.binary(min_size=1, max_size=8))
        text = text[:pos] + junk + text[pos:]
    else:
        other = draw(st.sampled_from(TEXTS))
        a, b = draw(st.integers(0, len(text))), draw(st.integers(0, len(other)))
        text = text[:a] + other[b:]
    return text


@pytest.mark.skipif(not TEXTS, reason="no rulesets to mutate")
@SETTINGS
@given(mutated())
def test_mutated_rulesets_never_crash(data: bytes) -> None:
    TRIED["rulesets"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ruleval.toml").write_text("")
        path = root / "mutant.rules"
        path.write_bytes(data)
        code, out, err = run(["check", str(path)])
    assert "Traceback" not in out + err and "I001" not in err, err
    assert code in (0, 1), err
    body = [ln for ln in err.splitlines() if not ln.startswith("checked ")]
    assert not body or re.match(r"\S.*: (error|warning)\[[PCW]\d{3}\]", body[0]), err


GOOD = json.loads((FIXTURES / "schema" / "good.json").read_text())
SCHEMA = json.loads((FIXTURES / "schema" / "state.schema.json").read_text())
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-10**30, 10**30), st.text(max_size=8),
                    st.floats(allow_nan=False, allow_infinity=False))
JSONS = st.recursive(SCALARS, lambda kids: st.one_of(st.lists(kids, max_size=4),
                                                    st.dictionaries(st.text(max_size=6), kids, max_size=4)),
                     max_leaves=12)


@st.composite
def mutated_state(draw: st.DrawFn) -> object:
    state = json.loads(json.dumps(GOOD))
    kind = draw(st.sampled_from(["type", "missing", "huge", "duplicate", "extra", "anything"]))
    if kind == "type":
        where = draw(st.sampled_from(["turn", "units", "unit", "owner", "location"]))
        value = draw(JSONS)
        if where in ("turn", "units"):
            state[where] = value
        elif where == "unit":
            state["units"][0] = value
        else:
            state["units"][1][where] = value
    elif kind == "missing":
        key = draw(st.sampled_from(["turn", "units", "owner", "location"]))
        (state if key in state else state["units"][0]).pop(key)
    elif kind == "huge":
        n = draw(st.integers(1001, 1050))
        state["units"] = [{"owner": "red", "location": f"{i % 10000:04d}"} for i in range(n)]
    elif kind == "duplicate":
        state["units"] = state["units"] * draw(st.integers(2, 5))
    elif kind == "extra":
        state[draw(st.text(min_size=1, max_size=5).filter(lambda k: k not in state))] = draw(JSONS)
    else:
        state = draw(JSONS)
    return state


@pytest.mark.slow
@SETTINGS
@given(mutated_state())
def test_mutated_states_exit_3_with_pointer(state: object) -> None:
    TRIED["states"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.json"
        path.write_text(json.dumps(state))
        code, out, err = run(["run", "--format", "json", str(FIXTURES / "schema" / "main.rules"), "--state", str(path)])
    assert "Traceback" not in out + err and "I001" not in err, err
    if jsonschema.Draft202012Validator(SCHEMA).is_valid(state):  # a mutation may still be valid (`units: []`)
        assert code == 0, (code, out, err)
        return
    assert code == 3, (code, out, err)
    diags = json.loads(out)
    assert diags and all(d["code"] == "S002" and "pointer" in d for d in diags)
    assert all(d["pointer"] == "" or d["pointer"].startswith("/") for d in diags)


@pytest.mark.skipif(not TEXTS, reason="no rulesets to mutate")
@SETTINGS
@given(mutated())
def test_mutated_rulesets_format_or_get_a_located_diagnostic(data: bytes) -> None:
    from validator.core.diagnostics import DiagnosticError
    from validator.tools.fmt import format_text

    TRIED["formatted"] += 1
    text = data.decode("utf-8", errors="replace")
    try:
        once = format_text(text, "mutant.rules")
    except DiagnosticError as err:
        assert err.diagnostics and all(d.code[0] in "PC" and d.span.line > 0 for d in err.diagnostics), err.diagnostics
        return
    assert format_text(once, "mutant.rules") == once


# ---------------------------------------------------------------- hostile values (issue 24)

HOSTILE = [b"\xef\xbb\xbf", b"\x1b[2J", b"\x1b]0;title\x07", b"\r", b"\x00", b"\x7f", "\u009b".encode(),
           "\u202e".encode(), "\ufffe".encode(), b'"\\ud800"', b'"\\udc00\\ud800"', b'"\\ud83d\\ude00"',
           b'"\\uFFFF\\u0001"', b"9" * 5000, b"-" + b"9" * 61, b"1e999", b"NaN", b"\xff\xfe", b"\xed\xa0\x80"]
CHAINS = [b"1" + b" + 1" * 600, b"not " * 700 + b"true", b"x" + b".a" * 600, b"if true then 1 else " * 300 + b"2"]


@st.composite
def hostile_ruleset(draw: st.DrawFn) -> bytes:
    """A bundled ruleset (or a mutant of one) with hostile bits spliced in, or a hostile query added."""
    text = draw(st.one_of(st.sampled_from(TEXTS), mutated()))
    for _ in range(draw(st.integers(1, 3))):
        bit = draw(st.sampled_from(HOSTILE + CHAINS))
        if draw(st.booleans()):
            pos = draw(st.integers(0, len(text)))
            text = text[:pos] + bit + text[pos:]
        else:
            text += b"\nquery hostile_" + str(len(text)).encode() + b" = " + bit + b"\n"
    if draw(st.booleans()):
        text = b"\xef\xbb\xbf" + text
    return text


# what must never reach a terminal or an XML document raw (stated here, apart from the code under test)
UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff\ufffe\uffff]")


def assert_safe_text(text: str) -> None:
    assert not UNSAFE.search(text), UNSAFE.findall(text)[:5]


@pytest.mark.skipif(not TEXTS, reason="no rulesets to mutate")
@bounded(120, 4000)
@given(hostile_ruleset())
def test_hostile_rulesets_raise_only_documented_errors(data: bytes) -> None:
    """The API on hostile rulesets: only DiagnosticError (or its RunError); whatever it reports renders
    to safe text, one GitHub command per diagnostic and valid JSON."""
    import validator
    from validator.core.diagnostics import render_all, to_json_text
    from validator.tools.report import render_check

    TRIED["hostile rulesets"] = TRIED.get("hostile rulesets", 0) + 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ruleval.toml").write_text("")
        path = root / "hostile.rules"
        path.write_bytes(data)
        rs = validator.load_ruleset(path, use_cache=False)
        for query in rs.queries()[:4] if rs.ok else []:
            try:
                rs.run({}, query=query, budget=20_000)
            except validator.DiagnosticError as err:
                assert err.diagnostics and all(d.code != "I001" for d in err.diagnostics)
        assert all(d.code != "I001" for d in rs.diagnostics)
        assert_safe_text(render_all(rs.diagnostics, rs.sources))
        json.loads(to_json_text(rs.diagnostics))
        github = render_check("github", rs.diagnostics, [rs.path])
        assert len(github.splitlines()) == len(rs.diagnostics)
        assert all(re.match(r"::(error|warning) file=[^,:]*,", ln) for ln in github.splitlines()), github


JSON_SPLICES = [b"NaN", b"Infinity", b"-Infinity", b"1e999", b"-1E400", b"9" * 4400, b"1" * 61, b'"\\ud800"',
                b'"\\udfff"', b'"\\ud83d\\ude00"', b'"\\\\ud800"', b'"\x1b[2J"', b'"\\u001b\\u202e"',
                b"[" * 120 + b"1" + b"]" * 120, b"[" * 2000, b"\xef\xbb\xbf", b"\xff", b'"\xc2\x9b"']


@st.composite
def hostile_state(draw: st.DrawFn) -> bytes:
    """JSON text of a random value with a hostile token put in place of a value, or anywhere."""
    text = json.dumps({"a": draw(JSONS)}).encode()
    for _ in range(draw(st.integers(1, 2))):
        bit = draw(st.sampled_from(JSON_SPLICES))
        spots = [m.end() for m in re.finditer(rb"[:\[,] ?", text)]
        pos = draw(st.sampled_from(spots)) if spots and draw(st.booleans()) else draw(st.integers(0, len(text)))
        text = text[:pos] + bit + text[pos:]
    return text


def strict_json(text: str) -> object:
    def refuse(name: str) -> object:
        raise AssertionError(f"{name} in JSON output")

    return json.loads(text, parse_constant=refuse)


ECHO_RULES = 'input a: any at "/a" default none\nquery main = a\n'


@bounded(150, 5000)
@given(hostile_state(), st.sampled_from(["json", "text"]))
def test_hostile_states_exit_0_or_3_and_print_only_valid_json(data: bytes, fmt: str) -> None:
    TRIED["states"] += 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "ruleval.toml").write_text("")
        (root / "echo.rules").write_text(ECHO_RULES)
        (root / "state.json").write_bytes(data)
        code, out, err = run(["run", str(root / "echo.rules"), "--state", str(root / "state.json"), "--format", fmt])
    assert "Traceback" not in out + err and "I001" not in out + err, err
    assert code in (0, 3), (code, out, err)
    if code == 3:
        assert re.search(r'error\[S00[13]\]|"code": "S00[13]"', err + out), err
    elif fmt == "json":
        strict_json(out)
    assert_safe_text(err)
    if fmt == "text":
        assert_safe_text(out)


ANY_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=30)


@bounded(300, 10000)
@given(ANY_TEXT, ANY_TEXT, ANY_TEXT, st.integers(0, 3))
def test_diagnostics_of_any_text_render_safely(path: str, message: str, note: str, line: int) -> None:
    """Paths, messages and help of any characters (surrogates, controls, XML's forbidden ones): one
    safe terminal text, one GitHub command per diagnostic with exactly its own properties, JUnit XML
    that parses, JSON that parses."""
    from validator.core.diagnostics import Diagnostic, Span, render_all, to_json_text
    from validator.tools.report import render_check

    diags = [Diagnostic("C001", message, Span(path, line, 1, line, 2), help=note),
             Diagnostic("W101", note, Span(path), pointer=message)]
    assert_safe_text(render_all(diags, {path: f"{message}\n{note}\n{path}\n"}))
    lines = render_check("github", diags, [path]).splitlines()
    assert len(lines) == 2
    for ln, want in zip(lines, (("error", 6 if line else 2), ("warning", 2))):
        m = re.fullmatch(r"::(error|warning) ([^:]*)::(.*)", ln)
        assert m and m.group(1) == want[0] and len(m.group(2).split(",")) == want[1], ln
    ET.fromstring(render_check("junit", diags, [path]))
    json.loads(to_json_text(diags))

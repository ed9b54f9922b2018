"""The fast LALR driver (validator/lalr.py) against Lark's own parser, on the same grammar.

The driver is an optimisation: every text it accepts must give the same AST, positions
included, as Lark's parser plus the same builder; where it gives up, `parse_module` falls back
on Lark and must give Lark's result or error. Checked on every ruleset of the
repository, on a fixture that uses every construct of the grammar (and the test checks that
the corpus uses every rule of the grammar), and on mutated rulesets.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest
from fuzzing import bounded
from hypothesis import example, given
from hypothesis import strategies as st
from test_fuzz import TEXTS, mutated

from validator.lang import ast as A
from validator.lang import syntax
from validator.core.diagnostics import DiagnosticError
from validator.lang.lalr import Mismatch

ROOT = Path(__file__).resolve().parent.parent
CORPUS = sorted(ROOT.glob("rulesets/**/*.rules")) + sorted((ROOT / "tests" / "fixtures").rglob("*.rules"))
TRIED = {"mutants": 0, "fast path gave up": 0, "read in pieces by Lark": 0}


def dump(node: Any) -> Any:
    """The whole AST as nested tuples, spans included (AST equality leaves spans out)."""
    if isinstance(node, A.Node):
        return (type(node).__name__,) + tuple((f, dump(getattr(node, f))) for f in node._fields)
    if dataclasses.is_dataclass(node) and not isinstance(node, type):  # (a span)
        return (type(node).__name__,) + tuple((f.name, dump(getattr(node, f.name))) for f in dataclasses.fields(node))
    if isinstance(node, (list, tuple)):
        return tuple(dump(x) for x in node)
    return node


def both(text: str) -> tuple[Any, Any]:
    """(fast, reference): each a dump of the AST, or "rejected"."""
    try:
        fast = dump(syntax.parse_module_fast(text, "t.rules"))
    except (Mismatch, DiagnosticError):
        fast = "rejected"
    try:
        ref = dump(syntax.parse_module_with_lark(text, "t.rules"))
    except DiagnosticError:
        ref = "rejected"
    return fast, ref


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: str(p.relative_to(ROOT)))
def test_same_ast_and_positions_as_lark(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    fast, ref = both(text)
    assert fast == ref
    if ref != "rejected":
        assert dump(syntax.parse_module(text, "t.rules")) == ref


@pytest.mark.parametrize("text, where, hint", [
    ("querymain = 1\n", (1, 1, 1, 10), "did you mean `query main`?"),
    ("enum E { a }\ndefx = 2\n", (2, 1, 2, 5), "did you mean `def x`?"),
])
def test_words_are_read_whole(text: str, where: tuple[int, int, int, int], hint: str) -> None:
    with pytest.raises(Mismatch):
        syntax.parse_module_fast(text, "t.rules")
    syntax.parse_module_with_lark(text, "t.rules")  # Lark alone reads the word in two
    with pytest.raises(DiagnosticError) as err:
        syntax.parse_module(text, "t.rules")
    (d,) = err.value.diagnostics
    assert d.code == "P001" and (d.span.line, d.span.col, d.span.end_line, d.span.end_col) == where
    assert d.help is not None and hint in d.help


def test_the_corpus_uses_every_rule_of_the_grammar() -> None:
    driver = syntax.driver()
    seen: set[int] = set()

    class Counting(dict):  # type: ignore[type-arg]
        """A state's row of the table, noting each rule it tells the driver to reduce by."""

        def get(self, key: Any, default: Any = None) -> Any:
            action = dict.get(self, key, default)
            if action is not None and action < 0:
                seen.add(-1 - action)
            return action

    original = driver.table
    driver.table = [Counting(row) for row in original]
    driver.folds.clear()  # (a chain of folds found before is not looked up in the table again)
    try:
        for path in CORPUS:
            try:
                syntax.parse_module_fast(path.read_text(encoding="utf-8"), "t.rules")
            except (Mismatch, DiagnosticError):
                pass
    finally:
        driver.table = original
    # Lark expands each `[optional]` part into two alternatives, so one rule has many variants;
    # every rule (each `-> alias` counted apart) must be exercised in at least one of them.
    used = {driver.rules[i][5] for i in seen}
    missing = sorted({r[5] for r in driver.rules} - used)
    assert not missing, f"no ruleset in the corpus uses these grammar rules: {missing}"


def test_syntax_errors_come_from_lark_with_their_location() -> None:
    text = (ROOT / "tests" / "fixtures" / "syntax_token.rules").read_text(encoding="utf-8")
    with pytest.raises(Mismatch):
        syntax.parse_module_fast(text, "t.rules")
    with pytest.raises(DiagnosticError) as fast_path:
        syntax.parse_module(text, "t.rules")
    with pytest.raises(DiagnosticError) as reference:
        syntax.parse_module_with_lark(text, "t.rules")
    assert fast_path.value.diagnostics == reference.value.diagnostics
    assert fast_path.value.diagnostics[0].span.line > 0


def test_a_literal_error_is_reported_after_syntax_errors_as_lark_does() -> None:
    # the builder rejects the literal while the fast path runs; Lark would first find the syntax error
    text = "query a = " + "9" * 80 + "\nquery b = )\n"
    with pytest.raises(DiagnosticError) as err:
        syntax.parse_module(text, "t.rules")
    assert err.value.diagnostics[0].code.startswith("P")


def test_tables_survive_a_corrupt_cache_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("RULEVAL_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("RULEVAL_NO_CACHE", "1")  # (the tables are kept even so: they depend on ruleval alone)
    syntax.driver.cache_clear()
    try:
        syntax.driver()
        (file,) = (tmp_path / "parser").iterdir()
        file.write_bytes(file.read_bytes()[:100])
        syntax.driver.cache_clear()
        text = (ROOT / "rulesets" / "his" / "his.rules").read_text(encoding="utf-8")
        fast, ref = both(text)
        assert fast == ref != "rejected"
    finally:
        syntax.driver.cache_clear()


def test_tables_someone_else_wrote_are_not_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry of well-formed tables whose whitespace pattern was changed, with the signature it had: rebuilt."""
    import marshal

    monkeypatch.setenv("RULEVAL_CACHE_DIR", str(tmp_path))
    syntax.driver.cache_clear()
    try:
        built = syntax.driver()
        (file,) = (tmp_path / "parser").iterdir()
        data = file.read_bytes()
        tables = marshal.loads(data[32:])
        tables["terminals"] = [[n, "(?:a|a)*b" if n in tables["ignore"] else rx] for n, rx in tables["terminals"]]
        file.write_bytes(data[:32] + marshal.dumps(tables))
        syntax.driver.cache_clear()
        again = syntax.driver()
        assert again is not built and again.trailing.pattern == built.trailing.pattern
        syntax.driver.cache_clear()
        file.write_bytes(data)  # (the entry as written: used)
        assert syntax.driver().trailing.pattern == built.trailing.pattern
    finally:
        syntax.driver.cache_clear()


@pytest.fixture(scope="module", autouse=True)
def report_count():
    yield
    print(f"\nfast parser: {TRIED['mutants']} mutated rulesets compared with Lark; "
          f"the fast path gave up on {TRIED['fast path gave up']}, "
          f"of which Lark read {TRIED['read in pieces by Lark']} only by splitting a word")


@pytest.mark.skipif(not TEXTS, reason="no rulesets to mutate")
@bounded(60, 3000)
@given(mutated())
def test_mutated_rulesets_parse_alike(data: bytes) -> None:
    TRIED["mutants"] += 1
    text = data.decode("utf-8", errors="replace")
    if syntax._nesting_depth(text)[0] > syntax.MAX_NESTING:
        return  # refused before either parser runs
    fast, ref = both(text)
    try:
        combined: Any = dump(syntax.parse_module(text, "t.rules"))
    except DiagnosticError as err:
        combined = err.diagnostics
    if fast == "rejected":
        TRIED["fast path gave up"] += 1
        if ref != "rejected":
            # Lark accepted it by reading a word or symbol in pieces (its contextual lexer reads
            # `querymain = 1` as `query main = 1` where no name may stand); ruleval refuses that
            TRIED["read in pieces by Lark"] += 1
            assert [d.code for d in combined] == ["P001"] and "unexpected" in combined[0].message
        else:
            with pytest.raises(DiagnosticError) as reference:
                syntax.parse_module_with_lark(text, "t.rules")
            assert combined == reference.value.diagnostics
    else:
        assert fast == ref == combined


@pytest.mark.parametrize("text", [
    "query a = 1 # a comment at the very end",
    "query a = 1\n# a comment on the last line\n",
    "query a = 1 # then a bad character\n$",
    "query a = \"# not a comment\" # a comment\n",
    "   \n\n  ",
    "",
])
def test_ignored_text_at_the_edges(text: str) -> None:
    fast, ref = both(text)
    assert fast == ref


@given(st.text(alphabet=st.characters(blacklist_characters='"\\\n', blacklist_categories=()), max_size=12))
@example("a\rb").via("a carriage return")
@example("\x00").via("a NUL")
@example("\ud83d\ude00").via("a pair of surrogates")
@example("caf\u00e9 \u2028 \t").via("characters Python keeps as written")
@bounded(300)
def test_a_string_without_escapes_reads_as_python_reads_it(body: str) -> None:
    """A string literal with no backslash is read as its text (``syntax._PLAIN_STRING``), without
    Python's ``literal_eval``: the same value, and the same refusal where Python refuses it (a
    carriage return, a NUL, a lone surrogate)."""
    import ast

    text = f'"{body}"'
    try:
        want: Any = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        want = DiagnosticError
    try:
        got: Any = syntax._unquote(text, lambda tok: syntax.Span("x"))
    except DiagnosticError:
        got = DiagnosticError
    assert got == want


# ---------------------------------------------------------------- a token matched against the terminals it may start with


def _tokens(text: str, next_token: Any) -> list[tuple[str, int, int]] | int:
    """The tokens read one after another by ``next_token(text, pos)`` (a match whose last group is the
    terminal, followed by ignored text), or the offset where none could be read."""
    driver = syntax.driver()
    pos = driver.trailing.match(text).end()
    found = []
    while pos < len(text):
        m = next_token(text, pos)
        if m is None:
            return pos
        found.append((m.lastgroup, pos, m.end(m.lastgroup)))
        pos = m.end()
    return found


def _one_alternation() -> Any:
    """Every terminal in one pattern, tried in Lark's order at every character (what the driver did before)."""
    driver = syntax.driver()
    return __import__("re").compile("(?:" + "|".join(f"(?P<{n}>{rx})" for n, rx in driver.terminals) + ")"
                                    + driver.skipping).match


def _by_first_character(text: str, pos: int) -> Any:
    driver = syntax.driver()
    return (driver.lexers.get(text[pos]) or driver._lexer(text[pos]))(text, pos)


@pytest.mark.parametrize("path", CORPUS[:12], ids=lambda p: str(p.relative_to(ROOT)))
def test_a_token_is_read_alike_by_its_first_character_and_by_every_terminal(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert _tokens(text, _by_first_character) == _tokens(text, _one_alternation())


@bounded(300)
@given(st.text(st.sampled_from('ab r"\\\n\t#0123456789d_=<>!:?/.,-+*%|;()[]{}é→\x00\r\x0c'), max_size=40))
def test_any_text_is_read_alike_by_first_character_and_by_every_terminal(text: str) -> None:
    assert _tokens(text, _by_first_character) == _tokens(text, _one_alternation())


@pytest.mark.parametrize("regexp, starts", [
    ("ab", ["a", False]), ("a*b", ["ab", False]), ("(?:x|y?)z", ["xyz", False]), ("[0-9]+d", ["0123456789", False]),
    ("é", ["", True]), ("[a-\u0100]", ["".join(map(chr, range(97, 128))), True]), ("a*", None), ("", None),
    ("\\w+", None), ('[^"]', None), ("(?i:a)", None), ("(?i)a", None), ("(?=a)a", None), (".", None),
])
def test_what_a_terminal_may_start_with(regexp: str, starts: Any) -> None:
    from validator.lang.lalr import _starts

    assert _starts(regexp) == starts


def test_every_terminal_starts_only_with_what_its_reading_says() -> None:
    """Each terminal of the grammar, tried at every character of a few texts: where it matches, the
    character is one its reading of the pattern allows."""
    import re

    driver = syntax.driver()
    texts = [chr(c) + tail for c in range(0, 300) for tail in ("", "a", "1", "d1", '"', "x\"", "=", ">")]
    for name, rx in syntax.lalr.tables_from_lark(syntax.parser())["terminals"]:
        starts = driver.starts[name]
        for t in texts:
            if starts is not None and re.match(rx, t):
                assert (t[0] in starts[0]) if t[0] < "\x80" else starts[1], (name, t)


@pytest.mark.parametrize("text", ["query main = 1 + @", "query main = f(1, 2) @", "  @", "query x = [1,\n 2] # c\n @ y",
                                  "def f(a) = a * (b - 2) ¤"])
def test_where_no_token_can_be_read_the_driver_gives_up_at_the_end_of_the_last_token(text: str) -> None:
    read = _tokens(text, _one_alternation())
    assert isinstance(read, int)  # (no terminal can be read there)
    with pytest.raises(Mismatch) as gave_up:
        syntax.driver().parse(text, syntax._Builder("t.rules", text))
    before = [end for _, _, end in _tokens(text[:read], _one_alternation())]  # type: ignore[union-attr]
    assert gave_up.value.start == (before[-1] if before else 0)


def test_the_lexers_kept_are_of_ascii_first_characters_alone() -> None:
    """A token starting with a character past ASCII is read by the terminals any such character may start,
    the same for all of them: meeting thousands of distinct ones keeps no lexer beyond the 128 ASCII ones."""
    driver = syntax.driver()
    others = [chr(c) for c in range(0x4E00, 0x4E00 + 3000)] + ["\xe9", "\U0001F600"]
    lexers = {driver._lexer(c) for c in others}
    assert len(lexers) == 1 and all(c < "\x80" for c in driver.lexers)
    assert driver._lexer("a") is driver.lexers["a"]


def _depth_per_character(text: str) -> tuple[int, int]:
    """The bracket nesting of ``text`` read one character at a time, as the language defines it: a
    `"` opens a string to its closing `"` or the line's end (a backslash takes the next character
    of the line with it), a `#` a comment to the line's end; the depth and where it is first reached."""
    depth = best = pos = i = 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i += 1
            while i < len(text) and text[i] not in '"\n':
                i += 2 if text[i] == "\\" and i + 1 < len(text) and text[i + 1] != "\n" else 1
            i += 1 if i < len(text) and text[i] == '"' else 0
            continue
        if ch == "#":
            while i < len(text) and text[i] != "\n":
                i += 1
            continue
        if ch in "([{":
            depth += 1
            if depth > best:
                best, pos = depth, i
        elif ch in ")]}":
            depth -= 1
        i += 1
    return best, pos


@bounded(300, 3000)
@given(st.lists(st.sampled_from(['(', ')', '[', ']', '{', '}', '"', '\\', '#', '\n', 'x', ' ']), max_size=60),
       st.integers(0, 2))
@example(list('"(\\"(#(\n(('), 0)
def test_the_nesting_depth_is_read_as_one_character_at_a_time(chars: list[str], deeper: int) -> None:
    """`_nesting_depth` (one pattern's scan of the brackets, strings and comments) against a plain
    reading, with an opening prefix up to past the limit: the depth, and where it is first reached."""
    text = "(" * (syntax.MAX_NESTING - 1 + deeper) + "".join(chars) if deeper else "".join(chars)
    assert syntax._nesting_depth(text) == _depth_per_character(text)

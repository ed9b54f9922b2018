"""The pattern built-ins and the text built-ins an order text is read with (`match_first`, `casefold`,
`replace`, `fold`), held to their definitions in docs/language.md, written here the plain way:
`match_first(text, patterns[, flags])` is the first of the patterns that `match`es the whole text, as
`{index, groups}` (its groups those `match` gives), or none; its steps are those of reading the text, of
compiling every pattern (each one's ``Pattern.cost``) and of the one that matched, compiled alone, as
`match` charges it. The built-ins run both engines, so the differential tests cannot see them."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from validator.engine.reference import Run
from validator.lib import patterns as P
from validator.lib.builtins import BUILTINS, CallError
from validator.lib.runtime import SeededDice

match = BUILTINS["match"].fn
match_first = BUILTINS["match_first"].fn
casefold = BUILTINS["casefold"].fn
replace = BUILTINS["replace"].fn
fold = BUILTINS["fold"].fn


def ctx(budget: int = 10**9) -> Run:
    return Run(None, SeededDice(0), budget)


def plain_match_first(text: str, patterns: list[str], flags: str = "") -> tuple[Any, int]:
    """The definition: each pattern tried alone, in order; and the steps it is charged."""
    steps = len(text) + 1 + sum(P.compiled(p, flags == "i").cost for p in patterns)
    for i, p in enumerate(patterns):
        groups = match(ctx(), text, p, flags)
        if groups is not None:
            return {"index": i, "groups": groups}, steps + P.compiled(p, flags == "i").cost
    return None, steps


# pieces of patterns that share group names (as a ruleset's forms do), lazy and greedy, anchored or not
PIECES = ["x", "y", "x*", "y+?", "[xy]", "(?P<a>x+)", "(?P<a>x+?)", "(?P<b>y|xy)?", "(?:x|yy)*", "\\s+",
          "(?P<c>[a-z\\x{80}-\\x{10FFFF}]+)", "é", "^", "$", "(?P<a>[xy ]*?)(?P<b>y*)", "(?i:X)"]
pattern = st.lists(st.sampled_from(PIECES), min_size=1, max_size=5).map("".join)
text = st.text(alphabet="xyXY éÉ\u0301a", max_size=8)


@settings(max_examples=400, deadline=None)
@given(text, st.lists(pattern, min_size=1, max_size=5), st.sampled_from(["", "i"]))
def test_match_first_is_the_first_pattern_that_matches(t: str, patterns: list[str], flags: str) -> None:
    expected, steps = plain_match_first(t, patterns, flags)
    for _ in range(2):  # compiled (the set made), then kept (the set found again)
        c = ctx()
        assert match_first(c, t, patterns, flags) == expected
        assert c.steps == steps


def test_match_first_of_the_order_forms_reads_as_each_form_alone() -> None:
    # the standard rules' forms share group names and overlap (a support of a hold is a prefix of a
    # support of a move): the first that reads the whole text wins, its groups its own
    forms = [r"^(?P<u>[a-z]+)\s+s\s+(?P<f>[a-z]+)\s*-\s*(?P<to>[a-z]+)$", r"^(?P<u>[a-z]+)\s+s\s+(?P<f>[a-z -]+?)$",
             r"^(?P<u>[a-z]+)(?:\s*-\s*[a-z]+)*?\s*-\s*(?P<to>[a-z]+)$"]
    for t in ["mun s sil - boh", "mun s sil", "mun - boh", "lon - nth - nwy", "mun s sil-boh", "x"]:
        assert match_first(ctx(), t, forms) == plain_match_first(t, forms)[0]


@pytest.mark.parametrize("patterns, flags, message", [
    ("x", "", "needs a list of patterns"),
    (["x", 1], "", "needs a list of patterns"),
    ([["x"]], "", "needs a list of patterns"),  # (an item that cannot be hashed)
    ({"x": 1}, "", "needs a list of patterns"),
    (["x", 1], "z", "needs a list of patterns"),  # (the patterns asked before the flags)
    (["x"], "z", "pattern flags"),
    ([], "z", "pattern flags"),
    (["x"], 1, "pattern flags"),
    (["x", "("], "", "invalid pattern"),
])
def test_match_first_refuses_what_it_cannot_read(patterns: Any, flags: Any, message: str) -> None:
    for _ in range(2):  # (and the same after the good patterns among them are kept)
        with pytest.raises(CallError, match=message):
            match_first(ctx(), "x", patterns, flags)
        match_first(ctx(), "x", ["x"], "")


def test_match_first_of_no_pattern_is_none() -> None:
    c = ctx()
    assert match_first(c, "x", []) is None and c.steps == 2


def test_match_first_past_the_budget() -> None:
    forms = ["a+", "(?P<b>b)+"]
    _, steps = plain_match_first("bb", forms)
    for budget in range(steps - 3, steps + 1):
        for _ in range(2):
            if budget < steps:
                with pytest.raises(CallError, match="exceeds the evaluation budget"):
                    match_first(ctx(budget), "bb", forms)
            else:
                assert match_first(ctx(budget), "bb", forms) == {"index": 1, "groups": {"b": "b"}}


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12) | st.text(alphabet="AbÉé\u0301ßİ ", max_size=8))
def test_casefold_is_nfc_case_folded(t: str) -> None:
    c = ctx()
    assert casefold(c, t) == unicodedata.normalize("NFC", unicodedata.normalize("NFC", t).casefold())
    assert c.steps == len(t)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="ab-", max_size=10), st.text(alphabet="ab-", max_size=3), st.text(alphabet="ab-", max_size=3))
def test_replace_charges_the_length_it_builds(t: str, old: str, new: str) -> None:
    c = ctx()
    assert replace(c, t, old, new) == t.replace(old, new)
    n = t.count(old) if old else len(t) + 1
    assert c.steps == len(t) + n * max(0, len(new) - len(old))
    with pytest.raises(CallError, match="replace exceeds"):
        replace(ctx(c.steps - 1), t, old, new)


def test_fold_asks_its_function_only_when_there_is_an_item() -> None:
    assert fold(ctx(), [], 7, "no function") == 7
    with pytest.raises(CallError, match="is not a function"):
        fold(ctx(), [1], 7, "no function")
    assert fold(ctx(), ["a", "b"], "", lambda c, acc, x: acc + x) == "ab"


def _outcome(f: Any, budget: int, *args: Any) -> tuple[Any, int]:
    c = ctx(budget)
    try:
        return f(c, *args), c.steps
    except CallError as err:
        return str(err), c.steps


@pytest.mark.parametrize("t, patterns", [("bb", ["a+", "(?P<b>b)+"]), ("x", ["(", "x"]), ("no", ["y"]), ("x" * 20, ["x*"]),
                                         ("a par - bur", ["(?P<u>[a-z ]+) h", "(?P<u>.+?) - (?P<to>.+)"])])
def test_the_common_form_reads_as_the_general_one(t: str, patterns: list[str], monkeypatch: Any) -> None:
    """`match` of a text by a text and `match_first` of a list of texts, with no flags, are answered at
    once when all they charge fits the budget (``_kept_pattern``, the list's set): under every budget,
    the value or the error, and the steps, of the general way (a tuple of patterns; a pattern not kept)."""
    match(ctx(), "", "x")  # (the patterns' module imported: the common form is asked from then on)
    for read, common, general in ((match_first, list(patterns), tuple(patterns)), (match, patterns[-1], patterns[-1])):
        full = _outcome(read, 10**9, t, general)[1]  # (the steps of a finished read, or where it stopped)
        said = {budget: _outcome(read, budget, t, common) for budget in range(full + 2)}
        with monkeypatch.context() as m:
            m.setattr("validator.lib.builtins._kept_pattern", lambda pattern: None)
            assert said == {budget: _outcome(read, budget, t, general) for budget in range(full + 2)}, read
        assert said[full + 1][1] == full  # (the sweep reaches the read's end)

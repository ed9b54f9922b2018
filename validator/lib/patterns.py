"""Regular expressions, in linear time: every pattern a ruleset or a state schema gives is run by
RE2 (the `google-re2` package), which never backtracks, so no pattern can hang a run however it is
written (`(a+)+` against a long text included). RE2 has no back-references or look-around; a
pattern that uses them is refused where it is written (C014 in a ruleset, C015 in a schema).

This module is the one place that compiles a pattern: ``compiled(pattern, ignore_case, whole)``.
"""

from __future__ import annotations

import functools
from typing import Any

import re2
from re2 import _re2

# the memory RE2 may use for one pattern's automata: a pattern that needs more is refused (a pattern's
# matching automaton, grown as texts are matched, stays within it: RE2 falls back to a slower linear
# matcher); with the number of patterns kept compiled, this bounds the memory patterns may hold
MAX_PATTERN_MEMORY = 4 << 20
MAX_PATTERN_LENGTH = 10_000
KEPT_PATTERNS = 64  # patterns kept compiled (the most recently used), and as many sets of patterns


class PatternError(Exception):
    """A pattern RE2 cannot take; the message says why."""


def _options(ignore_case: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # RE2 would print the error on the standard error stream
    options.max_mem = MAX_PATTERN_MEMORY
    options.case_sensitive = not ignore_case
    return options


def _message(exc: Exception) -> str:
    text = exc.args[0] if exc.args else str(exc)
    return text.decode("utf-8", "replace") if isinstance(text, bytes) else str(text)


_ANCHOR = _re2.RE2.Anchor


class Pattern:
    """A compiled pattern, asked through RE2's own matcher (the `re2` module's wrapper of it spends
    ten times as long converting offsets): ``fullmatch`` and ``search`` give the named groups (a
    group that took no part is none), or None when the pattern does not match."""

    __slots__ = ("raw", "names", "cost")

    def __init__(self, wrapped: Any, pattern: str):
        self.raw = wrapped._regexp
        self.names = [(name.decode("utf-8"), index) for name, index in self.raw.NamedCapturingGroups()]
        # what compiling it takes, in steps of a run: its length read, its program (and the reverse
        # program RE2 may make) built; a run pays it at each use, so that its count does not depend on
        # which patterns an earlier run left compiled
        self.cost = len(pattern) + 2 * self.raw.ProgramSize()

    def fullmatch(self, text: str) -> dict[str, str | None] | None:
        return self._groups(_ANCHOR.ANCHOR_BOTH, text)

    def search(self, text: str) -> dict[str, str | None] | None:
        return self._groups(_ANCHOR.UNANCHORED, text)

    def _groups(self, anchor: Any, text: str) -> dict[str, str | None] | None:
        data = text.encode("utf-8")
        spans = self.raw.Match(anchor, data, 0, len(data))
        if spans[0][0] < 0:
            return None
        if len(data) == len(text):  # ASCII: byte offsets are character offsets
            return {name: (text[spans[i][0]:spans[i][1]] if spans[i][0] >= 0 else None) for name, i in self.names}
        return {name: (data[spans[i][0]:spans[i][1]].decode("utf-8") if spans[i][0] >= 0 else None)
                for name, i in self.names}


@functools.lru_cache(maxsize=KEPT_PATTERNS)
def compiled(pattern: str, ignore_case: bool = False) -> Pattern:
    """The compiled pattern; raises ``PatternError``."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(f"a pattern of {len(pattern)} characters is longer than {MAX_PATTERN_LENGTH}")
    try:
        return Pattern(re2.compile(pattern, _options(ignore_case)), pattern)
    except re2.error as exc:
        raise PatternError(_message(exc)) from None
    except (TypeError, ValueError) as exc:
        raise PatternError(str(exc)) from None


@functools.lru_cache(maxsize=KEPT_PATTERNS)
def compiled_set(patterns: tuple[str, ...], ignore_case: bool = False) -> Any:
    """The patterns as one RE2 set that tells, in one pass over a text, which of them match it whole,
    what compiling them takes (the sum of their ``Pattern.cost``), and each compiled (``compiled``)."""
    each = tuple(compiled(p, ignore_case) for p in patterns)  # (and the errors of each, as for one pattern)
    cost = sum(p.cost for p in each)
    found = re2.Set.FullMatchSet(_options(ignore_case))
    try:
        for p in patterns:
            found.Add(p)
        found.Compile()
    except re2.error as exc:
        raise PatternError(_message(exc)) from None
    return found._set, cost, each  # (RE2's own set: its Match takes the text's bytes and gives the indices)


def check(pattern: str) -> str | None:
    """Why a pattern cannot be used, or None."""
    try:
        compiled(pattern)
    except PatternError as exc:
        return str(exc)
    return None

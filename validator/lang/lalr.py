"""A lean LALR(1) driver over the parse table that Lark builds from `grammar/ruleval.lark`.

Why: Lark's general machinery (a Tree per reduction, position propagation, then a separate
transform pass) took most of a cold `ruleval check`. This driver runs the *same* table with
the same contextual-lexing rule and the same child-filtering rules, and calls the AST builder
directly, so the grammar file stays the one definition of the language.

Where it cannot lex or parse, it raises `Mismatch` and the caller re-parses with Lark, which
gives the located diagnostic. Text that Lark accepts only by reading a word in pieces (its
contextual lexer takes `querymain` as `query main` where no name may stand) is refused by the
caller: words are read whole. `tests/test_fast_parser.py` holds the two paths to the same AST,
positions included, on every bundled ruleset and on mutated ones.

How the builder is called: for each reduction whose rule is not folded away, the driver sets
``builder.start_pos`` / ``builder.end_pos`` (character offsets of the text the rule consumed,
or None when it consumed nothing) and calls ``builder.<alias or rule name>(children)`` with
the children Lark would pass to an inline transformer (anonymous tokens filtered out, `None`
for absent `[optional]` parts, `_`-rules spliced in, `?`-rules with one child folded).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lark import Lark


class Mismatch(Exception):
    """The fast path cannot handle this text; parse it with Lark instead. Where a token was read
    but does not fit, ``start``/``end`` are its offsets and ``expected`` the terminals that would."""

    def __init__(self, start: int, end: int | None = None, expected: frozenset[str] = frozenset()):
        super().__init__(start)
        self.start = start
        self.end = start if end is None else end
        self.expected = expected


class Tok(str):
    """A kept token: its text, its terminal's name and its character offsets (as Lark's Token)."""

    type: str
    start_pos: int
    end_pos: int


# Rule kinds
_FOLD = 0       # `?rule` with exactly one kept symbol: the child is the result; nothing is called
_SPLICE = 1     # `_rule`: its children are spliced into the parent's
_BUILD = 2      # call the builder
_FOLD_ONE = 3   # call the builder unless exactly one child survives filtering (`?` without alias)


def tables_from_lark(lark: "Lark", identity_on_one: frozenset[str] = frozenset()) -> dict[str, Any]:
    """What the driver needs of a Lark LALR parser, as plain data (texts, numbers, lists, mappings: kept
    on disk by `validator.syntax`, so that a start-up needs neither Lark nor its grammar analysis).

    ``identity_on_one``: builder methods that return their only child unchanged when given one
    child, so that the driver may skip the call (an optimisation; results are the same)."""
    from lark.parsers.lalr_analysis import Shift

    table = lark.parser.parser.parser.parse_table  # type: ignore[attr-defined]
    rule_ids: dict[int, int] = {}
    rules: list[Any] = []
    rows: list[dict[str, int]] = []
    for s in range(len(table.states)):
        row: dict[str, int] = {}
        for key, (action, arg) in table.states[s].items():
            if action is Shift:
                row[key] = arg
            else:
                rid = rule_ids.get(id(arg))
                if rid is None:
                    rid = rule_ids[id(arg)] = len(rules)
                    rules.append(arg)
                row[key] = -1 - rid
        rows.append(row)
    terminals, keywords = _terminals(lark)
    from lark.lexer import PatternStr

    literals = {t.name: t.pattern.value for t in lark.terminals if isinstance(t.pattern, PatternStr)}
    kept = sorted({r.expansion[i].name for r in rules for i in range(len(r.expansion))
                   if r.expansion[i].is_term and (r.options.keep_all_tokens or not r.expansion[i].filter_out)})
    return _plain({
        "start": table.start_states["start"],
        "end": table.end_states["start"],
        "table": rows,
        "rules": [_rule_info(r, identity_on_one) for r in rules],
        "terminals": terminals,
        "keywords": keywords,
        "ignore": sorted(lark.lexer_conf.ignore),
        "kept": kept,
        "literals": literals,
        "starts": {name: _starts(rx) for name, rx in terminals},
    })


def _plain(x: Any) -> Any:
    """``x`` with Lark's own kinds of text (a rule's name is a ``Token``) as plain texts: the tables are
    kept as ``marshal`` data, which knows no other class."""
    if isinstance(x, str):
        return str(x)
    if isinstance(x, dict):
        return {_plain(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def _rule_info(rule: Any, identity_on_one: frozenset[str]) -> list[Any]:
    """[size, origin, kind, plan, trailing Nones, builder method] for one grammar rule, after
    Lark's `ParseTreeBuilder` (child filter with placeholders, expand-single-child)."""
    expansion = rule.expansion
    options = rule.options
    empty = options.empty_indices
    if empty:
        ones = "".join(str(int(b)) for b in empty).split("0")
        nones = [len(o) for o in ones]
    else:
        nones = [0] * (len(expansion) + 1)
    plan = []
    pending = 0
    for i, sym in enumerate(expansion):
        pending += nones[i]
        if options.keep_all_tokens or not (sym.is_term and sym.filter_out):
            splice = (not sym.is_term) and sym.name.startswith("_")
            plan.append([i, splice, pending])
            pending = 0
    pending += nones[len(expansion)]
    origin = rule.origin.name
    name = rule.alias or options.template_source or origin
    simple = len(expansion) == 1 and len(plan) == 1 and not plan[0][1] and not plan[0][2] and not pending
    if origin.startswith("_"):
        kind = _SPLICE
    elif (options.expand1 and not rule.alias) or name in identity_on_one:
        kind = _FOLD if simple else _FOLD_ONE
    else:
        kind = _BUILD
    return [len(expansion), origin, kind, plan, pending, name]


def _terminals(lark: "Lark") -> tuple[list[list[str]], dict[str, dict[str, str]]]:
    """Every terminal as [name, regexp], in the order Lark's lexer tries them, and the strings that
    a pattern terminal would also match (keywords), which are found by lookup after the match."""
    from lark.lexer import PatternStr

    terminals = list(lark.terminals)
    regexps = [t for t in terminals if not isinstance(t.pattern, PatternStr)]
    keywords: dict[str, dict[str, str]] = {}
    embedded = set()
    for t in terminals:
        if not isinstance(t.pattern, PatternStr):
            continue
        for r in regexps:
            if r.priority == t.priority and re.fullmatch(r.pattern.to_regexp(), t.pattern.value):
                keywords.setdefault(r.name, {})[t.pattern.value] = t.name
                embedded.add(t.name)
    kept = [t for t in terminals if t.name not in embedded]
    kept.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
    return [[t.name, t.pattern.to_regexp()] for t in kept], keywords


def _starts(regexp: str) -> list[Any] | None:
    """What a match of ``regexp`` may start with: [the ASCII characters, as a text; whether any other
    character], or None when it may match the empty text, or this reading of it is not sure (the terminal
    is then tried at every character). Read from the pattern's parse by Python's ``re``: a literal, a set
    of literals and ranges, groups, repeats and alternatives are understood; anything else (a category
    such as ``\\w``, a negated set, a flag, a look-around) makes the answer None."""
    from re import _constants as C, _parser  # type: ignore[attr-defined]

    def sequence(items: Any) -> tuple[set[str], bool, bool] | None:
        found: set[str] = set()
        other = False
        for op, av in items:
            got = one(op, av)
            if got is None:
                return None
            chars, more, empty = got
            found |= chars
            other = other or more
            if not empty:
                return found, other, False
        return found, other, True

    def one(op: Any, av: Any) -> tuple[set[str], bool, bool] | None:
        if op is C.LITERAL:
            return ({chr(av)}, False, False) if av < 128 else (set(), True, False)
        if op is C.IN:
            found: set[str] = set()
            other = False
            for kind, arg in av:
                if kind is C.LITERAL:
                    lo = hi = arg
                elif kind is C.RANGE:
                    lo, hi = arg
                else:  # (a negation, a category)
                    return None
                found.update(chr(c) for c in range(lo, min(hi, 127) + 1))
                other = other or hi >= 128
            return found, other, False
        if op is C.SUBPATTERN:
            _, add, remove, inner = av
            return None if add or remove else sequence(inner)
        if op is C.ATOMIC_GROUP:
            return sequence(av)
        if op in (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT):
            least, _, inner = av
            got = sequence(inner)
            return None if got is None else (got[0], got[1], got[2] or least == 0)
        if op is C.BRANCH:
            found, other, empty = set(), False, False
            for alternative in av[1]:
                got = sequence(alternative)
                if got is None:
                    return None
                found |= got[0]
                other, empty = other or got[1], empty or got[2]
            return found, other, empty
        return None

    try:
        parsed = _parser.parse(regexp)
    except re.error:
        return None
    if parsed.state.flags & (re.IGNORECASE | re.LOCALE):
        return None
    got = sequence(parsed)
    if got is None or got[2]:
        return None
    return ["".join(sorted(got[0])), got[1]]


def _never(text: str, pos: int) -> None:
    """The lexer of a character no terminal may start with."""
    return None


class Driver:
    def __init__(self, tables: dict[str, Any]):
        self.start: int = tables["start"]
        self.end: int = tables["end"]
        self.table: list[dict[str, int]] = tables["table"]
        self.rules = [(size, origin, kind, tuple((i, bool(sp), n) for i, sp, n in plan), trailing, name)
                      for size, origin, kind, plan, trailing, name in tables["rules"]]
        # each rule's children as the driver makes them: ``True`` where they are the rule's symbols
        # themselves (none filtered, spliced or absent), else the indices kept when only some are
        # filtered out, else None (the plan walked in full)
        self.takes: list[Any] = []
        for size, _, _, plan, trailing, _ in self.rules:
            plain = not trailing and all(not sp and not n for _, sp, n in plan)
            self.takes.append(None if not plain else True if len(plan) == size else tuple(i for i, _, _ in plan))
        ignore = set(tables["ignore"])
        self.terminals = [(name, rx) for name, rx in tables["terminals"] if name not in ignore]
        skip = "|".join(rx for name, rx in tables["terminals"] if name in ignore)
        # A token is matched with the ignored text after it (spaces, comments), skipped possessively
        # (`*+`: a comment is never cut short to let a token match its tail); in this grammar no token
        # can start with what an ignored terminal matches, so the split is Lark's. A token is matched
        # against the terminals it may start with alone (``_starts``), in Lark's order: those it may
        # not start with could not match there. Each terminal's group is named by the terminal (Lark's
        # names are identifiers), so a match tells its terminal with no lookup.
        assert all(name.isidentifier() for name, _ in self.terminals)
        self.skipping = f"(?:{skip})*+" if skip else ""
        self.trailing = re.compile(self.skipping)
        self.starts: dict[str, Any] = tables["starts"]
        # the first character of a token -> its lexer (``_lexer``), each made when first needed
        self.lexers: dict[str, Any] = {}
        self.by_terminals: dict[tuple[str, ...], Any] = {}
        self.keywords: dict[str, dict[str, str]] = tables["keywords"]
        self.kept = frozenset(tables["kept"])
        self.literals: dict[str, str] = tables["literals"]  # terminal name -> its text, for messages
        # (state below, state on top, token) -> the top state after the chain of folds there (``_fold_chain``)
        self.folds: dict[tuple[int, int, str | None], int] = {}

    def _lexer(self, char: str) -> Any:
        """The ``match`` of the pattern that reads a token starting with ``char`` and the ignored text
        after it (``_never`` when no terminal may start with it), kept for the next token starting with an
        ASCII ``char`` (any other shares one set of terminals: the table stays of at most 128 entries
        whatever the texts read)."""
        starts = self.starts
        ascii_ = char < "\x80"
        names = tuple(name for name, _ in self.terminals if starts[name] is None
                      or (char in starts[name][0] if ascii_ else starts[name][1]))
        lexer = self.by_terminals.get(names)
        if lexer is None:
            rx = dict(self.terminals)
            lexer = self.by_terminals[names] = re.compile(
                "(?:" + "|".join(f"(?P<{name}>{rx[name]})" for name in names) + ")" + self.skipping
            ).match if names else _never
        if ascii_:
            self.lexers[char] = lexer
        return lexer

    def _fold_chain(self, below: int, top: int, ttype: str | None) -> int:
        """The state on top of ``below`` once the folds the table asks for in state ``top`` at a token
        of ``ttype`` are made (each fold replaces the top state by its goto from ``below``): the
        driver's loop does the same steps, one at a time, where the action is no fold."""
        table, rules = self.table, self.rules
        while True:
            action = table[top].get(ttype)  # type: ignore[arg-type]
            if action is None or action >= 0 or rules[-1 - action][2] != _FOLD:
                return top
            top = table[below][rules[-1 - action][1]]

    def parse(self, text: str, builder: Any, tokens: list[Tok] | None = None) -> Any:
        """Parse ``text``, building with ``builder``; every token read, punctuation included, is
        appended to ``tokens`` when given (the formatter lays out these)."""
        table = self.table
        keywords = self.keywords
        kept = self.kept
        lexers = self.lexers
        folds = self.folds
        end_state = self.end
        # each rule as the loop reads it, in one item: its size, origin, kind, plan, trailing Nones,
        # children (``takes``) and builder method
        acts = [(size, origin, kind, plan, trailing, take,
                 getattr(builder, name, None) if kind != _FOLD and kind != _SPLICE else None)
                for (size, origin, kind, plan, trailing, name), take in zip(self.rules, self.takes)]
        # the stack, four items a symbol (the first, none): the state on top of it, its value and the
        # offsets where it starts and ends; one list, so that a reduction takes its children and
        # drops them in one step each
        stack: list[Any] = [self.start, None, None, None]
        pos = self.trailing.match(text).end()  # type: ignore[union-attr]  # (where the next token starts)
        token_end = 0  # where the last token read ended
        size_text = len(text)
        while True:
            if pos < size_text:
                char = text[pos]
                lexer = lexers.get(char)
                if lexer is None:
                    lexer = self._lexer(char)
                m = lexer(text, pos)
            else:
                m = None
            if m is not None:
                ttype = m.lastgroup
                start = pos
                token_end = end = m.end(ttype)  # type: ignore[arg-type]
                value = text[start:end]
                kws = keywords.get(ttype)  # type: ignore[arg-type]
                if kws is not None:
                    kw = kws.get(value)
                    if kw is not None and kw in table[stack[-4]]:
                        ttype = kw
                if ttype in kept or tokens is not None:
                    tok: Any = Tok(value)
                    tok.type = ttype  # type: ignore[assignment]
                    tok.start_pos = start
                    tok.end_pos = end
                    if tokens is not None:
                        tokens.append(tok)
                else:
                    tok = None  # punctuation and keywords no rule passes on: never looked at
                pos = m.end()
            else:
                if pos < size_text:
                    raise Mismatch(token_end)
                ttype = "$END"
                tok = None
                start = end = pos = size_text
            # feed the token: reduce as long as the table says so, then shift
            while True:
                action = table[stack[-4]].get(ttype)  # type: ignore[arg-type]
                if action is None:
                    raise Mismatch(start, end, frozenset(k for k in table[stack[-4]] if k.isupper()))
                if action >= 0:
                    stack += (action, tok, start, end)
                    break
                size, origin, kind, plan, trailing, take, method = acts[-1 - action]
                if kind == _FOLD:  # a chain of folds (`?rule`s of one symbol) ends in a state found once
                    chain = (stack[-8], stack[-4], ttype)
                    top = folds.get(chain)
                    if top is None:
                        top = folds[chain] = self._fold_chain(stack[-8], stack[-4], ttype)
                    stack[-4] = top
                    continue
                if size:
                    below = -4 * size  # (where the children's items start)
                    kids = stack[below + 1::4]
                    first = stack[below + 2]
                    if first is None:
                        first = next((s for s in stack[below + 2::4] if s is not None), None)
                    last = stack[-1]
                    if last is None:
                        last = next((e for e in reversed(stack[below + 3::4]) if e is not None), None)
                    del stack[below:]
                else:
                    kids = []
                    first = last = None
                if take is True:
                    children: list[Any] = kids
                elif take is not None:
                    children = [kids[i] for i in take]
                else:
                    children = []
                    for i, splice, nones in plan:
                        if nones:
                            children.extend([None] * nones)
                        if splice:
                            children.extend(kids[i])
                        else:
                            children.append(kids[i])
                    if trailing:
                        children.extend([None] * trailing)
                if kind == _SPLICE:
                    result: Any = children
                elif kind == _FOLD_ONE and len(children) == 1:
                    result = children[0]
                else:
                    if method is None:
                        raise Mismatch(first or 0)
                    builder.start_pos = first
                    builder.end_pos = last
                    result = method(children)
                if not stack:
                    raise Mismatch(start)
                goto = table[stack[-4]].get(origin)
                if goto is None:
                    raise Mismatch(start)
                stack += (goto, result, first, last)
                if goto == end_state and ttype == "$END":
                    return result
            if ttype == "$END":
                raise Mismatch(pos)

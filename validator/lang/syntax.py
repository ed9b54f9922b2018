"""Syntax stage: text -> Lark parse tree -> AST. Lark objects never leave this module."""

from __future__ import annotations

import ast as pyast
import functools
import hashlib
import marshal
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable


from . import ast as A
from ..core.diagnostics import Diagnostic, DiagnosticError, Span, utf8_fault
from ..core import blobcache
from ..lib.values import KEYWORDS as _KEYWORDS
from . import lalr
from .lalr import Driver, Mismatch

if TYPE_CHECKING:
    from lark import Lark, Tree
    from lark.exceptions import UnexpectedInput

MAX_SOURCE_BYTES = 2_000_000
MAX_TABLES_BYTES = 8_000_000
MAX_NESTING = 120
MAX_DEPTH = 10_000  # of the AST: `1 + 1 + ... + 1` nests without brackets
MAX_INT_DIGITS = 60
_NEWLINE = re.compile("\n")
_GOOD_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|[\\"ntr])')
_SURROGATE = re.compile("[\ud800-\udfff]")
# a quoted string with no backslash, line break or NUL (which `literal_eval` would refuse): its value
# is its text between the quotes, read without compiling it as Python (a tenth of a parse's time)
_PLAIN_STRING = re.compile(r'"[^"\\\n\r\x00]*"').fullmatch
BOM = "\ufeff"

# Every keyword of the grammar; tests check this against grammar/ruleval.lark and editors/.
KEYWORDS = _KEYWORDS  # (one list: ``lib.values`` writes a record label that is one in quotes)

_TOKEN_NAMES = {
    "NAME": "a name", "STRING": "a string", "INT": "a number", "RBRACE": "`}`", "LBRACE": "`{`",
    "RPAR": "`)`", "LPAR": "`(`", "RSQB": "`]`", "LSQB": "`[`", "COMMA": "`,`", "COLON": "`:`",
    "EQUAL": "`=`", "VBAR": "`|`", "SEMICOLON": "`;`", "$END": "end of file", "DOT": "`.`",
    "MINUS": "`-`", "PLUS": "`+`", "DICE": "a dice literal", "RAWSTRING": "a raw string",
}


@functools.lru_cache(maxsize=1)
def _grammar_text() -> str:
    """The grammar: package data in an installed ruleval, `grammar/` in a source checkout (also
    what an editable install maps `validator.grammar` to); importlib.resources otherwise."""
    package = Path(__file__).resolve().parent.parent  # validator/
    for candidate in (package / "grammar" / "ruleval.lark", package.parent / "grammar" / "ruleval.lark"):
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    from importlib import resources

    return resources.files("validator.grammar").joinpath("ruleval.lark").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    """The one LALR parser, built once per process. Not cached on disk: Lark's cache is a file of
    pickled objects in the shared temporary folder, which anyone who can write there could replace
    with one that runs code when the next process loads it. Start-ups need no Lark at all (``driver``'s signed tables);
    a process that reports a syntax error or formats a file builds it (~0.2 s)."""
    from lark import Lark

    return Lark(
        _grammar_text(),
        parser="lalr",
        strict=True,
        propagate_positions=True,
        maybe_placeholders=True,
        cache=False,
    )


def _terminal_text(name: str) -> str:
    """A terminal as a person reads it: its text (`:=`, `else`), or what it stands for (a name, a
    string); never Lark's internal name (`__ANON_2`) for a literal the grammar did not name."""
    if name in _TOKEN_NAMES:
        return _TOKEN_NAMES[name]
    literal = driver().literals.get(name)
    if literal is not None:
        return f"`{literal}`"
    if name.startswith("__"):
        return "another token"
    return f"`{name.lower()}`" if name.isupper() else name


def _describe_expected(expected: set[str]) -> str:
    names = sorted({_terminal_text(e) for e in expected})
    if len(names) > 8:
        names = names[:8] + ["..."]
    return ", ".join(names)


def _token_text(tok: Any) -> str:
    text = str(tok)
    return text if len(text) <= 30 else text[:27] + "..."


def parse_error(err: "UnexpectedInput", path: str, text: str) -> Diagnostic:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken

    line = getattr(err, "line", 0) or 0
    col = getattr(err, "column", 0) or 0
    if isinstance(err, UnexpectedEOF) or (isinstance(err, UnexpectedToken) and err.token.type == "$END"):
        lines = text.splitlines() or [""]
        line, col = len(lines), len(lines[-1]) + 1
        expected = getattr(err, "expected", None) or getattr(err, "accepts", None) or set()
        return Diagnostic("P003", "unexpected end of file", Span(path, line, col, line, col + 1),
                          help=f"expected {_describe_expected(set(expected))}" if expected else None)
    if isinstance(err, UnexpectedToken):
        tok = err.token
        end = col + max(1, len(str(tok)))
        expected = set(err.accepts or err.expected or ())
        msg = f"unexpected `{_token_text(tok)}`"
        help_ = f"expected {_describe_expected(expected)}" if expected else None
        if tok.type == "NAME" and str(tok) in KEYWORDS:
            help_ = (help_ or "") + f"; `{tok}` is a keyword"
        help_ = _slip_help(str(tok), {_terminal_text(e) for e in expected}, help_)
        help_ = _swallowed_help(text, getattr(tok, "start_pos", None), {_terminal_text(e) for e in expected}, help_)
        return Diagnostic("P001", msg, Span(path, line, col, line, end), help=help_)
    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream or 0
        ch = text[pos] if 0 <= pos < len(text) else "?"
        help_ = None
        if ch == "'":
            help_ = 'strings use double quotes: "..."'
        elif ch == '"':
            help_ = "this string is not closed on its line"
        return Diagnostic("P002", f"unexpected character `{ch}`", Span(path, line, col, line, col + 1), help=help_)
    return Diagnostic("P001", "syntax error", Span(path, line, col, line, col + 1))


_BRACKETS = re.compile(r'"(?:\\[^\n]|[^"\\\n])*"?|#[^\n]*|[()\[\]{}]')


def _nesting_depth(text: str) -> tuple[int, int]:
    """The deepest bracket nesting outside strings and comments, and where it is reached."""
    depth = best = 0
    pos = 0
    for m in _BRACKETS.finditer(text):
        ch = m.group()
        if ch in "([{":
            depth += 1
            if depth > best:
                best, pos = depth, m.start()
        elif ch in ")]}":
            depth -= 1
    return best, pos


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    col = pos - (text.rfind("\n", 0, pos) + 1) + 1
    return line, col


def decode_source(data: bytes, path: str) -> str:
    if len(data) > MAX_SOURCE_BYTES:
        raise DiagnosticError([Diagnostic("P005", f"file is {len(data)} bytes, more than the limit of {MAX_SOURCE_BYTES}",
                                          Span(path, 1, 1, 1, 2))])
    if data.startswith(b"\xef\xbb\xbf"):  # a byte order mark some editors write: not part of the text
        data = data[3:]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col, problem = utf8_fault(exc)  # (its column in characters, as every other diagnostic's)
        raise DiagnosticError([Diagnostic("P004", problem,
                                          Span(path, line, col, line, col + 1),
                                          help="save the ruleset as UTF-8")]) from None
    if _BIDI.search(text) is not None:
        raise RefusedSource(bidi_controls(text, path), text)
    return text


class RefusedSource(DiagnosticError):
    """A source decoded but refused as a whole (P007); ``text`` is its text, so that each diagnostic is
    shown under its line (escaped: the control characters appear as their escapes)."""

    def __init__(self, diagnostics: list[Diagnostic], text: str):
        super().__init__(diagnostics)
        self.text = text


# Bidirectional controls (embeddings, overrides, isolates, marks): in a source they make an editor show
# the text in another order than the parser reads it ("Trojan Source", CVE-2021-42574).
_BIDI = re.compile("[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def bidi_controls(text: str, path: str) -> list[Diagnostic]:
    """A P007 at each bidirectional control character of a source (at most 50)."""
    found = []
    for m in _BIDI.finditer(text):
        line, col = _line_col(text, m.start())
        found.append(Diagnostic("P007", f"bidirectional control character U+{ord(m.group()):04X} in the source",
                                Span(path, line, col, line, col + 1),
                                help=f"it shows the text in another order than ruleval reads it; in a string write it "
                                     f"as the escape `\\u{ord(m.group()):04x}`"))
        if len(found) == 50:
            break
    return found


_IDENTITY_ON_ONE = frozenset({"or_chain", "and_chain"})
_TABLES_FORMAT = "3"  # (2: with the characters each terminal may start with; 3: marshal data)
_TABLES_KIND = "parser"


@functools.lru_cache(maxsize=1)
def driver() -> Driver:
    """The fast LALR driver over the same parse table as `parser()`.

    Its tables are kept on disk (``marshal`` data of texts, numbers, lists and mappings, in ruleval's
    private cache folder, named by the grammar, the driver's source and the Python version) so that a
    start-up imports neither Lark nor redoes its grammar analysis. The entry is signed like the other
    binary entries (``blobcache``: kept even with the check cache off, as it depends on ruleval alone)
    and read only when its signature is right: its regular expressions are compiled and run on every
    ruleset, so a table anyone else wrote or changed (a whitespace pattern that backtracks for ever,
    say) is never used but built again; so is a damaged one. With no private cache folder, the
    tables are built in each process."""
    grammar = _grammar_text()
    h = hashlib.sha256(grammar.encode("utf-8"))
    h.update(Path(lalr.__file__).read_bytes())
    h.update(f"{_TABLES_FORMAT}:{sorted(_IDENTITY_ON_ONE)}:{sys.version}".encode())
    entry = h.hexdigest()[:40]
    kept = blobcache.load(_TABLES_KIND, entry, MAX_TABLES_BYTES, always=True)
    if kept is not None:
        try:
            return Driver(marshal.loads(kept))
        except (ValueError, KeyError, TypeError, IndexError, EOFError, re.error):
            pass
    tables = lalr.tables_from_lark(parser(), _IDENTITY_ON_ONE)
    built = Driver(tables)
    blobcache.store(_TABLES_KIND, entry, marshal.dumps(tables), always=True)
    return built


def _check_nesting(text: str, path: str) -> None:
    depth, pos = _nesting_depth(text)
    if depth > MAX_NESTING:
        line, col = _line_col(text, pos)
        raise DiagnosticError([Diagnostic("P006", f"brackets nested {depth} deep, more than the limit of {MAX_NESTING}",
                                          Span(path, line, col, line, col + 1))])


def parse_with_tokens(text: str, path: str) -> tuple[A.Module, list[Any]]:
    """The AST and every token of the text (with its terminal's name and offsets), for the
    formatter; the same errors as `parse_module`."""
    if text.startswith(BOM):
        text = text[1:]
    _check_nesting(text, path)
    tokens: list[Any] = []
    try:
        module = driver().parse(text, _Builder(path, text), tokens)
    except (Mismatch, DiagnosticError, RecursionError):
        module = parse_module(text, path)  # raises the located error; should it not, Lark lexes
        ip = parser().parse_interactive(text)
        return module, [t for t in ip.iter_parse() if t.type != "$END"]
    _check_depth(module, path)  # (as `parse_module` refuses it: the formatter never meets a tree too deep to print)
    return module, tokens


def parse_module(text: str, path: str) -> A.Module:
    """Parse a ruleset source into an AST; raise ``DiagnosticError`` with located parse errors.

    The fast driver does the work; where it gives up (a syntax error, or text the two lexers
    would split differently), Lark parses the text itself and gives the result or the error. A
    leading byte order mark is skipped, as when the file is read (``decode_source``)."""
    if text.startswith(BOM):
        text = text[1:]
    _check_nesting(text, path)
    try:
        module = driver().parse(text, _Builder(path, text))
    except Mismatch as gave_up:
        module = parse_module_with_lark(text, path)  # Lark's located error, if it rejects the text too
        # Lark accepted it only by reading a word or symbol in pieces (`querymain = 1` as
        # `query main = 1`, where no name may stand): ruleval reads words whole, so refuse it.
        raise DiagnosticError([_read_in_pieces(gave_up, text, path)]) from None
    except DiagnosticError:
        # Lark reports syntax errors, and reports them before any error of a literal's value.
        module = parse_module_with_lark(text, path)
    except RecursionError:
        raise DiagnosticError([Diagnostic("P006", "ruleset nested too deeply", Span(path, 1, 1, 1, 2))]) from None
    assert isinstance(module, A.Module)
    _check_depth(module, path)
    return module


def _check_depth(module: A.Module, path: str) -> None:
    """An expression may nest without brackets (`1 + 1 + ... + 1`, a long chain of `let`s): past
    ``MAX_DEPTH`` it is refused here, located at its deepest node, so that no later stage (each
    walks the tree recursively) ever meets a tree too deep for it."""
    # one level at a time, the nodes at each depth in a list (no depth kept per node); only a tree
    # found too deep is walked again, depth first, to locate the node reported
    level: list[Any] = [module]
    for _ in range(MAX_DEPTH + 1):
        below: list[Any] = []
        for node in level:
            d = node.__dict__
            for f in node._compared:
                x = d[f]
                if type(x) is tuple:
                    todo = [x]
                    while todo:
                        for y in todo.pop():
                            if type(y) is tuple:
                                todo.append(y)
                            elif isinstance(y, A.Node):
                                below.append(y)
                elif isinstance(x, A.Node):
                    below.append(x)
        if not below:
            return
        level = below
    stack: list[tuple[Any, int]] = [(module, 0)]
    while stack:
        node, depth = stack.pop()
        if type(node) is tuple:
            stack.extend((x, depth) for x in node)
            continue
        if isinstance(node, A.Node):
            if depth > MAX_DEPTH:
                span = getattr(node, "span", None) or Span(path, 1, 1, 1, 2)
                raise DiagnosticError([Diagnostic("P006", f"expression nested {depth} levels deep, more than the "
                                                          f"limit of {MAX_DEPTH}", span,
                                                  help="name parts of it with `let` or `def`, or use `sum`/`fold` over a list")])
            stack.extend((getattr(node, f), depth + 1) for f in node._compared)


def _read_in_pieces(gave_up: Mismatch, text: str, path: str) -> Diagnostic:
    seen = text[gave_up.start:gave_up.end]
    literals = driver().literals
    expected = {_terminal_text(t) for t in gave_up.expected}
    shown = sorted(expected)
    help_ = "expected " + ", ".join(shown[:8] + (["..."] if len(shown) > 8 else []))
    split = [w for t in gave_up.expected if (w := literals.get(t)) and seen.startswith(w) and len(seen) > len(w)]
    if split:
        word = max(split, key=len)
        help_ += f"; did you mean `{word} {seen[len(word):]}`? (a word is read whole)"
    line, col = _line_col(text, gave_up.start)
    end_line, end_col = _line_col(text, gave_up.end)
    return Diagnostic("P001", f"unexpected `{seen}`", Span(path, line, col, end_line, end_col),
                      help=_swallowed_help(text, gave_up.start, expected, _slip_help(seen, expected, help_)))


def _slip_help(seen: str, expected: set[str], help_: str | None) -> str | None:
    """Advice for the common slips of a first ruleset, after the list of what was expected."""
    if seen == "=" and "`:=`" in expected:
        return (help_ or "") + "; a procedure variable is changed with `:=` (`points := points + 1`)"
    if expected == {"a string"} or (expected and expected <= {"a string", "a raw string"}):
        return (help_ or "") + "; the reason after `else` (and a citation after `cite`) is a text in quotes"
    return help_


_LINE_START_WORD = re.compile(r"(?:^|\n)[ \t]*([A-Za-z_][A-Za-z0-9_]*)[ \t]+$")


def _swallowed_help(text: str, pos: int | None, expected: set[str], help_: str | None) -> str | None:
    """Advice when the word before the unexpected token starts its line and could have started what
    was expected there (a declaration's keyword): it was read as a name ending an expression left
    unfinished on the line above (`x +` then `rule g(...)`), and that line is where to look."""
    if pos is None or not 0 < pos <= len(text):
        return help_
    found = _LINE_START_WORD.search(text, max(0, pos - 200), pos)
    if found is None or f"`{found.group(1)}`" not in expected:
        return help_
    line = text.count("\n", 0, found.start(1)) + 1
    return ((help_ + "; ") if help_ else "") + (f"`{found.group(1)}` at the start of line {line} was read as a name "
                                                "continuing the expression of the line before: is that expression "
                                                "unfinished?")


def parse_module_fast(text: str, path: str) -> A.Module:
    """The fast path alone (no fallback); raises `Mismatch` where it gives up. For tests."""
    module = driver().parse(text, _Builder(path, text))
    assert isinstance(module, A.Module)
    return module


def parse_module_with_lark(text: str, path: str) -> A.Module:
    """Lark's own parser and tree, then the same builder: the reference path."""
    from lark.exceptions import UnexpectedInput

    try:
        tree = parser().parse(text)
    except UnexpectedInput as err:
        raise DiagnosticError([parse_error(err, path, text)]) from None
    try:
        module = _walk(tree, _Builder(path, text))
    except RecursionError:
        raise DiagnosticError([Diagnostic("P006", "ruleset nested too deeply", Span(path, 1, 1, 1, 2))]) from None
    assert isinstance(module, A.Module)
    _check_depth(module, path)
    return module


def _walk(tree: "Tree", builder: "_Builder") -> Any:  # type: ignore[type-arg]
    children = [_walk(c, builder) if hasattr(c, "children") else c for c in tree.children]
    meta = tree.meta
    empty = getattr(meta, "empty", True)
    builder.start_pos = None if empty else meta.start_pos
    builder.end_pos = None if empty else meta.end_pos
    return getattr(builder, tree.data)(children)


def _unquote(tok: Any, span_of: Callable[[Any], Span]) -> str:
    text = str(tok)
    if text.startswith("r"):
        return text[2:-1]
    if _PLAIN_STRING(text) and not _SURROGATE.search(text):
        return text[1:-1]  # no escape and no character Python refuses in a literal: the text itself
    if "\\" in _GOOD_ESCAPE.sub("", text):  # Python would accept `\d` and warn; ruleval refuses it
        raise DiagnosticError([Diagnostic("P001", f"unknown escape in string literal {text}", span_of(tok),
                                          help="escapes allowed: \\\\ \\\" \\n \\r \\t \\uXXXX; "
                                               'raw strings r"..." keep backslashes as written')])
    try:
        value = pyast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise DiagnosticError([Diagnostic("P001", f"invalid string literal {text}", span_of(tok),
                                          help="escapes allowed: \\\\ \\\" \\n \\r \\t \\uXXXX")]) from None
    if not isinstance(value, str):
        raise DiagnosticError([Diagnostic("P001", f"invalid string literal {text}", span_of(tok))])
    if _SURROGATE.search(value):  # `\uD83D\uDE00` is one character, as in JSON; a half alone is none
        try:
            value = value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise DiagnosticError([Diagnostic("P001", f"lone surrogate escape in string literal {text[:40]}",
                                              span_of(tok),
                                              help="a \\uD800-\\uDFFF escape must be half of a pair; "
                                                   "write the character itself")]) from None
    return value


class _Builder:
    """Parse tree -> AST. Before each call the parser sets ``start_pos``/``end_pos``: the offsets
    of the text the node spans (None when it spans nothing); each method receives the children."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.line_starts = starts = [0] + [m.end() for m in _NEWLINE.finditer(text)]
        # each offset's line, the text's end included: an index, where a search of ``line_starts``
        # per node was some 6 % of parsing (one list item per character, each line's number shared)
        self.line_of: list[int] = []
        line_of = self.line_of
        for line, (start, end) in enumerate(zip(starts, [*starts[1:], len(text) + 1]), 1):
            line_of += [line] * (end - start)
        self.start_pos: int | None = None
        self.end_pos: int | None = None
        self._labels: dict[int, Any] = {}  # each record item's label token, by the item's identity (``rec_item``)

    def _line_col(self, offset: int) -> tuple[int, int]:
        line = self.line_of[offset]
        return line, offset - self.line_starts[line - 1] + 1

    def _s(self) -> Span:
        start, end = self.start_pos, self.end_pos
        if start is None or end is None:
            return Span(self.path)
        line_of, starts = self.line_of, self.line_starts  # (`_line_col` twice, inlined: this runs for every node)
        line, end_line = line_of[start], line_of[end]
        return Span(self.path, line, start - starts[line - 1] + 1, end_line, end - starts[end_line - 1] + 1)

    def _tok_span(self, tok: Any) -> Span:
        line, col = self._line_col(tok.start_pos)
        end_line, end_col = self._line_col(tok.end_pos)
        return Span(self.path, line, col, end_line, end_col)

    def _str(self, tok: Any) -> str:
        return _unquote(tok, self._tok_span)

    # -- top level
    def start(self, items: list[Any]) -> A.Module:
        kinds = (A.Header, A.Extends, A.Import, A.Clauses, A.Schema, A.CellOverride)
        directives = tuple(i for i in items if isinstance(i, kinds))
        decls = tuple(i for i in items if not isinstance(i, kinds))
        return A.Module(self.path, directives, decls, self._s())

    def header(self, c: list[Any]) -> A.Header:
        return A.Header(c[0], self._str(c[1]) if c[1] is not None else None, self._s())

    def dotted(self, c: list[Any]) -> str:
        return ".".join(str(t) for t in c)

    def extends(self, c: list[Any]) -> A.Extends:
        return A.Extends(self._str(c[0]), self._s())

    def import_(self, c: list[Any]) -> A.Import:
        return A.Import(self._str(c[0]), str(c[1]), self._s(), self._str(c[3]) if c[3] is not None else None, c[2])

    def clauses(self, c: list[Any]) -> A.Clauses:
        return A.Clauses(self._str(c[0]), self._s())

    def schema_decl(self, c: list[Any]) -> A.Schema:
        return A.Schema(self._str(c[0]), self._s())

    def cite(self, c: list[Any]) -> tuple[str, ...]:
        return tuple(self._str(t) for t in c)

    def override(self, c: list[Any]) -> bool:
        return True

    def _split(self, c: list[Any]) -> tuple[bool, list[Any]]:
        if c and c[0] is True:
            return True, c[1:]
        if c and c[0] is None:
            return False, c[1:]
        return False, c

    @staticmethod
    def _cites(x: Any) -> tuple[str, ...]:
        return x if isinstance(x, tuple) and all(isinstance(i, str) for i in x) else ()

    def enum_decl(self, c: list[Any]) -> A.EnumDecl:
        ov, c = self._split(c)
        name, cites, members = str(c[0]), self._cites(c[1]), tuple(str(t) for t in c[2:])
        return A.EnumDecl(name, members, cites, ov, self._s())

    def record_decl(self, c: list[Any]) -> A.RecordDecl:
        ov, c = self._split(c)
        fields = tuple(f for f in c[1:] if f is not None)
        return A.RecordDecl(str(c[0]), fields, ov, self._s())

    def field_decl(self, c: list[Any]) -> A.FieldDecl:
        return A.FieldDecl(str(c[0]), c[2], c[1] is not None, self._s())

    def input_decl(self, c: list[Any]) -> A.InputDecl:
        ov, c = self._split(c)
        return A.InputDecl(str(c[0]), c[1], self._str(c[2]), c[3], self._cites(c[4]), ov, self._s())

    def default(self, c: list[Any]) -> Any:
        return c[0]

    def const_decl(self, c: list[Any]) -> A.ConstDecl:
        ov, c = self._split(c)
        return A.ConstDecl(str(c[0]), c[1], self._cites(c[2]), c[3], ov, self._s())

    def type_ann(self, c: list[Any]) -> A.TypeRef:
        return c[0]  # type: ignore[no-any-return]

    def ret(self, c: list[Any]) -> A.TypeRef:
        return c[0]  # type: ignore[no-any-return]

    def type(self, c: list[Any]) -> A.TypeRef:
        optional = getattr(c[-1], "type", None) == "QMARK"
        return A.TypeRef(str(c[0]), tuple(p for p in c[1:] if isinstance(p, A.TypeRef)), optional, self._s())

    def table_decl(self, c: list[Any]) -> A.TableDecl:
        ov, c = self._split(c)
        name, params, ret, cites, body = str(c[0]), c[1], c[2], self._cites(c[3]), c[4]
        if isinstance(body, _Grid):
            return A.TableDecl(name, params, ret, cites, body.rows, None, ov, self._s())
        return A.TableDecl(name, params, ret, cites, None, body, ov, self._s())

    def grid(self, rows: list[tuple[Any, ...]]) -> "_Grid":
        return _Grid(tuple(rows))

    def grid_row(self, cells: list[Any]) -> tuple[Any, ...]:
        return tuple(cells)

    def absent(self, c: list[Any]) -> A.Absent:
        return A.Absent(self._s())

    def cell_override(self, c: list[Any]) -> A.CellOverride:
        return A.CellOverride(str(c[0]), tuple(c[1:-2]), self._cites(c[-2]), c[-1], self._s())

    def def_decl(self, c: list[Any]) -> A.DefDecl:
        ov, c = self._split(c)
        kind, name, params, ret, cites, body = c
        return A.DefDecl(kind, str(name), params, ret, self._cites(cites), body, ov, self._s())

    def defkind(self, c: list[Any]) -> str:
        return str(c[0])

    def decision_decl(self, c: list[Any]) -> A.DecisionDecl:
        ov, c = self._split(c)
        return A.DecisionDecl(str(c[0]), c[1], self._cites(c[2]), c[3], ov, self._s())

    def cycle_decl(self, c: list[Any]) -> A.CycleDecl:
        ov, c = self._split(c)
        names = []
        while c and isinstance(c[0], str):  # the decisions' names (a cite is a tuple, or None)
            names.append(str(c.pop(0)))
        return A.CycleDecl(tuple(names), self._cites(c[0]), tuple(c[1:]), ov, self._s())

    def policy_when(self, c: list[Any]) -> A.Policy:
        return A.Policy(c[0], c[1], c[2], self._cites(c[3]), self._s())

    def policy_otherwise(self, c: list[Any]) -> A.Policy:
        return A.Policy(None, c[0], c[1], self._cites(c[2]), self._s())

    def procedure_decl(self, c: list[Any]) -> A.ProcedureDecl:
        ov, c = self._split(c)
        return A.ProcedureDecl(str(c[0]), c[1] or (), self._cites(c[2]), tuple(c[3:]), ov, self._s())

    def query_decl(self, c: list[Any]) -> A.QueryDecl:
        ov, c = self._split(c)
        return A.QueryDecl(str(c[0]), c[1] or (), c[2], c[3], ov, self._s())

    def paramlist(self, c: list[Any]) -> tuple[A.Param, ...]:
        return c[0] if c and c[0] is not None else ()  # type: ignore[no-any-return]

    def params(self, c: list[A.Param]) -> tuple[A.Param, ...]:
        return tuple(c)

    def param(self, c: list[Any]) -> A.Param:
        return A.Param(str(c[0]), c[1], self._s())

    # -- statements
    def block(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(c)

    def step(self, c: list[Any]) -> A.Step:
        return A.Step(str(c[0]), self._cites(c[1]), c[2], self._s())

    def var_stmt(self, c: list[Any]) -> A.Var:
        return A.Var(str(c[0]), c[1], self._s())

    def assign(self, c: list[Any]) -> A.Assign:
        return A.Assign(str(c[0]), c[1], self._s())

    def let_stmt(self, c: list[Any]) -> A.LetStmt:
        return A.LetStmt(str(c[0]), c[1], self._s())

    def if_stmt(self, c: list[Any]) -> A.IfStmt:
        branches = [(c[0], c[1])]
        otherwise = None
        for extra in c[2:]:
            if extra is None:
                continue
            if isinstance(extra, _Else):
                otherwise = extra.body
            else:
                branches.append(extra)
        return A.IfStmt(tuple(branches), otherwise, self._s())

    def elif_block(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    def else_block(self, c: list[Any]) -> "_Else":
        return _Else(c[0])

    def for_stmt(self, c: list[Any]) -> A.For:
        return A.For(str(c[0]), c[1], c[2], c[3], self._s())

    def goto(self, c: list[Any]) -> A.Goto:
        return A.Goto(str(c[0]), self._s())

    def stop(self, c: list[Any]) -> A.Stop:
        return A.Stop(self._s())

    def break_(self, c: list[Any]) -> A.Break:
        return A.Break(self._s())

    def continue_(self, c: list[Any]) -> A.Continue:
        return A.Continue(self._s())

    def emit(self, c: list[Any]) -> A.Emit:
        return A.Emit(self._str(c[0]), c[1] or (), self._cites(c[2]), self._s())

    def payload(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(i for i in c if i is not None)

    def require(self, c: list[Any]) -> A.Require:
        return A.Require(c[0], self._str(c[1]), self._cites(c[2]), self._s())

    def reject(self, c: list[Any]) -> A.Reject:
        return A.Reject(self._str(c[0]), self._cites(c[1]), self._s())

    # -- expressions
    def let_expr(self, c: list[Any]) -> A.Let:
        return A.Let(str(c[0]), c[1], c[2], self._s())

    def if_expr(self, c: list[Any]) -> A.If:
        branches = [(c[0], c[1])] + [b for b in c[2:-1]]
        return A.If(tuple(branches), c[-1], self._s())

    def elif_expr(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    def lambda_(self, c: list[Any]) -> A.Lambda:
        return A.Lambda(c[0] or (), c[1], self._s())

    def or_chain(self, c: list[Any]) -> Any:
        return c[0] if len(c) == 1 else A.BoolOp("or", tuple(c), self._s())

    def and_chain(self, c: list[Any]) -> Any:
        return c[0] if len(c) == 1 else A.BoolOp("and", tuple(c), self._s())

    def not_(self, c: list[Any]) -> A.Not:
        return A.Not(c[0], self._s())

    def compare(self, c: list[Any]) -> A.Compare:
        return A.Compare(str(c[1]), c[0], c[2], self._s())

    def cmp_op(self, c: list[Any]) -> str:
        return str(c[0])

    def add_op(self, c: list[Any]) -> str:
        return str(c[0])

    def mul_op(self, c: list[Any]) -> str:
        return str(c[0])

    def member(self, c: list[Any]) -> A.Compare:
        return A.Compare("in", c[0], c[1], self._s())

    def not_member(self, c: list[Any]) -> A.Compare:
        return A.Compare("notin", c[0], c[1], self._s())

    def coalesce(self, c: list[Any]) -> A.BinOp:
        return A.BinOp("??", c[0], c[1], self._s())

    def binop(self, c: list[Any]) -> A.BinOp:
        return A.BinOp(str(c[1]), c[0], c[2], self._s())

    def neg(self, c: list[Any]) -> Any:
        if isinstance(c[0], A.Int):
            return A.Int(-c[0].value, self._s())
        return A.Neg(c[0], self._s())

    def call(self, c: list[Any]) -> A.Call:
        func, args = c[0], c[1]
        if args is None:
            return A.Call(func, (), (), self._s())
        if isinstance(args, _GenArg):
            gen = A.Comp("gen", args.elem, args.fors, None, args.span)
            return A.Call(func, (gen,), (), self._s())
        pos = tuple(a for a in args if not isinstance(a, _KwArg))
        kws = tuple((a.name, a.value) for a in args if isinstance(a, _KwArg))
        return A.Call(func, pos, kws, self._s())

    def args(self, c: list[Any]) -> list[Any]:
        return c

    def gen_arg(self, c: list[Any]) -> "_GenArg":
        return _GenArg(c[0], tuple(c[1:]), self._s())

    def kwarg(self, c: list[Any]) -> "_KwArg":
        return _KwArg(str(c[0]), c[1])

    def field(self, c: list[Any]) -> A.Field:
        return A.Field(c[0], str(c[1]), self._s())

    def index(self, c: list[Any]) -> A.Index:
        return A.Index(c[0], tuple(c[1:]), self._s())

    def with_(self, c: list[Any]) -> A.With:
        items = tuple(i for i in c[1:] if i is not None)
        labels = self._labels  # (each item's label token, by the item: ``rec_item``)
        return A.With(c[0], items, self._s(), tuple(self._tok_span(labels.pop(id(i))) for i in items))

    def int_(self, c: list[Any]) -> A.Int:
        text = str(c[0])
        if len(text) > MAX_INT_DIGITS:
            raise DiagnosticError([Diagnostic("C023", f"integer literal with {len(text)} digits, more than {MAX_INT_DIGITS}",
                                              self._tok_span(c[0]))])
        return A.Int(int(text), self._s())

    def str_(self, c: list[Any]) -> A.Str:
        return A.Str(self._str(c[0]), False, self._s())

    def raw_(self, c: list[Any]) -> A.Str:
        return A.Str(self._str(c[0]), True, self._s())

    def dice(self, c: list[Any]) -> A.Dice:
        n, s = str(c[0]).split("d")
        if len(n) > 4 or len(s) > 4:
            raise DiagnosticError([Diagnostic("C023", f"dice `{c[0]}` too large", self._tok_span(c[0]))])
        return A.Dice(int(n), int(s), self._s())

    def true(self, c: list[Any]) -> A.Bool:
        return A.Bool(True, self._s())

    def false(self, c: list[Any]) -> A.Bool:
        return A.Bool(False, self._s())

    def none(self, c: list[Any]) -> A.NoneLit:
        return A.NoneLit(self._s())

    def name(self, c: list[Any]) -> A.Name:
        return A.Name(str(c[0]), self._s())

    def list_(self, c: list[Any]) -> A.ListLit:
        return A.ListLit(tuple(i for i in c if i is not None), self._s())

    def tuple_(self, c: list[Any]) -> A.TupleLit:
        return A.TupleLit(tuple(i for i in c if i is not None), self._s())

    def list_comp(self, c: list[Any]) -> A.Comp:
        return A.Comp("list", c[0], tuple(c[1:]), None, self._s())

    def empty_record(self, c: list[Any]) -> A.RecordLit:
        return A.RecordLit((), self._s())

    def record(self, c: list[Any]) -> A.RecordLit:
        return A.RecordLit(tuple(c), self._s())

    def rec_item(self, c: list[Any]) -> tuple[str, Any]:
        key = c[0]
        item = (self._str(key) if key.type == "STRING" else str(key), c[1])
        self._labels[id(item)] = key  # (a `with`'s item's label is placed: ``with_``; the item lives on in the AST)
        return item

    def set_(self, c: list[Any]) -> A.SetLit:
        return A.SetLit(tuple(c), self._s())

    def set_comp(self, c: list[Any]) -> A.Comp:
        return A.Comp("set", c[0], tuple(c[1:]), None, self._s())

    def map_(self, c: list[Any]) -> A.MapLit:
        return A.MapLit(tuple(c), self._s())

    def map_item(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    def map_comp(self, c: list[Any]) -> A.Comp:
        return A.Comp("map", c[1], tuple(c[2:]), c[0], self._s())

    def comp_for(self, c: list[Any]) -> A.CompFor:
        names = tuple(str(t) for t in c[:2] if t is not None)
        return A.CompFor(names, c[2], c[3], self._s())


class _Grid:
    def __init__(self, rows: tuple[tuple[Any, ...], ...]):
        self.rows = rows


class _Else:
    def __init__(self, body: tuple[Any, ...]):
        self.body = body


class _GenArg:
    def __init__(self, elem: Any, fors: tuple[Any, ...], span: Span):
        self.elem, self.fors, self.span = elem, fors, span


class _KwArg:
    def __init__(self, name: str, value: Any):
        self.name, self.value = name, value


def walk_tree_is_lark(obj: Any) -> bool:
    """True if a Lark object leaked out of the syntax stage (used by tests)."""
    from lark import Token, Tree

    return isinstance(obj, (Tree, Token))

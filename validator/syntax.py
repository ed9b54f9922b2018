"""Syntax stage: text -> Lark parse tree -> AST. Lark objects never leave this module."""

from __future__ import annotations

import ast as pyast
import functools
from importlib import resources
from pathlib import Path
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

from . import ast as A
from .diagnostics import Diagnostic, DiagnosticError, Span

MAX_SOURCE_BYTES = 2_000_000
MAX_NESTING = 120
MAX_INT_DIGITS = 60

# Every keyword of the grammar; tests check this against grammar/ruleval.lark and editors/.
KEYWORDS = (
    "ruleset", "extends", "import", "as", "clauses", "schema", "cite", "override", "enum", "record",
    "input", "at", "default", "const", "table", "def", "rule", "decision", "cycle", "when", "otherwise",
    "settle", "procedure", "query", "step", "var", "let", "if", "then", "elif", "else", "for", "in",
    "goto", "stop", "break", "continue", "emit", "require", "reject", "fn", "or", "and", "not", "with",
    "true", "false", "none",
)

_TOKEN_NAMES = {
    "NAME": "a name", "STRING": "a string", "INT": "a number", "RBRACE": "`}`", "LBRACE": "`{`",
    "RPAR": "`)`", "LPAR": "`(`", "RSQB": "`]`", "LSQB": "`[`", "COMMA": "`,`", "COLON": "`:`",
    "EQUAL": "`=`", "VBAR": "`|`", "SEMICOLON": "`;`", "$END": "end of file", "DOT": "`.`",
    "MINUS": "`-`", "PLUS": "`+`", "DICE": "a dice literal", "RAWSTRING": "a raw string",
}


def _grammar_text() -> str:
    try:
        return resources.files("validator.grammar").joinpath("ruleval.lark").read_text(encoding="utf-8")
    except (ModuleNotFoundError, FileNotFoundError, OSError):
        # Running from a source checkout: the grammar sits at the top of the repository.
        return (Path(__file__).resolve().parent.parent / "grammar" / "ruleval.lark").read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def parser() -> Lark:
    """The one LALR parser, built once per process (and cached on disk by Lark between processes)."""
    return Lark(
        _grammar_text(),
        parser="lalr",
        strict=True,
        propagate_positions=True,
        maybe_placeholders=True,
        cache=True,
    )


def _describe_expected(expected: set[str]) -> str:
    names = sorted({_TOKEN_NAMES.get(e, f"`{e.lower()}`" if e.isupper() else e) for e in expected})
    if len(names) > 8:
        names = names[:8] + ["..."]
    return ", ".join(names)


def _token_text(tok: Token) -> str:
    text = str(tok)
    return text if len(text) <= 30 else text[:27] + "..."


def parse_error(err: UnexpectedInput, path: str, text: str) -> Diagnostic:
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


def _nesting_depth(text: str) -> tuple[int, int]:
    depth = best = 0
    pos = 0
    in_str = False
    for i, ch in enumerate(text):
        if in_str:
            if ch == '"' and text[i - 1] != "\\":
                in_str = False
            elif ch == "\n":
                in_str = False
            continue
        if ch == '"':
            in_str = True
        elif ch in "([{":
            depth += 1
            if depth > best:
                best, pos = depth, i
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
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data[: exc.start].decode("utf-8", "replace"), exc.start)
        raise DiagnosticError([Diagnostic("P004", f"byte 0x{data[exc.start]:02x} is not valid UTF-8",
                                          Span(path, line, col, line, col + 1),
                                          help="save the ruleset as UTF-8")]) from None


def parse_module(text: str, path: str) -> A.Module:
    """Parse a ruleset source into an AST; raise ``DiagnosticError`` with located parse errors."""
    depth, pos = _nesting_depth(text)
    if depth > MAX_NESTING:
        line, col = _line_col(text, pos)
        raise DiagnosticError([Diagnostic("P006", f"brackets nested {depth} deep, more than the limit of {MAX_NESTING}",
                                          Span(path, line, col, line, col + 1))])
    try:
        tree = parser().parse(text)
    except UnexpectedInput as err:
        raise DiagnosticError([parse_error(err, path, text)]) from None
    try:
        module = _Builder(path).transform(tree)
    except VisitError as err:
        inner = err.orig_exc
        if isinstance(inner, DiagnosticError):
            raise inner from None
        if isinstance(inner, RecursionError):
            raise DiagnosticError([Diagnostic("P006", "ruleset nested too deeply", Span(path, 1, 1, 1, 2))]) from None
        raise
    except RecursionError:
        raise DiagnosticError([Diagnostic("P006", "ruleset nested too deeply", Span(path, 1, 1, 1, 2))]) from None
    assert isinstance(module, A.Module)
    return module


def _unquote(tok: Token, path: str) -> str:
    text = str(tok)
    if text.startswith("r"):
        return text[2:-1]
    try:
        value = pyast.literal_eval(text)
    except (ValueError, SyntaxError):
        raise DiagnosticError([Diagnostic("P001", f"invalid string literal {text}", _tok_span(tok, path),
                                          help="escapes allowed: \\\\ \\\" \\n \\t \\uXXXX")]) from None
    if not isinstance(value, str):
        raise DiagnosticError([Diagnostic("P001", f"invalid string literal {text}", _tok_span(tok, path))])
    return value


def _tok_span(tok: Token, path: str) -> Span:
    return Span(path, tok.line or 0, tok.column or 0, tok.end_line or tok.line or 0, tok.end_column or tok.column or 0)


class _Builder(Transformer):  # type: ignore[type-arg]
    """Parse tree -> AST. Each method receives the node's meta (positions) and children."""

    def __init__(self, path: str):
        super().__init__()
        self.path = path

    def _s(self, meta: Any) -> Span:
        if getattr(meta, "empty", True):
            return Span(self.path)
        return Span(self.path, meta.line, meta.column, meta.end_line, meta.end_column)

    def _str(self, tok: Token) -> str:
        return _unquote(tok, self.path)

    # -- top level
    @v_args(meta=True)
    def start(self, meta: Any, items: list[Any]) -> A.Module:
        kinds = (A.Header, A.Extends, A.Import, A.Clauses, A.Schema, A.CellOverride)
        directives = tuple(i for i in items if isinstance(i, kinds))
        decls = tuple(i for i in items if not isinstance(i, kinds))
        return A.Module(self.path, directives, decls, self._s(meta))

    @v_args(meta=True)
    def header(self, meta: Any, c: list[Any]) -> A.Header:
        return A.Header(c[0], self._str(c[1]) if c[1] is not None else None, self._s(meta))

    def dotted(self, c: list[Token]) -> str:
        return ".".join(str(t) for t in c)

    @v_args(meta=True)
    def extends(self, meta: Any, c: list[Any]) -> A.Extends:
        return A.Extends(self._str(c[0]), self._s(meta))

    @v_args(meta=True)
    def import_(self, meta: Any, c: list[Any]) -> A.Import:
        return A.Import(self._str(c[0]), str(c[1]), self._s(meta))

    @v_args(meta=True)
    def clauses(self, meta: Any, c: list[Any]) -> A.Clauses:
        return A.Clauses(self._str(c[0]), self._s(meta))

    @v_args(meta=True)
    def schema_decl(self, meta: Any, c: list[Any]) -> A.Schema:
        return A.Schema(self._str(c[0]), self._s(meta))

    def cite(self, c: list[Token]) -> tuple[str, ...]:
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

    @v_args(meta=True)
    def enum_decl(self, meta: Any, c: list[Any]) -> A.EnumDecl:
        ov, c = self._split(c)
        name, cites, members = str(c[0]), self._cites(c[1]), tuple(str(t) for t in c[2:])
        return A.EnumDecl(name, members, cites, ov, self._s(meta))

    @v_args(meta=True)
    def record_decl(self, meta: Any, c: list[Any]) -> A.RecordDecl:
        ov, c = self._split(c)
        fields = tuple(f for f in c[1:] if f is not None)
        return A.RecordDecl(str(c[0]), fields, ov, self._s(meta))

    @v_args(meta=True)
    def field_decl(self, meta: Any, c: list[Any]) -> A.FieldDecl:
        return A.FieldDecl(str(c[0]), c[2], c[1] is not None, self._s(meta))

    @v_args(meta=True)
    def input_decl(self, meta: Any, c: list[Any]) -> A.InputDecl:
        ov, c = self._split(c)
        return A.InputDecl(str(c[0]), c[1], self._str(c[2]), c[3], self._cites(c[4]), ov, self._s(meta))

    def default(self, c: list[Any]) -> Any:
        return c[0]

    @v_args(meta=True)
    def const_decl(self, meta: Any, c: list[Any]) -> A.ConstDecl:
        ov, c = self._split(c)
        return A.ConstDecl(str(c[0]), c[1], self._cites(c[2]), c[3], ov, self._s(meta))

    def type_ann(self, c: list[Any]) -> A.TypeRef:
        return c[0]  # type: ignore[no-any-return]

    def ret(self, c: list[Any]) -> A.TypeRef:
        return c[0]  # type: ignore[no-any-return]

    @v_args(meta=True)
    def type(self, meta: Any, c: list[Any]) -> A.TypeRef:
        optional = isinstance(c[-1], Token) and c[-1].type == "QMARK"
        return A.TypeRef(str(c[0]), tuple(p for p in c[1:] if isinstance(p, A.TypeRef)), optional, self._s(meta))

    @v_args(meta=True)
    def table_decl(self, meta: Any, c: list[Any]) -> A.TableDecl:
        ov, c = self._split(c)
        name, params, ret, cites, body = str(c[0]), c[1], c[2], self._cites(c[3]), c[4]
        if isinstance(body, _Grid):
            return A.TableDecl(name, params, ret, cites, body.rows, None, ov, self._s(meta))
        return A.TableDecl(name, params, ret, cites, None, body, ov, self._s(meta))

    def grid(self, rows: list[tuple[Any, ...]]) -> "_Grid":
        return _Grid(tuple(rows))

    def grid_row(self, cells: list[Any]) -> tuple[Any, ...]:
        return tuple(cells)

    @v_args(meta=True)
    def absent(self, meta: Any, c: list[Any]) -> A.Absent:
        return A.Absent(self._s(meta))

    @v_args(meta=True)
    def cell_override(self, meta: Any, c: list[Any]) -> A.CellOverride:
        return A.CellOverride(str(c[0]), tuple(c[1:-2]), self._cites(c[-2]), c[-1], self._s(meta))

    @v_args(meta=True)
    def def_decl(self, meta: Any, c: list[Any]) -> A.DefDecl:
        ov, c = self._split(c)
        kind, name, params, ret, cites, body = c
        return A.DefDecl(kind, str(name), params, ret, self._cites(cites), body, ov, self._s(meta))

    def defkind(self, c: list[Token]) -> str:
        return str(c[0])

    @v_args(meta=True)
    def decision_decl(self, meta: Any, c: list[Any]) -> A.DecisionDecl:
        ov, c = self._split(c)
        return A.DecisionDecl(str(c[0]), c[1], self._cites(c[2]), c[3], ov, self._s(meta))

    @v_args(meta=True)
    def cycle_decl(self, meta: Any, c: list[Any]) -> A.CycleDecl:
        ov, c = self._split(c)
        return A.CycleDecl(str(c[0]), self._cites(c[1]), tuple(c[2:]), ov, self._s(meta))

    @v_args(meta=True)
    def policy_when(self, meta: Any, c: list[Any]) -> A.Policy:
        return A.Policy(c[0], c[1], c[2], self._cites(c[3]), self._s(meta))

    @v_args(meta=True)
    def policy_otherwise(self, meta: Any, c: list[Any]) -> A.Policy:
        return A.Policy(None, c[0], c[1], self._cites(c[2]), self._s(meta))

    @v_args(meta=True)
    def procedure_decl(self, meta: Any, c: list[Any]) -> A.ProcedureDecl:
        ov, c = self._split(c)
        return A.ProcedureDecl(str(c[0]), c[1] or (), self._cites(c[2]), tuple(c[3:]), ov, self._s(meta))

    @v_args(meta=True)
    def query_decl(self, meta: Any, c: list[Any]) -> A.QueryDecl:
        ov, c = self._split(c)
        return A.QueryDecl(str(c[0]), c[1] or (), c[2], c[3], ov, self._s(meta))

    def paramlist(self, c: list[Any]) -> tuple[A.Param, ...]:
        return c[0] if c and c[0] is not None else ()  # type: ignore[no-any-return]

    def params(self, c: list[A.Param]) -> tuple[A.Param, ...]:
        return tuple(c)

    @v_args(meta=True)
    def param(self, meta: Any, c: list[Any]) -> A.Param:
        return A.Param(str(c[0]), c[1], self._s(meta))

    # -- statements
    def block(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(c)

    @v_args(meta=True)
    def step(self, meta: Any, c: list[Any]) -> A.Step:
        return A.Step(str(c[0]), self._cites(c[1]), c[2], self._s(meta))

    @v_args(meta=True)
    def var_stmt(self, meta: Any, c: list[Any]) -> A.Var:
        return A.Var(str(c[0]), c[1], self._s(meta))

    @v_args(meta=True)
    def assign(self, meta: Any, c: list[Any]) -> A.Assign:
        return A.Assign(str(c[0]), c[1], self._s(meta))

    @v_args(meta=True)
    def let_stmt(self, meta: Any, c: list[Any]) -> A.LetStmt:
        return A.LetStmt(str(c[0]), c[1], self._s(meta))

    @v_args(meta=True)
    def if_stmt(self, meta: Any, c: list[Any]) -> A.IfStmt:
        branches = [(c[0], c[1])]
        otherwise = None
        for extra in c[2:]:
            if extra is None:
                continue
            if isinstance(extra, _Else):
                otherwise = extra.body
            else:
                branches.append(extra)
        return A.IfStmt(tuple(branches), otherwise, self._s(meta))

    def elif_block(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    def else_block(self, c: list[Any]) -> "_Else":
        return _Else(c[0])

    @v_args(meta=True)
    def for_stmt(self, meta: Any, c: list[Any]) -> A.For:
        return A.For(str(c[0]), c[1], c[2], c[3], self._s(meta))

    @v_args(meta=True)
    def goto(self, meta: Any, c: list[Any]) -> A.Goto:
        return A.Goto(str(c[0]), self._s(meta))

    @v_args(meta=True)
    def stop(self, meta: Any, c: list[Any]) -> A.Stop:
        return A.Stop(self._s(meta))

    @v_args(meta=True)
    def break_(self, meta: Any, c: list[Any]) -> A.Break:
        return A.Break(self._s(meta))

    @v_args(meta=True)
    def continue_(self, meta: Any, c: list[Any]) -> A.Continue:
        return A.Continue(self._s(meta))

    @v_args(meta=True)
    def emit(self, meta: Any, c: list[Any]) -> A.Emit:
        return A.Emit(self._str(c[0]), c[1] or (), self._cites(c[2]), self._s(meta))

    def payload(self, c: list[Any]) -> tuple[Any, ...]:
        return tuple(i for i in c if i is not None)

    @v_args(meta=True)
    def require(self, meta: Any, c: list[Any]) -> A.Require:
        return A.Require(c[0], self._str(c[1]), self._cites(c[2]), self._s(meta))

    @v_args(meta=True)
    def reject(self, meta: Any, c: list[Any]) -> A.Reject:
        return A.Reject(self._str(c[0]), self._cites(c[1]), self._s(meta))

    # -- expressions
    @v_args(meta=True)
    def let_expr(self, meta: Any, c: list[Any]) -> A.Let:
        return A.Let(str(c[0]), c[1], c[2], self._s(meta))

    @v_args(meta=True)
    def if_expr(self, meta: Any, c: list[Any]) -> A.If:
        branches = [(c[0], c[1])] + [b for b in c[2:-1]]
        return A.If(tuple(branches), c[-1], self._s(meta))

    def elif_expr(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    @v_args(meta=True)
    def lambda_(self, meta: Any, c: list[Any]) -> A.Lambda:
        return A.Lambda(c[0] or (), c[1], self._s(meta))

    @v_args(meta=True)
    def or_chain(self, meta: Any, c: list[Any]) -> Any:
        return c[0] if len(c) == 1 else A.BoolOp("or", tuple(c), self._s(meta))

    @v_args(meta=True)
    def and_chain(self, meta: Any, c: list[Any]) -> Any:
        return c[0] if len(c) == 1 else A.BoolOp("and", tuple(c), self._s(meta))

    @v_args(meta=True)
    def not_(self, meta: Any, c: list[Any]) -> A.Not:
        return A.Not(c[0], self._s(meta))

    @v_args(meta=True)
    def compare(self, meta: Any, c: list[Any]) -> A.Compare:
        return A.Compare(str(c[1]), c[0], c[2], self._s(meta))

    def cmp_op(self, c: list[Token]) -> str:
        return str(c[0])

    def add_op(self, c: list[Token]) -> str:
        return str(c[0])

    def mul_op(self, c: list[Token]) -> str:
        return str(c[0])

    @v_args(meta=True)
    def member(self, meta: Any, c: list[Any]) -> A.Compare:
        return A.Compare("in", c[0], c[1], self._s(meta))

    @v_args(meta=True)
    def not_member(self, meta: Any, c: list[Any]) -> A.Compare:
        return A.Compare("notin", c[0], c[1], self._s(meta))

    @v_args(meta=True)
    def coalesce(self, meta: Any, c: list[Any]) -> A.BinOp:
        return A.BinOp("??", c[0], c[1], self._s(meta))

    @v_args(meta=True)
    def binop(self, meta: Any, c: list[Any]) -> A.BinOp:
        return A.BinOp(str(c[1]), c[0], c[2], self._s(meta))

    @v_args(meta=True)
    def neg(self, meta: Any, c: list[Any]) -> Any:
        if isinstance(c[0], A.Int):
            return A.Int(-c[0].value, self._s(meta))
        return A.Neg(c[0], self._s(meta))

    @v_args(meta=True)
    def call(self, meta: Any, c: list[Any]) -> A.Call:
        func, args = c[0], c[1]
        if args is None:
            return A.Call(func, (), (), self._s(meta))
        if isinstance(args, _GenArg):
            gen = A.Comp("gen", args.elem, args.fors, None, args.span)
            return A.Call(func, (gen,), (), self._s(meta))
        pos = tuple(a for a in args if not isinstance(a, _KwArg))
        kws = tuple((a.name, a.value) for a in args if isinstance(a, _KwArg))
        return A.Call(func, pos, kws, self._s(meta))

    def args(self, c: list[Any]) -> list[Any]:
        return c

    @v_args(meta=True)
    def gen_arg(self, meta: Any, c: list[Any]) -> "_GenArg":
        return _GenArg(c[0], tuple(c[1:]), self._s(meta))

    def kwarg(self, c: list[Any]) -> "_KwArg":
        return _KwArg(str(c[0]), c[1])

    @v_args(meta=True)
    def field(self, meta: Any, c: list[Any]) -> A.Field:
        return A.Field(c[0], str(c[1]), self._s(meta))

    @v_args(meta=True)
    def index(self, meta: Any, c: list[Any]) -> A.Index:
        return A.Index(c[0], tuple(c[1:]), self._s(meta))

    @v_args(meta=True)
    def with_(self, meta: Any, c: list[Any]) -> A.With:
        return A.With(c[0], tuple(i for i in c[1:] if i is not None), self._s(meta))

    @v_args(meta=True)
    def int_(self, meta: Any, c: list[Token]) -> A.Int:
        text = str(c[0])
        if len(text) > MAX_INT_DIGITS:
            raise DiagnosticError([Diagnostic("C023", f"integer literal with {len(text)} digits, more than {MAX_INT_DIGITS}",
                                              _tok_span(c[0], self.path))])
        return A.Int(int(text), self._s(meta))

    @v_args(meta=True)
    def str_(self, meta: Any, c: list[Token]) -> A.Str:
        return A.Str(self._str(c[0]), False, self._s(meta))

    @v_args(meta=True)
    def raw_(self, meta: Any, c: list[Token]) -> A.Str:
        return A.Str(self._str(c[0]), True, self._s(meta))

    @v_args(meta=True)
    def dice(self, meta: Any, c: list[Token]) -> A.Dice:
        n, s = str(c[0]).split("d")
        if len(n) > 4 or len(s) > 4:
            raise DiagnosticError([Diagnostic("C023", f"dice `{c[0]}` too large", _tok_span(c[0], self.path))])
        return A.Dice(int(n), int(s), self._s(meta))

    @v_args(meta=True)
    def true(self, meta: Any, c: list[Any]) -> A.Bool:
        return A.Bool(True, self._s(meta))

    @v_args(meta=True)
    def false(self, meta: Any, c: list[Any]) -> A.Bool:
        return A.Bool(False, self._s(meta))

    @v_args(meta=True)
    def none(self, meta: Any, c: list[Any]) -> A.NoneLit:
        return A.NoneLit(self._s(meta))

    @v_args(meta=True)
    def name(self, meta: Any, c: list[Token]) -> A.Name:
        return A.Name(str(c[0]), self._s(meta))

    @v_args(meta=True)
    def list_(self, meta: Any, c: list[Any]) -> A.ListLit:
        return A.ListLit(tuple(i for i in c if i is not None), self._s(meta))

    @v_args(meta=True)
    def list_comp(self, meta: Any, c: list[Any]) -> A.Comp:
        return A.Comp("list", c[0], tuple(c[1:]), None, self._s(meta))

    @v_args(meta=True)
    def empty_record(self, meta: Any, c: list[Any]) -> A.RecordLit:
        return A.RecordLit((), self._s(meta))

    @v_args(meta=True)
    def record(self, meta: Any, c: list[Any]) -> A.RecordLit:
        return A.RecordLit(tuple(c), self._s(meta))

    def rec_item(self, c: list[Any]) -> tuple[str, Any]:
        key = c[0]
        return (self._str(key) if key.type == "STRING" else str(key), c[1])

    @v_args(meta=True)
    def set_(self, meta: Any, c: list[Any]) -> A.SetLit:
        return A.SetLit(tuple(c), self._s(meta))

    @v_args(meta=True)
    def set_comp(self, meta: Any, c: list[Any]) -> A.Comp:
        return A.Comp("set", c[0], tuple(c[1:]), None, self._s(meta))

    @v_args(meta=True)
    def map_(self, meta: Any, c: list[Any]) -> A.MapLit:
        return A.MapLit(tuple(c), self._s(meta))

    def map_item(self, c: list[Any]) -> tuple[Any, Any]:
        return (c[0], c[1])

    @v_args(meta=True)
    def map_comp(self, meta: Any, c: list[Any]) -> A.Comp:
        return A.Comp("map", c[1], tuple(c[2:]), c[0], self._s(meta))

    @v_args(meta=True)
    def comp_for(self, meta: Any, c: list[Any]) -> A.CompFor:
        names = tuple(str(t) for t in c[:2] if t is not None)
        return A.CompFor(names, c[2], c[3], self._s(meta))


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
    return isinstance(obj, (Tree, Token))

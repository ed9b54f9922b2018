"""``ruleval fmt``: one canonical layout for ruleset files.

A token-stream formatter: the tokens come from the same contextual LALR lexer the parser uses, and
comments (which the grammar ignores) are recovered from the source text between tokens. Line
breaks are the author's; everything else is canonical: indentation by bracket nesting (2 spaces,
one level per line that opens brackets, +2 for a continued statement), one space around binary
operators and after commas, no trailing whitespace, at most one blank line in a row, table grids
with aligned columns, and trailing comments two spaces after the code.

The layout depends only on the tokens and on where lines break, and formatting keeps both, so
``fmt(fmt(x)) == fmt(x)``. After formatting, both texts are parsed and their ASTs compared (spans
are not part of AST equality); a difference is refused with an ``I001`` diagnostic.
"""

from __future__ import annotations

import argparse
import difflib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO


from ..core.confine import write_atomic
from ..core.diagnostics import Diagnostic, DiagnosticError, Span, one_line
from ..lang.loader import Loader
from ..lang.syntax import KEYWORDS, RefusedSource, decode_source, parse_module, parse_with_tokens

INDENT = 2
_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")", "]", "}"}
# Declarations that start a top-level item.
_DECL_STARTS = {"ruleset", "extends", "import", "clauses", "schema", "enum", "record", "input", "const", "table",
                "def", "rule", "decision", "cycle", "procedure", "query", "override"}
# Items whose `{` opens a block of statements, rows or members rather than an expression.
_BLOCK_HEADS = {"procedure", "cycle", "enum", "record", "table", "step", "if", "elif", "else", "for", "}", "override"}
_STMT_STARTS = {"step", "var", "let", "if", "for", "goto", "stop", "break", "continue", "emit", "require", "reject",
                "when", "otherwise"}
# Tokens that cannot begin a statement: a line starting with one continues the previous line.
_CONTINUING = {"+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "??", "=", ":=", "=>", "->", ".",
               "and", "or", "then", "else", "elif", "with", "cite", "in", "as", "at", "default", "settle", ")", "]"}
_ENDERS_TYPES = {"NAME", "INT", "STRING", "RAWSTRING", "DICE"}
_ENDERS_TEXT = {")", "]", "}", "true", "false", "none", "stop", "break", "continue", "?"}


@dataclass
class _Tok:
    text: str
    kind: str  # lark terminal type
    block: bool = False  # for braces: a block of statements/members rather than an expression
    unary: bool = False  # for `-`

    @property
    def keyword(self) -> bool:
        return self.kind != "NAME" and self.text in KEYWORDS


@dataclass
class _Line:
    toks: list[_Tok] = field(default_factory=list)
    comment: str | None = None
    indent: int = 0
    orig_indent: int = 0


@dataclass
class _Ctx:
    opener: str  # "" for the top level
    block: bool
    inner: int  # indentation of the items inside
    opener_line_indent: int
    last: _Tok | None = None  # last token seen directly in this context
    stmt_first: str = ""
    stmt_eq: bool = False
    cont_fmt: int | None = None  # indentation of the previous continuation line, formatted / original
    cont_orig: int = 0


# ---------------------------------------------------------------- tokens and lines


def _lines(text: str, tokens: list[Any]) -> list[_Line | None]:
    """The source as lines of tokens; ``None`` is a blank line. Comment-only lines have no tokens."""
    out: list[_Line | None] = []
    cur = _Line()
    pos = 0

    def gap(chunk: str, last: bool) -> None:
        nonlocal cur
        segments = chunk.split("\n")
        for i, seg in enumerate(segments):
            if i > 0:
                out.append(cur if (cur.toks or cur.comment is not None) else None)
                cur = _Line(orig_indent=len(seg.expandtabs(4)) - len(seg.expandtabs(4).lstrip()))
            hash_at = seg.find("#")
            if hash_at >= 0:
                cur.comment = seg[hash_at:].rstrip()

    for tok in tokens:
        start = tok.start_pos or 0
        gap(text[pos:start], False)
        cur.toks.append(_Tok(str(tok), tok.type))
        pos = tok.end_pos or start
    gap(text[pos:], True)
    if cur.toks or cur.comment is not None:
        out.append(cur)
    return out


def _is_ender(t: _Tok | None) -> bool:
    if t is None:
        return False
    if t.text == "}":
        return not t.block
    return t.kind in _ENDERS_TYPES or t.text in _ENDERS_TEXT


def _space(p: _Tok, c: _Tok) -> str:
    pv, cv = p.text, c.text
    if pv in ("(", "[", "."):
        return ""
    if pv == "{":
        return " " if p.block and cv != "}" else ""
    if cv == "}":
        return " " if c.block else ""
    if cv in (")", "]", ",", ";", ".", ":", "?"):
        return ""
    if cv == "|" or pv == "|":
        return " "
    if pv == "-" and p.unary:
        return ""
    if cv == "(":
        return "" if (p.kind == "NAME" or pv in (")", "]", "fn")) else " "
    if cv == "[":
        return "" if (p.kind in ("NAME", "STRING") or pv in (")", "]", "}")) else " "
    return " "


def _join(toks: list[_Tok]) -> str:
    out = ""
    prev: _Tok | None = None
    for t in toks:
        out += (_space(prev, t) if prev is not None else "") + t.text
        prev = t
    return out


# ---------------------------------------------------------------- layout


def _new_item(ctx: _Ctx, first: _Tok) -> bool:
    prev = ctx.last
    if prev is None or prev.text in ("(", "[", "{"):
        return True
    if not ctx.opener:
        return first.kind != "NAME" and first.text in _DECL_STARTS and prev.text != "override"
    if first.text == "|":
        return True
    if prev.text in (",", ";"):  # `;` ends a `let` binding: its body is the next item
        return True
    if not ctx.block:
        return False
    if first.text in ("else", "elif") and prev.text == "}":
        return True
    if first.text in _CONTINUING or (first.keyword and first.text not in _STMT_STARTS):
        return False
    return prev.text == "}" or _is_ender(prev)


def _layout(lines: list[_Line | None]) -> None:
    """Give every code line its indentation and mark braces (block or expression) and unary minus."""
    stack = [_Ctx("", True, 0, 0)]
    prev_tok: _Tok | None = None
    for line in lines:
        if line is None or not line.toks:
            continue
        first = line.toks[0]
        ctx = stack[-1]
        if first.text in _CLOSERS and len(stack) > 1:
            line.indent = ctx.opener_line_indent
        elif _new_item(ctx, first):
            line.indent = ctx.inner
            ctx.cont_fmt = None
        else:
            base = ctx.inner + INDENT
            if ctx.cont_fmt is None:
                line.indent = base
            else:
                delta = line.orig_indent - ctx.cont_orig
                delta = min(INDENT, delta - delta % INDENT)
                line.indent = max(base, ctx.cont_fmt + delta)
            ctx.cont_fmt, ctx.cont_orig = line.indent, line.orig_indent
        for tok in line.toks:
            ctx = stack[-1]
            if tok.text == "-":
                tok.unary = not _is_ender(prev_tok)
            if tok.text in _OPENERS:
                block = tok.text == "{" and ctx.block and ctx.stmt_first in _BLOCK_HEADS and not ctx.stmt_eq
                tok.block = block
                ctx.last = tok
                stack.append(_Ctx(tok.text, block, line.indent + INDENT, line.indent))
            elif tok.text in _CLOSERS and len(stack) > 1:
                inner = stack.pop()
                tok.block = inner.block
                stack[-1].last = tok
            else:
                if not ctx.opener:  # top level: only a declaration starts an item
                    starts = ctx.last is None or (tok.text in _DECL_STARTS and tok.kind != "NAME"
                                                  and ctx.last.text != "override")
                else:
                    starts = ctx.last is None or ctx.last.text in ("{", ",") or (
                        ctx.block and tok.kind != "NAME"
                        and (tok.text in _STMT_STARTS or (ctx.last.text == "}" and tok.text in ("else", "elif"))))
                if starts:
                    ctx.stmt_first, ctx.stmt_eq = tok.text, False
                elif tok.text in ("=", ":=", "=>"):
                    ctx.stmt_eq = True
                ctx.last = tok
            prev_tok = tok
        if line.toks[-1].text == "}" and stack[-1].block:
            # `if c { ... }` followed by `else` on the next line: the statement goes on
            stack[-1].stmt_first = "}"


def _grid_cells(toks: list[_Tok]) -> list[list[_Tok]] | None:
    """The cells of a one-line grid row ``| a | b |``, or None if the line is not one."""
    if len(toks) < 2 or toks[0].text != "|" or toks[-1].text != "|":
        return None
    cells: list[list[_Tok]] = []
    cur: list[_Tok] = []
    depth = 0
    for t in toks[1:]:
        if t.text in _OPENERS:
            depth += 1
        elif t.text in _CLOSERS:
            depth -= 1
        if t.text == "|" and depth == 0:
            cells.append(cur)
            cur = []
        else:
            cur.append(t)
    return cells if depth == 0 and not cur else None


def _render(lines: list[_Line | None]) -> str:
    out: list[str] = []
    rendered: list[str | None] = []
    # grids: consecutive one-line rows (comment lines do not break a grid) share column widths
    i = 0
    texts: dict[int, str] = {}
    while i < len(lines):
        group: list[tuple[int, list[list[_Tok]]]] = []
        j = i
        while j < len(lines):
            ln = lines[j]
            if ln is not None and not ln.toks:
                j += 1
                continue
            cells = _grid_cells(ln.toks) if ln is not None else None
            if cells is None:
                break
            group.append((j, cells))
            j += 1
        if group:
            strs = {k: [_join(c) for c in cells] for k, cells in group}
            ncol = max(len(v) for v in strs.values())
            widths = [max((len(v[c]) for v in strs.values() if c < len(v)), default=0) for c in range(ncol)]
            for k, cells_s in strs.items():
                texts[k] = "| " + " | ".join(s.ljust(widths[c]) for c, s in enumerate(cells_s)) + " |"
            i = j
        else:
            i += 1
    next_indent = 0
    for k in range(len(lines) - 1, -1, -1):  # comment-only lines take the indentation of the next code line
        ln = lines[k]
        if ln is None:
            continue
        if ln.toks:
            next_indent = ln.indent
        else:
            ln.indent = next_indent
    for k, ln in enumerate(lines):
        if ln is None:
            rendered.append(None)
            continue
        code = texts[k] if k in texts else _join(ln.toks)
        text = " " * ln.indent + code if ln.toks else " " * ln.indent
        if ln.comment is not None:
            text = (text + "  " + ln.comment) if ln.toks else text + ln.comment
        rendered.append(text.rstrip())
    for r in rendered:
        if r is None:
            if out and out[-1] != "":
                out.append("")
        else:
            out.append(r)
    while out and out[-1] == "":
        out.pop()
    return "\n".join(out) + "\n" if out else ""


# ---------------------------------------------------------------- API


def format_text(text: str, path: str = "<string>") -> str:
    """The canonical layout of a ruleset source. Raises ``DiagnosticError`` on a syntax error, or
    with ``I001`` if the formatted text would not parse to the same AST (a formatter bug). Runs with
    room for deep recursion (``deep.call``: comparing two long chains of `+` recurses); a tree too
    deep even for that is a ``P006`` at its deepest expression."""
    from ..core import deep
    from ..lang.ast import deepest

    try:
        return deep.call(_format_text, text, path)
    except RecursionError:
        depth, span = deepest(deep.call(parse_with_tokens, text, path)[0])
        raise DiagnosticError([Diagnostic("P006", f"expression nested {depth} levels deep, too deep to format",
                                          span if span.line else Span(path, 1, 1, 1, 2),
                                          help="name parts of it with `let` or `def`")]) from None


def _format_text(text: str, path: str) -> str:
    text = text.removeprefix("\ufeff")  # a byte order mark is no part of the layout (nor kept)
    before, tokens = parse_with_tokens(text, path)
    lines = _lines(text, tokens)
    _layout([ln for ln in lines])
    result = _render(lines)
    try:
        after = parse_module(result, path)
    except DiagnosticError as exc:
        raise DiagnosticError([_refusal(path, f"the formatted text does not parse: {exc}")]) from None
    if after != before:
        raise DiagnosticError([_refusal(path, "formatting would change the meaning of the file")])
    return result


def _refusal(path: str, message: str) -> Diagnostic:
    return Diagnostic("I001", message, Span(path, 1, 1, 1, 2),
                      help="the file was left unchanged; this is a bug in `ruleval fmt`, please report it")


def _files(paths: list[str]) -> tuple[list[Path], list[str], list[Diagnostic]]:
    from ..api import ruleset_files

    return ruleset_files(paths)


def cmd_fmt(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..core.exits import EXIT_FINDINGS, EXIT_OK, UsageError
    from ..core.diagnostics import render_all

    files, missing, refused = _files(args.paths)
    if missing:
        raise UsageError(f"`{missing[0]}` not found")
    if not files and not refused:  # a gate that looked at nothing must not pass: a wrong folder would hide every file
        raise UsageError(f"no ruleset (`.rules` file) found in {', '.join(args.paths)}")
    changed = failed = 0
    if refused:  # found in a folder but not under its root, or no regular file: neither read nor written
        err.write(render_all(refused, None, err) + "\n")
    from ..core.confine import display_path

    for f in files:
        shown = display_path(f)  # (as every command shows a path: docs/diagnostics.md, "Paths")
        read: str | None = None  # (a file that does not parse is shown with its line under the error, as `check` shows it)
        try:
            text = read = decode_source(Loader.read_source(f, shown), shown)
            new = format_text(text, shown)
        except DiagnosticError as exc:
            sources = {shown: exc.text} if isinstance(exc, RefusedSource) else {shown: read} if read is not None else None
            err.write(render_all(exc.diagnostics, sources, err) + "\n")
            failed += 1
            continue
        if not (args.write or args.check or args.diff):
            out.write(new)
        if new == text:
            continue
        changed += 1
        if args.diff:  # (headers as git writes them: `a/` and `b/` before the path, an absolute one's `/` left out)
            named = shown.lstrip("/") if os.path.isabs(shown) else shown
            out.writelines(difflib.unified_diff(text.splitlines(True), new.splitlines(True),
                                                f"a/{named}", f"b/{named}"))
        if args.write:
            write_atomic(f, new)  # whole or not at all: a failed write (WriteFailed, U002) leaves the file as it was
            err.write(f"formatted {one_line(shown)}\n")
        elif args.check:
            err.write(f"would reformat {one_line(shown)}\n")
    if args.check or args.write:
        verb = "reformatted" if args.write else "would be reformatted"
        err.write(f"{changed} file{'s' if changed != 1 else ''} {verb}, {len(files) - changed - failed} unchanged"
                  + (f", {failed} with errors" if failed else "") + "\n")
    if failed or refused or (args.check and changed):
        return EXIT_FINDINGS
    return EXIT_OK


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("fmt", help="format ruleset files in the canonical layout")
    p.add_argument("paths", nargs="+", help="ruleset files or folders")
    g = p.add_mutually_exclusive_group()
    g.add_argument("-w", "--write", action="store_true", help="rewrite the files in place")
    g.add_argument("--check", action="store_true", help="exit 1 if any file would change")
    p.add_argument("--diff", action="store_true", help="print a unified diff of the changes")
    commands["fmt"] = cmd_fmt

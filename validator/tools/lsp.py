"""``ruleval lsp``: a language server for ruleset files, over standard input and output.

What an editor gets, each from the stage that already does it:

- diagnostics as you type: ``check``'s own (``api.check_text`` runs the loader, the program's
  checks and the passes on the editor's unsaved text, the other open rulesets' texts included),
  with the same codes, messages and places;
- hover: what a name is, its type, and the text of every clause a definition cites (from the
  ruleset's clause catalogue); on a clause id, that clause's text;
- go to definition: through ``extends`` and imports (``bundled:`` names too), on an ``extends``
  or ``import`` path, on a clause id (its line in the catalogue);
- completion: names in scope, a module's definitions after ``m.``, record fields after ``x.``,
  clause ids inside a ``cite "..."``;
- formatting: ``fmt``'s canonical layout (``fmt.format_text``);
- rename of a definition: in the file, what it extends and is extended by among the open
  rulesets, and the rulesets of the workspace that extend its file.

The protocol is pygls's (an optional dependency: ``pip install 'ruleval[lsp]'``); without it the
command says so and exits 2, like any usage error. Where symbols are is ``symbols``'s business.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TextIO

from ..core.confine import find_root
from ..core.diagnostics import Diagnostic, DiagnosticError, Span
from ..core.exits import EXIT_OK, VERSION, UsageError
if TYPE_CHECKING:
    import asyncio

    from .symbols import Index, Occurrence, Target

CHECK_DELAY = 0.15  # seconds after the last keystroke before a check: a burst of typing is checked once
RENAMEABLE = ("decl", "global", "type", "table", "cycle", "member")


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("lsp", help="run the language server (LSP) on standard input and output, for editors "
                                   "(needs `pip install 'ruleval[lsp]'`)")
    p.add_argument("--stdio", action="store_true", help="talk over standard input and output (the default and only way)")
    commands["lsp"] = cmd_lsp


def cmd_lsp(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    try:
        import lsprotocol.types  # noqa: F401
        import pygls.lsp.server  # noqa: F401
    except ImportError:
        raise UsageError("`ruleval lsp` needs the `pygls` package; install it with `pip install 'ruleval[lsp]'`") from None
    if sys.stdin is None or getattr(sys.stdout, "name", None) in (None, os.devnull):  # (`entry` puts a closed one there)
        raise UsageError("`ruleval lsp` talks to its editor over standard input and output, and one of them is closed")
    _log_without_tracebacks(err)
    build_server().start_io(stdin=HeaderResync(sys.stdin.buffer))  # type: ignore[arg-type]
    return EXIT_OK


READ_PIECE = 1 << 20  # bytes asked of standard input at once for a message's body


class HeaderResync:
    """Standard input as pygls's reader reads it, able to find the next message after a bad header.

    pygls reads header lines until a well-formed ``Content-Length`` and an empty line, then the body.
    After a header it cannot read (``Content-Length: abc``, ``-3``, ``0``, a length shorter than the
    body) it takes the body for header lines, and the body (one line without a line break) swallows
    the next message's ``Content-Length`` line with it: every message after that is lost, the server
    is deaf. Here a header line that *ends* with a well-formed ``Content-Length`` is given from there,
    so the next well-formed message is read (the bad one is lost, as it must be).

    A length *longer* than the body made the body's read take the next message too (both lost). A
    body is read as it arrives, and a ``Content-Length: N`` line met in it ends it there: those bytes
    cannot be part of a JSON body (a raw carriage return stands in no JSON string, and the words
    outside a string are no JSON), so they are the next message, kept for the next reads. We
    chose this over a time limit on a body's read: the next message of a client arrives at once (a
    limit would not stop it being read as part of the body), and a client that sends nothing more
    leaves the server waiting, as it waits between messages. A body read whole never goes through
    ``readline``, so no text inside a message is ever taken for a header."""

    _HEADER = re.compile(rb"Content-Length: \d+\r\n$")
    _NEXT = re.compile(rb"Content-Length: \d+\r\n")

    def __init__(self, raw: Any) -> None:
        self.raw = raw
        self.held = b""  # read past a body that ended early: the start of the next message

    def readline(self) -> bytes:
        line: bytes
        if self.held:
            end = self.held.find(b"\n") + 1
            if end:
                line, self.held = self.held[:end], self.held[end:]
            else:
                line, self.held = self.held + self.raw.readline(), b""
        else:
            line = self.raw.readline()
        m = self._HEADER.search(line)
        return line[m.start():] if m is not None else line

    def read(self, n: int) -> bytes:
        got, self.held = self.held[:n], self.held[n:]
        searched = 0
        while True:
            m = self._NEXT.search(got, max(0, searched - 40))  # (only what came since: a long body is read once)
            if m is not None:  # the body ended early: what follows is the next message
                self.held = got[m.start():] + self.held
                return got[:m.start()]
            searched = len(got)
            want = n - len(got)
            if want <= 0:  # all of it, unless it ends with the start of a header: then see what follows
                start = got.rfind(b"C")
                if start < 0 or not _header_start(got[start:]) or not got[:start].rstrip().endswith((b"}", b"]")):
                    return got
                want = 1
            # what has arrived, not waiting for all of it; asked in pieces, as a length a client got wrong
            # (`Content-Length: 99999999999`) would otherwise have a buffer of that size made for it
            chunk: bytes = self.raw.read1(min(want, READ_PIECE))
            if not chunk:
                return got
            got += chunk


def _header_start(tail: bytes) -> bool:
    """Whether ``tail`` is the beginning of a ``Content-Length: N`` line."""
    head = b"Content-Length: "
    if len(tail) <= len(head):
        return head.startswith(tail)
    return tail.startswith(head) and re.fullmatch(rb"\d*\r?", tail[len(head):]) is not None


def _log_without_tracebacks(err: TextIO) -> None:
    """pygls logs a failed message with its traceback (as ``exc_info`` or formatted into the text);
    the editor's log of the server gets one line with the error instead (a traceback is no message
    for a user)."""
    import logging

    class OneLine(logging.Formatter):
        def format(self, record: logging.LogRecord) -> str:
            exc = record.exc_info[1] if record.exc_info else None
            lines = record.getMessage().splitlines() or [""]
            text = f"ruleval lsp: {record.levelname.lower()}: {lines[0]}"
            if exc is not None:
                return text + f": {type(exc).__name__}: {exc}"
            if any("Traceback" in line for line in lines):  # formatted into the message: the error it ends on
                raised = [m.group(1) for m in map(_RAISED.match, lines) if m]
                return text + (f": {raised[-1]}" if raised else "")
            return text + "".join(f"; {x.strip()}" for x in lines[1:] if x.strip())

    handler = logging.StreamHandler(err)
    handler.setFormatter(OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)


_RAISED = re.compile(r"^[\s|]*([A-Za-z_][\w.]*(?:Error|Exception|Group|Interrupt|Exit)\b.*)$")


def _lines(text: str) -> list[str]:
    return text.split("\n")  # as spans count lines: at "\n" only


class Documents:
    """What the server keeps of the open rulesets: the index of each one's last text that parsed,
    the checks waiting for typing to pause, and the closed files showing their diagnostics."""

    def __init__(self) -> None:
        self.indexes: dict[str, Index] = {}
        self.pending: dict[str, asyncio.TimerHandle] = {}
        # files that are not open but hold diagnostics of an open ruleset's check (a base it extends,
        # a data file it imports): which open ruleset's check published them
        self.foreign: dict[str, str] = {}


def build_server() -> Any:
    """The language server, its features registered (pygls imported here, never at import time)."""
    import asyncio

    from lsprotocol import types as T
    from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams, JsonRpcInvalidRequest
    from pygls.lsp.server import LanguageServer
    from pygls.uris import from_fs_path, to_fs_path
    from urllib.parse import unquote
    from pygls.workspace.position_codec import ServerTextPosition

    from ..lang.loader import display_path
    from . import symbols
    from .symbols import Index

    from pygls.protocol import LanguageServerProtocol
    from pygls.protocol.language_server import lsp_method

    class Protocol(LanguageServerProtocol):  # type: ignore[misc]
        @lsp_method(T.TEXT_DOCUMENT_DID_CHANGE)
        def lsp_text_document__did_change(self, params: T.DidChangeTextDocumentParams) -> Any:
            """A change to a document the client never opened (a client's slip) is taken as its opening, from
            its file's text (a regular file's, bounded; else none), then the change: pygls would have told the
            client of a KeyError, and no notification can be answered with an error."""
            uri = params.text_document.uri
            if unquote(uri) not in self.workspace.text_documents:
                text = text_of(None, str(path_of(uri))) if uri.startswith("file:") else ""
                self.workspace.put_text_document(T.TextDocumentItem(
                    uri, "ruleval" if uri.endswith(".rules") else "", params.text_document.version, text))
            yield from super().lsp_text_document__did_change(params)

    server = LanguageServer("ruleval", VERSION, protocol_cls=Protocol)
    docs = Documents()

    def feature(*how: Any) -> Callable[[Callable[[Any, Any], Any]], Any]:
        """``server.feature``, the handler guarded: an error it did not mean is answered in our words
        (pygls would send the exception's text and its traceback as the answer's data)."""
        def register(handler: Callable[[Any, Any], Any]) -> Any:
            @functools.wraps(handler)
            def guarded(ls: Any, params: Any) -> Any:
                try:
                    return handler(ls, params)
                except JsonRpcException:
                    raise  # already an answer of ours
                except Exception as exc:
                    raise JsonRpcInternalError(
                        f"internal error: {type(exc).__name__}: {exc} (this is a bug in ruleval; please report it "
                        "with the ruleset)") from None
            return server.feature(*how)(guarded)
        return register

    # -- places
    def path_of(uri: str) -> Path:
        return Path(to_fs_path(uri) or uri).resolve()

    def shown_of(uri: str) -> str:
        return display_path(path_of(uri))

    def uri_of(shown: str) -> str:
        return from_fs_path(os.path.realpath(shown)) or shown

    def position(lines: list[str], line: int, col: int) -> Any:
        if line >= len(lines):
            line, col = max(len(lines) - 1, 0), len(lines[-1]) if lines else 0
        return server.workspace.position_codec.position_to_client_units(
            lines, ServerTextPosition(line, min(col, len(lines[line]) if lines else 0)))

    def span_range(span: Span, text: str) -> Any:
        lines = _lines(text)
        if not span.line:
            return T.Range(position(lines, 0, 0), position(lines, 0, 1))
        start = position(lines, span.line - 1, span.col - 1)
        if not span.end_line:
            return T.Range(start, position(lines, span.line - 1, span.col))
        return T.Range(start, position(lines, span.end_line - 1, span.end_col - 1))

    def source_of(uri: str) -> str:
        """The text of the document ``uri``: its buffer if open, else its file (a request about a file that
        cannot be read is answered as a request's bad parameter, not an internal error)."""
        try:
            return server.workspace.get_text_document(uri).source
        except (OSError, ValueError) as exc:
            raise JsonRpcInvalidParams(f"`{uri}` is not open and its file cannot be read: "
                                       f"{getattr(exc, 'strerror', None) or exc}") from None

    def cursor(uri: str, pos: Any) -> tuple[int, int, str]:
        """The server's (line, column) of a client position, and the line's text."""
        lines = _lines(source_of(uri))
        at = server.workspace.position_codec.position_from_client_units(lines, pos)
        return at.line, at.character, lines[at.line] if at.line < len(lines) else ""

    def text_of(index: Index | None, shown: str) -> str:
        text = index.loaded.sources.get(shown) if index is not None else None
        if text is None:
            from ..core import confine
            from ..lang.syntax import MAX_SOURCE_BYTES

            try:  # a regular file, bounded (never a device or a FIFO)
                text = confine.read_bytes(Path(shown), MAX_SOURCE_BYTES).decode("utf-8")
            except (confine.Refused, UnicodeDecodeError):
                text = ""
        return text  # type: ignore[no-any-return]

    def location(index: Index, span: Span) -> Any:
        return T.Location(uri_of(span.file), span_range(span, text_of(index, span.file)))

    # -- checking
    def unsaved() -> dict[str, str]:
        out = {}
        for uri, doc in server.workspace.text_documents.items():
            if uri.startswith("file:") and uri.endswith(".rules"):
                out[str(path_of(uri))] = doc.source
        return out

    def lsp_diagnostic(d: Diagnostic, text: str, index: Index | None) -> Any:
        related = [T.DiagnosticRelatedInformation(location(index, r.span) if index else
                                                  T.Location(uri_of(r.span.file), span_range(r.span, "")), r.message)
                   for r in d.related if r.span.file]
        return T.Diagnostic(
            range=span_range(d.span, text), message=d.message + (f"\nhelp: {d.help}" if d.help else ""),
            severity=T.DiagnosticSeverity.Error if d.is_error else T.DiagnosticSeverity.Warning,
            code=d.code, source="ruleval", related_information=related or None)

    def check(uri: str) -> None:
        docs.pending.pop(uri, None)
        doc = server.workspace.get_text_document(uri)
        from ..api import check_text

        shown = shown_of(uri)
        try:
            rs = check_text(path_of(uri), doc.source, unsaved())
            found = rs.diagnostics
            index: Index | None = Index(rs)
        except Exception as exc:  # a bug must not end the session: it is shown where the file starts
            found = [Diagnostic("I001", f"internal error: {type(exc).__name__}: {exc}", Span(shown, 1, 1, 1, 2),
                                help="this is a bug in ruleval; please report it with the ruleset")]
            index = None
        if index is not None and shown in index.loaded.modules:
            docs.indexes[uri] = index  # (where the text does not parse, the last index that did serves)
        last = docs.indexes.get(uri)
        server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
            uri=uri, version=doc.version,
            diagnostics=[lsp_diagnostic(d, doc.source, last) for d in found if d.span.file == shown]))
        # what the check finds in files that are not open (a base, a data file) is shown on them
        elsewhere: dict[str, list[Diagnostic]] = {}
        for d in found:
            if d.span.file != shown and d.span.file:
                elsewhere.setdefault(uri_of(d.span.file), []).append(d)
        open_uris = set(server.workspace.text_documents)
        for other, owner in list(docs.foreign.items()):
            if owner == uri and other not in elsewhere:
                del docs.foreign[other]
                server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=other, diagnostics=[]))
        for other, diags in elsewhere.items():
            if other in open_uris:
                continue  # an open file's own check speaks for it
            docs.foreign[other] = uri
            text = text_of(last, diags[0].span.file)
            server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(
                uri=other, diagnostics=[lsp_diagnostic(d, text, last) for d in diags]))

    def schedule(uri: str, delay: float) -> None:
        if not uri.endswith(".rules") and server.workspace.get_text_document(uri).language_id != "ruleval":
            return
        old = docs.pending.pop(uri, None)
        if old is not None:
            old.cancel()
        if delay <= 0:
            check(uri)
        else:
            docs.pending[uri] = asyncio.get_running_loop().call_later(delay, check, uri)

    def recheck_dependents(uri: str) -> None:
        """The other open rulesets that read this one (extend or import it) are checked again."""
        shown = shown_of(uri)
        for other, index in list(docs.indexes.items()):
            if other != uri and shown in index.loaded.modules:
                schedule(other, CHECK_DELAY)

    @feature(T.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Any, params: T.DidOpenTextDocumentParams) -> None:
        schedule(params.text_document.uri, 0)

    @feature(T.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Any, params: T.DidChangeTextDocumentParams) -> None:
        schedule(params.text_document.uri, CHECK_DELAY)
        recheck_dependents(params.text_document.uri)

    @feature(T.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: Any, params: T.DidSaveTextDocumentParams) -> None:
        recheck_dependents(params.text_document.uri)

    @feature(T.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def files_changed(ls: Any, params: T.DidChangeWatchedFilesParams) -> None:
        """A catalogue, a data file or a closed ruleset changed on disk: the open rulesets are checked again."""
        for uri in list(docs.indexes):
            schedule(uri, CHECK_DELAY)

    @feature(T.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Any, params: T.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        pending = docs.pending.pop(uri, None)
        if pending is not None:
            pending.cancel()
        docs.indexes.pop(uri, None)
        for other, owner in list(docs.foreign.items()):
            if owner == uri:
                del docs.foreign[other]
                server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=other, diagnostics=[]))
        server.text_document_publish_diagnostics(T.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    # -- what is under the cursor
    def lookup(uri: str, pos: Any) -> tuple[Index | None, str, Occurrence | None, str, int]:
        index = docs.indexes.get(uri)
        line, col, line_text = cursor(uri, pos)
        shown = shown_of(uri)
        occ = index.at(shown, line, col) if index is not None else None
        return index, shown, occ, line_text, col

    @feature(T.TEXT_DOCUMENT_HOVER)
    def hover(ls: Any, params: T.HoverParams) -> Any:
        index, shown, occ, line_text, col = lookup(params.text_document.uri, params.position)
        if index is None:
            return None
        if occ is not None:
            target = index.meaning(shown, occ)
            if target is None:
                return None
            return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, index.hover(target)),
                           span_range(occ.span, text_of(index, shown)))
        quoted = symbols.string_at(line_text, col)
        text = index.clause(shown, quoted) if quoted is not None else None
        return T.Hover(T.MarkupContent(T.MarkupKind.Markdown, text)) if text else None

    @feature(T.TEXT_DOCUMENT_DEFINITION)
    def definition(ls: Any, params: T.DefinitionParams) -> Any:
        index, shown, occ, line_text, col = lookup(params.text_document.uri, params.position)
        if index is None:
            return None
        if occ is not None:
            target = index.meaning(shown, occ)
            span = index.definition(target) if target is not None else None
            return location(index, span) if span is not None else None
        quoted = symbols.string_at(line_text, col)
        if quoted is None:
            return None
        if re.match(r"\s*(extends|import|clauses|schema)\b", line_text):
            found = symbols.resolve_reference(quoted, str(path_of(params.text_document.uri)))
            return T.Location(from_fs_path(str(found)), T.Range(T.Position(0, 0), T.Position(0, 0))) if found else None
        ns = index.namespace_of(shown)
        if ns.clauses and quoted in ns.clauses and ns.clauses_path:
            catalogue = text_of(index, ns.clauses_path)
            m = re.search(rf"^\s*[\"']?{re.escape(quoted)}[\"']?\s*:", catalogue, flags=re.M)
            line = catalogue.count("\n", 0, m.start()) + 1 if m else 1
            col = len(m.group(0)) - len(m.group(0).lstrip()) + 1 if m else 1
            return location(index, Span(ns.clauses_path, line, col, line, col + len(quoted)))
        return None

    @feature(T.TEXT_DOCUMENT_COMPLETION, T.CompletionOptions(trigger_characters=[".", '"']))
    def completion(ls: Any, params: T.CompletionParams) -> Any:
        uri = params.text_document.uri
        index = docs.indexes.get(uri)
        if index is None:
            return T.CompletionList(is_incomplete=False, items=[])
        line, col, line_text = cursor(uri, params.position)
        kinds = {"clause": T.CompletionItemKind.Reference, "field": T.CompletionItemKind.Field,
                 "local": T.CompletionItemKind.Variable, "builtin": T.CompletionItemKind.Function,
                 "keyword": T.CompletionItemKind.Keyword, "module": T.CompletionItemKind.Module,
                 "data": T.CompletionItemKind.Constant, "enum member": T.CompletionItemKind.EnumMember,
                 "record": T.CompletionItemKind.Struct, "enum": T.CompletionItemKind.Enum,
                 "const": T.CompletionItemKind.Constant, "input": T.CompletionItemKind.Variable}
        items = [T.CompletionItem(label=label, kind=kinds.get(kind, T.CompletionItemKind.Function),
                                  detail=f"{kind}: {detail}" if detail else kind)
                 for label, kind, detail in index.completions(shown_of(uri), line_text, line, col)]
        return T.CompletionList(is_incomplete=False, items=items)

    @feature(T.TEXT_DOCUMENT_FORMATTING)
    def formatting(ls: Any, params: T.DocumentFormattingParams) -> Any:
        from .fmt import format_text

        source = source_of(params.text_document.uri)
        try:
            new = format_text(source, shown_of(params.text_document.uri))
        except DiagnosticError:
            return None  # a text that does not parse is left as it is (its diagnostics say why)
        if new == source:
            return []
        lines = _lines(source)
        end = position(lines, len(lines) - 1, len(lines[-1]))
        return [T.TextEdit(T.Range(T.Position(0, 0), end), new)]

    # -- renaming
    def rename_target(uri: str, pos: Any) -> tuple[Index, Occurrence, Target]:
        index, shown, occ, _, _ = lookup(uri, pos)
        target = index.meaning(shown, occ) if index is not None and occ is not None and occ.kind in RENAMEABLE else None
        if index is None or occ is None or target is None or target.kind != "def":
            raise JsonRpcInvalidRequest("only a definition of the ruleset can be renamed")
        return index, occ, target

    @feature(T.TEXT_DOCUMENT_PREPARE_RENAME)
    def prepare_rename(ls: Any, params: T.PrepareRenameParams) -> Any:
        index, occ, _ = rename_target(params.text_document.uri, params.position)
        return span_range(occ.span, text_of(index, occ.span.file))

    @feature(T.TEXT_DOCUMENT_RENAME)
    def rename(ls: Any, params: T.RenameParams) -> Any:
        uri = params.text_document.uri
        index, occ, target = rename_target(uri, params.position)
        new = params.new_name
        if not symbols.is_identifier(new):
            raise JsonRpcInvalidRequest(f"`{new}` is not a name (a letter or `_`, then letters, digits, `_`; no keyword)")
        assert target.ns is not None
        if index.global_target(target.ns, new) is not None:  # a definition, data, module, enum member, built-in
            raise JsonRpcInvalidRequest(f"`{new}` is already defined")
        base = index.base_file(target)
        folders = [to_fs_path(f.uri) for f in server.workspace.folders.values()]
        roots = [Path(os.path.realpath(f)) for f in folders if f] or [find_root(path_of(uri).parent)]
        spans = index.rename_spans(target.name, base)
        texts = {shown: text_of(index, shown) for shown in spans}
        read = [index]
        for f in _workspace_rulesets(roots, set(index.loaded.modules)):
            other = _other_index(f, target.name, unsaved())
            if other is not None:
                read.append(other)
                for shown, found in other.rename_spans(target.name, base).items():
                    spans.setdefault(shown, []).extend(s for s in found if s not in spans.get(shown, []))
                    texts.setdefault(shown, text_of(other, shown))
        outside = [s for s in spans if not any(_inside(s, r) for r in roots)]
        if outside:
            raise JsonRpcInvalidRequest(f"`{target.name}` is also written in `{outside[0]}`, outside the workspace")
        hidden = next((h for h in (ix.captured(new, spans) for ix in read) if h is not None), None)
        if hidden is not None:
            raise JsonRpcInvalidRequest(f"a local `{new}` would hide the renamed `{target.name}` at {hidden}")
        return T.WorkspaceEdit(changes={
            uri_of(shown): [T.TextEdit(span_range(s, texts[shown]), new) for s in sorted(set(found))]
            for shown, found in spans.items()})

    return server


def _inside(shown: str, root: Path) -> bool:
    return os.path.realpath(shown).startswith(str(root) + os.sep)


def _workspace_rulesets(roots: list[Path], seen: set[str]) -> list[Path]:
    from ..lang.loader import display_path
    from . import symbols

    out = []
    for root in roots:
        for f in symbols.ruleset_files_under(root):
            if display_path(f.resolve()) not in seen:
                out.append(f)
    return out


def _other_index(path: Path, name: str, unsaved: dict[str, str]) -> Index | None:
    """A workspace ruleset that may write ``name``, checked (with the editor's texts), or None."""
    from ..api import check_text
    from .symbols import Index

    from ..core import confine
    from ..lang.syntax import MAX_SOURCE_BYTES

    real = os.path.realpath(path)
    try:  # a regular file, bounded, opened without blocking (never a device or a FIFO)
        text = unsaved.get(real) or confine.read_bytes(path, MAX_SOURCE_BYTES).decode("utf-8")
    except (confine.Refused, UnicodeDecodeError):
        return None
    if not re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", text) or \
            not re.search(r"^\s*(extends|import)\b", text, flags=re.M):
        return None  # it does not write the name, or reads no other ruleset: nothing to rename there
    try:
        return Index(check_text(path, text, unsaved))
    except Exception:  # a file that cannot be read is no place to rename in
        return None

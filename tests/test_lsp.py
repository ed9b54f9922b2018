"""`ruleval lsp` over stdio, driven by a real LSP client (pygls's), as an editor drives it.

One server process serves the module (starting one costs a second); each test opens the files
it needs. The workspace is a small ruleset family written here: a base with a clause catalogue, a
variant that `extends` it, and a variant of a bundled ruleset (`bundled:`)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

T = pytest.importorskip("lsprotocol.types")
from pygls.lsp.client import LanguageClient  # noqa: E402

from validator.api import check_text  # noqa: E402
from validator.tools.fmt import format_text  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent

CLAUSES = """\
clauses:
  T-1: "A piece moves as many spaces as its speed, plus the step."
  T-2: "(Variant) The step is two spaces."
  T-3: "A piece with no speed stays put."
"""

BASE = """\
ruleset demo.base "Demo: pieces on a track"
clauses "clauses.yaml"

record Piece { name: str, speed: int }

input pieces: list[Piece] at "/pieces"

const step: int cite "T-1" = 1

rule moves(p: Piece) cite "T-1" = if p.speed == 0 then 0 else p.speed + step

query main = [moves(p) for p in pieces]
"""

VARIANT = """\
ruleset demo.variant "Demo: a longer step"
extends "base.rules"

override const step: int cite "T-2" = 2

query fast = [moves(p) * step for p in pieces]
"""

LIBRARY = """\
ruleset demo.lib "Demo: helpers"

def double(n: int) -> int = n * 2
"""

USER = """\
ruleset demo.user "Demo: a ruleset that imports another"
import "lib.rules" as lib

query main = lib.double(21)
"""

BUNDLED_VARIANT = """\
ruleset demo.hexes "Jomini, one change"
extends "bundled:jomini/re.rules"

query lone = [u for u in units if is_lone(u)]
"""


def _apply(text: str, edits: Any) -> str:
    """A document's text with LSP text edits applied (positions in UTF-16 units: ASCII here)."""
    lines = text.split("\n")

    def offset(pos: Any) -> int:
        return sum(len(x) + 1 for x in lines[:pos.line]) + pos.character

    for e in sorted(edits, key=lambda e: (e.range.start.line, e.range.start.character), reverse=True):
        text = text[:offset(e.range.start)] + e.new_text + text[offset(e.range.end):]
    return text


class Session:
    """A running server, its client, and the diagnostics published so far (by uri and version)."""

    def __init__(self, root: Path):
        self.root = root
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)  # the client takes the current loop when it is made
        self.client = LanguageClient("ruleval-tests", "1")
        self.published: dict[tuple[str, int | None], list[Any]] = {}
        self.versions: dict[str, int] = {}  # each document's current version
        self.counter = itertools.count(1)  # versions never repeat in a session: a late message is never taken for a new one

        @self.client.feature(T.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(ls: Any, params: Any) -> None:
            self.published[(params.uri, params.version)] = list(params.diagnostics)

        env = {**os.environ, "PYTHONPATH": str(ROOT)}  # the server runs this checkout's code, as the tests do
        self.run(self.client.start_io(sys.executable, "-m", "validator", "lsp", "--stdio", cwd=str(root), env=env))
        self.run(self.client.initialize_async(T.InitializeParams(
            capabilities=T.ClientCapabilities(), root_uri=root.as_uri(),
            workspace_folders=[T.WorkspaceFolder(root.as_uri(), "demo")])))
        self.client.initialized(T.InitializedParams())

    def run(self, coro: Any, timeout: float = 120) -> Any:
        # a guard against a server that never answers, not a speed: a check of the bundled rulesets
        # takes seconds here and several times that on a loaded 2-core CI machine (was 20 s)
        try:
            return self.loop.run_until_complete(asyncio.wait_for(coro, timeout))
        except asyncio.TimeoutError:
            pytest.fail(f"the language server did not answer within {timeout:g} s")

    def uri(self, name: str) -> str:
        return (self.root / name).as_uri()

    def open(self, name: str, text: str | None = None) -> list[Any]:
        """Open a file (its text on disk unless given) and wait for its diagnostics."""
        uri = self.uri(name)
        text = (self.root / name).read_text(encoding="utf-8") if text is None else text
        version = self.versions[uri] = next(self.counter)
        self.client.text_document_did_open(T.DidOpenTextDocumentParams(T.TextDocumentItem(uri, "ruleval", version, text)))
        return self.diagnostics(uri, version)

    def change(self, name: str, text: str) -> list[Any]:
        return self.edit(name, T.TextDocumentContentChangeWholeDocument(text=text))

    def edit(self, name: str, change: Any) -> list[Any]:
        """Send a change (whole or of a range) and wait for the diagnostics of the new version."""
        uri = self.uri(name)
        version = self.versions[uri] = next(self.counter)
        self.client.text_document_did_change(T.DidChangeTextDocumentParams(
            T.VersionedTextDocumentIdentifier(version=version, uri=uri), [change]))
        return self.diagnostics(uri, version)

    def again(self, name: str) -> Callable[[], list[Any]]:
        """The diagnostics of a document's current version, published once more (after another's edit)."""
        uri = self.uri(name)
        self.published.pop((uri, self.versions[uri]), None)
        return lambda: self.diagnostics(uri, self.versions[uri])

    def close(self, name: str) -> None:
        self.client.text_document_did_close(T.DidCloseTextDocumentParams(T.TextDocumentIdentifier(self.uri(name))))

    def diagnostics(self, uri: str, version: int | None) -> list[Any]:
        """The diagnostics of a version of a document (None: of a file that is not open), once published."""
        async def wait() -> list[Any]:
            while (uri, version) not in self.published:
                await asyncio.sleep(0.01)
            return self.published.pop((uri, version)) if version is None else self.published[(uri, version)]

        return self.run(wait())  # type: ignore[no-any-return]

    def doc(self, name: str) -> Any:
        return T.TextDocumentIdentifier(self.uri(name))

    def stop(self) -> None:
        try:
            self.run(self.client.shutdown_async(None))
            self.client.exit(None)
            self.run(self.client.stop())
        finally:  # the loop closed even when the server did not stop as asked (no loop left for the collector)
            self.loop.close()
            asyncio.set_event_loop(None)


@pytest.fixture(scope="module")
def lsp(tmp_path_factory: pytest.TempPathFactory) -> Any:
    root = tmp_path_factory.mktemp("workspace")
    (root / "ruleval.toml").write_text("# the ruleset root\n", encoding="utf-8")
    for name, text in (("clauses.yaml", CLAUSES), ("base.rules", BASE), ("variant.rules", VARIANT),
                       ("hexes.rules", BUNDLED_VARIANT), ("lib.rules", LIBRARY), ("user.rules", USER)):
        (root / name).write_text(text, encoding="utf-8")
    session = Session(root)
    yield session
    session.stop()


def _at(text: str, needle: str, nth: int = 0, shift: int = 0) -> Any:
    """The position of the ``nth`` occurrence of ``needle`` in ``text`` (plus ``shift`` columns)."""
    pos = -1
    for _ in range(nth + 1):
        pos = text.index(needle, pos + 1)
    line = text.count("\n", 0, pos)
    return T.Position(line, pos - (text.rfind("\n", 0, pos) + 1) + shift)


def _range_text(text: str, r: Any) -> str:
    lines = text.split("\n")
    assert r.start.line == r.end.line
    return lines[r.start.line][r.start.character:r.end.character]


# ---------------------------------------------------------------- diagnostics


def test_diagnostics_are_checks_own_at_its_places(lsp: Session, cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = VARIANT.replace("moves(p) * step", "movez(p) * step")
    got = lsp.open("variant.rules", broken)
    # `ruleval check` on the same text, saved: the same codes, messages and places
    (lsp.root / "saved.rules").write_text(broken, encoding="utf-8")
    try:
        monkeypatch.chdir(lsp.root)
        want = json.loads(cli("check", "--format", "json", "--no-cache", "saved.rules").out)
    finally:
        (lsp.root / "saved.rules").unlink()
    assert [d["code"] for d in want] == ["C001"]
    assert [d.code for d in got] == [d["code"] for d in want]
    d, w = got[0], want[0]
    assert d.message.split("\nhelp: ")[0] == w["message"] and d.message.endswith(w["help"])
    assert (d.range.start.line + 1, d.range.start.character + 1, d.range.end.line + 1, d.range.end.character + 1) == \
        (w["line"], w["col"], w["end_line"], w["end_col"])
    assert _range_text(broken, d.range) == "movez"
    assert d.severity == T.DiagnosticSeverity.Error

    # typing the fix clears it; the text on disk was never read for the open document
    assert lsp.change("variant.rules", VARIANT) == []
    lsp.close("variant.rules")


def test_places_are_in_the_protocols_utf16_units(lsp: Session) -> None:
    line = 'query dice = ["🎲 é", movez]'
    got = lsp.open("variant.rules", VARIANT + line + "\n")
    (d,) = got
    assert d.code == "C001" and d.range.start.line == VARIANT.count("\n")
    # 🎲 is one character for ruleval's columns and two UTF-16 units for the protocol
    assert d.range.start.character == len(line[:line.index("movez")].encode("utf-16-le")) // 2 == line.index("movez") + 1
    assert d.range.end.character - d.range.start.character == len("movez")
    lsp.close("variant.rules")


def test_an_unsaved_base_is_read_by_its_variant(lsp: Session) -> None:
    lsp.open("base.rules", BASE.replace("rule moves(p: Piece)", "rule advance(p: Piece)")
             .replace("[moves(p) for", "[advance(p) for"))
    got = lsp.open("variant.rules")
    assert [d.code for d in got] == ["C001"] and "`moves`" in got[0].message
    lsp.close("variant.rules")
    lsp.close("base.rules")


def test_an_edit_of_an_open_base_rechecks_its_open_variant(lsp: Session) -> None:
    assert lsp.open("variant.rules") == []
    wait = lsp.again("variant.rules")
    lsp.open("base.rules")
    lsp.change("base.rules", BASE.replace("rule moves(p: Piece)", "rule advance(p: Piece)")
               .replace("[moves(p) for", "[advance(p) for"))
    again = wait()
    assert [d.code for d in again] == ["C001"] and "`moves`" in again[0].message
    lsp.close("base.rules")
    lsp.close("variant.rules")


def test_what_check_finds_in_a_closed_base_is_shown_on_the_base(lsp: Session) -> None:
    (lsp.root / "broken.rules").write_text(BASE.replace("+ step", "+ stepp"), encoding="utf-8")
    (lsp.root / "on_broken.rules").write_text(VARIANT.replace("base.rules", "broken.rules"), encoding="utf-8")
    try:
        assert lsp.open("on_broken.rules") == []  # its own text is right
        on_base = lsp.diagnostics(lsp.uri("broken.rules"), None)
        assert [d.code for d in on_base] == ["C001"] and _range_text(BASE.replace("+ step", "+ stepp"),
                                                                     on_base[0].range) == "stepp"
        lsp.close("on_broken.rules")
        assert lsp.diagnostics(lsp.uri("broken.rules"), None) == []  # cleared with the ruleset that found them
    finally:
        (lsp.root / "broken.rules").unlink()
        (lsp.root / "on_broken.rules").unlink()


def test_a_catalogue_changed_on_disk_is_read_again(lsp: Session) -> None:
    assert lsp.open("base.rules") == []
    wait = lsp.again("base.rules")
    catalogue = lsp.root / "clauses.yaml"
    catalogue.write_text(CLAUSES.replace("  T-1:", "  T-9:"), encoding="utf-8")
    try:
        lsp.client.workspace_did_change_watched_files(T.DidChangeWatchedFilesParams(
            [T.FileEvent(catalogue.as_uri(), T.FileChangeType.Changed)]))
        again = wait()
        assert {d.code for d in again} == {"C010"} and "`T-1` is not a clause of the catalogue" in again[0].message
    finally:
        catalogue.write_text(CLAUSES, encoding="utf-8")
    lsp.close("base.rules")


@pytest.mark.parametrize("body,code", [("(" * 5000 + "1" + ")" * 5000, "P006"), (" + ".join(["1"] * 20000), "P006"),
                                       ('"\\ud800"', "P001"),  # an escape of half a pair
                                       ('"\ud800"', "P004")])  # half a pair itself: no UTF-8 file can hold it
def test_hostile_text_gets_a_located_diagnostic(lsp: Session, body: str, code: str) -> None:
    text = f'ruleset demo.h "hostile"\nquery main = {body}\n'
    got = lsp.open("hostile.rules", text)  # the session goes on: no crash, no internal error
    assert [d.code for d in got] == [code]
    assert got[0].range.start.line == 1
    lsp.close("hostile.rules")
    assert lsp.open("variant.rules") == []  # and the server still answers
    lsp.close("variant.rules")


def test_a_syntax_error_is_located(lsp: Session) -> None:
    text = BASE.replace("const step: int", "const step int")
    got = lsp.open("base.rules", text)
    assert [d.code for d in got] == ["P001"]
    assert got[0].range.start.line == text.split("\n").index('const step int cite "T-1" = 1')
    lsp.close("base.rules")


# ---------------------------------------------------------------- hover


def test_hover_on_a_rule_shows_its_type_and_clause_text(lsp: Session) -> None:
    lsp.open("base.rules")
    hover = lsp.run(lsp.client.text_document_hover_async(
        T.HoverParams(lsp.doc("base.rules"), _at(BASE, "moves(p: Piece)", shift=2))))
    text = hover.contents.value
    assert "rule moves(p: Piece) -> int" in text
    assert "**T-1**: A piece moves as many spaces as its speed, plus the step." in text
    assert _range_text(BASE, hover.range) == "moves"

    on_clause = lsp.run(lsp.client.text_document_hover_async(
        T.HoverParams(lsp.doc("base.rules"), _at(BASE, '"T-1"', shift=2))))
    assert on_clause.contents.value.startswith("**T-1**: A piece moves")
    on_field_type = lsp.run(lsp.client.text_document_hover_async(
        T.HoverParams(lsp.doc("base.rules"), _at(BASE, "list[Piece]", shift=6))))
    assert "record Piece {name: str, speed: int}" in on_field_type.contents.value
    lsp.close("base.rules")


def test_hover_shows_clause_text_as_text_never_as_markdown_or_html(lsp: Session) -> None:
    """A catalogue is input: an image in a clause text would make the editor fetch it from anywhere."""
    (lsp.root / "hostile.yaml").write_text(
        'clauses:\n  "H-1": "See ![map](https://example.com/track.png) <img src=\\"https://example.com/x.png\\"> [here](https://e.x)"\n',
        encoding="utf-8")
    text = 'ruleset demo.hostile "Demo: a hostile catalogue"\nclauses "hostile.yaml"\n\nconst shown: int cite "H-1" = 1\n'
    (lsp.root / "hostile.rules").write_text(text, encoding="utf-8")
    assert all(d.severity == T.DiagnosticSeverity.Warning for d in lsp.open("hostile.rules"))  # (it is never used)
    for pos in (_at(text, "shown", shift=1), _at(text, '"H-1"', shift=2)):
        hover = lsp.run(lsp.client.text_document_hover_async(T.HoverParams(lsp.doc("hostile.rules"), pos)))
        value = hover.contents.value
        assert "H" in value and "https://example.com/track.png" in value  # the text is there, as text
        assert not re.search(r"(?<!\\)(!\[|<img|\]\()", value), value  # no image, no tag, no link unescaped
        assert "\\!\\[map\\](https://example.com/track.png) \\<img" in value, value
    lsp.close("hostile.rules")
    (lsp.root / "hostile.rules").unlink()


@pytest.mark.parametrize("ask", ["hover", "definition", "formatting"])
def test_a_request_about_a_file_neither_open_nor_on_disk_is_a_bad_parameter(lsp: Session, ask: str) -> None:
    """A request about a file that is neither open nor on disk is answered in our words, as the client's
    bad parameter (it was an internal error, "a bug in ruleval"), without the traceback pygls would
    send as the answer's data."""
    from pygls.exceptions import JsonRpcException

    doc, at = lsp.doc("nowhere.rules"), T.Position(0, 0)
    asked = {"hover": lambda: lsp.client.text_document_hover_async(T.HoverParams(doc, at)),
             "definition": lambda: lsp.client.text_document_definition_async(T.DefinitionParams(doc, at)),
             "formatting": lambda: lsp.client.text_document_formatting_async(
                 T.DocumentFormattingParams(doc, T.FormattingOptions(2, True)))}[ask]
    with pytest.raises(JsonRpcException) as caught:
        lsp.run(asked())
    error = caught.value
    assert error.code == -32602 and "nowhere.rules` is not open and its file cannot be read" in error.message, error.message
    assert "bug in ruleval" not in error.message
    assert error.data is None and "Traceback" not in error.message and 'File "' not in error.message


def test_hover_on_a_local_shows_its_inferred_type(lsp: Session) -> None:
    text = BASE + "query total = let n = len(pieces); n + step\n"
    assert lsp.open("base.rules", text) == []
    on_loop = lsp.run(lsp.client.text_document_hover_async(
        T.HoverParams(lsp.doc("base.rules"), _at(text, "moves(p) for", shift=6))))
    assert "p: Piece  (loop variable)" in on_loop.contents.value
    on_let = lsp.run(lsp.client.text_document_hover_async(
        T.HoverParams(lsp.doc("base.rules"), _at(text, "n + step", shift=0))))
    assert "n: int  (local)" in on_let.contents.value
    lsp.close("base.rules")


def test_hover_and_definition_of_a_record_field(lsp: Session) -> None:
    lsp.open("base.rules")
    pos = _at(BASE, "p.speed == 0", shift=3)
    hover = lsp.run(lsp.client.text_document_hover_async(T.HoverParams(lsp.doc("base.rules"), pos)))
    assert "Piece.speed: int" in hover.contents.value and _range_text(BASE, hover.range) == "speed"
    loc = lsp.run(lsp.client.text_document_definition_async(T.DefinitionParams(lsp.doc("base.rules"), pos)))
    assert loc.uri == lsp.uri("base.rules") and _range_text(BASE, loc.range) == "speed"
    assert BASE.split("\n")[loc.range.start.line].startswith("record Piece")
    lsp.close("base.rules")


def test_hover_in_a_variant_shows_the_override(lsp: Session) -> None:
    lsp.open("variant.rules")
    hover = lsp.run(lsp.client.text_document_hover_async(
        T.HoverParams(lsp.doc("variant.rules"), _at(VARIANT, "* step", shift=3))))
    assert "const step: int" in hover.contents.value and "**T-2**: (Variant) The step is two spaces." in hover.contents.value
    lsp.close("variant.rules")


# ---------------------------------------------------------------- definition


def test_definition_across_extends(lsp: Session) -> None:
    lsp.open("variant.rules")
    loc = lsp.run(lsp.client.text_document_definition_async(
        T.DefinitionParams(lsp.doc("variant.rules"), _at(VARIANT, "moves(p)", shift=1))))
    assert loc.uri == lsp.uri("base.rules")
    assert _range_text(BASE, loc.range) == "moves"
    assert BASE.split("\n")[loc.range.start.line].startswith("rule moves(")

    on_path = lsp.run(lsp.client.text_document_definition_async(
        T.DefinitionParams(lsp.doc("variant.rules"), _at(VARIANT, '"base.rules"', shift=3))))
    assert on_path.uri == lsp.uri("base.rules")
    lsp.close("variant.rules")


def test_definition_and_rename_through_an_import(lsp: Session) -> None:
    assert lsp.open("user.rules") == []
    pos = _at(USER, "lib.double", shift=5)
    loc = lsp.run(lsp.client.text_document_definition_async(T.DefinitionParams(lsp.doc("user.rules"), pos)))
    assert loc.uri == lsp.uri("lib.rules") and _range_text(LIBRARY, loc.range) == "double"
    hover = lsp.run(lsp.client.text_document_hover_async(T.HoverParams(lsp.doc("user.rules"), pos)))
    assert "def double(n: int) -> int" in hover.contents.value
    on_alias = lsp.run(lsp.client.text_document_definition_async(
        T.DefinitionParams(lsp.doc("user.rules"), _at(USER, "lib.double", shift=1))))
    assert on_alias.uri == lsp.uri("lib.rules")
    edit = lsp.run(lsp.client.text_document_rename_async(T.RenameParams(lsp.doc("user.rules"), pos, "twice")))
    assert _apply(USER, edit.changes[lsp.uri("user.rules")]) == USER.replace("lib.double", "lib.twice")
    assert _apply(LIBRARY, edit.changes[lsp.uri("lib.rules")]) == LIBRARY.replace("def double", "def twice")
    lsp.close("user.rules")


def test_definition_in_a_bundled_ruleset(lsp: Session) -> None:
    assert lsp.open("hexes.rules") == []
    loc = lsp.run(lsp.client.text_document_definition_async(
        T.DefinitionParams(lsp.doc("hexes.rules"), _at(BUNDLED_VARIANT, "is_lone", shift=2))))
    assert loc.uri.endswith("/rulesets/jomini/re.rules")
    target = Path(loc.uri.removeprefix("file://")).read_text(encoding="utf-8")
    assert _range_text(target, loc.range) == "is_lone"
    assert target.split("\n")[loc.range.start.line].lstrip().startswith("def is_lone(")
    lsp.close("hexes.rules")


def test_definition_of_a_clause_id_is_its_catalogue_line(lsp: Session) -> None:
    lsp.open("base.rules")
    loc = lsp.run(lsp.client.text_document_definition_async(
        T.DefinitionParams(lsp.doc("base.rules"), _at(BASE, '"T-1"', shift=2))))
    assert loc.uri == lsp.uri("clauses.yaml")
    assert _range_text(CLAUSES, loc.range) == "T-1"
    lsp.close("base.rules")


# ---------------------------------------------------------------- completion


def _labels(lsp: Session, name: str, text: str, pos: Any) -> dict[str, Any]:
    lsp.open(name, text)
    try:
        found = lsp.run(lsp.client.text_document_completion_async(T.CompletionParams(lsp.doc(name), pos)))
    finally:
        lsp.close(name)
    return {i.label: i for i in found.items}


def test_completion_of_clause_ids_in_a_citation(lsp: Session) -> None:
    text = BASE.replace('cite "T-1" = 1', 'cite "T-" = 1')
    items = _labels(lsp, "base.rules", text, _at(text, '"T-" = 1', shift=3))
    assert set(items) == {"T-1", "T-2", "T-3"}  # the catalogue's ids, and nothing else
    assert "A piece with no speed stays put." in items["T-3"].detail


def test_completion_of_record_fields_and_names(lsp: Session) -> None:
    text = BASE.replace("else p.speed + step", "else p.s + step")
    fields = _labels(lsp, "base.rules", text, _at(text, "p.s + step", shift=2))
    assert set(fields) == {"name", "speed"}
    assert fields["speed"].kind == T.CompletionItemKind.Field and "Piece.speed: int" in fields["speed"].detail

    names = _labels(lsp, "variant.rules", VARIANT, _at(VARIANT, "moves(p) * step"))
    assert {"moves", "step", "pieces", "main", "p", "len"} <= set(names)  # inherited, local, built-in
    assert names["moves"].kind == T.CompletionItemKind.Function and names["p"].kind == T.CompletionItemKind.Variable


def test_completion_of_the_fields_of_a_loop_variables_record(lsp: Session) -> None:
    """`x.` on a loop variable (no annotation) offers the fields of the record it goes over, not of
    every record."""
    text = BASE + "record Track { length: int, lanes: int }\nquery names = [p.n for p in pieces]\n"
    fields = _labels(lsp, "base.rules", text, _at(text, "p.n for", shift=2))
    assert set(fields) == {"name", "speed"}


def test_completion_while_the_text_does_not_parse(lsp: Session) -> None:
    """As typed: `p.` and an open `cite "` do not parse yet; what was known before serves."""
    lsp.open("base.rules")
    typing = BASE.replace("else p.speed + step", "else p. + step")
    assert [d.code for d in lsp.change("base.rules", typing)] == ["P001"]
    found = lsp.run(lsp.client.text_document_completion_async(
        T.CompletionParams(lsp.doc("base.rules"), _at(typing, "p. + step", shift=2))))
    assert {i.label for i in found.items} == {"name", "speed"}
    typing = BASE.replace('const step: int cite "T-1" = 1', 'const step: int cite "')
    lsp.change("base.rules", typing)
    found = lsp.run(lsp.client.text_document_completion_async(
        T.CompletionParams(lsp.doc("base.rules"), _at(typing, 'cite "\n', shift=6))))
    assert {i.label for i in found.items} == {"T-1", "T-2", "T-3"}
    lsp.close("base.rules")


def test_incremental_changes_are_applied(lsp: Session) -> None:
    lsp.open("base.rules")
    start = _at(BASE, "+ step", shift=2)
    got = {d.code: d for d in lsp.edit("base.rules", T.TextDocumentContentChangePartial(
        range=T.Range(start, T.Position(start.line, start.character + 4)), text="stpe"))}
    assert set(got) == {"C001", "W101"}  # `stpe` is unknown, and `step` no longer used
    assert "`stpe`" in got["C001"].message and got["C001"].range.start == start
    lsp.close("base.rules")


def test_a_change_to_a_document_never_opened_is_taken_as_its_opening(lsp: Session) -> None:
    # (was pygls's `KeyError: 'file:///.../lib.rules'` shown to the user as a message, and no check)
    shown: list[str] = []
    lsp.client.feature(T.WINDOW_SHOW_MESSAGE)(lambda ls, params: shown.append(params.message))

    def first_said(uri: str, version: int) -> list[Any] | None:
        async def wait() -> list[Any] | None:
            while (uri, version) not in lsp.published and not shown:
                await asyncio.sleep(0.01)
            return lsp.published.get((uri, version))
        return lsp.run(wait())  # type: ignore[no-any-return]

    # a change of a range: applied to the file's text (`lib.rules` is on disk, and not open)
    start = _at(LIBRARY, "n * 2")
    uri, version = lsp.uri("lib.rules"), next(lsp.counter)
    lsp.versions[uri] = version
    lsp.client.text_document_did_change(T.DidChangeTextDocumentParams(
        T.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [T.TextDocumentContentChangePartial(range=T.Range(start, T.Position(start.line, start.character + 1)), text="m")]))
    got = first_said(uri, version)
    assert shown == [] and got is not None, shown
    [unknown] = [d for d in got if d.code == "C001"]
    assert "`m`" in unknown.message and unknown.range.start == start, got
    lsp.close("lib.rules")

    # the whole text, of a file that does not exist
    uri, version = lsp.uri("unsaved.rules"), next(lsp.counter)
    lsp.client.text_document_did_change(T.DidChangeTextDocumentParams(
        T.VersionedTextDocumentIdentifier(version=version, uri=uri),
        [T.TextDocumentContentChangeWholeDocument(text=LIBRARY.replace("n * 2", "n * two"))]))
    got = first_said(uri, version)
    assert shown == [] and got is not None and "`two`" in " ".join(d.message for d in got if d.code == "C001"), got
    lsp.client.text_document_did_close(T.DidCloseTextDocumentParams(T.TextDocumentIdentifier(uri)))


# ---------------------------------------------------------------- formatting


def test_formatting_is_fmts_layout(lsp: Session) -> None:
    messy = BASE.replace("const step: int cite \"T-1\" = 1", "const   step :int cite \"T-1\"=1") \
        .replace("[moves(p) for p in pieces]", "[ moves( p ) for p in pieces ]")
    lsp.open("base.rules", messy)
    edits = lsp.run(lsp.client.text_document_formatting_async(
        T.DocumentFormattingParams(lsp.doc("base.rules"), T.FormattingOptions(tab_size=2, insert_spaces=True))))
    assert edits, "a messy text is reformatted"
    assert _apply(messy, edits) == format_text(messy, "base.rules") == BASE
    lsp.close("base.rules")


def test_formatting_a_text_that_does_not_parse_changes_nothing(lsp: Session) -> None:
    lsp.open("base.rules", BASE + "rule (")
    edits = lsp.run(lsp.client.text_document_formatting_async(
        T.DocumentFormattingParams(lsp.doc("base.rules"), T.FormattingOptions(tab_size=2, insert_spaces=True))))
    assert not edits
    lsp.close("base.rules")


# ---------------------------------------------------------------- rename


def test_rename_a_definition_in_its_file_and_the_variants(lsp: Session) -> None:
    lsp.open("base.rules")
    edit = lsp.run(lsp.client.text_document_rename_async(
        T.RenameParams(lsp.doc("base.rules"), _at(BASE, "const step", shift=7), "stride")))
    changes = edit.changes
    assert set(changes) == {lsp.uri("base.rules"), lsp.uri("variant.rules")}  # variant.rules is not even open
    new_base, new_variant = _apply(BASE, changes[lsp.uri("base.rules")]), _apply(VARIANT, changes[lsp.uri("variant.rules")])
    assert new_base == BASE.replace("const step", "const stride").replace("+ step", "+ stride")
    assert new_variant == VARIANT.replace("const step", "const stride").replace("* step", "* stride")
    # the renamed family still checks clean
    unsaved = {os.path.realpath(lsp.root / "base.rules"): new_base}
    assert check_text(lsp.root / "variant.rules", new_variant, unsaved).diagnostics == []
    lsp.close("base.rules")


def test_rename_leaves_a_local_of_the_same_name(lsp: Session) -> None:
    text = BASE.replace("query main = [moves(p) for p in pieces]",
                        "query main = [moves(p) for p in pieces]\nquery local = [let step = 3; step + p.speed for p in pieces]")
    lsp.open("base.rules", text)
    edit = lsp.run(lsp.client.text_document_rename_async(
        T.RenameParams(lsp.doc("base.rules"), _at(text, "+ step", shift=2), "stride")))
    new = _apply(text, edit.changes[lsp.uri("base.rules")])
    assert "let step = 3; step + p.speed" in new and "else p.speed + stride" in new
    lsp.close("base.rules")


@pytest.mark.parametrize("new_name,why", [("query", "is not a name"), ("moves", "already defined"), ("9x", "is not a name"),
                                          ("len", "already defined"), ("p", "a local `p` would hide")])
def test_rename_refuses_a_bad_name(lsp: Session, new_name: str, why: str) -> None:
    from pygls.exceptions import JsonRpcException

    lsp.open("base.rules")
    with pytest.raises(JsonRpcException, match=why):
        lsp.run(lsp.client.text_document_rename_async(
            T.RenameParams(lsp.doc("base.rules"), _at(BASE, "const step", shift=7), new_name)))
    with pytest.raises(JsonRpcException, match="only a definition"):
        lsp.run(lsp.client.text_document_rename_async(
            T.RenameParams(lsp.doc("base.rules"), _at(BASE, "(p: Piece)", shift=1), "q")))  # a parameter
    lsp.close("base.rules")


def test_rename_refuses_a_definition_of_a_bundled_ruleset(lsp: Session) -> None:
    from pygls.exceptions import JsonRpcException

    lsp.open("hexes.rules")
    with pytest.raises(JsonRpcException, match="outside the workspace"):
        lsp.run(lsp.client.text_document_rename_async(
            T.RenameParams(lsp.doc("hexes.rules"), _at(BUNDLED_VARIANT, "is_lone"), "alone")))
    lsp.close("hexes.rules")


@pytest.mark.parametrize("message", [{}, {"jsonrpc": "2.0", "id": 1, "method": "initialize",  # clientInfo needs a name
                                          "params": {"processId": None, "rootUri": None, "capabilities": {},
                                                     "clientInfo": {}}}])
def test_a_malformed_message_is_logged_in_one_line(tmp_path: Path, message: dict[str, Any]) -> None:
    import subprocess

    body = json.dumps(message).encode()
    done = subprocess.run([sys.executable, "-m", "validator", "lsp"], input=b"Content-Length: %d\r\n\r\n%s" % (len(body), body),
                          capture_output=True, cwd=tmp_path, env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=30)
    assert done.returncode == 0  # the client went away: the server ends
    log = done.stderr.decode()
    assert "Traceback" not in log and log.startswith("ruleval lsp: error: "), log
    assert all(line.startswith("ruleval lsp: ") for line in log.splitlines()), log  # one line per failure


def _message(message: dict[str, Any], length: bytes | None = None) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %s\r\n\r\n%s" % (b"%d" % len(body) if length is None else length, body)


@pytest.mark.parametrize("length", [b"abc", b"-3", b"0", b"5", b" 12"])
def test_a_bad_content_length_leaves_the_server_able_to_hear_the_next_message(tmp_path: Path, length: bytes) -> None:
    import subprocess

    def initialize(n: int) -> dict[str, Any]:
        return {"jsonrpc": "2.0", "id": n, "method": "initialize",
                "params": {"processId": None, "rootUri": None, "capabilities": {}}}

    talk = _message(initialize(1), length) + _message(initialize(2)) + \
        _message({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    done = subprocess.run([sys.executable, "-m", "validator", "lsp"], input=talk, capture_output=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=30)
    assert done.returncode == 0
    answers = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in done.stdout.split(b"Content-Length: ")[1:]]
    ids = [a.get("id") for a in answers if "result" in a]
    assert ids == [2, 3], answers  # the message after the bad header is answered, and the next one
    assert "Traceback" not in done.stderr.decode()


@pytest.mark.parametrize("extra", [1, 15, 17, 60, 100_000])
def test_a_content_length_longer_than_its_body_swallows_no_message(tmp_path: Path, extra: int) -> None:
    """A length longer than its body made the body's read take the next message too: both were lost.
    The body ends where the next message's header begins (no JSON body holds such a line)."""
    import subprocess

    first = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                           "capabilities": {}}}
    length = b"%d" % (len(json.dumps(first).encode()) + extra)
    talk = _message(first, length) + _message({**first, "id": 2}) + _message({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
    done = subprocess.run([sys.executable, "-m", "validator", "lsp"], input=talk, capture_output=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=30)
    assert done.returncode == 0
    answers = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in done.stdout.split(b"Content-Length: ")[1:]]
    assert [a.get("id") for a in answers if "result" in a] == [1, 2, 3], answers  # each answered, in order
    assert "Traceback" not in done.stderr.decode()


def test_a_huge_content_length_on_the_last_message_is_read_as_what_arrives(tmp_path: Path) -> None:
    """`Content-Length: 10^15` on a message that nothing follows had a buffer of that size asked of
    standard input once its body was read: MemoryError, I001, the server gone with exit 4."""
    import subprocess

    first = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None,
                                                                           "capabilities": {}}}
    talk = _message(first) + _message({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}) + \
        _message({"jsonrpc": "2.0", "method": "exit"}, b"%d" % 10 ** 15)
    done = subprocess.run([sys.executable, "-m", "validator", "lsp"], input=talk, capture_output=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=30)
    assert done.returncode == 0 and b"I001" not in done.stderr and b"MemoryError" not in done.stderr, done.stderr
    answers = [json.loads(part.split(b"\r\n\r\n", 1)[1]) for part in done.stdout.split(b"Content-Length: ")[1:]]
    assert [a.get("id") for a in answers if "result" in a] == [1, 2], answers


def test_the_resync_never_cuts_a_body_that_only_mentions_a_header() -> None:
    import io

    from validator.tools.lsp import HeaderResync

    body = json.dumps({"text": "Content-Length: 12\r\n\r\n{}"}).encode()  # (escaped in JSON: no raw CR)
    stream = HeaderResync(io.BufferedReader(io.BytesIO(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))))
    assert stream.readline() == b"Content-Length: %d\r\n" % len(body) and stream.readline() == b"\r\n"
    assert stream.read(len(body)) == body


# ---------------------------------------------------------------- without pygls


def test_without_pygls_the_command_says_what_to_install(cli: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("pygls", "pygls.lsp", "pygls.lsp.server", "lsprotocol", "lsprotocol.types"):
        monkeypatch.setitem(sys.modules, name, None)  # an import of it now fails as if it were not installed
    result = cli("lsp")
    assert result.code == 2
    assert "error[U001]" in result.err and "pip install 'ruleval[lsp]'" in result.err
    assert result.err.strip() in (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")  # as the doc shows it


# ---------------------------------------------------------------- every name of the bundled rulesets


def test_every_name_of_the_bundled_rulesets_has_a_meaning(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rulesets check clean, so every name they use means something; the index must find it,
    and a definition's place must be its name in the text (what hover, definition and rename use)."""
    from validator.tools.symbols import Index

    monkeypatch.chdir(ROOT)
    seen = 0
    for path in sorted((ROOT / "rulesets").rglob("*.rules")):
        rel = path.relative_to(ROOT)
        rs = check_text(rel, path.read_text(encoding="utf-8"))
        index = Index(rs)
        shown = str(rel)
        for occ in index.occurrences(shown):
            target = index.meaning(shown, occ)
            if occ.kind in ("global", "decl", "local", "member", "table", "cycle"):
                assert target is not None, (shown, occ)
            if target is None:
                continue
            assert index.hover(target)
            where = index.definition(target)
            if target.kind == "def":
                assert where is not None
                line = rs.sources[where.file].split("\n")[where.line - 1]
                named = target.name if occ.name == "base" else occ.name  # `base`: what an override replaces
                assert line[where.col - 1:where.end_col - 1] == named, (shown, occ, where)
            seen += 1
    assert seen > 5_000  # (all the files: thousands of names)


def test_hover_shows_a_file_name_with_backticks_as_one_code_span(lsp: Session) -> None:
    """A file name is input too: a backtick in it ended the code span it was shown in, and what
    followed (`[link](...)`, an image) was Markdown again."""
    name = "we`ird ![x](example.png) [y](ex.ample).json"
    (lsp.root / name).write_text('{"a": 1}', encoding="utf-8")
    text = f'ruleset demo.ticks "Demo: a file name with backticks"\nimport "{name}" as odd\n\nquery q = odd.a\n'
    (lsp.root / "ticks.rules").write_text(text, encoding="utf-8")
    lsp.open("ticks.rules")
    hover = lsp.run(lsp.client.text_document_hover_async(T.HoverParams(lsp.doc("ticks.rules"), _at(text, "odd.a", shift=1))))
    value = hover.contents.value
    span = re.search(r"imported from (`+)( ?)(.*?)\2\1(?!`)", value)
    assert span is not None and len(span.group(1)) == 2, value  # fenced by more backticks than it holds
    assert span.group(3).endswith(name), value
    lsp.close("ticks.rules")
    (lsp.root / "ticks.rules").unlink()

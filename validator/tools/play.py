"""``ruleval play`` and ``ruleval replay``: whole games, phase after phase.

``play RULESET START --orders FILE``: from a start state, each entry of the orders file is played
in turn by the ruleset's ``query advance`` (see ``api.play``), writing every state and result:
JSON Lines on standard output (one line per phase played, then the last state), or one file per
state and per result into ``--out DIR``. ``--until NAME`` plays on (without orders once the file
runs out) until the phase of that name is reached.

``replay RULESET RECORD``: a game record is a list of states in play order, each with the orders
played in it; each is played and the next state compared with the record's next, field by field.
The first phase that differs is reported with every difference, exit 1.

Game files are JSON Lines (``.jsonl``: one value per line), JSON (``.json``: a list) or YAML
(``.yaml``/``.yml``: a list). An orders entry is ``{orders: [...], phase: NAME}`` (``phase``
optional, checked against the game's phase when given) or the list of orders alone.
"""

from __future__ import annotations

import argparse
import io
import os
import json
import re
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Iterable, TextIO

import yaml

from ..core import confine, jsontext, safeyaml
from ..core.diagnostics import Diagnostic, DiagnosticError, Span, one_line, utf8_fault, wrap_words
from ..core.exits import EXIT_FINDINGS, EXIT_INPUT, EXIT_OK, UsageError, exit_code
from .common import load_for_run, print_diags, print_state_diags, require_files, require_regular, with_state
from ..lib.values import notation
from .textview import WIDTH, cut

MAX_GAME_FILE_BYTES = 64_000_000
MAX_ENTRIES = 10_000  # entries (phases) in one game file: as many as ``api.play`` may play
MAX_GAME_FILE_VALUES = 500_000  # values in a game file (each costs some hundreds of bytes and some microseconds to read)


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    p = sub.add_parser("play", help="play a game forward from a state, phase after phase")
    p.add_argument("ruleset")
    p.add_argument("start", nargs="?", help="the start state (JSON file; default: the ruleset's `query start_state`)")
    p.add_argument("--orders", help="orders for each phase in turn (.jsonl, .json or .yaml)")
    p.add_argument("--random-orders", type=int, metavar="SEED",
                   help="play the phases past the orders file with the ruleset's `query random_orders`, from this seed, "
                        "until --until or the game's end")
    p.add_argument("--until", metavar="PHASE", help="play until the phase of this name is reached (e.g. F1903M)")
    p.add_argument("--max-phases", type=int, default=1000, metavar="N", help="stop with an error after N phases (1000)")
    p.add_argument("--seed", type=int, help="seeded random dice")
    p.add_argument("--out", metavar="DIR", help="write NNN_PHASE.json (state) and NNN_PHASE.result.json files here")
    p.add_argument("--format", choices=["text", "json", "jsonl"], default="text",
                   help="text (default): one line per phase; json or jsonl: JSON Lines of {phase, state, result, end}")
    commands["play"] = cmd_play

    p = sub.add_parser("replay", help="check a game record: the first phase whose next state differs")
    p.add_argument("ruleset")
    p.add_argument("record", help="states in play order, each with its orders (.jsonl, .json or .yaml), "
                                  "or a folder `play --out` wrote")
    p.add_argument("--seed", type=int, help="seeded random dice")
    p.add_argument("--import", dest="import_with", metavar="QUERY",
                   help="read RECORD, a text file of another format, with this query of RULESET (text -> states)")
    p.add_argument("--format", choices=["text", "json"], default="text")
    commands["replay"] = cmd_replay


# ---------------------------------------------------------------- game files

def _too_many(path: str, limit: int, line: int | None = None) -> DiagnosticError:
    help = ("`ruleval play` plays up to the number of phases --max-phases allows: raise it, or split the file"
            if limit != MAX_ENTRIES else f"a game file holds at most {MAX_ENTRIES} entries: split the file")
    return DiagnosticError([Diagnostic("S001", f"more than {limit} entries in one game file",
                                       Span(path, line, 1, line, 2) if line else Span(path), help=help)])


_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _too_many_values(text: str, path: str, line_offset: int = 0) -> DiagnosticError | None:
    """S001 at the first value past ``MAX_GAME_FILE_VALUES`` in a JSON text, or None. A JSON text holds
    at most one value more than it has `,`, `[` and `{` outside its strings (each value opens its file
    or its container, or follows a comma); counted in C first, the strings blanked only when that
    bound is passed (a file of millions of small values takes gigabytes once read)."""
    if text.count(",") + text.count("[") + text.count("{") < MAX_GAME_FILE_VALUES:
        return None
    bare = _JSON_STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', text)  # (same positions)
    for n, m in enumerate(re.finditer(r"[,\[{]", bare), 2):
        if n > MAX_GAME_FILE_VALUES:
            line = text.count("\n", 0, m.start()) + 1
            col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
            return DiagnosticError([Diagnostic("S001", f"the file holds more than {MAX_GAME_FILE_VALUES} values: "
                                                      "too many to read", Span(path, line + line_offset, col,
                                                                               line + line_offset, col + 1),
                                               help="split the game into several files")])
    return None


def _game_text(path: str) -> str:
    """A game file's text; S001 when it cannot be read or is not UTF-8."""
    try:
        data = confine.read_bytes(Path(path), MAX_GAME_FILE_BYTES, None, path)
    except confine.Refused as exc:
        raise DiagnosticError([Diagnostic("S001", f"cannot read `{path}`: {exc.message}", Span(path))]) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        bad_line, bad_col, fault = utf8_fault(exc)
        raise DiagnosticError([Diagnostic("S001", f"file is not UTF-8 text: {fault}",
                                          Span(path, bad_line, bad_col, bad_line, bad_col + 1),
                                          help="save the file as UTF-8")]) from None


def read_imported_record(rs: Any, query: str, path: str) -> tuple[list[tuple[str, Any]], list[tuple[str, str]], int]:
    """A record of another format read by the ruleset's importer ``query`` (its text -> a list of
    ``{state, line, notes}``: a state, the line of the file it begins at, and what the importer read
    other than as written, a note ``{line, text, unread}`` with ``unread: true`` for a part of the
    record it could not read and left out): the states with where each is (``file:line``, one name
    to each), the importer's notes, and how many parts of the record were not read."""
    from ..api import RunError

    text = _game_text(path)
    if query not in rs.queries():
        raise UsageError(f"`{rs.path}` has no `query {query}` to import `{path}` with")
    try:
        items = rs.run({}, query, args=[text], validate=False, state_name=path)
    except RunError as exc:
        raise DiagnosticError(exc.diagnostics) from None
    shape = ("importer `" + query + "` must give a list of `{state, line, notes}` (each note a `{line, text}`, "
             "with `unread: true` for a part of the record not read)")
    if not isinstance(items, list) or not all(
            isinstance(i, dict) and isinstance(i.get("state"), dict) and isinstance(i.get("notes", []), list)
            and all(isinstance(n, dict) and isinstance(n.get("text"), str) and isinstance(n.get("unread", False), bool)
                    for n in i.get("notes", [])) for i in items):
        raise DiagnosticError([Diagnostic("S001", shape, Span(rs.path))])
    if len(items) > MAX_ENTRIES + 1:
        raise _too_many(path, MAX_ENTRIES)
    for n, i in enumerate(items):  # (a line, where given, is one of the file's: `FILE:0` names none)
        for what, line in (("state", i.get("line")), *(("note", note.get("line")) for note in i.get("notes", []))):
            if line is not None and not (type(line) is int and line > 0):
                unit = rs.program.query(query)
                raise DiagnosticError([Diagnostic(
                    "S001", f"importer `{query}` gives its item {n} a {what} at line {notation(line)}, no line of "
                            f"`{path}`", unit.span if unit is not None else Span(rs.path),
                    help="a line is counted from 1; give none (`line` left out) where it is not known")])

    def at(line: Any, otherwise: str) -> str:
        return f"{path}:{line}" if line is not None else otherwise

    # each state a name of its own, as replay's report names them: `FILE:LINE`, or where the importer gives
    # one line to more than one state (a record written with several phases to a line), `FILE:LINE item N`
    names = [at(i.get("line"), f"{path} item {n}") for n, i in enumerate(items)]
    shared = {name for name, count in Counter(names).items() if count > 1}
    return ([(f"{name} item {n}" if name in shared else name, i["state"]) for n, (name, i) in enumerate(zip(names, items))],
            [(at(note.get("line"), at(i.get("line"), path)), note["text"]) for i in items for note in i.get("notes", [])],
            sum(1 for i in items for note in i.get("notes", []) if note.get("unread", False)))


@dataclass(frozen=True)
class GameItem:
    """An item of a game file: its name (``FILE:LINE``, as ``_game_item`` gives it), its value, and
    ``start``, where it starts (its line and column), None where it is not known: what is said of the
    item is placed there."""

    where: str
    value: Any
    start: Span | None


def read_game_file(path: str, limit: int = MAX_ENTRIES) -> list[GameItem]:
    """The items of a game file, each with its name and place (``GameItem``); ``DiagnosticError``
    (S001) when the file cannot be read, is not a list of JSON values, or holds more than ``limit``
    of them."""
    p = Path(path)
    suffix = p.suffix.lower()
    if suffix not in (".jsonl", ".json", ".yaml", ".yml"):  # (said first: an empty `.txt` is not "empty")
        raise UsageError(f"`{path}`: a game file ends in .jsonl, .json, .yaml or .yml")
    text = _game_text(path)
    if not text.strip():  # in every format alike: an empty file is a mistake more often than a game of no phase
        raise DiagnosticError([Diagnostic("S001", "the file is empty: a game file holds a list, one item per phase",
                                          Span(path, 1, 1, 1, 1), help="a game of no phase is a `.json` file holding `[]`")])
    if suffix in (".json", ".jsonl"):  # (YAML's values are counted as it is read)
        refused = _too_many_values(text, path)
        if refused is not None:
            raise refused
    if suffix == ".jsonl":
        out: list[GameItem] = []
        for lineno, line in enumerate(io.StringIO(text), 1):  # (one line at a time: never all held at once)
            if line.strip():
                if len(out) >= limit:
                    raise _too_many(path, limit, lineno)
                try:
                    out.append(_game_item(path, len(out), (lineno, len(line) - len(line.lstrip()) + 1), set(),
                                          jsontext.loads(line, path)))
                except DiagnosticError as exc:  # located on its own line of the file
                    raise DiagnosticError([replace(d, span=Span(path, lineno, d.span.col, lineno, d.span.end_col))
                                           for d in exc.diagnostics]) from None
        return out
    if suffix == ".json":
        items = jsontext.loads(text, path)
        if not isinstance(items, list):
            raise DiagnosticError([Diagnostic("S001", "a game file holds a list (one item per phase)", Span(path, 1, 1, 1, 2))])
        if len(items) > limit:
            raise _too_many(path, limit)
        places = jsontext.item_places(text)
        shared = _shared_lines(line for line, _ in places)
        return [_game_item(path, i, places[i] if i < len(places) else None, shared, item) for i, item in enumerate(items)]
    if suffix in (".yaml", ".yml"):
        try:
            items = safeyaml.load(text, max_nodes=MAX_GAME_FILE_VALUES)
        except (yaml.YAMLError, RecursionError) as exc:
            mark = getattr(exc, "problem_mark", None)
            span = Span(path, mark.line + 1, mark.column + 1, mark.line + 1, mark.column + 2) if mark else Span(path)
            if isinstance(exc, safeyaml.NodeBudgetError):
                raise DiagnosticError([Diagnostic("S001", f"the file holds more than {MAX_GAME_FILE_VALUES} values: "
                                                          "too many to read as YAML", span,
                                                  help="write a long game as JSON Lines (`.jsonl`, one phase a line)")]) from None
            raise DiagnosticError([Diagnostic("S001", f"invalid YAML: {getattr(exc, 'problem', None) or exc}", span)]) from None
        if not isinstance(items, list):
            raise DiagnosticError([Diagnostic("S001", "a game file holds a list (one item per phase)", Span(path, 1, 1, 1, 2))])
        if len(items) > limit:
            raise _too_many(path, limit)
        out = []
        positions: list[Any] = []  # (the document composed once: where each item starts; not again if it failed)
        starts = [_yaml_span(text, path, i, "", positions) if positions or not i else None for i in range(len(items))]
        shared = _shared_lines(at.line for at in starts if at is not None)
        for i, value in enumerate(items):
            problem = jsontext.value_problem(value)  # (a date, say, is a value of no JSON type)
            at = starts[i]
            game_item = _game_item(path, i, (at.line, at.col) if at is not None else None, shared, value)
            if problem is not None:
                raise DiagnosticError([Diagnostic("S001", f"the entry holds what JSON cannot: {problem[1]}",
                                                  _yaml_span(text, path, i, problem[0], positions)
                                                  or game_item.start or Span(path),
                                                  pointer=problem[0],
                                                  help="quote a text YAML reads as something else (a date, `.nan`)")])
            out.append(game_item)
        return out
    raise AssertionError(suffix)  # pragma: no cover (refused above)


def _shared_lines(lines: Iterable[int]) -> set[int]:
    """The lines on which more than one item of a game file starts (a list written on one line)."""
    counts = Counter(lines)
    return {line for line, n in counts.items() if n > 1}


def _game_item(path: str, index: int, place: tuple[int, int] | None, shared: set[int], value: Any) -> GameItem:
    """A game file's item ``index`` that starts at ``place`` (line, column), named ``FILE:LINE``, or
    ``FILE:LINE:COL`` where another item starts on that line, so that each item has a name of its
    own (the diagnostics of what is played from it name it); ``FILE item N`` where it is not known.
    Its ``start`` is where it starts, whether its name says the column or not."""
    if place is None:
        return GameItem(f"{path} item {index}", value, None)
    line, col = place
    return GameItem(f"{path}:{line}:{col}" if line in shared else f"{path}:{line}", value, Span(path, line, col, line, col + 1))


def _yaml_span(text: str, path: str, index: int, pointer: str, positions: list[Any]) -> Span | None:
    """Where the value at ``pointer`` of the game file's entry ``index`` is written, if it can be found
    (``positions``: empty, or the document's ``safeyaml.Positions`` kept from an earlier call)."""
    parts = (str(index), *(x.replace("~1", "/").replace("~0", "~") for x in pointer.split("/")[1:]))
    try:
        if not positions:
            positions.append(safeyaml.Positions(text))
        at = positions[0].of(parts)
    except (yaml.YAMLError, RecursionError):
        return None
    return Span(path, *at) if at else None


def _item_place(path: str, text: str, items: list[GameItem], i: int, parts: tuple[str, ...],
                cache: dict[str, Any] | None = None) -> Span | None:
    """Where the value at ``parts`` (a JSON pointer's unescaped parts) of the game file's item ``i`` is
    written, else the nearest value enclosing it, else where the item starts; None where not even that
    is known. ``cache`` keeps the text's lines or positions across calls on one file."""
    start = items[i].start
    if start is None:
        return None
    cache = {} if cache is None else cache
    jsonl = Path(path).suffix.lower() == ".jsonl"
    for n in range(len(parts), -1, -1):
        try:
            if jsonl:  # (an item of JSON Lines: placed within its own line)
                lines = cache.setdefault("lines", text.splitlines())
                at = jsontext.Positions(lines[start.line - 1]).of(parts[:n])
                found = None if at is None else (start.line, at[1], start.line, at[3])
            else:
                if "whole" not in cache:
                    cache["whole"] = (jsontext.Positions(text) if Path(path).suffix.lower() == ".json"
                                      else safeyaml.Positions(text))
                found = cache["whole"].of((str(i), *parts[:n]))
        except (IndexError, RecursionError, ValueError, yaml.YAMLError):
            found = None
        if found is not None:
            return Span(path, *found)
    return start


def _in_the_file(diags: list[Diagnostic], path: str | None, items: list[GameItem],
                 parts_of: Callable[[Any, str | None], tuple[str, ...]]) -> tuple[list[Diagnostic], dict[str, str]]:
    """What was said of a game file's items (each named by ``GameItem.where``, with no line, or placed at
    the item's start, as ``api.play`` places an entry that says where it is written) placed in
    the file, with its text so that the line is quoted: at the value ``parts_of(item, pointer)`` names
    in the item (``_item_place``: else the nearest value enclosing it, else where the item starts),
    the pointer kept. Others as they are."""
    if path is None:
        return diags, {}
    index = {item.where: i for i, item in enumerate(items)}  # (an item named, or placed at its start: `Entry.at`)
    starts = {(s.file, s.line, s.col): i for i, item in enumerate(items) if (s := item.start) is not None}

    def item_of(d: Diagnostic) -> int | None:
        return index.get(d.span.file) if not d.span.line else starts.get((d.span.file, d.span.line, d.span.col))

    if not any(item_of(d) is not None for d in diags):
        return diags, {}
    try:
        text = _game_text(path)
    except DiagnosticError:  # (changed or gone since it was read: said by its name, as before)
        return diags, {}
    cache: dict[str, Any] = {}
    out = []
    for d in diags:
        i = item_of(d)
        at = _item_place(path, text, items, i, parts_of(items[i].value, d.pointer), cache) if i is not None else None
        out.append(replace(d, span=at) if at is not None else d)
    return out, {path: text}


def _in_the_entry(entry: Any, pointer: str | None) -> tuple[str, ...]:
    """Where a fault of the state played from an orders entry lies in the entry: one in its orders
    (`/orders/...`) in the entry's `orders` (in the entry itself, a list of orders), any other (a phase
    out of step) at the entry."""
    from ..engine.state import pointer_parts

    if not (pointer or "").startswith("/orders"):
        return ()
    parts = pointer_parts(pointer or "")
    return parts if isinstance(entry, dict) else parts[1:]


def _in_the_state(item: Any, pointer: str | None) -> tuple[str, ...]:
    """Where a fault of a record's state lies in the record's item: at the pointer, within the item's
    `state` where the item is a line `play --format json` wrote."""
    from ..engine.state import pointer_parts

    inside = ("state",) if _played_state(item) is not item else ()
    return inside + (pointer_parts(pointer) if pointer is not None else ())


def _quoted(path: str | None, diags: list[Diagnostic]) -> dict[str, str]:
    """The text of the game file ``path`` where a diagnostic is placed at one of its lines (so that the
    line is quoted under it), else nothing."""
    if path is None or not any(d.span.file == path and d.span.line for d in diags):
        return {}
    try:
        return {path: _game_text(path)}
    except DiagnosticError:  # (changed or gone since it was read)
        return {}


def entries_of(items: list[GameItem], path: str | None = None) -> list[Any]:
    """The entries of an orders file's items; S006 at the item (at its field at fault, with that
    field's pointer, where ``path``, the file they were read from, is given) that is no entry."""
    from ..api import Entry

    out = []
    for i, game_item in enumerate(items):
        item, where = game_item.value, game_item.where
        if isinstance(item, list):
            out.append(Entry(item, None, where, game_item.start))
            continue
        fault, field = _entry_fault(item)
        if isinstance(item, dict) and not fault:
            out.append(Entry(item.get("orders", []), item.get("phase"), where, game_item.start))
            continue
        pointer = "" if field is None else "/" + field.replace("~", "~0").replace("/", "~1")
        said = Diagnostic("S006", "an orders entry is {orders: [...], phase: NAME} or a list of orders" + fault,
                          Span(where), pointer=pointer,
                          help="`phase` is optional: the name of the phase the orders are for")
        at = None
        if path is not None:
            try:
                at = _item_place(path, _game_text(path), items, i, () if field is None else (field,))
            except DiagnosticError:  # (changed or gone since it was read)
                at = None
        raise DiagnosticError([replace(said, span=at or game_item.start or Span(where))])
    return out


def _entry_fault(item: Any) -> tuple[str, str | None]:
    """What is wrong with an orders entry that is a map (said after the entry's form), "" when nothing,
    and the field at fault (None for the whole entry): the first field it should not have, or one of
    the wrong kind."""
    if not isinstance(item, dict):
        return "", None
    extra = [k for k in item if k not in ("orders", "phase")]
    if extra:
        return f": `{str(extra[0])[:40]}` is no field of one", str(extra[0])
    if not isinstance(item.get("orders", []), list):
        return ": its `orders` must be a list", "orders"
    if not isinstance(item.get("phase", ""), str):
        return ": its `phase` must be a phase's name (text)", "phase"
    return "", None


# ---------------------------------------------------------------- commands

def _exit_of(diags: list[Any]) -> int:
    return exit_code(diags)


SHOWN_PHASES = 8  # phases played without orders to name those an unknown `--until` may have meant


def _unknown_until(rs: Any, state: Any, shown: str, until: str) -> Diagnostic:
    """The usage error (U001) of an `--until` that names no phase: the nearest of the phases the game
    plays next (played without orders, a few: the rules name their phases, ruleval does not know them),
    and those phases in its help."""
    from ..api import Entry, PlayError, play
    from ..core.diagnostics import closest_name

    names: list[str] = []
    more = True  # (the game goes on past the names shown)
    try:
        for step in play(rs, state, [Entry([]) for _ in range(SHOWN_PHASES)], max_phases=SHOWN_PHASES, shown=shown):
            names += [str(p) for p in (step.phase, step.next_phase) if p is not None and str(p) not in names]
            more = step.end is None
    except PlayError:  # (the game cannot be played without orders: the phases it came to are named)
        more = False
    folded = {n.casefold(): n for n in names}  # (compared in any case: `f1903m` is nearest `F1903M`)
    close = closest_name(until.casefold(), folded)
    helps = [f"did you mean `{folded[close]}`?"] if close is not None else []
    if names:
        helps.append(f"with no orders the game plays {', '.join(names)}{', ...' if more else ''}")
    return Diagnostic("U001", f"--until `{one_line(until)}` names no phase of this ruleset", Span(rs.path),
                      help=" ".join(h[0].upper() + h[1:] if i else h for i, h in enumerate(helps)) or None)


def _summary(result: Any) -> str:
    """A few words on a phase's result (the language's values): how many items of its lists of records
    with a `status` had each, a status written as the text it is, any other value in the notation."""
    if not isinstance(result, dict):
        return ""
    parts = []
    for key, value in result.items():
        if isinstance(value, list) and value and all(isinstance(x, dict) and "status" in x for x in value):
            counts: dict[str, int] = {}
            for x in value:
                said = _said(x["status"])
                counts[said] = counts.get(said, 0) + 1
            parts.append(f"{_said(key)} " + ", ".join(f"{counts[s]} {s}" for s in sorted(counts)))
    return "; ".join(parts)


def _said(value: Any) -> str:
    """A value a line of `play` names (a status, a reason, a field): a text as it is, any other value
    in the language's notation (`true`, `{winner: "a"}`)."""
    return value if isinstance(value, str) else notation(value)


def _part(step: Any, key: str) -> Any:
    """A field of a phase's `advance` record as the language's values (the JSON where there are none)."""
    values = step.values
    return values.get(key) if isinstance(values, dict) else getattr(step, key)


def start_state(rs: Any, shown: str, what: str = "a START state file") -> Any:
    """The ruleset's ``query start_state`` (run on the state its generators start from): the game's start
    when no start file is given (``play``'s START, ``render``'s ``--state``)."""
    from ..api import START_QUERY, RunError
    from .errata import generator_state

    if START_QUERY not in rs.queries():  # (a missing argument: a usage error)
        raise UsageError(f"give {what}: `{rs.path}` has no `query {START_QUERY}` to start from")
    try:
        state = rs.run(generator_state(rs), START_QUERY, validate=False, state_name=shown)
    except RunError as exc:
        raise DiagnosticError(exc.diagnostics) from None
    if not isinstance(state, dict):
        raise DiagnosticError([Diagnostic("S001", f"`{START_QUERY}` gives no start position", Span(rs.path),
                                          help="give a START file")])
    return state


def cmd_play(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..api import START_QUERY, PlayError, RunError, passed_until, phase_name, play
    from ..engine.state import at_lines, read_state_text, state_file_text

    require_files(args.ruleset, args.start, stdin=False)
    if args.orders is not None:
        require_regular(args.orders, "orders file")
    nothing_to_play = args.orders is None and args.until is None and args.random_orders is None
    if nothing_to_play and args.start is None:
        raise UsageError("give --orders FILE, --until PHASE or --random-orders SEED")
    if args.max_phases < 1:
        raise UsageError("--max-phases takes a number of phases from 1")
    rs = load_for_run(args.ruleset, err)
    if rs is None:
        return EXIT_FINDINGS
    shown = args.start if args.start is not None else f"{args.ruleset} (query {START_QUERY})"
    text = None  # (the start file's text: what is said of that state is placed at its lines)
    try:
        text = state_file_text(Path(args.start)) if args.start is not None else None
        state = read_state_text(text, shown) if text is not None else start_state(rs, shown)
        if nothing_to_play and not (isinstance(state, dict) and state.get("orders")):
            # (the start state's own orders are its phase's: then there is a phase to play)
            raise UsageError("give --orders FILE, --until PHASE or --random-orders SEED (the start state holds no orders)")
        items = read_game_file(args.orders, args.max_phases) if args.orders else []
        entries = entries_of(items, args.orders)
    except DiagnosticError as exc:
        print_state_diags(exc.diagnostics, "text", out, err, {**rs.sources, **_quoted(args.orders, exc.diagnostics)},
                          shown, text)
        return _exit_of(exc.diagnostics)
    outdir = Path(args.out) if args.out else None
    if outdir is not None:
        _out_folder(outdir)
    n = 0
    last = None
    try:
        for n, step in enumerate(play(rs, state, entries, until=args.until, max_phases=args.max_phases,
                                      seed=args.seed, shown=shown, random_orders=args.random_orders), 1):
            last = step
            if outdir is not None:
                confine.write_atomic(outdir / f"{n:03d}_{_safe(step.phase)}.json", _dump(step.state) + "\n", durable=False)
                confine.write_atomic(outdir / f"{n:03d}_{_safe(step.phase)}.result.json", _dump(step.result) + "\n",
                                     durable=False)
            if args.format in ("json", "jsonl") and outdir is None:
                out.write(json.dumps({"phase": step.phase, "state": step.state, "result": step.result, "end": step.end},
                                     ensure_ascii=False) + "\n")
            elif args.format == "text":
                out.write(f"{one_line(str(step.phase))}: {one_line(_summary(_part(step, 'result')) or 'played')} -> "
                          f"{one_line(str(step.next_phase))}\n")
    except PlayError as exc:
        if exc.until is not None and args.until is not None:  # (the command line's mistake: U001, exit 2)
            said = [_unknown_until(rs, state, shown, args.until) if exc.until.reason == "unknown" else
                    Diagnostic("U001", f"--until `{one_line(args.until)}` is a phase the game is past: the game is at "
                                       f"`{exc.until.at}`", Span(shown),
                               help="give a phase the game has still to reach, or a start state before it")]
            print_diags(said, "text", out, err, rs.sources)
            return _exit_of(said)
        diags, sources = _in_the_file(at_lines(exc.diagnostics, shown, text), args.orders, items, _in_the_entry)
        print_diags(diags, "text", out, err, {**with_state(rs.sources, shown, text), **sources})
        if exc.played:
            err.write(f"ruleval: stopped after {len(exc.played)} phase{'s' if len(exc.played) != 1 else ''} "
                      f"(last played: {one_line(str(exc.played[-1].phase))})\n")
        return _exit_of(exc.diagnostics)
    if last is None:  # nothing played: the game is already where --until asks, or there were no orders
        try:
            now = phase_name(rs, state, shown)
        except RunError as exc:
            print_state_diags(exc.diagnostics, "text", out, err, rs.sources, shown, text)
            return _exit_of(exc.diagnostics)
        if outdir is not None:
            confine.write_atomic(outdir / f"001_{_safe(now or 'start')}.json", _dump(state) + "\n", durable=False)
        elif args.format in ("json", "jsonl"):
            out.write(json.dumps({"phase": now, "state": state}, ensure_ascii=False) + "\n")
        if args.format == "text":
            out.write((f"now at {one_line(str(now))}" if now is not None else "no phase played") + "\n")
        if entries:
            err.write(f"ruleval: note: {len(entries)} entries of `{args.orders}` were not played "
                      f"(the game is at --until {args.until} already)\n")
        return EXIT_OK
    if last is not None:
        if outdir is not None:
            confine.write_atomic(outdir / f"{n + 1:03d}_{_safe(last.next_phase)}.json", _dump(last.next) + "\n", durable=False)
        elif args.format in ("json", "jsonl"):
            out.write(json.dumps({"phase": last.next_phase, "state": last.next}, ensure_ascii=False) + "\n")
        if args.format == "text":
            if last.end is not None:
                end = _part(last, "end")
                reason = end.get("reason") if isinstance(end, dict) else None
                out.write(f"game over: {one_line(_said(reason if reason else end))}\n")
            else:
                out.write(f"now at {one_line(str(last.next_phase))}\n")
        try:
            passed = last.end is None and args.until is not None and passed_until(rs, state, args.until, last.next_phase)
        except PlayError as exc:
            print_diags(exc.diagnostics, "text", out, err, rs.sources)
            return _exit_of(exc.diagnostics)
        if passed:
            err.write(f"ruleval: note: the game passed --until {args.until} without playing it (the rules skip a phase "
                      f"with nothing to do); stopped at {last.next_phase}\n")
        played_entries = min(n, len(entries))
        if played_entries < len(entries):
            why = 'the game ended' if last.end is not None else f"--until {args.until} was {'passed' if passed else 'reached'}"
            err.write(f"ruleval: note: {len(entries) - played_entries} entries of `{args.orders}` were not played ({why})\n")
    return EXIT_OK


_GAME_FILE = re.compile(r"(\d{3,})_.*\.json")  # what `play --out` writes: NNN_PHASE.json and NNN_PHASE.result.json


def read_out_folder(folder: Path, limit: int = MAX_ENTRIES) -> list[tuple[str, Any]]:
    """The states `play --out` wrote into ``folder`` (``NNN_PHASE.json``, its ``.result.json`` files
    aside), in the order of their numbers, each with its path; S001 when there is none."""
    from ..engine.state import read_state_file

    try:
        names = [f.name for f in folder.iterdir()]
    except OSError as exc:
        raise DiagnosticError([Diagnostic("S001", f"cannot read the folder: {exc.strerror or exc}", Span(str(folder)))]) from None
    found = sorted((int(m.group(1)), name) for name in names
                   if (m := _GAME_FILE.fullmatch(name)) and not name.endswith(".result.json"))
    if not found:
        raise DiagnosticError([Diagnostic("S001", "the folder holds no state files `NNN_PHASE.json`",
                                          Span(str(folder)), help="a folder is read as `ruleval play --out` writes one")])
    if len(found) > limit + 1:
        raise _too_many(str(folder), limit)
    # (two states of one number, `001_a.json` and `001_b.json` or `0001_a.json`: which is played first is
    # not written, and the record is not one `play --out` wrote)
    for (number, first), (again, name) in zip(found, found[1:]):
        if number == again:
            raise DiagnosticError([Diagnostic("S001", f"`{name}` has the number of `{first}`: the order of the "
                                                      "record's states is not known",
                                              Span(confine.display_path(folder / name)),
                                              help="a folder is read as `ruleval play --out` writes one: "
                                                   "one state to each number, in the order played")])
    # The record's files are confined to its folder (`confine`): a symlink among them to a file
    # elsewhere is refused, never read, so no file outside the folder reaches the difference report.
    root = Path(os.path.realpath(folder))
    for _, name in found:
        shown = confine.display_path(folder / name)
        try:
            confine.check_file(folder / name, root, shown)
        except confine.Refused as exc:
            why = (f"`{shown}` resolves outside the record folder" if exc.reason == "outside" else exc.message)
            raise DiagnosticError([Diagnostic("S001", f"cannot read state: {why}", Span(shown),
                                              help="a record folder holds the states themselves, as `ruleval play "
                                                   "--out` writes them, not links to files elsewhere"
                                              if exc.reason == "outside" else exc.help)]) from None
    return [(confine.display_path(folder / name), read_state_file(folder / name, root)) for _, name in found]


def _out_folder(outdir: Path) -> None:
    """``--out``: a new or empty folder (or one without a game's files), made if need be; else U001."""
    if outdir.exists() and not outdir.is_dir():
        raise UsageError(f"--out `{outdir}` is a file, not a folder")
    if outdir.is_dir() and any(_GAME_FILE.fullmatch(f.name) for f in outdir.iterdir()):
        raise UsageError(f"--out `{outdir}` already holds a game's files (NNN_PHASE.json): give a new or empty folder, "
                         "so that two games' files are never mixed")
    try:
        outdir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"--out `{outdir}`: cannot make the folder ({exc.strerror or exc})") from None


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:60] or "phase"


def _dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def cmd_replay(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..api import PlayError, ReplayNote, replay

    require_files(args.ruleset, None)
    if not Path(args.record).is_dir() or args.import_with:
        require_regular(args.record, "record")
    rs = load_for_run(args.ruleset, err)
    if rs is None:
        return EXIT_FINDINGS
    notes: list[ReplayNote] = []
    read_notes: list[tuple[str, str]] = []
    unread = 0  # parts of the record its importer could not read: never compared, so never "every state agrees"
    agreed = 0
    items: list[GameItem] = []
    records: list[tuple[str, Any]] = []
    try:
        if args.import_with:
            records, read_notes, unread = read_imported_record(rs, args.import_with, args.record)
        elif Path(args.record).is_dir():
            records = read_out_folder(Path(args.record))
        else:
            items = read_game_file(args.record)
            records = [(item.where, _played_state(item.value)) for item in items]
        if len(records) < 2:  # (in a file: at its one state, else at its start; a folder has no line)
            at = ((items[0].start if items and items[0].start else Span(args.record, 1, 1, 1, 2))
                  if Path(args.record).is_file() else Span(args.record))
            raise DiagnosticError([Diagnostic("S006", "a record needs at least two states (a phase and the one after it)",
                                              at)])
        first = records[0][1]
        if _orders_list(first) or (isinstance(first, dict) and first and set(first) <= {"phase", "orders"}):
            raise DiagnosticError([Diagnostic(
                "S001", "this is an orders file (entries of `phase` and `orders`), not a record of states",
                Span(records[0][0]), pointer="",
                help="`ruleval replay` reads states, as `ruleval play --format json` or --out writes "
                     "them; an orders file is played with `ruleval play RULESET START --orders FILE`")])
        agreed, mismatch = replay(rs, records, seed=args.seed, notes=notes)
    except (PlayError, DiagnosticError) as exc:
        agreed = exc.agreed if isinstance(exc, PlayError) else 0
        code = _exit_of(exc.diagnostics) if isinstance(exc, PlayError) else EXIT_INPUT
        code = max(code, EXIT_INPUT if unread else EXIT_OK)  # (an error of the rules does not hide what was not read)
        diags = (_in_the_file(exc.diagnostics, args.record, items, _in_the_state)[0] if items
                 else _in_the_folder(exc.diagnostics, records) if Path(args.record).is_dir() and not args.import_with
                 else exc.diagnostics)
        if args.format == "json":  # (one JSON document, whatever happened)
            out.write(json.dumps(_replay_report(agreed, None, notes, read_notes, diags, unread), indent=2,
                                 ensure_ascii=False) + "\n")
        else:
            _replay_notes(out, notes, read_notes)
            print_diags(diags, "text", out, err, rs.sources)
            err.write(f"ruleval: {agreed} phase{'s' if agreed != 1 else ''} of the record agreed before this\n")
            if unread:
                err.write(f"ruleval: {_not_read(unread)} (noted above)\n")
        return code
    # what was not read was not compared: exit 3 (input not read whole), as the largest code that applies
    code = EXIT_INPUT if unread else EXIT_OK if mismatch is None else EXIT_FINDINGS
    if args.format == "json":
        out.write(json.dumps(_replay_report(agreed, mismatch, notes, read_notes, None, unread), indent=2,
                             ensure_ascii=False) + "\n")
        return code
    _replay_notes(out, notes, read_notes)
    parts = _not_read(unread)
    if mismatch is None and unread:
        out.write("\n".join(wrap_words(f"{agreed} phase{'s' if agreed != 1 else ''} replayed: the next states agree "
                                        f"with the record as read, but {parts} (noted above) and not compared")) + "\n")
    elif mismatch is None:
        out.write(f"{agreed} phase{'s' if agreed != 1 else ''} replayed: every next state agrees with the record\n")
    else:
        agree = f"{agreed} phase agrees" if agreed == 1 else f"{agreed} phases agree"
        head = one_line(f"{agree}; {mismatch.phase} ({mismatch.where}) "
                       f"differs from the record's next state ({mismatch.next_where}):")
        out.write("\n".join(wrap_words(head)) + "\n")
        for ptr, recorded, computed in mismatch.differences:
            out.write(_difference_lines(ptr, recorded, computed))
        if unread:
            out.write(f"{parts} (noted above), and not compared\n")
    return code


def _orders_list(value: Any) -> bool:
    """Whether ``value`` reads as an orders entry written as its list of orders alone: a list of
    order texts (or of `{power, order}` entries with a text `order`). Any other list is no state, and
    is refused as one (S001 "a state must be a JSON object"), not named an orders file."""
    def order_like(x: Any) -> bool:
        return ((isinstance(x, str) and bool(x.strip()))
                or (isinstance(x, dict) and isinstance(x.get("order"), str) and bool(x["order"].strip())))
    return isinstance(value, list) and bool(value) and all(order_like(x) for x in value)


def _not_read(unread: int) -> str:
    """How many parts of a record its importer could not read, as `replay` says it."""
    return f"{unread} part{'s' if unread != 1 else ''} of the record {'were' if unread != 1 else 'was'} not read"


def _in_the_folder(diags: list[Diagnostic], records: list[tuple[str, Any]]) -> list[Diagnostic]:
    """What ``replay`` said of the states of a folder `play --out` wrote (each named by its file's path)
    at the line and column of the value its JSON pointer names in that file (``at_lines``)."""
    from ..engine.state import at_lines, state_file_text

    named = {where for where, _ in records}
    for where in dict.fromkeys(d.span.file for d in diags if d.span.file in named and not d.span.line):
        try:
            diags = at_lines(diags, where, state_file_text(Path(where)))
        except DiagnosticError:  # (changed or gone since it was read: said by its name, as before)
            pass
    return diags


def _replay_report(agreed: int, mismatch: Any, notes: list[Any], read_notes: list[tuple[str, str]],
                   refusal: list[Diagnostic] | None, unread: int) -> dict[str, Any]:
    """`replay --format json`: the phases that agreed, the first difference, the refusal (the
    diagnostics of a state refused), the parts of the record its importer could not read, what was
    derived or passed over, and the importer's notes."""
    report: dict[str, Any] = {"phases_agreeing": agreed, "first_difference": None, "unread": unread,
                              "refusal": None if refusal is None else [d.to_json() for d in refusal],
                              "derived": [{"phase": n.phase, "where": n.where, "fields": n.fields}
                                          for n in notes if n.kind == "derived"],
                              "notes": [{"where": w, "note": t} for w, t in read_notes]
                              + [{"where": n.where, "note": n.text()} for n in notes if n.kind != "derived"]}
    if mismatch is not None:
        report["first_difference"] = {
            "phase": mismatch.phase, "where": mismatch.where, "next_state": mismatch.next_where,
            "differences": [{"pointer": p, "recorded": a, "computed": b} for p, a, b in mismatch.differences]}
    return report


def _replay_notes(out: TextIO, notes: list[Any], read_notes: list[tuple[str, str]]) -> None:
    """What `replay` read or did beyond comparing, one line each, before its verdict."""
    for where, text in read_notes:
        out.write("\n".join(wrap_words(one_line(f"note: {where}: {text}"))) + "\n")
    for n in notes:
        out.write("\n".join(wrap_words(one_line(f"note: {n.text()}"))) + "\n")


PLAY_LINE = {"phase", "state", "result", "end"}  # the fields of a line `ruleval play --format json` writes


def _played_state(item: Any) -> Any:
    """A record's item as a state: a line of `play --format json` (`{phase, state, result, end}`) is
    its `state`, so that what `play` writes `replay` reads."""
    if (isinstance(item, dict) and "state" in item and set(item) <= PLAY_LINE and isinstance(item["state"], dict)
            and isinstance(item.get("phase"), str)):
        return item["state"]
    return item


def _difference_lines(ptr: str, recorded: Any, computed: Any) -> str:
    """One difference on one line if it fits the width, else its pointer and then each side on a line
    of its own; a value wider than that is cut (`--format json` gives it whole)."""
    # an item of a list on one side only: said so (not "recorded (not recorded)")
    sides = ([f"computed {_shown(computed)}", "not in the record"] if recorded == "(not recorded)" else
             [f"recorded {_shown(recorded)}", "not computed"] if computed == "(missing)" else
             [f"recorded {_shown(recorded)}", f"computed {_shown(computed)}"])
    line = one_line(f"  {ptr}: {sides[0]}, {sides[1]}")
    if len(line) <= WIDTH:
        return line + "\n"
    return "".join(cut(one_line(text), WIDTH) + "\n" for text in (f"  {ptr}:", f"    {sides[0]}", f"    {sides[1]}"))


def _shown(value: Any) -> str:
    if isinstance(value, str) and value.startswith("("):
        return value
    return json.dumps(value, ensure_ascii=False)

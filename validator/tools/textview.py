"""A run's result as text for a person: the default output of ``ruleval run``.

The result comes as the language's values (``api.Result``), and every value shown is written in the
language's notation (``values.notation``, the one definition ``str`` uses): `none`, `true`, `1/2`,
`"text"`, `[1, 2]`, `{1, 2}`, `{a: 1}` for a record, `{"k" => 1}` for a map; so a value read here can
be pasted back into a ruleset. The interpreter knows no game, so the layout is driven by the
result's shape alone:

- a record is ``label: value`` lines and a map ``key => value`` lines, nested values indented;
- a list of records that share their fields is a table, one line per record (a column per field);
- a procedure's event log (records with ``event`` and ``step``, as ``emit`` writes them) is one
  line per event: its step, what happened, its fields, the clauses it cites;
- an exact distribution (``--exact``) is a table of outcomes, each with its odds as a fraction over
  the dice's own denominator (n/36 after 2d6) and as a percentage, showing only the fields that
  differ between outcomes.

No line is longer than the width: a cell is cut with ``…``, a long value is wrapped, a table too
wide for the width becomes one record per line. ``--format json`` gives everything.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any, Callable

from ..core.diagnostics import WIDTH, one_line  # WIDTH: the longest line written, when the output is not a terminal
from ..lib.values import is_map, json_child, label, notation
CELL = 36  # the most of one value shown in a table cell
MAX_LINES = 8  # the most lines one value is wrapped into


def scalar(value: Any) -> str:
    """A value in the language's notation (``values.notation``: a text in quotes, `none`, `{a: 1}`,
    `{"k" => 1}`), on one line and made ``visible`` (nothing from a state or a ruleset can move the
    cursor or recolour)."""
    return one_line(notation(value))


def _plain(value: Any) -> str:
    """A JSON value as a person reads it (``diff``, which compares JSON results): text without
    quotes, ``-`` for null, a list as ``a, b``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(not isinstance(x, (dict, list)) for x in value):
        return ", ".join(_plain(x) for x in value) if value else "[]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


def _is_record(value: Any) -> bool:
    return isinstance(value, dict) and not is_map(value)


def _key(key: Any, of: Any) -> str:
    """An entry's key as a line shows it: a record's label as a record literal writes it, a map's key
    in the notation (`"k" =>`)."""
    return one_line(label(key) if _is_record(of) else notation(key))


def _head(key: Any, of: Any) -> str:
    return _key(key, of) + (":" if _is_record(of) else " =>")


def words(text: str) -> list[tuple[str, str]]:
    """A line of the notation split at its spaces outside text literals, each part with the spaces
    after it: where it may be wrapped, so that a wrapped value, its lines joined by spaces, is the
    value again."""
    out: list[tuple[str, str]] = []
    start, quoted, i, n = 0, False, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\" and quoted:
            i += 2
            continue
        if c == '"':
            quoted = not quoted
        elif c == " " and not quoted:
            j = i
            while j < n and text[j] == " ":
                j += 1
            if i > start:
                out.append((text[start:i], text[i:j]))
            start = i = j
            continue
        i += 1
    if start < n:
        out.append((text[start:], ""))
    return out


def fill(parts: list[tuple[str, str]], width: int, pad: str, later: str) -> list[str]:
    """``parts`` (each with the spaces after it) in lines of at most ``width``, the first line after
    ``pad``, the others after ``later``; a part longer than a line is cut across lines."""
    lines: list[str] = []
    line, gap = pad, ""
    for part, spaces in parts:
        if line.strip() and len(line) + len(gap) + len(part) <= width:
            line += gap + part
            gap = spaces
            continue
        if line.strip():
            lines.append(line)
            line = later
        while len(line) + len(part) > width:
            room = max(1, width - len(line))
            lines.append(line + part[:room])
            part, line = part[room:], later
        line += part
        gap = spaces
    if line.strip():
        lines.append(line)
    return lines


def cut(text: str, width: int) -> str:
    text = text.replace("\n", " ")
    return text if len(text) <= width else text[:max(1, width - 1)] + "…"


class View:
    def __init__(self, width: int = WIDTH, colour: bool = False):
        self.width = max(40, width)
        self.colour = colour

    def bold(self, text: str) -> str:
        return f"\x1b[1m{text}\x1b[0m" if self.colour else text

    def dim(self, text: str) -> str:
        return f"\x1b[2m{text}\x1b[0m" if self.colour else text

    # ------------------------------------------------------------------ values

    def value(self, value: Any, indent: int = 0) -> list[str]:
        if isinstance(value, dict) and value:
            return self.mapping(value, indent)
        if _records(value):
            return self.records(value, indent)
        return self.wrapped(scalar(value), indent)

    def result(self, result: Any) -> list[str]:
        """A run's ``api.Result``: its value, then the events it emitted (when the value is a record
        or a map that has no ``events`` entry, as the JSON answer has them), then the trace of a
        traced run; an exact run's distribution."""
        if result.exact is not None:
            return self.distribution(result.exact, [v for v, _ in result.outcomes or []], 0)
        value = result.value
        lines = self.value(value)
        if result.events and isinstance(value, dict) and "events" not in value:
            if not value:
                lines = []
            lines += [self.bold("events:") + self.dim(f" {len(result.events)}")] + self.records(result.events, 2)
        if result.explain is not None and isinstance(value, dict):
            lines += [self.bold("explain:")] + self.value(result.explain, 2)
        return lines

    def wrapped(self, text: str, indent: int, first: str = "") -> list[str]:
        """``first`` + ``text`` in lines of the width, the later ones indented two more; a value of
        more than ``MAX_LINES`` lines is cut there, with a note of its length."""
        pad = " " * indent
        if indent + len(first) + len(text) <= self.width:
            return [pad + first + text]
        lines = fill(words(first + text), self.width, pad, pad + "  ") or [pad + first]
        if len(lines) > MAX_LINES:
            lines = lines[:MAX_LINES] + [pad + "  " + self.dim(f"… {len(text)} characters in all (--format json has them)")]
        return lines

    def mapping(self, value: dict[Any, Any], indent: int) -> list[str]:
        lines: list[str] = []
        pad = " " * indent
        rows = keyed_rows(value)
        if rows is not None:
            table = self.table(["", *(one_line(label(c)) for c in rows[0])], rows[1], indent)
            if table is not None:
                return table
        for raw, item in value.items():
            if isinstance(item, dict) and item:
                lines.append(pad + self.bold(_head(raw, value)))
                lines += self.value(item, indent + 2)
            elif _records(item):
                lines.append(pad + self.bold(_head(raw, value)) + self.dim(f" {len(item)}"))
                lines += self.records(item, indent + 2)
            else:
                lines += self.wrapped(scalar(item), indent, _head(raw, value) + " ")
        return lines

    def records(self, items: list[dict[str, Any]], indent: int) -> list[str]:
        if all("event" in x and "step" in x for x in items):
            return self.events(items, indent)
        columns: list[str] = []
        for x in items:
            columns += [k for k in x if k not in columns]  # keys are made visible where shown
        if all(list(x) == columns for x in items):
            table = self.table([one_line(label(c)) for c in columns], [[scalar(x.get(c)) for c in columns] for x in items],
                               indent)
            if table is not None:
                return table
        lines: list[str] = []
        for x in items:
            lines += self.wrapped(scalar(x), indent, "- ")
        return lines

    def table(self, header: list[str], rows: list[list[str]], indent: int,
              right: frozenset[int] = frozenset()) -> list[str] | None:
        """Aligned columns, or None when even cut cells would not fit the width."""
        cells = [[cut(c, CELL) for c in row] for row in rows]
        widths = [max(len(h), *(len(r[i]) for r in cells)) for i, h in enumerate(header)]
        if indent + sum(widths) + 2 * (len(widths) - 1) > self.width:
            return None
        pad = " " * indent

        def line(row: list[str]) -> str:
            parts = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths))]
            return (pad + "  ".join(parts)).rstrip()
        return [self.dim(line(header))] + [line(r) for r in cells]

    def events(self, items: list[dict[str, Any]], indent: int) -> list[str]:
        lines: list[str] = []
        pad = " " * indent
        for n, e in enumerate(items, 1):
            fields = "  ".join(f"{one_line(label(k))}={scalar(v)}" for k, v in e.items()
                               if k not in ("event", "step", "cites"))
            cites = e.get("cites") or []
            head = f"{n:>2}. {_bare(e.get('step'))}: {_bare(e.get('event'))}"
            tail = f"  [{', '.join(_bare(c) for c in cites)}]" if cites else ""
            text = f"{head}  {fields}{tail}" if fields else head + tail
            if len(pad) + len(text) <= self.width:
                lines.append(pad + text)
            else:
                lines.append(pad + cut(head + tail, self.width - indent))
                lines += self.wrapped(fields, indent + 4)
        return lines

    # ------------------------------------------------------------------ exact distributions

    def distribution(self, value: dict[str, Any], results: list[Any], indent: int) -> list[str]:
        """An exact run's enumeration (its JSON, for the odds) with its outcomes' values."""
        outcomes = [o for o in value["outcomes"] if isinstance(o, dict)]
        pad = " " * indent
        lines = [pad + f"{len(outcomes)} outcome{'s' if len(outcomes) != 1 else ''} over "
                 f"{value.get('paths')} dice path{'s' if value.get('paths') != 1 else ''} (total {value.get('total')})"]
        if all(isinstance(r, (dict, list, tuple)) for r in results) and len(results) > 1:
            shown = outcome_labels(results, scalar)
        else:
            shown = [scalar(r) for r in results]
        rows = [[_bare(o.get("odds") or o.get("probability")), f"{100 * float(o.get('p', 0)):.2f}%", s]
                for o, s in zip(outcomes, shown)]
        widths = [max(len("odds"), *(len(r[0]) for r in rows)), max(len("%"), *(len(r[1]) for r in rows))]
        lines.append(self.dim(pad + f"{'odds'.rjust(widths[0])}  {'%'.rjust(widths[1])}  outcome"))
        room = max(30, self.width - indent - widths[0] - widths[1] - 4)
        under = " " * (indent + widths[0] + widths[1] + 4)
        for a, b, c in rows:
            parts = textwrap.wrap(c, room, break_long_words=True, break_on_hyphens=False) or [""]
            lines.append((pad + f"{a.rjust(widths[0])}  {b.rjust(widths[1])}  {parts[0]}").rstrip())
            lines += [under + part for part in parts[1:MAX_LINES]]
        return lines


def _records(value: Any) -> bool:
    """Whether a value is a list of records (not maps), at least one."""
    return isinstance(value, list) and bool(value) and all(_is_record(x) for x in value)


def _bare(value: Any) -> str:
    """A name the report itself shows (a step, an event, a clause, odds): a text as it is."""
    return one_line(value if isinstance(value, str) else notation(value))


def keyed_rows(value: dict[Any, Any]) -> tuple[list[str], list[list[str]]] | None:
    """A record or map whose values are all records of the same fields, none of them holding a
    collection with entries, as a table: a row per key (the key first), a column per field; None for
    any other."""
    items = list(value.values())
    if len(items) < 2 or not all(_is_record(x) and x for x in items):
        return None
    fields = list(items[0])
    if any(list(x) != fields or any(isinstance(v, (dict, list, tuple, set, frozenset)) and v for v in x.values())
           for x in items):
        return None
    return fields, [[_key(k, value), *(scalar(x[f]) for f in fields)] for k, x in value.items()]


def leaves(value: Any, path: str = "", show: Callable[[Any], str] = _plain) -> dict[str, str]:
    """A value's leaves by dotted path (``battle.winner``, ``attempts.0.success``; a map's key in
    brackets, ``hexes["0101"]``), each as text (``show``: by default a JSON value as a person reads it)."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        record = _is_record(value)
        for k, v in value.items():
            step = (f".{k}" if path else str(k)) if record else f"[{notation(k)}]"
            out.update(leaves(v, path + step, show))
        return out
    if isinstance(value, (list, tuple)) and value and any(isinstance(x, (dict, list, tuple)) for x in value):
        out = {}
        for i, v in enumerate(value):
            out.update(leaves(v, f"{path}.{i}" if path else str(i), show))
        return out
    return {path or "value": show(value)}


def outcome_labels(results: list[Any], show: Callable[[Any], str] = _plain) -> list[str]:
    """What tells the outcomes of a distribution apart: the leaves whose value differs between the
    outcomes that have them (a field all outcomes share is left out; ``--format json`` has it)."""
    flat = [leaves(r, "", show) for r in results]
    paths: list[str] = []
    for f in flat:
        paths += [k for k in f if k not in paths]

    def label(keys: list[str]) -> list[str]:
        return [one_line("  ".join(f"{k}={f[k]}" for k in keys if k in f)) or "(the same)" for f in flat]

    varying = [k for k in paths if len({f[k] for f in flat if k in f}) > 1]
    shown = label(varying)
    if len(set(shown)) < len(shown):  # two outcomes apart only by a field one of them lacks
        shown = label([k for k in paths if len({f.get(k) for f in flat}) > 1])
    return shown


def part_at(result: Any, pointer: str) -> tuple[bool, Any]:
    """The part of a run's ``api.Result`` that its JSON answer (``Result.json()``) holds at a JSON
    pointer, as the language's value: (True, the part), or (False, None) where the language's values
    have nothing there. A report that compares JSON answers (``ruleval test``, ``ruleval diff``)
    shows what differs with it, in the notation."""
    from ..engine.state import pointer_parts

    parts = pointer_parts(pointer)
    value = result.value
    if parts and parts[0] == "events" and result.events and isinstance(value, dict) and "events" not in value:
        value, parts = result.events, parts[1:]  # (the events, where the JSON answer adds them)
    for part in parts:
        found, value = json_child(value, part)
        if not found:
            return False, None
    return True, value


def result_text(result: Any, width: int = WIDTH, colour: bool = False) -> str:
    """The text view of a run's ``api.Result``, or of any language value (see the module's docstring)."""
    view = View(width, colour)
    from ..api import Result

    return "\n".join(view.result(result) if isinstance(result, Result) else view.value(result))


def terminal_width(stream: Any) -> int:
    """The width of the terminal ``stream`` writes to, else ``WIDTH`` (a file or a pipe: the output
    does not depend on who reads it)."""
    import os

    try:
        if getattr(stream, "isatty", lambda: False)():
            return os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError, AttributeError):
        pass
    return WIDTH

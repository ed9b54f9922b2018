"""A run's result as text for a person: the default output of ``ruleval run``.

The interpreter knows no game, so the view is driven by the result's shape alone:

- a list of records that share their fields is a table, one line per record (a column per field);
- a procedure's event log (records with ``event`` and ``step``, as ``emit`` writes them) is one
  line per event: its step, what happened, its fields, the clauses it cites;
- an exact distribution (``--exact``) is a table of outcomes, each with its odds as a fraction over
  the dice's own denominator (n/36 after 2d6) and as a percentage, showing only the fields that
  differ between outcomes;
- any other value is ``key: value`` lines, nested values indented.

No line is longer than the width: a cell is cut with ``…``, a long value is wrapped, a table too
wide for the width becomes one ``field=value`` line per record. ``--format json`` gives everything.
"""

from __future__ import annotations

import json
import textwrap
from typing import Any

from ..core.diagnostics import WIDTH, one_line  # WIDTH: the longest line written, when the output is not a terminal
CELL = 36  # the most of one value shown in a table cell
MAX_LINES = 8  # the most lines one value is wrapped into


def scalar(value: Any) -> str:
    """A value as a person reads it: text without quotes, ``-`` for null, a list as ``a, b``; made
    ``visible`` (nothing from a state or a ruleset can move the cursor or recolour)."""
    return one_line(_plain(value))


def _plain(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(not isinstance(x, (dict, list)) for x in value):
        return ", ".join(_plain(x) for x in value) if value else "[]"
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "))


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
        if isinstance(value, dict) and value.get("exact") is True and isinstance(value.get("outcomes"), list):
            return self.distribution(value, indent)
        if isinstance(value, dict):
            return self.mapping(value, indent)
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            return self.records(value, indent)
        return self.wrapped(scalar(value), indent)

    def wrapped(self, text: str, indent: int, first: str = "") -> list[str]:
        """``first`` + ``text`` in lines of the width, the later ones indented two more; a value of
        more than ``MAX_LINES`` lines is cut there, with a note of its length."""
        pad = " " * indent
        if indent + len(first) + len(text) <= self.width:
            return [pad + first + text]
        lines = textwrap.wrap(first + text, self.width, initial_indent=pad, subsequent_indent=pad + "  ",
                              break_long_words=True, break_on_hyphens=False) or [pad + first]
        if len(lines) > MAX_LINES:
            lines = lines[:MAX_LINES] + [pad + "  " + self.dim(f"… {len(text)} characters in all (--format json has them)")]
        return lines

    def mapping(self, value: dict[str, Any], indent: int) -> list[str]:
        lines: list[str] = []
        pad = " " * indent
        rows = keyed_rows(value)
        if rows is not None:
            table = self.table(["", *(one_line(c) for c in rows[0])], rows[1], indent)
            if table is not None:
                return table
        for raw, item in value.items():
            key = one_line(str(raw))
            if isinstance(item, dict) and item:
                lines.append(pad + self.bold(f"{key}:"))
                lines += self.value(item, indent + 2)
            elif isinstance(item, list) and item and all(isinstance(x, dict) for x in item):
                lines.append(pad + self.bold(f"{key}:") + self.dim(f" {len(item)}"))
                lines += self.records(item, indent + 2)
            else:
                lines += self.wrapped(scalar(item), indent, f"{key}: ")
        return lines

    def records(self, items: list[dict[str, Any]], indent: int) -> list[str]:
        if all("event" in x and "step" in x for x in items):
            return self.events(items, indent)
        columns: list[str] = []
        for x in items:
            columns += [k for k in x if k not in columns]  # keys are made visible where shown
        if all(list(x) == columns for x in items):
            table = self.table([one_line(c) for c in columns], [[scalar(x.get(c)) for c in columns] for x in items],
                               indent)
            if table is not None:
                return table
        lines: list[str] = []
        for x in items:
            text = "  ".join(f"{one_line(k)}={scalar(v)}" for k, v in x.items())
            lines += self.wrapped(text, indent, "- ")
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
            fields = "  ".join(f"{one_line(k)}={scalar(v)}" for k, v in e.items() if k not in ("event", "step", "cites"))
            cites = e.get("cites") or []
            head = f"{n:>2}. {scalar(e.get('step'))}: {scalar(e.get('event'))}"
            tail = f"  [{scalar(cites)}]" if cites else ""
            text = f"{head}  {fields}{tail}" if fields else head + tail
            if len(pad) + len(text) <= self.width:
                lines.append(pad + text)
            else:
                lines.append(pad + cut(head + tail, self.width - indent))
                lines += self.wrapped(fields, indent + 4)
        return lines

    # ------------------------------------------------------------------ exact distributions

    def distribution(self, value: dict[str, Any], indent: int) -> list[str]:
        outcomes = [o for o in value["outcomes"] if isinstance(o, dict)]
        results = [o.get("result") for o in outcomes]
        pad = " " * indent
        lines = [pad + f"{len(outcomes)} outcome{'s' if len(outcomes) != 1 else ''} over "
                 f"{value.get('paths')} dice path{'s' if value.get('paths') != 1 else ''} (total {value.get('total')})"]
        if all(isinstance(r, (dict, list)) for r in results) and len(results) > 1:
            shown = outcome_labels(results)
        else:
            shown = [scalar(r) for r in results]
        rows = [[scalar(o.get("odds") or o.get("probability")), f"{100 * float(o.get('p', 0)):.2f}%", s]
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


def keyed_rows(value: dict[str, Any]) -> tuple[list[str], list[list[str]]] | None:
    """A mapping whose values are all records of the same scalar fields, as a table: a row per key
    (the key first), a column per field; None for any other mapping."""
    items = list(value.values())
    if len(items) < 2 or not all(isinstance(x, dict) and x for x in items):
        return None
    fields = list(items[0])
    if any(list(x) != fields or any(isinstance(v, (dict, list)) and v for v in x.values()) for x in items):
        return None
    return fields, [[one_line(str(k)), *(scalar(x[f]) for f in fields)] for k, x in value.items()]


def leaves(value: Any, path: str = "") -> dict[str, str]:
    """A value's leaves by dotted path (``battle.winner``, ``attempts.0.success``), each as text."""
    if isinstance(value, dict) and value:
        out: dict[str, str] = {}
        for k, v in value.items():
            out.update(leaves(v, f"{path}.{k}" if path else str(k)))
        return out
    if isinstance(value, list) and value and any(isinstance(x, (dict, list)) for x in value):
        out = {}
        for i, v in enumerate(value):
            out.update(leaves(v, f"{path}.{i}" if path else str(i)))
        return out
    return {path or "value": _plain(value)}


def outcome_labels(results: list[Any]) -> list[str]:
    """What tells the outcomes of a distribution apart: the leaves whose value differs between the
    outcomes that have them (a field all outcomes share is left out; ``--format json`` has it)."""
    flat = [leaves(r) for r in results]
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


def result_text(result: Any, width: int = WIDTH, colour: bool = False) -> str:
    """The text view of a result (see the module's docstring)."""
    return "\n".join(View(width, colour).value(result))


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

"""``ruleval test --update``: rewrite failing expectations in place, and nothing else.

The case file is not loaded and dumped again (that would drop its comments, anchors and layout):
the new values are written into the text at the spans of the values they replace, found from the
YAML nodes' marks (``safeyaml.compose_spans``). Only what differs is replaced, as deep as the
expectation's shape goes (``testing.refresh``); a value reached through an alias (``*name``) is
replaced at the alias; a value under an anchor that some alias also names is left alone (changing
it would change the other case too) and said so. The edited text is read back and must give exactly
the old document with the new expectations, else the file is not written. The file is replaced
whole (``confine.write_atomic``): a failed write leaves it as it was.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..core import confine, safeyaml
from ..core.safeyaml import AliasUse
from .testing import MAX_CASE_FILE_BYTES, Outcome, _exactly, first_difference, refresh


class _Shared(Exception):
    """The value to change is under an anchor that an alias elsewhere names."""


def update_files(outcomes: list[Outcome]) -> tuple[int, list[str]]:
    """Rewrite the expectations of the failed cases; (expectations updated, notes on those left)."""
    by_file: dict[str, dict[str, Outcome]] = {}
    for o in outcomes:
        if o.status == "failed" and o.actual is not None and "expect" in o.case.data:
            by_file.setdefault(o.case.file, {})[o.case.id] = o
    count = 0
    notes: list[str] = []
    for file, items in by_file.items():
        path = Path(file)
        try:
            text = confine.read_bytes(path, MAX_CASE_FILE_BYTES, None, file).decode("utf-8")
            new, done, left = edit_expectations(text, items)
        except (confine.Refused, UnicodeDecodeError, yaml.YAMLError, RecursionError) as exc:
            notes.append(f"`{file}` not updated: {getattr(exc, 'message', None) or type(exc).__name__}")
            continue
        notes.extend(f"`{file}`: {note}" for note in left)
        if done:
            confine.write_atomic(path, new)  # WriteFailed (U002) leaves the file as it was
            count += done
    return count, notes


def edit_expectations(text: str, items: dict[str, Outcome]) -> tuple[str, int, list[str]]:
    """``text`` with the expectations of ``items`` (case id -> failed outcome) rewritten in place;
    how many were, and why the others were not."""
    root, anchor_of, aliased = safeyaml.compose_spans(text)
    cases = _value(root, "cases")
    edits: list[tuple[int, int, str]] = []
    done: dict[str, Any] = {}
    left: list[str] = []
    if not isinstance(cases, SequenceNode):
        return text, 0, ["its `cases` are not a list written in the file"]
    for item in cases.value:
        if not isinstance(item, MappingNode):
            continue
        ident = _value(item, "id")
        outcome = items.get(ident.value) if isinstance(ident, ScalarNode) else None
        if outcome is None:
            continue
        node = _value(item, "expect")
        expected, actual = outcome.case.data["expect"], outcome.actual
        if node is None:
            left.append(f"case `{outcome.case.id}`: its `expect` is not written in the case (a merge key?)")
            continue
        mine: list[tuple[int, int, str]] = []
        try:
            _edit(node, expected, actual, text, anchor_of, aliased, mine)
        except _Shared as exc:
            left.append(f"case `{outcome.case.id}`: {exc}; not updated")
            continue
        edits.extend(mine)
        done[outcome.case.id] = refresh(expected, actual)
    if not done:
        return text, 0, left
    new = text
    for start, end, replacement in sorted(edits, reverse=True):
        new = new[:start] + replacement + new[end:]
    if not _reads_back(text, new, done):
        return text, 0, left + ["the values could not be written in place; the file is left as it was"]
    return new, len(done), left


def _value(mapping: Any, key: str) -> Any:
    if not isinstance(mapping, MappingNode):
        return None
    for k, v in mapping.value:
        if isinstance(k, ScalarNode) and k.value == key:
            return v
    return None


def _edit(node: Any, expected: Any, actual: Any, text: str, anchor_of: dict[int, str], aliased: set[str],
          edits: list[tuple[int, int, str]]) -> None:
    if first_difference(expected, actual) is None:
        return
    if isinstance(node, AliasUse):  # this case's use of a shared value: the alias gives way to the value
        edits.append((node.start, node.end, _flow(refresh(expected, actual))))
        return
    anchor = anchor_of.get(id(node))
    if anchor is not None and anchor in aliased:
        raise _Shared(f"its expectation is shared through the YAML anchor `&{anchor}`")
    if (isinstance(node, MappingNode) and isinstance(expected, dict) and isinstance(actual, dict)
            and "approx" not in expected and not _exactly(expected)):
        mine: list[tuple[int, int, str]] = []
        for key, want in expected.items():
            if key not in actual or first_difference(want, actual[key]) is None:
                continue
            sub = _value(node, str(key))
            if sub is None:  # written through a merge key: the mapping is written again whole
                break
            _edit(sub, want, actual[key], text, anchor_of, aliased, mine)
        else:
            edits.extend(mine)
            return
    start, end = node.start_mark.index, _end(node, text)
    prefix = f"&{anchor} " if anchor is not None and text.startswith("&", start) else ""
    edits.append((start, end, prefix + _render(refresh(expected, actual), node)))


def _end(node: Any, text: str) -> int:
    """Where a node's text ends: a block collection's ``end_mark`` lies past the comments and blank
    lines after it, so it ends where its last item does; a block scalar's trailing line breaks stay."""
    if isinstance(node, AliasUse):
        return node.end
    if isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style and node.value:
        last = node.value[-1]
        return _end(last[1] if isinstance(node, MappingNode) else last, text)
    end = int(node.end_mark.index)
    while end > node.start_mark.index and text[end - 1] in " \t\r\n":
        end -= 1
    return end


def _flow(value: Any) -> str:
    """A value on one line, as YAML flow (JSON when YAML would take more than a line)."""
    dumped = yaml.safe_dump(value, default_flow_style=True, sort_keys=False, allow_unicode=True, width=1 << 30)
    dumped = dumped.removesuffix("\n").removesuffix("\n...")
    return dumped if "\n" not in dumped else json.dumps(value, ensure_ascii=False)


def _render(value: Any, node: Node) -> str:
    """The text of a value in place of ``node``: a block collection stays a block at the node's column,
    anything else is written on one line."""
    if isinstance(node, (MappingNode, SequenceNode)) and not node.flow_style and isinstance(value, (dict, list)) and value:
        dumped = yaml.safe_dump(value, default_flow_style=False, sort_keys=False, allow_unicode=True, width=100)
        lines = dumped.rstrip("\n").split("\n")
        return "\n".join([lines[0]] + [" " * node.start_mark.column + line for line in lines[1:]])
    return _flow(value)


def _reads_back(old: str, new: str, done: dict[str, Any]) -> bool:
    """Whether ``new`` reads as ``old`` with the updated expectations and nothing else changed."""
    try:
        want = copy.deepcopy(safeyaml.load(old))
        got = safeyaml.load(new)
    except (yaml.YAMLError, RecursionError):
        return False
    for case in want.get("cases", []) if isinstance(want, dict) else []:
        if isinstance(case, dict) and str(case.get("id")) in done:
            case["expect"] = done[str(case.get("id"))]
    return bool(got == want)

"""The one YAML reader: safe tags only, and a budget for aliases.

Every YAML ruleval reads (data, clause catalogues, schemas and the files their ``$ref``s name, test
case files and the states in them) goes through ``load``. The safe loader never builds Python
objects; the budget stops the other attack YAML allows, an alias bomb: ten lines of anchors, each
aliasing the one before ten times, expand to 10^10 nodes (a few hundred bytes that take gigabytes
and hours once anything walks, copies or prints the value). A document may use at most
``MAX_ALIASES`` aliases, which together may add at most ``MAX_ALIAS_NODES`` nodes when expanded,
and no alias may stand inside its own anchor. Past that, ``AliasBudgetError`` (a ``yaml.YAMLError``
with the alias's position) is raised as soon as the offending alias is read.

Speed: an alias is a ``*`` that starts a node, so a text where every ``*`` follows a letter, a digit or
another character that cannot end a node's separator (``_MAYBE_ALIAS``) holds none and is read by
libyaml's C loader in one go. Any other text has its events read by the same C parser and composed
here, counting (about half the C loader's speed, on test-case files).
"""

from __future__ import annotations

import operator
import re
from collections import deque
from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import (AliasEvent, DocumentEndEvent, DocumentStartEvent, MappingEndEvent, MappingStartEvent,
                         ScalarEvent, SequenceEndEvent, SequenceStartEvent, StreamEndEvent)
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.parser import Parser
from yaml.reader import Reader
from yaml.resolver import Resolver
from yaml.scanner import Scanner

from .jsontext import MAX_INT_DIGITS

MAX_ALIASES = 1000
MAX_ALIAS_NODES = 100_000
# A `*` that may start an alias: at a line's start or after anything but a word character or one of
# `(`, `)`, `*`, quotes, `/`, `.`, `#` (before which a `*` can only be part of a scalar or a comment).
_MAYBE_ALIAS = re.compile(r"(?:^|[^\w()*\"'/.#])\*", re.M)

_CParser: Any
_FastLoader: Any
try:  # libyaml: much faster on big files; both are safe loaders
    from yaml import _yaml as _libyaml

    _CParser = _libyaml.CParser
    _FastLoader = yaml.CSafeLoader
except ImportError:  # pragma: no cover
    _CParser = None
    _FastLoader = yaml.SafeLoader


class AliasBudgetError(yaml.MarkedYAMLError):
    """An alias over the budget; ``problem_mark`` is where the alias stands."""


class NodeBudgetError(yaml.MarkedYAMLError):
    """A document of more values than the reader allows; ``problem_mark`` is where the first one past
    the bound stands."""


class _Counting(Composer):
    """PyYAML's composer over the C parser's events, counting each alias use and the nodes it adds, and
    with ``max_nodes`` every node (aliases expanded)."""

    max_nodes: int | None = None

    def __init__(self) -> None:
        super().__init__()
        self.alias_uses = 0
        self.alias_nodes = 0
        self.nodes = 0
        self.sizes: dict[int, int] = {}  # id(node) -> its node count once expanded (nodes are kept in anchors)

    def compose_node(self, parent: Node | None, index: Any) -> Any:
        events: Any = self  # the parser's half of the loader
        if self.max_nodes is not None:
            self.nodes += 1
            if self.nodes > self.max_nodes:
                raise NodeBudgetError(None, None, f"more than {self.max_nodes} values in one document",
                                      events.peek_event().start_mark)
        if events.check_event(AliasEvent):
            event = events.peek_event()
            node: Any = super().compose_node(parent, index)
            size = self.sizes.get(id(node))
            if size is None:
                raise AliasBudgetError(None, None, f"alias `*{event.anchor}` stands inside its own anchor "
                                                   "(a recursive value)", event.start_mark)
            self.alias_uses += 1
            self.alias_nodes += size
            self.nodes += size - 1
            if self.alias_uses > MAX_ALIASES:
                raise AliasBudgetError(None, None, f"more than {MAX_ALIASES} aliases in one document",
                                       event.start_mark)
            if self.alias_nodes > MAX_ALIAS_NODES:
                raise AliasBudgetError(None, None, f"aliases expand to more than {MAX_ALIAS_NODES} nodes "
                                                   f"(alias `*{event.anchor}`)", event.start_mark)
            return node
        node = super().compose_node(parent, index)
        if isinstance(node, ScalarNode):
            size = 1
        elif isinstance(node, SequenceNode):
            size = 1 + sum(self.sizes[id(item)] for item in node.value)
        else:
            size = 1 + sum(self.sizes[id(k)] + self.sizes[id(v)] for k, v in node.value)
        self.sizes[id(node)] = size
        return node


if _CParser is not None:
    class _CountingLoader(_Counting, _CParser, SafeConstructor, Resolver):  # type: ignore[misc, valid-type]
        def __init__(self, stream: str):
            _CParser.__init__(self, stream)
            _Counting.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
else:  # pragma: no cover
    class _CountingLoader(_Counting, Reader, Scanner, Parser, SafeConstructor, Resolver):  # type: ignore[no-redef]
        def __init__(self, stream: str):
            Reader.__init__(self, stream)
            Scanner.__init__(self)
            Parser.__init__(self)
            _Counting.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)


def _with_lines(cls: type) -> type:
    """``cls`` whose mappings also hold ``__line__`` (their 1-based line) and ``__lines__`` (each key's)."""

    class Lines(cls):  # type: ignore[valid-type, misc]
        pass

    def mapping(loader: Any, node: MappingNode) -> dict[Any, Any]:
        value = loader.construct_mapping(node, deep=True)
        value["__line__"] = node.start_mark.line + 1
        value["__lines__"] = {k.value: k.start_mark.line + 1 for k, _ in node.value if isinstance(k, ScalarNode)}
        return value  # type: ignore[no-any-return]

    Lines.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, mapping)
    return Lines


_MERGE = "tag:yaml.org,2002:merge"


def _no_repeats(cls: type) -> type:
    """``cls`` refusing a mapping that gives a key twice (YAML forbids it; PyYAML keeps the last value
    without a word). Keys a merge (``<<: *base``) brings in may be given again: that is what it is for.
    A float that is a whole number is read as that integer (``1901.0`` is the year 1901)."""

    class NoRepeats(cls):  # type: ignore[valid-type, misc]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            if isinstance(node, MappingNode):
                _keys_once(node, [(key, self.construct_object(key)) for key, _ in node.value
                                  if isinstance(key, ScalarNode) and key.tag != _MERGE])
            return super().construct_mapping(node, deep)

        def construct_object(self, node: Any, deep: bool = False) -> Any:
            # A scalar its tag cannot read (`!!bool maybe`, `!!timestamp abc`, `!!int ""`, 2020-02-30, an
            # integer of 5 000 digits) makes PyYAML's constructors raise whatever Python raised (KeyError,
            # AttributeError, IndexError, ValueError): each becomes a YAML error at the scalar.
            try:
                return super().construct_object(node, deep)
            except (ValueError, TypeError, KeyError, IndexError, AttributeError, OverflowError) as exc:
                raise ConstructorError(None, None, _unreadable(node, exc), node.start_mark) from None

        def construct_yaml_int(self, node: Any) -> Any:
            text = str(node.value)
            # (base 60, `1:2:3`, is built digit by digit: quadratic in its parts; a long one is refused)
            if len(text.replace("_", "")) > MAX_INT_CHARS:
                raise ConstructorError(None, None, f"integer of {len(text)} characters, more than {MAX_INT_CHARS}",
                                       node.start_mark)
            return super().construct_yaml_int(node)

        def construct_yaml_float(self, node: Any) -> Any:
            value = super().construct_yaml_float(node)  # a whole number is the integer it equals (``jsontext._float``)
            return int(value) if value.is_integer() and abs(value) <= 2 ** 53 else value

    NoRepeats.add_constructor("tag:yaml.org,2002:int", NoRepeats.construct_yaml_int)
    NoRepeats.add_constructor("tag:yaml.org,2002:float", NoRepeats.construct_yaml_float)
    return NoRepeats


# an integer written longer than a sign and the digits a state's integer may have (``jsontext.MAX_INT_DIGITS``)
# is refused as it is read, before it is built
MAX_INT_CHARS = MAX_INT_DIGITS + 1


def _keys_once(node: MappingNode, keys: list[tuple[ScalarNode, Any]]) -> None:
    """A ``ConstructorError`` at the first key of a mapping given twice; ``keys``: its scalar keys
    (but a merge's) each with the value it reads as. Keyed by that value: `1` and `0x1`, `1` and `1.0`,
    `true` and `1` are one key of a Python dict, and one of the two values would be lost without a word."""
    seen: dict[Any, ScalarNode] = {}
    for key, value in keys:
        first = seen.setdefault(value, key)
        if first is not key:
            again = "" if first.value == key.value else f" (as `{first.value}`)"
            raise ConstructorError("while reading a mapping", node.start_mark,
                                   f"key `{key.value}` given twice{again} (first on line "
                                   f"{first.start_mark.line + 1})", key.start_mark)


class _Unplain(Exception):
    """A node ``_direct`` leaves to PyYAML's constructor."""


_STR, _SEQ, _MAP = "tag:yaml.org,2002:str", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"
# the scalar tags whose constructors give a value at once (no generator), each a hashable one
_SCALARS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("null", "bool", "int", "float", "binary", "timestamp"))


_NO_KEY = object()  # (``from_events``: no key read yet)
_EVENTS_DEPTH = 100  # (``from_events``: deeper, the composer reads it)
_TAGS: dict[tuple[str, Any], str] = {}  # a scalar's tag by its text and (plain, quoted) (``_direct``)
_TAGGED_CHARS = 64  # longer texts are resolved each time: the table keeps at most 100 000 short ones


def _direct(cls: Any) -> type:
    """``cls`` building a document of texts, lists and mappings itself: PyYAML's constructor keeps
    every node in a table and fills each container through a generator, most of reading a data file.
    The same values, and the same first error: containers are filled in PyYAML's order (breadth first,
    a mapping's keys all read before its values), a scalar of another tag by PyYAML's constructor.
    A document holding anything else (a merge, a set, a tagged container) is read by PyYAML's
    constructor from the start."""

    class Direct(cls):  # type: ignore[valid-type, misc]
        # The C composer asks the resolver at every node: with no path resolvers (PyYAML's safe loader
        # has none) the answer is to do nothing, given by a built-in that ignores its arguments at a
        # fraction of a Python call's cost. A plain scalar's tag depends on its text alone: kept.
        descend_resolver = staticmethod(operator.is_)  # (parent, index): ignored
        ascend_resolver = staticmethod(tuple)  # (): ignored

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is not ScalarNode or len(value) > _TAGGED_CHARS:  # (a long text is not kept past its file)
                return super().resolve(kind, value, implicit)
            tag = _TAGS.get((value, implicit))
            if tag is None:
                if len(_TAGS) >= 100_000:
                    _TAGS.clear()
                tag = _TAGS[(value, implicit)] = super().resolve(kind, value, implicit)
            return tag

        def construct_document(self, node: Any) -> Any:
            try:
                return self.direct(node)
            except _Unplain:
                self.forget()
                self.state_generators: list[Any] = []
                return super().construct_document(node)

        def direct(self, root: Node) -> Any:
            todo: deque[tuple[Any, Node]] = deque()
            scalar = self.construct_object

            def value(node: Any) -> Any:
                t, tag = type(node), node.tag
                if t is ScalarNode:
                    if tag == _STR:
                        return node.value
                    if tag in _SCALARS:
                        return scalar(node)
                    raise _Unplain
                if t is SequenceNode and tag == _SEQ:
                    made: Any = []
                elif t is MappingNode and tag == _MAP:
                    made = {}
                else:
                    raise _Unplain
                todo.append((made, node))
                return made

            top = value(root)
            while todo:
                made, node = todo.popleft()
                if type(made) is list:
                    made.extend(map(value, node.value))
                    continue
                pairs = node.value
                if any(type(k) is not ScalarNode or (k.tag != _STR and k.tag not in _SCALARS) for k, _ in pairs):
                    raise _Unplain
                keys = [(k, value(k)) for k, _ in pairs]
                _keys_once(node, keys)
                for (_, key), (_, v) in zip(keys, pairs):
                    made[key] = value(v)
            self.forget()
            return top

        def from_events(self) -> Any:
            """The document's value built from the parser's events as they come, with no node made: the
            same value as ``construct_document`` of the composed document, for a plain one (texts, lists,
            mappings and the scalars of ``_SCALARS``, no anchor, no tag but these, no key given twice, no
            scalar its tag cannot read, nested at most ``_EVENTS_DEPTH`` deep, one document). Anything
            else raises ``_Unplain`` or the error met, and the text is read again by ``get_single_data``:
            so every error, and which one comes first, is PyYAML's."""
            get = self.get_event
            resolve = self.resolve
            tags = _TAGS
            scalar = self.construct_object
            get()  # (the stream's start)
            event = get()
            if type(event) is StreamEndEvent:
                return None
            if type(event) is not DocumentStartEvent:
                raise _Unplain
            top: Any = None
            stack: list[Any] = []  # the containers being filled, innermost last
            keys: list[Any] = []  # for each: the key read whose value comes next, else _NO_KEY
            while True:
                event = get()
                t = type(event)
                if t is ScalarEvent:
                    if event.anchor is not None:
                        raise _Unplain
                    tag = event.tag
                    if tag is None or tag == "!":  # (``resolve``'s table looked up here: a call saved per scalar)
                        value = event.value
                        tag = tags.get((value, event.implicit)) if len(value) <= _TAGGED_CHARS else None
                        if tag is None:
                            tag = resolve(ScalarNode, value, event.implicit)
                    if tag == _STR:
                        made: Any = event.value
                    elif tag in _SCALARS:
                        made = scalar(ScalarNode(tag, event.value, event.start_mark, event.end_mark, event.style))
                    else:
                        raise _Unplain
                    is_new = False
                elif t is MappingStartEvent or t is SequenceStartEvent:
                    tag = event.tag
                    mapping = t is MappingStartEvent
                    if event.anchor is not None or not (tag is None or tag == "!" or tag == (_MAP if mapping else _SEQ)):
                        raise _Unplain
                    made = {} if mapping else []
                    is_new = True
                elif t is MappingEndEvent or t is SequenceEndEvent:
                    stack.pop()
                    keys.pop()
                    continue
                elif t is DocumentEndEvent:
                    break
                else:  # (an alias)
                    raise _Unplain
                if not stack:
                    top = made
                else:
                    into = stack[-1]
                    if type(into) is list:
                        into.append(made)
                    elif keys[-1] is _NO_KEY:
                        if is_new or made in into:  # (a key that is a container, or given twice: PyYAML says)
                            raise _Unplain
                        keys[-1] = made
                    else:
                        into[keys[-1]] = made
                        keys[-1] = _NO_KEY
                if is_new:
                    if len(stack) >= _EVENTS_DEPTH:
                        raise _Unplain
                    stack.append(made)
                    keys.append(_NO_KEY)
            if type(get()) is not StreamEndEvent:
                raise _Unplain
            self.forget()
            return top

        def forget(self) -> None:
            """What PyYAML's constructor kept of the document's nodes (the scalars it was given) dropped."""
            self.constructed_objects: dict[Any, Any] = {}
            self.recursive_objects: dict[Any, Any] = {}

    assert not cls.yaml_path_resolvers, "path resolvers are asked at each node"
    return Direct


def _unreadable(node: Any, exc: Exception) -> str:
    tag = str(getattr(node, "tag", "")).rsplit(":", 1)[-1]
    value = node.value if isinstance(node, ScalarNode) else ""
    shown = value if len(value) <= 40 else value[:40] + "..."
    why = str(exc) if isinstance(exc, ValueError) and len(str(exc)) <= 80 else "not a valid value of that type"
    return f"`{shown}` cannot be read as `!!{tag}`: {why}"


_LOADERS = {(False, False): _direct(_no_repeats(_FastLoader)), (False, True): _no_repeats(_CountingLoader),
            (True, False): _no_repeats(_with_lines(_FastLoader)), (True, True): _no_repeats(_with_lines(_CountingLoader))}


def load(text: str, line_numbers: bool = False, max_nodes: int | None = None) -> Any:
    """The value of one YAML document, read with the safe loader under the alias budget. With
    ``line_numbers``, every mapping also holds ``__line__`` and ``__lines__`` (see ``_with_lines``).
    With ``max_nodes``, a document of more values than that (scalars, lists and mappings, aliases
    expanded) is refused as soon as the first one past it is read (``NodeBudgetError``): a text of
    a few bytes a value takes some hundreds of bytes of memory a value to compose.
    Raises ``yaml.YAMLError`` (``AliasBudgetError`` for an alias over the budget) or ``RecursionError``."""
    try:
        counted = max_nodes is not None or ("*" in text and _MAYBE_ALIAS.search(text) is not None)
        loader = _LOADERS[(line_numbers, counted)](text)
        if not (counted or line_numbers) and _CParser is not None:  # (a plain document: from its events)
            try:
                return loader.from_events()
            except Exception:  # (anything else, or any error: read again, by PyYAML, which says what is wrong)
                pass
            finally:
                loader.dispose()
            loader = _LOADERS[(line_numbers, counted)](text)
        if max_nodes is not None:
            loader.max_nodes = max_nodes
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except yaml.reader.ReaderError as exc:  # a character YAML refuses: said with its line and column
        raise _reader_fault(text, exc) from None


def _reader_fault(text: str, exc: yaml.reader.ReaderError) -> yaml.MarkedYAMLError:
    pos = min(max(exc.position, 0), len(text))
    line = text.count("\n", 0, pos)
    col = pos - (text.rfind("\n", 0, pos) + 1)
    ch = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
    return yaml.MarkedYAMLError(problem=f"the character U+{ch:04X} is not allowed in YAML",
                                problem_mark=yaml.Mark("<text>", pos, line, col, None, None))


# ---------------------------------------------------------------- spans, for editing a file in place


class AliasUse:
    """Where an alias stands in the text (``*name``), and the node it names."""

    def __init__(self, target: Node, anchor: str, start: int, end: int):
        self.target = target
        self.anchor = anchor
        self.start = start
        self.end = end


class _Spans(Composer):
    """Composes a document keeping what editing needs: an alias is an ``AliasUse`` in the tree (not the
    node it names) and a node with an anchor says so in ``anchor_of``."""

    def __init__(self) -> None:
        super().__init__()
        self.anchor_of: dict[int, str] = {}
        self.aliased: set[str] = set()

    def compose_node(self, parent: Node | None, index: Any) -> Any:
        events: Any = self  # the parser's half of the loader
        event: Any = events.peek_event()
        if events.check_event(AliasEvent):
            events.get_event()
            anchor: Any = event.anchor
            if anchor not in self.anchors:
                raise yaml.composer.ComposerError(None, None, f"found undefined alias {anchor!r}", event.start_mark)
            self.aliased.add(anchor)
            return AliasUse(self.anchors[anchor], anchor, event.start_mark.index, event.end_mark.index)
        node = super().compose_node(parent, index)
        if isinstance(event, (ScalarEvent, SequenceStartEvent, MappingStartEvent)) and event.anchor is not None:
            self.anchor_of[id(node)] = event.anchor
        return node


class _SpansLoader(_Spans, Reader, Scanner, Parser, Resolver):  # type: ignore[misc]
    """Pure Python, so that marks count characters of the text (speed does not matter here)."""

    def __init__(self, stream: str):
        Reader.__init__(self, stream)
        Scanner.__init__(self)
        Parser.__init__(self)
        _Spans.__init__(self)
        Resolver.__init__(self)


def compose_spans(text: str) -> tuple[Node | None, dict[int, str], set[str]]:
    """The node tree of a document for editing its text in place: aliases as ``AliasUse``, the anchors
    of nodes (by ``id``) and the anchors some alias names. Marks' ``index`` are offsets in ``text``."""
    loader = _SpansLoader(text)
    try:
        node = loader.get_single_node()
        return node, loader.anchor_of, loader.aliased
    finally:
        loader.dispose()


class Positions:
    """Where the values of a YAML document are written: ``of(parts)`` gives the (line, col, end_line,
    end_col) of what a JSON pointer's unescaped parts name, 1-based, end exclusive, or None when the
    pointer names nothing. A scalar is located at its value, a collection that is a mapping's entry at
    its key (where the entry starts, whether its value is written on that line or below). The
    document is composed once, by libyaml's parser when there is one (marks count characters): an
    alias is the node it names (shown where that is written), never expanded, so composing costs what
    reading the text costs."""

    def __init__(self, text: str):
        self.root = yaml.compose(text, Loader=_FastLoader)

    def _node(self, parts: tuple[str, ...]) -> tuple[Any, Any]:
        """(the node a pointer's parts name, the key node of the entry it is) or (None, None)."""
        node: Any = self.root
        key: Any = None
        for part in parts:
            found: Any = None
            if isinstance(node, MappingNode):
                found, key = _entry(node, part)
            elif isinstance(node, SequenceNode) and part.isdigit() and int(part) < len(node.value):
                found, key = node.value[int(part)], None
            if found is None:
                return None, None
            node = found
        return node, key

    def of(self, parts: tuple[str, ...]) -> tuple[int, int, int, int] | None:
        node, key = self._node(parts)
        if node is None:
            return None
        if key is not None and isinstance(node, (MappingNode, SequenceNode)):
            node = key
        return _span_of(node)

    def key(self, parts: tuple[str, ...]) -> tuple[int, int, int, int] | None:
        """Where the key of the entry the parts name is written (None for an item of a list, or nothing)."""
        _, key = self._node(parts)
        return None if key is None else _span_of(key)

    def key_not_text(self, parts: tuple[str, ...]) -> tuple[int, int, int, int] | None:
        """Where the first key of the mapping the parts name that YAML reads as no text (`on`, `12`)
        is written, or None."""
        node, _ = self._node(parts)
        if not isinstance(node, MappingNode):
            return None
        for k, _ in node.value:
            if isinstance(k, ScalarNode) and k.tag not in ("tag:yaml.org,2002:str", _MERGE):
                return _span_of(k)
        return None


def _entry(node: Any, part: str) -> tuple[Any, Any]:
    """The (value, key) nodes of the entry ``part`` of a mapping node, as the constructor reads it: the
    last of equal keys written in it, else the entry a merge key (`<<: *base`) brings, from the first
    of the mappings merged that has it (merges of merges followed, each mapping looked at once: an
    alias may name a mapping that holds it); (None, None) when none has it."""
    todo, seen = [node], set()
    while todo:
        mapping = todo.pop(0)
        if not isinstance(mapping, MappingNode) or id(mapping) in seen:
            continue
        seen.add(id(mapping))
        found: Any = (None, None)
        merged: list[Any] = []
        for k, v in mapping.value:  # the last of equal keys, as the constructor keeps it
            if isinstance(k, ScalarNode) and k.tag == _MERGE:
                merged += v.value if isinstance(v, SequenceNode) else [v]
            elif isinstance(k, ScalarNode) and k.value == part:
                found = (v, k)
        if found[0] is not None:
            return found
        todo[:0] = merged  # (depth first, in the order written: the first merged that has it wins)
    return None, None


def _span_of(node: Any) -> tuple[int, int, int, int]:
    start, end = node.start_mark, node.end_mark
    if end.line != start.line:  # a multi-line value: its first character
        return start.line + 1, start.column + 1, start.line + 1, start.column + 2
    return start.line + 1, start.column + 1, end.line + 1, max(end.column, start.column + 1) + 1

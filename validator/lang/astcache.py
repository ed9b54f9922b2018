"""Parsed modules kept across processes (``core.blobcache``): a fresh process that reads a module it
has read before rebuilds its AST from plain data instead of parsing it (the LALR parse is the
largest part of loading a ruleset).

An entry is found by a digest of the module's text and shown path (its spans name the path), with
ruleval's own code and grammar (``blobcache.name``): any change to any of them is another entry. Only
a module that parsed without error is kept. The body is ``marshal`` data of tuples, texts, integers,
truth values and ``None`` alone (``_encode``: a node is its class's name and its fields, a span its
numbers); reading it back builds only AST nodes of the classes of ``lang.ast`` and spans, and refuses
anything else (another type, an unknown class, a wrong number of fields), parsing the text instead.
Nothing read is run.
"""

from __future__ import annotations

import marshal
from dataclasses import fields
from typing import Any

from ..core import blobcache
from ..core.diagnostics import Span
from . import ast as A
from .syntax import parse_module

KIND = "parsed"
MAX_ENTRY_BYTES = 40_000_000
FORMAT = "1"
_CLASSES: dict[str, type] = {c.__name__: c for c in vars(A).values()
                             if isinstance(c, type) and issubclass(c, A.Node) and c is not A.Node}
_TUPLE, _NODE, _SPAN_HERE, _SPAN = 0, 1, 2, 3
_PLAIN = (str, int, bool, type(None))
_SPAN_FIELDS = tuple(f.name for f in fields(Span))


class _Refused(Exception):
    """What cannot be kept, or what was read back is not what this module writes."""


def parsed(text: str, path: str) -> A.Module:
    """``syntax.parse_module(text, path)``, from the cache when this text at this path was parsed before."""
    if not blobcache.in_use(KIND):  # (no cache: nothing to look up, nor to encode for keeping)
        return parse_module(text, path)
    entry = blobcache.name(KIND, FORMAT, path, text)
    kept = blobcache.load(KIND, entry, MAX_ENTRY_BYTES)
    if kept is not None:
        try:
            module = _decode(marshal.loads(kept), path)
            if type(module) is A.Module:
                return module
        except (_Refused, ValueError, EOFError, TypeError, IndexError, RecursionError):
            pass
    module = parse_module(text, path)
    try:
        blobcache.store(KIND, entry, marshal.dumps(_encode(module, path)))
    except (_Refused, ValueError, RecursionError):
        pass
    return module


def _encode(x: Any, path: str) -> Any:
    t = type(x)
    if t is tuple:
        return (_TUPLE, tuple([_encode(i, path) for i in x]))
    if t is Span:
        if x.file == path:
            return (_SPAN_HERE, x.line, x.col, x.end_line, x.end_col)
        return (_SPAN, x.file, x.line, x.col, x.end_line, x.end_col)
    if isinstance(x, A.Node):
        if _CLASSES.get(t.__name__) is not t:
            raise _Refused(t.__name__)
        d = x.__dict__
        return (_NODE, t.__name__, *[_encode(d[f], path) for f in t._fields])
    if t in _PLAIN:
        return x
    raise _Refused(t.__name__)


def _decode(x: Any, path: str) -> Any:
    """The AST ``_encode`` gave ``x`` for (a node is made as ``node``'s ``__init__`` makes it: its
    fields set in its ``__dict__``)."""
    t = type(x)
    if t is not tuple:
        if t in _PLAIN:
            return x
        raise _Refused(t.__name__)
    tag = x[0]
    if tag == _NODE:
        cls = _CLASSES.get(x[1]) if type(x[1]) is str else None
        if cls is None or len(x) != len(cls._fields) + 2:  # type: ignore[attr-defined]
            raise _Refused("node")
        made: Any = object.__new__(cls)
        made.__dict__.update(zip(cls._fields, [_decode(v, path) for v in x[2:]]))  # type: ignore[attr-defined]
        return made
    if tag == _TUPLE and len(x) == 2 and type(x[1]) is tuple:
        return tuple([_decode(v, path) for v in x[1]])
    if tag == _SPAN_HERE and len(x) == 5 and all(type(v) is int for v in x[1:]):
        return _span(path, *x[1:])
    if tag == _SPAN and len(x) == 6 and type(x[1]) is str and all(type(v) is int for v in x[2:]):
        return _span(*x[1:])
    raise _Refused("tuple")


def _span(*values: Any) -> Span:
    """``Span(*values)``, made as a node is (a frozen dataclass's ``__init__`` costs as much again: a
    span per node)."""
    made: Any = object.__new__(Span)
    made.__dict__.update(zip(_SPAN_FIELDS, values))
    return made  # type: ignore[no-any-return]

"""Parsed modules kept across processes (``core.blobcache``): a fresh process that reads a module it
has read before rebuilds its AST from plain data instead of parsing it (the LALR parse is the
largest part of loading a ruleset).

An entry is found by a digest of the module's text and shown path (its spans name the path), with
ruleval's own code and grammar (``blobcache.name``): any change to any of them is another entry. Only
a module that parsed without error, and whose entry reads back as that very AST, is kept.

The body is a pickle of the AST, read by ``_Reader``, an unpickler that knows no class but those of
``lang.ast``'s nodes and ``Span``: whatever else an entry names (a function, a module, any other
class) is refused, and the text parsed instead. So reading an entry makes only nodes, spans,
tuples, texts, integers, truth values and ``None``, and runs no code but those classes' own
``__new__`` and ``__init__`` (docs/security.md, "Caches"); a node's fields are set in its
``__dict__`` as ``node``'s ``__init__`` sets them. The C unpickler builds them about 2.5 times
faster than the decoder of marshal data written in Python that it replaces: 138 M instructions for
the largest bundled ruleset's module instead of 345 M, which were a sixteenth of the steady-turn
benchmark's fresh process (its first 200 turns).
"""

from __future__ import annotations

import io
import pickle
from typing import Any

from ..core import blobcache
from ..core.diagnostics import Span
from . import ast as A
from .syntax import parse_module

KIND = "parsed"
MAX_ENTRY_BYTES = 40_000_000
FORMAT = "2"  # (1: marshal data of tuples, decoded in Python)
_CLASSES: dict[tuple[str, str], type] = {(c.__module__, c.__qualname__): c for c in vars(A).values()
                                         if isinstance(c, type) and issubclass(c, A.Node) and c is not A.Node}
_CLASSES[(Span.__module__, Span.__qualname__)] = Span


class _Reader(pickle.Unpickler):
    """An unpickler of ASTs alone: the only globals it finds are the node classes and ``Span``."""

    def find_class(self, module: str, name: str) -> Any:
        found = _CLASSES.get((module, name))
        if found is None:
            raise pickle.UnpicklingError(f"not an AST class: {module}.{name}")
        return found


def _read(body: bytes) -> A.Module | None:
    """The module an entry's body holds, or None if it holds anything else or cannot be read."""
    try:
        module = _Reader(io.BytesIO(body)).load()
    except Exception:  # (a damaged pickle raises many kinds; any of them only means "parse it")
        return None
    return module if type(module) is A.Module else None


def parsed(text: str, path: str) -> A.Module:
    """``syntax.parse_module(text, path)``, from the cache when this text at this path was parsed before."""
    if not blobcache.in_use(KIND):  # (no cache: nothing to look up, nor to encode for keeping)
        return parse_module(text, path)
    entry = blobcache.name(KIND, FORMAT, path, text)
    kept = blobcache.load(KIND, entry, MAX_ENTRY_BYTES)
    if kept is not None:
        module = _read(kept)
        if module is not None:
            return module
    module = parse_module(text, path)
    try:
        body = pickle.dumps(module, protocol=5)
        back = _read(body)  # (kept only if it reads back as this AST: no value of another type in it)
        if back is not None and back == module and _spans(back) == _spans(module):
            blobcache.store(KIND, entry, body)
    except (pickle.PicklingError, TypeError, ValueError, RecursionError):
        pass
    return module


def _spans(x: Any) -> list[Span]:
    """The spans of an AST in order (equality of nodes leaves them out)."""
    out: list[Span] = []
    todo = [x]
    while todo:
        v = todo.pop()
        if isinstance(v, A.Node):
            todo.extend(reversed(list(v.__dict__.values())))
        elif type(v) is tuple:
            todo.extend(reversed(v))
        elif type(v) is Span:
            out.append(v)
    return out

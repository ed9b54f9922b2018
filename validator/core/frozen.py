"""Read-only JSON values: what the loader hands out for a schema.

A schema's verdicts (its fast check, its validator, whether it is usable: ``engine.state``; the input
kinds a typed backend takes from it: ``engine.facts``) are kept by the schema's identity, which is a
sound key only while the schema cannot change. So a loaded schema is a ``FrozenDict`` of
``FrozenList``s and ``FrozenDict``s: a ``dict`` and a ``list`` to every reader (``isinstance``,
``json.dumps``, jsonschema), whose every method that would change it raises ``TypeError``.
"""

from __future__ import annotations

from typing import Any, NoReturn


def _refuse(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
    raise TypeError("a loaded schema is read-only")


class FrozenDict(dict):  # type: ignore[type-arg]
    """A ``dict`` that cannot be changed (``frozen``)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self) -> Any:  # (a copy or a pickle is made whole, not filled in by ``__setitem__``)
        return (FrozenDict, (dict(self),))


class FrozenList(list):  # type: ignore[type-arg]
    """A ``list`` that cannot be changed (``frozen``)."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = \
        reverse = _refuse

    def __reduce__(self) -> Any:
        return (FrozenList, (list(self),))


def frozen(value: Any) -> Any:
    """A JSON value (objects, arrays, scalars) as a read-only one: the same value, each object and array a copy
    that refuses changes."""
    if isinstance(value, dict):
        return value if type(value) is FrozenDict else FrozenDict({k: frozen(v) for k, v in value.items()})
    if isinstance(value, list):
        return value if type(value) is FrozenList else FrozenList([frozen(v) for v in value])
    return value

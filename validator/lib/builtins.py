"""Generic built-in functions: collections, text, numbers, graphs, hex geometry and dice.

None of them knows a game. Each entry says how many arguments it takes and whether it needs the
run context (dice, budget); the compiler checks arity before anything runs.
"""

from __future__ import annotations

import heapq
import unicodedata
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

from typing import TYPE_CHECKING

from ..core.diagnostics import MAX_SUGGESTED_NAME, Span, closest_name
from .runtime import CallError, RandomValue, Rolled
from .values import (Map, brief, as_key, entries, equal, from_key, in_list, in_order, index_in, number_cost, order_key,
                     ordered, probe_key, tree_size, walked, write_value)

if TYPE_CHECKING:
    from .runtime import RunContext as Context  # what a built-in that asks for it is given: the run

# any number of the language: whole, or an exact fraction (its type `number`; a whole one's `int`)
Number = int | Fraction


@dataclass(frozen=True)
class Builtin:
    name: str
    fn: Callable[..., Any]
    min_args: int
    max_args: int
    needs_ctx: bool = False
    kwargs: tuple[str, ...] = ()
    doc: str = ""
    # the kind of its result from its arguments' (``engine.facts``, given its ``Kinds`` and theirs), where
    # its declared result (a list of anything, a record) says less than its definition fixes
    kind: Callable[..., Any] | None = None
    # what each argument must be, by position (``TAKES``; "" for any value): the check refuses, C004, an
    # argument whose type is known to be something else (``types.TypeChecker.taken``)
    takes: tuple[str, ...] = ()


# the kinds of argument a built-in declares (``builtin(takes=...)``): each a collection its run walks or reads
# ("items": a collection, whose items it walks; "sized": one, or a text it reads as a text, `len` and `slice`
# alone; "map": a map; "keyed": what `get` reads by a key or a position), or a whole number ("whole": a
# count, a position, a bound, a coordinate; the type `int`, never a `number` that may be a fraction, nor none
# but where the argument may be left out and its default is none, which it then means: `range(3, none)` is
# `range(3)`, ``takes_none``). A text
# is no collection: no built-in walks its characters, as no loop does (``reference.iterate``; docs/language.md,
# Built-ins)
TAKES = {"items": "a list, set or map", "sized": "a list, set, map or text", "map": "a map", "keyed": "a map or list",
         "whole": "a whole number"}


BUILTINS: dict[str, Builtin] = {}


def takes_none(b: Builtin, at: int) -> bool:
    """Whether the argument at ``at`` of ``b`` may be none: where it may be left out, and none is what it
    is then (the default of its parameter), so that none means leaving it out (`slice(xs, 1, none)`)."""
    defaults = b.fn.__defaults__ or ()
    first_default = b.fn.__code__.co_argcount - len(defaults) - (1 if b.needs_ctx else 0)
    return 0 <= at - first_default < len(defaults) and defaults[at - first_default] is None


def builtin(name: str, min_args: int, max_args: int | None = None, *, ctx: bool = False,
            kwargs: tuple[str, ...] = (), doc: str = "", kind: Callable[..., Any] | None = None,
            takes: tuple[str, ...] = ()) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    assert all(t in TAKES or t == "" for t in takes), takes
    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        BUILTINS[name] = Builtin(name, fn, min_args, min_args if max_args is None else max_args, ctx, kwargs, doc,
                                 kind, takes)
        return fn
    return register


def call_value(ctx: Context, fn: Any, *args: Any) -> Any:
    if not callable(fn):
        raise CallError(f"`{_show(fn)}` is not a function")
    return fn(ctx, *args)


def _show(v: Any, quoted: bool = False) -> str:
    """``v`` for a run-time message (``values.brief``); ``quoted``: a text in its quotes, where the message
    wants a value of another kind and the text `3` would read as the number 3."""
    if hasattr(v, "__next__"):
        return "... for ... in ..."  # a generator, as the language writes it
    return brief(v, 40, quoted)  # (in the language's notation, as every run-time message)


def _spend(ctx: Context, n: int, what: str) -> None:
    """Charge a built-in's work to the run's step budget (a CallError past it: the caller reports E004)."""
    ctx.steps += n
    if ctx.steps > ctx.budget:
        raise CallError(f"{what} exceeds the evaluation budget")


_WALKED = (list, tuple, dict, frozenset, set)


def _walk_cost(ctx: Context, v: Any, what: str) -> None:
    """Comparing or hashing a collection walks it: its size (``values.tree_size``; a tuple of texts and
    numbers, the commonest, counted here: itself and its items)."""
    if type(v) is tuple and _FLAT.issuperset(map(type, v)):
        _spend(ctx, 1 + len(v), what)
    elif isinstance(v, _WALKED):
        _spend(ctx, tree_size(v, max(0, ctx.budget - ctx.steps)), what)


_SIZED = frozenset({list, tuple})  # collections walked as they are (a set in the order of values)
_FLAT = frozenset({int, str, bool, type(None), Fraction})  # what costs nothing to compare or hash
_INTS, _TEXTS = frozenset({int}), frozenset({str})


def sized_items(ctx: Context, xs: Any, what: str) -> Any:
    """The items of a collection in the order they are walked (``values.walked``), each charged a step
    (a generator charges its own loop); the backend's loops walk by it too (``backend._LAMBDA_LOOPS``)."""
    if type(xs) in _SIZED:
        ctx.steps += len(xs)  # (``_spend``, written out: most built-ins start here)
        if ctx.steps > ctx.budget:
            raise CallError(f"{what} exceeds the evaluation budget")
        return xs
    items = walked_items(xs, what)
    if not hasattr(items, "__next__"):
        _spend(ctx, len(items), what)
    return items


def walked_items(xs: Any, what: str) -> Any:
    """The items of a collection in the order they are walked: a map's keys, a set's in the order of
    values (``values.walked``); uncharged (the backend's loops walk by it too)."""
    if isinstance(xs, (dict, set, frozenset)):
        return walked(xs)
    if isinstance(xs, (list, tuple)) or hasattr(xs, "__next__"):
        return xs
    if isinstance(xs, str):  # (no collection: as a loop refuses to walk it, ``reference.iterate``)
        raise CallError(f"{what} needs a list, set or map, not `{_show(xs, quoted=True)}`: a text is no collection; "
                        "split(text) gives its words")
    raise CallError(f"{what} needs a list, set or map, not `{_show(xs, quoted=True)}`")


# ---------------------------------------------------------------- collections and quantifiers


@builtin("len", 1, takes=("sized",), doc="number of items in a list, set or map, or of characters in a text")
def _len(xs: Any) -> int:
    if isinstance(xs, (list, tuple, set, frozenset, dict, str)):
        return len(xs)
    raise CallError(f"len needs a collection, not `{_show(xs)}`")


@builtin("count", 1, takes=("items",), doc="the number of items that are true; the items are truth values (`len` counts items)")
def _count(xs: Any) -> int:
    n = 0
    for x in walked_items(xs, "count"):
        if x is True:
            n += 1
        elif x is not False:
            raise uncounted(x)
    return n


def uncounted(x: Any) -> CallError:
    """`count`'s refusal of an item that is no truth value (raised by the backend's loop too)."""
    return CallError(f"count counts truth values, not `{_show(x, quoted=True)}`; len(...) is the number of items")


@builtin("any", 1, takes=("items",), ctx=True, doc="true if some item is true")
def _any(ctx: Context, xs: Any) -> bool:
    return any(sized_items(ctx, xs, "any"))


@builtin("all", 1, takes=("items",), ctx=True, doc="true if every item is true (true for none)")
def _all(ctx: Context, xs: Any) -> bool:
    return all(sized_items(ctx, xs, "all"))


@builtin("sum", 1, takes=("items",), ctx=True, doc="sum of the items (0 for none)")
def _sum(ctx: Context, xs: Any) -> Any:
    total: Any = 0
    for x in sized_items(ctx, xs, "sum"):
        total = summed(ctx, total, x)
    return total


def summed(ctx: Context, total: Any, x: Any) -> Any:
    """`sum`'s total with one more item (its step: the backend's loop adds each item by it too)."""
    if type(x) is bool:  # (a truth value is no number: `true + 1` is refused too)
        raise CallError("sum adds numbers, not truth values: count(...) counts the true ones")
    if isinstance(x, Fraction) or isinstance(total, Fraction):
        _spend(ctx, number_cost("+", total, x) if isinstance(x, (int, Fraction)) else 0, "sum")
    try:
        return total + x
    except TypeError:
        raise CallError(f"sum adds numbers, not {_KIND_NAMES.get(type(x), 'values like these')}") from None


def _ordered_items(ctx: Context, xs: Any, what: str) -> list[Any]:
    """The items of a collection to compare with one another: each charged a step, and each that is a
    collection its size."""
    items = list(sized_items(ctx, xs, what))
    if not _FLAT.issuperset(map(type, items)):  # some item may be a collection
        for x in items:
            _walk_cost(ctx, x, what)
    return items


@builtin("max", 1, 2, takes=("items",), ctx=True, doc="largest item, or the second argument (default none) when there is none")
def _max(ctx: Context, xs: Any, default: Any = None) -> Any:
    items = _ordered_items(ctx, xs, "max")
    return extreme(items, items, True, "max") if items else default


@builtin("min", 1, 2, takes=("items",), ctx=True, doc="smallest item, or the second argument (default none) when there is none")
def _min(ctx: Context, xs: Any, default: Any = None) -> Any:
    items = _ordered_items(ctx, xs, "min")
    return extreme(items, items, False, "min") if items else default


def extreme(items: list[Any], keys: list[Any], greatest: bool, what: str) -> Any:
    """The item of the greatest (or least) key, the first of equals, keys compared as `<` compares
    them: a truth value with truth values only (``values.ordered``; ``max_by``'s loop in the backend too)."""
    kinds = set(map(type, keys))
    try:
        if bool not in kinds and not (kinds & _SEQUENCES):  # (Python's own order is the language's)
            if keys is items:
                return max(items) if greatest else min(items)
            i = (max if greatest else min)(range(len(keys)), key=keys.__getitem__)
            return items[i]
        best = 0
        for i in range(1, len(keys)):
            ordered(keys[best], keys[i])
            if (keys[i] > keys[best]) if greatest else (keys[i] < keys[best]):
                best = i
        return items[best]
    except TypeError:
        raise _mixed(what, keys) from None


_SEQUENCES = frozenset({list, tuple})


def _mixed(what: str, items: list[Any]) -> CallError:
    """``what`` compared items no order relates (a number and a text, say)."""
    kinds = sorted({_KIND_NAMES.get(type(x), "values like these") for x in items})
    if len(kinds) == 1:
        return CallError(f"{what} cannot order {kinds[0]}")
    return CallError(f"{what} compares its items, and these mix {' and '.join(kinds)}")


_KIND_NAMES = {int: "numbers", Fraction: "numbers", bool: "truth values", str: "texts", list: "lists", tuple: "lists",
               set: "sets", frozenset: "sets", dict: "maps", type(None): "none"}


@builtin("sorted", 1, 2, takes=("items",), ctx=True, doc="items in ascending order, optionally by a key function",
         kind=lambda k, xs, key=None: k.list(k.walked(xs)))
def _sorted(ctx: Context, xs: Any, key: Any = None) -> list[Any]:
    if key is None:
        return in_order(_ordered_items(ctx, xs, "sorted"))
    items = list(sized_items(ctx, xs, "sorted"))
    return by_keys(items, [_keyed(ctx, key, x, "sorted") for x in items])


def by_keys(items: list[Any], keys: list[Any]) -> list[Any]:
    """``items`` in the order of their ``keys`` (equal keys in the items' order)."""
    if not (_TEXTS.issuperset(map(type, keys)) or _INTS.issuperset(map(type, keys))):  # (see ``values.in_order``)
        keys = [order_key(k) for k in keys]
    return [items[i] for i in sorted(range(len(items)), key=keys.__getitem__)]


@builtin("sort_by", 2, takes=("items",), ctx=True, doc="items ordered by a key function")
def _sort_by(ctx: Context, xs: Any, key: Any) -> list[Any]:
    return _sorted(ctx, xs, key)


@builtin("index_of", 2, takes=("items",), ctx=True, doc="position of an item in a list, or none")
def _index_of(ctx: Context, xs: Any, x: Any) -> int | None:
    items = _ordered_items(ctx, xs, "index_of")
    _walk_cost(ctx, x, "index_of")
    try:
        return index_in(x, items)
    except ValueError:
        return None


@builtin("range", 1, 2, takes=("whole", "whole"), ctx=True, doc="integers from a (default 0) up to, not including, b")
def _range(ctx: Context, a: int, b: int | None = None) -> list[int]:
    lo, hi = (0, a) if b is None else (a, b)
    for x in (lo, hi):
        if type(x) is not int:  # (the words of the check's C004: ``TAKES``)
            raise CallError(f"range needs whole numbers, not `{_show(x, quoted=True)}`")
    n = max(0, hi - lo)
    ctx.steps += n
    if ctx.steps > ctx.budget:
        raise CallError(f"range of {n} items exceeds the evaluation budget")
    return list(range(lo, hi))


@builtin("first", 1, 2, takes=("items",), doc="first item, or the default (none) if empty")
def _first(xs: Any, default: Any = None) -> Any:
    for x in walked_items(xs, "first"):
        return x
    return default


@builtin("last", 1, 2, takes=("items",), ctx=True, doc="last item, or the default (none) if empty")
def _last(ctx: Context, xs: Any, default: Any = None) -> Any:
    items = list(sized_items(ctx, xs, "last"))
    return items[-1] if items else default


@builtin("reverse", 1, takes=("items",), ctx=True, doc="a list in reverse order", kind=lambda k, xs: k.list(k.walked(xs)))
def _reverse(ctx: Context, xs: Any) -> list[Any]:
    return list(sized_items(ctx, xs, "reverse"))[::-1]


@builtin("set", 0, 1, takes=("items",), ctx=True, doc="a set of the items (the empty set with no argument)")
def _set(ctx: Context, xs: Any = ()) -> frozenset[Any]:
    return _set_of(ctx, xs, "set")


@builtin("tuple", 1, takes=("items",), ctx=True, doc="a tuple of the items, which may be a map's key or a set's item")
def _tuple(ctx: Context, xs: Any) -> tuple[Any, ...]:
    return tuple(sized_items(ctx, xs, "tuple"))


@builtin("list", 1, takes=("items",), ctx=True, doc="a list of the items")
def _list(ctx: Context, xs: Any) -> list[Any]:
    return list(sized_items(ctx, xs, "list"))


@builtin("unique", 1, takes=("items",), ctx=True, doc="items with repeats removed, first occurrence kept",
         kind=lambda k, xs: k.list(k.walked(xs)))
def _unique(ctx: Context, xs: Any) -> list[Any]:
    out: list[Any] = []
    seen: set[Any] = set()
    for x in _ordered_items(ctx, xs, "unique"):
        try:
            k = as_key(x)  # (true and 1 are two items)
            if k in seen:
                continue
            seen.add(k)
        except TypeError:  # a record, list or map: compared with those kept so far
            _spend(ctx, len(out), "unique")
            if in_list(x, out):
                continue
        out.append(x)
    return out


@builtin("keys", 1, takes=("map",), ctx=True, doc="a map's keys", kind=lambda k, m: k.list(k.walked(m)))
def _keys(ctx: Context, m: Any) -> list[Any]:
    return list(sized_items(ctx, _as_map(m, "keys"), "keys"))


@builtin("rows", 1, ctx=True, doc="rows(table): a table's row keys (a one-key table's keys): its cells' in the order "
                                   "written, a variant's added cells' after them, then its source's; each once")
def _rows(ctx: Context, t: Any) -> list[Any]:
    return _table_keys(ctx, t, 0, "rows")


@builtin("columns", 1, ctx=True, doc="columns(table): a two-key table's column keys, in the order `rows` gives rows")
def _columns(ctx: Context, t: Any) -> list[Any]:
    return _table_keys(ctx, t, 1, "columns")


def _table_keys(ctx: Context, t: Any, i: int, what: str) -> list[Any]:
    """The ``i``-th keys of a table named at the call (``engine.reference.UnitFunction.table_keys``: the
    engine's, which alone can read a table's source), each entry it looks at charged a step."""
    keys = getattr(t, "table_keys", None)
    if keys is None:  # (the check refuses any argument but a table's name, C004: a value never gets here)
        raise CallError(f"{what} needs a table's name, not `{_show(t)}`")
    found, looked = keys(ctx, i, what)
    _spend(ctx, looked, what)
    return found  # type: ignore[no-any-return]


@builtin("values", 1, takes=("map",), ctx=True, doc="a map's values", kind=lambda k, m: k.list(k.values(m)))
def _values(ctx: Context, m: Any) -> list[Any]:
    _spend(ctx, len(_as_map(m, "values")), "values")
    return list(m.values())


@builtin("items", 1, takes=("map",), ctx=True, doc="a map's entries as {key, value} records")
def _items(ctx: Context, m: Any) -> list[dict[str, Any]]:
    _spend(ctx, len(_as_map(m, "items")), "items")
    return [{"key": k, "value": v} for k, v in entries(m)]


def _as_map(m: Any, what: str) -> dict[Any, Any]:
    if not isinstance(m, dict):
        raise CallError(f"{what} needs a map, not `{_show(m, quoted=True)}`")
    return m


@builtin("get", 2, 3, takes=("keyed",), ctx=True, doc="a map's value for a key, or the default (none)")
def _get(ctx: Context, m: Any, k: Any, default: Any = None) -> Any:
    _walk_cost(ctx, k, "get")
    if isinstance(m, dict):
        try:
            return m.get(probe_key(k), default)
        except TypeError:
            raise CallError(f"`{_show(k)}` cannot be a key") from None
    if isinstance(m, (list, tuple)):
        if type(k) is not int:  # (as `xs[k]`: get(xs, true) read xs[1], and a fraction or text was said of xs)
            raise CallError(f"get reads a list at a whole-number position, not `{_show(k, quoted=True)}`")
        return m[k] if -len(m) <= k < len(m) else default
    raise CallError(f"get needs a map or list, not `{_show(m, quoted=True)}`")


@builtin("pick", 2, takes=("map", "items"), ctx=True,
         doc="pick(map, keys): the map's entries for those keys, in their order; absent or none values left out")
def _pick(ctx: Context, m: Any, ks: Any) -> dict[Any, Any]:
    src = _as_map(m, "pick")
    out = Map() if type(m) is Map else {}  # (of the kind of `m`)
    for k in _ordered_items(ctx, ks, "pick"):
        try:
            v = src.get(as_key(k))
        except TypeError:
            raise CallError(f"`{_show(k)}` cannot be a key") from None
        if v is not None:
            out[as_key(k)] = v
    return out


@builtin("has", 2, takes=("map",), ctx=True, doc="true if a map has the key")
def _has(ctx: Context, m: Any, k: Any) -> bool:
    if type(k) not in _FLAT:
        _walk_cost(ctx, k, "has")
    try:
        return probe_key(k) in (m if type(m) is dict or type(m) is Map else _as_map(m, "has"))
    except TypeError:
        return False


@builtin("put", 3, takes=("map",), ctx=True, doc="a copy of a map with one key set")
def _put(ctx: Context, m: Any, k: Any, v: Any) -> dict[Any, Any]:
    _spend(ctx, len(_as_map(m, "put")), "put")
    _walk_cost(ctx, k, "put")
    # a record given a label stays a record; into `{}`, or a key that is no text, it makes a map
    out = dict(m) if type(m) is dict and m and type(k) is str else Map(m)
    try:
        out[as_key(k)] = v
    except TypeError:
        raise CallError(f"`{_show(k)}` cannot be a key") from None
    return out


@builtin("remove", 2, takes=("items",), ctx=True, doc="a copy of a map without a key, or of a list without an item")
def _remove(ctx: Context, m: Any, k: Any) -> Any:
    _walk_cost(ctx, k, "remove")
    if isinstance(m, dict):
        _spend(ctx, len(m), "remove")
        gone = probe_key(k)
        return (Map if type(m) is Map else dict)((a, b) for a, b in m.items() if a != gone)
    return [x for x in _ordered_items(ctx, m, "remove") if not equal(x, k)]


@builtin("merge", 2, takes=("map", "map"), ctx=True, doc="a map with the entries of both (the second wins)",
         kind=lambda k, a, b: k.over(a, b))
def _merge(ctx: Context, a: Any, b: Any) -> dict[Any, Any]:
    ta, tb = type(a), type(b)
    if not (ta is dict and tb is dict):
        _as_map(a, "merge"), _as_map(b, "merge")
        if (ta is Map and a) or (tb is Map and b):  # (two records, or a record and `{}`, make a record)
            _spend(ctx, len(a) + len(b), "merge")
            return Map({**a, **b})
    _spend(ctx, len(a) + len(b), "merge")
    return {**a, **b}


@builtin("append", 2, takes=("items",), ctx=True, doc="a list with one more item at the end")
def _append(ctx: Context, xs: Any, x: Any) -> list[Any]:
    return [*sized_items(ctx, xs, "append"), x]


@builtin("concat", 2, takes=("items", "items"), ctx=True, doc="two lists one after the other",
         kind=lambda k, a, b: k.list(k.join(k.walked(a), k.walked(b))))
def _concat(ctx: Context, a: Any, b: Any) -> list[Any]:
    out = a + b if type(a) is list and type(b) is list else [*walked_items(a, "concat"), *walked_items(b, "concat")]
    ctx.steps += len(out)
    if ctx.steps > ctx.budget:
        raise CallError(f"a list of {len(out)} items exceeds the evaluation budget")
    return out


def _set_of(ctx: Context, xs: Any, what: str) -> frozenset[Any]:
    if type(xs) is frozenset:  # (a set as it is, charged as ``_ordered_items`` charges: not walked in order)
        _spend(ctx, len(xs), what)
        if not _FLAT.issuperset(map(type, xs)):
            for x in xs:
                _walk_cost(ctx, x, what)
        return xs
    items = _ordered_items(ctx, xs, what)
    try:
        if _INTS.issuperset(map(type, items)) or _TEXTS.issuperset(map(type, items)):
            return frozenset(items)
        return frozenset([as_key(x) for x in items])  # (a truth value kept apart from the numbers)
    except TypeError:
        raise CallError("set items are texts, numbers, truth values, none, or tuples of texts, numbers and none") from None


@builtin("union", 2, takes=("items", "items"), ctx=True, doc="items in either")
def _union(ctx: Context, a: Any, b: Any) -> frozenset[Any]:
    return _set_of(ctx, a, "union") | _set_of(ctx, b, "union")


@builtin("intersection", 2, takes=("items", "items"), ctx=True, doc="items in both")
def _inter(ctx: Context, a: Any, b: Any) -> frozenset[Any]:
    return _set_of(ctx, a, "intersection") & _set_of(ctx, b, "intersection")


@builtin("difference", 2, takes=("items", "items"), ctx=True, doc="items of the first not in the second")
def _diff(ctx: Context, a: Any, b: Any) -> frozenset[Any]:
    return _set_of(ctx, a, "difference") - _set_of(ctx, b, "difference")


def _keyed(ctx: Context, key: Any, x: Any, what: str) -> Any:
    """An item's key (``key`` called on it), charged (``key_charged``)."""
    return key_charged(ctx, key(ctx, x) if callable(key) else call_value(ctx, key, x), what)  # (call_value
    # says what is no function)


def key_charged(ctx: Context, k: Any, what: str) -> Any:
    """A key of `sorted`, `group_by`... that is a collection charged its walk (the backend's loops too,
    which call it for the charge alone: their key may be a literal)."""
    if type(k) not in _FLAT:
        _walk_cost(ctx, k, what)
    return k


@builtin("group_by", 2, takes=("items",), ctx=True, doc="a map from key to the list of items with that key")
def _group_by(ctx: Context, xs: Any, key: Any) -> dict[Any, list[Any]]:
    out: dict[Any, list[Any]] = Map()
    for x in sized_items(ctx, xs, "group_by"):
        out.setdefault(as_key(_keyed(ctx, key, x, "group_by")), []).append(x)
    return out


@builtin("index_by", 2, takes=("items",), ctx=True, doc="a map from key to the (last) item with that key")
def _index_by(ctx: Context, xs: Any, key: Any) -> dict[Any, Any]:
    return Map((as_key(_keyed(ctx, key, x, "index_by")), x) for x in sized_items(ctx, xs, "index_by"))


@builtin("max_by", 2, 3, takes=("items",), ctx=True, doc="the item with the largest key, or the default")
def _max_by(ctx: Context, xs: Any, key: Any, default: Any = None) -> Any:
    items = list(walked_items(xs, "max_by"))
    return extreme(items, [call_value(ctx, key, x) for x in items], True, "max_by") if items else default


@builtin("min_by", 2, 3, takes=("items",), ctx=True, doc="the item with the smallest key, or the default")
def _min_by(ctx: Context, xs: Any, key: Any, default: Any = None) -> Any:
    items = list(walked_items(xs, "min_by"))
    return extreme(items, [call_value(ctx, key, x) for x in items], False, "min_by") if items else default


@builtin("fold", 3, takes=("items",), ctx=True, doc="fold(items, start, fn(acc, item)): apply fn left to right, threading acc")
def _fold(ctx: Context, xs: Any, start: Any, fn: Any) -> Any:
    acc = start
    items = iter(walked_items(xs, "fold"))
    for x in items:  # (``call_value``: the function asked once, at the first item)
        acc = call_value(ctx, fn, acc, x)
        for x in items:
            acc = fn(ctx, acc, x)
    return acc


@builtin("scan", 3, takes=("items",), ctx=True, doc="like fold, but the list of every intermediate accumulator")
def _scan(ctx: Context, xs: Any, start: Any, fn: Any) -> list[Any]:
    acc, out = start, []
    for x in walked_items(xs, "scan"):
        acc = call_value(ctx, fn, acc, x)
        out.append(acc)
    return out


@builtin("enumerate", 1, takes=("items",), ctx=True, doc="{index, item} records, index from 0")
def _enumerate(ctx: Context, xs: Any) -> list[dict[str, Any]]:
    return [{"index": i, "item": x} for i, x in enumerate(sized_items(ctx, xs, "enumerate"))]


@builtin("zip", 2, takes=("items", "items"), ctx=True, doc="pairs of items as [a, b] lists")
def _zip(ctx: Context, a: Any, b: Any) -> list[list[Any]]:
    return [[x, y] for x, y in zip(sized_items(ctx, a, "zip"), sized_items(ctx, b, "zip"))]


@builtin("slice", 2, 3, takes=("sized", "whole", "whole"), ctx=True,
         doc="items from index a up to b (of a text: its characters, a text)")
def _slice(ctx: Context, xs: Any, a: int, b: int | None = None) -> Any:
    for x in (a, b) if b is not None else (a,):  # (Python's slice took none from, and refused a fraction as E001)
        if type(x) is not int:
            raise CallError(f"slice needs whole numbers as positions, not `{_show(x, quoted=True)}`")
    if isinstance(xs, str):
        _spend(ctx, len(xs), "slice")
        return xs[a:b]
    return list(sized_items(ctx, xs, "slice"))[a:b]


# ---------------------------------------------------------------- numbers and text


# the built-ins that read numbers and refuse a truth value (``_no_truth``), which the check refuses too where it
# knows an argument to be one (``types.TypeChecker.taken``)
NO_TRUTH = frozenset({"abs", "fraction", "int"})


def _no_truth(what: str, *xs: Any) -> None:
    """A truth value is no number (docs/language.md, "Equality of kinds"), though Python's abs(True) and
    int(True) are 1."""
    if bool in map(type, xs):
        raise CallError(f"{what} needs numbers, not truth values")


_NUMBER_KINDS = frozenset({int, Fraction, float})  # (a state's float is read as the exact fraction it writes)


def _numbers(what: str, *xs: Any) -> None:
    """A built-in that reads numbers given what is none (a text, a list, none, dice, a truth value) refuses
    it as a bad argument (E011), as `int` does, not as Python's own refusal (E001) nor, as Python's
    `Fraction(2, None)` is 2, with an answer."""
    _no_truth(what, *xs)
    for x in xs:
        if type(x) not in _NUMBER_KINDS:
            raise CallError(f"{what} needs {'a number' if len(xs) == 1 else 'numbers'}, not `{_show(x, True)}`")


@builtin("abs", 1)
def _abs(x: Any) -> Number:
    if type(x) is not int:
        _numbers("abs", x)
    return abs(x)


@builtin("fraction", 2, doc="an exact fraction")
def _fraction(a: Number, b: Number) -> Number:
    if type(a) is not int or type(b) is not int:
        _numbers("fraction", a, b)
    if b == 0:
        raise CallError("fraction with a zero denominator")
    f = Fraction(a, b)
    return f.numerator if f.denominator == 1 else f


def _text_of(x: Any) -> str:
    try:
        return write_value(x)
    except ValueError as exc:  # too large, or an integer past Python's digit limit for text
        raise CallError(f"cannot write this value as text: {exc}") from None


@builtin("str", 1, ctx=True, doc="text of a value, in the language's notation (a text is itself)")
def _str(ctx: Context, x: Any) -> str:
    t = type(x)  # (a text, and a number of at most 64 bits, written here: what ``_text_of`` gives them)
    if t is str or (t is int and x.bit_length() <= 64):
        out = x if t is str else int.__repr__(x)
        _spend(ctx, len(out), "str")
        return out
    _walk_cost(ctx, x, "str")
    out = _text_of(x)
    _spend(ctx, len(out), "str")
    return out


@builtin("int", 1, doc="an integer from text (digits, perhaps a minus sign and spaces around) or a number "
                       "(none if the text is no integer)")
def _int(x: Any) -> int | None:
    t = type(x)
    if t is int or t is Fraction:
        return int(x)
    if t is not str:  # (a text that reads as no integer is none; a value of another kind, none too, is no text)
        _no_truth("int", x)
        raise CallError(f"int needs a number or a text, not `{_show(x, True)}`")
    if _INTEGER_TEXT.fullmatch(x):
        if len(x) > MAX_INT_DIGITS:
            raise CallError(f"an integer text of {len(x)} characters is too long (at most {MAX_INT_DIGITS})")
        return int(x)
    return None


_INTEGER_TEXT = re.compile(r"\s*-?[0-9]+\s*")
MAX_INT_DIGITS = 4000  # (below Python's limit for reading an integer from text)


@builtin("lower", 1, ctx=True)
def _lower(ctx: Context, s: Any) -> str:
    _spend_text(ctx, s, "lower")
    return s.lower()  # type: ignore[no-any-return]


@builtin("casefold", 1, ctx=True, doc="casefold(text): the text in Unicode's composed form (NFC) and case-folded, "
                                       "so that two spellings of one name compare equal (`Québec`, `QUE\u0301BEC`)")
def _casefold(ctx: Context, s: Any) -> str:
    _spend_text(ctx, s, "casefold")
    if s.isascii():  # (composed already, and case-folded as lowered)
        return s.lower()
    return unicodedata.normalize("NFC", unicodedata.normalize("NFC", s).casefold())


@builtin("upper", 1, ctx=True)
def _upper(ctx: Context, s: Any) -> str:
    _spend_text(ctx, s, "upper")
    return s.upper()  # type: ignore[no-any-return]


@builtin("trim", 1, ctx=True)
def _trim(ctx: Context, s: Any) -> str:
    _spend_text(ctx, s, "trim")
    return s.strip()  # type: ignore[no-any-return]


@builtin("split", 1, 2, ctx=True, doc="words of a text (split at runs of spaces), or parts between a separator")
def _split(ctx: Context, s: Any, sep: Any = None) -> list[str]:
    _spend(ctx, len(_text(s, "split")), "split")
    if sep is None:
        return s.split()  # type: ignore[no-any-return]
    if _text(sep, "split") == "":
        raise CallError("split needs a separator that is not empty; list(...) is not for texts, use a pattern")
    return s.split(sep)  # type: ignore[no-any-return]


@builtin("join", 2, takes=("items",), ctx=True, doc="texts joined with a separator (other values written as `str` writes them)")
def _join(ctx: Context, xs: Any, sep: Any) -> str:
    sep = _text(sep, "join")
    parts = [x if type(x) is str else _str(ctx, x) for x in sized_items(ctx, xs, "join")]
    _spend(ctx, sum(map(len, parts)) + len(sep) * len(parts), "join")
    return sep.join(parts)


@builtin("replace", 3, ctx=True, doc="replace(text, old, new): every `old` in the text replaced by `new`")
def _replace(ctx: Context, s: Any, a: Any, b: Any) -> str:
    if not (type(s) is str and type(a) is str and type(b) is str):  # (the commonest case asked at once)
        _text(s, "replace"), _text(a, "replace"), _text(b, "replace")
    # the length of what is built: the text, and what each replacement adds to it (an empty `old` is
    # found before every character and after the last)
    more = len(b) - len(a)
    ctx.steps += len(s) + (s.count(a) if a else len(s) + 1) * more if more > 0 else len(s)
    if ctx.steps > ctx.budget:
        raise CallError("replace exceeds the evaluation budget")
    return s.replace(a, b)


@builtin("starts_with", 2)
def _starts(s: Any, p: Any) -> bool:
    if not (type(s) is str and type(p) is str):
        _text(s, "starts_with"), _text(p, "starts_with")
    return s.startswith(p)  # type: ignore[no-any-return]


@builtin("ends_with", 2)
def _ends(s: Any, p: Any) -> bool:
    if not (type(s) is str and type(p) is str):
        _text(s, "ends_with"), _text(p, "ends_with")
    return s.endswith(p)  # type: ignore[no-any-return]


@builtin("pad", 2, takes=("whole", "whole"), ctx=True,
         doc="a whole number written with at least n digits (a negative one's sign before them)")
def _pad(ctx: Context, x: Any, n: Any) -> str:
    # both whole numbers, as the check declares them (``takes``): int() took a fraction width (pad(7, 5/2)
    # wrote "07") and a text one ("3"), and zfill padded any value's text ("001/2", "0ab"), with no word
    if type(n) is not int:
        raise CallError(f"pad needs a whole number of digits, not `{_show(n, quoted=True)}`")
    if type(x) is not int:
        raise CallError(f"pad writes a whole number's digits, not `{_show(x, quoted=True)}`: `str` writes any value")
    ctx.steps += max(0, n)
    if ctx.steps > ctx.budget:
        raise CallError(f"a width of {n} exceeds the evaluation budget")
    if x < 0:  # the sign before the digits: -007
        return "-" + str(-x).zfill(n)
    return str(x).zfill(n)


@builtin("closest", 2, ctx=True,
         doc="closest(text, names): the name of `names` a misspelt `text` most likely meant, or none; the check's "
             "own did-you-mean (docs/language.md defines it)")
def _closest(ctx: Context, s: Any, names: Any) -> str | None:
    text = _text(s, "closest")
    items = list(sized_items(ctx, names, "closest"))
    for x in items:
        if type(x) is not str:
            raise CallError(f"closest chooses among texts, not `{_show(x)}`")
    if len(text) > MAX_SUGGESTED_NAME:
        return None
    # each name compared costs the product of the two lengths (what matching them may take)
    _spend(ctx, sum(len(text) * len(x) for x in items if len(x) <= MAX_SUGGESTED_NAME), "closest")
    return closest_name(text, items)


def _spend_text(ctx: Context, s: Any, what: str) -> None:
    """A text's length charged to the run (``_spend`` of ``_text``, the type asked at once)."""
    if type(s) is not str:
        _text(s, what)
    ctx.steps += len(s)  # (``_spend``, written out)
    if ctx.steps > ctx.budget:
        raise CallError(f"{what} exceeds the evaluation budget")


def _text(s: Any, what: str) -> str:
    if not isinstance(s, str):
        raise CallError(f"{what} needs text, not `{_show(s)}`")
    return s


MAX_MATCH_INPUT = 1_000_000


def _pattern_flags(flags: Any) -> bool:
    """A pattern's flags: "" or "i" (case folding, as `lower` would fold both texts); the ignore-case flag."""
    if not isinstance(flags, str) or flags not in ("", "i"):
        raise CallError(f"pattern flags are \"\" or \"i\" (ignore case), not `{_show(flags, quoted=True)}`")
    return flags == "i"


_PATTERNS: Any = None


def _patterns() -> Any:
    """``validator.lib.patterns``, imported at the first pattern matched (RE2's import is 2 ms of the
    start of every command that matches none); an import statement run at each match costs more than
    the match of a short text."""
    global _PATTERNS
    if _PATTERNS is None:
        from . import patterns

        _PATTERNS = patterns
    return _PATTERNS


def _regex(ctx: Context, pattern: Any, flags: Any, what: str) -> Any:
    """The compiled pattern, its compiling charged (``Pattern.cost``, at each use)."""
    patterns = _patterns()
    text = _text(pattern, what)
    _spend(ctx, len(text), what)  # (read before it is compiled: a long pattern is refused on this count)
    try:
        found = patterns.compiled(text, _pattern_flags(flags))
    except patterns.PatternError as exc:
        raise CallError(f"invalid pattern: {exc}") from None
    _spend(ctx, found.cost - len(text), what)
    return found


def _kept_pattern(pattern: str) -> Any:
    """The pattern compiled (``_regex``'s, without the flag), or None where compiling it fails."""
    try:
        return _PATTERNS.compiled(pattern, False)
    except _PATTERNS.PatternError:
        return None


def _subject(ctx: Context, s: Any, what: str) -> str:
    """The text to match, charged a step per character (matching takes linear time)."""
    text = _text(s, what)
    if len(text) > MAX_MATCH_INPUT:
        raise CallError(f"text of {len(text)} characters is too long to match (limit {MAX_MATCH_INPUT})")
    ctx.steps += len(text) + 1
    if ctx.steps > ctx.budget:
        raise CallError("matching exceeds the evaluation budget")
    return text


@builtin("match", 2, 3, ctx=True, doc="match(text, pattern[, flags]): when the regular expression matches the whole "
                                      "text, a record of its named groups, else none; flags \"i\" ignores case")
def _match(ctx: Context, s: Any, pattern: Any, flags: Any = "") -> Any:
    if flags == "" and type(s) is str and type(pattern) is str and _PATTERNS is not None:  # (the commonest, at once:
        found = _kept_pattern(pattern)  # its steps and value those of the path below, which says every error)
        if found is not None and ctx.steps + len(s) + 1 + found.cost <= ctx.budget and len(s) <= MAX_MATCH_INPUT:
            groups = found.fullmatch(s)
            ctx.steps += len(s) + 1 + found.cost
            return groups
    text = _subject(ctx, s, "match")
    return _regex(ctx, pattern, flags, "match").fullmatch(text)


@builtin("search", 2, 3, ctx=True, doc="search(text, pattern[, flags]): the named groups of the first place the "
                                       "regular expression matches in the text, or none")
def _search(ctx: Context, s: Any, pattern: Any, flags: Any = "") -> Any:
    text = _subject(ctx, s, "search")
    return _regex(ctx, pattern, flags, "search").search(text)


@builtin("match_first", 2, 3, ctx=True,
         doc="match_first(text, patterns[, flags]): the first of the patterns that matches the whole text, as "
             "{index, groups}, or none; all of them are tried in one pass over the text")
def _match_first(ctx: Context, s: Any, patterns: Any, flags: Any = "") -> Any:
    if (flags == "" and type(s) is str and type(patterns) is list and patterns and _PATTERNS is not None
            and _TEXTS.issuperset(map(type, patterns)) and len(s) <= MAX_MATCH_INPUT):  # (the commonest, at once:
        try:  # its steps and value those of the path below, which says every error)
            both, cost, each = _PATTERNS.compiled_set(tuple(patterns), False)
        except _PATTERNS.PatternError:
            pass
        else:
            found = both.Match(s.encode("utf-8"))
            first = each[min(found)] if found else None
            spent = len(s) + 1 + cost + (first.cost if first is not None else 0)
            if ctx.steps + spent <= ctx.budget:
                ctx.steps += spent
                return None if first is None else {"index": min(found), "groups": first.fullmatch(s)}
    text = _subject(ctx, s, "match_first")
    if not isinstance(patterns, (list, tuple)) or not _TEXTS.issuperset(map(type, patterns)):
        raise CallError(f"match_first needs a list of patterns, not `{_show(patterns, quoted=True)}`")
    ignore_case = _pattern_flags(flags)
    module = _patterns()
    length = sum(map(len, patterns))
    _spend(ctx, length, "match_first")  # (read before they are compiled, as ``_regex``)
    if not patterns:
        return None
    try:
        both, cost, each = module.compiled_set(tuple(patterns), ignore_case)
    except module.PatternError as exc:
        raise CallError(f"invalid pattern: {exc}") from None
    _spend(ctx, cost - length, "match_first")
    found = both.Match(text.encode("utf-8"))
    if not found:
        return None
    index = min(found)
    first = each[index]  # (its groups read as ``match`` reads them, its compiling charged as ``_regex``)
    _spend(ctx, first.cost, "match_first")
    return {"index": index, "groups": first.fullmatch(text)}


# ---------------------------------------------------------------- graphs


def _adjacent_of(adj: Any, node: Any) -> Any:
    if isinstance(adj, dict):
        return adj.get(probe_key(node)) or ()
    raise CallError("a graph is a map from node to its list of neighbours")


@builtin("neighbours", 2, doc="the neighbours of a node in an adjacency map")
def _neighbours(adj: Any, node: Any) -> list[Any]:
    return list(_adjacent_of(adj, node))


@builtin("adjacent", 3, doc="true if b is a neighbour of a")
def _adjacent(adj: Any, a: Any, b: Any) -> bool:
    return in_list(b, _adjacent_of(adj, a))


@builtin("path_exists", 3, 4, ctx=True,
         doc="path_exists(graph, from, to, through): a path whose inner nodes all satisfy `through`")
def _path_exists(ctx: Context, adj: Any, start: Any, goal: Any, through: Any = None) -> bool:
    return _path(ctx, adj, start, (as_key(goal),), through) is not None


@builtin("find_path", 3, 4, ctx=True, doc="the shortest such path as a list of nodes, or none")
def _find_path(ctx: Context, adj: Any, start: Any, goal: Any, through: Any = None) -> Any:
    return _path(ctx, adj, start, (as_key(goal),), through)


@builtin("distance", 3, ctx=True, takes=("", "", "items"),
         doc="distance(graph, from, targets): the fewest steps from `from` to a node of `targets` (0 when `from` is "
             "one), or none when none can be reached")
def _distance(ctx: Context, adj: Any, start: Any, targets: Any) -> int | None:
    if isinstance(targets, (set, frozenset, dict)):  # (a set's items and a map's keys are keys already)
        goals = targets
    else:
        goals = {as_key(x) for x in sized_items(ctx, targets, "distance")}
    found = _path(ctx, adj, start, goals, None)
    return None if found is None else len(found) - 1


_REFUSED = object()  # (`_path`: a node `through` refused, kept with the nodes seen)

# A graph's nodes are kept, compared and looked up as a map's keys are (``values.as_key``): the node
# `true` is not the node `1` (a tuple holding a truth value is no node, E009). ``_node`` is ``as_key``
# with the commonest nodes, texts and integers, passed at the cost of one look at their type.


def _path(ctx: Context, adj: Any, start: Any, goals: Any, through: Any) -> Any:
    """The shortest path (breadth-first) from ``start`` to the first node met that is ``in goals`` (a
    collection of keys: one goal is ``(as_key(goal),)``), its inner nodes passing ``through``; None
    when there is none."""
    if not isinstance(adj, dict):
        _adjacent_of(adj, start)  # raises
    neighbours = adj.get
    test = through  # called directly; what is no function is reported by call_value when first asked
    if through is not None and not callable(through):
        def test(ctx: Context, n: Any) -> Any:
            return call_value(ctx, through, n)
    start = as_key(start)
    if start in goals:  # a node is joined to itself by the path of no step
        return [from_key(start)]
    prev: dict[Any, Any] = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for node in frontier:
            for n in neighbours(node) or ():
                ctx.steps += 1
                t = type(n)
                k = n if t is str or t is int else as_key(n)
                if k in prev:
                    continue
                if k in goals:  # the end points are never tested by `through`
                    prev[k] = node
                    out = [k]
                    while prev[out[-1]] is not None:
                        out.append(prev[out[-1]])
                    return [from_key(x) for x in reversed(out)]
                if test is None or test(ctx, n):
                    prev[k] = node
                    nxt.append(k)
                else:
                    prev[k] = _REFUSED  # not asked again when met from another node
        frontier = nxt
        if ctx.steps > ctx.budget:
            raise CallError("path search exceeds the evaluation budget")
    return None


@builtin("components", 2, ctx=True, takes=("", "items"),
         doc="components(graph, nodes): map of each node to the least node of its connected part, "
             "within the graph restricted to `nodes` (an edge joins its two nodes whichever way it runs)")
def _components(ctx: Context, adj: Any, nodes: Any) -> dict[Any, Any]:
    """Each edge between two of ``nodes`` joins them both ways (a one-way edge too); then the nodes are
    taken in the order of values: the first of each part met is its least, and names the part. Nodes
    are kept as keys (``values.as_key``)."""
    if not isinstance(adj, dict):
        _adjacent_of(adj, None)  # raises
    pool = {as_key(x) for x in walked_items(nodes, "components")}
    ordered = sorted(pool, key=order_key)
    joined: dict[Any, list[Any]] = {}
    for node in ordered:
        near = adj.get(node) or ()
        if type(near) is not list:
            near = list(near)  # (fails as the loop below would on what is not a collection)
        ctx.steps += len(near)  # (a step per neighbour looked at)
        for n in near:
            k = as_key(n)
            if k in pool:
                joined.setdefault(node, []).append(k)
                joined.setdefault(k, []).append(node)
    if ctx.steps > ctx.budget:
        raise CallError("components: the search exceeds the evaluation budget")
    label: dict[Any, Any] = Map()
    for root in ordered:
        if root in label:
            continue
        label[root] = from_key(root)
        todo = [root]
        while todo:
            for n in joined.get(todo.pop(), ()):
                if n not in label:
                    label[n] = label[root]
                    todo.append(n)
    return label


@builtin("reachable", 4, 5, ctx=True,
         doc="reachable(graph, from, budget, cost[, can_pass]): map of node -> least cost within budget; "
             "cost is a map node -> entry cost, a map node -> {neighbour -> cost} (edge costs) "
             "or fn(a, b) -> cost (none = cannot enter; a cost below 0 is an error)")
def _reachable(ctx: Context, adj: Any, start: Any, budget: Any, cost: Any, can_pass: Any = None) -> dict[Any, Any]:
    """Dijkstra's search; nodes kept as keys (``values.as_key``), given to ``cost`` and ``can_pass`` as
    the values they stand for. A node is settled when it is taken from the heap: its least cost is
    known, so no cost of entering it is asked again (which is sound because no cost is below 0: one
    that is is an error); nor is the cost of entering a node already reached at no more than the cost
    of the node it would be entered from (no cost can make it cheaper). ``can_pass`` is asked of each
    settled node but the start, once."""
    if not isinstance(adj, dict):
        _adjacent_of(adj, start)  # raises
    cost_map = cost if isinstance(cost, dict) else None
    ask = cost if callable(cost) else lambda ctx, a, b: call_value(ctx, cost, a, b)  # (what is no function: at its first call)
    passes = can_pass if can_pass is None or callable(can_pass) else lambda ctx, n: call_value(ctx, can_pass, n)
    start = as_key(start)
    best: dict[Any, Any] = {start: 0}  # (a plain dict while searching: a map's reads go through slots)
    settled: set[Any] = set()
    heap: list[tuple[Any, int, Any]] = [(0, 0, start)]
    tick = 1
    pop, push, neighbours, settle, known = heapq.heappop, heapq.heappush, adj.get, settled.add, best.get
    rows = cost_map.get if cost_map is not None and isinstance(next(iter(cost_map.values()), None), dict) else None
    while heap:
        d, _, node = pop(heap)
        if node in settled:
            continue  # a stale entry: the node was reached cheaper since
        settle(node)
        ctx.steps += 1
        if ctx.steps > ctx.budget:
            raise CallError("reachability search exceeds the evaluation budget")
        if cost_map is None:  # a cost function: called only for nodes that may be crossed
            here = node if type(node) is str else from_key(node)
            if node != start and passes is not None and not passes(ctx, here):
                continue  # may end here but not go on
            for n in neighbours(node) or ():
                k = n if type(n) is str else as_key(n)
                was = known(k)
                if (was is not None and was <= d) or k in settled:
                    continue
                c = ask(ctx, here, n)
                if c is None:
                    continue
                if type(c) is bool:
                    _truth_cost(n)
                nd = d + c
                if nd > budget or (was is not None and nd >= was):
                    continue
                if nd < d:
                    raise CallError(f"a cost below 0 ({_show(c)}) to enter `{_show(n)}`")
                best[k] = nd
                push(heap, (nd, tick, k))
                tick += 1
            continue
        # a cost map: the node's row looked up once, can_pass asked only if the node leads somewhere
        row = (rows(node) or {}) if rows is not None else cost_map
        found = [(nd, k) for n in neighbours(node) or ()
                 if (k := n if type(n) is str else as_key(n)) not in settled
                 and (c := row.get(k)) is not None and (type(c) is not bool or _truth_cost(n))
                 and (nd := d + c) <= budget and (k not in best or nd < best[k])]
        if not found or (node != start and passes is not None and not passes(ctx, from_key(node))):
            continue  # a dead end, or a node one may end on but not go on from
        for nd, n in found:
            if nd < d:  # (every cost to a node not settled that is below 0 is among those found)
                raise CallError(f"a cost below 0 ({_show(nd - d)}) to enter `{_show(from_key(n))}`")
            if best.get(n) == nd:
                continue  # listed twice among the neighbours
            best[n] = nd
            push(heap, (nd, tick, n))
            tick += 1
    return Map(best)


def _truth_cost(node: Any) -> bool:
    """Raises: a truth value is no cost (``true + 1`` is refused everywhere else too)."""
    raise CallError(f"a truth value as the cost to enter `{_show(from_key(node))}` (costs are numbers)")


@builtin("path_cost", 3, ctx=True, takes=("items",),
         doc="path_cost(path, cost, start_cost): start_cost plus the cost of entering each node after the first; "
             "none if one cannot be entered")
def _path_cost(ctx: Context, path: Any, cost: Any, start: Any = 0) -> Any:
    total = start
    nodes = list(walked_items(path, "path_cost"))
    for a, b in zip(nodes, nodes[1:]):
        c = cost.get(probe_key(b)) if isinstance(cost, dict) else call_value(ctx, cost, a, b)
        if c is None:
            return None
        total += c
    return total


# ---------------------------------------------------------------- hex geometry (offset labels "CCRR")

_LAYOUTS = ("odd-q", "even-q", "odd-r", "even-r")


def _layout(layout: Any) -> str:
    if layout not in _LAYOUTS:
        raise CallError(f"hex layout must be one of {', '.join(_LAYOUTS)}, not `{_show(layout, quoted=True)}`")
    return str(layout)


def hex_parse(label: Any) -> tuple[int, int]:
    if not isinstance(label, str) or len(label) != 4 or not label.isdigit():
        raise CallError(f"hex label must be four digits CCRR such as \"0304\", not `{_show(label, quoted=True)}`")
    return int(label[:2]), int(label[2:])


def hex_format(col: int, row: int) -> str:
    if not (0 <= col <= 99 and 0 <= row <= 99):
        return ""
    return f"{col:02d}{row:02d}"


def offset_to_axial(col: int, row: int, layout: str) -> tuple[int, int]:
    if layout == "odd-q":
        return col, row - (col - (col & 1)) // 2
    if layout == "even-q":
        return col, row - (col + (col & 1)) // 2
    if layout == "odd-r":
        return col - (row - (row & 1)) // 2, row
    return col - (row + (row & 1)) // 2, row


def axial_to_offset(q: int, r: int, layout: str) -> tuple[int, int]:
    if layout == "odd-q":
        return q, r + (q - (q & 1)) // 2
    if layout == "even-q":
        return q, r + (q + (q & 1)) // 2
    if layout == "odd-r":
        return q + (r - (r & 1)) // 2, r
    return q + (r + (r & 1)) // 2, r


_AXIAL_DIRS = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


@builtin("hex_axial", 1, 2, doc="[q, r] axial coordinates of a CCRR label")
def _hex_axial(label: Any, layout: Any = "odd-q") -> list[int]:
    return list(offset_to_axial(*hex_parse(label), _layout(layout)))


@builtin("hex_label", 2, 3, takes=("whole", "whole"), doc="the CCRR label of axial coordinates (none if off the 00-99 range)")
def _hex_label(q: Any, r: Any, layout: Any = "odd-q") -> Any:
    for x in (q, r):  # (a truth value or a fraction is no coordinate: int() would take it, wrongly)
        if type(x) is not int:
            raise CallError(f"hex_label needs whole-number coordinates, not `{_show(x, quoted=True)}`")
    col, row = axial_to_offset(q, r, _layout(layout))
    return hex_format(col, row) or None


@builtin("hex_neighbours", 1, 2, doc="labels of the six neighbours of a hex")
def _hex_neighbours(label: Any, layout: Any = "odd-q") -> list[str]:
    lay = _layout(layout)
    q, r = offset_to_axial(*hex_parse(label), lay)
    out = []
    for dq, dr in _AXIAL_DIRS:
        text = hex_format(*axial_to_offset(q + dq, r + dr, lay))
        if text:
            out.append(text)
    return out


@builtin("hex_distance", 2, 3, doc="hexes between two labels")
def _hex_distance(a: Any, b: Any, layout: Any = "odd-q") -> int:
    lay = _layout(layout)
    q1, r1 = offset_to_axial(*hex_parse(a), lay)
    q2, r2 = offset_to_axial(*hex_parse(b), lay)
    return (abs(q1 - q2) + abs(r1 - r2) + abs((q1 + r1) - (q2 + r2))) // 2


@builtin("hex_adjacent", 2, 3, doc="true if two hexes touch")
def _hex_adjacent(a: Any, b: Any, layout: Any = "odd-q") -> bool:
    return _hex_distance(a, b, layout) == 1


_LABELS: list[list[str]] = []  # (``_hex_grid``: the label of column c, row r is _LABELS[c][r])


def _labels() -> list[list[str]]:
    """Every label of 00-99, written once for the process (made whole, then put in place at once)."""
    made = [[f"{c:02d}{r:02d}" for r in range(100)] for c in range(100)]
    _LABELS[:] = made
    return made


@builtin("hex_grid", 2, 4, takes=("whole", "whole", "", "whole"),
         doc="adjacency map of a cols x rows board of CCRR labels, numbered from `first` "
             "(1 by default: 0101; 0 gives 0000 and boards up to 100 x 100)")
def _hex_grid(cols: Any, rows: Any, layout: Any = "odd-q", first: Any = 1) -> dict[str, list[str]]:
    lay = _layout(layout)
    if first not in (0, 1) or isinstance(first, bool):
        raise CallError("hex_grid numbers its hexes from 0 or 1")
    top = 100 - first
    if not (isinstance(cols, int) and isinstance(rows, int) and 0 < cols <= top and 0 < rows <= top):
        raise CallError(f"hex_grid needs 1..{top} columns and rows when numbering from {first}")
    # straight from offset coordinates (same neighbour order as hex_neighbours): boards of 10 000 hexes
    # are common. A neighbour's offset step depends only on the parities of the column and row, so the
    # six steps are worked out once per parity, and each column is done a row parity at a time by
    # slicing the neighbouring columns, padded with none around the board: padded[c + 1][r + 1].
    steps = {}
    for pc in (0, 1):
        for pr in (0, 1):
            q, ar = offset_to_axial(10 + pc, 10 + pr, lay)
            steps[pc, pr] = [(c - 10 - pc, r - 10 - pr) for dq, dr in _AXIAL_DIRS
                             for c, r in (axial_to_offset(q + dq, ar + dr, lay),)]
    lo, end_c, end_r = first, cols + first, rows + first
    blank: list[Any] = [None] * (end_r + 2)
    labels = _LABELS or _labels()
    padded = [blank] + [[None] * (lo + 1) + labels[c][lo:end_r] + [None]
                        if c >= lo else blank for c in range(end_c)] + [blank]
    out: dict[str, list[str]] = Map()
    for c in range(lo, end_c):  # column-major: the labels' sorted order
        lists: list[Any] = [None] * end_r
        for pr in (0, 1):
            r0 = lo if (lo & 1) == pr else lo + 1
            if r0 >= end_r:
                continue
            n = len(range(r0, end_r, 2))
            cut = [padded[c + dc + 1][r0 + dr + 1:r0 + dr + 2 * n:2] for dc, dr in steps[c & 1, pr]]
            got = list(map(list, zip(*cut)))
            if c == lo or c == end_c - 1:  # a side column: any hex may lack neighbours
                got = [[x for x in t if x] for t in got]
            else:  # only the top and bottom rows' hexes lack some (the pads are none)
                if r0 == lo:
                    got[0] = [x for x in got[0] if x]
                if r0 + 2 * (n - 1) == end_r - 1:
                    got[-1] = [x for x in got[-1] if x]
            lists[r0:end_r:2] = got
        out.update(zip(padded[c + 1][lo + 1:end_r + 1], lists[lo:end_r]))
    return out


# ---------------------------------------------------------------- pseudo-random numbers (pure, for generators)

# A value is a function of (seed, key) alone: no state, no dice, the same on every machine and run
# (Python's own hash of text is salted per process, so keys are encoded by hand). The mixer is the
# finaliser of splitmix64; the key is absorbed word by word, each word followed by a mix.
_MASK64 = (1 << 64) - 1
_MAX_KEY_WORDS = 10_000


def _mix64(z: int) -> int:
    z = (z + 0x9E3779B97F4A7C15) & _MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
    return z ^ (z >> 31)


def _key_words(v: Any, out: list[int]) -> None:
    """A type tag, then the value as 64-bit words; lists nest, so [1, "a"] differs from [[1], "a"]."""
    if len(out) > _MAX_KEY_WORDS:
        raise CallError("a random key is too long")
    if v is None:
        out.append(0)
    elif isinstance(v, bool):
        out.extend((1, int(v)))
    elif isinstance(v, int):
        sign, mag = (3, -v) if v < 0 else (2, v)
        words = [(mag >> s) & _MASK64 for s in range(0, max(mag.bit_length(), 1), 64)]
        out.extend((sign, len(words), *words))
    elif isinstance(v, str):
        data = v.encode("utf-8")
        out.extend((4, len(data)))
        out.extend(int.from_bytes(data[i:i + 8], "little") for i in range(0, len(data), 8))
    elif isinstance(v, (list, tuple)):
        out.extend((5, len(v)))
        for x in v:
            _key_words(x, out)
    else:
        raise CallError(f"a random seed or key is a number, text, boolean, none or a list of them, not `{_show(v)}`")


def random_word(seed: Any, key: Any) -> int:
    """A 64-bit pseudo-random number that depends only on (seed, key)."""
    words: list[int] = []
    _key_words([seed, key], words)
    h = 0
    for w in words:
        h = _mix64(h ^ w)
    return h


def random_below(seed: Any, key: Any, n: Any) -> int:
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise CallError(f"rand needs a bound n of at least 1, not `{_show(n, quoted=True)}`")
    limit = ((1 << 64) // n) * n  # reject the top sliver so that every value is equally likely
    h = random_word(seed, key)
    while h >= limit:
        h = _mix64(h)
    return h % n


def _ordered(xs: Any, what: str) -> list[Any]:
    """The items, in the order they are walked (a set's in the order of values)."""
    return list(walked_items(xs, what))


@builtin("rand", 3, takes=("", "", "whole"),
         doc="rand(seed, key, n): a pseudo-random integer in [0, n) that depends only on seed and key "
             "(numbers, text or lists of them); the same arguments always give the same number")
def _rand(seed: Any, key: Any, n: Any) -> int:
    return random_below(seed, key, n)


@builtin("choice", 3, takes=("", "", "items"),
         doc="choice(seed, key, xs): one item picked pseudo-randomly (as rand does), or none if xs is empty")
def _choice(seed: Any, key: Any, xs: Any) -> Any:
    items = _ordered(xs, "choice")
    return items[random_below(seed, key, len(items))] if items else None


@builtin("shuffle", 3, takes=("", "", "items"),
         doc="shuffle(seed, key, xs): the items in a pseudo-random order (Fisher-Yates, as rand does)")
def _shuffle(seed: Any, key: Any, xs: Any) -> list[Any]:
    items = _ordered(xs, "shuffle")
    for i in range(len(items) - 1, 0, -1):
        j = random_below(seed, [key, i], i + 1)
        items[i], items[j] = items[j], items[i]
    return items


# ---------------------------------------------------------------- dice


@dataclass(frozen=True)
class DiceSpec:
    """``count`` dice of ``sides`` sides; a die's faces are 1..sides unless ``faces`` names them (the
    value shown on each side, in order: ``(0, 0, 0, 0, 1, 1)`` is a die that scores a hit on 5 or 6)."""

    count: int
    sides: int
    faces: tuple[int, ...] | None = None
    # exact mode's: the steps a roll costs (working out the distribution of the sum of n dice costs
    # about n² × sides² / 2, and one: charged before it is worked out), and what is known of a roll
    # (``runtime.Rolled``), kept with the dice at their first exact roll (``runtime.rolled``)
    exact_cost: int = field(init=False, repr=False, compare=False)
    rolled: Rolled | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "exact_cost", self.count * self.count * self.sides * self.sides // 2 + 1)

    def values(self) -> tuple[int, ...]:
        return self.faces if self.faces is not None else tuple(range(1, self.sides + 1))

    def __str__(self) -> str:
        if self.faces is None:
            return f"{self.count}d{self.sides}"
        return f"{self.count}d[{','.join(map(str, self.faces))}]"


@builtin("dice", 2, takes=("whole",), doc="dice(n, sides): n dice of that many sides (faces 1..sides), as a value for roll; "
                        "dice(n, [f1, ..., fs]): n dice whose sides show those numbers")
def _dice(n: Any, sides: Any) -> DiceSpec:
    if not (isinstance(n, int) and not isinstance(n, bool) and 0 <= n <= 100):
        raise CallError("dice needs 0..100 dice of 2..100 sides")
    if isinstance(sides, (list, tuple)):
        if not (2 <= len(sides) <= 100 and all(isinstance(f, int) and not isinstance(f, bool) for f in sides)):
            raise CallError(f"dice needs 2..100 faces, each a whole number, not `{_show(sides)}`")
        return DiceSpec(n, len(sides), tuple(sides))
    if not (isinstance(sides, int) and not isinstance(sides, bool) and 1 < sides <= 100):
        raise CallError("dice needs 0..100 dice of 2..100 sides")
    return DiceSpec(n, sides)


_DICE_SPAN = Span("<dice>")  # (a die's own error is located at the call that rolled it)


def _not_dice(d: Any) -> CallError:
    return CallError(f"roll needs dice such as 2d6, not `{_show(d, quoted=True)}`")


@builtin("roll", 1, ctx=True, doc="the sum of a roll of the dice (seeded, scripted or exact)")
def _roll(ctx: Context, d: Any) -> Any:
    if type(d) is not DiceSpec:
        raise _not_dice(d)
    return ctx.dice.sum_of(ctx, d, _DICE_SPAN)


def roll_looked_at(ctx: Context, d: Any) -> Any:
    """``roll`` whose value is looked at at once (forced): in exact mode the run forks over the sums
    with no die made (``DiceSource.looked_at``). The backend calls it for a roll it forces at once."""
    if type(d) is not DiceSpec:
        raise _not_dice(d)
    return ctx.dice.looked_at(ctx, d, _DICE_SPAN)


@builtin("shown", 1, ctx=True,
         doc="the text of a value for an event or result, without looking at a die: what `str` writes (a die's "
             "number with seeded or scripted dice, or one looked at), and in exact mode the values a die not "
             "looked at yet can still take (`2d6: 7..12`), with no fork: a text in every mode")
def _shown(ctx: Context, x: Any) -> str:
    return x.describe() if isinstance(x, RandomValue) else _str(ctx, x)


# built-ins whose result is of one type whatever their arguments (their definitions' declared result)
_DECLARED: dict[Any, type] = {"int": int, "bool": bool, "str": str}
_DECLARED_ITEMS: dict[Any, Any] = {"Any": None, "int": int, "str": str}


def _declared(result: Any) -> Any:
    """A built-in's declared result as a kind: an integer, truth value or text; a list (of integers, of
    texts) or set (its definition builds one, whatever its arguments). (Read by the type checker and
    by ``engine.facts``: one reading of the definitions.)"""
    if result in _DECLARED:
        return _DECLARED[result]
    for tag, kind in (("list", "list"), ("frozenset", "set")):
        if isinstance(result, str) and result.startswith(tag + "[") and result[len(tag) + 1:-1] in _DECLARED_ITEMS:
            return (kind, _DECLARED_ITEMS[result[len(tag) + 1:-1]])
    return None


RESULTS: dict[str, Any] = {name: k for name, b in BUILTINS.items()
                            if (k := _declared(b.fn.__annotations__.get("return"))) is not None}

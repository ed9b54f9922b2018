"""Conversion of run-time values to JSON: sets become sorted lists, fractions "n/d" strings."""

from __future__ import annotations

import re
import threading
from fractions import Fraction
from typing import Any, Callable, Iterator

from .runtime import RandomValue


# ---------------------------------------------------------------- one identity for each value

# A truth value is never equal to a number (docs/language.md, "Equality"), though Python's True == 1.
# As a set's item or a map's key, a truth value is kept as ``TRUE_KEY``/``FALSE_KEY`` (``as_key``),
# objects equal only to themselves, and given back as the truth value wherever the set or map is
# walked (``walked``, ``entries``, ``from_key``), so that {1, true} has two items and
# {1 => "a", true => "b"} two entries. A tuple holding a truth value cannot be a key (E009).


class TruthKey:
    """A truth value as a set's item or a map's key (hashed by identity: equal to nothing else)."""

    __slots__ = ("value",)

    def __init__(self, value: bool):
        self.value = value

    def __repr__(self) -> str:
        return "true" if self.value else "false"


TRUE_KEY, FALSE_KEY = TruthKey(True), TruthKey(False)


class KeyError_(TypeError):
    """A value that cannot be a key: a tuple holding a truth value (a TypeError, as Python's own
    refusal of an unhashable key, so that every caller reports it as E009)."""


# ---------------------------------------------------------------- records and maps

# A record (`{a: 1}`, a JSON object read from a state or a data file) is a plain ``dict`` whose keys are
# its labels, texts; a map (`{k => v}`, a map comprehension, the maps built-ins make) is a ``Map``.
# They are two kinds of value (docs/language.md, "Records and maps"): a record is never equal to a map,
# and each is written in its own notation. The one value of no entries, `{}`, is both: an empty
# record is equal to the empty map. Records are the commoner kind (every JSON object, every record
# literal), so they are the plain dicts and keep Python's fast paths.


class Map(dict):  # type: ignore[type-arg]
    """A map: a ``dict`` never equal to a record (a plain ``dict``) that has entries."""

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        t = type(other)
        if t is Map:
            return dict.__eq__(self, other)  # type: ignore[no-any-return]
        if t is dict:
            return not self and not other  # (`{}` is the empty record too)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        same = self.__eq__(other)
        return same if same is NotImplemented else not same

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Map({dict.__repr__(self)})"


def is_map(v: Any) -> bool:
    """Whether a record or map is a map (one with entries, made as a map)."""
    return type(v) is Map and len(v) > 0


def as_key(v: Any) -> Any:
    """A value as it is kept as a set's item or a map's key (``TruthKey`` for a truth value). A
    function is none: it has no place in the order of values, which a set is walked in."""
    t = type(v)
    if t is str or t is int:
        return v
    if t is bool:
        return TRUE_KEY if v else FALSE_KEY
    if (t is tuple and _holds_no_key(v)) or callable(v):
        raise KeyError_("a function, or a tuple holding a truth value or a function, cannot be a key")
    return v


def probe_key(v: Any) -> Any:
    """A value looked for among a set's items or a map's keys: as ``as_key``, but a tuple holding a
    truth value (which no set or map holds) is looked for as nothing there is."""
    t = type(v)
    if t is bool:
        return TRUE_KEY if v else FALSE_KEY
    if t is tuple and _holds_no_key(v):
        return _ABSENT
    return v


_ABSENT = TruthKey(False)  # (a third key object: in no set or map)


def _holds_no_key(v: tuple[Any, ...]) -> bool:  # (a truth value or a function, at any depth)
    for x in v:
        t = type(x)
        if t is bool or (t is tuple and _holds_no_key(x)) or callable(x):
            return True
    return False


def from_key(k: Any) -> Any:
    """A set's item or a map's key as the value it stands for."""
    return k.value if type(k) is TruthKey else k


def entries(m: dict[Any, Any]) -> Any:
    """A map's (key, value) pairs as walked, keys as the values they stand for."""
    if TRUE_KEY in m or FALSE_KEY in m:
        return [(from_key(k), v) for k, v in m.items()]
    return m.items()


def equal(x: Any, y: Any) -> bool:
    """The language's `==`: Python's, except that a truth value is never equal to a number, at any
    depth (``[1] == [true]`` is false)."""
    return x == y and _same_kinds(x, y)


def _same_kinds(x: Any, y: Any) -> bool:
    tx, ty = type(x), type(y)
    if tx is bool or ty is bool:
        return tx is ty
    if tx is list or tx is tuple:
        return all(_same_kinds(a, b) for a, b in zip(x, y))
    if tx is dict or tx is Map:
        return all(_same_kinds(v, y[k]) for k, v in x.items())
    return True  # (texts, numbers, none; a set's items and a map's keys are kept apart by ``as_key``)


def in_list(x: Any, items: Any) -> bool:
    """``x in items`` for a list or tuple, by the language's `==`."""
    if x not in items:
        return False
    t = type(x)
    if t is str or x is None or t is Fraction:
        return True
    if t is int and bool not in map(type, items):  # (no truth value there to be taken for it)
        return True
    return any(equal(x, y) for y in items)


def ordered(x: Any, y: Any) -> None:
    """Refuse (``TypeError``, as Python refuses `1 < "a"`) an order between a truth value and anything
    else, at any depth of two lists or tuples (Python's True < 2 and [True] < [2] hold): `<` and its
    kin, `min` and `max` order truth values with truth values only (docs/language.md, "Order of
    values"). Python's own comparison then answers, or refuses the other mixes."""
    tx, ty = type(x), type(y)
    if tx is bool or ty is bool:
        if tx is not ty:
            raise TypeError("a truth value is ordered with truth values only")
    elif (tx is list or tx is tuple) and (ty is list or ty is tuple):
        for a, b in zip(x, y):
            if not equal(a, b):  # (the first items that differ decide, as in Python)
                ordered(a, b)
                return


def index_in(x: Any, items: list[Any]) -> int:
    """The first position of ``x`` in a list by the language's `==` (``ValueError`` if none)."""
    for i, y in enumerate(items):
        if equal(x, y):
            return i
    raise ValueError(x)


# ---------------------------------------------------------------- the order of values

# The language's one order of values (docs/language.md, "Order"): none, then truth values (false before
# true), numbers, texts (by code point), lists and tuples (item by item, a prefix first), `{}`, records,
# then maps (each by their entries in key order). A set is walked in this order everywhere (loops,
# comprehensions, built-ins, `str`, JSON), so what a run does depends only on what a set holds, never
# on Python's hashes, which differ from process to process for texts. Maps and records are walked in
# the order their entries were put (literal, comprehension, state or data order): that order is a
# value's own.

_TEXTS, _INTS = frozenset({str}), frozenset({int})


def order_key(v: Any) -> Any:
    """The sort key of a value in the language's order (``in_order``)."""
    t = type(v)  # the common cases by exact type first (Fraction's isinstance goes through its ABC)
    if t is str:
        return (3, v)
    if t is int:
        return (2, v)
    if t is list:  # texts in it without a call each
        return (4, tuple([(3, x) if type(x) is str else order_key(x) for x in v]))
    if isinstance(v, (list, tuple)):
        return (4, tuple(order_key(x) for x in v))
    if v is None:
        return (0, 0)
    if isinstance(v, bool):
        return (1, int(v))
    if isinstance(v, (int, Fraction, float)):
        return (2, v)
    if isinstance(v, str):
        return (3, v)
    if isinstance(v, dict):  # the empty `{}`, records, then maps, each by their entries in key order
        return (5, int(is_map(v)), tuple(sorted((order_key(k), order_key(x)) for k, x in v.items())))
    if isinstance(v, (set, frozenset)):
        return (6, tuple(order_key(x) for x in in_order(v)))
    if t is TruthKey:
        return (1, int(v.value))
    raise TypeError("a function has no place in the order of values")  # (``builtin_failure``: E001)


def in_order(items: Any) -> list[Any]:
    """The items sorted in the language's order (``order_key``): texts only, or integers only (no truth
    values), compared as they are (the same order, with no key made for each)."""
    if _INTS.issuperset(map(type, items)) or _TEXTS.issuperset(map(type, items)):
        return sorted(items)
    out = sorted(items, key=order_key)
    if TruthKey in map(type, out):  # (a set's truth values, as the values they stand for)
        return [from_key(x) for x in out]
    return out


def walked(coll: Any) -> Any:
    """What walking a collection gives, in the language's order of walking: a set's items in the order
    of values, a map's keys in their order, anything else (a list, a generator) as it is; truth
    values as themselves (``from_key``)."""
    t = type(coll)
    if t is frozenset or t is set:
        return in_order(coll)
    if t is Map and (TRUE_KEY in coll or FALSE_KEY in coll):  # (a record's labels are texts)
        return [from_key(k) for k in coll]
    return coll


MAX_OUTPUT_NODES = 2_000_000  # a result or an event list larger than this is not written
MAX_OUTPUT_BYTES = 50_000_000  # nor one whose texts (and long numbers) take more bytes than this written out
MAX_INT_BITS = 14_000  # about 4 200 digits: below Python's limit for turning an integer into text


class _Writing(threading.local):
    """What ``written`` keeps while it writes a value, one for each thread: threads may write at once
    (runs in threads, a Dask worker of several threads), and a ``to_json`` of another thread must
    neither count against this writing nor end it. (Within a thread a writing never starts another:
    ``to_json`` calls back into no run.)"""

    left: int | None = None  # the parts it may still write; None when no value is being written
    chars = 0  # the characters of the texts (and the digits of the long numbers) written so far
    deep = False  # whether the last ``_items`` wrote anything but records of texts, truth values and none

    def __init__(self) -> None:
        # each list of records met so far whose records hold only texts, truth values and none, by the
        # list's identity (the value holds it, alive and unchanged, as long as the entry is kept: the
        # entries go when the writing ends), with its writing and the parts and characters that writing
        # counted (``_records``)
        self.met: dict[int, tuple[list[Any], int, int]] = {}


_W = _Writing()


def written(v: Any, limit: int = MAX_OUTPUT_NODES, byte_limit: int = MAX_OUTPUT_BYTES) -> Any:
    """``to_json`` of a value of at most ``limit`` parts counted as a tree (a value built by sharing
    can be small in memory and astronomically large written out) whose texts take at most
    ``byte_limit`` bytes in UTF-8; ``ValueError`` past either. The copy counts parts and characters as
    it goes and stops past either limit (a character is at least a byte); only a value whose texts
    could take more than ``byte_limit`` bytes in UTF-8 (more than a quarter of it in characters) has
    its bytes counted exactly (``output_size``)."""
    w = _W
    w.left, w.chars = limit, 0
    try:
        out = to_json(v)
        chars = w.chars
    finally:
        w.left, w.chars = None, 0
        w.met.clear()
    if chars * 4 > byte_limit and output_size(v, limit, byte_limit)[1] > byte_limit:
        raise ValueError(f"a value of more than {byte_limit} bytes of text {TOO_LARGE}")
    return out


def _spend(parts: int, chars: int) -> None:
    w = _W
    left = w.left
    if left is not None:
        left -= parts
        w.left = left
        total = w.chars = w.chars + chars
        if left < 0:
            raise ValueError(f"a value of more than {MAX_OUTPUT_NODES} parts {TOO_LARGE}")
        if total > MAX_OUTPUT_BYTES:
            raise ValueError(f"a value of more than {MAX_OUTPUT_BYTES} bytes of text {TOO_LARGE}")


def _leaf_bytes(x: Any) -> int:
    """What a value that is no collection adds to the text of a JSON answer past its part: a text its
    UTF-8 bytes (a character of an emoji is four), a long number its digits; others nothing."""
    t = type(x)
    if t is str:
        return len(x) if x.isascii() else len(x.encode("utf-8", "surrogatepass"))
    if t is int:
        return _digits(x)
    if t is Fraction:
        return _digits(x.numerator) + _digits(x.denominator) + 1
    return 0


def _digits(n: int) -> int:
    """At least the digits of a long integer (0 for one of at most 64 bits)."""
    bits = n.bit_length()
    return bits // 3 + 1 if bits > 64 else 0


def output_size(v: Any, limit: int, byte_limit: int) -> tuple[int, int]:
    """The parts of ``v`` counted as a tree (as ``tree_size``) and the bytes its texts and long numbers
    take written out, each counted as often as the tree holds it: what writing ``v`` as JSON makes.
    Each distinct container is walked once; the counts stop past ``limit`` and ``byte_limit``."""
    t = type(v)
    if t not in _CONTAINERS:
        return 1, _leaf_bytes(v)
    cap, byte_cap = limit + 1, byte_limit + 1
    sizes: dict[int, tuple[int, int]] = {}
    for x, kids in _containers_bottom_up(v):
        parts, size = 1, 0
        for c in kids:
            if type(c) in _CONTAINERS:
                p, b = sizes[id(c)]
                parts += p
                size += b
            else:
                parts += 1
                size += _leaf_bytes(c)
            if parts > cap or size > byte_cap:
                break
        sizes[id(x)] = (min(parts, cap), min(size, byte_cap))
    return sizes[id(v)]


def to_json(v: Any) -> Any:
    t = type(v)  # the commonest values first: records and maps, then texts, lists
    if t is dict or t is Map:
        return _items([v])[0]  # (``_map``, one call less: every record and map of a result comes here)
    if t is str or v is None or t is bool or (t is int and v.bit_length() <= 64):
        return v
    if t is list:
        return _items(v)
    if t is int and v.bit_length() <= MAX_INT_BITS:
        if _W.left is not None:
            _spend(0, _digits(v))
        return v
    if isinstance(v, dict):
        return _map(dict(v))
    if isinstance(v, (list, tuple)):
        return _items(list(v))
    if isinstance(v, int) and not isinstance(v, bool) and v.bit_length() > MAX_INT_BITS:
        raise ValueError(f"an integer of {v.bit_length()} bits is too large to write")
    if isinstance(v, (bool, int, str, float)):
        if _W.left is not None and isinstance(v, float) and (v != v or v in (_INF, -_INF)):
            raise ValueError(f"`{v}` is no JSON number")  # (from a state no check read: ``validate=False``)
        return v
    if isinstance(v, Fraction):
        if _W.left is not None:
            _spend(0, _digits(v.numerator) + _digits(v.denominator))
        return v.numerator if v.denominator == 1 else f"{v.numerator}/{v.denominator}"
    if isinstance(v, (set, frozenset)):
        return _items(in_order(v))
    if isinstance(v, RandomValue):
        return v.collapse()  # a result is a use: fork over the values it can take
    if callable(v):
        if _W.left is not None:  # a result (``written``) holding a function: never written as a stand-in
            raise ValueError(FUNCTION_IN_RESULT)
        return "<function>"
    return str(v)


FUNCTION_IN_RESULT = "it holds a function, which has no JSON form"
_INF = float("inf")
TOO_LARGE = "is too large to write"  # (the end of what ``written`` raises for a value past its limits)


def too_large(exc: ValueError) -> bool:
    """Whether ``written`` (or ``write_value``) refused a value for its size (E013), not for what it holds."""
    return str(exc).startswith("a value of more than") and str(exc).endswith(TOO_LARGE)


def _map(v: dict[Any, Any]) -> Any:
    """A map or record, written by ``_items``."""
    return _items([v])[0]


def _items(xs: list[Any]) -> list[Any]:
    """A list's items: texts as they are, maps and records copied whole, then only their entries that
    are no text, none or truth value replaced; a list of maps in one is written by one call for all
    of them (a result's orders, its units), not one each. Writing a result (``written``), the parts
    and the texts' characters are counted (``_spend``)."""
    parts, chars = len(xs), 0
    done = xs.copy()
    deep = False
    for j, v in enumerate(xs):
        tv = type(v)
        if tv is not dict and tv is not Map:
            deep = True
            if tv is not str:
                done[j] = to_json(v)
            else:
                chars += len(v)
            continue
        out = v.copy()
        parts += len(v)
        texts = True  # all keys are texts (a record's always are)
        for k, x in v.items():  # (a loop, not a comprehension: the type of x is looked up once)
            if type(k) is not str:
                texts = False
            else:
                chars += len(k)
            tx = type(x)
            if tx is str:
                chars += len(x)
                continue
            if x is None or tx is bool:
                continue
            deep = True
            if tx is list:  # (short lists of texts, such as cites, the commonest: copied, no call)
                c = x.copy()
                i = n = 0
                for y in x:
                    ty = type(y)
                    if ty is not str:
                        if ty is dict or ty is Map:  # a list of records: all of them at once (counted there)
                            c = _records(x)
                            break
                        c[i] = to_json(y)
                    else:
                        n += len(y)
                    i += 1
                else:
                    parts += i
                    chars += n
                out[k] = c
            elif tx is dict or tx is Map:
                out[k] = _items([x])[0]  # (``_map``)
            else:
                out[k] = to_json(x)
        if not texts:
            if _W.left is not None:  # the keys' texts are bounded before they are made, counted once made
                least = sum(map(_key_least, out))
                _spend(0, chars + least)
                chars = -least  # (spent: what the keys take past ``least`` is added below)
            quoted = str in map(type, out)
            out = {key_text(k, quoted): x for k, x in out.items()}
            if _W.left is not None:
                chars += sum(len(k) for k in out)
        done[j] = out
    if _W.left is not None:
        _spend(parts, chars)
    _W.deep = deep
    return done


def _records(xs: list[Any]) -> list[Any]:
    """``_items`` of a list of records. Writing a result (``written``), a list met again in it (a value
    may hold one list twice: the pieces after a phase, in its result and in the next state) whose
    records hold only texts, truth values and none is its first writing copied, record by record (no
    part shared: the answer's parts may be changed by its reader), and counted as that writing was."""
    w = _W
    left = w.left
    if left is None:
        return _items(xs)
    met = w.met.get(id(xs))
    if met is not None:
        _spend(met[1], met[2])
        return [r.copy() for r in met[0]]
    chars = w.chars
    done = _items(xs)
    if not w.deep:
        w.met[id(xs)] = (done, left - (w.left or 0), w.chars - chars)
    return done


# ---------------------------------------------------------------- what a value costs to walk

_CONTAINERS = (list, tuple, dict, Map, frozenset, set)


def tree_size(v: Any, limit: int) -> int:
    """The number of values in ``v`` counted as a tree (a list holding one list ten times counts it ten
    times): what comparing, hashing or writing it walks. The count stops past ``limit``. Values never
    change once made and hold no cycle, so the tree is walked as the graph it is, each distinct
    container once."""
    t = type(v)
    if t not in _CONTAINERS:
        return 1
    cap = limit + 1
    items = (*v.keys(), *v.values()) if isinstance(v, dict) else v
    for c in items:
        if type(c) in _CONTAINERS:
            break
    else:  # (it holds no container, as most do: itself and its items, with no walk)
        return min(1 + len(items), cap)
    sizes: dict[int, int] = {}
    for x, kids in _containers_bottom_up(v):
        total = 1
        for c in kids:
            total += sizes[id(c)] if type(c) in _CONTAINERS else 1
            if total > cap:
                total = cap
                break
        sizes[id(x)] = total
    return sizes[id(v)]


def _containers_bottom_up(v: Any) -> Iterator[tuple[Any, Any]]:
    """Each distinct container of the container ``v`` with its items (a map's keys and values), after
    every container it holds: the one walk of ``tree_size`` and ``output_size``, each distinct
    container once (values never change once made and hold no cycle)."""
    done: set[int] = set()
    stack: list[tuple[Any, bool]] = [(v, False)]
    while stack:
        x, children_done = stack.pop()
        kids: Any = [y for kv in x.items() for y in kv] if isinstance(x, dict) else x
        if children_done:
            if id(x) not in done:
                done.add(id(x))
                yield x, kids
            continue
        if id(x) in done:
            continue
        stack.append((x, True))
        stack.extend((c, False) for c in kids if type(c) in _CONTAINERS and id(c) not in done)


def write_value(v: Any, limit: int = MAX_OUTPUT_NODES) -> str:
    """A value in the language's notation: `none`, `true`, `1/2`, `"text"` inside a collection,
    `[1, 2]`, `(1, 2)`, `{a: 1}` (a record), `{"k" => 1}` (a map), `{}`, `{1, 2}` (a set). Raises
    ``ValueError`` for a value of more than ``limit`` parts."""
    if tree_size(v, limit) > limit:
        raise ValueError(f"a value of more than {limit} parts is too large to write")
    return _write(v, top=True)


def notation(v: Any) -> str:
    """A value in the language's notation as it reads back, a text in its quotes at the top too (what
    ``str`` writes of it inside a collection): how the text output of a run shows every value."""
    return _write(v)


def brief(v: Any, limit: int = 40, quoted: bool = True) -> str:
    """A value for a message (a run's, a caller's, a trace's), at most ``limit`` characters, "..." where cut:
    in the language's notation (``notation``: `true`, `1/2`, `none`, never Python's spelling; a text at the
    top in its quotes unless not ``quoted``), a value of no type of the language as Python writes it. A
    message that refuses a value for its kind (no number, no collection, no map, no function) writes a text
    in its quotes, so that the text `"3"` and the number `3` read apart; one that names a text it was given
    (a built-in's message about the text it read) may write it as it is (``quoted=False``). The work is
    bounded as the message is: no more of the value than its first ``limit`` values and characters is
    written (a collection's other items are left out, a text's other characters), and an integer too long
    to show is said by its size, never written out (Python refuses past 4 300 digits)."""
    try:
        text = _write(v, top=not quoted, room=[limit, limit])
    except (ValueError, RecursionError):  # (nesting past Python's limit)
        text = "..."
    return _cut(text, limit)


def _cut(text: str, limit: int) -> str:
    """``text`` at most ``limit`` characters, "..." where cut (``brief``)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


# The language's keywords (``lang.syntax`` reads them here): a record label that is one is written in quotes.
KEYWORDS = (
    "ruleset", "extends", "import", "as", "clauses", "schema", "cite", "override", "enum", "record",
    "input", "at", "default", "const", "table", "def", "rule", "decision", "cycle", "when", "otherwise",
    "settle", "procedure", "query", "step", "var", "let", "if", "then", "elif", "else", "for", "in",
    "goto", "stop", "break", "continue", "emit", "require", "reject", "fn", "or", "and", "not", "with",
    "true", "false", "none",
)
_KEYWORD_SET = frozenset(KEYWORDS)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*").fullmatch
# what a text literal escapes (the escapes the language reads: \\ \" \n \r \t \uXXXX)
_ESCAPED = re.compile(r'[\\"\x00-\x1f\x7f]')
_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def text_literal(text: str) -> str:
    """A text as a literal of the language, which reads back as the same text."""
    if _ESCAPED.search(text) is None:
        return f'"{text}"'
    return '"' + _ESCAPED.sub(lambda m: _ESCAPES.get(m.group(), f"\\u{ord(m.group()):04x}"), text) + '"'


def label(k: str) -> str:
    """A record's label: a name as it is, a keyword or any other text in quotes (`{"if": 1}`)."""
    return k if _NAME(k) and k not in _KEYWORD_SET else text_literal(k)


def _write(v: Any, top: bool = False, room: list[int] | None = None) -> str:
    """``v`` in the language's notation (a text at the ``top`` as it is). With ``room`` (how many more values,
    and how many characters of a text, a message shows: ``brief``), a collection's items past it are `...`, a
    text is cut past it, and an integer of more bits than four a character is said by its size."""
    if v is None:
        return "none"
    if v is True or v is False:
        return "true" if v else "false"
    if isinstance(v, str):
        if room is not None:
            v = v[:room[1] + 1]
        return v if top else text_literal(v)
    if type(v) is TruthKey:
        return "true" if v.value else "false"
    if isinstance(v, Fraction):
        return f"{v.numerator}/{v.denominator}" if v.denominator != 1 else str(v.numerator)
    if isinstance(v, int):
        if room is not None and v.bit_length() > 4 * room[1]:
            return f"an integer of {v.bit_length()} bits"
        return str(v)
    if isinstance(v, list):
        return "[" + _joined(v, _write, room) + "]"
    if isinstance(v, tuple):
        if not v:
            return "tuple([])"  # (`()` is no expression)
        return "(" + _joined(v, _write, room) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, (set, frozenset)):
        if not v:
            return "set()"  # (`{}` is the empty map)
        return "{" + _joined(in_order(v), _write, room) + "}"
    if isinstance(v, dict):
        if not v:
            return "{}"
        if type(v) is not Map and _TEXTS.issuperset(map(type, v)):  # a record (its labels are texts)
            return "{" + _joined(v.items(), _field, room) + "}"
        return "{" + _joined(v.items(), _entry, room) + "}"
    if isinstance(v, RandomValue):
        return v.describe()
    if callable(v):
        return "<function>"
    return str(v)


def _field(item: tuple[str, Any], room: list[int] | None = None) -> str:
    return f"{label(item[0])}: {_write(item[1], room=room)}"


def _entry(item: tuple[Any, Any], room: list[int] | None = None) -> str:
    return f"{_write(item[0], room=room)} => {_write(item[1], room=room)}"


def _joined(items: Any, write: Callable[..., str], room: list[int] | None) -> str:
    """A collection's items written, with commas between; with ``room`` (``_write``), no more than it holds."""
    if room is None:
        return ", ".join(map(write, items))
    parts = []
    for x in items:
        if room[0] <= 0:
            parts.append("...")
            break
        room[0] -= 1
        parts.append(write(x, room=room))
    return ", ".join(parts)


def _key_least(k: Any) -> int:
    """At most the characters of a map key written by ``key_text``: its texts' characters and its long
    numbers' digits (``_leaf_bytes`` counts at least those), in a tuple too."""
    if type(k) is tuple:
        return sum(map(_key_least, k))
    return len(k) if type(k) is str else _leaf_bytes(k)


def key_text(k: Any, quoted: bool = False) -> str:
    """A map key as a JSON object's key. A map whose keys are all texts keeps them as they are; in a
    map with any other key, every key is written in the language's notation: `1`, `true`, `(1, "a")`,
    and a text in its quotes when the map holds texts too (``quoted``), so that no two keys are
    written alike: {1 => "a", "1" => "b"} is {"1": "a", "\"1\"": "b"}."""
    if type(k) is not str:
        return _write(k)
    return _write(k) if quoted else k


def json_child(v: Any, key: str) -> tuple[bool, Any]:
    """The part of a value that its JSON form (``to_json``) holds at ``key`` (a key or a position, as a
    JSON pointer's part writes it): (True, the part as the language's value), or (False, None) where
    the JSON has nothing there. A map's key is matched as ``key_text`` writes it, a set's position in
    the order of values, so that a report comparing JSON can show what differs in the notation."""
    t = type(v)
    if t is dict:
        return (True, v[key]) if key in v else (False, None)
    if t is Map:
        pairs = list(entries(v))
        if all(type(k) is str for k, _ in pairs):
            return (True, v[key]) if key in v else (False, None)
        quoted = any(type(k) is str for k, _ in pairs)
        return next(((True, x) for k, x in pairs if key_text(k, quoted) == key), (False, None))
    items = in_order(v) if t is set or t is frozenset else v if t is list or t is tuple else None
    if items is None or not key.isdigit() or int(key) >= len(items):
        return False, None
    return True, items[int(key)]


def number_cost(op: str, x: Any, y: Any) -> int:
    """Arithmetic on large numbers: multiplying, dividing and reducing a fraction cost the square of
    their size in 64 Kib units (nothing for numbers of ordinary size). Adding integers costs nothing:
    it grows a number by one bit at most."""
    if op in ("+", "-") and isinstance(x, int) and isinstance(y, int):
        return 0
    bx = x.bit_length() if isinstance(x, int) else x.numerator.bit_length() + x.denominator.bit_length()
    by = y.bit_length() if isinstance(y, int) else y.numerator.bit_length() + y.denominator.bit_length()
    return (bx + by) * (bx + by) >> 16

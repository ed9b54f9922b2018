"""JSON text from untrusted hands: read strictly, write validly.

Python's ``json`` reads more than JSON (``NaN``, ``Infinity``, lone surrogate escapes such as
``"\\ud800"``), fails with a bare ``ValueError`` on an integer of more than 4 300 digits, and recurses
once per level of nesting. ``loads`` refuses all of these with a located ``S001`` (line, column and
the JSON pointer of the value) and skips a UTF-8 byte order mark. It refuses an object that gives a
key twice too, which Python would read as its last value without a word. ``dumps`` never writes ``NaN`` or
``Infinity`` (``allow_nan=False``; the caller turns the ``ValueError`` into a diagnostic) and never a
lone surrogate. ``value_problem`` finds the same faults in a value that did not come from text (a
state written in a YAML test case, a state given to the API).

The common case costs one ``json.loads``: each check first asks a C-speed question (a count, a
regular expression) and reads the text again, slowly and exactly, only when it says "maybe".
"""

from __future__ import annotations

import json
import math
import re
from fractions import Fraction
from typing import Any

from .diagnostics import Diagnostic, DiagnosticError, Span

MAX_DEPTH = 100  # arrays and objects nested in one another; jsonschema recurses some 4 frames a level
# One rule for a state's numbers, however they come (a JSON text, a YAML case, a value given to the API): a
# decimal's exponent is at most ``MAX_EXPONENT`` either way (every float Python writes, 1.8e308 and 5e-324 too,
# is read), and an integer has at most ``MAX_INT_DIGITS`` digits: what ``1e400`` is, written out or not.
MAX_EXPONENT = 400
MAX_INT_DIGITS = MAX_EXPONENT + 1
TOO_MANY_DIGITS = 10 ** MAX_INT_DIGITS  # (an integer is within the rule when its absolute value is below it)
_PLACES = 10 ** MAX_EXPONENT  # (a fraction is a decimal of at most MAX_EXPONENT places when its denominator divides it)

_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_NUMBER = r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?"
# tokens outside strings, in document order: what json.loads meets first is what these find first
_TOKENS = re.compile(rf'({_STRING})|([\[\]{{}},:])|(-?Infinity|NaN)|({_NUMBER})')
_BRACKETS = re.compile(rf'{_STRING}|[\[\]{{}}]')
_SUSPECT_NUMBER = re.compile(r"(?<!\d)\d{%d}" % (MAX_INT_DIGITS + 1))  # (tried where a run of digits starts)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE = re.compile(r"\\(?:u([0-9a-fA-F]{4})|.)")
LONE_SURROGATE = re.compile("[\ud800-\udfff]")  # (no encoding writes one: no JSON text holds one)


class _Refused(Exception):
    """Raised by a hook of ``json.loads``; the text is then read again to locate the token."""


class _Duplicate(Exception):
    """Raised by ``_object`` for an object that gives a key twice; the text is then read again."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):  # JSON leaves a repeated key's meaning open; Python would keep the last
        raise _Duplicate()
    return value


def _refuse_constant(name: str) -> Any:
    raise _Refused(name)


def _int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise _Refused(text)
    return int(text)


def _float(text: str) -> Fraction | int:
    """A number written with a fraction or an exponent, read exactly as the decimal it writes (never
    as a binary float): ``0.1`` is 1/10; a whole one (``1901.0``, ``2e3``) is the integer it equals.
    One that, written out, has more than ``MAX_INT_DIGITS`` digits before its point or ``MAX_EXPONENT``
    after it is refused (``_out_of_range``): the bound of a state's integers (``1e400`` is the largest
    power of ten), and of its decimals (``1e-400`` the smallest)."""
    if _out_of_range(text) is not None:
        raise _Refused(text)
    value = Fraction(text)
    return value.numerator if value.denominator == 1 else value


def _out_of_range(text: str) -> str | None:
    """Why a decimal is outside the bounds of a state's numbers (``_float``), or None."""
    m = _DECIMAL.fullmatch(text)
    if m is None:
        return None
    raw = m.group(3) or "0"
    if len(raw.lstrip("+-").lstrip("0")) > len(str(MAX_EXPONENT)):  # (a long exponent is never read as an int)
        return "small" if raw.startswith("-") else "large"
    digits = m.group(1) + (m.group(2) or "")
    point = len(m.group(1)) + int(raw)  # (where the point stands among the digits, from the left)
    if point - (len(digits) - len(digits.lstrip("0"))) > MAX_INT_DIGITS:  # (digits before it, leading zeros not)
        return "large"
    if len(digits.rstrip("0")) - point > MAX_EXPONENT:  # (digits after it, trailing zeros not)
        return "small"
    return None


_DECIMAL = re.compile(r"-?([0-9]+)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?")


def exact_numbers(value: Any) -> Any:
    """``value`` with every binary float in it read as the decimal it writes, as ``loads`` reads a
    JSON text's decimal (``_float``): the float's shortest decimal (``repr``: 0.1 for the float
    nearest 1/10) is read exactly, so ``0.1`` from a Python caller or a YAML file is 1/10, as in a
    JSON state, and ``2.0`` is 2. The one definition of a decimal for every way a value comes in
    (a JSON text, the Python API, a YAML case's state or data file). A NaN or an infinity is left
    for ``value_problem`` to refuse. Without a float, the value itself (nothing copied)."""
    try:
        found = _with_floats_read(value)
    except RecursionError:  # (a value nested this deep is refused where it is checked: S001)
        return value
    return value if found is _SAME else found


_SAME = object()


def _with_floats_read(v: Any) -> Any:
    """The value with its floats read (``exact_numbers``), or ``_SAME`` if it holds none."""
    t = type(v)
    if t is float:
        if not math.isfinite(v):
            return _SAME
        return _float(repr(v))
    if t is dict or t is list or t is tuple:
        changed: Any = None
        for k, x in (v.items() if t is dict else enumerate(v)):
            if type(x) not in _HOLDERS:  # (a text, a whole number, a truth value, none: as they are)
                continue
            y = _with_floats_read(x)
            if y is not _SAME:
                if changed is None:
                    changed = dict(v) if t is dict else list(v)
                changed[k] = y
        return _SAME if changed is None else tuple(changed) if t is tuple else changed
    return _SAME


_HOLDERS = frozenset({float, dict, list, tuple})  # what may be or hold a float (``_with_floats_read``)


def _line_col(text: str, pos: int) -> tuple[int, int]:
    line = text.count("\n", 0, pos) + 1
    return line, pos - (text.rfind("\n", 0, pos) + 1) + 1


def pointer_at(text: str, pos: int) -> str:
    """The JSON pointer of the value that starts at ``pos`` of a JSON text (read up to ``pos`` only)."""
    path: list[Any] = []  # per open container: [index or key]
    kinds: list[str] = []
    expect_key = False
    for m in _TOKENS.finditer(text, 0, pos):
        string, punct = m.group(1), m.group(2)
        if punct in ("[", "{"):
            kinds.append(punct)
            path.append(0 if punct == "[" else None)
            expect_key = punct == "{"
        elif punct in ("]", "}"):
            if kinds:
                kinds.pop()
                path.pop()
            expect_key = False
        elif punct == ",":
            if kinds and kinds[-1] == "[":
                path[-1] += 1
            elif kinds:
                path[-1] = None
            expect_key = bool(kinds) and kinds[-1] == "{"
        elif punct == ":":
            expect_key = False
        elif string is not None and expect_key:
            try:
                path[-1] = json.loads(string)
            except ValueError:
                path[-1] = string[1:-1]
    parts = [str(p).replace("~", "~0").replace("/", "~1") for p in path if p is not None]
    return "/" + "/".join(parts) if parts else ""


def _error(text: str, shown: str, pos: int, length: int, message: str, help_: str | None) -> DiagnosticError:
    line, col = _line_col(text, pos)
    return DiagnosticError([Diagnostic("S001", message, Span(shown, line, col, line, col + max(1, length)),
                                       pointer=pointer_at(text, pos), help=help_)])


def _too_deep(text: str) -> int | None:
    """Where the nesting first goes past ``MAX_DEPTH`` (strings skipped), or None."""
    if text.count("[") + text.count("{") <= MAX_DEPTH:  # (C speed) it cannot, whatever the strings say
        return None
    depth = 0
    for m in _BRACKETS.finditer(text):
        ch = m.group()
        if ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return m.start()
        elif ch in "]}":
            depth -= 1
    return None


def _lone_surrogate(text: str) -> tuple[int, int] | None:
    """Offset and length of the first escape of a lone surrogate in a string of the text, or None."""
    for m in re.finditer(_STRING, text):
        body = m.group()
        if "\\u" not in body:
            continue
        pending: tuple[int, int] | None = None  # a high surrogate waiting for its low half
        for e in _ESCAPE.finditer(body):
            code = int(e.group(1), 16) if e.group(1) else -1
            if pending is not None:
                if 0xDC00 <= code <= 0xDFFF and e.start() == pending[0] + 6:
                    pending = None
                    continue
                return m.start() + pending[0], 6
            if 0xD800 <= code <= 0xDBFF:
                pending = (e.start(), code)
            elif 0xDC00 <= code <= 0xDFFF:
                return m.start() + e.start(), 6
        if pending is not None:
            return m.start() + pending[0], 6
    return None


def loads(text: str, shown: str) -> Any:
    """A JSON value from text (a state, an argument); ``DiagnosticError`` with one ``S001`` at the
    place of the first fault: bad syntax, nesting deeper than ``MAX_DEPTH``, ``NaN``/``Infinity``,
    a number too large (an integer of more than ``MAX_INT_DIGITS`` digits, a float that overflows),
    a lone surrogate escape. A leading byte order mark is skipped (columns count from after it)."""
    if text.startswith("\ufeff"):
        text = text[1:]
    raw = LONE_SURROGATE.search(text)  # text decoded with `surrogateescape` holds undecodable bytes so
    if raw is not None:
        raise _error(text, shown, raw.start(), 1, "the text is not UTF-8", "save the state as UTF-8")
    deep = _too_deep(text)
    if deep is not None:
        raise _error(text, shown, deep, 1, f"JSON nested more than {MAX_DEPTH} deep",
                     "a state is a few levels of records and lists; flatten this part")
    hooks: dict[str, Any] = {"parse_constant": _refuse_constant, "object_pairs_hook": _object, "parse_float": _float}
    if _SUSPECT_NUMBER.search(text):
        hooks.update(parse_int=_int)
    try:
        value = json.loads(text, **hooks)
    except json.JSONDecodeError as exc:
        line, col = exc.lineno, exc.colno
        raise DiagnosticError([Diagnostic("S001", f"invalid JSON: {exc.msg}", Span(shown, line, col, line, col + 1),
                                          pointer=pointer_at(text, exc.pos) or None)]) from None
    except _Refused as refused:
        raise _refused(text, shown, str(refused)) from None
    except _Duplicate:
        raise _duplicate(text, shown) from None
    except RecursionError:  # not expected below MAX_DEPTH; still a located answer
        raise DiagnosticError([Diagnostic("S001", "JSON nested too deeply", Span(shown, 1, 1, 1, 2))]) from None
    if _SURROGATE_ESCAPE.search(text):
        found = _lone_surrogate(text)
        if found is not None:
            raise _error(text, shown, found[0], found[1], f"lone surrogate `{text[found[0]:found[0] + 6]}` in a string",
                         "a \\uD800-\\uDFFF escape must be half of a pair; no text encoding can write one alone")
    return value


def _refused(text: str, shown: str, token: str) -> DiagnosticError:
    for m in _TOKENS.finditer(text):
        found = m.group(3) or m.group(4)
        if found != token:
            continue
        if m.group(3):
            return _error(text, shown, m.start(), len(found), f"`{found}` is not JSON",
                          "JSON has no NaN or infinity; write a number, or none (`null`)")
        if found.lstrip("-").isdigit():
            return _error(text, shown, m.start(), len(found),
                          f"integer with {len(found.lstrip('-'))} digits, more than {MAX_INT_DIGITS}", _NUMBER_HELP)
        if _out_of_range(found) == "small":
            return _error(text, shown, m.start(), len(found),
                          f"number with more than {MAX_EXPONENT} digits after its point",
                          "write 0, or a number of fewer decimals")
        return _error(text, shown, m.start(), len(found),
                      f"number too large: more than {MAX_INT_DIGITS} digits before its point", _NUMBER_HELP)
    return DiagnosticError([Diagnostic("S001", f"`{token[:40]}` cannot be read", Span(shown, 1, 1, 1, 2))])


_NUMBER_HELP = f"a state's numbers are below 10^{MAX_INT_DIGITS} (`1e400` is the largest power of ten); write it as a string"


def _duplicate(text: str, shown: str) -> DiagnosticError:
    """The S001 of the first key an object of the text gives twice (objects are read as they close,
    as ``json.loads`` reads them: an inner object's repeat is found before its parent's)."""
    keys: list[dict[str, int] | None] = []  # per open container: an object's keys so far (None: an array)
    expect_key = False
    for m in _TOKENS.finditer(text):
        string, punct = m.group(1), m.group(2)
        if punct in ("[", "{"):
            keys.append({} if punct == "{" else None)
            expect_key = punct == "{"
        elif punct in ("]", "}"):
            if keys:
                keys.pop()
            expect_key = False
        elif punct == ",":
            expect_key = bool(keys) and keys[-1] is not None
        elif punct == ":":
            expect_key = False
        elif string is not None and expect_key and keys and keys[-1] is not None:
            key = json.loads(string)
            if key in keys[-1]:
                first = _line_col(text, keys[-1][key])[0]
                line, col = _line_col(text, m.start())
                parent = pointer_at(text, m.start())
                return DiagnosticError([Diagnostic(
                    "S001", f"key {string} given twice in one object", Span(shown, line, col, line, col + len(string)),
                    pointer=parent + "/" + key.replace("~", "~0").replace("/", "~1"),
                    help=f"its first value is on line {first}; JSON gives no meaning to a repeated key, so keep one")])
            keys[-1][key] = m.start()
    return DiagnosticError([Diagnostic("S001", "an object gives a key twice", Span(shown, 1, 1, 1, 2))])


def value_problem(value: Any, max_depth: int = MAX_DEPTH, subclasses: bool = False) -> tuple[str, str] | None:
    """(JSON pointer, what is wrong) for the first part of a value that JSON text could not hold or
    that ``loads`` would refuse (nested too deep, NaN or infinity, a lone surrogate, an integer of
    too many digits, a value of no JSON type), or None. Iterative: any depth is safe to ask about.

    One walk, depth first, a container's items last first (the order a stack of the parts pops
    them in); a container is tested where it is reached (its depth, then its keys in order), a text,
    number, truth value or none where its container reads it. Each open container keeps its place
    (its parent's place and its key in it); the pointer is built from it only for a problem. With
    ``subclasses``, a value of a subclass of a JSON type (an ``OrderedDict``, an ``IntEnum``) is one of that
    type, as Python's ``json`` writes it (a caller's state: ``api``)."""
    if subclasses:
        value = _plain(value)
    t = type(value)
    if t is not dict and t is not list and t is not tuple:
        problem = _leaf_problem(value)
        return None if problem is None else ("", problem)
    problem = _container_problem(value, 0, max_depth)
    if problem is not None:
        return "", problem
    lone = LONE_SURROGATE.search
    # per open container: its items still to read (last first), its place, its depth
    todo: list[tuple[Any, Any, int]] = [(_last_first(value), None, 0)]
    while todo:
        items, place, depth = todo[-1]
        for k, x in items:
            tx = type(x)
            if subclasses and tx not in _PLAIN and isinstance(x, _BASES):
                x = _plain(x)
                tx = type(x)
            if tx is str:
                if not x.isascii() and lone(x):
                    return _pointer_of(place, k), "a text holds a lone surrogate"
            elif tx is dict or tx is list or tx is tuple:
                problem = _container_problem(x, depth + 1, max_depth)
                if problem is not None:
                    return _pointer_of(place, k), problem
                todo.append((_last_first(x), (place, k), depth + 1))
                break  # (its items first; this container's others after)
            elif x is not None and tx is not bool:
                problem = _leaf_problem(x)
                if problem is not None:
                    return _pointer_of(place, k), problem
        else:
            todo.pop()
    return None


_PLAIN = frozenset({dict, list, tuple, str, int, float, bool, type(None), Fraction})
_BASES = (dict, list, tuple, str, int, float)


def _plain(v: Any) -> Any:
    """A value of a subclass of a JSON type as a value of that type (one level: its items are read as
    they are reached)."""
    if type(v) in _PLAIN or not isinstance(v, _BASES):
        return v
    base: Any = next(b for b in _BASES if isinstance(v, b))
    return base(v)


def _leaf_problem(v: Any) -> str | None:
    """What is wrong with a value that is no list, tuple or object, or None."""
    t = type(v)
    if t is str:
        return "a text holds a lone surrogate" if LONE_SURROGATE.search(v) else None
    if t is int:
        if v.bit_length() > 1332 and abs(v) >= TOO_MANY_DIGITS:  # (2^1332 < 10^401)
            return f"an integer with more than {MAX_INT_DIGITS} digits"
        return None
    if t is float:
        return None if math.isfinite(v) else f"`{v}` is not JSON"
    if t is Fraction:  # a decimal as ``loads`` reads one exactly, held to its bounds (``_float``): 1/3 is none
        if _PLACES % v.denominator:
            return f"a fraction no decimal of at most {MAX_EXPONENT} places writes"
        if abs(v) >= TOO_MANY_DIGITS:
            return f"a decimal with more than {MAX_INT_DIGITS} digits before its point"
        return None
    if v is None or t is bool:
        return None
    return f"a value of no JSON type (`{t.__name__}`)"


def _container_problem(v: Any, depth: int, max_depth: int) -> str | None:
    """What is wrong with a list, tuple or object itself at ``depth``: too deep, else its first key
    that is no text or holds a lone surrogate; or None."""
    if depth >= max_depth:
        return f"nested more than {max_depth} deep"
    if type(v) is dict:
        for k in v:
            if type(k) is not str:
                return f"a key that is not text (`{str(k)[:40]}`)"
            if not k.isascii() and LONE_SURROGATE.search(k):
                return "a key holds a lone surrogate"
    return None


def _last_first(v: Any) -> Any:
    """A container's (key, item) pairs, last first."""
    if type(v) is dict:
        return reversed(v.items())
    return zip(range(len(v) - 1, -1, -1), reversed(v))


def _pointer_of(place: Any, key: Any) -> str:
    """The pointer of the item ``key`` of the container at ``place`` ((parent place, key), None at the top)."""
    path = [key]
    while place is not None:
        place, k = place
        path.append(k)
    return _pointer(tuple(reversed(path)))


def _pointer(path: tuple[Any, ...]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


def dumps(value: Any, **options: Any) -> str:
    """JSON text of a value: ``ValueError`` for NaN or infinity (JSON has neither); a lone surrogate
    is written as the replacement character U+FFFD, which every UTF-8 reader accepts."""
    text = json.dumps(value, allow_nan=False, **options)
    if LONE_SURROGATE.search(text):
        text = LONE_SURROGATE.sub("\ufffd", text)
    return text


# ---------------------------------------------------------------- where a pointer's value is written

_VALUE_TOKENS = re.compile(rf'({_STRING})|([\[\]{{}},:])|(true|false|null|{_NUMBER})')


def item_places(text: str) -> list[tuple[int, int]]:
    """The line and column (1-based) where each item of the JSON list a text holds starts (the text read
    once, token by token)."""
    places: list[tuple[int, int]] = []
    depth, line, line_start, at, expect_item = 0, 1, 0, 0, False
    for m in _VALUE_TOKENS.finditer(text):
        tok = m.group()
        if depth == 1 and expect_item and tok != "]":
            newlines = text.count("\n", at, m.start())
            if newlines:
                line += newlines
                line_start = text.rfind("\n", at, m.start()) + 1
            at = m.start()
            places.append((line, at - line_start + 1))
        expect_item = False
        if tok in ("[", "{"):
            depth += 1
            expect_item = depth == 1
        elif tok in ("]", "}"):
            depth -= 1
        elif tok == "," and depth == 1:
            expect_item = True
    return places


class Positions:
    """Where the values of a JSON text (one that ``loads`` read) are written: ``of(parts)`` gives the
    (line, col, end_line, end_col) of the value a JSON pointer's unescaped parts name, 1-based, end
    exclusive, or None when the pointer names nothing. A scalar is located at its value, a container
    that is an object's member at its key (as ``safeyaml.Positions``), another at its first
    character. The text is read once; each ``of`` walks only the containers on the pointer's way."""

    def __init__(self, text: str):
        self.text = text[1:] if text.startswith("\ufeff") else text  # as ``loads`` counts columns
        self.toks = [(m.start(), m.end(), m.group()) for m in _VALUE_TOKENS.finditer(self.text)]
        self.after: dict[int, int] = {}  # a container's first token -> the token after its last, found once
        opened: list[int] = []
        for i, (_, _, tok) in enumerate(self.toks):
            if tok in ("[", "{"):
                opened.append(i)
            elif tok in ("]", "}") and opened:
                self.after[opened.pop()] = i + 1

    def _skip(self, i: int) -> int:
        """The index of the token after the value starting at token ``i`` (each ``of`` on a large text
        skips what lies before its value at once, not token by token)."""
        if self.toks[i][2] not in ("[", "{"):
            return i + 1
        return self.after.get(i, len(self.toks))

    def _member(self, i: int, part: str) -> int | None:
        """The first token of the member ``part`` of the container starting at token ``i`` (the last
        of equal keys, as ``json.loads`` keeps it), or None."""
        opener = self.toks[i][2]
        found = None
        i += 1
        index = 0
        while i < len(self.toks) and self.toks[i][2] not in ("]", "}"):
            if opener == "{":
                try:
                    key = json.loads(self.toks[i][2])
                except ValueError:
                    return None
                i += 2  # the key and its colon
                if key == part:
                    found = i
            elif part.isdigit() and int(part) == index:
                return i
            i = self._skip(i)
            index += 1
            if i < len(self.toks) and self.toks[i][2] == ",":
                i += 1
        return found

    def _walk(self, parts: tuple[str, ...]) -> tuple[int, bool] | None:
        """The token the parts name, and whether its holder is an object (None where the text has no
        such member or item)."""
        if not self.toks:
            return None
        i: int | None = 0
        in_object = False
        for part in parts:
            if i is None or i >= len(self.toks) or self.toks[i][2] not in ("[", "{"):
                return None
            in_object = self.toks[i][2] == "{"
            i = self._member(i, part)
        return None if i is None else (i, in_object)

    def key(self, parts: tuple[str, ...]) -> tuple[int, int, int, int] | None:
        """Where the key of the object's member the parts name is written, its quotes included (None for
        an item of a list, the whole text, or nothing)."""
        found = self._walk(parts) if parts else None
        if found is None or not found[1]:
            return None
        start, end, _ = self.toks[found[0] - 2]
        return (*_line_col(self.text, start), *_line_col(self.text, end))

    def of(self, parts: tuple[str, ...]) -> tuple[int, int, int, int] | None:
        found = self._walk(parts)
        if found is None or found[0] >= len(self.toks):
            return None
        i, in_object = found
        start, end, tok = self.toks[i]
        if tok in ("[", "{") and in_object:  # the member's key: two tokens back, before the colon
            start, end, _ = self.toks[i - 2]
        elif tok in ("[", "{"):
            end = start + 1
        line, col = _line_col(self.text, start)
        end_line, end_col = _line_col(self.text, end)
        return line, col, end_line, end_col


# ---------------------------------------------------------------- a value shown in a message

SHOWN = 80  # characters of a value in a message; a longer one is cut, ending in "..."


class _Full(Exception):
    pass


def shown(value: Any, limit: int = SHOWN) -> str:
    """``value`` in JSON notation, cut after ``limit`` characters (the walk stops there: a value of
    millions of entries costs no more than a short one)."""
    out: list[str] = []
    size = 0

    def put(text: str) -> None:
        nonlocal size
        out.append(text)
        size += len(text)
        if size > limit:
            raise _Full

    def walk(v: Any) -> None:
        if v is True or v is False or v is None:
            put(json.dumps(v))
        elif isinstance(v, str):
            put(json.dumps(v[:limit + 1], ensure_ascii=False))
        elif isinstance(v, Fraction):
            put(number(v))
        elif isinstance(v, (int, float)):
            put(json.dumps(v))
        elif isinstance(v, dict):
            put("{")
            for i, (k, x) in enumerate(v.items()):
                put((", " if i else "") + json.dumps(str(k)[:limit + 1], ensure_ascii=False) + ": ")
                walk(x)
            put("}")
        elif isinstance(v, (list, tuple)):
            put("[")
            for i, x in enumerate(v):
                if i:
                    put(", ")
                walk(x)
            put("]")
        else:
            put(repr(v))

    try:
        walk(value)
    except _Full:
        return "".join(out)[:limit - 3] + "..."
    return "".join(out)


def number(x: Any) -> str:
    """A number of a schema as JSON writes it: a fraction read from a decimal (``multipleOf: 0.1``)
    as that decimal, one of no finite decimal as ``n/d``."""
    if not isinstance(x, Fraction):
        return json.dumps(x)
    if x.denominator == 1:
        return str(x.numerator)
    d, twos, fives = x.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return f"{x.numerator}/{x.denominator}"
    places = max(twos, fives)
    digits = str(abs(x.numerator) * 10 ** places // x.denominator).rjust(places + 1, "0")
    return ("-" if x < 0 else "") + digits[:-places] + "." + digits[-places:]

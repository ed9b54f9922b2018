"""Room for deep recursion: run a stage in a thread with a large stack and a high recursion limit.

The parser reads any nesting without recursion (an LALR table driver), but the stages after it walk
the AST recursively, two Python frames per level when compiling: a sum of 500 terms (a left-nested
chain of 500 `+`) is 1 000 frames, Python's default limit. Rewriting every walk as a loop would
spread through the compiler, the checker, the types and the code generator; instead a stage that
walks an AST runs through ``call``:

- in its own thread, whose stack is ``STACK_BYTES`` (the main thread's may be 8 MB or less, and a
  frame called from C, such as ``__eq__`` of an AST node in a tuple comparison, takes about
  1.6 KB of it), created for the call;
- with the recursion limit at least ``RECURSION_LIMIT``; that is 32 MB of C stack in the worst
  case, half the thread's, so Python's ``RecursionError`` always comes before a stack overflow.

That makes expressions some 9 000 levels deep work; deeper, the caller turns the ``RecursionError``
into a located diagnostic (``api.load_ruleset``: ``P006`` at the deepest expression). A thread
costs some 100 µs, which is why runs (a turn of a big ruleset takes about 1 ms) do not go through here.
Nested calls run in place. The limit is process-wide: it is raised while any call is running and
restored when the last one ends.
"""

from __future__ import annotations

import contextvars
import sys
import threading
from typing import Any, Callable, TypeVar

STACK_BYTES = 64 * 1024 * 1024
RECURSION_LIMIT = 20_000

_T = TypeVar("_T")
_lock = threading.Lock()
_running = 0
_saved_limit = 0
_inside = threading.local()


def call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``fn(*args, **kwargs)`` with room for deep recursion; its exception, if any, is raised here."""
    if getattr(_inside, "deep", False):
        return fn(*args, **kwargs)
    outcome: list[tuple[bool, Any]] = []
    context = contextvars.copy_context()  # (the caller's context variables hold in the deep thread too)

    def body() -> None:
        _inside.deep = True
        try:
            outcome.append((True, context.run(fn, *args, **kwargs)))
        except BaseException as exc:  # handed to the caller's thread, whatever it is
            outcome.append((False, exc))

    worker = _start(body)
    if worker is None:  # no thread of that size could be made: recurse in place, within the usual limit
        return fn(*args, **kwargs)
    try:
        worker.join()
    finally:
        _release()
    ok, value = outcome[0]
    if ok:
        return value  # type: ignore[no-any-return]
    raise value


def _start(body: Callable[[], None]) -> threading.Thread | None:
    """A started thread with a ``STACK_BYTES`` stack running ``body``, the limit raised; or None."""
    global _running, _saved_limit
    with _lock:
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):  # a platform that cannot size stacks
            return None
        try:
            if _running == 0:
                _saved_limit = sys.getrecursionlimit()
                sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
            _running += 1
            worker = threading.Thread(target=body, name="ruleval-deep", daemon=True)
            try:
                worker.start()
            except RuntimeError:  # no more threads (or memory for the stack)
                _running -= 1
                if _running == 0:
                    sys.setrecursionlimit(_saved_limit)
                return None
            return worker
        finally:
            threading.stack_size(previous)


def _release() -> None:
    global _running
    with _lock:
        _running -= 1
        if _running == 0:
            sys.setrecursionlimit(_saved_limit)

"""Sub-commands for rules authors beyond check and run (test, explain, ...)."""

from __future__ import annotations

import argparse
import re
from typing import Any, Callable, TextIO

COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {}


def register(sub: Any) -> None:
    from . import balance, coverage, errata, explain, fmt, play, testing

    testing.register(sub, COMMANDS)
    fmt.register(sub, COMMANDS)
    explain.register(sub, COMMANDS)
    coverage.register(sub, COMMANDS)
    errata.register(sub, COMMANDS)
    play.register(sub, COMMANDS)
    balance.register(sub, COMMANDS)
    from . import render

    render.register(sub, COMMANDS)
    _register_serve(sub)


# A number on the command line is written in ASCII digits: Python's int() and float() also read other
# scripts' digits (`١`, `５`), underscores (`1_000`), spaces around and a `+`, so `--port ١` served on port 1.
WHOLE_NUMBER = re.compile(r"-?[0-9]+")
DECIMAL_NUMBER = re.compile(r"-?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


def whole_number(text: str) -> int | None:
    """``text`` read as a whole number written in ASCII digits (a leading `-` allowed), else None."""
    return int(text) if WHOLE_NUMBER.fullmatch(text) else None


def int_between(low: int, high: int, what: str) -> Callable[[str], int]:
    """An argparse type: a whole number from ``low`` to ``high``, else the option's usage error."""
    def parse(text: str) -> int:
        n = whole_number(text)
        if n is None:
            n = low - 1
        if not low <= n <= high:
            raise argparse.ArgumentTypeError(f"expected {what} from {low} to {high}, not {text!r}")
        return n
    return parse


def _register_serve(sub: Any) -> None:
    """`ruleval serve`'s options; the server itself (``serve``, with http.server) is imported only when
    the command runs, not by every command's start."""
    p = sub.add_parser("serve", help="the playground: edit, check, run, explain and diff rulesets in a local web page")
    p.add_argument("path", nargs="?", help="a project folder to serve (its rulesets, maps, cases and states, "
                   "and nothing outside it); default: the bundled rulesets")
    p.add_argument("--port", type=int_between(0, 65535, "a port"), default=8000,
                   help="port to listen on (default 8000; 0: any free port)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1; loopback only)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --host (anyone who reaches it can make this machine run rulesets)")
    p.add_argument("--verbose", action="store_true", help="log each request on standard error")
    COMMANDS["serve"] = _cmd_serve


def _cmd_serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .serve import cmd_serve

    return cmd_serve(args, out, err)

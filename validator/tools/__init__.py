"""Sub-commands for rules authors beyond check and run (test, explain, ...)."""

from __future__ import annotations

import argparse
from typing import Any, Callable, TextIO

COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {}


def register(sub: Any) -> None:
    from . import coverage, errata, explain, fmt, play, testing

    testing.register(sub, COMMANDS)
    fmt.register(sub, COMMANDS)
    explain.register(sub, COMMANDS)
    coverage.register(sub, COMMANDS)
    errata.register(sub, COMMANDS)
    play.register(sub, COMMANDS)
    from . import render

    render.register(sub, COMMANDS)
    from . import serve

    serve.register(sub, COMMANDS)

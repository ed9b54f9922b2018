"""Sub-commands for rules authors beyond check and run (test, explain, ...)."""

from __future__ import annotations

import argparse
from typing import Any, Callable, TextIO

COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {}


def register(sub: Any) -> None:
    from . import testing

    testing.register(sub, COMMANDS)

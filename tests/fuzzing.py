"""Shared by the fuzz, property and robustness tests: bounded, derandomized hypothesis settings
(CI stays fast and repeatable) and the long mode switched on by RULEVAL_FUZZ_LONG=1."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("RULEVAL_FUZZ_LONG") == "1"


def bounded(examples: int, long_examples: int | None = None) -> settings:
    """``examples`` per test normally; ``long_examples`` (default 50 times more) in the long mode."""
    n = (long_examples or examples * 50) if LONG else examples
    return settings(derandomize=True, max_examples=n, deadline=None, database=None,
                    suppress_health_check=list(HealthCheck))

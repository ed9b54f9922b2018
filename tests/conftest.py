"""Shared test helpers: run the CLI in-process with captured streams."""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

# `ruleval check` keeps results in a cache folder: the tests use their own, never the user's.
os.environ.setdefault("RULEVAL_CACHE_DIR", tempfile.mkdtemp(prefix="ruleval-test-cache-"))


class CliResult:
    def __init__(self, code: int, out: str, err: str):
        self.code, self.out, self.err = code, out, err

    def assert_no_traceback(self) -> None:
        assert "Traceback" not in self.out + self.err, self.out + self.err


@pytest.fixture
def cli():
    from validator.tools.cli import main

    def run(*argv: str) -> CliResult:
        out, err = io.StringIO(), io.StringIO()
        code = main(list(argv), stdout=out, stderr=err)
        result = CliResult(code, out.getvalue(), err.getvalue())
        result.assert_no_traceback()
        return result

    return run

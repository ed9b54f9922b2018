"""The house conventions' "ruff and mypy clean": both run on the tree as CI has it, at the versions the
test extras pin, and any finding fails the suite with the tools' own report."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_finds_nothing() -> None:
    pytest.importorskip("ruff", reason="ruff is a test extra: pip install -e '.[test]'")
    done = _run("ruff", "check", "--no-cache", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing(tmp_path: Path) -> None:
    pytest.importorskip("mypy", reason="mypy is a test extra: pip install -e '.[test]'")
    # (a cache of its own: the suite's parallel workers never share one, and the tree keeps none)
    done = _run("mypy", "--cache-dir", str(tmp_path / "mypy_cache"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success: no issues found" in done.stdout

"""The adversarial suite: hostile rulesets, states, test cases and caches, each run as an untrusted
pull request would be run in CI, in a fresh process under a memory cap and a time limit.

`hostile(*argv, cwd=...)` runs `python -m validator ARGV` in a subprocess with its address space
capped (`MEM_MB`) and a wall-clock limit (`SECONDS`); it fails the test on a timeout, on an exit
code of 4 (internal error) and on a Python traceback in the output, so every test also holds
"ends within a few seconds with a documented exit code".
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
MEM_MB = 1024
SECONDS = 20.0


@dataclass
class Outcome:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def _cap_memory() -> None:  # pragma: no cover - runs in the child
    limit = MEM_MB * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_hostile(*argv: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None,
                seconds: float = SECONDS) -> Outcome:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(PROJECT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("NO_COLOR", "1")
    full_env.update(env or {})
    try:
        proc = subprocess.run([sys.executable, "-m", "validator", *argv], cwd=cwd, env=full_env, input=stdin,
                              capture_output=True, text=True, timeout=seconds, preexec_fn=_cap_memory,
                              errors="replace")
    except subprocess.TimeoutExpired:
        pytest.fail(f"`ruleval {' '.join(argv)}` did not end within {seconds} s")
    outcome = Outcome(proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in outcome.text, outcome.text[-3000:]
    assert outcome.code != 4, f"internal error (exit 4):\n{outcome.text[-3000:]}"
    assert outcome.code >= 0, f"killed by signal {-outcome.code} (memory cap {MEM_MB} MB?)\n{outcome.text[-3000:]}"
    return outcome


@pytest.fixture
def hostile(tmp_path: Path):
    """Run the CLI on hostile input in a capped subprocess; the cache is the test's own folder."""
    cache = tmp_path / "_cache"

    def run(*argv: str, cwd: Path | None = None, env: dict[str, str] | None = None, stdin: str | None = None,
            seconds: float = SECONDS) -> Outcome:
        merged = {"RULEVAL_CACHE_DIR": str(cache), **(env or {})}
        return run_hostile(*argv, cwd=cwd or tmp_path, env=merged, stdin=stdin, seconds=seconds)

    return run


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A ruleset root as a pull request would bring it: `ruleval.toml` and an empty state, with a
    'secret' file beside the root that nothing may read."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "ruleval.toml").write_text("")
    (root / "empty.json").write_text("{}")
    (tmp_path / "secret.json").write_text('{"aws_secret": "AKIA-DO-NOT-LEAK"}')
    return root


SECRET = "AKIA-DO-NOT-LEAK"

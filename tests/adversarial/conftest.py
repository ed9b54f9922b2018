"""The adversarial suite: hostile rulesets, states, test cases and caches, each run as an untrusted
pull request would be run in CI, in a fresh process under a memory cap and a CPU-time limit.

`hostile(*argv, cwd=...)` runs `python -m validator ARGV` in a subprocess with its address space
capped (`MEM_MB`) and its CPU time capped (`SECONDS` of CPU, `RLIMIT_CPU`); it fails the test when the
child is stopped by the CPU limit, on an exit code of 4 (internal error) and on a Python traceback in
the output, so every test also holds "ends after a bounded amount of work with a documented exit code".

What is bounded is work, not speed: CPU time does not grow when the machine is shared, where wall-clock
time does (CI runs on 2 shared cores). A wall-clock timeout of `WALL_FACTOR` times the CPU limit stays,
only to stop a child that blocks without using CPU (a read that never returns); it fails the test too,
with a message that says which of the two limits stopped the child. `run_capped` is the same harness
for any command (the tests that run a script of their own).
"""

from __future__ import annotations

import math
import os
import resource
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
MEM_MB = 1024
SECONDS = 20.0  # CPU seconds
WALL_FACTOR = 10  # the wall-clock guard, in multiples of the CPU limit: only for a child that blocks


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


def _limits(soft: int):
    """The child's preexec function: the memory cap (looked up when the child starts, so a test may
    add to it) and a CPU limit of `soft` seconds: SIGXCPU then, SIGKILL a second later."""

    def apply() -> None:  # pragma: no cover - runs in the child
        _cap_memory()
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # SIGXCPU would otherwise leave a core file

    return apply


def run_capped(cmd: list[str], *, seconds: float = SECONDS, wall_seconds: float | None = None,
               **kwargs) -> subprocess.CompletedProcess:
    """`subprocess.run(cmd, **kwargs)` under the memory cap and a CPU limit of `seconds`; fails the test
    if the CPU limit stops the child, or if the wall-clock guard (`WALL_FACTOR` x `seconds` unless
    `wall_seconds` is given) does, naming which."""
    wall = wall_seconds if wall_seconds is not None else WALL_FACTOR * seconds
    soft = max(1, math.ceil(seconds))
    shown = " ".join(cmd[1:]) if cmd[:1] == [sys.executable] else " ".join(cmd)
    try:
        proc = subprocess.run(cmd, timeout=wall, preexec_fn=_limits(soft), **kwargs)
    except subprocess.TimeoutExpired:
        pytest.fail(f"`{shown}` was stopped by the wall-clock guard of {wall:g} s before reaching its CPU limit "
                    f"of {soft} s: it blocked without working (waiting on input, a lock or a sleep)")
    if proc.returncode in (-signal.SIGXCPU, -signal.SIGKILL):
        how = ("SIGXCPU" if proc.returncode == -signal.SIGXCPU else
               f"SIGKILL (the hard CPU limit, {soft + 1} s, or the system)")
        err = proc.stderr if isinstance(proc.stderr, str) else (proc.stderr or b"").decode("utf-8", "replace")
        pytest.fail(f"`{shown}` exceeded its CPU limit of {soft} s (killed by {how}): "
                    f"the work is not bounded\n{err[-3000:]}")
    return proc


def run_hostile(*argv: str, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None,
                seconds: float = SECONDS) -> Outcome:
    full_env = dict(os.environ)
    full_env["PYTHONPATH"] = str(PROJECT) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.setdefault("NO_COLOR", "1")
    full_env.update(env or {})
    proc = run_capped([sys.executable, "-m", "validator", *argv], seconds=seconds, cwd=cwd, env=full_env,
                      input=stdin, capture_output=True, text=True, errors="replace")
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

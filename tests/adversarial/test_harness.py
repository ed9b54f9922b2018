"""The harness itself (conftest.py): what stops a child is its CPU time, not the clock. A child that
works forever is stopped by the CPU limit and the failure says so; a child that blocks without working
is stopped by the wall-clock guard and the failure says that instead; a child under its limits passes."""

from __future__ import annotations

import sys

import pytest

from tests.adversarial.conftest import run_capped

SPIN = "while True:\n    pass\n"


def test_a_child_that_works_forever_is_stopped_by_the_cpu_limit_and_named_so() -> None:
    # a guard of ten minutes: however loaded the machine, only the CPU limit can stop this child in time
    with pytest.raises(pytest.fail.Exception) as failed:
        run_capped([sys.executable, "-c", SPIN], seconds=1, wall_seconds=600, capture_output=True, text=True)
    message = str(failed.value)
    assert "exceeded its CPU limit of 1 s" in message and "SIGXCPU" in message, message
    assert "wall-clock" not in message, message


def test_a_child_that_blocks_is_stopped_by_the_wall_clock_guard_and_named_so() -> None:
    with pytest.raises(pytest.fail.Exception) as failed:
        run_capped([sys.executable, "-c", "import time\ntime.sleep(600)\n"], seconds=1, wall_seconds=2,
                   capture_output=True, text=True)
    message = str(failed.value)
    assert "stopped by the wall-clock guard of 2 s before reaching its CPU limit of 1 s" in message, message
    assert "exceeded" not in message, message


def test_a_child_under_its_limits_passes_with_its_own_exit_code_and_output() -> None:
    done = run_capped([sys.executable, "-c", "print(sum(range(1000)))\nraise SystemExit(3)\n"],
                      capture_output=True, text=True)
    assert (done.returncode, done.stdout) == (3, f"{sum(range(1000))}\n")

"""Shared test helpers: run the CLI in-process with captured streams."""

from __future__ import annotations

import gc
import io
import os
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

if TYPE_CHECKING:
    from validator.tools.serve import PlaygroundServer

ROOT = Path(__file__).resolve().parent.parent

# `ruleval check` keeps results in a cache folder: the tests use their own, never the user's.
os.environ.setdefault("RULEVAL_CACHE_DIR", tempfile.mkdtemp(prefix="ruleval-test-cache-"))


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--slow", action="store_true",
                     help="also run the tests marked slow (the README's test command and .ci/run do)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a long test (Monte Carlo, wheel build, big fuzz); runs with --slow")
    config.addinivalue_line("markers", "planted_writer_bug: the test plants a bug in the backend's writer to see what "
                                       "a user is told (I002): ``loud_writing_everywhere`` stays out of its way")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without --slow (the edit loop), tests marked slow are skipped, each with its reason shown."""
    if config.getoption("--slow"):
        return
    skip = pytest.mark.skip(reason="slow: runs with --slow, as the README's test command and .ci/run do")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """The cycle collector's pass over everything a test process still holds, made here, then every
    object left frozen out of later passes. pytest collects again after the session (for exceptions
    raised in finalizers), once when unconfiguring and once when cleaning up: on a worker's heap
    after the whole suite each pass took seconds, and pytest-xdist (execnet) interrupts a worker still
    running 5 s after it said it finished: the KeyboardInterrupt printed after [100%], and the run's
    end 10 s late. Made here, before xdist's worker says it finished, the pass finds the same garbage
    (pytest's hook reports what its finalizers raise, as before), and pytest's own passes find only
    what was made since."""
    gc.collect()
    gc.freeze()


@pytest.fixture(autouse=True)
def loud_writing_everywhere(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test fails on code the backend wrote that Python refuses for another reason than nesting (a bug
    of the writer, ``runtime.WRITER_BUG``), which a run would otherwise hide by giving the unit to the
    reference, whose answer is the same (``fuzzing.loud_writing``): the cases, the DATC, the games, the
    reference's own tests all hold the writer to it, not only the random programs."""
    from fuzzing import loud_writing

    if request.node.get_closest_marker("planted_writer_bug") is not None:
        yield
        return
    with loud_writing():
        yield


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


@pytest.fixture(scope="module")
def server() -> Iterator[PlaygroundServer]:
    """The playground (``ruleval serve``) on a free loopback port, one for each test module that asks."""
    from validator.tools import serve

    srv = serve.make_server("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv
    srv.shutdown()
    srv.server_close()

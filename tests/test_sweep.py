"""The sweep engine (validator/tools/sweep.py): the same output, in the same order, from this
process (`--jobs 1`), a pool of processes (`--jobs 2`) and a real Dask cluster (a scheduler and two
worker processes on 127.0.0.1, started and stopped here); a worker killed mid-sweep changes nothing.
The rulesets are the race of tests/fixtures/sweep: whole games in a few phases."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from validator.tools import sweep

SWEEP = Path(__file__).resolve().parent / "fixtures" / "sweep"
REPO = Path(__file__).resolve().parent.parent
RACE, ERRATA = str(SWEEP / "race.rules"), str(SWEEP / "errata.rules")

pytest.importorskip("distributed", reason="the cluster extra is part of the test extra (pyproject)")


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    """A Dask scheduler and two worker processes, on the loopback address only."""
    from validator.tools.cluster import local_cluster

    with local_cluster(2) as c:
        assert c.address.startswith("tcp://127.0.0.1:")
        yield c


def _same(cli: Any, *argv: str, cluster: str) -> Any:
    one = cli(*argv, "--jobs", "1")
    pool = cli(*argv, "--jobs", "2")
    dask = cli(*argv, "--cluster", cluster)
    assert one.code == pool.code == dask.code, (one.err, pool.err, dask.err)
    assert one.out == pool.out == dask.out and one.out
    return one


def test_diff_games_alike_in_one_process_a_pool_and_a_cluster(cli: Any, cluster: Any) -> None:
    r = _same(cli, "diff", RACE, ERRATA, "--games", "12", "--show", "2", cluster=cluster.address)
    # the errata's goal against the original's: the clause of each side's cited `const`
    assert r.code == 1 and "games that differ: " in r.out and "R-4 (only NEW)" in r.out and "R-3 (only OLD)" in r.out
    j = _same(cli, "diff", RACE, ERRATA, "--games", "12", "--format", "json", cluster=cluster.address)
    figures = json.loads(j.out)["summary"]["games"]
    assert figures["share"]["of"] == 12 and 0 < figures["share"]["count"] < 12
    assert figures["share"]["ci95"][0] < figures["share"]["share"] < figures["share"]["ci95"][1]


def test_balance_alike_in_one_process_a_pool_and_a_cluster(cli: Any, cluster: Any) -> None:
    r = _same(cli, "balance", RACE, "--games", "30", "--player", "random", "--player", "red=steady",
              "--format", "json", cluster=cluster.address)
    f = json.loads(r.out)
    assert f["games"] == 30 and f["by_victory"] == 30
    assert f["sides"]["red"]["player"] == "steady" and f["sides"]["red"]["wins"]["count"] >= 20
    assert sum(f["sides"][s]["wins"]["count"] for s in f["sides"]) == 30


def test_test_cases_alike_in_one_process_a_pool_and_a_cluster(cli: Any, cluster: Any) -> None:
    r = _same(cli, "test", str(SWEEP / "cases.yaml"), cluster=cluster.address)
    assert r.code == 1 and "3 passed, 1 failed" in r.out and "a wrong expectation" in r.out


def test_paths_outside_the_working_folder_are_shown_by_workers_as_here(cli: Any, cluster: Any, tmp_path: Path,
                                                                      monkeypatch: Any) -> None:
    """Rulesets and cases outside the working folder, named as `../proj/...` and by an absolute path:
    the workers of a pool and of a cluster (which load them in a private folder of their own) show each
    path as this process does: a named file as written, a file it extends by its absolute path
    (docs/diagnostics.md, "Paths")."""
    import shutil

    proj = tmp_path.resolve() / "proj"
    shutil.copytree(SWEEP, proj)
    (proj / "bad.rules").write_text('ruleset sweep.bad "bad"\nextends "race.rules"\nrule zz cite "Q" = yy\n')
    (proj / "bad_cases.yaml").write_text("ruleset: bad.rules\ncases:\n  - id: start\n    query: start_state\n"
                                         "    expect: {round: 1}\n")
    (tmp_path / "here").mkdir()
    monkeypatch.chdir(tmp_path / "here")
    r = _same(cli, "check", "--no-cache", "--format", "json", "../proj/bad.rules", str(proj / "errata.rules"),
              cluster=cluster.address)
    files = {d["file"] for d in json.loads(r.out)}
    assert files == {"../proj/bad.rules"}, files
    assert f"`{proj / 'race.rules'}:" in r.out  # (the catalogue's line, in the ruleset it extends)
    t = _same(cli, "test", "../proj/cases.yaml", str(proj / "bad_cases.yaml"), cluster=cluster.address)
    assert "../proj/cases.yaml" in t.out and f"{proj / 'bad_cases.yaml'}:" in t.out
    assert f"{proj / 'bad.rules'}:3:" in t.out and "../" not in t.out.replace("../proj/cases.yaml", "")


FIXTURES = str(REPO / "tests" / "fixtures")


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_a_check_of_variants_of_one_base_on_processes_is_that_of_one_process(cli: Any, fmt: str) -> None:
    """Variants of one base, each with its own mistakes (tests/maps), checked on 2 and 3 processes: the
    workers forked once this process has checked the first (``sweep._on_warm_pool``) have its caches,
    and each variant still gets its own findings, byte for byte those of one process."""
    argv = ("check", "--no-cache", "--format", fmt, str(REPO / "tests" / "maps"))
    one = cli(*argv, "--jobs", "1")
    assert one.code == 1 and one.out + one.err
    for jobs in ("2", "3"):
        pool = cli(*argv, "--jobs", jobs)
        assert (pool.code, pool.out, pool.err) == (one.code, one.out, one.err)


@pytest.mark.parametrize("fmt", ["text", "json", "sarif"])
def test_check_alike_in_one_process_a_pool_and_a_cluster(cli: Any, cluster: Any, fmt: str) -> None:
    """`check` of many rulesets (tests/fixtures: errors of every stage, imports that climb out of their
    root, cycles, data files; a bundled game) prints, byte for byte, what one process prints, whether
    a pool or a cluster's workers (sent the files as content) checked them."""
    argv = ("check", "--no-cache", "--format", fmt, FIXTURES, str(REPO / "rulesets" / "jomini"))
    one = cli(*argv, "--jobs", "1")
    pool = cli(*argv, "--jobs", "2")
    dask = cli(*argv, "--cluster", cluster.address)
    assert one.code == pool.code == dask.code == 1
    assert (one.out, one.err) == (pool.out, pool.err) == (dask.out, dask.err)
    if fmt != "sarif":
        assert "resolves outside the ruleset root `tests/fixtures`" in one.out + one.err
    if fmt == "text":
        assert one.err.splitlines()[-1].startswith("checked 3") and "C007" in one.err


def test_check_on_a_cluster_keeps_the_check_cache_of_what_each_check_read(cli: Any, cluster: Any, tmp_path: Path,
                                                                          monkeypatch: Any) -> None:
    """The files a worker read (in its private copy) are named as this machine's in the cache, so that a
    later check finds every entry fresh, with the same diagnostics."""
    from validator.core import checkcache

    monkeypatch.setenv("RULEVAL_CACHE_DIR", str(tmp_path / "cache"))
    folders = [REPO / "tests" / "fixtures" / "errata", REPO / "tests" / "fixtures" / "data_import"]
    from validator.tools.cluster import connected

    def plugins() -> list[str]:
        with connected(cluster.address, timeout=30) as client:
            return list(client.run_on_scheduler(lambda dask_scheduler: list(dask_scheduler.worker_plugins)))

    before = plugins()
    monkeypatch.setenv("RULEVAL_CLUSTER", cluster.address)  # (as --cluster does)
    first = cli("check", *map(str, folders))
    monkeypatch.delenv("RULEVAL_CLUSTER")
    sent = [p for p in plugins() if p not in before]
    assert len(sent) == 1 and sent[0].startswith("ruleval-sources-")  # the files, sent to the cluster's workers
    for f in [p for folder in folders for p in folder.glob("*.rules")]:
        hit = checkcache.lookup(f)
        assert hit is not None, f
        assert any(name.endswith(("clauses.yaml", "terrain.yaml")) for name in hit.files), hit.files
    again = cli("check", *map(str, folders), "--jobs", "1")
    assert (first.code, first.out, first.err) == (again.code, again.out, again.err)


def test_the_sources_a_worker_gets_are_content_loaded_in_a_private_root() -> None:
    """What a worker is sent: bytes of every file the ruleset reads, never a path of this machine; loaded
    there, it shows the paths this process shows and gives the same results."""
    from validator.api import load_ruleset

    rs = load_ruleset(ERRATA)
    src = sweep.source_of(rs)
    names = {n for n, _ in src.files}
    assert {Path(n).name for n in names} >= {"race.rules", "errata.rules", "clauses.yaml", "ruleval.toml"}
    assert not any(os.path.isabs(n) for n in names)
    sweep._LOADED.pop(src.digest, None)
    there = sweep.load_source(src)
    assert there is not rs and there.path == rs.path and sorted(there.sources) == sorted(rs.sources)
    start = rs.run({}, query="start_state")
    assert there.run({**start, "orders": [{"side": "red", "steps": 2}]}, query="advance") == \
        rs.run({**start, "orders": [{"side": "red", "steps": 2}]}, query="advance")
    real = os.path.realpath(sweep._LOADED[src.digest].program.loaded.root)
    assert not real.startswith(str(SWEEP)) and "ruleval-sweep-" in real
    assert not os.path.exists(real)  # the private folder goes once the ruleset is loaded


def test_a_worker_shows_its_private_folder_and_its_own_bundle_as_the_sender_s() -> None:
    """In a worker, a path in the private folder is shown as the sender's file, and found again from that
    name (``confine.real_path``); a file of the worker's own ruleval bundle (another machine's install)
    is shown as the sender's bundle."""
    from dataclasses import replace

    from validator.api import load_ruleset
    from validator.core import confine

    rs = load_ruleset(ERRATA)
    src = replace(sweep.source_of(rs), bundle="/elsewhere/ruleval")
    own = confine.bundle_root()
    assert own is not None
    with sweep.laid_out(src) as top:
        private = (top / src.entry).resolve()
        assert confine.display_path(private) == rs.path and confine.real_path(rs.path) == private
        assert confine.display_path(own / "rulesets" / "x.rules") == "/elsewhere/ruleval/rulesets/x.rules"
    assert confine.display_path(private) != rs.path  # (the sender's view again once the block ends)


def test_a_worker_killed_mid_sweep_changes_nothing(cli: Any, cluster: Any) -> None:
    """A third worker joins; once it runs a piece, it is killed: Dask runs its pieces again elsewhere,
    and the figures are those of one process."""
    from validator.tools.cluster import connected

    argv = ("balance", RACE, "--games", "60", "--rounds", "25", "--player", "still", "--format", "json")
    address = cluster.address
    victim = cluster.add_worker("victim")
    cluster.wait_for_workers(3)
    result: dict[str, Any] = {}
    run = threading.Thread(target=lambda: result.update(r=cli(*argv, "--cluster", address)))
    run.start()
    killed_while_running = False
    with connected(address, timeout=30) as client:
        deadline = time.monotonic() + 60
        while run.is_alive() and time.monotonic() < deadline:
            busy = {w for w, keys in client.processing().items() if keys}
            mine = [w for w, info in client.scheduler_info()["workers"].items() if info.get("name") == "victim"]
            if mine and mine[0] in busy:
                os.kill(victim.pid, signal.SIGKILL)
                killed_while_running = run.is_alive()
                break
            time.sleep(0.01)
    run.join(timeout=120)
    assert killed_while_running, "the sweep ended before the worker could be killed"
    alone = cli(*argv, "--jobs", "1")
    assert result["r"].code == alone.code == 0 and result["r"].out == alone.out
    assert json.loads(alone.out)["at_limit"] == 60


def test_a_local_cluster_ends_each_process_by_its_own_leave() -> None:
    """The workers are stopped while their scheduler still answers them, then the scheduler: none of
    them waits for a scheduler already gone until it is killed."""
    from validator.tools.cluster import local_cluster

    with local_cluster(2) as c:
        assert len(c.processes) == 3
    assert [p.returncode for p in c.processes] == [0, 0, 0]


def _new_threads(before: list[threading.Thread]) -> list[str]:
    return [t.name for t in threading.enumerate() if t not in before and t.name != "tqdm_monitor"]


def test_a_sweep_on_a_cluster_leaves_no_thread_running(cli: Any, cluster: Any) -> None:
    """The client's event loop ends with the sweep: a program that ran a sweep on a cluster has no
    thread of it left, and ends at once (tqdm's monitor, a thread of the progress bar's, is not Dask's)."""
    before = threading.enumerate()
    r = cli("balance", RACE, "--games", "4", "--cluster", cluster.address)
    assert r.code == 0 and r.out.startswith("4 games of")
    assert _new_threads(before) == []


def test_no_cluster_to_reach_is_a_usage_error(cli: Any, monkeypatch: Any) -> None:
    from validator.tools import cluster

    # Dask tries a refused address again until the client's timeout (10 s): 1 s meets the same refusal
    real = cluster.Client
    monkeypatch.setattr(cluster, "Client", lambda *args, **kwargs: real(*args, **{**kwargs, "timeout": 1}))
    before = threading.enumerate()
    r = cli("balance", RACE, "--games", "2", "--cluster", "tcp://127.0.0.1:9")
    assert r.code == 2 and "cannot reach the Dask scheduler at `tcp://127.0.0.1:9`" in r.err
    assert _new_threads(before) == []  # (the loop distributed's client starts is not stopped when it fails)


@pytest.mark.parametrize("address", ["nope", "ftp://127.0.0.1:9"], ids=["no-port", "unknown-scheme"])
@pytest.mark.parametrize("how", ["option", "environment"])
def test_an_address_that_is_no_address_is_a_usage_error(cli: Any, monkeypatch: Any, address: str, how: str) -> None:
    if how == "environment":
        monkeypatch.setenv("RULEVAL_CLUSTER", address)
    r = cli("balance", RACE, "--games", "2", *(["--cluster", address] if how == "option" else []))
    assert r.code == 2 and f"`{address}` (--cluster or RULEVAL_CLUSTER) is not the address" in r.err, (r.code, r.err)
    assert "I001" not in r.err


def test_pieces_keep_their_order_whatever_the_split() -> None:
    assert [list(r) for r in sweep._chunks(10, 1)] == [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    assert [i for r in sweep._chunks(103, 7) for i in r] == list(range(103))
    assert sweep._chunks(0, 4) == []


def _dies_once(rulesets: list[Any], item: tuple[str, int]) -> int:
    """A piece whose worker process dies the first time it meets item 5 (a marker file says so)."""
    marker, i = item
    if i == 5 and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return i * i


def _interrupted_at_3(rulesets: list[Any], i: int) -> int:
    if i == 3:
        raise KeyboardInterrupt
    return i


def test_a_pool_worker_that_dies_has_its_pieces_run_again(tmp_path: Path) -> None:
    marker = str(tmp_path / "died")
    sw = sweep.run_sweep(_dies_once, [], [(marker, i) for i in range(20)], jobs=2)
    assert os.path.exists(marker) and sw.redone > 0
    assert sw.results == [i * i for i in range(20)] and not sw.interrupted


_WARMED: list[int] = []  # (what the first item of a warm sweep leaves in its process: a cache, say)


def _warmed(rulesets: list[Any], item: tuple[int, int, str]) -> tuple[int, int, bool]:
    """Item 0 leaves something in its process (slowly, so that the cold worker takes some items meanwhile);
    each item gives its square, the process it ran in and whether that process had what item 0 left.
    With a marker file named, the first process forked warm to take an item dies there (once)."""
    i, parent, marker = item
    time.sleep(0.3 if i == 0 else 0.03)
    if i == 0:
        _WARMED.append(os.getpid())
    elif marker and _WARMED and os.getpid() != parent and not os.path.exists(marker):
        Path(marker).touch()
        os._exit(1)
    return i * i, os.getpid(), bool(_WARMED)


# (the warm sweep forks; whether a worker is left is seen through /proc)
warm_here = pytest.mark.skipif(not sweep._forks() or not Path("/proc/self/stat").exists(),
                               reason="a warm sweep needs fork, and its tests find workers through /proc (Linux)")


def _no_child_left(before: list[int]) -> bool:
    """Whether this process has no child now but those it had ``before`` (a Dask cluster's, say)."""
    return not set(_children(os.getpid())) - set(before)


@warm_here
@pytest.mark.parametrize("jobs", [2, 3])
def test_a_warm_sweep_gives_the_results_of_one_process_in_order(jobs: int, monkeypatch: Any) -> None:
    """A warm sweep (``run_sweep(..., warm=True)``, what `check` runs): this process runs item 0, a cold
    worker takes items from the end meanwhile, then workers forked from this process take the rest with
    it: they have what item 0 left (as a cache a check fills would be), the cold one had not. The
    results are those of one process, in order."""
    before = _children(os.getpid())
    monkeypatch.setattr(sys.modules[__name__], "_WARMED", [])
    items = [(i, os.getpid(), "") for i in range(24)]
    sw = sweep.run_sweep(_warmed, [], items, jobs=jobs, warm=True)
    assert [r[0] for r in sw.results] == [i * i for i in range(24)] and not sw.interrupted and sw.redone == 0
    assert sw.executor == f"{jobs} processes"
    cold = [i for i, (_, _, warmed) in enumerate(sw.results) if not warmed]
    assert cold and cold == list(range(24 - len(cold), 24)), cold  # (the cold worker's: from the end)
    pids = {pid for _, pid, _ in sw.results}
    warm_workers = {pid for _, pid, warmed in sw.results if warmed} - {os.getpid()}
    assert os.getpid() in pids and len(warm_workers) == jobs - 1 and len(pids) == jobs + 1
    assert _no_child_left(before)


@warm_here
def test_a_warm_sweep_whose_worker_dies_has_the_rest_run_again(tmp_path: Path, monkeypatch: Any) -> None:
    before = _children(os.getpid())
    monkeypatch.setattr(sys.modules[__name__], "_WARMED", [])
    marker = str(tmp_path / "died")
    sw = sweep.run_sweep(_warmed, [], [(i, os.getpid(), marker) for i in range(24)], jobs=2, warm=True)
    assert os.path.exists(marker) and sw.redone == 1
    assert [r[0] for r in sw.results] == [i * i for i in range(24)] and not sw.interrupted
    assert _no_child_left(before)


def test_a_warm_sweep_where_the_system_cannot_fork_runs_on_a_pool(monkeypatch: Any) -> None:
    monkeypatch.setattr(sweep, "_forks", lambda: False)
    monkeypatch.setattr(sweep, "_on_warm_pool", None)  # (not to be called)
    sw = sweep.run_sweep(_fails_last, [], list(range(9)), jobs=2, warm=True)
    assert sw.results == list(range(9)) and sw.executor == "2 processes"


def _fails_last(rulesets: list[Any], i: int) -> int:
    time.sleep(0.1 if i == 0 else 0.01)
    if i == 9:
        raise ValueError("the last item fails")
    return i


@warm_here
def test_an_error_in_a_warm_sweeps_worker_is_raised_here() -> None:
    before = _children(os.getpid())
    with pytest.raises(ValueError, match="the last item fails"):
        sweep.run_sweep(_fails_last, [], list(range(10)), jobs=2, warm=True)
    assert _no_child_left(before)


def _interrupted_here(rulesets: list[Any], item: tuple[int, int, int]) -> int:
    i, parent, at = item
    time.sleep(0.05)
    if os.getpid() == parent and i >= at:
        raise KeyboardInterrupt
    return i


@warm_here
@pytest.mark.parametrize("at", [0, 3])
def test_ctrl_c_stops_a_warm_sweep_with_the_results_so_far_and_no_worker(at: int) -> None:
    before = _children(os.getpid())
    sw = sweep.run_sweep(_interrupted_here, [], [(i, os.getpid(), at) for i in range(30)], jobs=2, warm=True)
    assert sw.interrupted and sw.results == list(range(len(sw.results))) and len(sw.results) < 30
    assert _no_child_left(before)


def test_ctrl_c_stops_the_sweep_with_the_results_so_far() -> None:
    sw = sweep.run_sweep(_interrupted_at_3, [], list(range(6)), jobs=1)
    assert sw.interrupted and sw.results == [0, 1, 2]


def test_ctrl_c_during_balance_prints_the_figures_of_the_games_played(cli: Any, monkeypatch: Any) -> None:
    from validator.tools import balance

    real = balance.play_one

    def stop_at_game_2(rulesets: list[Any], item: Any) -> Any:
        if item[0] == 2:
            raise KeyboardInterrupt
        return real(rulesets, item)

    monkeypatch.setattr(balance, "play_one", stop_at_game_2)
    r = cli("balance", RACE, "--games", "6", "--jobs", "1")
    assert r.code == 130 and r.out.startswith("2 games of") and "interrupted" in r.err


def _on_a_terminal(argv: list[str], columns: int = 100) -> tuple[subprocess.Popen[bytes], int]:
    """`ruleval ARGV` in a process of its own session (as a shell runs a job in the foreground), its
    standard error a terminal of ``columns`` (a pseudo-terminal whose other end is returned), its
    output a pipe."""
    env = {k: v for k, v in os.environ.items() if k != "RULEVAL_NO_PROGRESS"}
    import fcntl
    import struct
    import termios

    leader, follower = os.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    # (SIGINT as a shell's foreground job has it: a test run started in the background ignores it, and
    # its children would inherit that and never see a Ctrl-C)
    proc = subprocess.Popen([sys.executable, "-m", "validator", *argv], cwd=str(REPO), env={**env, "TERM": "xterm"},
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    os.close(follower)
    return proc, leader


def _read_terminal(leader: int, until: Any = None, timeout: float = 120) -> str:
    """What the terminal showed: until ``until(text)`` holds, or until the other end is closed."""
    import select

    seen = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if until is not None and until(seen.decode("utf-8", "replace")):
            break
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # (Linux: the other end is closed)
                break
            if not chunk:
                break
            seen += chunk
    return seen.decode("utf-8", "replace")


def _bar_counts(text: str, total: int) -> list[int]:
    return [int(n) for n in re.findall(rf"games:\s+\d+%\|[^|\r\n]*\|\s*(\d+)/{total}\b", text)]


@pytest.mark.parametrize("columns", [100, 0])
def test_a_sweep_shows_a_progress_bar_on_a_terminal_only(columns: int) -> None:
    """On a terminal, a bar of the games played, drawn at the start and as pieces end (on a terminal
    that says it has no width, as some consoles do, one of 80 columns); on a pipe, nothing."""
    # 200 games: 8 pieces of 25, each a good part of a second, so that the bar is drawn as they end (tqdm
    # draws at most every 0.1 s) without playing four times as many
    argv = ["balance", RACE, "--games", "200", "--rounds", "25", "--player", "still", "--jobs", "2"]
    proc, leader = _on_a_terminal(argv, columns)
    try:
        shown = _read_terminal(leader)
        out, _ = proc.communicate(timeout=120)
    finally:
        os.close(leader)
    assert proc.returncode == 0 and "Traceback" not in shown
    counts = _bar_counts(shown, 200)
    assert counts and counts[0] == 0 and max(counts) > 0, shown  # drawn at the start, then as pieces end
    assert max(len(line) for line in re.split(r"[\r\n]", shown)) <= (columns or 80)
    assert out.decode().startswith("200 games of") and "games:" not in out.decode()
    if columns == 0:
        return
    piped = subprocess.run([sys.executable, "-m", "validator", *argv[:3], "40", *argv[4:]], cwd=str(REPO),
                           capture_output=True, env={k: v for k, v in os.environ.items() if k != "RULEVAL_NO_PROGRESS"})
    assert piped.returncode == 0 and piped.stderr == b"" and piped.stdout.startswith(b"40 games of")


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry))
    return out


def _interrupted_on_a_terminal(args: list[str], until: Any, settle: float = 0.0) -> tuple[Any, bytes, str, list[int]]:
    """``ruleval ARGS`` on a terminal, sent a real SIGINT once its output satisfies ``until`` (its workers
    running then): the process, its standard output, what the terminal showed, and the workers still
    alive after it ended (``settle`` seconds later: a worker killed is reaped by its parent, gone once
    the parent itself has ended), which are killed so that a failed run leaves nothing behind."""
    proc, leader = _on_a_terminal(args)
    workers: list[int] = []
    out = b""
    try:
        shown = _read_terminal(leader, until=until)
        workers = _children(proc.pid)
        assert proc.poll() is None and workers, shown
        os.killpg(proc.pid, signal.SIGINT)
        out, _ = proc.communicate(timeout=60)
        shown += _read_terminal(leader, timeout=10)
    finally:
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        time.sleep(settle)
        left = [pid for pid in workers if Path(f"/proc/{pid}").exists()]
        for pid in left:  # (the workers outlive their parent)
            os.kill(pid, signal.SIGKILL)
    return proc, out, shown, left


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="finds the pool's workers through /proc (Linux)")
def test_ctrl_c_to_a_pool_sweep_prints_the_games_played_and_leaves_no_worker() -> None:
    """A real SIGINT, sent as a terminal's Ctrl-C is (to the foreground process group), while a pool of
    two workers plays: exit 130, the figures of the games played so far, no traceback, and the workers
    (in sessions of their own, which Ctrl-C does not reach) ended with the sweep."""
    total = 6000
    proc, out, shown, left = _interrupted_on_a_terminal(
        ["balance", RACE, "--games", str(total), "--rounds", "25", "--player", "still", "--jobs", "2"],
        lambda text: any(n > 0 for n in _bar_counts(text, total)))
    assert proc.returncode == 130, shown
    played = int(out.decode().split(" games of", 1)[0])
    assert 0 < played < total and "holdings at the start of each round" in out.decode()
    assert "interrupted" in shown and "Traceback" not in shown
    assert not left, left


@warm_here
def test_ctrl_c_to_a_check_on_processes_leaves_no_worker() -> None:
    """A real SIGINT (as ``test_ctrl_c_to_a_pool_sweep_...``) to a check of many rulesets on two
    processes (a warm sweep), once its bar counts a ruleset checked: it stops at once, exit 130,
    without a traceback, and its workers end with it."""
    folders = ["rulesets", "tests", "rulesets", "tests", "rulesets", "tests"]
    proc, _, shown, left = _interrupted_on_a_terminal(
        ["check", *folders, "--jobs", "2", "--no-cache"],
        lambda text: re.search(r"rulesets:\s+\d+%\|[^|]*\|\s*[1-9]", text), settle=0.2)
    assert proc.returncode == 130 and "Traceback" not in shown, shown
    assert not left, left


@pytest.mark.skipif(not hasattr(os, "register_at_fork") or not hasattr(signal, "pthread_sigmask"),
                    reason="simulates a Ctrl-C in a forked worker with os.register_at_fork (POSIX)")
@pytest.mark.parametrize("argv", [["check", RACE, ERRATA, "--no-cache"], ["check", str(REPO / "tests" / "maps"), "--no-cache"],
                                  ["balance", RACE, "--games", "8"]])
def test_a_ctrl_c_reaching_a_worker_as_it_is_forked_prints_nothing(argv: list[str]) -> None:
    """A worker is in the terminal's process group from its fork until it leads a session of its own, so a
    Ctrl-C can reach it before it ignores one (seen: an 'Exception ignored' traceback from one of the hooks
    a fork runs, printed on the terminal). Simulated: each forked process sends itself SIGINT at once; a
    warm sweep (`check`) and a pool (`balance`) on two processes print what they print without it."""
    probe = ("import os, signal, sys; from validator.tools.cli import main; "
             "os.register_at_fork(after_in_child=lambda: os.kill(os.getpid(), signal.SIGINT)) if sys.argv[1] == 'hit' else None; "
             "sys.exit(main(sys.argv[2:]))")
    env = {**os.environ, "RULEVAL_NO_CACHE": "1"}
    runs = [subprocess.run([sys.executable, "-c", probe, how, *argv, "--jobs", "2"], cwd=REPO, capture_output=True, text=True,
                           check=False, env=env, timeout=120) for how in ("hit", "calm")]
    hit, calm = runs
    assert "Traceback" not in hit.stderr and "Exception ignored" not in hit.stderr, hit.stderr
    assert (hit.returncode, hit.stdout, hit.stderr) == (calm.returncode, calm.stdout, calm.stderr)


def test_a_sweep_in_one_process_imports_no_pool() -> None:
    """The pool's modules (multiprocessing's, and concurrent.futures for a pool of the standard
    library) are imported when a pool runs, not with the sweep: `check --jobs 1` never needs them
    (some 37 M instructions, 5 % of a check whose cache is warm); a check on two processes (a warm
    sweep, ``sweep._on_warm_pool``) imports and runs multiprocessing's, and a sweep of games both."""
    probe = ("import sys; from validator.tools.cli import main; code = main(sys.argv[1:]); "
             "print(code, sorted(m for m in ('multiprocessing', 'concurrent.futures') if m in sys.modules))")
    one = subprocess.run([sys.executable, "-c", probe, "check", "rulesets/his", "--jobs", "1"], cwd=REPO,
                         capture_output=True, text=True, check=False)
    assert one.stdout.strip().splitlines()[-1] == "0 []", one.stdout + one.stderr
    two = subprocess.run([sys.executable, "-c", probe, "check", RACE, ERRATA, "--jobs", "2", "--no-cache"], cwd=REPO,
                         capture_output=True, text=True, check=False)
    assert two.stdout.strip().splitlines()[-1] == "0 ['multiprocessing']", two.stdout + two.stderr
    games = subprocess.run([sys.executable, "-c", probe.replace("code = main", "code = 0; main"), "balance", RACE,
                            "--games", "4", "--jobs", "2"], cwd=REPO, capture_output=True, text=True, check=False)
    assert games.stdout.strip().splitlines()[-1] == "0 ['concurrent.futures', 'multiprocessing']", games.stdout

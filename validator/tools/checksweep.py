"""``ruleval check`` on a sweep (``tools/sweep``): the rulesets ``api.check_paths`` found, each checked
on its own, in a pool of processes or on a Dask cluster, with the results of one process.

On this machine a worker reads each ruleset where it lies; the sweep is a warm one (``sweep._on_warm_pool``):
the first ruleset is checked here first, and the workers forked after it have what it left in this
process's caches (a base's parse, binding and code, which its variants share), while one worker forked at
once checks rulesets from the end of the list meanwhile. A cluster's workers cannot read this
disk, and what a ruleset reads is known only once it is loaded: so each ruleset's files are found
first, here, by the loader alone (``lang.loader.load``: it parses and binds, and reads every module,
data file, schema and catalogue the ruleset names, but checks nothing), and all of them are sent as
one tree of files (``sweep.files_source``), once per worker; each task names one ruleset of it,
checked in a private root laid out as the sender's (``sweep.laid_out``), with the paths shown as
here. A ruleset the loader cannot read through, or that names a file larger than any the loader
reads, is checked here instead.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, TextIO

from ..api import CheckedRuleset, checked, collector_paused, files_read, load_ruleset
from ..core import confine, deep
from ..lang.loader import MAX_DATA_BYTES, display_path, load
from .sweep import CLUSTER_ENV, files_source, laid_out, run_sweep

def check_file(rulesets: list[Any], item: tuple[str, bool]) -> CheckedRuleset:
    """A piece of ``check`` on this machine: one ruleset file, read where it lies."""
    path, use_cache = item
    with collector_paused():
        return checked(load_ruleset(path, use_cache=False, check_cache=use_cache))


def check_sent(rulesets: list[Any], entry: str) -> CheckedRuleset:
    """A piece of ``check`` on a cluster: the ruleset ``entry`` of the tree of files it was sent
    (``rulesets[0]``). The files it read are given relative to the tree; none when one lies outside
    it (a ruleset ruleval ships, read from the worker's own copy): such a result is not cached."""
    with laid_out(rulesets[0]) as top, collector_paused():
        with confine.recording() as seen:  # (the bytes it was sent, which the result is kept under)
            rs = load_ruleset(top / entry, use_cache=False, check_cache=False)
        done = checked(rs)
        read = [os.path.relpath(f, top) for f in rs.files]
        digests = {os.path.relpath(f, top): h for f, h in seen.digests().items()}
    inside = not any(r == ".." or r.startswith(".." + os.sep) for r in read)
    return replace(done, files=tuple(read) if inside else (), read=digests)  # (no files: not kept)


def on_sweep(jobs: int, cluster: str | None = None, err: TextIO | None = None) -> Callable[[list[Path], bool], dict[Path, Any]]:
    """What ``api.check_paths`` is given as ``check``: the rulesets checked in ``jobs`` processes, or on
    the Dask cluster at ``cluster`` (else ``$RULEVAL_CLUSTER``); ``err``: where a progress bar goes.
    Ctrl-C stops it (``KeyboardInterrupt``)."""
    cluster = cluster if cluster is not None else os.environ.get(CLUSTER_ENV) or None

    def check(files: list[Path], use_cache: bool) -> dict[Path, Any]:
        if not cluster and (jobs <= 1 or len(files) <= 1):
            return {f: checked(load_ruleset(f, check_cache=use_cache)) for f in files}
        out: dict[Path, Any] = {}
        here: list[Path] = []
        if cluster:
            read: dict[Path, list[str]] = {}
            for f in files:
                try:
                    paths = sorted(files_read(deep.call(load, f)))
                    # (a larger file the loader refuses, here as there: it is not worth sending)
                    if all(os.path.getsize(p) <= MAX_DATA_BYTES for p in paths):
                        read[f] = paths
                except (ValueError, OverflowError, RecursionError, OSError):
                    pass
            here = [f for f in files if f not in read]
            sent = [f for f in files if f in read]
            if not sent:  # (none worth sending: each is checked here, and nothing asks the cluster)
                return {f: checked(load_ruleset(f, check_cache=use_cache)) for f in files}
            tree, top = files_source(sorted({p for ps in read.values() for p in ps} | {str(f.resolve()) for f in sent}))
            sweep = run_sweep(check_sent, [tree], [os.path.relpath(f.resolve(), top) for f in sent], cluster=cluster,
                              what="rulesets", err=err)
            for f, r in zip(sent, sweep.results):  # (the files it read, as this machine names them)
                out[f] = replace(r, path=display_path(f), files=tuple(str(top / p) for p in r.files),
                                 read={str(top / p): h for p, h in r.read.items()})
        else:
            sweep = run_sweep(check_file, [], [(str(f), use_cache) for f in files], jobs=jobs,
                              cluster="", what="rulesets", err=err, warm=True)  # ("": not $RULEVAL_CLUSTER)
            out.update(zip(files, sweep.results))
        if sweep.interrupted:
            raise KeyboardInterrupt
        for f in here:
            out[f] = checked(load_ruleset(f, check_cache=use_cache))
        return out

    return check

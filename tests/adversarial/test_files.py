"""Issue 24, the file-system rows: what an untrusted ruleset, test case or cache may make ruleval read,
fetch, load or write.

Every path an input names is confined to its root (symlinks followed, special files refused, sizes
bounded); JSON Schema `$ref`s never reach the network; YAML aliases have a budget; caches are private,
signed and verified; files ruleval writes are replaced whole or not at all. Each test runs the CLI in a
capped subprocess (`hostile`), asserts the documented diagnostic code and that the secret beside the root
never appears in the output.
"""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import marshal
import os
import pickle
import resource
import socket
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from validator.core.blobcache import MAC_BYTES

from .conftest import SECRET, run_capped

RETURNS_STATE = 'input st: any at ""\nquery main = st\n'


def _codes(text: str) -> set[str]:
    import re

    return set(re.findall(r"(?:error|warning)\[([A-Z]\d{3})\]", text)) | set(re.findall(r'"code": "([A-Z]\d{3})"', text))


def _cases(root: Path, body: str, name: str = "cases.yaml") -> Path:
    (root / "main.rules").write_text(RETURNS_STATE)
    path = root / name
    path.write_text(body)
    return path


# ------------------------------------------------------------------ row 1: paths a test case names


@pytest.mark.parametrize("ref", ["../secret.json", "ABSOLUTE"])
def test_case_state_file_outside_the_root_is_refused(hostile, repo: Path, ref: str) -> None:
    ref = str(repo.parent / "secret.json") if ref == "ABSOLUTE" else ref
    _cases(repo, f"ruleset: main.rules\ncases:\n  - id: leak\n    state_file: {ref}\n    expect: 0\n")
    r = hostile("test", "cases.yaml", cwd=repo)
    assert "S005" in _codes(r.text), r.text
    assert "cases.yaml:4:" in r.err  # the line of `state_file`
    assert SECRET not in r.text and r.code == 3


@pytest.mark.parametrize("kind", ["dev_zero", "link_to_dev_zero", "fifo"])
def test_case_state_file_that_is_no_regular_file_is_refused_quickly(hostile, repo: Path, kind: str) -> None:
    name = "/dev/zero" if kind == "dev_zero" else "state.json"
    if kind == "link_to_dev_zero":
        (repo / "state.json").symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(repo / "state.json")  # opened for reading, it would wait for a writer forever
    _cases(repo, f"ruleset: main.rules\ncases:\n  - id: big\n    state_file: {name}\n    expect: 0\n")
    r = hostile("test", "cases.yaml", cwd=repo, seconds=15)
    assert "S005" in _codes(r.text), r.text
    assert r.code == 3


@pytest.mark.parametrize("where", ["file", "case"])
def test_case_ruleset_outside_the_root_is_refused(hostile, repo: Path, where: str) -> None:
    # a syntax error in a foreign file would be shown as a source snippet
    (repo.parent / "secret.rules").write_text(f"query main = {SECRET} {SECRET}\n")
    if where == "file":
        body = "ruleset: ../secret.rules\ncases:\n  - id: a\n    state: {}\n    expect: 0\n"
    else:
        body = "ruleset: main.rules\ncases:\n  - id: a\n    ruleset: ../secret.rules\n    state: {}\n    expect: 0\n"
    _cases(repo, body)
    r = hostile("test", "cases.yaml", cwd=repo)
    assert "S005" in _codes(r.text), r.text
    assert SECRET not in r.text and r.code == 3


def test_case_ruleset_that_is_a_device_is_refused(hostile, repo: Path) -> None:
    _cases(repo, "ruleset: /dev/zero\ncases:\n  - id: a\n    state: {}\n    expect: 0\n")
    r = hostile("test", "cases.yaml", cwd=repo, seconds=15)
    assert "S005" in _codes(r.text), r.text


def test_a_symlinked_case_file_in_a_walked_folder_is_refused(hostile, repo: Path) -> None:
    (repo.parent / "secret.yaml").write_text(f"ruleset: main.rules\ncases:\n  - id: {SECRET}\n    state: {{}}\n"
                                             "    expect: 1\n")
    (repo / "main.rules").write_text(RETURNS_STATE)
    (repo / "cases").mkdir()
    (repo / "cases" / "ok.yaml").write_text("ruleset: ../main.rules\ncases:\n  - id: a\n    state: {}\n    expect: {}\n")
    (repo / "cases" / "evil.yaml").symlink_to(repo.parent / "secret.yaml")
    r = hostile("test", "cases", cwd=repo)
    assert "S005" in _codes(r.text), r.text
    assert SECRET not in r.text and r.code == 3


def test_failure_messages_are_short(hostile, repo: Path) -> None:
    long = "x" * 3000
    (repo / "state.json").write_text(json.dumps({"pad": "y" * 3000}))
    _cases(repo, f"ruleset: main.rules\ncases:\n  - id: a\n    state_file: state.json\n    expect: {long}\n"
                 f"  - id: b\n    state_file: state.json\n    expect: {{pad: {long}}}\n")
    r = hostile("test", "cases.yaml", "--format", "json", cwd=repo)
    messages = [c["message"] for c in json.loads(r.out)["cases"]]
    assert len(messages) == 2 and all(0 < len(m) <= 300 for m in messages), messages


# ------------------------------------------------------------------ row 2: entry files found by walking a folder


def test_a_symlink_to_proc_environ_in_a_checked_folder_is_refused(hostile, repo: Path) -> None:
    (repo / "rulesets").mkdir()
    (repo / "rulesets" / "ok.rules").write_text("query main = 1\n")
    (repo / "rulesets" / "env.rules").symlink_to("/proc/self/environ")
    r = hostile("check", "rulesets", cwd=repo, env={"RULEVAL_TEST_TOKEN": SECRET})
    assert "C007" in _codes(r.text), r.text
    assert SECRET not in r.text and r.code == 1


def test_a_symlink_to_a_foreign_ruleset_in_a_checked_folder_is_refused(hostile, repo: Path) -> None:
    (repo.parent / "secret.rules").write_text(f"query main = {SECRET} {SECRET}\n")
    (repo / "rulesets").mkdir()
    (repo / "rulesets" / "a.rules").symlink_to(repo.parent / "secret.rules")
    (repo / "lib").mkdir()  # a link that stays inside the root is followed as before
    (repo / "lib" / "real.rules").write_text("query main = 1\n")
    (repo / "rulesets" / "b.rules").symlink_to(repo / "lib" / "real.rules")
    r = hostile("check", "rulesets", "--format", "json", cwd=repo)
    assert [(d["code"], d["file"]) for d in json.loads(r.out)] == [("C007", "rulesets/a.rules")], r.text
    assert SECRET not in r.text and r.code == 1


def test_special_files_in_a_checked_folder_are_refused(hostile, repo: Path) -> None:
    (repo / "rulesets").mkdir()
    os.mkfifo(repo / "rulesets" / "pipe.rules")
    (repo / "rulesets" / "inside.rules").symlink_to(repo / "rulesets" / "pipe.rules")
    r = hostile("check", "rulesets", cwd=repo, seconds=15)
    assert "C024" in _codes(r.text), r.text
    assert r.code == 1


def test_fmt_does_not_write_through_a_symlink_found_by_walking(hostile, repo: Path) -> None:
    outside = repo.parent / "outside.rules"
    outside.write_text("query   main   =   1\n")
    (repo / "rulesets").mkdir()
    (repo / "rulesets" / "x.rules").symlink_to(outside)
    r = hostile("fmt", "-w", "rulesets", cwd=repo)
    assert outside.read_text() == "query   main   =   1\n"
    assert "C007" in _codes(r.text), r.text


# ------------------------------------------------------------------ paths a ruleset names


@pytest.mark.parametrize("what", ["import_fifo", "clauses_fifo", "schema_fifo", "import_dir"])
def test_a_ruleset_naming_a_special_file_in_its_root_gets_c024(hostile, repo: Path, what: str) -> None:
    if what == "import_dir":
        (repo / "d.yaml").mkdir()
    else:
        os.mkfifo(repo / "d.yaml")
    directive = {"import_fifo": 'import "d.yaml" as d\nquery main = d\n', "import_dir": 'import "d.yaml" as d\nquery main = d\n',
                 "clauses_fifo": 'clauses "d.yaml"\nquery main = 1\n', "schema_fifo": 'schema "d.yaml"\nquery main = 1\n'}[what]
    (repo / "main.rules").write_text(directive)
    r = hostile("check", "main.rules", cwd=repo, seconds=15)
    assert "C024" in _codes(r.text), r.text
    assert r.code == 1


# ------------------------------------------------------------------ row 3: JSON Schema $ref


class _Recorder(http.server.BaseHTTPRequestHandler):
    requests: list[str] = []

    def do_GET(self) -> None:  # noqa: N802 - the http.server protocol
        self.requests.append(self.path)
        body = b'{"type": "object"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def http_server() -> Iterator[tuple[str, list[str]]]:
    seen: list[str] = []
    handler = type("Handler", (_Recorder,), {"requests": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def silent_server() -> Iterator[tuple[str, socket.socket]]:
    """A port that accepts connections into its backlog and never answers."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", sock
    finally:
        sock.close()


def _schema_root(repo: Path, schema: dict[str, Any]) -> None:
    (repo / "schema.json").write_text(json.dumps(schema))
    (repo / "main.rules").write_text('schema "schema.json"\nquery main = 1\n')


@pytest.mark.parametrize("command", ["check", "run"])
def test_an_http_ref_is_a_diagnostic_and_never_a_request(hostile, repo: Path, http_server, command: str) -> None:
    url, seen = http_server
    _schema_root(repo, {"type": "object", "properties": {"units": {"$ref": f"{url}/x.json"}}})
    argv = ["check", "main.rules"] if command == "check" else ["run", "--format", "json", "main.rules", "--state", "empty.json"]
    r = hostile(*argv, cwd=repo)
    assert "C025" in _codes(r.text), r.text
    assert seen == [] and r.code == 1


def test_an_id_that_moves_relative_refs_to_the_network_is_refused(hostile, repo: Path, http_server) -> None:
    url, seen = http_server
    _schema_root(repo, {"$id": f"{url}/base/", "type": "object", "properties": {"u": {"$ref": "x.json"}}})
    (repo / "state.json").write_text('{"u": 1}')
    r = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo)
    assert "C025" in _codes(r.text), r.text
    assert seen == []


def test_a_server_that_never_answers_hangs_nothing(hostile, repo: Path, silent_server) -> None:
    url, sock = silent_server
    _schema_root(repo, {"type": "object", "properties": {"u": {"$ref": f"{url}/x.json"}}})
    (repo / "state.json").write_text('{"u": 1}')
    r = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo, seconds=15)
    assert "C025" in _codes(r.text), r.text
    sock.setblocking(False)
    with pytest.raises(BlockingIOError):
        sock.accept()  # nobody even connected


@pytest.mark.parametrize("ref", ["file:///dev/zero", "SECRET_URI", "../secret.json", "/etc/passwd"])
def test_a_ref_to_a_file_outside_the_root_is_refused(hostile, repo: Path, ref: str) -> None:
    if ref == "SECRET_URI":
        ref = (repo.parent / "secret.json").as_uri()
    _schema_root(repo, {"type": "object", "properties": {"u": {"$ref": ref}}})
    (repo / "state.json").write_text('{"u": 1}')
    r = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo, seconds=15)
    assert "C025" in _codes(r.text), r.text
    assert SECRET not in r.text and r.code == 1


def test_a_relative_ref_inside_the_root_is_followed(hostile, repo: Path) -> None:
    (repo / "defs").mkdir()
    (repo / "defs" / "units.json").write_text('{"type": "array", "items": {"$ref": "unit.json"}}')
    (repo / "defs" / "unit.json").write_text('{"type": "string"}')
    _schema_root(repo, {"type": "object", "properties": {"units": {"$ref": "defs/units.json"}}})
    (repo / "state.json").write_text('{"units": ["a", 3]}')
    assert hostile("check", "main.rules", cwd=repo).code == 0
    r = hostile("run", "--format", "json", "main.rules", "--state", "state.json", cwd=repo)
    assert r.code == 3 and "S002" in _codes(r.text) and '"/units/1"' in r.out, r.text


# ------------------------------------------------------------------ row 4: Lark's pickle cache


def _lark_cache_name(folder: Path) -> str:
    """The file Lark's `cache=True` would use for ruleval's grammar, as Lark names it."""
    from lark import Lark

    from validator.lang.syntax import _grammar_text

    saved = tempfile.tempdir
    tempfile.tempdir = str(folder)
    try:
        Lark(_grammar_text(), parser="lalr", strict=True, propagate_positions=True, maybe_placeholders=True, cache=True)
    finally:
        tempfile.tempdir = saved
    (made,) = [p for p in folder.iterdir() if p.name.startswith(".lark")]
    made.unlink()
    return made.name


class _Planted:
    def __init__(self, marker: str):
        self.marker = marker

    def __reduce__(self) -> Any:  # unpickling this creates the marker file: code run from the cache
        return (open, (self.marker, "w"))


def test_a_cold_check_writes_nothing_to_the_temp_folder(hostile, repo: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    (repo / "bad.rules").write_text("query main = = 1\n")  # a syntax error: Lark itself reports it
    r = hostile("check", "bad.rules", cwd=repo, env={"TMPDIR": str(tmp)})
    assert "P001" in _codes(r.text)
    assert list(tmp.iterdir()) == []


def test_a_planted_lark_pickle_is_never_loaded(hostile, repo: Path, tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    name = _lark_cache_name(tmp)
    marker = tmp_path / "pwned"
    digest = name.split("_")[-3]
    (tmp / name).write_bytes(digest.encode() + b"\n" + pickle.dumps(_Planted(str(marker))))
    (repo / "bad.rules").write_text("query main = = 1\n")
    r = hostile("check", "bad.rules", cwd=repo, env={"TMPDIR": str(tmp)})
    assert "P001" in _codes(r.text)
    assert not marker.exists(), "a pickle planted in the temp folder was loaded"


# ------------------------------------------------------------------ row 6: YAML alias bombs


def _bomb(levels: int = 10, width: int = 10, indent: str = "") -> str:
    lines = [f"{indent}a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, levels):
        lines.append(f"{indent}a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("where", ["clauses", "data", "schema"])
def test_an_alias_bomb_in_a_ruleset_file_is_refused_quickly(hostile, repo: Path, where: str) -> None:
    bomb = _bomb()
    assert len(bomb) < 600
    if where == "clauses":
        (repo / "c.yaml").write_text("clauses:\n" + _bomb(indent="  "))
        (repo / "main.rules").write_text('clauses "c.yaml"\nquery main = 1\n')
        code = "C008"
    elif where == "data":
        (repo / "c.yaml").write_text(bomb)
        (repo / "main.rules").write_text('import "c.yaml" as d\nquery main = d\n')
        code = "C008"
    else:
        (repo / "c.yaml").write_text("type: object\n" + "x-pad:\n" + _bomb(indent="  "))
        (repo / "main.rules").write_text('schema "c.yaml"\nquery main = 1\n')
        code = "C015"
    r = hostile("check", "main.rules", cwd=repo, seconds=15)
    assert code in _codes(r.text), r.text
    assert "c.yaml:" in r.err and "alias" in r.err  # located at an alias of the file
    assert r.code == 1


def test_an_alias_bomb_in_a_test_case_is_refused_quickly(hostile, repo: Path) -> None:
    body = "ruleset: main.rules\npad:\n" + _bomb(indent="  ") + "cases:\n  - id: a\n    state: *a9\n    expect: 0\n"
    _cases(repo, body)
    r = hostile("test", "cases.yaml", cwd=repo, seconds=15)
    assert "S004" in _codes(r.text), r.text
    assert "alias" in r.err and r.code == 3


def test_a_recursive_alias_is_refused(hostile, repo: Path) -> None:
    (repo / "d.yaml").write_text("a: &a [1, *a]\n")
    (repo / "main.rules").write_text('import "d.yaml" as d\nquery main = d\n')
    r = hostile("check", "main.rules", cwd=repo, seconds=15)
    assert "C008" in _codes(r.text), r.text


def test_a_bomb_through_merge_keys_is_refused(hostile, repo: Path) -> None:
    lines = ["b0: &b0 {k0: [x, x, x, x, x, x, x, x, x, x]}"]
    for i in range(1, 12):
        lines.append(f"b{i}: &b{i} {{" + ", ".join(f"k{j}: *b{i - 1}" for j in range(10)) + "}")
    (repo / "d.yaml").write_text("\n".join(lines) + "\n")
    (repo / "main.rules").write_text('import "d.yaml" as d\nquery main = d\n')
    r = hostile("check", "main.rules", cwd=repo, seconds=15)
    assert "C008" in _codes(r.text), r.text


# ------------------------------------------------------------------ row 11: caches


def _entries(cache: Path) -> list[Path]:
    """The check results' entries (a load keeps its checker's findings in entries of another kind)."""
    return sorted(p for p in cache.glob("*.json")
                  if _body(json.loads(p.read_text())).get("kind", "check") == "check")


def _body(doc: dict[str, Any]) -> dict[str, Any]:
    return doc["body"] if "body" in doc else doc  # the entry's content, signed or not


def test_a_check_cache_entry_with_blanked_diagnostics_is_not_trusted(hostile, repo: Path, tmp_path: Path) -> None:
    (repo / "bad.rules").write_text("query main = undefined_name\n")
    assert "C001" in _codes(hostile("check", "bad.rules", cwd=repo).err)
    (entry,) = _entries(tmp_path / "_cache")
    doc = json.loads(entry.read_text())
    _body(doc)["diagnostics"] = []
    entry.write_text(json.dumps(doc))
    r = hostile("check", "bad.rules", cwd=repo)
    assert "C001" in _codes(r.text) and r.code == 1, r.text


def test_a_check_cache_entry_pointing_at_dev_zero_is_not_followed(hostile, repo: Path, tmp_path: Path) -> None:
    (repo / "bad.rules").write_text("query main = undefined_name\n")
    hostile("check", "bad.rules", cwd=repo)
    (entry,) = _entries(tmp_path / "_cache")
    doc = json.loads(entry.read_text())
    _body(doc)["files"] = {"/dev/zero": "0" * 64, **_body(doc)["files"]}
    entry.write_text(json.dumps(doc))
    r = hostile("check", "bad.rules", cwd=repo, seconds=15)
    assert "C001" in _codes(r.text), r.text


def _sign(cache: Path, body: dict[str, Any]) -> str:
    key = (cache / "key").read_bytes()
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()
    return hmac.new(key, canonical, hashlib.sha256).hexdigest()


def test_a_signed_entry_still_reads_only_confined_files(hostile, repo: Path, tmp_path: Path) -> None:
    """Defence in depth: even an entry signed with the user's key never makes ruleval read a file outside
    the ruleset's root, nor show its text."""
    (repo / "bad.rules").write_text("query main = undefined_name\n")
    hostile("check", "bad.rules", cwd=repo)
    cache = tmp_path / "_cache"
    (entry,) = _entries(cache)
    doc = json.loads(entry.read_text())
    body = doc["body"]
    secret = str(repo.parent / "secret.json")
    body["files"][secret] = hashlib.sha256((repo.parent / "secret.json").read_bytes()).hexdigest()
    body["diagnostics"] = [{**body["diagnostics"][0], "span": [secret, 1, 1, 1, 5]}]
    doc["mac"] = _sign(cache, body)
    entry.write_text(json.dumps(doc))
    r = hostile("check", "bad.rules", cwd=repo)
    assert SECRET not in r.text
    assert "C001" in _codes(r.text) and "bad.rules:1:" in r.err, r.text


def _with_ws(x: Any, pattern: str) -> Any:
    """The parser's tables (marshal data) with every pattern of the WS terminal replaced."""
    if isinstance(x, (list, tuple)):
        if len(x) == 2 and x[0] == "WS" and isinstance(x[1], str):
            return type(x)(["WS", pattern])
        return type(x)(_with_ws(v, pattern) for v in x)
    if isinstance(x, dict):
        return {k: (pattern if k == "WS" and isinstance(v, str) else _with_ws(v, pattern)) for k, v in x.items()}
    return x


def test_a_tampered_parser_table_is_rebuilt(hostile, repo: Path, tmp_path: Path) -> None:
    (repo / "ok.rules").write_text(" " * 40 + "\nquery main = 1\n")
    assert hostile("check", "ok.rules", "--no-cache", cwd=repo).code == 0
    (table,) = (tmp_path / "_cache" / "parser").iterdir()
    data = table.read_bytes()
    mac, tables = data[:MAC_BYTES], marshal.loads(data[MAC_BYTES:])
    # whitespace read by catastrophic backtracking: a check of the file above would never end
    slow = r"(?:[ \t\f\r\n]|[ \t\f\r\n])+(?=\x00)"
    tampered = _with_ws(tables, slow)
    assert tampered != tables
    table.write_bytes(mac + marshal.dumps(tampered))
    r = hostile("check", "ok.rules", "--no-cache", cwd=repo, seconds=15)
    assert r.code == 0 and "checked 1 ruleset" in r.err, r.text


def test_a_shared_cache_folder_is_not_used(hostile, repo: Path, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)  # anyone may write here: nothing may be cached, nor read back
    (repo / "ok.rules").write_text("query main = 1\n")
    r = hostile("check", "ok.rules", cwd=repo, env={"RULEVAL_CACHE_DIR": str(shared)})
    assert r.code == 0
    assert list(shared.iterdir()) == []


def test_the_cache_folder_is_private(hostile, repo: Path, tmp_path: Path) -> None:
    (repo / "ok.rules").write_text("query main = 1\n")
    assert hostile("check", "ok.rules", cwd=repo).code == 0
    cache = tmp_path / "_cache"
    assert (cache.stat().st_mode & 0o777) == 0o700
    assert ((cache / "parser").stat().st_mode & 0o777) == 0o700


# ------------------------------------------------------------------ row 13: writes that cannot lose data


@pytest.fixture
def file_size_limit(hostile, monkeypatch: pytest.MonkeyPatch):
    """`ulimit -f BYTES` for the CLI's process (besides the harness's memory cap)."""

    def set_limit(limit: int) -> None:
        cap = hostile.__globals__["_cap_memory"]

        def capped() -> None:  # pragma: no cover - runs in the child
            cap()
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

        monkeypatch.setitem(hostile.__globals__, "_cap_memory", capped)

    return set_limit


def test_fmt_w_that_cannot_write_leaves_the_file_whole(hostile, repo: Path, file_size_limit) -> None:
    text = "".join(f"def   v{i}   =   {i}\n" for i in range(400)) + "query main = v1\n"
    path = repo / "big.rules"
    path.write_text(text)
    file_size_limit(2000)
    r = hostile("fmt", "-w", "big.rules", cwd=repo, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert path.read_text() == text
    assert "U002" in _codes(r.text) and r.code == 2, r.text
    assert not [p for p in repo.iterdir() if p.name not in {"big.rules", "ruleval.toml", "empty.json"}]


RENDERS = ('input title: str at "/title"\n'
           'query render = {layout: "odd-q", title: title, hexes: [{label: "0101", text: title}]}\n'
           'query main = 1\n')


def test_render_that_cannot_write_leaves_the_old_picture(hostile, repo: Path, file_size_limit) -> None:
    (repo / "main.rules").write_text(RENDERS)
    (repo / "state.json").write_text(json.dumps({"title": "t" * 5000}))
    old = repo / "board.svg"
    old.write_text("<svg>old</svg>")
    file_size_limit(3000)
    r = hostile("render", "main.rules", "--state", "state.json", "-o", "board.svg", cwd=repo,
                env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert old.read_text() == "<svg>old</svg>"
    assert "U002" in _codes(r.text) and r.code == 2, r.text


def test_render_whose_text_cannot_be_written_leaves_the_old_picture(hostile, repo: Path) -> None:
    (repo / "main.rules").write_text(RENDERS)
    (repo / "state.json").write_text('{"title": "\\ud800"}')  # a lone surrogate: no UTF-8 for it
    old = repo / "board.svg"
    old.write_text("<svg>old</svg>")
    r = hostile("render", "main.rules", "--state", "state.json", "-o", "board.svg", cwd=repo)
    if r.code == 0:  # the text was made writable: a whole new picture
        assert old.read_text().rstrip().endswith("</svg>") and "old" not in old.read_text()
    else:
        assert old.read_text() == "<svg>old</svg>", r.text


UPDATE_CASES = """\
# the cases of the doubling rule
ruleset: main.rules
base: &base {n: 2}   # shared state
cases:
  - id: keeps
    state: *base
    expect: {value: 4}    # right already
  - id: stale
    state: {n: 5}
    expect:
      value: 9   # was 9 under the old rule
      note: kept
  - id: listed
    state: *base
    expect: {values: [1, 2]}
"""


def test_update_changes_only_the_stale_values(hostile, repo: Path) -> None:
    (repo / "main.rules").write_text('input n: int at "/n"\n'
                                     'query main = {value: n * 2, note: "kept", values: [n, n * 2]}\n')
    (repo / "cases.yaml").write_text(UPDATE_CASES)
    r = hostile("test", "cases.yaml", "--update", cwd=repo)
    assert "updated 2 expectations" in r.err, r.text
    want = UPDATE_CASES.replace("value: 9   # was 9", "value: 10   # was 9").replace("values: [1, 2]", "values: [2, 4]")
    assert (repo / "cases.yaml").read_text() == want
    assert hostile("test", "cases.yaml", cwd=repo).code == 0


def test_update_that_cannot_write_leaves_the_file_whole(hostile, repo: Path, file_size_limit) -> None:
    (repo / "main.rules").write_text('input n: int at "/n"\nquery main = {value: n * 2, note: "kept", values: [n, n * 2]}\n')
    padded = UPDATE_CASES + "".join(f"# padding line {i}\n" for i in range(200))
    (repo / "cases.yaml").write_text(padded)
    file_size_limit(2000)
    r = hostile("test", "cases.yaml", "--update", cwd=repo, env={"PYTHONDONTWRITEBYTECODE": "1"})
    assert (repo / "cases.yaml").read_text() == padded
    assert "U002" in _codes(r.text), r.text


def test_update_does_not_edit_a_shared_anchor(hostile, repo: Path) -> None:
    (repo / "main.rules").write_text('input n: int at "/n"\nquery main = {value: n * 2}\n')
    text = ("ruleset: main.rules\ncases:\n  - id: a\n    state: {n: 1}\n    expect: &same {value: 2}\n"
            "  - id: b\n    state: {n: 3}\n    expect: *same\n")
    (repo / "cases.yaml").write_text(text)
    r = hostile("test", "cases.yaml", "--update", cwd=repo)
    new = (repo / "cases.yaml").read_text()
    assert "expect: &same {value: 2}" in new  # case a still passes with it
    assert hostile("test", "cases.yaml", cwd=repo).code == 0, (r.text, new)


if sys.platform != "linux":  # pragma: no cover
    pytestmark = pytest.mark.skip(reason="FIFOs, /proc and /dev/zero as on Linux")


# ------------------------------------------------------------------ issue 45: replay folders, `bundled:`

PROJECT = Path(__file__).resolve().parents[2]
STANDARD = PROJECT / "rulesets" / "diplomacy" / "standard.rules"


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_replay_does_not_follow_a_symlink_out_of_the_record_folder(hostile, repo: Path, fmt: str) -> None:
    hostile("play", str(STANDARD), "--random-orders", "1", "--until", "S1902M", "--out", "record", cwd=repo)
    last = sorted((repo / "record").glob("*_S1902M.json"))[0]
    # a state-shaped file outside the folder, with a secret where the difference report would show it
    state = json.loads(last.read_text())
    state["phase"] = SECRET
    (repo.parent / "secret.json").write_text(json.dumps(state))
    last.unlink()
    last.symlink_to(repo.parent / "secret.json")
    r = hostile("replay", str(STANDARD), "record", "--format", fmt, cwd=repo)
    assert SECRET not in r.text, r.text
    assert "S001" in _codes(r.text) and "outside the record folder" in r.text and r.code == 3, r.text


def test_replay_follows_a_symlink_that_stays_in_the_record_folder(hostile, repo: Path) -> None:
    hostile("play", str(STANDARD), "--random-orders", "1", "--until", "S1902M", "--out", "record", cwd=repo)
    last = sorted((repo / "record").glob("*_S1902M.json"))[0]
    kept = repo / "record" / "kept.state"
    last.rename(kept)
    last.symlink_to(kept.name)
    r = hostile("replay", str(STANDARD), "record", cwd=repo)
    assert r.code == 0 and "every next state agrees" in r.out, r.text


@pytest.mark.parametrize("ref", ["bundled:../pyproject.toml", "bundled:../README.md", "bundled:../validator/__init__.py",
                                 "bundled:diplomacy/../../pyproject.toml"])
@pytest.mark.parametrize("how", ["extends", "import"])
def test_bundled_paths_stay_in_the_bundled_rulesets_and_schemas(hostile, repo: Path, ref: str, how: str) -> None:
    # an editable or source install's bundle is the checkout: `bundled:` must not reach past its
    # `rulesets/` and `schemas/` (the file's first line used to be shown in a P001)
    line = f'extends "{ref}"\n' if how == "extends" else f'import "{ref}" as stolen\nquery main = 1\n'
    (repo / "main.rules").write_text(line)
    r = hostile("check", "main.rules", "--format", "json", cwd=repo)
    assert [d["code"] for d in json.loads(r.out)] == ["C007"], r.text
    assert "bundled rulesets and schemas" in r.text and "build-system" not in r.text and r.code == 1, r.text


def test_bundled_paths_still_reach_the_bundled_rulesets_and_schemas(hostile, repo: Path) -> None:
    (repo / "main.rules").write_text('extends "bundled:diplomacy/standard.rules"\n')
    r = hostile("check", "main.rules", cwd=repo)
    assert r.code == 0, r.text


def test_the_language_servers_workspace_reads_only_regular_files_inside_it(repo: Path) -> None:
    # a rename walks the workspace and reads the rulesets that may write the name: a symlink to an
    # endless device ate memory and a FIFO hung the server; both are now skipped, and reads are bounded
    (repo / "main.rules").write_text("def x = 1\nquery main = x\n")
    (repo / "zero.rules").symlink_to("/dev/zero")
    (repo.parent / "outside.rules").write_text(f'extends "repo/main.rules"\nquery leak = x # {SECRET}\n')
    (repo / "out.rules").symlink_to(repo.parent / "outside.rules")
    os.mkfifo(repo / "fifo.rules")
    script = (
        "import sys, pathlib\n"
        "from validator.tools import lsp, symbols\n"
        f"root = pathlib.Path({str(repo)!r})\n"
        "found = sorted(p.name for p in symbols.ruleset_files_under(root))\n"
        "others = [lsp._other_index(root / n, 'x', {}) for n in ('zero.rules', 'fifo.rules')]\n"
        "print(found, others)\n")
    proc = run_capped([sys.executable, "-c", script], capture_output=True, text=True,
                      env={**os.environ, "PYTHONPATH": str(PROJECT)})
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.strip() == "['main.rules'] [None, None]", proc.stdout

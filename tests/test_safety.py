"""Rulesets are untrusted: no escaping the root, no unsafe YAML, no dynamic code, no file writes."""

from __future__ import annotations

import io
import json
import os
import pickle
import re
from pathlib import Path

import pytest

VALIDATOR = Path(__file__).resolve().parent.parent / "validator"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "a" / "b" / "root"
    r.mkdir(parents=True)
    (r / "ruleval.toml").write_text("")
    (r / "empty.json").write_text("{}")
    return r


def codes(cli, path: Path) -> set[str]:
    r = cli("check", "--format", "json", str(path))
    return {d["code"] for d in json.loads(r.out)}


def test_import_parent_path_is_c007(cli, root: Path) -> None:
    (root / "main.rules").write_text('import "../../etc/passwd" as x\nquery main = 1\n')
    assert "C007" in codes(cli, root / "main.rules")


def test_absolute_import_is_c007(cli, root: Path) -> None:
    (root / "main.rules").write_text('import "/etc/passwd" as x\nquery main = x\n')
    assert "C007" in codes(cli, root / "main.rules")


def test_symlink_out_of_root_is_c007(cli, root: Path) -> None:
    outside = root.parent / "secret.yaml"
    outside.write_text("key: value\n")
    (root / "inside.yaml").symlink_to(outside)
    (root / "main.rules").write_text('import "inside.yaml" as d\nquery main = d.key\n')
    found = codes(cli, root / "main.rules")
    assert "C007" in found


def test_symlink_inside_root_is_fine(cli, root: Path) -> None:
    (root / "real.yaml").write_text("key: 5\n")
    (root / "link.yaml").symlink_to(root / "real.yaml")
    (root / "main.rules").write_text('import "link.yaml" as d\nquery main = d.key\n')
    r = cli("run", "--format", "json", str(root / "main.rules"), "--state", str(root / "empty.json"))
    assert r.code == 0 and json.loads(r.out) == 5


@pytest.mark.parametrize("payload", [
    "x: !!python/object/apply:os.system ['touch pwned']\n",
    "x: !!python/object:builtins.dict {}\n",
    "x: !!python/name:os.system\n",
])
def test_unsafe_yaml_tags_rejected(cli, root: Path, payload: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(root)
    (root / "evil.yaml").write_text(payload)
    (root / "main.rules").write_text('import "evil.yaml" as d\nquery main = d\n')
    assert "C008" in codes(cli, root / "main.rules")
    assert not (root / "pwned").exists()


def test_unsafe_yaml_in_clause_catalogue(cli, root: Path) -> None:
    (root / "clauses.yaml").write_text("clauses: !!python/object/apply:os.getcwd []\n")
    (root / "main.rules").write_text('clauses "clauses.yaml"\nquery main = 1\n')
    assert "C008" in codes(cli, root / "main.rules")


def test_no_dynamic_code_in_validator() -> None:
    """No eval, exec, pickle or __import__ anywhere; Python's compile() only once, in backend.py (the
    fast backend, which compiles source it writes from the checked AST; see tests/test_differential.py).
    The one pickle is lang/astcache.py's signed entries, read by an unpickler that finds no global but the
    AST's classes (``_Reader``, tested below)."""
    pattern = re.compile(r"\b(eval|exec)\s*\(|\bpickle\b|(?<![\w.])(?<!def )compile\(|\b__import__\s*\("
                         r"|yaml\.load\(.*Loader=yaml\.Loader")
    offenders = []
    compiles = []
    for path in sorted(VALIDATOR.rglob("*.py")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("#", 1)[0]
            if pattern.search(code):
                if path.name == "backend.py" and re.fullmatch(r"\s*return compile\(source, .*", code):
                    compiles.append(n)
                elif path.relative_to(VALIDATOR).as_posix() == "lang/astcache.py" and "eval" not in code \
                        and "exec" not in code and "__import__" not in code:
                    pass
                else:
                    offenders.append(f"{path.name}:{n}: {line.strip()}")
    assert offenders == []
    assert len(compiles) == 1


@pytest.mark.parametrize("name", [("os", "system"), ("builtins", "eval"), ("subprocess", "Popen"),
                                  ("validator.lang.ast", "Node"), ("validator.lang.ast", "A"), ("copyreg", "_reconstructor")])
def test_the_ast_pickles_find_no_other_global(name: tuple[str, str]) -> None:
    from validator.lang import astcache

    with pytest.raises(pickle.UnpicklingError):
        astcache._Reader(io.BytesIO(b"")).find_class(*name)
    assert astcache._Reader(io.BytesIO(b"")).find_class("validator.lang.ast", "Int").__name__ == "Int"


def test_python_looking_strings_are_text(cli, root: Path) -> None:
    body = ('def code = "__import__(\'os\').system(\'touch pwned\')"\n'
            'query main = [code, len(code), upper("exec(1)"), match("eval(x)", r"eval\\((?P<arg>\\w+)\\)")]\n')
    (root / "main.rules").write_text(body)
    r = cli("run", "--format", "json", str(root / "main.rules"), "--state", str(root / "empty.json"))
    out = json.loads(r.out)
    assert r.code == 0
    assert out[0] == "__import__('os').system('touch pwned')" and out[2] == "EXEC(1)" and out[3] == {"arg": "x"}
    assert not (root / "pwned").exists()


def test_evaluation_writes_no_files(cli, root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)
    (root / "main.rules").write_text(
        'procedure p cite "R" {\n  var n = 0\n  step s cite "R" { emit "e" {n: n}  n := n + 1 }\n}\n'
        'query main = {p: p(), r: roll(2d6) >= 7}\n')
    before_root = sorted(os.listdir(root))
    for extra in (["--seed", "1"], ["--exact"], ["--dice", "3,4"], ["--explain", "--seed", "2"]):
        r = cli("run", "--format", "json", str(root / "main.rules"), "--state", str(root / "empty.json"), *extra)
        assert r.code == 0, r.out + r.err
    assert cli("check", str(root / "main.rules")).code == 0
    assert os.listdir(work) == []
    assert sorted(os.listdir(root)) == before_root

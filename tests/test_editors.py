"""The VS Code extension folder (`editors/vscode/`) hangs together: its grammar is the project's
TextMate grammar, its language is the one the server's client selects, its script parses."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXT = ROOT / "editors" / "vscode"


def _manifest() -> dict:
    return json.loads((EXT / "package.json").read_text(encoding="utf-8"))  # type: ignore[no-any-return]


def test_the_extension_uses_the_projects_grammar() -> None:
    (grammar,) = _manifest()["contributes"]["grammars"]
    path = (EXT / grammar["path"]).resolve()
    assert path == ROOT / "editors" / "ruleval.tmLanguage.json"
    tm = json.loads(path.read_text(encoding="utf-8"))
    assert grammar["scopeName"] == tm["scopeName"]
    (language,) = _manifest()["contributes"]["languages"]
    assert grammar["language"] == language["id"]
    assert [f".{t}" for t in tm["fileTypes"]] == language["extensions"] == [".rules"]
    config = json.loads((EXT / language["configuration"]).read_text(encoding="utf-8"))
    assert config["comments"]["lineComment"] == "#"  # as the grammar's COMMENT terminal
    assert re.search(r'COMMENT:\s*/#', (ROOT / "grammar" / "ruleval.lark").read_text(encoding="utf-8"))


def test_the_extension_starts_ruleval_lsp_for_its_language() -> None:
    manifest = _manifest()
    script = (EXT / manifest["main"]).read_text(encoding="utf-8")
    language = manifest["contributes"]["languages"][0]["id"]
    assert f'language: "{language}"' in script
    assert manifest["contributes"]["configuration"]["properties"]["ruleval.server.args"]["default"] == ["lsp"]
    assert "vscode-languageclient" in manifest["dependencies"] and 'require("vscode-languageclient/node")' in script


@pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")
def test_the_extension_script_parses() -> None:
    done = subprocess.run(["node", "--check", str(EXT / "extension.js")], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, done.stderr

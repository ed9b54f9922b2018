"""Here I Stand: a connection joins two spaces. A map (or a state) joining a space to itself made it its
own neighbour (HIS-M2): a move from d to d was paid and "entered", groups in the destination could
intercept into it, an avoid could go into the space it avoids. The map's own data check says so."""

from __future__ import annotations

import io
import json
from pathlib import Path

from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_a_map_connection_of_a_space_to_itself_is_c027(tmp_path: Path) -> None:
    text = (ROOT / "rulesets" / "his" / "map.yaml").read_text(encoding="utf-8")
    text = text.replace("connections:\n", "connections:\n  - {a: linz, b: linz, kind: normal}\n")
    (tmp_path / "ruleval.toml").write_text("", encoding="utf-8")
    (tmp_path / "my_map.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "my.rules").write_text('ruleset my.his "mine"\nextends "bundled:his/his.rules"\n'
                                       'import "my_map.yaml" as map\n', encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    assert main(["check", "--no-cache", "--format", "json", str(tmp_path / "my.rules")], stdout=out, stderr=err) == 1
    [d] = [d for d in json.loads(out.getvalue()) if d["severity"] == "error"]
    assert d["code"] == "C027" and d["pointer"] == "/connections/0/b" and "`linz` to itself" in d["message"], d
    assert text.splitlines()[d["line"] - 1].strip() == "- {a: linz, b: linz, kind: normal}"

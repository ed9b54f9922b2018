"""Every `ruleval` command of the README's tour runs as written, from the repository root."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
# commands whose exit code 1 is their point: diff reports that the two rulesets differ
EXPECTED_FINDINGS = ("diff",)


def _commands() -> list[str]:
    out = []
    for block in re.findall(r"```sh\n(.*?)```", README, flags=re.S):
        for line in block.splitlines():
            line = re.sub(r"\s+#.*$", "", line).strip()
            if line.startswith("ruleval "):
                out.append(line)
    return out


COMMANDS = _commands()


def test_the_readme_shows_commands() -> None:
    assert len(COMMANDS) >= 12


@pytest.mark.parametrize("command", COMMANDS)
def test_readme_command_runs(cli, command: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    argv = shlex.split(command)[1:]
    if "-o" in argv:  # write pictures to a temporary folder, not into the checkout
        i = argv.index("-o")
        argv[i + 1] = str(tmp_path / argv[i + 1])
    result = cli(*argv)
    want = 1 if argv[0] in EXPECTED_FINDINGS else 0
    assert result.code == want, (command, result.out[-500:], result.err[-500:])
    if argv[0] == "diff":
        assert "differ" in result.out

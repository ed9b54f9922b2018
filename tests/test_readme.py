"""Every command shown in README.md and docs/*.md runs, and prints what the page says it prints.

The convention (README.md, "How the docs are checked"):

- a ```` ```console ```` block holds commands, each on a line starting with ``$ ruleval``, each
  followed by its output as printed: standard output, then standard error;
- a line ``...`` in the output stands for lines left out (the rest must appear, in order);
- a command exits 0 unless its line ends with ``# exit N``; a line ending with
  ``# not run here: tested by tests/test_X.py`` is a long-running command (a server) that this
  test does not start: the named test file must exist;
- commands run from the repository root, or from the folder an HTML comment
  ``<!-- console cwd=PATH -->`` names for the rest of the page;
- a fenced block whose info string is ``LANGUAGE PATH`` (```` ```yaml docs/tutorial/cases.yaml ````)
  shows a file of the repository: it must equal that file.

Outputs are compared normalised only for timings and temporary paths. A file a command writes
(``-o``, ``--out``, ``--junit``, ``--svg``, ``--plot``) goes to a temporary folder. ``UPDATE_DOCS=1`` rewrites
the outputs in the pages from what the commands print (review the diff before committing).
Every ``ruleval`` command in a fenced block of these pages must be in a console block.
"""

from __future__ import annotations

import io
import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# docs/diagnostics.md shows each code's example as files and a `Command:` line: tests/test_diagnostics.py runs them
SKIP_FENCES = {"docs/diagnostics.md"}
OUTPUT_OPTIONS = ("-o", "--output", "--out", "--junit", "--svg", "--plot")
EXIT = re.compile(r"\s+#\s*exit (\d+)\s*$")
NOT_RUN = re.compile(r"\s+#\s*not run here: tested by (tests/\S+\.py)\s*$")
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```[ \t]*$", re.M | re.S)
CWD = re.compile(r"<!-- console cwd=(\S+) -->")


@dataclass
class Command:
    page: str
    line: int  # of the `$` line in the page
    cwd: Path
    text: str  # the command as shown, without the `$ ` and the trailing comment
    code: int = 0
    tested_by: str | None = None
    output: list[str] = field(default_factory=list)
    span: tuple[int, int] = (0, 0)  # character offsets of the output in the page
    index: int = 0  # its number among the page's commands


def _rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name


def commands(page: Path) -> list[Command]:
    text = page.read_text(encoding="utf-8")
    found: list[Command] = []
    for m in FENCE.finditer(text):
        if m.group(1).strip() != "console":
            continue
        cwds = CWD.findall(text[:m.start()])
        cwd = ROOT / cwds[-1] if cwds else ROOT
        body_start = m.start(2)
        offset = body_start
        current: Command | None = None
        for raw in m.group(2).splitlines(keepends=True):
            line = raw.rstrip("\n")
            if line.startswith("$ "):
                if current is not None:
                    current.span = (current.span[0], offset)
                shown = line[2:]
                current = Command(_rel(page), text.count("\n", 0, offset) + 1, cwd, shown, index=len(found))
                if (e := EXIT.search(shown)) is not None:
                    current.code, current.text = int(e.group(1)), shown[:e.start()]
                elif (n := NOT_RUN.search(shown)) is not None:
                    current.tested_by, current.text = n.group(1), shown[:n.start()]
                current.span = (offset + len(raw), offset + len(raw))
                found.append(current)
            elif current is not None:
                current.output.append(line)
            offset += len(raw)
        if current is not None:
            current.span = (current.span[0], offset)
    return found


ALL = [c for page in PAGES for c in commands(page)]


def normalise(text: str, tmp: Path | None = None) -> str:
    if tmp is not None:
        text = text.replace(str(tmp), "<tmp>")
    text = text.replace(str(ROOT) + os.sep, "")
    text = re.sub(r"\b\d+(?:\.\d+)?\s?(?:ms|s)\b", "<time>", text)
    return text


def matches(want: list[str], got: list[str]) -> bool:
    """``want`` equals ``got``, a ``...`` line of ``want`` standing for any lines (none or more)."""
    if not want:
        return not got
    if want[0] == "...":
        return any(matches(want[1:], got[i:]) for i in range(len(got) + 1))
    return bool(got) and want[0] == got[0] and matches(want[1:], got[1:])


def run(cmd: Command, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, list[str]]:
    argv = shlex.split(cmd.text)
    assert argv[0] == "ruleval", cmd.text
    argv = argv[1:]
    renamed: dict[str, str] = {}
    for i, a in enumerate(argv[:-1]):
        if a in OUTPUT_OPTIONS:
            target = str(tmp / Path(argv[i + 1]).name)
            renamed[target] = argv[i + 1]
            argv[i + 1] = target
    monkeypatch.chdir(cmd.cwd)
    monkeypatch.delenv("NO_COLOR", raising=False)
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, stdout=out, stderr=err)
    text = out.getvalue() + err.getvalue()
    for target, shown in renamed.items():
        text = text.replace(target, shown)
    assert "Traceback" not in text
    return code, normalise(text, tmp).splitlines()


DIAGNOSTIC_HEAD = re.compile(r"^\S.*: (error|warning)\[[A-Z]\d{3}\]: ")
QUOTED_SOURCE = re.compile(r"^ *\d+ \| ")


def too_wide(lines: list[str]) -> list[str]:
    """Lines wider than the 100 columns docs/tools.md promises, but for those it leaves whole: an
    error's first line (editors and CI read it), the source line it quotes, and a line of one word
    (a path or pointer, kept whole for copying) after its indentation and label; and the Python
    `explain --ir` shows after `written by the backend as:`, as it is written."""
    if "  written by the backend as:" in lines:
        lines = lines[:lines.index("  written by the backend as:")]
    return [line for line in lines if len(line) > 100 and not DIAGNOSTIC_HEAD.match(line)
            and not QUOTED_SOURCE.match(line) and len(line.split(": ", 1)[-1].split()) > 1]


def test_the_pages_show_commands() -> None:
    assert len([c for c in ALL if c.page == "README.md"]) >= 12
    assert any(c.page == "docs/tutorial.md" for c in ALL)


@pytest.mark.parametrize("cmd", ALL, ids=[f"{c.page}:{c.line}" for c in ALL])
def test_doc_command_prints_what_the_page_shows(cmd: Command, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    if cmd.tested_by is not None:
        assert (ROOT / cmd.tested_by).is_file(), f"{cmd.page}:{cmd.line}: {cmd.tested_by} does not exist"
        return
    code, got = run(cmd, tmp_path, monkeypatch)
    want = [normalise(line) for line in cmd.output]
    if os.environ.get("UPDATE_DOCS") and (code != cmd.code or not matches(want, got)):
        _update(cmd, got)
        return
    assert code == cmd.code, (f"{cmd.page}:{cmd.line}: `{cmd.text}` exited {code}, the page says {cmd.code}", got)
    assert not too_wide(got), f"{cmd.page}:{cmd.line}: `{cmd.text}` printed lines wider than 100 columns: {too_wide(got)}"
    assert matches(want, got), (f"{cmd.page}:{cmd.line}: `{cmd.text}` printed otherwise than the page shows "
                                "(UPDATE_DOCS=1 rewrites the page)", "\n".join(got))


def _update(cmd: Command, got: list[str]) -> None:
    page = ROOT / cmd.page
    text = page.read_text(encoding="utf-8")
    # the same command's output, found again (an earlier update may have moved the offsets)
    fresh = commands(page)[cmd.index]
    start, end = fresh.span
    page.write_text(text[:start] + "".join(line + "\n" for line in got) + text[end:], encoding="utf-8")


def _fenced(page: Path) -> list[tuple[str, str, int]]:
    text = page.read_text(encoding="utf-8")
    return [(m.group(1).strip(), m.group(2), text.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(text)]


@pytest.mark.parametrize("page", PAGES, ids=[_rel(p) for p in PAGES])
def test_every_ruleval_command_of_a_page_is_checked(page: Path) -> None:
    if _rel(page) in SKIP_FENCES:
        return
    loose = []
    for info, body, line in _fenced(page):
        if info == "console":
            continue
        for n, raw in enumerate(body.splitlines(), 1):
            if re.match(r"^\s*(\$ )?(\.venv/bin/)?ruleval\s", raw):
                loose.append(f"{_rel(page)}:{line + n}: {raw.strip()}")
    assert not loose, "commands outside a console block (their output is not checked):\n" + "\n".join(loose)


FILES = [(page, info.split()[1], body, line) for page in PAGES if _rel(page) not in SKIP_FENCES
         for info, body, line in _fenced(page) if len(info.split()) == 2 and "/" in info.split()[1]]


@pytest.mark.parametrize("page,path,body,line", FILES, ids=[f"{_rel(p)}:{n}" for p, _, _, n in FILES])
def test_a_file_shown_is_the_file(page: Path, path: str, body: str, line: int) -> None:
    target = ROOT / path
    assert target.is_file(), f"{_rel(page)}:{line}: shows `{path}`, which does not exist"
    assert target.read_text(encoding="utf-8") == body, f"{_rel(page)}:{line}: `{path}` differs from the page"


def test_the_convention_is_read_as_documented(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("text\n<!-- console cwd=docs/tutorial -->\n```console\n$ ruleval check a.rules\nchecked\n...\n"
                    "$ ruleval diff a b  # exit 1\n$ ruleval serve --port 0  # not run here: tested by tests/test_x.py\n"
                    "```\n```sh\nruleval run x\n```\n", encoding="utf-8")
    first, second, third = commands(page)
    assert (first.text, first.code, first.output, first.cwd) == ("ruleval check a.rules", 0, ["checked", "..."],
                                                                 ROOT / "docs/tutorial")
    assert (second.text, second.code, second.output) == ("ruleval diff a b", 1, [])
    assert (third.text, third.tested_by) == ("ruleval serve --port 0", "tests/test_x.py")
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"]) and matches(["a", "..."], ["a"])
    assert not matches(["a", "...", "d"], ["a", "b"]) and not matches(["a"], ["a", "b"])
    assert normalise("took 0.25 s, 12ms") == "took <time>, <time>"

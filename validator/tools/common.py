"""What the commands share: reading their arguments, loading a ruleset to run, printing
diagnostics and results. The commands (``cli`` and the tools' modules) import it; it imports none
of them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, TextIO

from ..core.diagnostics import Diagnostic, DiagnosticError, Span, render_all, to_json_text
from ..core.exits import UsageError


def print_diags(diags: list[Diagnostic], fmt: str, out: TextIO, err: TextIO, sources: dict[str, str]) -> None:
    if fmt == "json":
        out.write(to_json_text(diags) + "\n")
    elif diags:
        err.write(render_all(diags, sources, err) + "\n")


def with_state(sources: dict[str, str], shown: str, text: str | None) -> dict[str, str]:
    """A ruleset's sources and the text of the state a command read (``shown``), for the lines shown
    under what is said of either."""
    return sources if text is None else {**sources, shown: text}


def print_state_diags(diags: list[Diagnostic], fmt: str, out: TextIO, err: TextIO, sources: dict[str, str],
                      shown: str, text: str | None) -> None:
    """``print_diags`` of what a run said, the state's faults placed at their lines in its JSON ``text``
    (read from ``shown``; ``at_lines``) and that text's lines shown under them."""
    from ..engine.state import at_lines

    print_diags(at_lines(diags, shown, text), fmt, out, err, with_state(sources, shown, text))


def no_state_note(state: str | None, diags: list[Diagnostic], err: TextIO) -> None:
    """After a command given no ``--state`` was refused a state (an `S` diagnostic), say why."""
    if state is None and any(d.code.startswith("S") and d.code != "S008" for d in diags):  # (S008: an argument)
        err.write("ruleval: note: no --state was given, and this ruleset reads one: give --state FILE\n")


def parse_arg(text: str) -> Any:
    """``--arg``: JSON, else plain text; JSON that ruleval refuses in a state (``NaN``, an integer of
    too many digits, nesting too deep) is a usage error rather than text, and so is a text that opens
    as JSON does (``{``, ``[``, ``"``) and is not JSON: a record with a brace missing, read as a text,
    was an error of the rules (`has no fields`) at the query."""
    from ..core.jsontext import loads

    try:
        return loads(text, "--arg")
    except DiagnosticError as exc:
        said = exc.diagnostics[0]
        if said.message.startswith("invalid JSON") and not text.lstrip().startswith(("{", "[", '"')):
            return text
        where = f" (column {said.span.col})" if said.message.startswith("invalid JSON") and said.span.col else ""
        raise UsageError(f"--arg `{text[:40]}`: {said.message}{where}") from None


def add_dice_options(p: Any) -> Any:
    """A command's dice, one way or the other: ``--seed N`` (seeded random dice) or ``--dice FACES``
    (scripted, read by ``parse_dice``); the group, for a command with a third way to add to it."""
    g = p.add_mutually_exclusive_group()
    g.add_argument("--seed", type=int, help="seeded random dice")
    g.add_argument("--dice", help="scripted dice: comma-separated faces, used in order")
    return g


def parse_dice(text: str | None) -> list[int] | None:
    """``--dice 6,3,5``: scripted faces, or None when the option is absent."""
    if text is None:
        return None
    from . import whole_number

    # (every item a face: an empty one, `1,,2` or `--dice ''`, is a mistake, not nothing; in ASCII digits,
    # spaces around it allowed: `--dice "6, 3"`)
    faces = []
    for item in text.split(","):
        face = whole_number(item.strip(" "))
        if face is None:
            raise UsageError("--dice takes comma-separated integers, e.g. --dice 6,3,5")
        if face < 1:  # (a script names the side rolled, from 1: the run would say so only at the roll, E011)
            raise UsageError(f"--dice `{text}`: `{item.strip(' ')}` is no face of a die; faces count from 1, "
                             "e.g. --dice 6,3,5")
        faces.append(face)
    return faces


# the advice of a script of dice that ran out (E007) or that the rules did not roll to its end (E014),
# with ``{}`` for where the command that ran was given the script
_DICE_HELP = {"E007": "add dice to {}", "E014": "remove the dice the rules do not roll from {}"}


def dice_named(diags: list[Diagnostic], named: str) -> list[Diagnostic]:
    """What a run said, the help of a script of dice that ran out or was not all rolled naming where the
    command took the script (``named``: `` `--dice` ``, a case's `` `dice:` `` list), not the API's words."""
    from dataclasses import replace

    return [replace(d, help=_DICE_HELP[d.code].format(named)) if d.code in _DICE_HELP else d for d in diags]


def args_named(diags: list[Diagnostic], named: str = "--arg") -> list[Diagnostic]:
    """What a run said, a query argument that does not fit its parameter (S008) said at the option
    the command took the arguments from (``named``), its pointer giving which (``--arg#/0``: the first)."""
    from dataclasses import replace

    from ..engine.arguments import ARGS_NAME

    return [replace(d, span=Span(named)) if d.code == "S008" and d.span.file == ARGS_NAME else d for d in diags]


def bundled_file(text: str) -> Path | None:
    """The file a ``bundled:FAMILY/NAME.rules`` name stands for, as ``extends`` reads it (under the
    bundle's `rulesets/` folder only); None for any other text. ``confine.Refused`` when there is no
    such file there, or the name leads out of it."""
    from ..core import confine

    if not text.startswith(confine.BUNDLE_PREFIX):
        return None
    bundle = confine.bundle_root()
    if bundle is None:
        raise confine.Refused("missing", f"`{text}` not found: this ruleval has no bundled rulesets")
    top = bundle / "rulesets"
    return confine.check_file(top / text[len(confine.BUNDLE_PREFIX):], top, text)


def ruleset_arg(text: str) -> str:
    """A ruleset named on the command line as a path: a ``bundled:`` name (``bundled_file``) is the
    file it stands for; any other text is a path already. U001 when the bundle has no such ruleset."""
    from ..core import confine
    from ..lang.loader import bundled_names, display_path

    try:
        found = bundled_file(text)
    except confine.Refused as exc:
        names = f" (bundled rulesets: {', '.join(bundled_names())})" if exc.reason == "missing" else ""
        raise UsageError(exc.message + names) from None
    return text if found is None else display_path(found)


def require_files(ruleset: str, state: str | None, stdin: bool = True) -> None:
    """The ruleset and state files a command names exist (``-``, standard input, as the state where the
    command reads it: ``stdin``); else U001."""
    require_regular(ruleset, "ruleset")
    if state == "-" and not stdin:
        raise UsageError("this command reads its start state from a file, not from standard input (`-`)")
    if state is not None and state != "-":
        require_regular(state, "state")


def not_overwriting(output: str | None, flag: str, reads: Iterable[tuple[str, str | None]]) -> None:
    """U001 when ``output``, the file a command writes (named by the option ``flag``), is one it reads:
    ``reads`` holds (what it is, its path) pairs. `explain r.rules -o r.rules` replaced the ruleset with
    its trace, and `test cases.yaml --junit cases.yaml` the cases with their report."""
    if not output or output == "-":
        return
    for what, path in reads:
        if not path or path == "-":
            continue
        try:
            same = os.path.samefile(output, path)
        except OSError:  # (one of them not there: the same file only if the same path)
            same = os.path.realpath(output) == os.path.realpath(path)
        if same:
            raise UsageError(f"{flag} `{output}` is the {what} this command reads: writing there would replace it")


def require_regular(path: str, what: str) -> None:
    """``path`` names a regular file; else U001 saying what it is instead."""
    from ..core.confine import not_a_file

    why = not_a_file(path)
    if why is not None:
        raise UsageError(f"{what} `{path}` {why}")


def load_for_run(path: str, err: TextIO, fmt: str = "text", out: TextIO | None = None) -> Any:
    """The ruleset, or None when it does not check (its errors printed: as a JSON list on ``out`` with
    ``fmt`` json)."""
    from ..api import load_ruleset

    rs = load_ruleset(path)
    if not rs.ok:
        errors = [d for d in rs.diagnostics if d.is_error]
        if fmt == "json" and out is not None:
            out.write(to_json_text(errors) + "\n")
        else:
            err.write(render_all(errors, rs.sources, err) + "\n")
        return None
    return rs


def result_json(rs: Any, query: str, result: Any, **options: Any) -> str:
    """A run's result as JSON text; ``RunError`` with ``E011`` (at the query) for a value JSON cannot
    hold (NaN or an infinity, from a state's or a data file's numbers), never invalid JSON."""
    from ..api import RunError
    from ..core.jsontext import dumps

    try:
        return dumps(result, sort_keys=False, ensure_ascii=False, **options)
    except ValueError:
        unit = rs.program.query(query)
        span = unit.span if unit is not None else Span(rs.path)
        raise RunError([Diagnostic("E011", "the result holds NaN or an infinity, which JSON cannot write", span,
                                   help="JSON has no NaN or infinity; check the arithmetic on state and data numbers")],
                       "eval") from None

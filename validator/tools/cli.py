"""The ``ruleval`` command line: a thin shell over ``validator.api``.

Exit codes: 0 ok, 1 findings (invalid ruleset, failed cases, evaluation error), 2 usage error,
3 invalid state or input, 4 internal error. No traceback reaches the user.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from pathlib import Path
from typing import Any, Callable, TextIO

from ..core.confine import WriteFailed
from ..core.diagnostics import Diagnostic, DiagnosticError, Span, one_line, render_all, utf8_fault

from ..core.exits import EXIT_FINDINGS, EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, UsageError, exit_code
from .common import (add_dice_options, args_named, dice_named, load_for_run, no_state_note, not_overwriting, parse_arg,
                     parse_dice, print_diags, print_state_diags, require_files, require_regular, result_json)


class _StoreOnce(argparse.Action):
    """argparse's ``store`` (the value, or values, given to the option), for an option given once: given
    again (`--seed 1 --seed 2`), argparse would keep the last value without a word, so a slip or a
    script's default followed by its override would run with one of two values the user wrote; both
    are named in a usage error instead. (A subclass of the public ``Action``, not of argparse's
    private ``_StoreAction``, whose ``__call__`` is this ``setattr``.)"""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        given = getattr(parser, "given", None)
        if option_string is not None and isinstance(given, dict):
            said = " ".join([option_string, *getattr(parser, "written", [])])  # (its values as written)
            if self.dest in given:
                raise UsageError(f"`{'/'.join(self.option_strings)}` is given twice (`{given[self.dest]}`, then "
                                 f"`{said}`): {'it takes one value; ' if self.nargs in (None, '?') else ''}give it once")
            given[self.dest] = said
        setattr(namespace, self.dest, values)


_NEGATIVE_LED = re.compile(r"-[0-9]")  # a word that starts as a negative number does


def _number_type(kind: type, pattern: re.Pattern[str], said: str) -> Callable[[str], Any]:
    """What an option of ``type=int`` (``float``) reads its value with (registered as that type, so that
    every parser's and group's options get it): a number in ASCII digits only, as ``pattern`` writes one;
    `int()` alone took `١`, `1_000` and ` 7`."""
    def read(text: str) -> Any:
        if not pattern.fullmatch(text):
            raise argparse.ArgumentTypeError(f"expected {said} in ASCII digits, not {text!r}")
        return kind(text)

    read.__name__ = kind.__name__
    return read


class _Parser(argparse.ArgumentParser):
    """The command line's parsers. Beside the public API (``error``, ``parse_known_args`` and
    ``register``, argparse's documented-in-source way to name an action or type), two of argparse's
    private hooks are overridden, where it has no public one; each is checked on Python 3.11 to 3.13 by
    tests/test_cli_slips.py: ``_parse_optional`` (a word such as `-1,2` is a value, not an unknown
    option: Python 3.13 reads it so itself, 3.11 and 3.12 did not) and ``_get_values`` (an option's
    words as written, for the message of an option given twice)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from . import DECIMAL_NUMBER, WHOLE_NUMBER

        super().__init__(*args, **kwargs)
        self.given: dict[str, str] = {}  # the options of one value met by the parse under way, as written
        self.written: list[str] = []
        self.register("action", None, _StoreOnce)
        self.register("action", "store", _StoreOnce)
        self.register("type", int, _number_type(int, WHOLE_NUMBER, "a whole number"))
        self.register("type", float, _number_type(float, DECIMAL_NUMBER, "a number"))

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        self.given = {}
        return super().parse_known_args(args, namespace)

    def _parse_optional(self, arg_string: str) -> Any:
        # argparse reads `-3` as a value but `-1,2` as an unknown option, so `--dice -1,2` was argparse's own
        # "expected one argument"; no option starts with `-` and a digit, so such a word is a value, which the
        # option then reads (`--dice`: a usage error naming the face)
        if _NEGATIVE_LED.match(arg_string):
            return None
        return super()._parse_optional(arg_string)

    def _get_values(self, action: argparse.Action, arg_strings: list[str]) -> Any:
        self.written = list(arg_strings)  # (what the action about to be taken was given, before its type reads it)
        return super()._get_values(action, arg_strings)

    def error(self, message: str) -> Any:  # argparse would exit(2) itself; keep control here
        raise UsageError(message)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser. Given the ``command`` a command line names first, a parser for the
    commands written here (`check`, `run`) leaves out the authoring tools' sub-commands: importing
    them (and what they import) is a tenth of a cold `ruleval check rulesets/`, and none of them
    could be reached."""
    parser = _Parser(prog="ruleval", description="Game rules as data: check and run rulesets.")
    parser.add_argument("--version", action="store_true", help="print the version")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser)

    p = sub.add_parser("check", help="parse and statically check ruleset files or folders")
    p.add_argument("paths", nargs="+")
    p.add_argument("--format", choices=["text", "json", "sarif", "github", "junit"], default="text")
    p.add_argument("--deny-warnings", action="store_true", help="treat warnings as errors (exit 1)")
    p.add_argument("--no-cache", action="store_true",
                   help="check every ruleset afresh (results of unchanged rulesets are otherwise reused)")
    from .sweep import add_sweep_options

    add_sweep_options(p, "at most 4")

    p = sub.add_parser("run", help="run a ruleset on a state")
    p.add_argument("ruleset")
    p.add_argument("--state", help="state JSON file ('-' for standard input); without it, an empty state "
                                   "(the `generate` query: the state its generator starts from)")
    p.add_argument("--batch", help="JSON Lines file: one state per line, one result per line")
    p.add_argument("--query", default="main", help="query to evaluate (default: main)")
    p.add_argument("--arg", action="append", default=[], help="query argument (JSON, or plain text)")
    g = add_dice_options(p)
    g.add_argument("--exact", action="store_true", help="enumerate every dice outcome with its probability")
    p.add_argument("--explain", action="store_true", help="include the evaluation trace")
    p.add_argument("--format", choices=["text", "json", "jsonl"], default="text",
                   help="text (default): for people; json: the result as JSON; jsonl: one line of JSON")
    p.add_argument("--svg", help="also draw the result as SVG into this file (rulesets with a `render` query)")

    if command in COMMANDS:
        return parser
    from .. import tools  # the authoring tools register their own sub-commands

    tools.register(sub)
    from . import lsp  # `ruleval lsp`: the language server (pygls, an optional dependency, imported when it runs)

    lsp.register(sub, tools.COMMANDS)
    return parser


def _summary(diags: list[Diagnostic]) -> str:
    errors = sum(1 for d in diags if d.is_error)
    warnings = len(diags) - errors
    return f"{errors} error{'s' if errors != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"


def cmd_check(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..api import check_paths

    missing = [p for p in args.paths if not os.path.lexists(p)]
    if missing:  # a path on the command line, like `run`'s ruleset: a usage error (U001, exit 2)
        raise UsageError(f"`{missing[0]}` not found")
    from .checksweep import on_sweep
    from .sweep import default_jobs

    jobs = args.jobs or min(4, default_jobs())
    rulesets, diags = check_paths(args.paths, use_cache=not args.no_cache, check=on_sweep(jobs, args.cluster, err))
    if not rulesets and not diags:  # a gate that checked nothing must not pass: a wrong folder would hide every error
        raise UsageError(f"no ruleset (`.rules` file) found in {', '.join(args.paths)}")
    sources: dict[str, str] = {}
    for rs in rulesets:
        sources.update(rs.sources)
    from ..lib.runtime import said

    said(diags)  # (a data check's I002 is one of them: not said again after them, ``main``)
    if args.format in ("sarif", "github", "junit"):
        from . import report  # (only for these formats: it imports `html` and its table of entities)

        out.write(report.render_check(args.format, diags, [rs.path for rs in rulesets]))
    else:
        print_diags(diags, args.format, out, err, sources)
        if args.format == "text":
            err.write(f"checked {len(rulesets)} ruleset{'s' if len(rulesets) != 1 else ''}: {_summary(diags)}\n")
    return exit_code([d for d in diags if d.is_error or args.deny_warnings])


def reads_no_input(rs: Any, query: str) -> bool:
    """Whether nothing the query may evaluate (its definition and all it names, through the program's
    reference graph) is an input: such a query (one computed from its arguments) runs without a state."""
    from ..engine.data import state_read_by

    unit = rs.program.query(query)
    return unit is not None and state_read_by(rs.program, unit) is None


def cmd_run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..api import RunError
    from ..engine.state import read_state_text, state_file_text

    if args.state is not None and args.batch is not None:
        raise UsageError("give one of --state FILE or --batch FILE, not both")
    require_files(args.ruleset, args.state)
    not_overwriting(args.svg, "--svg", [("ruleset", args.ruleset), ("state", args.state), ("batch file", args.batch)])
    dice = parse_dice(args.dice)
    if args.exact and args.explain:  # (an exact run is many runs; the trace was dropped without a word)
        raise UsageError("--explain traces one run: give --seed or --dice, not --exact")
    diag_format = "json" if args.format in ("json", "jsonl") else "text"  # (errors as a JSON list, as results are JSON)
    rs = load_for_run(args.ruleset, err, diag_format, out)
    if rs is None:
        return EXIT_FINDINGS
    qargs = [parse_arg(a) for a in args.arg]
    opts = dict(query=args.query, args=qargs, seed=args.seed, dice=dice, exact=args.exact, explain=args.explain)

    if args.batch is not None:
        return _run_batch(rs, args.batch, opts, out, err, args.format)
    validate = True
    shown, text = args.state or "<no state>", None  # (the state's text: what is said of it is placed at its lines)
    try:
        if args.state is None:  # a ruleset that reads no input, or its generator, needs no state
            from .errata import generator_state

            shown = "<no state>"
            alone = args.query == "generate" or reads_no_input(rs, args.query)
            state = generator_state(rs) if alone else {}
            validate = not alone  # a query that reads no input is not given a state to check
        elif args.state == "-":
            shown = "<stdin>"
            text = _stdin_text(shown)
            state = read_state_text(text, shown)
        else:
            text = state_file_text(Path(args.state))
            state = read_state_text(text, shown)
        result = rs.evaluate(state, state_name=shown, validate=validate, **opts)
        answer = result.json()
        written = result_json(rs, args.query, answer, indent=2)  # refused here, before anything is written
    except RunError as exc:
        said = args_named(dice_named(exc.diagnostics, "`--dice`"))
        print_state_diags(said, diag_format, out, err, rs.sources, shown, text)
        no_state_note(args.state, said, err)
        return exit_code(said)
    except DiagnosticError as exc:
        print_state_diags(exc.diagnostics, diag_format, out, err, rs.sources, shown, text)
        return exit_code(exc.diagnostics)
    if args.svg:
        from . import render

        render.write_svg(rs, state, answer, args.svg, state_name=args.state or "<state>")
    if args.format == "text":
        from ..core.diagnostics import use_colour
        from .textview import result_text, terminal_width

        out.write(result_text(result, terminal_width(out), use_colour(out)) + "\n")
    elif args.format == "jsonl":
        out.write(result_json(rs, args.query, answer) + "\n")
    else:
        out.write(written + "\n")
    return EXIT_OK


def _stdin_text(shown: str) -> str:
    """Standard input read as bytes and decoded as a state file is (``S001`` if it is not UTF-8)."""
    from ..engine.state import MAX_STATE_BYTES

    if sys.stdin is None:  # the process was started with standard input closed (`<&-`)
        raise UsageError("`--state -` reads the state from standard input, which is closed")
    data = sys.stdin.buffer.read(MAX_STATE_BYTES + 1) if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if len(data) > MAX_STATE_BYTES:  # cut in the middle of a character: the size is what is wrong
            return data.decode("utf-8", "replace")
        line, col, problem = utf8_fault(exc)
        raise DiagnosticError([Diagnostic("S001", problem, Span(shown, line, col, line, col + 1),
                                          help="send the state as UTF-8")]) from None


def _run_batch(rs: Any, batch: str, opts: dict[str, Any], out: TextIO, err: TextIO, fmt: str = "json") -> int:
    """One result per line of ``batch``: JSON Lines (``--format json``/``jsonl``), or under the text
    format each line's result as text after a ``FILE:LINE`` heading, its errors on standard error."""
    from ..api import RunError
    from ..engine.state import at_lines, read_state_text

    if batch == "-":
        raise UsageError("--batch reads a file of JSON Lines, not standard input (`-`)")
    require_regular(batch, "batch file")
    path = Path(batch)
    worst = EXIT_OK
    with path.open("rb") as fh:  # JSON Lines: lines end at \\n only; each is decoded on its own
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            shown = f"{batch}:{lineno}"
            line = None  # (the line's text: what is said of its state is placed at its column)
            try:
                try:
                    line = raw.decode("utf-8").rstrip("\n").rstrip("\r")  # (a position past its end stays on it)
                except UnicodeDecodeError as exc:
                    _, col, problem = utf8_fault(exc)
                    raise DiagnosticError([Diagnostic("S001", problem, Span(shown, 1, col, 1, col + 1))]) from None
                state = read_state_text(line, shown)
                result = rs.evaluate(state, state_name=shown, **opts)
                text = result_json(rs, opts["query"], result.json())
                if fmt == "text":
                    from ..core.diagnostics import use_colour
                    from .textview import result_text, terminal_width

                    out.write(one_line(shown) + ":\n" + result_text(result, terminal_width(out) - 2, use_colour(out))
                              .replace("\n", "\n  ").join(("  ", "\n")))
                else:
                    out.write(text + "\n")
            except (RunError, DiagnosticError) as exc:
                diags = [_on_batch_line(d, shown, batch, lineno)
                         for d in at_lines(args_named(dice_named(exc.diagnostics, "`--dice`")), shown, line)]
                worst = max(worst, exit_code(diags))
                if fmt == "text":
                    err.write(render_all(diags, None, err) + "\n")
                else:
                    out.write(json.dumps({"line": lineno, "diagnostics": [d.to_json() for d in diags]}) + "\n")
            except Exception as exc:  # a bug met on one line: reported there, and the other lines still run
                worst = EXIT_INTERNAL
                if fmt == "text":
                    err.write(render_all([_internal(exc, shown)], None, err) + "\n")
                else:
                    out.write(json.dumps({"line": lineno, "diagnostics": [_internal(exc, shown).to_json()]}) + "\n")
    return worst


def _on_batch_line(d: Diagnostic, shown: str, batch: str, lineno: int) -> Diagnostic:
    """A diagnostic of one line of a batch file (named ``FILE:LINE`` while it ran) at its place in the
    file: that line, the column within it (a JSON pointer's diagnostic at its first column)."""
    from dataclasses import replace

    if d.span.file != shown:
        return d
    if not d.span.line:
        return replace(d, span=Span(batch, lineno, 1))
    return replace(d, span=Span(batch, lineno, d.span.col, lineno if d.span.end_line else 0, d.span.end_col))


def _internal(exc: BaseException, where: str) -> Diagnostic:
    return Diagnostic("I001", f"internal error: {type(exc).__name__}: {exc}", Span(where),
                      help="this is a bug in ruleval; please report it with the command that caused it")


COMMANDS: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]] = {
    "check": cmd_check,
    "run": cmd_run,
}


class _ReaderMayLeave:
    """Standard output whose reader may stop reading (``ruleval replay ... | head``): what is written
    after that is dropped, and the command runs on to give its own exit code, so a difference found
    is never turned into success by a closed pipe."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        if not self.gone:
            try:
                return self.stream.write(text)
            except BrokenPipeError:
                self.gone = True
        return len(text)

    def flush(self) -> None:
        if not self.gone:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self.gone = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def main(argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    out: Any = stdout or _ReaderMayLeave(sys.stdout)
    err = stderr or sys.stderr
    try:
        given = sys.argv[1:] if argv is None else argv
        parser = build_parser(given[0] if given else None)
        args = parser.parse_args(argv)
        if args.version:
            from ..core.exits import VERSION as __version__

            out.write(f"ruleval {__version__}\n")
            return EXIT_OK
        if not args.command:
            err.write(parser.format_usage())
            return EXIT_USAGE
        try:
            os.getcwd()
        except FileNotFoundError:  # (a shell left in a folder since removed: no path can be read against it)
            raise UsageError("the working folder no longer exists: cd to one that does") from None
        from .. import tools
        from .common import ruleset_arg

        for name in ("ruleset", "old", "new"):  # (`bundled:` names wherever a ruleset is named, as in `extends`)
            if isinstance(getattr(args, name, None), str):
                setattr(args, name, ruleset_arg(getattr(args, name)))
        if args.command == "check":
            args.paths = [ruleset_arg(p) for p in args.paths]
        handler = COMMANDS.get(args.command) or tools.COMMANDS[args.command]
        from ..core.confine import named_on_command_line

        from ..lib.runtime import listening

        # (shown as written: docs/diagnostics.md, "Paths"); a bug of the backend's writer met by any run of
        # the command, said once for each unit it gave up, whatever the command (I002: the answer is right)
        with named_on_command_line(named_paths(args)), listening() as bugs:
            try:
                return handler(args, out, err)
            finally:
                for d, text in bugs.unsaid():
                    err.write(render_all([d], {d.span.file: text} if text is not None else None, err) + "\n")
    except UsageError as exc:
        err.write(f"ruleval: error[U001]: {one_line(str(exc))}\n")
        return EXIT_USAGE
    except WriteFailed as exc:  # the file was replaced whole or not at all (`confine.write_atomic`)
        err.write(f"ruleval: error[U002]: {exc}\n"
                  "  = help: the file is unchanged; check the folder exists and is writable, and the disk space\n")
        return EXIT_USAGE
    except DiagnosticError as exc:
        err.write(render_all(exc.diagnostics, None, err) + "\n")
        return exit_code(exc.diagnostics)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # standard error's reader gone: nothing more can be said
        return EXIT_OK
    except Exception as exc:  # the last line of defence: a bug, reported without a traceback
        err.write(f"ruleval: error[I001]: internal error: {type(exc).__name__}: {one_line(str(exc))}\n"
                  "  = help: this is a bug in ruleval; please report it with the command that caused it\n")
        return EXIT_INTERNAL


# the arguments of every command that name files to read (rulesets, states, cases, records)
NAMED_PATHS = ("ruleset", "old", "new", "variant", "paths", "state", "start", "record", "batch", "cases")


def named_paths(args: argparse.Namespace) -> list[str]:
    """The paths a command line names files by, as written there (``confine.named_on_command_line``)."""
    out: list[str] = []
    for name in NAMED_PATHS:
        value = getattr(args, name, None)
        out.extend(v for v in (value if isinstance(value, list) else [value]) if isinstance(v, str))
    return out


def without_collector(argv: list[str]) -> bool:
    """Whether the process of the command line ``argv`` runs without the cycle collector (``entry``): `check`
    and `fmt`, which read rulesets and exit, and `run` of one state, which reads a ruleset, runs one
    query, whose work its step budget bounds, and exits (its imports, load and run walked by the
    collector were about a tenth of such a process, the bench's single run: docs/speed.md). `run --batch`, as long
    as its file, keeps it, as every other command does (the collector is the host's, and here the host
    is this command line: docs/architecture.md)."""
    if argv[:1] == ["run"]:
        return not any(a == "--batch" or a.startswith("--batch=") for a in argv[1:])
    return argv[:1] in (["check"], ["fmt"])


def entry() -> None:
    """The `ruleval` command: `main`, then an immediate exit.

    By the end of a command everything is written and closed, and what remains is freeing the
    whole object graph of the loaded rulesets one object at a time: about 0.3 s of a 0.9 s
    `ruleval check rulesets/`, for nothing. So the process leaves at once (as compilers and type
    checkers written in Python do), after flushing the standard streams. `main` itself returns
    normally, for callers in the same process.

    For the same reason `check` and `fmt`, which only read rulesets and then exit, run without
    the cycle collector (``without_collector``): ASTs and compiled rulesets hold little cyclic
    garbage, and the collector's passes over them cost time (restarting it at the end of a check,
    40 ms, would scan every loaded object once more just before the process ends)."""
    if without_collector(sys.argv[1:]):
        gc.disable()
    for name in ("stdout", "stderr"):  # started with the stream closed (`>&-`, a daemon): what is said there is
        if getattr(sys, name) is None:  # dropped, and the exit code still says how the command went
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))
    for stream in (sys.stdout, sys.stderr):  # a character the stream cannot encode is written as an escape
        try:  # (`\\udc80`: valid inside a JSON string too) rather than ending the command with a traceback
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            pass
    code = main()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            pass
    os._exit(code)

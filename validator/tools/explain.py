"""``ruleval explain``: why a ruleset gave its result, as a tree of cited rule calls or a decision graph.

The run is an ordinary ``Ruleset.evaluate(..., explain=True)``; this module only presents its trace:

- ``text``: an indented tree ``rule(args) = value  [CITE]`` (a procedure's step that ran: ``step NAME  [CITE]``),
  then the cycles met and how their policy settled them, then the events emitted by procedure steps, every
  value in the language's notation (``values.notation``, as ``ruleval run`` writes them);
- ``json``: the explanation as the API returns it;
- ``dot``: the dependency graph of the simultaneous decisions (cycle members in red), drawn as SVG
  by Graphviz ``dot`` when it is installed, else the ``.dot`` text.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any, Callable, TextIO

from ..core.diagnostics import one_line
from ..lib.values import brief, notation

MAX_ARG_TEXT = 60


def _args_text(args: list[Any], limit: int = MAX_ARG_TEXT) -> str:
    return ", ".join(brief(a, limit) for a in args)


WIDTH = 100  # the longest line of the tree (a deeper node may pass it by its indentation)


def _call(node: dict[str, Any], args: str) -> str:
    """A node's call as the ruleset writes it: ``rule(args)``, a table lookup ``table[keys]``, a value
    read without arguments by its name alone."""
    if node.get("kind") == "table":
        return f"{node['rule']}[{args}]"
    if node.get("kind") == "value":
        return str(node["rule"])
    if node.get("kind") == "step":
        return f"step {node['rule']}"
    return f"{node['rule']}({args})"


def _cell_text(node: dict[str, Any]) -> str:
    """Where a table lookup's value came from (``kind: table`` nodes only)."""
    cell = node.get("cell")
    if node.get("kind") != "table" or not isinstance(cell, dict):
        return ""
    where = {"grid": "its cell at", "override": "the cell overridden at", "source": "its source at",
             "none": "no cell: none, as declared at"}.get(str(cell.get("from")), "at")
    return f"  ({where} {cell.get('at')})"


def _node_lines(node: dict[str, Any], depth: int, full: bool = False) -> list[str]:
    """One node of the tree: ``rule(args) = value  [CITE]`` (a table lookup ``table[keys] = value
    [CITE]  (its cell at FILE:LINE:COL)``, a value read without arguments ``name = value  [CITE]``) on
    one line of the width, its arguments and value cut shorter when they would pass it, and the value
    on a line of its own if still too long; with ``full``, the arguments and the value written whole
    (``--full``)."""
    pad = "  " * depth
    cites = f"  [{', '.join(node['cites'])}]" if node.get("cites") else ""
    cites += _cell_text(node)
    args = node.get("args", [])
    if node.get("kind") == "step":  # (a procedure's step that ran: no arguments, no value)
        return [f"{pad}{_call(node, '')}{cites}"]
    if full:
        whole = ", ".join(notation(a) for a in args)
        return [f"{pad}{_call(node, whole)} = {notation(node.get('value'))}{cites}"]
    line = f"{pad}{_call(node, _args_text(args))} = {brief(node.get('value'), 80)}{cites}"
    if len(line) <= WIDTH:
        return [line]
    call = f"{pad}{_call(node, _args_text(args, 24))}"
    rest = f"= {brief(node.get('value'), 48)}{cites}"
    if len(call) + 1 + len(rest) <= WIDTH:
        return [f"{call} {rest}"]
    return [call, f"{pad}    {rest}"]


def _mentions(node: dict[str, Any], needle: str) -> bool:
    return needle.lower() in notation(node.get("args", [])).lower()


def trace_lines(trace: list[dict[str, Any]], order: str | None = None, full: bool = False) -> list[str]:
    """The trace as an indented tree; with ``order``, only the subtrees whose arguments mention it."""
    lines: list[str] = []

    def show(node: dict[str, Any], depth: int) -> None:
        lines.extend(_node_lines(node, depth, full))
        for child in node.get("children", []):
            show(child, depth + 1)

    def find(node: dict[str, Any]) -> None:
        if _mentions(node, order or ""):
            show(node, 0)
            return
        for child in node.get("children", []):
            find(child)

    for node in trace:
        if order:
            find(node)
        else:
            show(node, 0)
    return lines


def explain_text(result: Any, order: str | None = None, full: bool = False, lines: list[str] | None = None) -> str:
    """A traced run's ``api.Result`` as text: the tree, the cycles, the events (with ``order``, those
    that mention it), or a line saying there were none; ``lines``: its ``explain_lines``, if found already."""
    lines = explain_lines(result, order, full) if lines is None else list(lines)
    if not lines:
        lines.append(f"no traced rule mentions `{order}`" if order else "no cited rule was called")
    return "\n".join(one_line(line) for line in lines)  # a line break from the input is shown, not obeyed


def explain_lines(result: Any, order: str | None = None, full: bool = False) -> list[str]:
    """The lines of ``explain_text`` but the one said when there are none."""
    exp = result.trace or {}
    lines = trace_lines(exp.get("trace", []), order, full)
    for cyc in exp.get("cycles", []):
        if order and order.lower() not in notation(cyc["members"]).lower():
            continue
        members = [f"{cyc['decision']}({brief(m, MAX_ARG_TEXT)})" for m in cyc["members"]]
        line = f"cycle: {members[0]}" if members else "cycle:"
        for m in members[1:]:  # as many to a line as fit in WIDTH, the others under the first
            if len(line) + 2 + len(m) <= WIDTH:
                line += f", {m}"
            else:
                lines.append(line + ",")
                line = " " * len("cycle: ") + m
        lines.append(line)
        lines.append(f"  settled {len(cyc['settled'])} as {notation(cyc['value'])}  [{', '.join(cyc['cites'])}]")
    events = result.events if result.trace is not None and isinstance(result.value, dict) else []
    for ev in events:
        if not isinstance(ev, dict):
            continue
        rest = {k: v for k, v in ev.items() if k not in ("event", "step", "cites")}
        if order and order.lower() not in notation(rest).lower():
            continue
        cites = f"  [{', '.join(ev.get('cites') or [])}]" if ev.get("cites") else ""
        lines.append(f"event {ev.get('event')} in step {ev.get('step')}: {brief(rest, 100)}{cites}")
    return lines


# ---------------------------------------------------------------- `--unit`: one piece, followed


MAX_UNIT_DEPTH = 8


def _index(trace: list[dict[str, Any]]) -> tuple[dict[str, dict[str, Any]], dict[int, dict[str, Any]]]:
    """Each call's first node that shows how it was computed (a memoised call later in the trace has
    no children: it is followed to the node that has them), and each node's parent."""
    found: dict[str, dict[str, Any]] = {}
    parents: dict[int, dict[str, Any]] = {}

    def walk(node: dict[str, Any]) -> None:
        key = _ident(node)
        if key not in found or (not found[key].get("children") and node.get("children")):
            found[key] = node
        for child in node.get("children", []):
            parents[id(child)] = node
            walk(child)

    for node in trace:
        walk(node)
    return found, parents


def _ident(node: dict[str, Any]) -> str:
    return notation([node.get("rule"), list(node.get("args", []))])


def _said(node: dict[str, Any], say: dict[str, Any]) -> str | None:
    """The sentence the view's ``explain.say`` gives a call: a template, or one per value (the value in
    the language's notation, `true`, `[]`, else ``else``), with ``{0}``, ``{1}``... the arguments and
    ``{value}`` the value, upper-cased where they are short texts (the way orders write places), any
    other value in the notation."""
    template = say.get(str(node.get("rule")))
    if isinstance(template, dict):
        template = template.get(notation(node.get("value")), template.get("else"))
    if not isinstance(template, str):
        return None

    def shown(v: Any) -> str:
        if isinstance(v, str):
            return v.upper() if len(v) <= 6 else v
        if isinstance(v, list) and all(isinstance(x, str) for x in v):
            return ", ".join(x.upper() if len(x) <= 6 else x for x in v) or "none"
        return notation(v)

    values = {str(i): shown(a) for i, a in enumerate(node.get("args", []))}
    values["value"] = shown(node.get("value"))
    out = template
    for name, text in values.items():
        out = out.replace("{" + name + "}", text)
    return out


def unit_lines(trace: list[dict[str, Any]], key: str, say: dict[str, Any], full: bool = False) -> list[str]:
    """How one piece fared, followed through the decisions that settled it: every call about ``key``
    (its first argument is the key) that the view has words for, then each decision that consulted
    one of them (the nearest of the view's ``follow`` rules, else the highest it has words for:
    another piece's action that settled this one's fate, say) with the calls it rested on, in the
    view's words and with the clause of each step."""
    index, parents = _index(trace)
    lines: list[str] = []
    seen: set[str] = set()

    def show(node: dict[str, Any], depth: int) -> None:
        ident = _ident(node)
        node = index.get(ident, node)
        if ident in seen or depth > MAX_UNIT_DEPTH:
            return
        seen.add(ident)
        cites = f"  [{', '.join(node['cites'])}]" if node.get("cites") else ""
        sentence = _said(node, say)
        if sentence is not None:
            lines.append(f"{'  ' * depth}{sentence}{cites}")
            if full:
                lines.append(f"{'  ' * depth}    = {_node_lines(node, 0, True)[0].strip()}")
            depth += 1
        for child in node.get("children", []):
            show(child, depth)

    about = [n for n in index.values() if n.get("args") and isinstance(n["args"][0], str)
             and n["args"][0].lower() == key.lower() and _said(n, say) is not None]
    follow = say.get("_follow") if isinstance(say.get("_follow"), list) else None
    tops: list[dict[str, Any]] = []
    for node in about:
        top, up = node, parents.get(id(node))
        while up is not None:
            if follow is not None and up.get("rule") in follow:
                top = up  # the nearest decision the view tells a story by
                break
            if follow is None and _said(up, say) is not None:
                top = up
            up = parents.get(id(up))
        tops.append(top)
    for node, top in zip(about, tops):  # its own decisions first (those no other consulted, whole)
        if top is node and _ident(node) not in seen:
            show(node, 0)
    for node, top in zip(about, tops):  # then the others (not told whole above), told again below in what consulted them
        if top is not node and _ident(node) not in seen:
            cites = f"  [{', '.join(node['cites'])}]" if node.get("cites") else ""
            lines.append(f"{_said(node, say)}{cites}")
    shown_tops = [t for t in tops if _ident(t) not in seen]
    if shown_tops:
        lines.append("because:")
    for top in shown_tops:
        show(top, 1)
    return lines


def unit_key(view: dict[str, Any] | None, text: str) -> tuple[str, dict[str, Any]]:
    """The key the ruleset's decisions name a piece by, read from how a player writes it by the view's
    ``explain.unit`` pattern (group ``key``), and the view's words (``explain.say``)."""
    from ..lib.patterns import compiled

    found_spec = view.get("explain") if isinstance(view, dict) else None
    spec: dict[str, Any] = found_spec if isinstance(found_spec, dict) else {}
    say = dict(spec["say"]) if isinstance(spec.get("say"), dict) else {}
    if isinstance(spec.get("follow"), list):
        say["_follow"] = [str(x) for x in spec["follow"]]
    pattern = spec.get("unit")
    if isinstance(pattern, str):
        try:
            found = compiled(pattern, ignore_case=True).search(text.strip())
        except Exception:  # a pattern RE2 refuses: the text is the key
            found = None
        if found and found.get("key"):
            return str(found["key"]).lower(), say
    return text.strip().lower(), say


def unit_story(rs: Any, result: Any, unit: str, full: bool = False,
               found: tuple[str, list[str]] | None = None) -> str:
    """``explain --unit`` (and the playground's): how the piece written ``unit`` fared in a traced run
    of ``rs`` (its ``api.Result``), in the words of its family's view, its values in the language's
    notation, or why nothing is said."""
    key, lines = unit_story_lines(rs, result, unit, full) if found is None else found
    return "\n".join(lines) if lines else f"no traced decision is about `{unit}` (read as `{key}`)"


def unit_story_lines(rs: Any, result: Any, unit: str, full: bool = False) -> tuple[str, list[str]]:
    """The key ``unit`` is read as, and the lines of ``unit_story`` (none when no decision is about it)."""
    from .picture import view_of

    key, say = unit_key(view_of(rs), unit)
    return key, unit_lines((result.trace or {}).get("trace", []), key, say, full)


def _state_texts(state: Any) -> list[str]:
    """The texts a state holds (its maps' keys, its texts and its numbers as written, at any depth), each
    once, in order."""
    found: dict[str, None] = {}
    todo = [state]
    while todo:
        value = todo.pop()
        if isinstance(value, str):
            found.setdefault(value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            found.setdefault(str(value))
        elif isinstance(value, dict):
            found.update((str(k), None) for k in value)
            todo.extend(reversed(list(value.values())))
        elif isinstance(value, list):
            todo.extend(reversed(value))
    return list(found)


CLOSEST_SHOWN = 3  # texts of the state named when an `--order` or `--unit` names nothing in it


def unnamed_in_state(state: Any, option: str, written: str, key: str | None = None) -> str | None:
    """Why ``written`` (given to ``--order``, or to ``--unit`` read as ``key``) is a mistake of the
    command line, or None: it names nothing in the state (``--order``: no text of the state, nor the
    state in the language's notation, holds it; ``--unit``: no text of the state holds the key as a
    word, in any case), with the state's texts or words closest to it (a few). Asked only when the trace said
    nothing of it (a text the trace mentions, come from the ruleset's data, is shown, not refused)."""
    from ..core.diagnostics import closest_name

    texts = _state_texts(state)
    words = {w: None for t in texts for w in re.split(r"[^\w]+", t.casefold()) if w}
    if key is None:
        needle = written.casefold()
        if needle in notation(state).casefold() or any(needle in t.casefold() for t in texts):
            return None
    else:
        needle = key.casefold()
        if needle in words:
            return None
    folded: dict[str, str] = {}
    for t in texts:
        folded.setdefault(t.casefold(), t)
    for w in words:
        folded.setdefault(w, w)
    close: list[str] = []
    while len(close) < CLOSEST_SHOWN and (found := closest_name(needle, folded.keys() - set(close))) is not None:
        close.append(found)
    read = f" (read as `{key}`)" if key is not None and key != written else ""
    hint = f"; the closest it holds: {', '.join(f'`{one_line(folded[c])}`' for c in close)}" if close else ""
    return f"{option} `{written}`{read} names nothing in the state{hint}"


class _Ids:
    """Short node ids (``d0``, ``d1``...) for decision keys."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def __call__(self, key: Any) -> str:
        k = json.dumps(key, sort_keys=True)
        return self.ids.setdefault(k, f"d{len(self.ids)}")

    def __contains__(self, key: Any) -> bool:
        return json.dumps(key, sort_keys=True) in self.ids


def _dot_label(text: str) -> str:
    return json.dumps(text)


def decision_graph(result: Any) -> str:
    """The decision dependency graph of a traced run (its ``api.Result``) in Graphviz dot: an edge
    ``a -> b`` when deciding a consulted b; each decision labelled with its arguments and value in the
    language's notation (nodes are told apart by the JSON of their keys)."""
    exp = result.explain if isinstance(result.explain, dict) else {}
    decisions = exp.get("decisions", [])
    values = (result.trace or {}).get("decisions", [])  # (the same decisions, as the language's values)
    _dot_id = _Ids()
    in_cycle: set[str] = set()
    for cyc in exp.get("cycles", []):
        for d in decisions:
            if any(m == {"decision": d["decision"], "args": d["args"]} for m in cyc["members"]):
                in_cycle.add(_dot_id(d["key"]))
    lines = ["digraph decisions {", "  rankdir=LR;", '  node [shape=box, fontname="monospace", fontsize=10];']
    for d, v in zip(decisions, values):
        nid = _dot_id(d["key"])
        label = f"{d['decision']}({_args_text(v['args'])})\\n= {brief(v['value'], MAX_ARG_TEXT)}"
        style = ', color=red, style=filled, fillcolor="#ffe0e0"' if nid in in_cycle else ""
        lines.append(f"  {nid} [label={_dot_label(label).replace(chr(92) * 2 + 'n', chr(92) + 'n')}{style}];")
    for a, b in exp.get("decision_edges", []):
        for k in (a, b):
            if k not in _dot_id:
                lines.append(f"  {_dot_id(k)} [label={_dot_label(str(k[0]))}];")
        lines.append(f"  {_dot_id(a)} -> {_dot_id(b)};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_svg(dot_text: str) -> str | None:
    """SVG drawn by Graphviz, or None when ``dot`` is not installed or fails."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    try:
        done = subprocess.run([exe, "-Tsvg"], input=dot_text, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def bound_lines(rs: Any, name: str) -> list[str] | None:
    """A definition as the engines see it: its kind and signature with the types the checker gives,
    what the reference graph says of it, its bound tree (each node with what it names: a local's
    slot, a global's referee, an override's `base` the definition it replaces; and its inferred
    type), and the Python the backend writes for it."""
    from ..lang import ast as A
    from ..lang.bind import table_code
    from ..lang.types import ANY, TypeChecker, node_types, show

    program = rs.program
    unit = program.units.get((program.entry.key, name))
    if unit is None or unit.cycle is not None:
        return None
    at = unit.span
    bound, types, checker = unit.bound, node_types(program, unit), TypeChecker(program.entry, [], program)
    ret = checker.resolve(unit.ret) if unit.ret is not None else types.get(id(unit.body), ANY)
    sig = "" if unit.arity is None else "(" + ", ".join(f"{p.name}: {show(checker.resolve(p.type))}"
                                                       for p in unit.params) + ")"
    cites = f"  [{', '.join(unit.cites)}]" if unit.cites else ""
    lines = [f"{unit.kind} {name}{sig} -> {show(ret)}{cites}", f"  at {at.file}:{at.line}:{at.col}"]
    flags = [f for f, on in (("state-free", unit.state_free), ("recursive", unit.recursive),
                             ("counted toward the depth limit", unit.counted),
                             ("reads decisions", unit.uses_decisions)) if on]
    lines.append(f"  is: {', '.join(flags) or 'none of state-free, recursive, reading decisions'}")
    lines.append("  bound (-> what a node names, : its type):")

    def tree(node: Any, depth: int) -> None:
        if isinstance(node, tuple):
            for x in node:
                tree(x, depth)
        if not isinstance(node, A.Node) or isinstance(node, A.TypeRef):
            return
        said = [type(node).__name__]
        for f in node._compared:
            x = getattr(node, f)
            if isinstance(x, str) and f != "message":
                said.append(json.dumps(x) if isinstance(node, A.Str) else "base" if x.startswith("base of ") else x)
            elif type(x) is int or (isinstance(x, tuple) and x and all(isinstance(y, str) for y in x)):
                said.append(", ".join(x) if isinstance(x, tuple) else str(x))
        ref = bound.get(id(node))
        if ref is not None:
            said.append(f"-> {referee_text(ref)}")
        if id(node) in types:
            said.append(f": {show(types[id(node)])}")
        lines.append("    " + "  " * depth + " ".join(said))
        for f in node._compared:
            tree(getattr(node, f), depth + 1)

    for part in (*unit.params, *unit.stmts, *(table_code(unit) if unit.kind == "table" else (unit.body,))):
        tree(part, 0)
    lines.append("  written by the backend as:")
    for source in rs.backend(typed=True).source_of(unit):
        lines.extend("    " + ln for ln in source.splitlines())
    return lines


def referee_text(ref: Any) -> str:
    """What a node of a bound tree names (``bind.Referee``), in words."""
    from ..lang.bind import Local, ModuleRef, UnitRef

    if isinstance(ref, Local):
        return f"slot {ref.slot}"
    if isinstance(ref, UnitRef):
        u = ref.unit
        return f"{u.kind} `{u.written}` at {u.span.file}:{u.span.line}"
    return f"the module {ref.ns.entry}" if isinstance(ref, ModuleRef) else type(ref).__name__.removesuffix("Ref").lower()


def cmd_explain(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..api import RunError
    from ..core.exits import EXIT_FINDINGS, EXIT_OK, exit_code
    from .common import (args_named, dice_named, load_for_run, no_state_note, not_overwriting, parse_arg, parse_dice,
                         print_state_diags, require_files)
    from ..core.confine import write_atomic
    from ..core.diagnostics import DiagnosticError, visible
    from ..engine.state import read_state_text, state_file_text

    require_files(args.ruleset, args.state)
    chosen = "--unit" if args.unit else "--order" if args.order else None
    if chosen is not None and args.format != "text" and args.ir is None:  # (it chooses what the text tells)
        from ..core.exits import UsageError

        raise UsageError(f"{chosen} chooses what the text output tells; `--format {args.format}` gives the whole "
                         f"trace: leave out {chosen}, or --format")
    dice = parse_dice(args.dice)
    rs = load_for_run(args.ruleset, err, "json" if args.format == "json" else "text", out)
    if rs is None:
        return EXIT_FINDINGS
    not_overwriting(args.output, "-o", [("ruleset", args.ruleset), ("state", args.state),
                                        *(("ruleset's file", f) for f in rs.sources)])
    if args.ir is not None:
        lines = bound_lines(rs, args.ir)
        if lines is None:
            from ..core.exits import UsageError

            raise UsageError(f"`{args.ruleset}` defines no `{args.ir}` of its own")
        out.write(visible("\n".join(lines)) + "\n")
        return EXIT_OK
    shown, text = args.state or "<no state>", None  # (the state's text: what is said of it is placed at its lines)
    try:
        text = state_file_text(Path(args.state)) if args.state is not None else None
        state = read_state_text(text, shown) if text is not None else {}
        traced = rs.evaluate(state, query=args.query, args=[parse_arg(a) for a in args.arg], seed=args.seed,
                             dice=dice, explain=True, state_name=shown)
        result = traced.json()
    except (RunError, DiagnosticError) as exc:
        said = args_named(dice_named(exc.diagnostics, "`--dice`"))
        print_state_diags(said, args.format, out, err, rs.sources, shown, text)
        no_state_note(args.state, said, err)
        return exit_code(said)
    if not isinstance(result, dict) or "explain" not in result:
        result = {"result": result, "explain": {"trace": [], "decision_edges": [], "cycles": [], "settled": []}}
    if args.format == "json":
        from .common import print_diags, result_json

        try:
            text = result_json(rs, args.query, result["explain"], indent=2) + "\n"
        except RunError as exc:
            print_diags(exc.diagnostics, "json", out, err, rs.sources)
            return EXIT_FINDINGS
    elif args.format == "dot":
        text = decision_graph(traced)
        svg = None if (args.output or "").lower().endswith(".dot") else to_svg(text)  # a .dot file gets DOT
        if svg is not None:
            text = svg
        elif args.output and args.output.lower().endswith(".svg"):  # DOT text in a .svg file would not open
            from ..core.exits import UsageError

            raise UsageError(f"cannot draw `{args.output}`: Graphviz `dot` is not installed (install the "
                             f"`graphviz` package for SVG, or write the DOT text: -o {args.output[:-4]}.dot)")
    else:  # (a name of nothing in the state is the command line's mistake, not "nothing to tell": U001)
        if args.unit:
            key, lines = unit_story_lines(rs, traced, args.unit, args.full)
            refused = None if lines else unnamed_in_state(state, "--unit", args.unit, key)
        else:
            lines = explain_lines(traced, args.order, args.full)
            refused = None if lines or not args.order else unnamed_in_state(state, "--order", args.order)
        if refused is not None:
            from ..core.exits import UsageError

            raise UsageError(refused + (" (no --state was given: the state is empty)" if args.state is None else ""))
        text = visible(unit_story(rs, traced, args.unit, args.full, (key, lines)) if args.unit else
                       explain_text(traced, args.order, args.full, lines)) + "\n"
    if args.output:
        write_atomic(args.output, text)
    else:
        out.write(text)
    return EXIT_OK


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    from .common import add_dice_options

    p = sub.add_parser("explain", help="show why a ruleset gave its result: cited rule calls, decisions, cycles")
    p.add_argument("ruleset")
    p.add_argument("--state", help="state JSON file (without it, an empty state: a ruleset that reads none)")
    p.add_argument("--query", default="main", help="query to evaluate (default: main)")
    p.add_argument("--arg", action="append", default=[], help="query argument (JSON, or plain text)")
    p.add_argument("--order", help="only the subtrees whose arguments mention this text")
    p.add_argument("--unit", help="follow one piece (as a player writes it, e.g. `A BUR`) through the decisions "
                   "that settled it, in the words of the family's view.yaml")
    p.add_argument("--full", action="store_true", help="write each rule's arguments and value whole, not cut to the width")
    add_dice_options(p)
    p.add_argument("--format", choices=["text", "json", "dot"], default="text",
                   help="dot: the decision graph (SVG when Graphviz is installed)")
    p.add_argument("-o", "--output", help="write to this file instead of standard output")
    p.add_argument("--ir", metavar="NAME", help="run nothing: show definition NAME as the engines see it (its "
                                                 "names bound, its types, the Python the backend writes)")
    commands["explain"] = cmd_explain

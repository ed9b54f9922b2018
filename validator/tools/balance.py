"""``ruleval balance VARIANT``: N whole games of a variant, a player for each side; how the sides fare.

What ruleval asks of the variant (it knows no game): ``query start_state`` and ``query advance``
(as ``play`` does; ``advance``'s ``end`` names its ``winner`` when one side won), ``query sides`` (the
sides' names) and ``query standing``: ``{round, holdings: {side: [names]}, alive: {side: bool}}``,
the round (a year, say) and what each side holds, read after every phase. A variant may also name,
with ``query unplayed``, the sides no one plays: no player gives them orders (the variant's rules
play a side without orders), and the figures mark them as not played, apart from the sides whose
outcomes compare.

A player is a ruleset file that extends the rules it plays and declares ``query
player_orders(side, seed)``: the orders of one side on the state. It is applied over the variant
without a copy: its ``extends`` line is read as extending the variant (``load_player``), so it is
made of the variant's own definitions and gives the orders the variant accepts.

The games are a sweep (``tools/sweep``): one piece each, with its own seeds, on every core or a
Dask cluster, the figures put together in the games' order.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, TextIO

from .impact import Share

PLAYER_QUERY = "player_orders"
UNPLAYED_QUERY = "unplayed"  # optional: the sides no one plays
EXTENDS_LINE = re.compile(r'^extends\s+"[^"\n]*"[ \t]*$', re.MULTILINE)


def player_path(variant: Any, name: str) -> Path | None:
    """A player named on the command line: a file, else ``players/NAME.rules`` beside the variant or
    beside any ruleset it extends (the bundled players serve every variant of their rules)."""
    p = Path(name)
    if p.is_file():
        return p
    from ..lang.loader import real_path

    folders = [real_path(variant.path).parent] + [real_path(shown).parent for shown in variant.program.loaded.entry.chain]
    for folder in folders:
        candidate = folder / "players" / f"{name}.rules"
        if candidate.is_file():
            return candidate
    return None


def load_player(variant: Any, path: Path, written: str | None = None) -> Any:
    """The player at ``path`` applied over ``variant``: its text with its ``extends`` line naming the
    variant (the lines unchanged), loaded as a ruleset beside the variant, ``VARIANT+PLAYER.rules``
    (where the variant's root confines what it reads), a file that does not exist: it is shown as the
    player's file for the rest of the command (``confine.PathView.named``, which a sweep's workers are
    given too), so that every message, of its load or of its runs, points at the player's own line: as
    ``written`` on the command line, if it was (docs/diagnostics.md, "Paths")."""
    from ..api import check_text
    from ..core import confine
    from ..core.exits import UsageError
    from ..lang.loader import real_path

    from ..lang.syntax import decode_source

    shown = written or confine.display_path(path)
    text = decode_source(path.read_bytes(), shown)  # (not UTF-8, too long: P004, P005 at the player's file)
    found = EXTENDS_LINE.findall(text)
    if len(found) != 1:
        raise UsageError(f"player `{path}` must have one `extends` line (the rules it plays), not {len(found)}")
    target = real_path(variant.path)
    virtual = target.parent / f"{target.stem}+{path.stem}.rules"
    named = dict(confine.path_view().named)
    named.update({str(virtual): shown, os.path.realpath(virtual): shown})
    confine.show_as_named(tuple(sorted(named.items())))  # (until the command ends: ``named_on_command_line``)
    combined = EXTENDS_LINE.sub(f'extends "{target.name}"', text, count=1)
    rs = check_text(virtual, combined)
    rs.sources[rs.path] = text  # (its lines quoted as the player's file has them: its own `extends` line)
    rs.overlay = {os.path.realpath(virtual): combined}  # (what a worker is sent: `sweep.source_of`)
    return rs


@dataclass
class GameRecord:
    """One game: how it ended, how long it ran, what each side held at the start of each round."""

    winner: str | None = None
    rounds: int = 0
    phases: int = 0
    alive: dict[str, bool] = field(default_factory=dict)
    by_round: dict[str, dict[str, int]] = field(default_factory=dict)  # round (as text) -> side -> count
    first_taken: list[str] = field(default_factory=list)  # holdings that changed hands first in the game
    error: str | None = None


def _said(exc: Any) -> str:
    d = exc.diagnostics[0]
    where = f" (at {d.span.file}:{d.span.line})" if d.span.line else (f" (at {d.pointer})" if d.pointer else "")
    return f"{d.code} {d.message}{where}"


def play_one(rulesets: list[Any], item: tuple[int, int, int, int, dict[str, int], Any]) -> GameRecord:
    """One game (a sweep's piece): every side's player gives its orders, the variant advances, until a
    side wins, the round limit is reached, or ``max_phases``."""
    from ..api import ADVANCE_QUERY, RunError, game_seed
    from ..core.diagnostics import DiagnosticError

    g, seed, rounds, max_phases, players, start = item
    rules = rulesets[0]
    rec = GameRecord()
    state = start
    try:
        standing = rules.run(state, query="standing")
        first_round = standing["round"]
        rec.by_round[str(first_round)] = {s: len(h) for s, h in standing["holdings"].items()}
        owner = {h: s for s, hs in standing["holdings"].items() for h in hs}
        for i in range(max_phases):
            s = game_seed(seed, g, i)
            orders: list[Any] = []
            for side, k in players.items():
                if standing["alive"].get(side, False):
                    orders += rulesets[k].run(state, query=PLAYER_QUERY, args=[side, s], seed=s)
            out = rules.run({**state, "orders": orders}, query=ADVANCE_QUERY, seed=s)
            rec.phases += 1
            state = out["next"]
            standing = rules.run(state, query="standing")
            now = {h: side for side, hs in standing["holdings"].items() for h in hs}
            taken = sorted(h for h, side in now.items() if owner.get(h) != side)
            if taken and not rec.first_taken:
                rec.first_taken = taken
            owner = now
            rnd = standing["round"]
            rec.by_round.setdefault(str(rnd), {side: len(hs) for side, hs in standing["holdings"].items()})
            rec.rounds = rnd - first_round
            if out.get("end") is not None:
                rec.winner = out["end"].get("winner")
                break
            if rnd - first_round >= rounds:
                break
        rec.alive = dict(standing["alive"])
    except (RunError, DiagnosticError) as exc:
        rec.error = f"game {g}: {_said(exc)}"
    except (KeyError, TypeError, AttributeError) as exc:  # a `standing` or `advance` of another shape than documented
        rec.error = f"game {g}: the variant's `standing` or `advance` is not as `balance` reads it ({exc})"
    return rec


@dataclass
class Balance:
    games: list[GameRecord]
    sides: list[str]
    players: dict[str, str | None]  # side -> its player; None for a side no one plays
    rounds: int
    interrupted: bool = False

    def groups(self, group_by: str = "side") -> dict[str, list[str]]:
        """The rows of the figures: each side (``side``), or each player with the sides it played
        (``player``), in the sides' order; a side no one plays is a row of its own either way, named by
        the side, or, where a player has that name, by the side marked ``(not played)``: a row is never
        shared by a player and a side no one plays."""
        out: dict[str, list[str]] = {}
        names = {p for p in self.players.values() if p is not None}
        for side in self.sides:
            player = self.players[side]
            if group_by == "side":
                key = side
            elif player is not None:
                key = player
            else:
                key = side
                while key in names:
                    key += " (not played)"
            out.setdefault(key, []).append(side)
        return out

    def figures(self, group_by: str = "side") -> dict[str, Any]:
        """The figures of the games, by side or by player (``group_by``): the outcomes of a group are
        those of each of its sides in each game (a share of games x sides), its holdings the mean over
        them. A side no one plays has its wins counted and no draws, survivals or eliminations (None):
        it has no chances to weigh, and its holdings by round say how it fared."""
        played = [g for g in self.games if g.error is None]
        n = len(played)
        groups = self.groups(group_by)
        per_side: dict[str, Any] = {}
        for name, members in groups.items():
            k = n * len(members)
            wins = sum(g.winner == side for g in played for side in members)
            draws = sum(g.winner is None and g.alive.get(side, False) for g in played for side in members)
            alive = sum(g.alive.get(side, False) for g in played for side in members)
            played_by = self.players[members[0]]
            per_side[name] = {"player": played_by, "played": played_by is not None,
                              "sides": members, "wins": Share(wins, k).to_json(),
                              "draws": Share(draws, k).to_json() if played_by is not None else None,
                              "survivals": Share(alive, k).to_json() if played_by is not None else None,
                              "eliminations": Share(k - alive, k).to_json() if played_by is not None else None}
        rounds = sorted({int(r) for g in played for r in g.by_round}, key=int)
        by_round: dict[str, Any] = {}
        for r in rounds:
            row = {}
            for name, members in groups.items():
                xs = [_at_round(g, r).get(side, 0) for g in played for side in members]
                mean = sum(xs) / len(xs) if xs else 0.0
                sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (len(xs) - 1)) if len(xs) > 1 else 0.0
                row[name] = {"mean": round(mean, 3), "sd": round(sd, 3)}
            by_round[str(r)] = row
        lengths = [g.rounds for g in played]
        first = Counter(h for g in played for h in g.first_taken)
        return {
            "games": n, "by_victory": sum(g.winner is not None for g in played),
            "at_limit": sum(g.winner is None for g in played), "round_limit": self.rounds,
            "length": {"rounds_mean": round(sum(lengths) / n, 3) if n else 0, "rounds_min": min(lengths, default=0),
                       "rounds_max": max(lengths, default=0),
                       "phases_mean": round(sum(g.phases for g in played) / n, 3) if n else 0},
            "group_by": group_by, "sides": per_side,
            "unplayed": [s for s in self.sides if self.players[s] is None], "by_round": by_round,
            "taken_first": [[h, k] for h, k in sorted(first.items(), key=lambda kv: (-kv[1], kv[0]))],
            "errors": [g.error for g in self.games if g.error is not None], "interrupted": self.interrupted}


def _at_round(g: GameRecord, r: int) -> dict[str, int]:
    """What a game's sides held at the start of round ``r``; a game that ended before is counted at its
    last standing."""
    known = [int(x) for x in g.by_round if int(x) <= r]
    return g.by_round[str(max(known))] if known else {}


def _pct(s: dict[str, Any]) -> str:
    low, high = s["ci95"]
    return f"{100 * s['share']:.0f}% ({100 * low:.0f}-{100 * high:.0f})"


def balance_text(variant: str, f: dict[str, Any], cap: int) -> list[str]:
    from ..core.diagnostics import wrap_words

    lines = wrap_words(f"{f['games']} game{'s' if f['games'] != 1 else ''} of {variant}, up to {f['round_limit']} rounds: "
                       f"{f['by_victory']} won, {f['at_limit']} at the round limit; length "
                       f"{f['length']['rounds_mean']:g} rounds ({f['length']['rounds_min']}-{f['length']['rounds_max']}), "
                       f"{f['length']['phases_mean']:g} phases")
    sides = list(f["sides"])
    by_player = f.get("group_by") == "player"
    head = "player" if by_player else "side"
    w = max([len(s) for s in sides] + [len(head)])
    cols = ("wins", "draws", "survivals", "eliminations")
    lines.append(f"{head.ljust(w)}  {'sides' if by_player else 'player':<10}  " + "  ".join(c.ljust(15) for c in cols).rstrip()
                 + "   (95% CI)")
    unplayed = [s for s in sides if not f["sides"][s].get("played", True)]
    for s in sides:
        row = f["sides"][s]
        if s in unplayed:
            continue
        other = str(len(row["sides"])) if by_player else row["player"][:10]
        lines.append(f"{s.ljust(w)}  {other:<10}  " + "  ".join(_pct(row[c]).ljust(15) for c in cols).rstrip())
    for s in unplayed:
        row = f["sides"][s]
        lines += wrap_words(f"{', '.join(row['sides'])} (the variant's `unplayed`: no player gives its orders, the "
                            f"rules play it; its outcomes are no side's chances): won {row['wins']['count']} of "
                            f"{f['games']} games", "not played: ")
    rounds = list(f["by_round"])
    if rounds:
        shown = rounds if len(rounds) <= 8 else rounds[:4] + rounds[-4:]
        lines.append(f"holdings at the start of each round, mean (sd){' of a side' if by_player else ''}:")
        lines.append(f"{head.ljust(w)}  " + "  ".join(r.rjust(10) for r in shown))
        for s in sides:
            cells = [f"{f['by_round'][r][s]['mean']:.1f} ({f['by_round'][r][s]['sd']:.1f})" for r in shown]
            lines.append(f"{s.ljust(w)}  " + "  ".join(c.rjust(10) for c in cells))
    if f["taken_first"]:
        lines += wrap_words(", ".join(f"{h} {k}" for h, k in f["taken_first"][:cap]), "taken first most often: ")
    return lines


def plot(f: dict[str, Any], variant: str, path: str) -> None:
    """``figure_bytes`` written to ``path``, SVG or PNG by its suffix."""
    from ..core.confine import write_atomic
    from ..core.exits import UsageError

    suffix = Path(path).suffix.lower()
    if suffix not in (".svg", ".png"):
        raise UsageError(f"--plot writes an .svg or .png file, not `{path}`")
    write_atomic(path, figure_bytes(f, variant, suffix[1:]))


def figure_bytes(f: dict[str, Any], variant: str, fmt: str = "svg") -> bytes:
    """The figures drawn (matplotlib, ``pip install 'ruleval[plot]'``): holdings by round (mean, with a
    band of one standard deviation) and each side's outcomes, as ``svg`` or ``png``."""
    from ..core.exits import UsageError

    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise UsageError("--plot needs matplotlib: pip install 'ruleval[plot]'") from None
    matplotlib.rcParams["svg.hashsalt"] = "ruleval"  # the same figures give the same file
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5), gridspec_kw={"width_ratios": [3, 2]})
    rounds = [int(r) for r in f["by_round"]]
    played = [s for s in f["sides"] if f["sides"][s].get("played", True)]
    for side in f["sides"]:
        mean = [f["by_round"][str(r)][side]["mean"] for r in rounds]
        sd = [f["by_round"][str(r)][side]["sd"] for r in rounds]
        line, = left.plot(rounds, mean, marker="o", markersize=3,
                          label=side if side in played else f"{', '.join(f['sides'][side]['sides'])} (not played)")
        left.fill_between(rounds, [m - s for m, s in zip(mean, sd)], [m + s for m, s in zip(mean, sd)],
                          color=line.get_color(), alpha=0.12, linewidth=0)
    left.set_xlabel("round (start of)")
    left.set_ylabel(f"holdings{' of a side' if f.get('group_by') == 'player' else ''} (mean, band: one sd)")
    left.set_title(f"{variant}: {f['games']} games")
    left.legend(fontsize=7, ncol=2)
    sides = played  # a side no one plays has no outcomes to compare
    bottom = [0.0] * len(sides)
    for key, colour in (("wins", "#2a7f2a"), ("draws", "#7fb0d8"), ("eliminations", "#c44")):
        vals = [f["sides"][s][key]["share"] if key != "draws" else f["sides"][s]["draws"]["share"] for s in sides]
        right.bar(sides, vals, bottom=bottom, color=colour, label=key)
        bottom = [b + v for b, v in zip(bottom, vals)]
    right.set_ylim(0, 1)
    right.set_ylabel("share of games" if f.get("group_by") != "player" else "share of games x sides")
    right.set_title("outcomes (the rest: survived another's win)")
    right.tick_params(axis="x", rotation=45, labelsize=7)
    right.legend(fontsize=7)
    fig.tight_layout()
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format=fmt, metadata={"Date": None} if fmt == "svg" else {"Software": None}, dpi=100)
    plt.close(fig)
    return buf.getvalue()


def prepare(variant: Any, given: list[str]) -> tuple[list[str], dict[str, str | None], list[Any], dict[str, int], Any]:
    """What a balance needs of a loaded variant and the players given (``[SIDE=]NAME``): its sides, the
    player of each (None for a side the variant's ``query unplayed`` names: no one plays it), the
    player rulesets (each applied over the variant), each played side's ruleset by index, and the
    start state. ``UsageError`` when a piece is missing or a player is given to a side no one plays;
    ``RunError`` from the variant's queries; a player that does not check is ``PlayerError``."""
    from ..api import ADVANCE_QUERY
    from ..core.exits import UsageError
    from .errata import start_state

    missing = [q for q in (ADVANCE_QUERY, "sides", "standing") if q not in variant.queries()]
    if missing:
        raise UsageError(f"`{variant.path}` has no `query {missing[0]}`: balance plays rulesets with "
                         f"`{ADVANCE_QUERY}`, `sides` and `standing` (docs/tools.md)")
    start, problem = start_state(variant, variant, None)
    if problem is not None:
        raise UsageError(problem)
    sides = list(variant.run(start, query="sides"))
    unplayed = variant.run(start, query=UNPLAYED_QUERY) if UNPLAYED_QUERY in variant.queries() else []
    if not isinstance(unplayed, list) or not all(isinstance(s, str) for s in unplayed):
        raise UsageError(f"`{variant.path}`: its `query {UNPLAYED_QUERY}` gives {json.dumps(unplayed)[:80]}, not a list "
                         "of side names")
    strange = [s for s in unplayed if s not in sides]
    if strange:
        raise UsageError(f"`{variant.path}`: its `query {UNPLAYED_QUERY}` names `{strange[0]}`, which is not one of "
                         f"its sides ({', '.join(sides)})")
    choice: dict[str, str | None] = {side: None if side in unplayed else "random" for side in sides}
    for g in given:
        side, _, name = g.rpartition("=")
        if side and side not in choice:
            raise UsageError(f"--player {g}: `{side}` is not a side of `{variant.path}` ({', '.join(sides)})")
        if side in unplayed:
            raise UsageError(f"--player {g}: no one plays `{side}` in `{variant.path}` (its `query {UNPLAYED_QUERY}`): "
                             "its pieces take no orders, the rules play it")
        for s in ([side] if side else [s for s in sides if s not in unplayed]):
            choice[s] = name
    loaded: dict[str, int] = {}
    rulesets: list[Any] = []
    if all(c is None for c in choice.values()):
        raise UsageError(f"`{variant.path}`: no one plays any of its sides (its `query {UNPLAYED_QUERY}`): no game to play")
    for name in sorted({c for c in choice.values() if c is not None}):
        path = player_path(variant, name)
        if path is None:
            raise UsageError(f"no player `{name}`: give a player file, or a name found as players/{name}.rules "
                             "beside the variant or the rules it extends")
        rs = load_player(variant, path, name if path == Path(name) else None)
        if not rs.ok:
            raise PlayerError(rs)
        if PLAYER_QUERY not in rs.queries():
            raise UsageError(f"player `{path}` has no `query {PLAYER_QUERY}(side, seed)`")
        loaded[name] = len(rulesets)
        rulesets.append(rs)
    return sides, choice, rulesets, {side: loaded[c] for side, c in choice.items() if c is not None}, start


class PlayerError(Exception):
    """A player ruleset that does not check (its diagnostics on ``rs``)."""

    def __init__(self, rs: Any):
        super().__init__(f"player `{rs.path}` does not check")
        self.rs = rs


def run_balance(variant_path: str, players: list[str] | None = None, games: int = 100, rounds: int = 10,
                seed: int = 0, max_phases: int = 1000, jobs: int | None = None, cluster: str | None = None,
                err: TextIO | None = None, group_by: str = "side") -> dict[str, Any]:
    """The figures of ``ruleval balance`` as a value (what ``--format json`` prints), for a program: the
    playground, say, which draws them with ``figure_bytes``. Raises ``UsageError``, ``PlayerError`` or
    ``RunError`` as the command reports them."""
    from ..api import RunError, load_ruleset
    from .sweep import run_sweep

    from ..core import confine

    variant = load_ruleset(variant_path)
    if not variant.ok:
        raise RunError([d for d in variant.diagnostics if d.is_error], "ruleset")
    kept = confine.show_as_named(confine.path_view().named)  # (the players' files, shown as such while it runs)
    try:
        sides, choice, rulesets, by_side, start = prepare(variant, players or [])
        items = [(g, seed, rounds, max_phases, by_side, start) for g in range(games)]
        sw = run_sweep(play_one, rulesets, items, jobs=jobs, cluster=cluster, what="games", err=err)
    finally:
        confine.show_as_named(kept)
    return {"variant": variant.path, **Balance(sw.results, sides, choice, rounds, sw.interrupted).figures(group_by)}


MAX_GAMES = 1_000_000  # games of one `balance` (`diff --games`, `--generate`: as many): days of work already


def cmd_balance(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from ..api import RunError
    from ..core.exits import EXIT_FINDINGS, EXIT_OK, UsageError
    from ..core.confine import can_be_written, write_atomic
    from ..core.diagnostics import one_line, render_all
    from .common import load_for_run, require_regular
    from .sweep import run_sweep

    require_regular(args.variant, "ruleset")
    for flag, value, least in (("--games", args.games, 1), ("--rounds", args.rounds, 1),
                               ("--max-phases", args.max_phases, 1), ("--show", args.show, 0)):
        if value < least:  # (a game of no phase, or -1 holdings, is nothing asked for)
            raise UsageError(f"{flag} takes a number from {least}, not {value}")
    if args.games > MAX_GAMES:  # (the games are listed before they are played: 10^11 of them was a MemoryError)
        raise UsageError(f"--games takes at most {MAX_GAMES:,} games, not {args.games:,}")
    if args.records and args.format != "json":  # (it was ignored without a word)
        raise UsageError("--records goes with --format json")
    for p in args.plot or []:
        if Path(p).suffix.lower() not in (".svg", ".png"):
            raise UsageError(f"--plot writes an .svg or .png file, not `{p}`")
    from .common import not_overwriting

    for p in [*(args.plot or []), *([args.records] if args.records else [])]:
        can_be_written(p)  # said before the games are played, not after
        not_overwriting(p, "--plot" if p in (args.plot or []) else "--records", [("ruleset", args.variant)])
    variant = load_for_run(args.variant, err)
    if variant is None:
        return EXIT_FINDINGS
    try:
        sides, choice, rulesets, players, start = prepare(variant, args.player or [])
    except RunError as exc:
        err.write(render_all(exc.diagnostics, variant.sources, err) + "\n")
        return EXIT_FINDINGS
    except PlayerError as exc:
        err.write(render_all([d for d in exc.rs.diagnostics if d.is_error], exc.rs.sources, err) + "\n")
        return EXIT_FINDINGS
    items = [(g, args.seed, args.rounds, args.max_phases, players, start) for g in range(args.games)]
    sw = run_sweep(play_one, rulesets, items, jobs=args.jobs, cluster=args.cluster, what="games", err=err)
    result = Balance(sw.results, sides, choice, args.rounds, sw.interrupted)
    figures = result.figures(args.group_by)
    shown_name = args.variant
    if args.format == "json":
        out.write(json.dumps({"variant": shown_name, **figures}, indent=2) + "\n")
        if args.records:
            write_atomic(args.records, "\n".join(json.dumps(asdict(g)) for g in sw.results) + "\n")
    else:
        for line in balance_text(shown_name, figures, args.show):
            out.write(one_line(line) + "\n")
    for e in figures["errors"]:
        err.write(f"ruleval: {one_line(e)}\n")
    for p in args.plot or []:
        plot(figures, Path(shown_name).stem, p)
    if sw.interrupted:
        err.write("ruleval: interrupted: the figures above are of the games played before it\n")
        return 130
    return EXIT_FINDINGS if figures["errors"] else EXIT_OK


def register(sub: Any, commands: dict[str, Callable[[argparse.Namespace, TextIO, TextIO], int]]) -> None:
    from .sweep import add_sweep_options

    p = sub.add_parser("balance", help="play N whole games with a player for each side; how the sides fare")
    p.add_argument("variant")
    p.add_argument("--games", "-n", type=int, default=100, metavar="N", help="games to play (default 100)")
    p.add_argument("--rounds", type=int, default=10, metavar="R",
                   help="stop a game without a winner after R rounds (default 10)")
    p.add_argument("--player", action="append", metavar="[SIDE=]PLAYER",
                   help="the player of every side, or of one (repeat); a file, or a name in players/ "
                        "(default: random)")
    p.add_argument("--seed", type=int, default=0, help="first seed (default 0)")
    p.add_argument("--max-phases", type=int, default=1000, metavar="P", help="phases a game may last at most (1000)")
    p.add_argument("--plot", action="append", metavar="FILE", help="draw the figures into FILE (.svg or .png; repeat)")
    p.add_argument("--show", type=int, default=8, metavar="K", help="holdings listed as taken first (default 8)")
    p.add_argument("--records", metavar="FILE", help="with --format json: each game's record, one JSON line each")
    p.add_argument("--group-by", choices=["side", "player"], default="side",
                   help="the figures (text, JSON, plots) by side (default) or by player: each player's sides together")
    add_sweep_options(p)
    p.add_argument("--format", choices=["text", "json"], default="text")
    commands["balance"] = cmd_balance

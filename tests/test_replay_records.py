"""Real game records replayed as they are (issue 40): what a record does not hold is derived from the
phase computed before it and said so, a phase the rules pass over is noted, a piece written twice is
read once, a record of godip's game-test text format is read by an importer ruleset, and a refusal
names its phase and field, in text and in one JSON document."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from validator import load_ruleset
from validator.api import Entry, PlayError, ReplayNote, play, replay
from validator.tools.cli import main

ROOT = Path(__file__).resolve().parent.parent
DIP = ROOT / "rulesets" / "diplomacy"
STANDARD = str(DIP / "standard.rules")
GODIP = str(DIP / "godip_game.rules")
GODIP_GAME = ROOT / "docs" / "examples" / "godip" / "game.txt"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), stdout=out, stderr=err)
    return code, out.getvalue(), err.getvalue()


def _record() -> list[dict[str, Any]]:
    """The first year of docs/examples/game as `play` writes it: S1901M, F1901M, F1901R, W1901A, S1902M."""
    start = json.loads((ROOT / "docs/examples/game/start.json").read_text())
    entries = [Entry(e["orders"], e["phase"]) for e in yaml.safe_load((ROOT / "docs/examples/game/orders.yaml").read_text())]
    steps = list(play(load_ruleset(STANDARD), start, entries))
    return json.loads(json.dumps([s.state for s in steps] + [steps[-1].next]))


def _as_a_site_logs_it(record: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What real records never hold: each dislodged unit's attacker and retreats, the standoffs."""
    out = json.loads(json.dumps(record))
    for st in out:
        st.pop("standoffs", None)
        for d in st.get("dislodged", []):
            for f in ("attacker_from", "attacker_via_convoy", "retreats"):
                d.pop(f, None)
    return out


def test_replay_derives_what_a_record_does_not_hold_and_says_which_fields() -> None:
    record = _as_a_site_logs_it(_record())
    retreat = next(n for n, s in enumerate(record) if s.get("dislodged"))
    rs = load_ruleset(STANDARD)
    # as it was: the retreat state is refused, for lack of what the rules worked out one phase before
    assert rs.state_errors(record[retreat]), "the stripped retreat state should need its fields"
    notes: list[ReplayNote] = []
    assert replay(rs, record, notes=notes) == (len(record) - 1, None)
    [derived] = [n for n in notes if n.kind == "derived" and n.phase == "F1901R"]
    assert derived.where == f"<record {retreat}>"
    assert {"/standoffs", "/dislodged/0/attacker_from", "/dislodged/0/retreats"} <= set(derived.fields)
    assert "/units" not in derived.fields and "/phase" not in derived.fields


def test_a_refusal_names_the_phase_and_the_missing_field() -> None:
    record = _as_a_site_logs_it(_record())
    retreat = next(n for n, s in enumerate(record) if s.get("dislodged"))
    # a record that begins at the retreat: there is no phase before it to derive from
    with pytest.raises(PlayError) as info:
        replay(load_ruleset(STANDARD), record[retreat:])
    messages = [d.message for d in info.value.diagnostics]
    assert any("phase `F1901R`" in m and "`standoffs`" in m for m in messages), messages
    assert any("phase `F1901R`" in m and "`attacker_from`" in m for m in messages), messages
    assert info.value.agreed == 0


def test_a_phase_the_rules_pass_over_is_noted_not_refused() -> None:
    """A site held a retreat phase with nothing left to retreat (its unit destroyed): the rules go
    from the movement straight to the next phase, which is the state after it in the record."""
    record = _record()
    assert record[1]["phase"] == {"season": "fall", "year": 1901, "type": "movement"}  # no retreat in the spring
    held = {**record[1], "phase": {"season": "spring", "year": 1901, "type": "retreat"}, "dislodged": [], "orders": []}
    rs = load_ruleset(STANDARD)
    assert rs.state_errors(held), "a retreat phase with nothing to retreat is no state the rules play"
    notes: list[ReplayNote] = []
    agreed, mismatch = replay(rs, record[:1] + [held] + record[1:], notes=notes)
    assert (agreed, mismatch) == (len(record) - 1, None)
    assert [(n.where, n.phase) for n in notes if n.kind == "skipped"] == [("<record 1>", "S1901R")]
    # when the state after it is not the one computed, the phase is not passed over: it is refused
    moved = {**record[1], "units": record[1]["units"][1:]}
    with pytest.raises(PlayError, match="phase `S1901R`: a retreat phase has dislodged units"):
        replay(rs, record[:1] + [held] + [moved] + record[2:])


def test_a_unit_written_twice_is_read_once_with_a_note() -> None:
    record = _record()
    spring = record[-1]
    army = next(u for u in spring["units"] if u["type"] == "army")
    record[-1] = {**spring, "units": spring["units"] + [{**army, "location": army["location"].upper()}]}
    rs = load_ruleset(STANDARD)
    assert rs.state_errors(record[-1]), "two lines for one unit are refused as a state"
    notes: list[ReplayNote] = []
    assert replay(rs, record, notes=notes) == (len(record) - 1, None)
    assert [(n.kind, n.fields) for n in notes if n.kind == "merged"] == [("merged", [f"/units/{len(spring['units'])}"])]
    # two units alike where the rules accept them are not merged: a state accepted as written is played as written
    assert [n for n in notes if n.kind == "merged" and n.where != f"<record {len(record) - 1}>"] == []


def test_orders_of_the_last_state_are_noted_as_not_played() -> None:
    record = _record()
    record[-1] = {**record[-1], "orders": [{"power": "france", "order": "A PIC - BEL"}]}
    notes: list[ReplayNote] = []
    replay(load_ruleset(STANDARD), record, notes=notes)
    assert [(n.kind, n.phase) for n in notes if n.kind == "unplayed"] == [("unplayed", "S1902M")]


def test_godip_record_replays_end_to_end() -> None:
    code, out, err = _run("replay", GODIP, str(GODIP_GAME), "--import", "godip_game")
    assert code == 0, out + err
    lines = out.splitlines()
    assert lines[-1] == "7 phases replayed: every next state agrees with the record"
    text = " ".join(out.split())
    assert "F1901R (" in text and "derived from the phase computed before it: /dislodged/0/attacker_from" in text
    assert "/standoffs" in text
    assert "F1902R (" in text and "the rules pass over this phase" in text
    assert "S1903M (" in text and "its orders are not played" in text
    assert "written again" in text and "`remove bre` names no unit" in text


def test_godip_record_as_one_json_document() -> None:
    code, out, err = _run("replay", GODIP, str(GODIP_GAME), "--import", "godip_game", "--format", "json")
    assert code == 0, err
    report = json.loads(out)
    assert report["phases_agreeing"] == 7 and report["first_difference"] is None and report["refusal"] is None
    [f1901r] = [d for d in report["derived"] if d["phase"] == "F1901R"]
    assert "/dislodged/0/attacker_from" in f1901r["fields"] and f1901r["where"].endswith("game.txt:115")
    assert any("remove bre" in n["note"] and n["where"].endswith("game.txt:456") for n in report["notes"])


def test_godip_importer_reads_each_line_kind() -> None:
    text = ("PHASE 1901 Spring Movement\nPOSITIONS\nEngland: fleet lon\nEngland: army lvp\nEngland: fleet nth\n"
            "France: army par\nFrance: fleet stp/nc\nEngland: supply lon\nnonsense here\nORDERS\n"
            "lon move eng\nlvp move edi via convoy\nnth convoy lvp move edi\npar support lvp move edi\npar support lon\n"
            "lvp hold\nmun move boh\n"
            "PHASE 1901 Fall Adjustment\nPOSITIONS\nEngland: supply lon\nFrance: army/dislodged par\nORDERS\n"
            "build Fleet lon\nremove par\n")
    rs = load_ruleset(GODIP)
    first, second = rs.run({}, "godip_game", [text], validate=False)
    assert first["line"] == 1 and first["state"]["phase"] == {"season": "spring", "year": 1901, "type": "movement"}
    assert [o["order"] for o in first["state"]["orders"]] == [
        "F lon - eng", "A lvp - edi VIA", "F nth C A lvp - edi", "A par S A lvp - edi", "A par S F lon", "A lvp H"]
    assert [o["power"] for o in first["state"]["orders"]] == ["england", "england", "england", "france", "france", "england"]
    assert first["state"]["supply_centers"] == {"lon": "england"}
    assert [(n["line"], n["text"].split(":")[0]) for n in first["notes"]] == [
        (9, "cannot read the position `nonsense here`"),
        (17, "`mun move boh` names no unit or centre of the position (already gone)")]
    # the adjustment godip holds in the fall is that year's winter; a build is its centre owner's
    assert second["state"]["phase"] == {"season": "winter", "year": 1901, "type": "adjustment"}
    assert second["state"]["orders"] == [{"power": "england", "order": "BUILD F lon"}]
    assert second["state"]["dislodged"] == [{"power": "france", "type": "army", "location": "par"}]


UNREAD_RECORD = ("PHASE 1901 Spring Movement\nPOSITIONS\nEngland: fleet lon\nEngland: armee lvp\n"
                 "England: supply lon\nORDERS\nlon move nth\n"
                 "PHASE 1901 Fall Movement\nPOSITIONS\nEngland: fleet nth\nEngland: armee lvp\n"
                 "England: supply lon\nORDERS\n")


def test_a_record_its_importer_could_not_read_whole_is_no_full_agreement(tmp_path: Path) -> None:
    """A position the importer cannot read is left out of both states, the recorded and the computed
    one: they agree without it, and the replay once ended "every next state agrees with the record"
    (exit 0) with only a note. What was not read was not compared: the run says how many parts of the
    record were not read and exits 3 (input it could not read), in text and JSON alike."""
    path = tmp_path / "game.txt"
    path.write_text(UNREAD_RECORD)
    code, out, err = _run("replay", GODIP, str(path), "--import", "godip_game")
    assert code == 3, (out, err)
    assert "every next state agrees with the record" not in out + err
    assert "cannot read the position `England: armee lvp`" in " ".join(out.split())
    verdict = " ".join((out + err).split())
    assert "1 phase replayed" in verdict and "2 parts of the record were not read" in verdict, verdict
    code, out, err = _run("replay", GODIP, str(path), "--import", "godip_game", "--format", "json")
    assert code == 3, (out, err)
    report = json.loads(out)
    assert report["phases_agreeing"] == 1 and report["first_difference"] is None and report["unread"] == 2
    # a state refused after it: the refusal is said, and what was not read too
    path.write_text(UNREAD_RECORD.replace("England: fleet nth\n", "England: fleet nth\nEngland: army nao\n"))
    code, out, err = _run("replay", GODIP, str(path), "--import", "godip_game")
    assert code == 3 and "S002" in out + err and "2 parts of the record were not read" in err, (out, err)
    # read whole, the same record agrees: exit 0, and nothing unread
    path.write_text(UNREAD_RECORD.replace("armee", "army"))
    code, out, err = _run("replay", GODIP, str(path), "--import", "godip_game", "--format", "json")
    assert code == 0 and json.loads(out)["unread"] == 0, (out, err)


def test_replay_json_is_one_document_when_a_state_is_refused(tmp_path: Path) -> None:
    record = _as_a_site_logs_it(_record())
    retreat = next(n for n, s in enumerate(record) if s.get("dislodged"))
    path = tmp_path / "record.json"
    path.write_text(json.dumps(record[retreat - 1:]))
    record_from_retreat = tmp_path / "from_retreat.json"
    record_from_retreat.write_text(json.dumps(record[retreat:]))
    code, out, err = _run("replay", STANDARD, str(record_from_retreat), "--format", "json")
    assert code == 3, (out, err)
    report = json.loads(out)
    assert report["phases_agreeing"] == 0 and report["first_difference"] is None
    assert {d["code"] for d in report["refusal"]} == {"S002"}
    assert any("`standoffs`" in d["message"] and "F1901R" in d["message"] for d in report["refusal"])
    # in text, how many phases agreed before the refusal
    bad = json.loads(json.dumps(record))
    bad[retreat + 1]["units"].append({"power": "narnia", "type": "army", "location": "par"})
    path.write_text(json.dumps(bad))
    code, out, err = _run("replay", STANDARD, str(path))
    assert code == 3 and f"{retreat} phases of the record agreed before this" in err, err
    code, out, _ = _run("replay", STANDARD, str(path), "--format", "json")
    assert code == 3 and json.loads(out)["phases_agreeing"] == retreat


def test_replay_import_needs_the_query(tmp_path: Path) -> None:
    code, out, err = _run("replay", STANDARD, str(GODIP_GAME), "--import", "no_such_query")
    assert code == 2 and "no_such_query" in err and "Traceback" not in err


def test_each_recorded_state_is_read_as_the_rules_write_it_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """`query normal_state` gives the same for the same state each time (unchecked, its own dice): a
    state of the record is read by it once, for its items written twice and as the next state compared."""
    import validator.api as api

    record = _record()
    rs = load_ruleset(STANDARD)
    read: list[Any] = []
    run = api.Ruleset.run

    def counted(self: Any, state: Any, query: str = "main", *args: Any, **kwargs: Any) -> Any:
        if query == "normal_state":
            read.append(state)
        return run(self, state, query, *args, **kwargs)
    monkeypatch.setattr(api.Ruleset, "run", counted)
    assert replay(rs, record) == (len(record) - 1, None)
    assert read == [{**s, "orders": s.get("orders", [])} for s in record]


@pytest.mark.parametrize("logged", [False, True])
def test_a_recorded_state_its_schema_refuses_is_said_as_its_schema_check_says_it(logged: bool) -> None:
    """A next state refused by the schema is said as the schema check of the state given says it,
    whether the state is played as given (its full check) or completed from the state computed first
    (a site's log: the check of what it gives, then the full check of the state completed)."""
    from validator.api import _named

    record = _as_a_site_logs_it(_record()) if logged else _record()
    bad = json.loads(json.dumps(record[2]))
    bad["units"][0]["type"] = 7
    rs = load_ruleset(STANDARD)
    with pytest.raises(PlayError) as info:
        replay(rs, [record[0], record[1], bad])
    said = rs.state_schema_errors({**bad, "orders": bad.get("orders", [])}, "<record 2>")
    assert said and info.value.diagnostics == _named(rs, said, {**bad, "orders": []}, "<record 2>")
    assert info.value.kind == "state" and info.value.agreed == 1


# Whole games of other programs' data: godip's records of games on the pure and ancient Mediterranean
# maps, each replayed under the rules on its map (an importer ruleset beside the record), with the
# number of phases that agree
GODIP_GAMES = {"pure": 9, "ancmed": 27}


@pytest.mark.parametrize("variant", sorted(GODIP_GAMES))
def test_godip_variant_game_replays_under_the_rules(variant: str) -> None:
    where = ROOT / "tests" / "cases" / "diplomacy" / "godip_games"
    code, out, err = _run("replay", str(where / f"{variant}_import.rules"), str(where / f"{variant}_game_1.txt"),
                          "--import", "godip_game", "--format", "json")
    assert code == 0, out + err
    report = json.loads(out)
    assert report["phases_agreeing"] == GODIP_GAMES[variant], report
    assert report["first_difference"] is None and report["refusal"] is None

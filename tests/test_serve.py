"""`ruleval serve`: the playground's endpoints over HTTP, without a browser (tests/test_serve_browser.py
drives the page itself). What the page sends is treated as a ruleset from a pull request would be:
bounded bodies, files by the bundle's listing only, confinement for what an edited ruleset reads,
the step budget for what it runs, a loopback address only."""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from test_writer_bugs import planted  # noqa: F401 (the fixture)
from validator.api import load_ruleset
from validator.core.exits import UsageError
from validator.tools import serve
from validator.tools.explain import explain_text
from validator.tools.textview import result_text

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "rulesets"


class Answer:
    def __init__(self, status: int, headers: dict[str, str], body: bytes):
        self.status, self.headers, self.body = status, headers, body

    @property
    def json(self) -> Any:
        return json.loads(self.body)


def call(srv: serve.PlaygroundServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None,
         raw: bytes | None = None) -> Answer:
    conn = http.client.HTTPConnection(*srv.server_address[:2], timeout=120)
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    sent = {"Content-Type": "application/json"} if data is not None else {}
    sent.update(headers or {})
    conn.request(method, path, body=data, headers=sent)
    resp = conn.getresponse()
    answer = Answer(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    conn.close()
    return answer


def example(name: str) -> str:
    return (EXAMPLES / name).read_text(encoding="utf-8")


# ---------------------------------------------------------------- the page and the listing


def test_the_page_and_its_files_are_served_from_the_package(server) -> None:
    page = call(server, "GET", "/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert b'<script src="/app.js"' in page.body
    assert "script-src 'self'" in page.headers["content-security-policy"]
    for path in ("/app.js", "/style.css"):
        got = call(server, "GET", path)
        assert got.status == 200 and got.body == (serve.STATIC / path.lstrip("/")).read_bytes()


def test_the_page_needs_nothing_from_elsewhere() -> None:
    # no CDN, no font, no script from the network: every reference is to the server itself
    files = [f for f in serve.STATIC.rglob("*") if f.is_file()]
    assert {"codemirror.js", "LICENSE"} <= {f.name for f in files}  # the editor is vendored, with its licence
    for f in files:
        text = f.read_text(encoding="utf-8")
        assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text), f.name
        assert not re.search(r"@import|url\(\s*[\"']?(https?:)?//", text), f.name
        assert "fetch(\"http" not in text and "fetch('http" not in text, f.name


def test_the_bundle_lists_rulesets_and_example_states(server) -> None:
    got = call(server, "GET", "/api/bundle").json
    on_disk = sorted(p.relative_to(ROOT / "rulesets").as_posix() for p in (ROOT / "rulesets").rglob("*.rules"))
    assert got["rulesets"] == on_disk
    assert got["examples"] and all("/examples/" in e and e.endswith(".json") for e in got["examples"])
    assert got["modes"]["his/his.rules"] == "exact"
    assert got["default"] == got["mains"]["diplomacy"] == "diplomacy/standard.rules"  # not all_hold.rules
    assert got["bases"]["diplomacy/ancmed.rules"] == "diplomacy/standard.rules"
    text = call(server, "GET", "/api/file?name=jomini/re.rules").json["text"]
    assert text == (ROOT / "rulesets" / "jomini" / "re.rules").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["../../etc/passwd", "jomini/../../pyproject.toml", "/etc/passwd",
                                  "..%2f..%2fpyproject.toml", "jomini/clauses.yaml", "jomini", "",
                                  "../schemas/jomini/state.schema.json", "jomini/re.rules%00"])
def test_files_outside_the_listing_are_refused(server, name: str) -> None:
    got = call(server, "GET", f"/api/file?name={name}")
    assert got.status == 404, got.body
    assert "text" not in got.json and "root:" not in got.body.decode()


def test_unknown_paths_are_404(server) -> None:
    for path in ("/../../etc/passwd", "/static/../serve.py", "/api/nothing", "/index.html/.."):
        assert call(server, "GET", path).status == 404


# ---------------------------------------------------------------- requests from elsewhere, and their size


def test_another_host_name_is_refused(server) -> None:
    # a page elsewhere that renames itself to this address (DNS rebinding) sends its own Host
    got = call(server, "GET", "/api/bundle", headers={"Host": "attacker.example:80"})
    assert got.status == 403
    assert call(server, "GET", "/api/bundle", headers={"Host": f"localhost:{server.server_address[1]}"}).status == 200


def test_posts_from_another_origin_or_not_json_are_refused(server) -> None:
    body = {"base": "jomini/re.rules"}
    assert call(server, "POST", "/api/check", body, {"Origin": "http://attacker.example"}).status == 403
    form = call(server, "POST", "/api/check", raw=b"base=jomini/re.rules",
                headers={"Content-Type": "application/x-www-form-urlencoded"})
    assert form.status == 415
    assert call(server, "POST", "/api/check", raw=b"[1, 2]").status == 400
    assert call(server, "POST", "/api/check", raw=b'{"base": NaN}').status == 400
    assert call(server, "POST", "/api/check", raw=b"\xff\xfe").status == 400


def test_an_oversized_body_is_refused_unread(server, monkeypatch: pytest.MonkeyPatch) -> None:
    # the server would wait for the body longer than the client waits for the answer: any answer is
    # one that did not wait for the body (no clock to read, so no false alarm on a loaded machine)
    monkeypatch.setattr(serve._Handler, "timeout", 600.0)
    conn = http.client.HTTPConnection(*server.server_address[:2], timeout=60)
    conn.putrequest("POST", "/api/run")
    conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(serve.MAX_BODY + 1))
    conn.endheaders()  # and no body: the answer must come without waiting for it
    try:
        resp = conn.getresponse()
    except TimeoutError:
        pytest.fail("no answer in 60 s to an oversized request whose body was never sent: the server waits for the body")
    assert resp.status == 413 and "larger" in json.loads(resp.read())["error"]
    conn.close()


def test_an_oversized_state_or_ruleset_is_refused(server) -> None:
    big_state = '{"units": [' + ", ".join(["1"] * 2_600_000) + "]}"  # 5.2 MB: under the body limit, over a state's
    got = call(server, "POST", "/api/run", {"base": "jomini/re.rules", "state": big_state})
    assert got.status == 413 and "state" in got.json["error"]
    got = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": "#" * 2_100_000})
    assert got.status == 413 and "ruleset" in got.json["error"]


def test_bad_fields_are_400_with_a_message(server) -> None:
    cases = [{"base": "../../etc/passwd"}, {"base": "jomini/re.rules", "text": 5},
             {"base": "jomini/re.rules", "state": "{}", "mode": "loaded"},
             {"base": "jomini/re.rules", "state": "{}", "args": "{"},
             {"base": "jomini/re.rules", "state": "{}", "mode": "dice", "dice": "six"},
             {"base": "jomini/re.rules", "state": "{}", "mode": "seed", "seed": "7"}]
    for body in cases:
        got = call(server, "POST", "/api/run", body)
        assert got.status == 400 and got.json["error"], (body, got.body)
    got = call(server, "POST", "/api/diff", {"base": "jomini/re.rules", "other": "/etc/passwd"})
    assert got.status == 400


# ---------------------------------------------------------------- check


def test_the_bundled_ruleset_checks_as_the_cli_does(server) -> None:
    got = call(server, "POST", "/api/check", {"base": "his/his.rules", "text": example("his/his.rules")}).json
    want = load_ruleset(ROOT / "rulesets" / "his" / "his.rules").diagnostics
    assert got["errors"] == sum(1 for d in want if d.is_error)
    assert [d["code"] for d in got["diagnostics"]] == [d.code for d in want]


def test_an_edit_gets_located_diagnostics_under_its_own_name(server) -> None:
    text = example("jomini/re.rules") + "\ndef broken = no_such_name + 1\n"
    got = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": text, "label": "mine.rules"}).json
    unknown = [d for d in got["diagnostics"] if d["code"] == "C001"]
    assert got["errors"] >= 1 and unknown, got
    assert unknown[0]["file"] == "mine.rules" and unknown[0]["line"] == text.count("\n")
    assert "no_such_name" in unknown[0]["message"] and "mine.rules:" in got["rendered"]
    assert "ruleval-serve-" not in json.dumps(got)  # the private copy's path is not shown


def test_an_edit_extends_its_neighbours(server) -> None:
    # an edited variant loads beside its base, so `extends "re.rules"` finds the bundled original
    text = 'extends "re.rules"\noverride allowance["infantry", "heavy"] cite "JOM-A1" = move(2, 2)\n'
    got = call(server, "POST", "/api/check", {"base": "jomini/am.rules", "text": text}).json
    assert got["errors"] == 0, got


@pytest.mark.parametrize("target", ["/etc/hostname", "../../../../../../etc/hostname", "../../../pyproject.toml",
                                    "bundled:../pyproject.toml", "bundled:jomini/../../README.md"])
def test_an_edit_reads_nothing_outside_the_bundle(server, target: str) -> None:
    text = f'import "{target}" as stolen\nquery main = stolen\n'
    got = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": text}).json
    refused = [d for d in got["diagnostics"] if d["code"] == "C007"]
    assert got["errors"] >= 1 and refused and refused[0]["line"] == 1, got
    assert "ruleval-serve-" not in json.dumps(got)  # the private copy's path is not shown


def test_an_edit_extends_nothing_outside_the_bundled_rulesets(server) -> None:
    # in a source or editable install the bundle is the checkout: `bundled:` stays in its rulesets/schemas
    got = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": 'extends "bundled:../pyproject.toml"\n'}).json
    assert [d["code"] for d in got["diagnostics"]] == ["C007"], got
    assert "build-system" not in json.dumps(got)


def test_a_run_away_edit_ends_at_the_step_budget(server, monkeypatch: pytest.MonkeyPatch) -> None:
    # what ends it is its step budget (E004, counted work), not the playground's clock: that is set past
    # what a loaded machine needs, under the client's own wait (test_a_runaway_run_... tests the clock)
    monkeypatch.setattr(serve, "REQUEST_SECONDS", 100.0)
    text = 'query main = len(fold(range(100000), [], fn(acc, i) => append(acc, i)))\n'
    answer = call(server, "POST", "/api/run", {"base": "jomini/re.rules", "text": text, "state": "{}"})
    assert answer.status == 200, answer.body
    got = answer.json
    assert got["ok"] is False and "E004" in {d["code"] for d in got["diagnostics"]}


# ---------------------------------------------------------------- run, pictures, explain, diff


def test_a_run_answers_as_the_api_and_draws_the_orders(server) -> None:
    state_text = example("diplomacy/examples/support_and_dislodgement.json")
    got = call(server, "POST", "/api/run", {"base": "diplomacy/standard.rules", "state": state_text}).json
    assert got["ok"], got
    want = load_ruleset(ROOT / "rulesets" / "diplomacy" / "standard.rules").run(json.loads(state_text))
    assert got["result"] == want and got["text"] == result_text(want, serve.TEXT_WIDTH)  # as `ruleval run` prints it
    svg = got["picture"]
    arrows = re.findall(r'<g class="arrow" data-status="(\w*)" data-stopped="(\w+)">', svg)
    # an arrow for every order that names a destination; each styled by the order's own status
    drawn = [o for o in want["orders"] if re.search(r" [-RSC] ", o["order"])]
    assert sorted(s for s, _ in arrows) == sorted(o["status"] for o in drawn)
    assert all((stopped == "true") == (status == "fails") for status, stopped in arrows)
    rings = re.findall(r'<g class="marker" data-at="(\w+)" data-text="dislodged">', svg)
    assert rings == [d["location"] for d in want["dislodged"]] and rings
    tokens = re.findall(r'<g class="token" data-at="([\w/]+)">', svg)
    assert sorted(tokens) == sorted(u["location"] for u in json.loads(state_text)["units"])


def test_an_exact_run_draws_its_distribution_as_bars(server) -> None:
    state_text = example("his/examples/one_interceptor.json")
    got = call(server, "POST", "/api/run", {"base": "his/his.rules", "state": state_text, "mode": "exact"}).json
    assert got["ok"] and got["result"]["exact"]
    svg = got["picture"]
    assert svg.count('<g class="bar">') == len(got["result"]["outcomes"])
    for o in got["result"]["outcomes"]:
        assert f">{o['probability']} (" in svg
    plain = call(server, "POST", "/api/run", {"base": "his/his.rules", "state": state_text, "mode": "seed", "seed": 7}).json
    assert plain["ok"] and plain["picture"] is None and plain["picture_note"]


def test_a_board_run_draws_the_ruleset_s_own_drawing_with_the_focus(server) -> None:
    state_text = example("jomini/examples/small.json")
    base = {"base": "jomini/re.rules", "state": state_text}
    first = call(server, "POST", "/api/run", base).json["picture"]
    focused = call(server, "POST", "/api/run", {**base, "focus": "C"}).json["picture"]
    assert first.count('class="hex"') == 30 and "<polyline" in first
    assert not first.startswith("<?xml")
    assert first != focused  # the rings of where the focus can go


def test_explain_gives_the_trace_of_the_cli(server) -> None:
    state_text = example("his/examples/one_interceptor.json")
    got = call(server, "POST", "/api/run", {"base": "his/his.rules", "state": state_text, "mode": "dice",
                                           "dice": "6,3,5,2,6,1,4", "explain": True}).json
    rs = load_ruleset(ROOT / "rulesets" / "his" / "his.rules")
    want = explain_text(rs.evaluate(json.loads(state_text), dice=[6, 3, 5, 2, 6, 1, 4], explain=True))
    assert got["ok"] and got["explain"] == want and want.strip()


def test_explain_follows_a_unit_as_the_cli_does(server, cli) -> None:
    """`unit` (as a player writes it) gives `explain --unit`'s text; a unit no decision is about says
    so; a `unit` that is not a text is a bad request (issue 44)."""
    state_text = example("diplomacy/examples/support_and_dislodgement.json")
    base = {"base": "diplomacy/standard.rules", "state": state_text, "explain": True}
    got = call(server, "POST", "/api/run", {**base, "unit": "A BUR"}).json
    want = cli("explain", str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), "--state",
               str(ROOT / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json"), "--unit", "A BUR")
    assert want.code == 0 and got["ok"] and got["explain"] + "\n" == want.out
    assert "the unit in BUR is dislodged  [DIP-P2]" in got["explain"].splitlines()
    # the place a picture draws a piece at names it as well (a click on the board sends it)
    assert call(server, "POST", "/api/run", {**base, "unit": "bur"}).json["explain"] == got["explain"]
    none = call(server, "POST", "/api/run", {**base, "unit": "A XYZ"}).json
    assert none["explain"] == "no traced decision is about `A XYZ` (read as `xyz`)"
    blank = call(server, "POST", "/api/run", {**base, "unit": "  "}).json  # no unit: the whole trace
    whole = cli("explain", str(ROOT / "rulesets" / "diplomacy" / "standard.rules"), "--state",
                str(ROOT / "rulesets" / "diplomacy" / "examples" / "support_and_dislodgement.json"))
    assert blank["explain"] + "\n" == whole.out and "because:" not in whole.out
    bad = call(server, "POST", "/api/run", {**base, "unit": ["A BUR"]})
    assert bad.status == 400 and "`unit` must be a text" in bad.json["error"]


def test_a_bad_state_is_located(server) -> None:
    got = call(server, "POST", "/api/run", {"base": "his/his.rules", "state": '{"units": [1, 2'}).json
    assert got["ok"] is False and got["diagnostics"][0]["code"].startswith("S")
    assert got["diagnostics"][0]["line"] == 1


def test_diff_finds_the_errata_and_nothing_between_equals(server) -> None:
    state_text = example("his/examples/one_interceptor.json")
    body = {"base": "his/his_threshold8.rules", "other": "his/his.rules", "state": state_text, "mode": "exact",
            "generate": 0}
    got = call(server, "POST", "/api/diff", body).json
    assert got["ok"] and got["differ"] == 1 and got["tried"] == 1 and "results differ" in got["text"]
    same = call(server, "POST", "/api/diff", {**body, "other": "his/his_threshold8.rules"}).json
    assert same["differ"] == 0 and "equivalent" in same["text"]
    nothing = call(server, "POST", "/api/diff", {**body, "state": "", "generate": 0}).json  # never an all-clear
    assert nothing["tried"] == 0 and nothing["text"].endswith("nothing was compared") and "equivalent" not in nothing["text"]
    too_many = call(server, "POST", "/api/diff", {**body, "generate": serve.MAX_GENERATE + 1})
    assert too_many.status == 400


def test_diff_over_generated_states_gives_the_figures(server) -> None:
    body = {"base": "his/his_threshold8.rules", "other": "his/his.rules", "mode": "exact", "generate": 4}
    got = call(server, "POST", "/api/diff", body).json
    assert got["ok"] and got["figures"]["share"]["of"] == got["tried"] == 4
    assert got["figures"]["share"]["count"] == got["differ"] and "states that differ:" in got["text"]


@pytest.mark.planted_writer_bug
@pytest.mark.usefixtures("planted")
def test_a_writer_s_bug_is_a_warning_of_the_answer_once_per_unit(server) -> None:
    """The request's process is forked with the plant (``test_writer_bugs.planted``): its runs are the
    reference's, and right, and the answer says the bug (I002) as a command does, each unit's once, under the
    name the page gave the ruleset."""
    from test_writer_bugs import ANSWER, RULES

    body = {"base": "jomini/re.rules", "text": RULES, "label": "mine.rules", "state": "{}"}
    got = call(server, "POST", "/api/run", body).json
    assert got["ok"] and got["result"] == ANSWER, got
    warned = [(w["code"], w["severity"], w["file"], w["line"]) for w in got["warnings"]]
    assert warned and len(warned) == len(set(warned)), warned
    assert {w[:3] for w in warned} == {("I002", "warning", "mine.rules")}, warned
    assert "the reference interpreter ran it instead" in got["warnings"][0]["help"]
    assert "ruleval-serve-" not in json.dumps(got)  # (the picture's note too: the copy's path is not shown)
    assert got["picture"] is None and "`jomini/re.playground.rules` has no `render` query" in got["picture_note"]
    diffed = call(server, "POST", "/api/diff", {**body, "other": "jomini/re.rules", "generate": 0}).json
    assert [w["code"] for w in diffed["warnings"]] == ["I002"] * len(diffed["warnings"]) != [], diffed
    for unplanted in (call(server, "POST", "/api/run", {**body, "text": RULES.replace("planted", "sown")}).json,
                      call(server, "POST", "/api/check", body).json):  # (nothing met; a check's own list says all)
        assert "warnings" not in unplanted, unplanted


def test_a_request_past_its_time_starts_no_more_runs(server, monkeypatch: pytest.MonkeyPatch) -> None:
    # a diff of many generated states ran every one of them, holding the playground all along
    monkeypatch.setattr(serve, "REQUEST_SECONDS", 0.2)
    body = {"base": "his/his_threshold8.rules", "other": "his/his.rules", "mode": "exact", "generate": serve.MAX_GENERATE}
    got = call(server, "POST", "/api/diff", body)
    assert got.status == 503 and "ran for more than 0 s" in got.json["error"], got.body
    monkeypatch.setattr(serve, "REQUEST_SECONDS", 30.0)
    again = call(server, "POST", "/api/diff", {**body, "generate": 2})  # the playground was let go
    assert again.status == 200 and again.json["tried"] == 2


# one run of a few million steps: bounded by the step budget, but it runs for seconds
RUNAWAY = "query main = fold(range(2400000), 0, fn(a, i) => a + i * i)\n"


def test_a_runaway_run_is_stopped_at_the_playgrounds_limit(server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: the limit stopped only new runs; one long run went on to its end, holding the playground."""
    monkeypatch.setattr(serve, "REQUEST_SECONDS", 0.5)
    got = call(server, "POST", "/api/run", {"base": "jomini/re.rules", "text": RUNAWAY, "state": "{}"})
    assert got.status == 503, got.body
    assert got.json["error"].startswith("the request ran for more than 0 s, the playground's limit for one request, "
                                        "and was stopped")
    assert not list(server.playground.runs.iterdir())  # its snapshot of the copy went with it


def test_a_long_request_does_not_delay_another(server, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 45: requests were answered one at a time; a second client waited 5 s, then was told to try again."""
    monkeypatch.setattr(serve, "REQUEST_SECONDS", 20.0)
    long: list[Answer] = []
    body = {"base": "diplomacy/standard.rules", "player": "heuristic", "games": serve.MAX_BALANCE_GAMES,
            "rounds": serve.MAX_BALANCE_ROUNDS}
    first = threading.Thread(target=lambda: long.append(call(server, "POST", "/api/balance", body)))
    first.start()
    runs = server.playground.runs  # (made by the first request's process: this may be the server's first)
    deadline = time.monotonic() + 120  # only a guard against a hang: the condition, not the clock, is awaited
    while not (runs.is_dir() and any(runs.iterdir())):  # the long request is being answered
        if not first.is_alive():
            pytest.fail(f"the long request ended before its run was seen: {long[0].status if long else 'no answer'}")
        if time.monotonic() > deadline:
            pytest.fail(f"the long request made no run in {runs} within 120 s")
        time.sleep(0.05)
    short = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": "query main = 1\n"})
    assert short.status == 200 and short.json["errors"] == 0
    assert first.is_alive() and not long  # answered while the other went on
    first.join()
    assert long[0].status in (200, 503), long[0].body


def test_a_request_beyond_the_workers_is_told_to_try_again(server, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(serve, "BUSY_WAIT", 0.1)
    body = {"base": "his/his.rules"}
    taken = 0
    try:
        while server.playground.workers.acquire(blocking=False):  # as many requests as it answers at once
            taken += 1
        busy = call(server, "POST", "/api/check", body)
    finally:
        for _ in range(taken):
            server.playground.workers.release()
    assert taken == serve.MAX_WORKERS
    assert busy.status == 503 and f"answering {serve.MAX_WORKERS} requests: try again" in busy.json["error"]
    assert call(server, "POST", "/api/check", body).status == 200


def test_balance_plays_the_shown_ruleset_and_draws_its_figures(server) -> None:
    body = {"base": "diplomacy/standard.rules", "player": "heuristic", "games": 2, "rounds": 1}
    got = call(server, "POST", "/api/balance", body).json
    assert "ok" in got, got  # (what the server said instead: a stop past REQUEST_SECONDS on a loaded machine)
    assert got["ok"] and got["figures"]["games"] == 2 and got["text"].startswith("2 games of diplomacy/standard.rules")
    assert got["svg"].lstrip().startswith("<?xml") and "<script" not in got["svg"]
    assert set(got["figures"]["sides"]) == {"austria", "england", "france", "germany", "italy", "russia", "turkey"}
    for bad in ({"games": 0}, {"games": serve.MAX_BALANCE_GAMES + 1}, {"rounds": True}, {"player": "../x"}):
        assert call(server, "POST", "/api/balance", {**body, **bad}).status == 400
    refused = call(server, "POST", "/api/balance", {**body, "base": "his/his.rules"})
    assert refused.status == 400 and "has no `query advance`" in refused.json["error"]


# ---------------------------------------------------------------- listening


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1", "::", "example.org"])
def test_a_non_loopback_address_is_refused(cli, host: str) -> None:
    out = cli("serve", "--host", host, "--port", "0")
    assert out.code == 2 and "U001" in out.err and "loopback" in out.err
    with pytest.raises(UsageError):
        serve.make_server(host, 0)


def test_loopback_addresses() -> None:
    assert all(serve.is_loopback(h) for h in ("127.0.0.1", "127.1.2.3", "::1", "[::1]", "localhost"))
    assert not any(serve.is_loopback(h) for h in ("0.0.0.0", "10.0.0.1", "::", "localhost.example", ""))


def test_a_port_in_use_is_a_usage_error(server) -> None:
    with pytest.raises(UsageError, match="cannot listen"):
        serve.make_server("127.0.0.1", server.server_address[1])


def test_the_private_copy_goes_with_the_server() -> None:
    srv = serve.make_server("127.0.0.1", 0)
    work = srv.playground.work
    assert (work / "ruleval.toml").is_file() and (work.stat().st_mode & 0o077) == 0
    srv.server_close()
    assert not work.exists()


def test_the_docs_show_the_real_view_and_limits() -> None:
    doc = (ROOT / "docs" / "playground.md").read_text(encoding="utf-8")
    view = {" ".join(line.split()) for line in (ROOT / "rulesets" / "diplomacy" / "view.yaml").read_text().splitlines()}
    block = re.search(r"```yaml\n(.*?)```", doc, flags=re.S)
    assert block is not None
    shown = [" ".join(line.split()) for line in block.group(1).splitlines() if line.strip()]
    assert shown and all(line in view for line in shown), [line for line in shown if line not in view]
    assert f"more than {serve.MAX_BODY // 1_000_000} MB is refused" in doc
    assert f"up to {serve.MAX_GENERATE} states" in doc and f"idle for {serve.SOCKET_TIMEOUT:.0f} s" in doc
    assert f"stopped after {serve.REQUEST_SECONDS:.0f} s" in doc and f"at most {serve.MAX_WORKERS} requests" in doc
    assert f"waits at most {serve.BUSY_WAIT:.0f} s" in doc


def test_quick_edits_of_one_size_are_each_checked_and_not_kept(server) -> None:
    from validator.lang import loader

    for name in ("aaa", "bbb", "ccc", "ddd", "eee"):
        got = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": f"query main = {name}\n"}).json
        assert [d["message"] for d in got["diagnostics"] if d["code"] == "C001"] == [f"unknown name `{name}`"]
    # each checked in a process of its own: the server keeps none of them
    assert not any(key.endswith("re.playground.rules") for key in loader._module_cache)


def _stopped_by(proc: Any, sig: int) -> tuple[str, str]:
    """The output of the server `proc` (started with `-X faulthandler`) once `sig` has stopped it. One
    that is still there 60 s later fails the test with where each of its threads was (faulthandler's
    dump on SIGABRT), rather than with a bare timeout that leaves the process behind."""
    import signal
    import subprocess

    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGABRT)
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
        pytest.fail(f"the server had not ended 60 s after {signal.Signals(sig).name}; its threads then:\n{err[-6000:]}")


def test_the_command_serves_until_interrupted() -> None:
    import signal
    import subprocess
    import sys

    # Ctrl-C as a shell's foreground job gets it: a test run started in the background (`pytest &` in a
    # script) ignores SIGINT, and its children would inherit that and never be interrupted
    proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "validator", "serve", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, line
        conn = http.client.HTTPConnection("127.0.0.1", int(found.group(1)), timeout=60)
        conn.request("GET", "/api/bundle")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        out, err = _stopped_by(proc, signal.SIGINT)
    assert proc.returncode == 0 and "Traceback" not in out + err, err


def test_sigterm_removes_the_private_copy_and_early_leavers_print_nothing(tmp_path: Path) -> None:
    import os
    import signal
    import socket
    import struct
    import subprocess
    import sys

    temp = tmp_path / "tmp"
    temp.mkdir()  # where the server makes its private copy (tempfile's folder)
    proc = subprocess.Popen([sys.executable, "-X", "faulthandler", "-m", "validator", "serve", "--port", "0"], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "TMPDIR": str(temp)})
    try:
        line = proc.stderr.readline() if proc.stderr else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert found, line
        address = ("127.0.0.1", int(found.group(1)))
        assert [p.name[:len("ruleval-serve-")] for p in temp.iterdir()] == ["ruleval-serve-"]
        for sent in (b"GET /api/bundle HTTP/1.1\r\nHost: 127.0.0.1\r\n",  # left in the middle of the headers
                     b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 50\r\n\r\n{",  # of the body
                     b"GET /api/bundle HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):  # before the answer
            sock = socket.create_connection(address, timeout=30)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # a reset, not a goodbye
            sock.sendall(sent)
            time.sleep(0.2)
            sock.close()
        conn = http.client.HTTPConnection(*address, timeout=60)
        conn.request("GET", "/api/bundle")
        assert conn.getresponse().status == 200  # the server went on
        conn.close()
    finally:
        out, err = _stopped_by(proc, signal.SIGTERM)
    assert proc.returncode == 0 and "Traceback" not in out + err, err
    assert list(temp.iterdir()) == []  # the private copy is gone


def test_the_ipv6_loopback_serves_too() -> None:
    try:
        srv = serve.make_server("::1", 0)
    except UsageError as exc:
        pytest.skip(f"no IPv6 loopback here: {exc}")
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        assert srv.url.startswith("http://[::1]:")
        conn = http.client.HTTPConnection("::1", srv.server_address[1], timeout=30)
        conn.request("GET", "/api/bundle")
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_client_that_stops_sending_is_let_go(server, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    monkeypatch.setattr(serve._Handler, "timeout", 1.0)
    # the client waits half the handler's default timeout, 15 times the 1 s set here: a close before
    # then is the handler's own timeout letting go, however loaded the machine, and not the default's
    wait = serve.SOCKET_TIMEOUT / 2
    with socket.create_connection(server.server_address[:2], timeout=wait) as sock:
        sock.sendall(b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 100\r\n\r\n{\"base\": ")  # and never the rest
        try:
            got = sock.recv(1000)
        except TimeoutError:
            pytest.fail(f"the server still held a client that stopped sending after {wait:g} s (its timeout: 1 s)")
        assert got == b""  # closed, without an answer
    assert call(server, "GET", "/api/bundle").status == 200  # and the server goes on


MAIN = {"diplomacy": "diplomacy/standard.rules", "his": "his/his.rules", "jomini": "jomini/re.rules"}


def test_every_example_state_runs_and_is_drawn(server) -> None:
    catalogue = call(server, "GET", "/api/bundle").json
    assert {name.split("/")[0] for name in catalogue["examples"]} == set(MAIN)
    for name in catalogue["examples"]:
        family = name.split("/")[0]
        text = call(server, "GET", f"/api/file?name={name}").json["text"]
        got = call(server, "POST", "/api/run", {"base": MAIN[family], "state": text,
                                               "mode": catalogue["modes"].get(MAIN[family], "plain")}).json
        assert got["ok"], (name, got.get("rendered"))
        assert got["picture"] and got["picture"].startswith("<svg"), (name, got.get("picture_note"))


def test_the_page_is_package_data() -> None:
    import fnmatch
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["validator.tools"]
    files = [p.relative_to(serve.STATIC.parent).as_posix() for p in serve.STATIC.rglob("*") if p.is_file()]
    assert {"static/index.html", "static/app.js", "static/style.css"} <= set(files)
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), (files, patterns)


def test_a_huge_size_in_a_drawing_is_no_server_error(server) -> None:
    # a drawing's width computed past what a float holds: drawn with the default width, not HTTP 500
    big = " * ".join(["1" + "0" * 59] * 6)
    text = 'extends "re.rules"\n' + (f'override query render(result, options) = {{"layout": "odd-q", '
                                         f'"hexes": [{{"label": "0101"}}], "links": [{{"a": "0101", "b": "0102", '
                                         f'"width": {big}}}]}}\n')
    got = call(server, "POST", "/api/run", {"base": "jomini/re.rules", "text": text,
                                            "state": example("jomini/examples/small.json")})
    assert got.status == 200 and got.json["ok"], got.body[:2000]
    assert "<svg" in got.json["picture"] or "<g" in got.json["picture"]


def test_where_there_is_no_fork_requests_are_answered_one_at_a_time(server, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.delattr(os, "fork")
    ok = call(server, "POST", "/api/check", {"base": "jomini/re.rules", "text": "query main = 1\n"})
    assert ok.status == 200 and ok.json["errors"] == 0
    monkeypatch.setattr(serve, "REQUEST_SECONDS", 0.2)
    body = {"base": "his/his_threshold8.rules", "other": "his/his.rules", "mode": "exact", "generate": serve.MAX_GENERATE}
    late = call(server, "POST", "/api/diff", body)  # no run started past the limit
    assert late.status == 503 and "ran for more than 0 s" in late.json["error"]
    monkeypatch.setattr(serve, "BUSY_WAIT", 0.1)
    with server.playground.lock:  # another request being answered
        busy = call(server, "POST", "/api/check", {"base": "his/his.rules"})
    assert busy.status == 503 and "busy" in busy.json["error"]


def test_an_argument_of_another_type_is_said_as_the_requests_args(server) -> None:
    # (S008: docs/diagnostics.md; tests/test_query_args.py has the types)
    text = 'ruleset t.typed "typed"\nquery q(n: int) = n == 3\n'
    got = call(server, "POST", "/api/run", {"base": "jomini/re.rules", "text": text, "state": "{}", "query": "q",
                                            "args": '["3"]'}).json
    assert not got["ok"], got
    [d] = got["diagnostics"]
    assert d["code"] == "S008" and d["file"] == "args" and d["pointer"] == "/0" and "`n`" in d["message"], d
    got = call(server, "POST", "/api/run", {"base": "jomini/re.rules", "text": text, "state": "{}", "query": "q",
                                            "args": "[3]"}).json
    assert got["ok"] and got["result"] is True, got

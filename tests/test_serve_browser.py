"""The playground in a real browser: Debian's Chromium, headless, driven by Selenium through Debian's
chromium-driver (`apt-get install -y chromium chromium-driver`; `.ci/run` installs them). The page
loads, an edit shows a diagnostic, a run shows its picture, and explain and diff fill their panes.
Skipped, with the reason, where no Chromium is installed."""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any, Iterator

import pytest

from validator.tools import serve

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
ROOT = Path(__file__).resolve().parent.parent

if CHROMIUM is None or DRIVER is None:
    pytest.skip("no Chromium and chromium-driver installed (apt-get install -y chromium chromium-driver)",
                allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed (pip install '.[test]')")

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

WAIT = 90  # seconds: a cold load of a large ruleset on a busy 2-core machine


@pytest.fixture(autouse=True)
def patient_server(monkeypatch: pytest.MonkeyPatch) -> None:
    """A request may take as long as the page is waited for: an exact diff of generated states takes
    seconds, many more on a loaded CI machine. The page's flows are tested here; the time limit of a
    request, in test_serve.py."""
    monkeypatch.setattr(serve, "REQUEST_SECONDS", float(WAIT))


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    srv = serve.make_server("127.0.0.1", 0)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    yield srv.url
    srv.shutdown()
    srv.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    os.environ["SE_OFFLINE"] = "true"  # Selenium's driver manager must not look anything up
    profile = tempfile.mkdtemp(prefix="ruleval-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage",
                 f"--user-data-dir={profile}", "--window-size=1400,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=DRIVER))
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def wait(driver: Any, condition: Any, what: str) -> Any:
    return WebDriverWait(driver, WAIT).until(condition, message=f"waited {WAIT} s for {what}")


def open_page(driver: Any, url: str) -> None:
    driver.get_log("browser")  # (read, hence emptied: a test asserts on its own page's messages only)
    driver.get(url)
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true", "the page")


def pick(driver: Any, ruleset: str, example: str | None = None) -> None:
    """Pick `ruleset` and wait until the page has loaded it: its text, its examples, its example state
    and its check (the last step of loading); then pick `example` and wait for its state."""
    # the page's status is written only by a check: emptied here, a "checked" can only be the picked
    # ruleset's own. (Picked after the default ruleset of the same family, every other sign was already
    # there, and a slow machine let the test set a state or click Run before the page had finished:
    # its own example state then replaced the test's.)
    picker = Select(driver.find_element(By.ID, "ruleset"))
    if picker.first_selected_option.get_attribute("value") != ruleset:  # (else no change, and no new check)
        driver.execute_script("document.getElementById('status').textContent = '';")
        picker.select_by_value(ruleset)
    source = (ROOT / "rulesets" / ruleset).read_text(encoding="utf-8")
    wait(driver, lambda d: d.find_element(By.ID, "status").text.startswith(("checked", "1 error", "2 error")),
         f"the check of the picked ruleset {ruleset}")
    assert driver.find_element(By.ID, "editor").get_attribute("value") == source
    family = ruleset.split("/")[0]
    examples = Select(driver.find_element(By.ID, "example")).options[1:]
    assert examples and all(o.get_attribute("value").startswith(family + "/") for o in examples), \
        [o.get_attribute("value") for o in examples]
    if example is not None:
        Select(driver.find_element(By.ID, "example")).select_by_value(example)
    text = (ROOT / "rulesets" / (example or "")).read_text(encoding="utf-8") if example else None
    wait(driver, lambda d: d.find_element(By.ID, "state").get_attribute("value").strip() and
         (text is None or d.find_element(By.ID, "state").get_attribute("value") == text), "the state")


def test_the_page_loads_the_bundle(browser: Any, url: str) -> None:
    open_page(browser, url)
    names = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "ruleset")).options]
    assert names == sorted(p.relative_to(ROOT / "rulesets").as_posix() for p in (ROOT / "rulesets").rglob("*.rules"))
    # the main ruleset of the largest family first (not the first name, all_hold.rules), in the editor
    assert Select(browser.find_element(By.ID, "ruleset")).first_selected_option.get_attribute("value") == \
        "diplomacy/standard.rules"
    shown = browser.find_element(By.ID, "editor").get_attribute("value")
    assert shown == (ROOT / "rulesets" / "diplomacy" / "standard.rules").read_text(encoding="utf-8")
    assert browser.find_elements(By.CSS_SELECTOR, ".CodeMirror .cm-keyword")  # highlighted by the vendored editor
    wait(browser, lambda d: d.find_element(By.ID, "status").text == "checked: no errors", "the first check")
    assert not [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def test_an_edit_shows_its_diagnostic(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "jomini/re.rules", "jomini/examples/small.json")
    browser.find_element(By.CSS_SELECTOR, ".CodeMirror").click()
    editor = browser.find_element(By.CSS_SELECTOR, ".CodeMirror textarea")  # where CodeMirror takes its keys
    editor.send_keys(Keys.CONTROL, Keys.END)
    editor.send_keys("\ndef broken = nowhere_defined + 1\n")
    rows = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#diagnostics .diag[data-code="C001"]'),
                "the diagnostic of the edit")
    assert "nowhere_defined" in rows[0].text and "jomini/re.rules:" in rows[0].text
    assert "error" in browser.find_element(By.ID, "status").text


def test_a_run_draws_the_orders_and_their_outcomes(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "diplomacy/standard.rules", "diplomacy/examples/support_and_dislodgement.json")
    browser.find_element(By.ID, "run").click()
    arrows = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg g.arrow"), "the arrows")
    statuses = sorted(a.get_attribute("data-status") for a in arrows)
    assert "fails" in statuses and "succeeds" in statuses
    assert browser.find_elements(By.CSS_SELECTOR, '#picture svg g.arrow[data-stopped="true"] line.stop')
    assert [m.get_attribute("data-at") for m in browser.find_elements(By.CSS_SELECTOR, "#picture svg g.marker")] == ["bur"]
    assert browser.find_element(By.ID, "picture").is_displayed()
    assert "orders:" in browser.find_element(By.ID, "result").get_attribute("textContent")
    keep_screenshot(browser, "family_diplomacy")
    # a click on a piece explains it alone, as `explain --unit` does (issue 44)
    token = browser.find_element(By.CSS_SELECTOR, '#picture svg g.token[data-at="par"]')
    token.click()
    told = wait(browser, lambda d: d.find_element(By.ID, "trace").is_displayed()
                and d.find_element(By.ID, "trace").text, "the story of the clicked unit").splitlines()
    assert browser.find_element(By.ID, "unit").get_attribute("value") == "par"
    assert told[0] == "the unit in PAR moves  [DIP-P2]" and "because:" in told
    # ... or one written in the field
    unit = browser.find_element(By.ID, "unit")
    unit.clear()
    unit.send_keys("A BUR")
    browser.find_element(By.ID, "explain").click()
    wait(browser, lambda d: d.find_element(By.ID, "trace").text.startswith("the unit in BUR is dislodged  [DIP-P2]"),
         "the story of the written unit")


def test_an_exact_run_shows_its_distribution(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "his/his.rules", "his/examples/one_interceptor.json")
    assert Select(browser.find_element(By.ID, "mode")).first_selected_option.get_attribute("value") == "exact"
    browser.find_element(By.ID, "run").click()
    bars = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg g.bar"), "the bars")
    result = browser.find_element(By.ID, "result").get_attribute("textContent")
    assert result.split()[1] == "outcomes" and len(bars) == int(result.split()[0])  # `N outcomes over ...`, as the CLI says
    keep_screenshot(browser, "family_his")


def test_the_board_explain_and_diff(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "jomini/errata_heavy_infantry.rules", "jomini/examples/small.json")
    browser.find_element(By.ID, "run").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg polygon.hex"), "the board")
    assert browser.find_elements(By.CSS_SELECTOR, "#picture svg polyline")
    keep_screenshot(browser, "family_jomini")
    browser.find_element(By.ID, "explain").click()
    wait(browser, lambda d: d.find_element(By.ID, "trace").is_displayed()
         and d.find_element(By.ID, "trace").text.strip(), "the trace")
    # diff against the ruleset it extends, by default
    assert Select(browser.find_element(By.ID, "other")).first_selected_option.get_attribute("value") == "jomini/re.rules"
    Select(browser.find_element(By.ID, "other")).select_by_value("jomini/re.rules")
    generate = browser.find_element(By.ID, "generate")
    generate.clear()
    generate.send_keys("30")
    browser.find_element(By.ID, "diff").click()
    text = wait(browser, lambda d: d.find_element(By.ID, "difference").is_displayed()
                and d.find_element(By.ID, "difference").text, "the diff")
    assert "tried" in text and "results differ" in text and "/moves/0/allowance" in text


def test_an_opened_file_is_checked_under_its_name(browser: Any, url: str, tmp_path: Path) -> None:
    open_page(browser, url)
    pick(browser, "jomini/am.rules", "jomini/examples/small.json")
    mine = tmp_path / "my_variant.rules"
    mine.write_text('extends "re.rules"\noverride allowance["infantry", "heavy"] cite "JOM-A1" = move(2, 2)\n'
                    "def unused_thing = missing_name\n", encoding="utf-8")
    browser.find_element(By.ID, "open").send_keys(str(mine))
    rows = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, '#diagnostics .diag[data-code="C001"]'),
                "the diagnostic of the opened file")
    assert rows[0].text.startswith("my_variant.rules:3:") and "missing_name" in rows[0].text
    assert browser.find_element(By.ID, "editor").get_attribute("value") == mine.read_text(encoding="utf-8")


# ---------------------------------------------------------------- boards, projects, screenshots


def keep_screenshot(driver: Any, name: str, element: Any = None) -> None:
    from screens import keep

    keep(name, driver.get_screenshot_as_png() if element is None else element.screenshot_as_png)


def set_state(driver: Any, text: str) -> None:
    driver.execute_script("document.getElementById('example').value = ''; document.getElementById('state').value = arguments[0];",
                          text)


def _one_ruleset_a_map() -> list[str]:
    """A Diplomacy ruleset for each bundled map: the one that imports it (the standard rules for the
    standard map, and each imported map's variant)."""
    import re

    seen: dict[str, str] = {}
    for p in sorted((ROOT / "rulesets" / "diplomacy").glob("*.rules")):
        found = re.search(r'^import "([^"]+)" as map', p.read_text(encoding="utf-8"), re.M)
        if found and found.group(1) not in seen:
            seen[found.group(1)] = f"diplomacy/{p.name}"
    return sorted(seen.values())


@pytest.mark.slow
@pytest.mark.parametrize("ruleset", _one_ruleset_a_map())
def test_each_diplomacy_map_is_drawn_with_its_own_board(browser: Any, url: str, ruleset: str) -> None:
    """Every bundled Diplomacy map, run in the page on one of its generated states, draws its own
    provinces (not the standard board's) with the state's units; the picture is kept as an artefact."""
    import json

    from validator import load_ruleset
    from validator.tools.errata import generator_state

    rs = load_ruleset(ROOT / "rulesets" / ruleset)
    state = rs.run(generator_state(rs), query="generate", args=[2], seed=2, validate=False)
    open_page(browser, url)
    pick(browser, ruleset)
    set_state(browser, json.dumps(state))
    browser.find_element(By.ID, "run").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg g.area")
         or d.find_element(By.ID, "status").get_attribute("class") == "error", "the board or the run's failure")
    areas = browser.find_elements(By.CSS_SELECTOR, "#picture svg g.area")
    assert areas, browser.find_element(By.ID, "status").text
    assert sorted(a.get_attribute("data-area") for a in areas) == sorted(rs.program.entry.data["map"].value["provinces"])
    tokens = browser.find_elements(By.CSS_SELECTOR, "#picture svg g.token")
    assert sorted(t.get_attribute("data-at") for t in tokens) == sorted(u["location"] for u in state["units"])
    keep_screenshot(browser, "map_" + ruleset.split("/")[1].removesuffix(".rules"),
                    browser.find_element(By.CSS_SELECTOR, "#picture svg"))


PROJECTS = {"combat_table": ("skirmish.rules", "states/two_to_one.json", "#picture svg g.bar"),
            "threefold_map": ("threefold.rules", "states/spring.json", "#picture svg g.area"),
            "his_errata": ("errata.rules", "states/one_interceptor.json", "#picture svg g.bar")}


@pytest.mark.parametrize("project", sorted(PROJECTS))
def test_a_designer_s_project_opens_runs_draws_and_diffs_in_the_page(browser: Any, project: str) -> None:
    """`ruleval serve PATH` on each rebuilt designer project: its main ruleset is offered first with
    its own states, the run is drawn, the diff against its base summarised; a screenshot is kept."""
    ruleset, state, drawn = PROJECTS[project]
    srv = serve.make_server("127.0.0.1", 0, project=ROOT / "tests" / "projects" / project)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        open_page(browser, srv.url)
        assert Select(browser.find_element(By.ID, "ruleset")).first_selected_option.get_attribute("value") == ruleset
        assert browser.find_element(By.ID, "project").text == f"project: {project}"
        wait(browser, lambda d: d.find_element(By.ID, "status").text == "checked: no errors", "the check")
        assert Select(browser.find_element(By.ID, "example")).first_selected_option.get_attribute("value") == state
        browser.find_element(By.ID, "run").click()
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, drawn), "the picture")
        generate = browser.find_element(By.ID, "generate")
        generate.clear()
        generate.send_keys("10")
        browser.find_element(By.ID, "diff").click()
        wait(browser, lambda d: d.find_element(By.ID, "diff-summary").text
             or d.find_element(By.ID, "status").get_attribute("class") == "error", "the diff's summary or its failure")
        summary = browser.find_element(By.ID, "diff-summary").text
        assert summary.startswith("tried "), browser.find_element(By.ID, "status").text
        browser.find_element(By.CSS_SELECTOR, '#tabs button[data-tab="picture"]').click()
        keep_screenshot(browser, f"project_{project}")
        # any file of the folder opens in the editor, highlighted as what it is
        Select(browser.find_element(By.ID, "file")).select_by_value("states/" + state.split("/")[-1])
        wait(browser, lambda d: d.find_element(By.ID, "editor").get_attribute("value") ==
             (ROOT / "tests" / "projects" / project / state).read_text(encoding="utf-8"), "the state file in the editor")
        assert not [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
    finally:
        srv.shutdown()
        srv.server_close()

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
    driver.get(url)
    wait(driver, lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "true", "the page")


def pick(driver: Any, ruleset: str, example: str | None = None) -> None:
    Select(driver.find_element(By.ID, "ruleset")).select_by_value(ruleset)
    family = ruleset.split("/")[0]
    wait(driver, lambda d: all(o.get_attribute("value").startswith(family + "/") for o in
                               Select(d.find_element(By.ID, "example")).options[1:]) and
         len(Select(d.find_element(By.ID, "example")).options) > 1, f"the examples of {family}")
    if example is not None:
        Select(driver.find_element(By.ID, "example")).select_by_value(example)
    text = (ROOT / "rulesets" / (example or "")).read_text(encoding="utf-8") if example else None
    wait(driver, lambda d: d.find_element(By.ID, "state").get_attribute("value").strip() and
         (text is None or d.find_element(By.ID, "state").get_attribute("value") == text), "the state")
    wait(driver, lambda d: d.find_element(By.ID, "status").text.startswith(("checked", "1 error", "2 error")),
         "the check of the picked ruleset")


def test_the_page_loads_the_bundle(browser: Any, url: str) -> None:
    open_page(browser, url)
    names = [o.get_attribute("value") for o in Select(browser.find_element(By.ID, "ruleset")).options]
    assert names == sorted(p.relative_to(ROOT / "rulesets").as_posix() for p in (ROOT / "rulesets").rglob("*.rules"))
    shown = browser.find_element(By.ID, "editor").get_attribute("value")
    assert shown == (ROOT / "rulesets" / names[0]).read_text(encoding="utf-8")
    wait(browser, lambda d: d.find_element(By.ID, "status").text == "checked: no errors", "the first check")
    assert not [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]


def test_an_edit_shows_its_diagnostic(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "jomini/re.rules", "jomini/examples/small.json")
    editor = browser.find_element(By.ID, "editor")
    editor.click()
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


def test_an_exact_run_shows_its_distribution(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "his/his.rules", "his/examples/one_interceptor.json")
    assert Select(browser.find_element(By.ID, "mode")).first_selected_option.get_attribute("value") == "exact"
    browser.find_element(By.ID, "run").click()
    bars = wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg g.bar"), "the bars")
    result = browser.find_element(By.ID, "result").get_attribute("textContent")
    assert len(bars) == result.count("probability")


def test_the_board_explain_and_diff(browser: Any, url: str) -> None:
    open_page(browser, url)
    pick(browser, "jomini/errata_heavy_infantry.rules", "jomini/examples/small.json")
    browser.find_element(By.ID, "run").click()
    wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "#picture svg polygon.hex"), "the board")
    assert browser.find_elements(By.CSS_SELECTOR, "#picture svg polyline")
    browser.find_element(By.ID, "explain").click()
    wait(browser, lambda d: d.find_element(By.ID, "trace").is_displayed()
         and d.find_element(By.ID, "trace").text.strip(), "the trace")
    assert Select(browser.find_element(By.ID, "other")).first_selected_option.get_attribute("value") == "jomini/am.rules"
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

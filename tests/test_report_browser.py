"""The class report of a real graded batch (conftest's graded_class, 62 students) opened in a real
headless browser: Debian's Chromium driven through its own chromedriver by selenium (WebDriver).
Never a browser a tool downloads at run time: .ci/run installs the distribution's packages."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter

import pytest

CHROMIUM, CHROMEDRIVER = shutil.which("chromium"), shutil.which("chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run", "--window-size=1200,2000"]


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    if not (CHROMIUM and CHROMEDRIVER):
        message = "Debian's chromium and chromium-driver are needed (.ci/run installs them)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={tmp_path_factory.mktemp('chromium-profile')}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL", "performance": "ALL"})
    # Both paths given: selenium neither looks for nor downloads a driver or a browser.
    driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def opened(graded_class, browser):
    out, _ = graded_class
    done = subprocess.run([sys.executable, "-m", "grader", "report", str(out), "--with-students"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    browser.get("about:blank")
    browser.get_log("performance"), browser.get_log("browser")   # drop what the new tab page did
    browser.get((out / "report.html").as_uri())
    return out, browser


def test_the_page_loads_without_console_errors_or_network_requests(opened):
    _, browser = opened
    assert browser.title.startswith("Class report: ")
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    requested = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] == "Network.requestWillBeSent":
            requested.append(message["params"]["request"]["url"])
    assert requested and all(url.startswith("file://") for url in requested), requested   # the page itself only


def test_every_plot_is_present_and_labelled(opened):
    from selenium.webdriver.common.by import By

    _, browser = opened
    plots = browser.find_elements(By.CSS_SELECTOR, "figure.plot svg[role=img]")
    ids = {plot.find_element(By.XPATH, "..").get_attribute("id") for plot in plots}
    assert ids >= {"plot-scores", "plot-task-detach", "plot-task-tape", "plot-status", "plot-items",
                   "plot-misconceptions", "plot-runtime"}
    for plot in plots:
        title_id, desc_id = plot.get_attribute("aria-labelledby").split()
        title = browser.find_element(By.ID, title_id).get_attribute("textContent")
        desc = browser.find_element(By.ID, desc_id).get_attribute("textContent")
        assert len(title) > 5 and len(desc) > 30, (title, desc)
        assert plot.size["width"] > 300 and plot.size["height"] > 100   # drawn, not collapsed
        assert plot.find_elements(By.TAG_NAME, "text"), "axes and values are labelled in text"


def test_the_misconception_chart_lists_the_fixtures_misconceptions_with_their_counts(opened):
    from selenium.webdriver.common.by import By

    out, browser = opened
    expected: Counter = Counter()
    for path in (out / "results").glob("*.json"):
        document = json.loads(path.read_text())
        if document["error"] is None:
            expected.update({s["feedback"]["misconception"] for s in document["scenarios"]
                             if s["status"] != "passed" and s["feedback"]["misconception"]})
    bars = browser.find_elements(By.CSS_SELECTOR, "#plot-misconceptions rect[data-label]")
    shown = {bar.get_attribute("data-label"): int(bar.get_attribute("data-value")) for bar in bars}
    assert shown == dict(expected) and len(shown) >= 10
    # Each fixture is in the class twice (the Canvas and Moodle copies add one of two of them).
    detach = misconception_of(out, "detach_returns_self-a", "d2l_detach_dz_dx")
    assert shown[detach] >= 4
    visible = {element.text for element in browser.find_elements(By.CSS_SELECTOR, "#plot-misconceptions text")}
    leak = misconception_of(out, "stop_gradient_identity-a", "stop_gradient_on_tape")
    assert shown[leak] >= 2                                   # each fixture is there twice
    labels = [text.rstrip("…").rstrip() for text in visible if len(text) > 20]
    assert sum(any(label.startswith(text) for label in shown) for text in labels) >= 10  # the bars are labelled


def misconception_of(out, student: str, scenario: str) -> str:
    document = json.loads((out / "results" / f"{student}.json").read_text())
    return next(s["feedback"]["misconception"] for s in document["scenarios"] if s["id"] == scenario)


def test_the_students_table_sorts_and_links(opened):
    from selenium.webdriver.common.by import By

    out, browser = opened
    table = browser.find_element(By.ID, "table-students")
    column = "return Array.from(arguments[0].tBodies[0].rows, r => r.cells[arguments[1]].getAttribute('data-value')" \
             " || r.cells[arguments[1]].textContent)"
    ids = browser.execute_script(column, table, 0)
    assert ids == sorted(ids) and len(ids) == 62
    score_header = table.find_elements(By.CSS_SELECTOR, "thead th button")[2]
    assert score_header.text == "score"
    score_header.click()
    scores = [float(value) for value in browser.execute_script(column, table, 2)]
    assert scores == sorted(scores) and scores[0] == 0 and scores[-1] == 100
    link = table.find_element(By.LINK_TEXT, "ref-a").get_attribute("href")
    assert link == (out / "students" / "ref-a.html").as_uri()


def test_a_screenshot_is_taken(opened, tmp_path):
    _, browser = opened
    browser.execute_script("window.scrollTo(0, 0)")
    shot = tmp_path / "report.png"
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


FITS = """
const problems = [];
const root = document.documentElement;
if (root.scrollWidth > root.clientWidth) problems.push('the page scrolls sideways: ' + root.scrollWidth);
document.querySelectorAll('div.wide, table, figure').forEach(function (element) {
  if (element.scrollWidth > element.clientWidth + 1 || element.getBoundingClientRect().right > root.clientWidth + 1)
    problems.push((element.id || element.firstElementChild.id) + ' is wider than the window: ' + element.scrollWidth);
});
document.querySelectorAll('figure.plot svg').forEach(function (svg) {
  const box = svg.getBoundingClientRect();
  svg.querySelectorAll('text').forEach(function (text) {
    const r = text.getBoundingClientRect();
    if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1)
      problems.push(svg.parentNode.id + ': "' + text.textContent.slice(0, 40) + '" runs past the plot');
  });
});
return problems;
"""


@pytest.mark.parametrize("width", [1280, 800])
def test_every_table_and_plot_fits_the_window_without_scrolling_sideways(opened, width):
    from selenium.webdriver.common.by import By

    out, browser = opened
    browser.set_window_size(width, 1000)
    assert browser.execute_script("return window.innerWidth") == width
    assert browser.execute_script(FITS) == []
    # The misconceptions' bars keep most of the plot's width, and every label is there whole.
    plot = browser.find_element(By.CSS_SELECTOR, "#plot-misconceptions svg")
    axis = plot.find_elements(By.TAG_NAME, "line")[-1]
    length = float(axis.get_attribute("x2")) - float(axis.get_attribute("x1"))
    assert length >= 0.6 * float(plot.get_dom_attribute("width"))
    bars = plot.find_elements(By.CSS_SELECTOR, "rect[data-label]")
    labels = [text.get_attribute("textContent") for text in plot.find_elements(By.TAG_NAME, "text")
              if text.find_elements(By.TAG_NAME, "tspan")]
    assert labels == [bar.get_attribute("data-label") for bar in bars]
    for page in ("ref-a", "leeann_777", "broken"):   # the students' pages too
        browser.get((out / "students" / f"{page}.html").as_uri())
        assert browser.execute_script(FITS) == [], page
    browser.get((out / "report.html").as_uri())

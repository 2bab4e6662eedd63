"""The HTML report in a real browser: hostile text stays text, nothing is fetched, tables sort.

Mirrors porter_ext/report/html.py. The report is built through the report model and
written with `write_report`, exactly as `%port report -o` and `porter run` write it.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from porter_ext.report import write_report
from tests.browser.support import PageLog, offline, save_screenshot
from tests.ui.entries import EVIL, IMG, SCRIPT, TICKS, demo_report

pytestmark = pytest.mark.browser


def open_report(page, page_log: PageLog, path: Path, *, timeout: float = 30_000) -> float:
    """Open a report offline; returns the seconds until the load event."""
    offline(page, page_log)
    start = time.perf_counter()
    page.goto(path.as_uri(), wait_until="load", timeout=timeout)
    return time.perf_counter() - start


def open_tables(page, cell: str = "#cell-0") -> None:
    """Open a cell's tables, folded under one summary line, as a reader does."""
    page.locator(f"{cell} > details.tables > summary").click()


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory) -> Path:
    return write_report(demo_report(EVIL), tmp_path_factory.mktemp("report") / "report.html")


def test_hostile_text_is_shown_as_text_and_never_runs(page, page_log, hostile_report):
    open_report(page, page_log, hostile_report)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert page_log.dialogs == []
    assert page_log.errors == []
    assert page.locator('img[src="x"]').count() == 0
    assert page.locator("script").count() == 2  # the report's own: metadata and sorting
    open_tables(page)
    text = page.locator("body").inner_text()
    for literal in (SCRIPT, IMG, "a|b", TICKS):
        assert literal in text, literal
    # in the notebook name, the cell source, a call name, an exception message, a device
    assert f"porting{EVIL}.ipynb" in page.title()
    assert f"z = torch.zeros(4)  # {EVIL}" in text
    assert f"torch.zeros{EVIL}" in text
    assert f"no CUDA here{EVIL}" in text
    assert f"cpu:1{EVIL}" in text
    save_screenshot(page.screenshot(), "report.png")


def test_every_section_is_there(page, page_log, hostile_report):
    open_report(page, page_log, hostile_report)
    for selector in ("#summary", "#environment", "#cells", "#findings"):
        assert page.locator(selector).is_visible(), selector
    first = page.locator("#cell-0")
    open_tables(page)
    for selector in ("table.calls", "table.numerics", "table.devices"):
        assert first.locator(selector).count() == 1, selector
    headings = first.locator("h4").all_inner_texts()
    assert headings[:4] == ["Port plan", "Findings", "Calls", "Replays"]
    assert {"Numerics", "Devices"} <= set(headings)
    # the mismatch on jax is plotted, inline
    plot = first.locator("figure img").first
    assert plot.get_attribute("src").startswith("data:image/png;base64,")
    assert plot.evaluate("img => img.naturalWidth") > 0


def test_no_request_leaves_the_file(page, page_log, hostile_report):
    open_report(page, page_log, hostile_report)
    open_tables(page)
    page.locator("#cell-0 table.numerics th").first.click()
    assert page_log.blocked == []
    assert page_log.requests, "the page itself should have been requested"
    assert all(url.startswith(("file:", "data:")) for url in page_log.requests)


def test_clicking_a_header_sorts_the_table(page, page_log, hostile_report):
    open_report(page, page_log, hostile_report)
    open_tables(page)
    table = page.locator("#cell-0 table.numerics")
    header = table.locator("th", has_text="Max abs err")
    column = 5  # 1-based: output, backend, shape, dtype, max abs err

    def values() -> list[float]:
        return [float(v) for v in table.locator(f"tbody td:nth-child({column})").all_inner_texts()]

    before = values()
    assert before != sorted(before)
    header.click()
    assert header.get_attribute("aria-sort") == "ascending"
    assert values() == sorted(before)
    header.click()
    assert header.get_attribute("aria-sort") == "descending"
    assert values() == sorted(before, reverse=True)


def test_the_status_filter_shows_findings_only(page, page_log, hostile_report):
    open_report(page, page_log, hostile_report)
    assert page.locator("#status-filter").is_visible()
    page.select_option("#status-filter", "findings", timeout=2_000)
    rows = page.locator("#cell-0 table.calls tbody tr:visible td:nth-child(3)")
    statuses = rows.all_inner_texts()
    assert statuses and "standard" not in statuses
    statuses = page.locator(
        "#cell-0 table.calls tbody tr:visible td:nth-child(3)"
    ).all_inner_texts()
    assert statuses and "standard" not in statuses


def test_a_500_cell_report_opens_in_seconds(page, page_log, tmp_path):
    start = time.perf_counter()
    path = write_report(demo_report(extra_cells=498), tmp_path / "big.html")
    written = time.perf_counter() - start
    loaded = open_report(page, page_log, path, timeout=30_000)
    assert page.locator("#cell-499").count() == 1
    open_tables(page)
    page.locator("#cell-0 table.calls th").first.click()  # the script is live
    size = path.stat().st_size / 1e6
    print(f"\n500-cell report: {size:.1f} MB written in {written:.2f} s, loaded in {loaded:.2f} s")


def test_readme_screenshot_of_a_clean_report(page, page_log, tmp_path):
    path = write_report(demo_report(extra_cells=3), tmp_path / "porting.html")
    open_report(page, page_log, path)
    height = min(page.evaluate("document.body.scrollHeight"), 2000)
    image = page.screenshot(full_page=True, clip={"x": 0, "y": 0, "width": 1280, "height": height})
    save_screenshot(image, "report-clean.png", docs_name="report.png")


def test_the_port_plan_comes_first_and_its_links_open_the_cells_tables(page, page_log, tmp_path):
    path = write_report(demo_report(extra_cells=3), tmp_path / "plan.html")
    open_report(page, page_log, path)
    plan = page.locator("#plan")
    assert plan.is_visible()
    top = page.evaluate(
        "['plan', 'summary', 'cells'].map(id => document.getElementById(id)"
        ".getBoundingClientRect().top)"
    )
    assert top == sorted(top)
    items = plan.locator("ol.plan > li")
    assert items.count() >= 1
    assert (
        "needs you" in items.first.inner_text() or "fixed automatically" in items.first.inner_text()
    )
    tables = page.locator("#cell-0 > details")
    assert tables.evaluate("d => d.open") is False  # folded until asked for
    assert not page.locator("#cell-0 table.calls").is_visible()
    plan.locator('a[href="#cell-0"]').first.click()
    assert tables.evaluate("d => d.open") is True
    assert page.locator("#cell-0 table.calls").is_visible()
    page.evaluate("window.scrollTo(0, 0)")
    save_screenshot(page.screenshot(), "report-plan.png")

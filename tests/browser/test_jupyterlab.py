"""The comparison widget in a real JupyterLab: open a notebook, run it, read the widget.

Mirrors porter_ext/ui/widget.py. A private `jupyter lab` (tests/browser/support.py's
`lab_server`) leaves the data directories alone, so that ipywidgets' prebuilt extension
in the environment's share/jupyter is found; the kernel imports tests.ui.entries.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import (
    OPENED,
    RUN_ALL,
    LabServer,
    lab_server,
    save_screenshot,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "porter_demo.ipynb"
PORT_CELL = "%%port\nimport torch\nx = torch.ones(3, 4)\ny = x.sum(1)"
TABS_NOTEBOOK = "widget_tabs.ipynb"
#: a widget over a cell with replays (a mismatch with its histogram, a wrong device)
TABS_CELL = (
    "from porter_ext.ui import CellWidget\n"
    "from tests.ui.entries import demo_cell\n"
    "CellWidget(demo_cell())"
)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("lab")
    (base / "root").mkdir()
    write_notebook(base / "root" / NOTEBOOK, "%load_ext porter_ext", PORT_CELL)
    write_notebook(base / "root" / TABS_NOTEBOOK, TABS_CELL)
    with lab_server(base) as server:
        yield server


def open_and_run(page, lab: LabServer, notebook: str, text: str) -> tuple[float, float, Any]:
    """Open a notebook, run all its cells, wait for a widget showing `text`; returns the
    seconds to open, the seconds to run, and the widget."""
    start = time.perf_counter()
    page.goto(lab.lab_url(notebook), timeout=60_000)
    page.wait_for_function(OPENED, timeout=60_000)
    opened = time.perf_counter() - start
    page.evaluate(RUN_ALL)
    widget = page.locator(".jp-OutputArea-output .jupyter-widgets", has_text=text).first
    fallback = page.locator(".jp-OutputArea-output .porter-cell").first
    widget.or_(fallback).wait_for(state="visible", timeout=30_000)
    if not widget.is_visible():
        pytest.fail(
            "the output shows porter's HTML fallback, not the widget: %%port must display "
            "porter_ext.ui.widget.show(result.entry) (or a bundle from ui.widget.mimebundle)"
        )
    return opened, time.perf_counter() - start - opened, widget


def test_the_port_cell_shows_the_widget(page, page_log, lab):
    start = time.perf_counter()
    opened, ran, widget = open_and_run(page, lab, NOTEBOOK, "Tensor.sum")

    # the widget, not the HTML fallback, is what the output shows
    output = page.locator(".jp-OutputArea", has=widget)
    assert output.locator(".porter-cell").count() == 0
    assert "porter: 2 findings in 2 array calls" in output.inner_text()
    tabs = output.locator(".lm-TabBar-tabLabel").all_inner_texts()
    assert tabs == ["Calls", "Numerics", "Devices", "Side by side"]
    # the cell's port plan opens the widget, above the tabs
    plan = output.locator(".porter-plan")
    assert plan.is_visible() and "Tensor.sum → xp.sum(x, axis=1)" in plan.inner_text()
    tab_bar = output.locator(".lm-TabBar").first
    assert plan.bounding_box()["y"] < tab_bar.bounding_box()["y"]
    save_screenshot(widget.screenshot(), "widget-plan.png")

    # click the Tensor.sum row: its suggestion and its source line appear
    select = output.locator("select").first
    labels = select.evaluate("s => [...s.options].map(o => o.text)")
    select.select_option(index=next(i for i, t in enumerate(labels) if "Tensor.sum" in t))
    detail = output.locator(".widget-html", has_text="Use instead")
    detail.get_by_text("xp.sum(x, axis=1)").wait_for(timeout=10_000)
    assert "3 | y = x.sum(1)" in detail.inner_text()
    assert page_log.errors == []
    assert all(url.startswith((lab.url, "data:", "blob:")) for url in page_log.requests)

    save_screenshot(page.screenshot(), "widget-lab.png")
    page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
    page.wait_for_timeout(300)  # the side bar animates closed
    save_screenshot(page.screenshot(), "widget-lab-wide.png", docs_name="widget.png")
    print(
        f"\njupyter lab answered in {lab.started_in:.2f} s; notebook open in {opened:.2f} s; "
        f"run to widget in {ran:.2f} s; total {time.perf_counter() - start:.2f} s"
    )


def test_the_tabs_show_numerics_devices_and_side_by_side(page, page_log, lab):
    _, _, widget = open_and_run(page, lab, TABS_NOTEBOOK, "torch.cuda.synchronize")
    tab = widget.locator(".lm-TabBar-tab")
    # a tab's content is hidden until its tab is picked: waiting for visibility tests both

    tab.filter(has_text="Numerics").click()
    widget.get_by_text("12 mismatched").wait_for(timeout=10_000)
    save_screenshot(widget.screenshot(), "widget-numerics.png")
    tab.filter(has_text="Devices").click()
    widget.get_by_text("default_device_creation").wait_for(timeout=10_000)
    assert widget.get_by_text("(wrong)").is_visible()
    save_screenshot(widget.screenshot(), "widget-devices.png")

    tab.filter(has_text="Side by side").click()
    plot = widget.locator("img")
    plot.wait_for(timeout=10_000)
    assert plot.evaluate("img => img.naturalWidth") > 0  # the PNG decoded
    assert widget.get_by_text("max abs err").first.is_visible()
    save_screenshot(widget.screenshot(), "widget-side-by-side.png", "widget-side-by-side.png")
    widget.locator(".widget-dropdown select").select_option("z")
    widget.get_by_text("copy: not 64-byte aligned").wait_for(timeout=10_000)
    assert widget.locator("img").count() == 0  # no histogram for an output that matched
    assert page_log.errors == []

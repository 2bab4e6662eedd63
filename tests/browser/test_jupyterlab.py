"""A ``%%port`` cell's output in a real JupyterLab and Notebook 7: one view, the same
live and after a page reload (issue 27: the reloaded view lost the plan and "In [N]").

The output is a plain MIME bundle; porter's renderer (labextension/src/render.ts) draws
its JSON in both front ends, whether the kernel that made it runs or not. A private
`jupyter lab` (tests/browser/support.py's `lab_server`) serves both; the kernel imports
this worktree's porter_ext.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from porter_ext.ui.mime import MIME_TYPE, cell_bundle
from tests.browser.support import (
    OPENED,
    RUN_ALL,
    LabServer,
    lab_server,
    save_screenshot,
    write_notebook,
)
from tests.ui.entries import demo_cell

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "porter_demo.ipynb"
PORT_CELL = "%%port\nimport torch\nx = torch.ones(3, 4)\ny = x.sum(1)"
TABS_NOTEBOOK = "cell_tabs.ipynb"
#: Notebook 7's own page errors, with porter-ext disabled too (test_labextension.py)
NOTEBOOK7_OWN_ERRORS = {
    "Cannot read properties of undefined (reading 'schema')",
    "Command 'filebrowser:open-path' not registered.",
}
#: what a cell's view shows, read from the page: headline, label, plan, tab titles
READ_VIEW = """(view) => ({
  headline: view.querySelector('.porter-verdict').textContent,
  label: view.querySelector('.porter-cell-label').textContent,
  plan: [...view.querySelectorAll('.porter-plan-item')].map(li => li.textContent),
  tabs: [...view.querySelectorAll('.porter-tab')].map(b => b.textContent),
  text: view.textContent,
})"""
#: the cell entry porter's output of cell `i` holds
ENTRY = """([i, mime]) => {
  const outputs = window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs;
  for (let k = outputs.length - 1; k >= 0; k--) {
    const entry = outputs.get(k).data[mime];
    if (entry) { return entry; }
  }
  return null;
}"""


def _saved_result() -> Any:
    """A code cell with demo_cell's result saved as %%port displays it."""
    entry = demo_cell()
    cell = nbformat.v4.new_code_cell("%%port\n" + entry.source)
    cell.outputs = [nbformat.v4.new_output("display_data", data=cell_bundle(entry))]
    return cell


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("lab")
    (base / "root").mkdir()
    write_notebook(base / "root" / NOTEBOOK, "%load_ext porter_ext", PORT_CELL)
    write_notebook(base / "root" / TABS_NOTEBOOK, _saved_result())
    with lab_server(base) as server:
        yield server


def _view(page: Any, index: int) -> Any:
    return page.locator(".jp-Cell").nth(index).locator(".jp-OutputArea .porter-cell-view")


def test_the_live_output_and_the_reloaded_one_are_the_same_view(page, page_log, lab):
    start = time.perf_counter()
    page.goto(lab.lab_url(NOTEBOOK), timeout=60_000)
    page.wait_for_function(OPENED, timeout=60_000)
    page.evaluate(RUN_ALL)
    view = _view(page, 1)
    view.wait_for(state="visible", timeout=120_000)
    ran = time.perf_counter() - start
    assert page.locator(".jupyter-widgets").count() == 0  # no widget: the plain bundle
    live = view.evaluate(READ_VIEW)
    entry = page.evaluate(ENTRY, [1, MIME_TYPE])
    # what the view shows is the JSON's: the headline, the label, each plan item's state
    assert live["headline"] == entry["headline"]["text"]
    assert live["label"] == f" ({entry['label']})" and "In [" in live["label"]
    assert entry["plan"] and len(live["plan"]) == len(entry["plan"])
    for shown, item in zip(live["plan"], entry["plan"], strict=True):
        assert item["state_text"] in shown and item["title"] in shown
    assert any("Tensor.sum → xp.sum(x, axis=1)" in p for p in live["plan"])
    assert live["tabs"] == ["Calls", "Numerics", "Devices", "Side by side"]
    save_screenshot(view.screenshot(), "cell-view-live.png")

    # saved and reloaded: the same view, plan, label and headline included
    page.evaluate("() => window.jupyterapp.commands.execute('docmanager:save')")
    page.wait_for_function(
        "() => !window.jupyterapp.shell.currentWidget.context.model.dirty", timeout=10_000
    )
    page.reload()
    page.wait_for_function(OPENED, timeout=60_000)
    reloaded = _view(page, 1)
    reloaded.wait_for(state="visible", timeout=60_000)
    assert reloaded.evaluate(READ_VIEW) == live
    save_screenshot(page.screenshot(), "cell-view-lab.png", docs_name="widget.png")

    # Notebook 7 draws the saved output with the same code
    page.goto(lab.notebook7_url(NOTEBOOK), timeout=60_000)
    nb7 = page.locator(".jp-Cell").nth(1).locator(".porter-cell-view")
    nb7.wait_for(state="visible", timeout=60_000)
    assert nb7.evaluate(READ_VIEW) == live
    assert [e for e in page_log.errors if e not in NOTEBOOK7_OWN_ERRORS] == []
    print(f"\n%%port cell to porter's view in {ran:.2f} s")


def test_the_tabs_show_numerics_devices_and_side_by_side(page, page_log, lab):
    page.goto(lab.lab_url(TABS_NOTEBOOK), timeout=60_000)
    page.wait_for_function(OPENED, timeout=60_000)
    view = _view(page, 0)
    view.wait_for(state="visible", timeout=60_000)
    tab = view.locator(".porter-tab")
    pane = view.locator(".porter-tab-pane:visible")
    # Calls first: the cell's diagnostics rows, then its calls
    assert "torch.cuda.synchronize" in pane.inner_text()
    assert "Tensor.sum" in pane.inner_text()

    tab.filter(has_text="Numerics").click()
    pane.get_by_text("differs (max abs err 0.5, 12 mismatched)").first.wait_for(timeout=10_000)
    save_screenshot(view.screenshot(), "cell-view-numerics.png")
    tab.filter(has_text="Devices").click()
    pane.get_by_text("default_device_creation").first.wait_for(timeout=10_000)
    assert pane.get_by_text("no (wrong)").first.is_visible()

    tab.filter(has_text="Side by side").click()
    cards = pane.locator(".porter-card")
    cards.first.wait_for(timeout=10_000)
    assert cards.count() == 2  # numpy and jax have outputs; strict and cupy none
    assert pane.locator(".porter-bar").count() > 0  # jax's error histogram, from the JSON
    save_screenshot(
        view.screenshot(), "cell-view-side-by-side.png", docs_name="widget-side-by-side.png"
    )
    pane.locator("select.porter-output-picker").select_option("z")
    pane.get_by_text("copy: not 64-byte aligned").wait_for(timeout=10_000)
    assert pane.locator(".porter-bar").count() == 0  # no histogram for a matching output
    assert page_log.errors == []

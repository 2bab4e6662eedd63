"""A cell recorded live in JupyterLab is named as `porter run` names it: ``cell 3 ·
In [n]``, its notebook position counted from 1 as JupyterLab counts, because porter's
extension tells the kernel the notebook's cell order (the ``porter.cells`` comm,
labextension/src/cellorder.ts; porter_ext/session/cell_order.py). A cell moved and run
again is named by its new position.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from porter_ext.ui.mime import MIME_TYPE
from tests.browser.support import (
    OPENED,
    RUN_ALL,
    LabServer,
    lab_server,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "cell_order.ipynb"
PORT_CELL = "%%port --no-replay\nimport numpy as np\ny = np.sum(np.ones((2, 2)), 0)"
#: the entry porter's output of cell `i` holds, and the label its view shows
SHOWN = """([i, mime]) => {
  const cell = window.jupyterapp.shell.currentWidget.content.widgets[i];
  const outputs = cell.model.outputs;
  let entry = null;
  for (let k = outputs.length - 1; k >= 0 && !entry; k--) {
    entry = outputs.get(k).data[mime] || null;
  }
  const label = cell.node.querySelector('.jp-OutputArea .porter-cell-label');
  return entry && label ? [entry.index, entry.label, entry.execution_count, label.textContent]
    : null;
}"""
#: move the active cell (cell `i`) up one place and run it where it lands
MOVE_UP_AND_RUN = """async (i) => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget.content;
  notebook.activeCellIndex = i;
  await app.commands.execute('notebook:move-cell-up');
  await app.commands.execute('notebook:run-cell');
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("lab")
    (base / "root").mkdir()
    notes = nbformat.v4.new_markdown_cell("Some words between the cells.")
    write_notebook(base / "root" / NOTEBOOK, "%load_ext porter_ext", notes, PORT_CELL)
    with lab_server(base) as server:
        yield server


def _shown(page: Any, index: int, count: int | None = None) -> list:
    """[index, label, execution count, label shown] of cell `index`'s porter output,
    once it shows (a run after `count`, where given)."""
    ran = "true" if count is None else f"s[2] > {count}"
    page.wait_for_function(
        f"(a) => {{ const s = ({SHOWN})(a); return s && {ran}; }}",
        arg=[index, MIME_TYPE],
        timeout=120_000,
    )
    return page.evaluate(SHOWN, [index, MIME_TYPE])


def test_a_live_cell_is_named_by_its_place_in_the_notebook(page, page_log, lab):
    page.goto(lab.lab_url(NOTEBOOK), timeout=60_000)
    page.wait_for_function(OPENED, timeout=60_000)
    page.evaluate(RUN_ALL)
    index, label, count, shown = _shown(page, 2)
    # the third cell, as JupyterLab counts (a Markdown cell counts too)
    assert (index, label) == (2, f"cell 3 · In [{count}]")
    assert shown == f" ({label})"

    # moved up one place and run again: named where it is now
    page.evaluate(MOVE_UP_AND_RUN, 2)
    index, label, again, shown = _shown(page, 1, count)
    assert (index, label) == (1, f"cell 2 · In [{again}]")
    assert shown == f" ({label})"
    assert page_log.errors == []

"""The Porting panel as a diagnostics view (labextension/src/panel.ts), in a real
JupyterLab with real kernels.

- `notebooks/02_devices.ipynb` run in the porter kernel: the panel names the notebook and
  lists its findings; a click on every entry selects the entry's cell and puts the cursor
  on its recorded line and column.
- A 500-cell notebook whose porter results were written by `porter run`: the panel builds
  only the rows in view, a group collapses, the filter narrows the list to one cell's
  finding and a click on it lands on cell 498's line.
- The Launcher active: the panel shows no notebook's findings; the Launcher and the
  kernel picker offer porter's kernel and not the internal replay-worker kernel.
- Settings (`schema/plugin.json`): statuses left out of `markedStatuses` get no mark;
  `openOnFirstFinding` opens the panel when the notebook's first finding shows.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from playwright.sync_api import expect

from porter_ext.ui.mime import MIME_TYPE
from tests.browser.support import (
    CURSOR,
    ROOT,
    RUN_ALL,
    LabServer,
    lab_server,
    open_notebook,
    save_screenshot,
    save_settings,
    saved_port_cell,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DEVICES_NB = "02_devices.ipynb"
TALL_NB = "tall.ipynb"
#: a cell taller than the page whose one finding is on its last line
TALL_BODY = "".join(f"a{i} = np.ones(3)\n" for i in range(79)) + "b = np.sum(a0, 0)\n"
BIG_NB = "big.ipynb"
BIG_CELLS = 500
SMALL = [
    "import torch\nx = torch.ones(3, 4)",
    "y = x.sum(1)\nz = torch.max(y, -y)",
    "w = torch.flip(x, dims=(0,))",  # the one cell of its kind: cell 498 of the big notebook
]
#: which small cell each of the big notebook's cells repeats
BIG_PLAN = [0] + [1] * (BIG_CELLS - 3) + [2, 1]

PANEL = "#porter-porting-panel"
PLUGIN = "porter-ext:plugin"
TRACKER = "@jupyterlab/notebook-extension:tracker"
#: the panel widget's rows as the panel holds them (filtered, sorted, in list order)
ROWS = """() => window.jupyterapp.shell.widgets('left')
  .find(w => w.id === 'porter-porting-panel').rows
  .map(r => ({id: r.id, cell: r.cell, line: r.line, col: r.col, name: r.name,
               finding: r.finding}))"""
SHOW_PANEL = "() => window.jupyterapp.commands.execute('porter:show-panel')"


def _big_notebook(base: Path, path: Path, plan: list[int] = BIG_PLAN) -> None:
    """`porter run` over the small cells, its results tiled over 500 cells as their saved
    outputs (each cell's source is the source its result recorded)."""
    small = base / "small.ipynb"
    write_notebook(small, *SMALL)
    report = base / "small.json"
    done = subprocess.run(
        [sys.executable, "-m", "porter_ext.cli", "run", str(small), "-o", str(report)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=base,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    entries = json.loads(report.read_text())["cells"]
    assert [e["source"].rstrip() for e in entries] == SMALL
    cells = []
    for i, which in enumerate(plan):
        entry = {**entries[which], "index": i, "execution_count": i + 1}
        cell = nbformat.v4.new_code_cell(entry["source"].rstrip(), execution_count=i + 1)
        data = {"text/plain": f"porter: cell {i}", MIME_TYPE: entry}
        cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
        cells.append(cell)
    write_notebook(path, *cells)


def _tall_notebook(path: Path) -> None:
    """Short cells, a `%%port` cell of 81 lines with a saved result whose finding is on
    its last line (no kernel needed), short cells again."""
    tall = saved_port_cell(TALL_BODY, (80, 4))
    short = [f"x{i} = {i}" for i in range(40)]
    write_notebook(path, *short[:4], tall, *short)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("panel")
    root = base / "root"
    root.mkdir()
    _tall_notebook(root / TALL_NB)
    shutil.copyfile(ROOT / "notebooks" / DEVICES_NB, root / DEVICES_NB)
    _big_notebook(base, root / BIG_NB)
    with lab_server(base) as server:
        # JupyterLab's default windowing renders a long notebook's cells one by one while
        # idle (500 cells: a minute or more on a loaded machine) and cannot scroll to a
        # cell before; 'full' renders the cells in view, as people with long notebooks
        # set it. The 02_devices test runs the same click in a short notebook either way.
        save_settings(server, TRACKER, {"windowingMode": "full"})
        yield server


def _rows(page: Any) -> list[dict[str, Any]]:
    return page.evaluate(ROWS)


def _row(page: Any, row_id: str) -> Any:
    return page.locator(f'{PANEL} .porter-diag-row[data-porter-row="{row_id}"]')


def _expected_cursor(source: str, row: dict[str, Any]) -> list[Any]:
    """Where a click on `row` puts the cursor: its cell, its line of the recorded body (the
    `%%port` line above it), its column in UTF-16 units of that line."""
    lines = source.split("\n")
    offset = 1 if lines[0].startswith("%%port") else 0
    line = row["line"] - 1 + offset
    text = lines[line] if line < len(lines) else ""
    column = len(text[: row["col"]].encode("utf-16-le")) // 2
    return [row["cell"], {"line": line, "column": column}]


#: [active cell index, the cursor's {line, column}, null while the cell has no editor]
CURSOR_OR_NULL = """() => { const nb = window.jupyterapp.shell.currentWidget.content;
  const editor = nb.activeCell && nb.activeCell.editor;
  return [nb.activeCellIndex, editor ? editor.getCursorPosition() : null]; }"""


def _wait_cursor(page: Any, expected: list[Any]) -> None:
    at = f"""(e) => {{ const [cell, pos] = ({CURSOR_OR_NULL})();
      return cell === e[0] && !!pos && pos.line === e[1].line && pos.column === e[1].column; }}"""
    try:
        page.wait_for_function(at, arg=expected, timeout=10_000)
    except Exception:
        assert page.evaluate(CURSOR_OR_NULL) == expected
        raise


def test_a_click_on_every_entry_of_02_devices_lands_on_its_line(page, page_log, lab):
    open_notebook(page, lab, DEVICES_NB)
    page.evaluate(SHOW_PANEL)
    side = page.locator(PANEL)
    assert side.locator(".porter-panel-notebook").inner_text() == DEVICES_NB
    page.evaluate(RUN_ALL)
    ports = sum(
        c.cell_type == "code" and c.source.startswith("%%port")
        for c in nbformat.read(lab.root / DEVICES_NB, as_version=4).cells
    )
    page.wait_for_function(
        f"() => document.querySelector('{PANEL}').dataset.porterResults === '{ports}'",
        timeout=300_000,
    )
    rows = _rows(page)
    assert rows, side.inner_text()
    assert any(r["name"] for r in rows)
    # severity, message, cell and line columns; every row with a cell label
    heads = side.locator(".porter-diag-th")
    titles = [heads.nth(i).get_attribute("aria-label") for i in range(heads.count())]
    assert titles == ["Severity", "Message", "Cell", "Line"]
    save_screenshot(page.screenshot(), "panel-02-devices.png", docs_name="labext-panel.png")
    sources = page.evaluate(
        """() => window.jupyterapp.shell.currentWidget.content.widgets
          .map(w => w.model.sharedModel.getSource())"""
    )
    for row in rows:
        _row(page, row["id"]).click(timeout=10_000)
        if row["line"] is None:
            page.wait_for_function(
                "(i) => window.jupyterapp.shell.currentWidget.content.activeCellIndex === i",
                arg=row["cell"],
                timeout=10_000,
            )
        else:
            _wait_cursor(page, _expected_cursor(sources[row["cell"]], row))
        # the selected row's detail under the list names its place and finding (drawn
        # after the selection: the cursor may already sit where the row points, as it
        # does for two rows of one line, so the detail is waited for, not read at once)
        expect(side.locator(".porter-panel-detail")).to_contain_text(row["name"], timeout=10_000)
    assert page_log.errors == []


def test_a_500_cell_notebook_windowed_filtered_and_clicked(page, page_log, lab):
    open_notebook(page, lab, BIG_NB)
    page.evaluate(SHOW_PANEL)
    side = page.locator(PANEL)
    page.wait_for_function(
        f"() => document.querySelector('{PANEL}').dataset.porterResults === '{BIG_CELLS}'",
        timeout=60_000,
    )
    rows = _rows(page)
    assert len(rows) >= BIG_CELLS
    # the counts of porter's headlines, over exactly the rows listed
    findings = sum(r["finding"] for r in rows)
    counts = f"findings: {findings} · noted: {len(rows) - findings}"
    assert side.locator(".porter-diag-shown").inner_text() == counts
    # only the rows in view (and a few more) are built
    built = side.locator(".porter-diag-row").count()
    assert 0 < built < 80, built
    # groups by replacement, each with porter's count; a group collapses and opens again
    groups = side.locator(".porter-diag-group")
    first = groups.first
    assert "×" in first.inner_text()
    first.click()
    assert first.get_attribute("aria-expanded") == "false"
    assert len(_rows(page)) == len(rows)  # collapsing hides rows, it filters none
    first.click()
    assert side.locator(".porter-diag-group").first.get_attribute("aria-expanded") == "true"
    # scrolling to the end builds the last rows
    page.evaluate(
        f"() => {{ const v = document.querySelector('{PANEL} .porter-diag-viewport');"
        " v.scrollTop = v.scrollHeight; }"
    )
    page.wait_for_function(
        f"() => document.querySelector('{PANEL} .porter-diag-row[data-porter-cell=\"499\"]')",
        timeout=10_000,
    )
    save_screenshot(page.screenshot(), "panel-500-cells.png")

    # the filter narrows the list to the one cell that flips
    side.locator(".porter-diag-filter").fill("flip")
    page.wait_for_function(
        f"() => document.querySelector('{PANEL} .porter-diag-shown').textContent"
        f" === '{counts} (1 of {len(rows)} rows shown)'",
        timeout=10_000,
    )
    (row,) = _rows(page)
    assert row["cell"] == BIG_CELLS - 2 and "flip" in row["name"]
    save_screenshot(page.screenshot(), "panel-filtered.png", docs_name="labext-panel-filter.png")
    start = time.perf_counter()
    _row(page, row["id"]).click(timeout=10_000)
    _wait_cursor(page, _expected_cursor(SMALL[2], row))
    print(f"\nclick on a row to the cursor on cell 498: {time.perf_counter() - start:.2f} s")
    # sorting by message, then again the other way round
    side.locator(".porter-diag-filter").fill("")
    message = side.locator('.porter-diag-th[data-porter-sort="message"]')
    message.click()
    assert message.get_attribute("aria-sort") == "ascending"
    message.click()
    assert message.get_attribute("aria-sort") == "descending"
    assert page_log.errors == []


#: the cursor's line of the active cell is on screen, inside the notebook
CURSOR_SHOWN = """() => { const nb = window.jupyterapp.shell.currentWidget.content;
  const editor = nb.activeCell && nb.activeCell.editor;
  const at = editor && editor.getCoordinateForPosition(editor.getCursorPosition());
  const view = nb.node.getBoundingClientRect();
  return !!at && at.top >= view.top && at.bottom <= view.bottom; }"""


def test_a_click_lands_on_the_last_line_of_a_cell_taller_than_the_page(page, page_log, lab):
    """From the end of the notebook, the notebook scrolls up to the cell (`scrollToItem`:
    its top comes into view), the cursor is set without a second scroll, and its line,
    below the fold, is then brought on screen."""
    open_notebook(page, lab, TALL_NB)
    page.evaluate(SHOW_PANEL)
    (row,) = [r for r in _waited_rows(page) if r["cell"] == 4]
    page.evaluate(
        """async () => { const nb = window.jupyterapp.shell.currentWidget.content;
          await nb.scrollToItem(nb.widgets.length - 1); }"""
    )
    _row(page, row["id"]).click(timeout=10_000)
    _wait_cursor(page, _expected_cursor(f"%%port\n{TALL_BODY}", row))
    page.wait_for_function(CURSOR_SHOWN, timeout=10_000)
    assert page.evaluate(CURSOR)[1] == {"line": 80, "column": 4}
    assert page_log.errors == []


def _waited_rows(page: Any) -> list[dict[str, Any]]:
    page.locator(f"{PANEL} .porter-diag-row").first.wait_for(timeout=60_000)
    return _rows(page)


def test_the_launcher_shows_no_notebook_findings(page, page_log, lab):
    open_notebook(page, lab, BIG_NB)
    page.evaluate(SHOW_PANEL)
    side = page.locator(PANEL)
    side.locator(".porter-diag-row").first.wait_for(timeout=60_000)
    page.evaluate("async () => { await window.jupyterapp.commands.execute('launcher:create'); }")
    side.get_by_text("Open a notebook to see its porter findings.").wait_for(timeout=10_000)
    # the Launcher and the kernel picker offer porter's kernel, never its replay workers'
    cards = page.locator(".jp-Launcher .jp-LauncherCard-label")
    cards.first.wait_for(timeout=10_000)
    labels = cards.all_inner_texts()
    assert "Python 3 (porter)" in labels, labels
    assert not [label for label in labels if "worker" in label.lower()], labels
    specs = page.evaluate(
        """() => Object.values(window.jupyterapp.serviceManager.kernelspecs.specs.kernelspecs)
          .map(spec => spec.display_name)"""
    )
    assert "Python 3 (porter)" in specs and not [s for s in specs if "worker" in s.lower()]
    assert side.locator(".porter-diag-row").count() == 0
    assert side.locator(".porter-panel-notebook").inner_text() == ""
    save_screenshot(page.screenshot(), "panel-launcher.png")
    # back to the notebook's tab: its findings again
    page.locator(".lm-TabBar-tab", has_text=BIG_NB).first.click()
    side.locator(".porter-diag-row").first.wait_for(timeout=10_000)
    assert side.locator(".porter-panel-notebook").inner_text() == BIG_NB
    assert page_log.errors == []


def test_settings_choose_the_marked_statuses_and_open_the_panel(browser, page, page_log, lab):
    # the defaults: every finding status marked, the panel opened by the person
    open_notebook(page, lab, BIG_NB)
    _cell_marks(page, 1).first.wait_for(timeout=60_000)
    assert not page.locator(PANEL).is_visible()

    save_settings(lab, PLUGIN, {"markedStatuses": ["device"], "openOnFirstFinding": True})
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        other = context.new_page()
        errors: list[str] = []
        other.on("pageerror", lambda error: errors.append(str(error)))
        open_notebook(other, lab, BIG_NB)
        # the panel opens by itself on the notebook's first finding
        other.locator(PANEL).wait_for(state="visible", timeout=60_000)
        other.locator(f"{PANEL} .porter-diag-row").first.wait_for(timeout=10_000)
        # cell 1's non-standard calls are listed, not marked
        editor = other.locator(".jp-Notebook .jp-Cell").nth(1).locator(".cm-content")
        editor.wait_for(timeout=60_000)
        other.wait_for_timeout(1000)  # marks are dispatched on the turn after the editor
        assert _cell_marks(other, 1).count() == 0
        save_screenshot(other.screenshot(), "panel-settings.png")
        assert errors == []
    finally:
        context.close()
        save_settings(lab, PLUGIN, {})
    assert page_log.errors == []


def _cell_marks(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index).locator(".cm-lintRange.porter-mark")

"""The Porting panel's jump: from a click on a finding's row to the cursor on its line and
column, in a 500-cell notebook whose cells all hold `porter run` results, in JupyterLab
in Debian's Chromium (a private server on 127.0.0.1, started and stopped here). Prints
the median and the maximum over jumps back and forth across the notebook (target: median
<= 100 ms, issue 27 item 6), the part of it JupyterLab spends making the cell active, and
the time to the frame that shows it; beside JupyterLab's own `scrollToItem` and cursor
on the same page, alternated with the clicks, as a reference. Printed, never asserted.

    python benchmarks/bench_panel_jump.py [--windowing contentVisibility|full|defer|none]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.browser.support import (  # noqa: E402
    CHROMIUM_ARGS,
    lab_server,
    open_notebook,
    save_settings,
)
from tests.browser.test_panel import BIG_PLAN, _big_notebook  # noqa: E402

PANEL = "#porter-porting-panel"
TRACKER = "@jupyterlab/notebook-extension:tracker"

#: in the page: the cursor is at `line`/`column` of cell `cell`, the cell's editor has the
#: focus and the cell is on screen
LANDED = """(nb, cell, line, column) => {
  if (nb.activeCellIndex !== cell) { return false; }
  const editor = nb.activeCell && nb.activeCell.editor;
  if (!editor || !editor.hasFocus()) { return false; }
  const at = editor.getCursorPosition();
  if (at.line !== line || at.column !== column) { return false; }
  const box = nb.activeCell.node.getBoundingClientRect();
  const view = nb.node.getBoundingClientRect();
  return box.bottom > view.top && box.top < view.bottom;
}"""

#: waits until `landed()` holds, checked as soon as an editor takes the focus (the
#: cursor is set before) and after every task; then until the next frame is painted.
#: Returns [ms to the cursor, ms to the frame that shows it]
TIMED = """async (start, landed) => {
  let cursor = null;
  const check = () => { if (cursor === null && landed()) { cursor = performance.now() - start; } };
  const onFocus = () => queueMicrotask(check);
  document.addEventListener('focusin', onFocus, true);
  try {
    check();
    while (cursor === null) {
      if (performance.now() - start > 20000) { return null; }
      await new Promise(r => setTimeout(r, 0));
      check();
    }
  } finally {
    document.removeEventListener('focusin', onFocus, true);
  }
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  return [cursor, performance.now() - start];
}"""

#: ms spent inside JupyterLab's `Notebook.activeCellIndex` setter while `run()` runs
#: (making a cell active: in JupyterLab 4.6 it also resets the selection of every other
#: cell's editor)
ACTIVATING = """async (nb, run) => {
  let proto = Object.getPrototypeOf(nb);
  while (!Object.getOwnPropertyDescriptor(proto, 'activeCellIndex')) {
    proto = Object.getPrototypeOf(proto);
  }
  const own = Object.getOwnPropertyDescriptor(proto, 'activeCellIndex');
  let spent = 0;
  Object.defineProperty(nb, 'activeCellIndex', {
    configurable: true,
    get() { return own.get.call(this); },
    set(v) { const t = performance.now(); own.set.call(this, v); spent += performance.now() - t; }
  });
  try {
    const times = await run();
    return times && [...times, spent];
  } finally {
    delete nb.activeCellIndex;
  }
}"""

#: one jump: the panel row of the first finding with a line in cell `cell` is scrolled
#: into the panel's list and clicked. [ms to the cursor, to the frame, in JupyterLab's
#: activation of the cell]
JUMP = f"""async (cell) => {{
  const landed = {LANDED};
  const timed = {TIMED};
  const activating = {ACTIVATING};
  const app = window.jupyterapp;
  const nb = app.shell.currentWidget.content;
  const panel = app.shell.widgets('left').find(w => w.id === 'porter-porting-panel');
  const viewport = document.querySelector('{PANEL} .porter-diag-viewport');
  // the list's items (group heads and rows) are ROW_HEIGHT apart: scroll the row into view
  const at = panel._items.findIndex(
    it => it.kind === 'row' && it.row.cell === cell && it.row.line !== null && it.row.file === null);
  const row = panel._items[at].row;
  viewport.scrollTop = Math.max(0, at * 22 - 44);
  viewport.dispatchEvent(new Event('scroll'));
  let node = null;
  for (let i = 0; i < 100 && !node; i++) {{
    await new Promise(r => requestAnimationFrame(r));
    node = document.querySelector(`{PANEL} .porter-diag-row[data-porter-row="${{row.id}}"]`);
  }}
  const source = nb.widgets[cell].model.sharedModel.getSource();
  const line = row.line - 1 + (source.startsWith('%%') ? 1 : 0);
  await new Promise(r => setTimeout(r, 50));
  return await activating(nb, () => {{
    const start = performance.now();
    node.dispatchEvent(new MouseEvent('click', {{bubbles: true, cancelable: true}}));
    return timed(start, () => landed(nb, cell, line, row.col));
  }});
}}"""

#: the same landing by JupyterLab's own calls, for reference: scrollToItem, then the cursor
DIRECT = f"""async (cell) => {{
  const landed = {LANDED};
  const timed = {TIMED};
  const nb = window.jupyterapp.shell.currentWidget.content;
  const start = performance.now();
  void (async () => {{
    nb.activeCellIndex = cell;
    await nb.scrollToItem(cell);
    nb.mode = 'edit';
    const c = nb.widgets[cell];
    await c.ready;
    c.editor.setCursorPosition({{line: 0, column: 0}});
    c.editor.focus();
  }})();
  return await timed(start, () => landed(nb, cell, 0, 0));
}}"""

#: every cell of the current notebook is attached (no placeholder left)
RENDERED = """() => window.jupyterapp.shell.currentWidget.content.widgets
  .every(cell => !cell.isPlaceholder())"""

#: between jumps: the focus back on the panel, and the page left to settle
SETTLE = f"""async () => {{
  document.querySelector('{PANEL} .porter-diag-viewport').focus();
  await new Promise(r => setTimeout(r, 150));
}}"""


def _targets(cells: int, jumps: int) -> list[int]:
    """Cells far apart in turn: the top, the bottom and the middle, in a fixed random order."""
    rng = random.Random(27)
    out: list[int] = []
    for i in range(jumps):
        third = (i % 3) * cells // 3
        out.append(rng.randrange(third + 1, third + cells // 3 - 1))
    return out


def _figures(times: list[float]) -> str:
    return f"median {statistics.median(times):.0f} ms, max {max(times):.0f} ms"


def main(windowing: str, jumps: int) -> None:
    from playwright.sync_api import sync_playwright

    cells = len(BIG_PLAN)
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "root").mkdir()
        _big_notebook(base, base / "root" / "jump.ipynb")
        with lab_server(base) as lab, sync_playwright() as p:
            save_settings(lab, TRACKER, {"windowingMode": windowing})
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                open_notebook(page, lab, "jump.ipynb")
                page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
                page.wait_for_function(
                    f"() => document.querySelector('{PANEL}').dataset.porterResults === '{cells}'",
                    timeout=120_000,
                )
                page.locator(f"{PANEL} .porter-diag-row").first.wait_for(timeout=60_000)
                # JupyterLab attaches a long notebook's cells while idle: jumps are
                # measured once every cell is in the page, as a person meets them
                page.wait_for_function(RENDERED, timeout=300_000, polling=500)
                clicks: list[list[float]] = []  # [to the cursor, to the frame, activating]
                direct: list[list[float]] = []
                # alternated, so that both meet the same machine: a click on the
                # panel's row, then JupyterLab's own calls to another cell
                targets = _targets(cells, jumps)
                for cell, other in zip(targets, targets[::-1], strict=True):
                    page.evaluate(SETTLE)
                    times = page.evaluate(JUMP, cell)
                    if times is None:
                        raise SystemExit(f"the cursor never landed in cell {cell}")
                    clicks.append(times)
                    page.evaluate(SETTLE)
                    times = page.evaluate(DIRECT, other)
                    if times is None:
                        raise SystemExit(f"JupyterLab's own calls never landed in cell {other}")
                    direct.append(times)
            finally:
                browser.close()
    cursor = [c for c, _, _ in clicks]
    print(
        f"Porting panel jump, {cells} cells with porter results, windowing {windowing!r}, "
        f"{len(clicks)} jumps: click to cursor {_figures(cursor)} (target median <= 100 ms, "
        f"x{statistics.median(cursor) / 100:.2f} of it; of which JupyterLab's making the cell "
        f"active {_figures([a for _, _, a in clicks])}), to the frame showing it "
        f"{_figures([p for _, p, _ in clicks])}; JupyterLab's own scrollToItem and cursor on the "
        f"same page: {_figures([c for c, _ in direct])}, to the frame "
        f"{_figures([p for _, p in direct])}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--windowing",
        default="contentVisibility",
        choices=["contentVisibility", "full", "defer", "none"],
        help="JupyterLab's notebook windowing mode (default: JupyterLab's own default)",
    )
    parser.add_argument("--jumps", type=int, default=21)
    args = parser.parse_args()
    main(args.windowing, args.jumps)

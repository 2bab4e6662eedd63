"""The Porting panel on a notebook of 2 000 findings (1 000 cells of real `porter run`
results), in JupyterLab in Debian's Chromium: the time from a cell's new porter output to
the panel showing it (target 200 ms, issue 18), a filter keystroke, and a scroll frame of
the windowed list. Prints the least disturbed of several tries.

    python benchmarks/bench_panel.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.browser.support import CHROMIUM_ARGS, lab_server, open_notebook  # noqa: E402
from tests.browser.test_panel import _big_notebook  # noqa: E402

CELLS = 1000
PANEL = "#porter-porting-panel"
#: ms from a new porter output in cell 1 to the panel redrawn with it
OUTPUT_TO_PANEL = """async (mime) => {
  const panel = document.querySelector('#porter-porting-panel');
  const model = window.jupyterapp.shell.currentWidget.content.widgets[1].model;
  const data = model.outputs.get(0).toJSON();
  const before = panel.dataset.porterUpdated;
  const start = performance.now();
  model.outputs.add(data);
  while (panel.dataset.porterUpdated === before) {
    await new Promise(r => requestAnimationFrame(r));
  }
  return performance.now() - start;
}"""
#: ms from typing into the filter to the list drawn again
FILTER = """async (text) => {
  const input = document.querySelector('#porter-porting-panel .porter-diag-filter');
  const shown = document.querySelector('#porter-porting-panel .porter-diag-shown');
  const before = shown.textContent;
  const start = performance.now();
  input.value = text; input.dispatchEvent(new Event('input'));
  while (shown.textContent === before) { await new Promise(r => requestAnimationFrame(r)); }
  return performance.now() - start;
}"""
#: mean ms per frame while the list scrolls 40 steps
SCROLL = """async () => {
  const v = document.querySelector('#porter-porting-panel .porter-diag-viewport');
  const start = performance.now();
  for (let i = 0; i < 40; i++) {
    v.scrollTop = (i + 1) * v.scrollHeight / 41;
    await new Promise(r => requestAnimationFrame(r));
  }
  return (performance.now() - start) / 40;
}"""


def main(tries: int = 5) -> None:
    from playwright.sync_api import sync_playwright

    from porter_ext.ui.mime import MIME_TYPE

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        (base / "root").mkdir()
        _big_notebook(base, base / "root" / "panel.ipynb", [0] + [1] * (CELLS - 3) + [2, 1])
        with lab_server(base) as lab, sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            try:
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                open_notebook(page, lab, "panel.ipynb")
                page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
                page.locator(f"{PANEL} .porter-diag-row").first.wait_for(timeout=120_000)
                rows = page.evaluate(
                    "() => window.jupyterapp.shell.widgets('left')"
                    ".find(w => w.id === 'porter-porting-panel').rows.length"
                )
                update = min(page.evaluate(OUTPUT_TO_PANEL, MIME_TYPE) for _ in range(tries))
                keys = min(page.evaluate(FILTER, t) for t in ["flip", "", "sum", ""][:tries])
                frame = min(page.evaluate(SCROLL) for _ in range(tries))
                built = page.locator(f"{PANEL} .porter-diag-row").count()
            finally:
                browser.close()
    print(
        f"Porting panel, {rows} findings in {CELLS} cells: new output to panel {update:.0f} ms "
        f"(target 200 ms, x{update / 200:.2f} of it); filter keystroke {keys:.0f} ms; "
        f"scroll {frame:.1f} ms a frame; {built} rows built of {rows}"
    )


if __name__ == "__main__":
    main()

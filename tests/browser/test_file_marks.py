"""Findings in the person's own module, in a real JupyterLab with a real porter kernel
(labextension/src/findings.ts, marks.ts, fileeditors.ts; issue 26 item 4).

`proj/mod.ipynb` imports `norm_rows` from `proj/mymod.py`, beside it, and a `%%port`
cell calls it: porter records `Tensor.pow`, `Tensor.sum` and `Tensor.sqrt` at
`mymod.py` line 3. With the module open in JupyterLab's file editor, its line 3 gets
porter's marks, with the same hover text as a cell's and the calling cell named; the
calling cell gets none of them. The Porting panel lists them under `mymod.py`, a row
saying `mymod.py line 3`; a click brings the file editor forward with the cursor at the
line and column, and the panel keeps the notebook's findings while the file is current.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import (
    MARKS_IN,
    OPEN_BESIDE,
    RUN_ALL,
    LabServer,
    hover_text,
    lab_server,
    open_notebook,
    save_screenshot,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "proj/mod.ipynb"
MODULE = "proj/mymod.py"
#: the call's line in the file: `m.pow(2)` starts at column 8 of line 3
LINES = [
    '"""The person\'s module."""',
    "def norm_rows(m):",
    "    n = m.pow(2).sum(1, keepdim=True).sqrt()",
    "    return m / n",
]
SETUP = "import torch\nfrom mymod import norm_rows\na = torch.ones((3, 4))"
CALLING = "%%port --no-replay\nb = norm_rows(a)"

PANEL = "#porter-porting-panel"
EDITOR = ".jp-FileEditor"
#: the current widget's path and its editor's cursor (null: not a file editor)
FILE_CURSOR = """() => { const w = window.jupyterapp.shell.currentWidget;
  const editor = w && w.content && w.content.editor;
  return editor && w.content.model.type === undefined
    ? [w.context.path, editor.getCursorPosition()] : null; }"""
#: true when the current widget is the file editor of e[0] with its cursor at e[1]
CURSOR_AT = f"""(e) => {{ const c = ({FILE_CURSOR})(); return !!c && c[0] === e[0]
  && c[1].line === e[1].line && c[1].column === e[1].column; }}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("filemarks")
    (base / "root" / "proj").mkdir(parents=True)
    (base / "root" / MODULE).write_text("\n".join(LINES) + "\n")
    write_notebook(base / "root" / NOTEBOOK, SETUP, CALLING, kernel="porter")
    with lab_server(base) as server:
        yield server


def _wait_file_cursor(page: Any, expected: list[Any]) -> None:
    """Wait for the file editor of `expected[0]` current with its cursor at `expected[1]`."""
    try:
        page.wait_for_function(CURSOR_AT, arg=expected, timeout=10_000)
    except Exception:
        assert page.evaluate(FILE_CURSOR) == expected
        raise


def test_a_module_finding_is_marked_in_its_file_editor_and_the_panel_jumps_there(
    page, page_log, lab
):
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    open_notebook(page, lab, NOTEBOOK)
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
    # the module open beside the notebook, then the notebook current again to run it
    page.evaluate(OPEN_BESIDE, MODULE)
    page.locator(EDITOR).wait_for(timeout=30_000)
    page.evaluate(RUN_ALL)

    # the file editor: line 3 marked over each call's range, as the model wrote them
    # (`m.pow(2)`, then `.sum(...)` and `.sqrt()`: CodeMirror splits the nested ranges)
    marks = page.locator(f"{EDITOR} .cm-lintRange.porter-mark")
    marks.first.wait_for(timeout=180_000)
    editor = page.locator(EDITOR)
    page.wait_for_function(
        f"(root) => ({MARKS_IN})(root).length === 3", arg=editor.element_handle(), timeout=10_000
    )
    call = LINES[2]
    assert editor.evaluate(MARKS_IN) == [
        [call[:8], call[8:16]],
        [call[:16], call[16:37]],
        [call[:37], call[37:44]],
    ]
    tip = hover_text(page, marks.first)  # over `m.pow(2)`: each call whose range holds it
    assert "Tensor.pow → xp.pow(m, 2)" in tip
    # the calling cell by its position (the extension told the kernel the order), its line
    # below the %%port line
    assert "called from cell 2 · In [2], line 2" in tip
    assert "Tensor.sqrt" in tip
    # the calling cell: nothing of the module is marked there
    calling = page.locator(".jp-Notebook .jp-Cell").nth(1)
    assert calling.locator(".cm-lintRange.porter-mark").count() == 0

    # the panel: the rows under the file's group, each saying where it is
    group = page.locator(f'{PANEL} .porter-diag-group-file[data-porter-file="mymod.py"]')
    group.wait_for(timeout=10_000)
    assert group.inner_text().startswith("mymod.py")
    row = page.locator(
        f'{PANEL} .porter-diag-row[data-porter-file="mymod.py"][data-porter-line="3"]',
        has_text="Tensor.pow",
    )
    text = row.locator(".porter-diag-msg").inner_text()
    assert text.startswith("mymod.py line 3: Tensor.pow → xp.pow(m, 2)")
    assert text.endswith("(called from cell 2 · In [2], line 2)")
    save_screenshot(page.screenshot(), "file-marks.png")

    # a click: the file editor current, the cursor at the call
    row.click(timeout=10_000)
    _wait_file_cursor(page, [MODULE, {"line": 2, "column": 8}])
    # the panel still shows the notebook's findings while its module is current
    assert page.locator(PANEL).get_attribute("data-porter-notebook") == NOTEBOOK
    assert row.count() == 1
    assert page_log.errors == []
    assert [m for m in console if "RangeError" in m] == []


def test_a_click_opens_the_module_when_it_is_not_open(page, page_log, lab):
    open_notebook(page, lab, NOTEBOOK)
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
    page.evaluate(RUN_ALL)
    row = page.locator(
        f'{PANEL} .porter-diag-row[data-porter-file="mymod.py"][data-porter-line="3"]',
        has_text="Tensor.sqrt",
    )
    row.wait_for(timeout=180_000)
    assert page.locator(EDITOR).count() == 0
    row.click(timeout=10_000)
    page.locator(EDITOR).wait_for(timeout=30_000)
    _wait_file_cursor(page, [MODULE, {"line": 2, "column": 8}])
    # the file opened after the run: its marks are drawn from the open notebook's results
    page.locator(f"{EDITOR} .cm-lintRange.porter-mark").first.wait_for(timeout=10_000)
    assert page_log.errors == []

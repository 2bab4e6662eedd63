"""The editor marks of labextension/src/marks.ts in a real JupyterLab, with real kernels.

A notebook for the porter kernel: cell 0, a `%%port` cell, defines `f`, whose
`x.view(-1)` is outside the standard; cell 1, another, calls `f` and multiplies a boolean
tensor by a float one (`Tensor.__mul__ [non_standard_usage]`) on a line with
"température 🔥" before the expression. The finding of `f`'s call is marked where its
code is written (cell 0, over `x.view(-1)`), its hover naming the calling cell; the
operator is marked over `mask * f(x)` (columns count characters, the emoji is two UTF-16
units); a click on a panel row puts the cursor at the finding, in the cell where it is
written, with no RangeError.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.browser.support import (
    CURSOR,
    MARKS_IN,
    RUN_ALL,
    LabServer,
    hover_text,
    lab_server,
    open_notebook,
    panel_row,
    save_screenshot,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "marks.ipynb"
#: recorded, so that `f`'s calls are (a plain cell's functions run unrecorded)
DEFINING = "%%port --no-replay\nimport torch\n\ndef f(x):\n    return x.view(-1)"
PREFIX = 'label = "température 🔥"; y = '
CALLING = f"%%port --no-replay\nx = torch.ones((12,))\nmask = x > 0\n{PREFIX}mask * f(x)"


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("marks")
    (base / "root").mkdir()
    write_notebook(base / "root" / NOTEBOOK, DEFINING, CALLING, kernel="porter")
    with lab_server(base) as server:
        yield server


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _marks(page: Any, index: int) -> Any:
    return _cell(page, index).locator(".cm-lintRange.porter-mark")


def _wait_cursor(page: Any, expected: list[Any]) -> None:
    """Wait for the cursor at `expected` ([cell, {line, column}]); fail saying where it is."""
    at = f"""(e) => {{ const [cell, pos] = ({CURSOR})();
      return cell === e[0] && pos.line === e[1].line && pos.column === e[1].column; }}"""
    try:
        page.wait_for_function(at, arg=expected, timeout=10_000)
    except Exception:
        assert page.evaluate(CURSOR) == expected
        raise


def test_findings_are_marked_where_written_over_their_character_range(page, page_log, lab):
    console: list[str] = []
    page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
    open_notebook(page, lab, NOTEBOOK)
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
    page.evaluate(RUN_ALL)

    # the defining cell: f's call is marked there, over the call's text exactly
    defining = _marks(page, 0)
    defining.first.wait_for(timeout=180_000)
    assert _cell(page, 0).evaluate(MARKS_IN) == [["    return ", "x.view(-1)"]]
    tip = hover_text(page, defining.first)
    assert "Tensor.view → xp.reshape(x, (-1,))" in tip
    # the calling cell by its position (the extension told the kernel the order), its
    # line as the editor counts it: below its %%port line
    assert "called from cell 2 · In [2], line 4" in tip

    # the calling cell: the operator over its expression, not shifted by the emoji; f's
    # call is not marked here (it is written in cell 0)
    calling = _marks(page, 1)
    calling.first.wait_for(timeout=10_000)
    assert _cell(page, 1).evaluate(MARKS_IN) == [[PREFIX, "mask * f(x)"]]
    tip = hover_text(page, calling.first)
    assert tip.startswith("Tensor.__mul__") and "called from" not in tip
    save_screenshot(page.screenshot(), "marks-cross-cell.png")

    # the panel: the cross-cell row lands in the defining cell, at the call
    row = panel_row(page, 0, 4, "Tensor.view")
    assert "(called from cell 2 · In [2], line 4)" in row.inner_text()
    row.click(timeout=10_000)
    _wait_cursor(page, [0, {"line": 4, "column": 11}])  # line 4 of the body: 5 of the cell
    # the operator's row: line 3 of the body is line 4 of the cell, the column in UTF-16
    panel_row(page, 1, 3, "Tensor.__mul__").click(timeout=10_000)
    _wait_cursor(page, [1, {"line": 3, "column": len(PREFIX.encode("utf-16-le")) // 2}])
    assert page_log.errors == []
    assert [m for m in console if "RangeError" in m] == []

"""Apply on the cell a person just typed and ran, in a real JupyterLab (and Notebook 7).

The cell is typed into the editor, so it has no trailing newline (the recorded body
has one): `%%port --fix -b numpy,strict` over ``y = x.sum(1)`` / ``z = torch.max(y, -y)``.
Apply from the cell's output (porter's renderer), from the Porting panel and from the mark's quick
fix each put the verified rewrite in place of the body (the `%%port` line stays), the
findings go stale until the cell runs again, and one Ctrl+Z in the cell restores what
was typed. An edit inside the body and an appended line are each refused with the
reason, the cell left as it is. Screenshots are test artefacts (tests do not assert
wall times).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import nbformat
import pytest

from porter_ext.ui.mime import MIME_TYPE
from tests.browser.support import (
    LabServer,
    lab_server,
    open_notebook,
    save_screenshot,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TYPED_NB = "typed_apply.ipynb"
SETUP = "%load_ext porter_ext\nimport torch\nx = torch.ones(3, 4)"
MAGIC = "%%port --fix -b numpy,strict"
LINES = [MAGIC, "y = x.sum(1)", "z = torch.max(y, -y)"]
TYPED = "\n".join(LINES)  # as typed: no trailing newline
NB7_NB = "nb7_apply.ipynb"
NB7_BODY = "import numpy as np\na = np.ones(3)\nb = np.sum(a, 0)\n"
NB7_REWRITE = "import numpy as np\na = np.ones(3)\nb = np.sum(a, axis=0)\n"

SOURCE = """(i) => window.jupyterapp.shell.currentWidget.content.widgets[i]
  .model.sharedModel.getSource()"""
SET_SOURCE = """([i, text]) => window.jupyterapp.shell.currentWidget.content.widgets[i]
  .model.sharedModel.setSource(text)"""
#: the verified rewrite porter's output carries (the cell entry of the cell's last output)
REWRITE = """([i, mime]) => {
  const outputs = window.jupyterapp.shell.currentWidget.content.widgets[i].model.outputs;
  for (let k = outputs.length - 1; k >= 0; k--) {
    const entry = outputs.get(k).data[mime];
    if (entry) { return entry.rewrite; }
  }
  return null;
}"""


def _nb7_notebook(path) -> None:
    """A saved `%%port` result with a verified rewrite (no kernel needed to apply it)."""
    entry = {
        "index": 0,
        "execution_count": 1,
        "source": NB7_BODY,
        "error": None,
        "calls": [
            {
                "line": 3,
                "col": 4,
                "name": "numpy.sum",
                "library": "numpy",
                "kind": "function",
                "status": "non_standard_usage",
                "standard_name": "sum",
                "suggestion": "xp.sum(a, axis=0)",
                "count": 1,
                "message": "the standard takes axis as a keyword",
            }
        ],
        "device_findings": [],
        "replays": [],
        "rewrite": {
            "source": NB7_REWRITE,
            "status": "verified",
            "verified_on": ["numpy", "strict"],
            "sites": [],
            "reason": None,
        },
    }
    cell = nbformat.v4.new_code_cell(f"%%port\n{NB7_BODY.rstrip()}")  # saved as typed
    cell.outputs = [
        nbformat.v4.new_output("display_data", data={"text/plain": "porter", MIME_TYPE: entry})
    ]
    write_notebook(path, cell)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("apply")
    root = base / "root"
    root.mkdir()
    write_notebook(root / TYPED_NB, SETUP, "")
    _nb7_notebook(root / NB7_NB)
    with lab_server(base) as server:
        yield server


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _wait_source(page: Any, index: int, text: str) -> None:
    page.wait_for_function(f"([i, t]) => ({SOURCE})(i) === t", arg=[index, text], timeout=10_000)


TOGGLE_NOTIFICATIONS = "() => window.jupyterapp.commands.execute('apputils:display-notifications')"


def _refused(page: Any, reason: str) -> None:
    """A notification says why Apply refused (read in JupyterLab's notification list,
    which the command opens and, called again, closes)."""
    page.evaluate(TOGGLE_NOTIFICATIONS)
    page.locator(".jp-Notification-List").get_by_text(reason, exact=False).first.wait_for(
        timeout=10_000
    )


def _undo_in_cell(page: Any, index: int) -> None:
    _cell(page, index).locator(".cm-content").click()
    page.keyboard.press("Control+z")


def test_apply_on_a_typed_cell_then_undo_and_refusals(page, page_log, lab):
    open_notebook(page, lab, TYPED_NB)
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")

    # type the %%port cell into the editor: no trailing newline
    _cell(page, 1).locator(".cm-content").click()
    for i, line in enumerate(LINES):
        if i:
            page.keyboard.press("Enter")
        page.keyboard.type(line)
    _wait_source(page, 1, TYPED)

    page.evaluate(
        """async () => {
          const panel = window.jupyterapp.shell.currentWidget;
          await panel.sessionContext.ready;
          await window.jupyterapp.commands.execute('notebook:run-all-cells');
        }"""
    )
    output = _cell(page, 1).locator(".jp-OutputArea")
    button = output.locator("button.porter-apply")  # porter's view of the output
    button.wait_for(state="visible", timeout=180_000)
    rewrite = page.evaluate(REWRITE, [1, MIME_TYPE])
    assert rewrite["status"] == "verified" and rewrite["source"].endswith("\n")
    applied = f"{MAGIC}\n{rewrite['source'][:-1]}"  # the cell keeps having no final newline
    marks = _cell(page, 1).locator(".cm-lintRange.porter-mark")
    marks.first.wait_for(timeout=10_000)
    side = page.locator("#porter-porting-panel")
    assert side.locator("button.porter-apply").count() == 1
    save_screenshot(page.screenshot(), "apply-typed-before.png")

    # Apply from the output: the body replaced, the %%port line kept
    button.click()
    _wait_source(page, 1, applied)
    # stale until the cell runs again: no marks, the panel says so, the button is off
    page.wait_for_function(
        "() => !document.querySelectorAll('.jp-Cell')[1].querySelector('.porter-mark')",
        timeout=10_000,
    )
    side.get_by_text("rewrite applied; run the cell to check it again").wait_for(timeout=10_000)
    assert side.locator(".porter-stale-tag").count() > 0
    assert side.locator("button.porter-apply").count() == 0
    assert button.is_disabled() and button.inner_text() == "Applied: run the cell to check it again"
    save_screenshot(page.screenshot(), "apply-typed-applied.png", docs_name="labext-apply.png")

    # one Ctrl+Z in the cell restores what was typed, and the findings come back
    _undo_in_cell(page, 1)
    _wait_source(page, 1, TYPED)
    marks.first.wait_for(timeout=10_000)
    assert button.is_enabled() and button.inner_text() == "Apply verified rewrite"
    assert side.locator(".porter-stale-tag").count() == 0
    save_screenshot(page.screenshot(), "apply-typed-undone.png")

    # the panel's Apply and the mark's quick fix: the same edit, the same undo
    side.locator("button.porter-apply").click()
    _wait_source(page, 1, applied)
    _undo_in_cell(page, 1)
    _wait_source(page, 1, TYPED)
    page.mouse.move(0, 0)
    marks.first.wait_for(timeout=10_000)
    marks.first.hover()
    page.locator(".cm-tooltip-lint .cm-diagnosticAction", has_text="Apply verified rewrite").click(
        timeout=10_000
    )
    _wait_source(page, 1, applied)
    _undo_in_cell(page, 1)
    _wait_source(page, 1, TYPED)
    page.mouse.move(0, 0)

    # an edit inside the body: refused with the reason, the cell left as it is
    edited = TYPED.replace("x.sum(1)", "x.sum(0)")
    page.evaluate(SET_SOURCE, [1, edited])
    button.click()
    _refused(page, "line 2 is not the line porter recorded")
    assert page.evaluate(SOURCE, 1) == edited
    save_screenshot(page.screenshot(), "apply-refused-edit.png")
    page.evaluate(TOGGLE_NOTIFICATIONS)

    # an appended line: refused too (the body is not replaced under it)
    appended = f"{TYPED}\nprint(z)"
    page.evaluate(SET_SOURCE, [1, appended])
    button.click()
    _refused(page, "line 4 was added after the recorded source")
    assert page.evaluate(SOURCE, 1) == appended
    save_screenshot(page.screenshot(), "apply-refused-appended.png")
    assert page_log.errors == []


#: what Notebook 7.6's own pages raise here with porter-ext disabled too (see
#: test_labextension.NOTEBOOK7_OWN_ERRORS)
NOTEBOOK7_OWN_ERRORS = {
    "Cannot read properties of undefined (reading 'schema')",
    "Command 'filebrowser:open-path' not registered.",
}


#: a cell's text as its editor shows it (Notebook 7 does not expose the application)
EDITOR_TEXT = """(i) => Array.from(document.querySelectorAll('.jp-Notebook .jp-Cell')[i]
  .querySelectorAll('.cm-content .cm-line')).map(l => l.textContent).join('\\n')"""


def test_notebook7_apply_from_the_output_and_undo(page, page_log, lab):
    page.goto(f"{lab.url}/notebooks/{NB7_NB}?token={lab.token}", timeout=60_000)
    button = page.locator(".porter-cell-view button.porter-apply").first
    button.wait_for(timeout=60_000)
    typed = f"%%port\n{NB7_BODY.rstrip()}"
    shown = f"([i, t]) => ({EDITOR_TEXT})(i) === t"
    page.wait_for_function(shown, arg=[0, typed], timeout=10_000)
    button.click()
    page.wait_for_function(shown, arg=[0, f"%%port\n{NB7_REWRITE.rstrip()}"], timeout=10_000)
    assert button.is_disabled()
    save_screenshot(page.screenshot(), "apply-notebook7.png")
    _undo_in_cell(page, 0)
    page.wait_for_function(shown, arg=[0, typed], timeout=10_000)
    assert button.is_enabled()
    assert [e for e in page_log.errors if e not in NOTEBOOK7_OWN_ERRORS] == []

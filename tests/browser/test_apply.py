"""Apply on the cell a person just typed and ran, in a real JupyterLab (and Notebook 7).

The cell is typed into the editor, so it has no trailing newline (the recorded body
has one): `%%port --fix -b numpy,strict` over ``y = x.sum(1)`` / ``z = torch.max(y, -y)``.
Apply from the cell's output (porter's renderer), from the Porting panel and from the mark's quick
fix each put the verified rewrite in place of the body (the `%%port` line stays), the
findings go stale until the cell runs again, and one Ctrl+Z in the cell restores what
was typed. An edit inside the body and an appended line are each refused with the
reason, in a toast and under the button clicked, the cell left as it is.

Apply follows the source (issue 27 item 4): after Apply, Ctrl+Z, Ctrl+Shift+Z the cell
holds the rewrite again, and every view says so as it did after Apply (no marks, Apply
off with the result's words, the panel's row applied), in JupyterLab and Notebook 7; a
cell typed into says it changed, and its Apply says exactly what. Screenshots are test
artefacts (tests do not assert wall times).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from porter_ext.ui.mime import MIME_TYPE
from tests.browser.support import (
    MARKS_IN,
    SOURCE_STATE_WORDS,
    LabServer,
    lab_server,
    open_notebook,
    save_screenshot,
    saved_port_cell,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

TYPED_NB = "typed_apply.ipynb"
SETUP = "%load_ext porter_ext\nimport torch\nx = torch.ones(3, 4)"
MAGIC = "%%port --fix -b numpy,strict"
LINES = [MAGIC, "y = x.sum(1)", "z = torch.max(y, -y)"]
TYPED = "\n".join(LINES)  # as typed: no trailing newline
NB7_NB = "nb7_apply.ipynb"
REDO_NB = "lab_redo.ipynb"
EDITED_NB = "lab_edited.ipynb"
#: the words of the applied and stale states a result carries (`source_states`)
WORDS = {
    "applied": "porter: the rewrite is in the cell; run it to check it",
    "stale": "porter: the cell changed since it ran; run it again",
}
FALLBACK_WORDS = SOURCE_STATE_WORDS
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


def _saved_notebook(path, words: dict[str, str] | None = None) -> None:
    """A saved `%%port` result with a verified rewrite (no kernel needed to apply it),
    carrying `words` as its `source_states` where given."""
    rewrite = {
        "source": NB7_REWRITE,
        "status": "verified",
        "verified_on": ["numpy", "strict"],
        "sites": [],
        "reason": None,
    }
    states = {"source_states": words} if words else {}
    cell = saved_port_cell(NB7_BODY, (3, 4), rewrite=rewrite, **states)
    write_notebook(path, cell)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("apply")
    root = base / "root"
    root.mkdir()
    write_notebook(root / TYPED_NB, SETUP, "")
    _saved_notebook(root / NB7_NB)
    _saved_notebook(root / REDO_NB, WORDS)
    _saved_notebook(root / EDITED_NB)
    with lab_server(base) as server:
        yield server


def _cell(page: Any, index: int) -> Any:
    return page.locator(".jp-Notebook .jp-Cell").nth(index)


def _wait_source(page: Any, index: int, text: str) -> None:
    page.wait_for_function(f"([i, t]) => ({SOURCE})(i) === t", arg=[index, text], timeout=10_000)


def _refused(page: Any, cell: Any, reason: str) -> None:
    """Apply refused and said why twice: in a toast on the page (not only in the
    notification centre's counter) and under the Apply button clicked in `cell`'s output."""
    toast = page.locator(".Toastify__toast", has_text=reason)
    toast.first.wait_for(timeout=10_000)
    inline = cell.locator(".jp-OutputArea .porter-refusal")
    inline.wait_for(timeout=10_000)
    assert reason in inline.inner_text() and inline.get_attribute("role") == "alert"
    page.evaluate(DISMISS_TOASTS)


#: the toasts shown, dismissed (so that the next refusal's is the one on the page)
DISMISS_TOASTS = """() => document.querySelectorAll('.Toastify__toast .jp-Notification-Toast-Close')
  .forEach(b => b.click())"""


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
    assert button.is_disabled() and button.inner_text() == FALLBACK_WORDS["applied"]
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
    _refused(page, _cell(page, 1), "line 2 is not the line porter recorded")
    assert page.evaluate(SOURCE, 1) == edited
    save_screenshot(page.screenshot(), "apply-refused-edit.png")

    # an appended line: refused too (the body is not replaced under it)
    appended = f"{TYPED}\nprint(z)"
    page.evaluate(SET_SOURCE, [1, appended])
    button.click()
    _refused(page, _cell(page, 1), "line 4 was added after the recorded source")
    assert page.evaluate(SOURCE, 1) == appended
    save_screenshot(page.screenshot(), "apply-refused-appended.png")
    assert page_log.errors == []


def _marks(cell: Any) -> list[list[str]]:
    """The porter marks of a cell: the text of each one's line before it, its own text."""
    return cell.evaluate(MARKS_IN)


def _panel_rewrite(page: Any, cell: int) -> Any:
    """The Porting panel's row of the verified rewrite of the cell at position `cell`."""
    return page.locator(f'#porter-porting-panel .porter-panel-item[data-porter-cell="{cell}"]')


def _redo_in_cell(page: Any, index: int) -> None:
    _cell(page, index).locator(".cm-content").click()
    page.keyboard.press("Control+Shift+z")


APPLY_ENABLED = """() => window.jupyterapp.commands.isEnabled('porter:apply-rewrite')"""


def test_redo_after_apply_shows_the_applied_rewrite_everywhere(page, page_log, lab):
    """Apply, Ctrl+Z, Ctrl+Shift+Z: the cell holds the rewrite again, and the output,
    the panel, the marks and the command say so exactly as after Apply, in the words the
    result carries; Ctrl+Z once more and the findings are live again, marked where they
    were."""
    open_notebook(page, lab, REDO_NB)
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
    cell = _cell(page, 0)
    side = page.locator("#porter-porting-panel")
    button = cell.locator(".porter-cell-view button.porter-apply")
    marks = cell.locator(".cm-lintRange.porter-mark")
    marks.first.wait_for(timeout=60_000)
    recorded = f"%%port\n{NB7_BODY.rstrip()}"
    applied = f"%%port\n{NB7_REWRITE.rstrip()}"
    marked = _marks(cell)
    assert marked == [["b = ", "np.sum"]], marked

    def is_applied() -> None:
        page.wait_for_function(
            "() => !document.querySelector('.jp-Cell .porter-mark')", timeout=10_000
        )
        page.wait_for_function(
            "() => document.querySelector('.porter-cell-view button.porter-apply').disabled",
            timeout=10_000,
        )
        assert button.inner_text() == WORDS["applied"]
        row = _panel_rewrite(page, 0)
        row.get_by_text(WORDS["applied"]).wait_for(timeout=10_000)
        assert row.get_attribute("data-porter-state") == "applied"
        assert side.locator("button.porter-apply").count() == 0
        assert side.locator(".porter-stale-tag").count() > 0
        page.locator(".jp-Notebook .jp-Cell").first.click()  # the active cell
        assert page.evaluate(APPLY_ENABLED) is False

    def is_recorded() -> None:
        marks.first.wait_for(timeout=10_000)
        assert _marks(cell) == marked
        page.wait_for_function(
            "() => !document.querySelector('.porter-cell-view button.porter-apply').disabled",
            timeout=10_000,
        )
        assert button.inner_text() == "Apply verified rewrite"
        side.locator("button.porter-apply").wait_for(timeout=10_000)
        assert side.locator(".porter-stale-tag").count() == 0
        assert page.evaluate(APPLY_ENABLED) is True

    is_recorded()
    button.click()
    _wait_source(page, 0, applied)
    is_applied()
    _undo_in_cell(page, 0)
    _wait_source(page, 0, recorded)
    is_recorded()
    _redo_in_cell(page, 0)
    _wait_source(page, 0, applied)
    is_applied()
    save_screenshot(page.screenshot(), "apply-redo.png")
    # the Apply command, run anyway: refused, in the words of the applied state
    page.evaluate("() => window.jupyterapp.commands.execute('porter:apply-rewrite')")
    _refused(page, cell, WORDS["applied"])
    assert page.evaluate(SOURCE, 0) == applied
    _undo_in_cell(page, 0)
    _wait_source(page, 0, recorded)
    is_recorded()
    assert page_log.errors == []


def test_a_cell_typed_into_says_it_changed_and_apply_says_what(page, page_log, lab):
    """A keystroke in the cell: its output and the panel say the result no longer
    describes it (porter's words for a result without `source_states`); Apply from the
    output refuses with the line that changed, in a toast and under the button; the
    keystroke undone, Apply is offered again and applies."""
    open_notebook(page, lab, EDITED_NB)
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
    cell = _cell(page, 0)
    side = page.locator("#porter-porting-panel")
    button = cell.locator(".porter-cell-view button.porter-apply")
    cell.locator(".cm-lintRange.porter-mark").first.wait_for(timeout=60_000)
    side.locator("button.porter-apply").wait_for(timeout=10_000)
    # a space typed at the end of the last line (line 4 of the cell, the %%port line is 1)
    cell.locator(".cm-line").last.click()
    page.keyboard.press("End")
    page.keyboard.type(" ")
    _wait_source(page, 0, f"%%port\n{NB7_BODY.rstrip()} ")
    note = cell.locator(".porter-source-state")
    note.wait_for(timeout=10_000)
    assert note.inner_text() == FALLBACK_WORDS["stale"]
    _panel_rewrite(page, 0).get_by_text(FALLBACK_WORDS["stale"]).wait_for(timeout=10_000)
    assert side.locator("button.porter-apply").count() == 0
    assert button.is_enabled()
    button.click()
    _refused(page, cell, "line 4 is not the line porter recorded")
    save_screenshot(page.screenshot(), "apply-refused-inline.png")
    _undo_in_cell(page, 0)
    _wait_source(page, 0, f"%%port\n{NB7_BODY.rstrip()}")
    note.wait_for(state="detached", timeout=10_000)
    assert cell.locator(".porter-refusal").count() == 0
    button.click()
    _wait_source(page, 0, f"%%port\n{NB7_REWRITE.rstrip()}")
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
    marks = _cell(page, 0).locator(".cm-lintRange.porter-mark")
    marks.first.wait_for(timeout=60_000)
    marked = _marks(_cell(page, 0))
    assert marked == [["b = ", "np.sum"]], marked
    rewritten = f"%%port\n{NB7_REWRITE.rstrip()}"
    button.click()
    page.wait_for_function(shown, arg=[0, rewritten], timeout=10_000)
    assert button.is_disabled()
    save_screenshot(page.screenshot(), "apply-notebook7.png")
    _undo_in_cell(page, 0)
    page.wait_for_function(shown, arg=[0, typed], timeout=10_000)
    assert button.is_enabled()
    marks.first.wait_for(timeout=10_000)
    # redo: the rewrite again, the findings with it gone (no mark on another line)
    _redo_in_cell(page, 0)
    page.wait_for_function(shown, arg=[0, rewritten], timeout=10_000)
    page.wait_for_function(
        "() => !document.querySelector('.jp-Cell .porter-mark')"
        " && document.querySelector('.porter-cell-view button.porter-apply').disabled",
        timeout=10_000,
    )
    assert button.inner_text() == FALLBACK_WORDS["applied"]
    _undo_in_cell(page, 0)
    page.wait_for_function(shown, arg=[0, typed], timeout=10_000)
    marks.first.wait_for(timeout=10_000)
    assert _marks(_cell(page, 0)) == marked and button.is_enabled()
    assert [e for e in page_log.errors if e not in NOTEBOOK7_OWN_ERRORS] == []

"""Apply of a verified rewrite of the person's module, in a real JupyterLab with a real
porter kernel (labextension/src/filerewrites.ts, applyfile.ts, panel.ts; issue 26 item 4).

A notebook imports `norm_rows` from `mymod.py` beside it and runs
`%%port --fix -b numpy` over a call of it: porter verifies the module's rewrite and the
cell's JSON carries it (`file_verdicts`). The Porting panel offers Apply for mymod.py.
With the file edited on disk since the run, Apply refuses in the row clicked (and in a
notification), the file left as it is; with the recorded text back, Apply writes the
rewrite (read back from disk here) and the file's rows go stale. With the file open in
JupyterLab's editor, Apply writes through the editor (saved to disk, its marks gone) and
one Ctrl+Z there gives back the recorded text and the marks. In Notebook 7 the panel's
Apply writes the module of a saved result (the jest fixture's real run) too.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from porter_ext.ui.mime import MIME_TYPE
from tests.browser.support import (
    OPEN_BESIDE,
    RUN_ALL,
    LabServer,
    lab_server,
    open_notebook,
    save_screenshot,
    write_notebook,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LINES = [
    '"""The person\'s module."""',
    "def norm_rows(m):",
    "    n = m.pow(2).sum(1, keepdim=True).sqrt()",
    "    return m / n",
]
MODULE = "\n".join(LINES) + "\n"
SETUP = "import torch\nfrom mymod import norm_rows\na = torch.ones((3, 4))"
CALLING = "%%port --fix -b numpy\nb = norm_rows(a)"
#: the folders of the two tests: each its own notebook and module (a module is imported
#: once per kernel, and each test rewrites its own)
DISK, EDITED, NB7 = "ondisk", "ineditor", "nb7"
#: a real `%%port --fix -b numpy` run over mymod.py (labextension/scripts/file_fix_fixture.py)
FIXTURE = (
    Path(__file__).resolve().parents[2]
    / "labextension/src/__tests__/fixtures/file_fix_notebook.json"
)

PANEL = "#porter-porting-panel"
ROW = f'{PANEL} .porter-file-rewrite[data-porter-file="mymod.py"]'
EDITOR = ".jp-FileEditor"
TOGGLE_NOTIFICATIONS = "() => window.jupyterapp.commands.execute('apputils:display-notifications')"
#: the accepted verdict on mymod.py that the current notebook's porter results carry
VERDICT = """(mime) => {
  const cells = window.jupyterapp.shell.currentWidget.content.widgets;
  for (const cell of cells) {
    const outputs = cell.model.outputs;
    for (let k = 0; outputs && k < outputs.length; k++) {
      const entry = outputs.get(k).data[mime];
      const verdict = entry && (entry.file_verdicts || [])[0];
      if (verdict && verdict.accepted) { return verdict; }
    }
  }
  return null;
}"""
#: the text of the file editor of a path (its model: what a save writes)
EDITOR_SOURCE = """(path) => {
  const app = window.jupyterapp;
  for (const w of app.shell.widgets('main')) {
    if (w.context && w.context.path === path && w.content.model.type === undefined) {
      return w.content.model.sharedModel.getSource();
    }
  }
  return null;
}"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("applyfile")
    for folder in (DISK, EDITED):
        (base / "root" / folder).mkdir(parents=True)
        (base / "root" / folder / "mymod.py").write_text(MODULE, encoding="utf-8")
        write_notebook(base / "root" / folder / "fix.ipynb", SETUP, CALLING, kernel="porter")
    _saved_result(base / "root" / NB7)
    with lab_server(base) as server:
        yield server


def _saved_result(folder: Path) -> None:
    """The fixture's module, and a notebook whose calling cell holds its saved result."""
    run = json.loads(FIXTURE.read_text(encoding="utf-8"))
    folder.mkdir(parents=True)
    (folder / "mymod.py").write_text(run["module"], encoding="utf-8")
    calling = nbformat.v4.new_code_cell(CALLING, execution_count=2)
    data = {"text/plain": "porter", MIME_TYPE: run["cells"][1]["entry"]}
    calling.outputs = [nbformat.v4.new_output("display_data", data=data)]
    write_notebook(folder / "fix.ipynb", SETUP, calling, kernel="porter")


def _run_until_offered(page: Any) -> Any:
    """Run the open notebook with the panel shown, and wait for the offer's button."""
    page.evaluate("() => window.jupyterapp.commands.execute('porter:show-panel')")
    page.evaluate(RUN_ALL)
    button = page.locator(f"{ROW} button.porter-apply")
    button.wait_for(timeout=240_000)
    return button


def _wait_disk(path: Path, text: str) -> None:
    """Until the file on disk holds `text` (read from Python, as the kernel would)."""
    import time

    deadline = time.monotonic() + 10
    while path.read_text(encoding="utf-8") != text and time.monotonic() < deadline:
        time.sleep(0.1)
    assert path.read_text(encoding="utf-8") == text


def test_apply_writes_the_module_and_refuses_one_edited_since(page, page_log, lab):
    module = lab.root / DISK / "mymod.py"
    open_notebook(page, lab, f"{DISK}/fix.ipynb")
    button = _run_until_offered(page)
    row = page.locator(ROW)
    text = row.inner_text()
    # the verdict in the model's words (`summary`), after the file's name
    verdict = page.evaluate(VERDICT, "application/vnd.porter.cell+json")
    assert text.startswith(f"mymod.py: {verdict['summary']}")
    # a live cell named by its position (the extension told the kernel the order)
    assert "numpy" in text and "(called from cell 2 · In [2])" in text
    rewrite = verdict["source"]
    assert "xp.sqrt(xp.sum(xp.pow(m, 2), axis=1, keepdims=True))" in rewrite

    # edited on disk since the run: refused where the person clicked, nothing written
    edited = MODULE.replace("return m / n", "return m / (n + 1)")
    module.write_text(edited, encoding="utf-8")
    button.click()
    reason = "mymod.py changed since porter recorded it: run the cell again"
    refusal = row.locator(".porter-refusal")
    refusal.wait_for(timeout=10_000)
    assert refusal.inner_text() == f"Not applied: {reason}"
    assert refusal.get_attribute("role") == "alert"
    page.evaluate(TOGGLE_NOTIFICATIONS)
    notes = page.locator(".jp-Notification-List")
    notes.get_by_text(reason, exact=False).first.wait_for(timeout=10_000)
    save_screenshot(page.screenshot(), "apply-file-refused.png")
    page.evaluate(TOGGLE_NOTIFICATIONS)
    assert module.read_text(encoding="utf-8") == edited

    # the text porter recorded back: Apply writes the rewrite over the file
    module.write_text(MODULE, encoding="utf-8")
    button.click()
    page.locator(f"{ROW}[data-porter-applied]").wait_for(timeout=10_000)
    _wait_disk(module, rewrite)
    assert row.inner_text() == f"mymod.py: {verdict['applied_text']}"
    assert verdict["applied_text"] == (
        "rewrite applied; run a cell that calls it to check it again"
    )
    # the findings in the file (its three calls, the numpy replay that failed there)
    # describe text no longer there: stale
    rows = page.locator(f'{PANEL} .porter-diag-row[data-porter-file="mymod.py"]')
    assert rows.count() == 4
    assert rows.locator(".porter-stale-tag").count() == 4
    assert not (lab.root / DISK / "mymod.py.orig").exists()
    save_screenshot(page.screenshot(), "apply-file.png")
    assert page_log.errors == []


def test_apply_writes_through_the_open_editor_and_undo_gives_it_back(page, page_log, lab):
    path = f"{EDITED}/mymod.py"
    module = lab.root / path
    open_notebook(page, lab, f"{EDITED}/fix.ipynb")
    page.evaluate(OPEN_BESIDE, path)
    page.locator(EDITOR).wait_for(timeout=30_000)
    button = _run_until_offered(page)
    marks = page.locator(f"{EDITOR} .cm-lintRange.porter-mark")
    marks.first.wait_for(timeout=10_000)
    rewrite = page.evaluate(VERDICT, "application/vnd.porter.cell+json")["source"]

    button.click()
    page.locator(f"{ROW}[data-porter-applied]").wait_for(timeout=10_000)
    assert page.evaluate(EDITOR_SOURCE, path) == rewrite
    _wait_disk(module, rewrite)  # the editor saved it
    page.wait_for_function(
        "() => !document.querySelector('.jp-FileEditor .cm-lintRange.porter-mark')",
        timeout=10_000,
    )
    save_screenshot(page.screenshot(), "apply-file-editor.png")

    # one Ctrl+Z in the editor: the recorded text, its marks and the offer are back
    page.locator(f"{EDITOR} .cm-content").click()
    page.keyboard.press("Control+z")
    page.wait_for_function(
        f"(path) => ({EDITOR_SOURCE})(path) === {MODULE!r}", arg=path, timeout=10_000
    )
    marks.first.wait_for(timeout=10_000)
    button.wait_for(timeout=10_000)
    assert page.locator(f"{ROW}[data-porter-applied]").count() == 0
    assert page_log.errors == []


#: what Notebook 7.6's own pages raise here with porter-ext disabled too (see
#: test_labextension.NOTEBOOK7_OWN_ERRORS)
NOTEBOOK7_OWN_ERRORS = {
    "Cannot read properties of undefined (reading 'schema')",
    "Command 'filebrowser:open-path' not registered.",
}


def test_notebook7_panel_applies_the_module_rewrite(page, page_log, lab):
    module = lab.root / NB7 / "mymod.py"
    run = json.loads(FIXTURE.read_text(encoding="utf-8"))
    [verdict] = run["cells"][1]["entry"]["file_verdicts"]
    page.goto(lab.notebook7_url(f"{NB7}/fix.ipynb"), timeout=60_000)
    # the panel is in Notebook 7's left area (closed until the person opens it)
    button = page.locator(f"{ROW} button.porter-apply")
    button.wait_for(state="attached", timeout=60_000)
    button.evaluate("b => b.click()")
    page.locator(f"{ROW}[data-porter-applied]").wait_for(state="attached", timeout=10_000)
    _wait_disk(module, verdict["source"])
    assert [e for e in page_log.errors if e not in NOTEBOOK7_OWN_ERRORS] == []

"""Issue 27: one truth, drawn by every view.

One cell with calls of every status (standard, a name outside the standard, a usage
outside it, acknowledged, outside_namespace, host sync), a device finding, a replay
failure, a dtype-only change, a mismatch and an error of its own, saved as porter saves
its result. JupyterLab and Notebook 7 (porter's renderer, the Porting panel, the editor
marks' hovers), the HTML and Markdown reports and the text output show the same counts,
the same severity for each finding and the same words: read from the page, compared
with the JSON porter wrote. Cells are named as JupyterLab names them and lines as its
editor counts them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from html import escape
from typing import Any

import nbformat
import pytest

from porter_ext.model.headline import sum_text
from porter_ext.model.report import Report
from porter_ext.report.codec import cell_to_dict, report_to_json
from porter_ext.report.html import render_html
from porter_ext.report.markdown import md_text, render_markdown
from porter_ext.ui.mime import MIME_TYPE, cell_bundle, cell_text
from porter_ext.ui.report import report_bundle, report_text
from tests.browser.support import (
    LabServer,
    hover_text,
    lab_server,
    open_notebook,
    save_screenshot,
    write_notebook,
)
from tests.model.test_diagnostics import SOURCE, every_status_cell
from tests.ui.entries import environment

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NB = "one_truth.ipynb"
#: the report of the same cell, as `%port report` shows it in a notebook
REPORT_NB = "one_truth_report.ipynb"
PANEL = "#porter-porting-panel"
SHOW_PANEL = "() => window.jupyterapp.commands.execute('porter:show-panel')"
#: what Notebook 7 and JupyterLab log on their own, without porter
OWN_ERRORS = {
    "Cannot read properties of undefined (reading 'schema')",
    "Command 'filebrowser:open-path' not registered.",
}


def the_cell() -> Any:
    """The every-status cell as the notebook's second cell (JupyterLab's cell 2)."""
    return replace(every_status_cell(), index=1)


def _notebook_cells() -> list[Any]:
    entry = the_cell()
    cell = nbformat.v4.new_code_cell(f"%%port -b jax:cpu:1,strict\n{SOURCE}")
    bundle = cell_bundle(entry)
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    return [nbformat.v4.new_markdown_cell("# porter, every status"), cell]


def the_report() -> Report:
    """The report of the every-status cell (its error, a failed replay), as porter builds it."""
    return Report.build([the_cell()], environment(), array_api_version="2024.12")


def _report_cell() -> Any:
    cell = nbformat.v4.new_code_cell("%port report")
    bundle = report_bundle(the_report(), "md")
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    return cell


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[LabServer]:
    base = tmp_path_factory.mktemp("truth")
    (base / "root").mkdir()
    write_notebook(base / "root" / NB, *_notebook_cells())
    write_notebook(base / "root" / REPORT_NB, _report_cell())
    with lab_server(base) as server:
        yield server


def test_the_python_views_say_the_models_words() -> None:
    entry = the_cell()
    data = json.loads(json.dumps(cell_to_dict(entry)))
    words = data["headline"]["text"]
    report = Report.build([entry], environment(), array_api_version="2024.12")
    html, markdown, text = render_html(report), render_markdown(report), cell_text(entry)
    assert data["label"] == "cell 2 · In [5]"
    assert text.splitlines()[0] == words
    assert md_text(words) in markdown
    assert escape(words, quote=False) in html
    for row in data["diagnostics"]:
        assert row["message"] in text
        assert f"[{row['severity']}] {row['message']}" in text
        if row["place"]:  # where it is, in the words the panel and the HTML show
            assert f"  {row['place']}: [{row['severity']}] {row['message']}" in text
            assert f"<td>{escape(row['place'], quote=False)}<td>" in html
    # each fix's kind in the model's words, in the HTML's and Markdown's plans
    for item in data["plan"]:
        assert f'<span class="kind">{item["kind_text"]}</span>' in html
        assert f"| {md_text(item['kind_text'])} |" in markdown
    # the text view, the Markdown and the HTML count as the JSON does
    assert data["headline"]["counts"]["findings"] == sum(r["finding"] for r in data["diagnostics"])
    # the error's line, the report's counts and what made it: the JSON's words in each
    whole = json.loads(report_to_json(report))
    said = {
        "error": data["error"]["text"],
        "summary": whole["summary"]["text"],
        "environment": whole["environment"]["text"],
    }
    assert said["error"].startswith(f"Raised {data['error']['type']} at line ")
    for words in said.values():
        assert escape(words, quote=False) in html
        assert md_text(words) in markdown
    assert report_text(report).startswith(f"porter report: {said['summary']}. ")


@pytest.mark.parametrize("front_end", ["jupyterlab", "notebook7"])
def test_renderer_panel_and_marks_show_the_jsons_words(page, page_log, lab, front_end):
    data = _notebook_cells()[1].outputs[0]["data"][MIME_TYPE]
    rows = data["diagnostics"]
    if front_end == "jupyterlab":
        open_notebook(page, lab, NB)
    else:
        page.goto(lab.notebook7_url(NB), timeout=60_000)
    view = page.locator(".porter-cell-view").first
    view.wait_for(timeout=60_000)
    # porter's renderer: the headline, word for word, and each fix's kind in its words
    assert view.locator(".porter-verdict").inner_text() == data["headline"]["text"]
    plan_kinds = view.locator(".porter-plan-kind").evaluate_all("ks => ks.map(k => k.textContent)")
    assert [k.strip() for k in plan_kinds] == [p["kind_text"] for p in data["plan"]]
    # the panel: porter's rows, in its words (each row's title is porter's) and severities
    if front_end == "jupyterlab":
        page.evaluate(SHOW_PANEL)
    built = page.locator(f"{PANEL} .porter-diag-row")
    built.nth(len(rows) - 1).wait_for(state="attached", timeout=60_000)
    shown = built.evaluate_all(
        "ms => ms.map(m => [m.title, m.className, m.dataset.porterCell,"
        " m.querySelector('.porter-diag-line').textContent,"
        " m.querySelector('.porter-diag-sev').title])"
    )
    # each row's severity glyph says its severity and kind in porter's words
    # (`severity_text`)
    assert sorted((t, c.split("porter-sev-")[1].split()[0], ln, g) for t, c, _, ln, g in shown) == (
        sorted(
            (
                r["title"],
                r["severity"],
                "—" if r["line"] is None else str(r["line"]),
                r["severity_text"],
            )
            for r in rows
        )
    )
    assert {cell for _, _, cell, _, _ in shown} == {"1"}  # position 1: JupyterLab's "Cell 2"
    # the head adds up the cells' counts in the model's words (`headline.sum_format`)
    assert page.locator(f"{PANEL} .porter-diag-shown").inner_text() == sum_text(
        [the_cell().headline]
    )
    # the marks: on each line a row is on, with the severities of its rows (overlapping
    # ranges split into several spans, so lines and severities are compared as sets)
    editor = page.locator(".jp-Cell").nth(1).locator(".cm-content")
    marks = editor.locator(".cm-lintRange.porter-mark")
    marked = [r for r in rows if r["line"] is not None and r["kind"] != "cell_error"]
    marks.first.wait_for(timeout=30_000)
    placed = marks.evaluate_all(
        """ms => ms.map(m => {
          const line = m.closest('.cm-line');
          const lines = Array.from(line.parentElement.querySelectorAll(':scope > .cm-line'));
          return [lines.indexOf(line) + 1, m.className];
        })"""
    )
    kinds = {"device", "device_specific"}
    assert {line for line, _ in placed} == {r["line"] for r in marked}
    assert {
        (line, next(s for s in ("error", "warning", "info") if f"porter-mark-{s}" in classes))
        for line, classes in placed
        if "porter-mark-device" not in classes
    } == {(r["line"], r["severity"]) for r in marked if r["kind"] not in kinds}
    first = hover_text(page, marks.first)
    assert rows[0]["message"] in first
    save_screenshot(page.screenshot(), f"one-truth-{front_end}.png")
    assert [e for e in page_log.errors if e not in OWN_ERRORS] == []


def test_the_html_export_and_jupyterlab_say_the_same_lines(page, page_log, lab, tmp_path):
    """The same report in the HTML export and in JupyterLab (porter's renderer of a
    report output, and of the cell's output): the summary, the environment and the
    cell's error are the same strings, the JSON's."""
    report = the_report()
    data = json.loads(report_to_json(report))
    want = [
        data["summary"]["text"],
        data["environment"]["text"],
        data["cells"][0]["error"]["text"],
    ]
    assert want[2].startswith("Raised ") and " at line " in want[2]
    export = tmp_path / "report.html"
    export.write_text(render_html(report), encoding="utf-8")
    page.goto(export.as_uri(), wait_until="load")
    in_export = [
        page.locator(sel).first.inner_text()
        for sel in ("#summary .summary-text", "header .environment", "#cell-0 .err")
    ]
    open_notebook(page, lab, REPORT_NB)
    view = page.locator(".porter-report-view").first
    view.wait_for(timeout=60_000)
    in_lab = [
        view.locator(".porter-summary").inner_text(),
        view.locator(".porter-environment").inner_text(),
    ]
    # the cell's notebook, opened beside it (the report's notebook has no cell view)
    page.evaluate(f"() => window.jupyterapp.commands.execute('docmanager:open', {{path: {NB!r}}})")
    cell = page.locator(".porter-cell-view").first
    cell.wait_for(timeout=60_000)
    in_lab.append(cell.locator(".porter-error").inner_text())
    assert in_export == in_lab == want
    assert [e for e in page_log.errors if e not in OWN_ERRORS] == []

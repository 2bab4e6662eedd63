"""A finding made by code another cell wrote is shown under that cell, at its line
there, naming the cell that called it (HTML and Markdown reports), and at the writing
cell's name and line in one cell's own output. Mirrors porter_ext/report/placement.py."""

from __future__ import annotations

import re

from porter_ext.model.calls import CallOrigin, CallRecord
from porter_ext.report import CellEntry, Report, render_markdown
from porter_ext.report.html import render_html
from porter_ext.report.placement import calls_by_cell
from porter_ext.ui.mime import cell_text
from tests.report.conftest import make_environment

DEFINING = "import torch\n\ndef f(x):\n    return torch.max(x, -x)\n"
CALLING = "# call it\nx = torch.ones(3)\ny = f(x)\n"


def _inside(index: int | None, count: int | None) -> CallRecord:
    return CallRecord(
        line=3,  # where the calling cell called f
        col=4,
        end_line=3,
        end_col=8,
        name="torch.max",
        library="torch",
        kind="function",
        status="non_standard_usage",
        standard_name="maximum",
        suggestion="xp.maximum(x, -x)",
        message="a two-array max",
        origin=CallOrigin(index, count, line=4, col=11, end_line=4, end_col=27),
    )


def _report(index: bool = True) -> Report:
    defining = CellEntry(index=2 if index else None, execution_count=5, source=DEFINING)
    calling = CellEntry(
        index=6 if index else None,
        execution_count=9,
        source=CALLING,
        calls=[_inside(2 if index else None, 5)],
    )
    return Report.build(
        [defining, calling], make_environment(), array_api_version="2024.12", porter_version="0"
    )


def test_the_finding_is_placed_in_the_writing_cell_naming_the_caller():
    report = _report()
    defining, calling = calls_by_cell(report.cells)
    assert calling == []
    [placed] = defining
    assert (placed.line, placed.col) == (4, 11)
    assert placed.note == "called from cell 7 · In [9], line 3"
    # without a notebook (a live session): by execution count, named `In [n]`
    [placed] = calls_by_cell(_report(index=False).cells)[0]
    assert placed.note == "called from In [9], line 3"


def _section(text: str, start: str, end: str | None) -> str:
    at = text.index(start)
    return text[at : text.index(end, at) if end else len(text)]


def test_the_markdown_report_shows_it_under_the_writing_cell():
    text = render_markdown(_report())
    defining = _section(text, "### Cell 3", "Nothing to report")
    assert "| 4:11 | <code>torch.max</code> (called from cell 7 · In \\[9\\], line 3) |" in defining
    # the calling cell has nothing of its own to show
    assert (
        "### Cell 7" not in text and "Nothing to report in 1 cell(s): cell 7 · In \\[9\\]." in text
    )


def test_the_html_report_shows_it_under_the_writing_cell_on_its_line():
    html = render_html(_report())
    defining = _section(html, 'id="cell-0"', 'id="cell-1"')
    calling = _section(html, 'id="cell-1"', None)
    assert "called from cell 7 · In [9], line 3" in defining
    assert re.search(r"col 11: torch\.max — non_standard_usage → xp\.maximum\(x, -x\)", defining)
    assert "called from" not in calling
    assert "code written in cell 3 · In [5]: shown there" in calling


def test_one_cells_own_output_names_the_writing_cell_and_its_line():
    calling = _report(index=False).cells[1]
    # the row's place as every view says it (`Diagnostic.place`), then the caller
    text = cell_text(calling)
    assert "  In [5], line 4: [warning] torch.max" in text
    assert text.endswith("(called from In [9], line 3)")
    assert "in code from" not in cell_text(calling)


def _in_file(line: int) -> CallRecord:
    return CallRecord(
        line=line,  # where each calling cell called into the module
        col=0,
        name="Tensor.pow",
        library="torch",
        kind="method",
        status="non_standard",
        suggestion="xp.pow(m, 2)",
        origin=CallOrigin(None, None, line=5, col=8, end_line=5, end_col=16, file="norms.py"),
    )


def test_a_site_in_a_file_reached_from_several_cells_is_one_finding_with_its_callers():
    """Issue 26: the same site of ``norms.py`` called by two cells is one finding under
    the file, naming both cells, in the Markdown and HTML reports."""
    first = CellEntry(index=1, execution_count=2, source="b = f(a)\n", calls=[_in_file(1)])
    second = CellEntry(index=3, execution_count=4, source="\nc = f(a)\n", calls=[_in_file(2)])
    report = Report.build(
        [first, second], make_environment(), array_api_version="2025.12", porter_version="0"
    )
    markdown = render_markdown(report)
    section = markdown.split("## Your files", 1)[1].split("\n## ", 1)[0]
    assert "### norms.py" in section
    rows = [row for row in section.splitlines() if "Tensor.pow" in row]
    assert len(rows) == 1
    assert "cell 2 · In \\[2\\], cell 4 · In \\[4\\]" in rows[0] and "| 5 |" in rows[0]
    html = render_html(report)
    files = html.split('<section id="files">', 1)[1].split("</section>", 1)[0]
    assert files.count("Tensor.pow") == 1
    assert "cell 2 · In [2], cell 4 · In [4]" in files
    # a report without file findings has no such section
    assert "## Your files" not in render_markdown(_report())
    assert 'id="files"' not in render_html(_report())

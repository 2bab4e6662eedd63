"""The Markdown view: findings first, tables that keep their shape, person text inert."""

from __future__ import annotations

import re
from dataclasses import replace

from porter_ext.model.calls import ErrorInfo
from porter_ext.report import CellEntry, Environment, Report, render_markdown
from porter_ext.report.markdown import fenced, md_text
from tests.report.conftest import make_call, make_cell, make_environment, make_report
from tests.report.test_html import EVIL, _evil_report


def _unescaped_pipes(line: str) -> int:
    """Column separators of a GFM table row: pipes not escaped by a backslash."""
    count, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        count += line[i] == "|"
        i += 1
    return count


def _tables(text: str) -> list[list[str]]:
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    return tables


def _assert_tables_keep_their_shape(text: str) -> None:
    tables = _tables(text)
    assert tables
    for rows in tables:
        widths = {_unescaped_pipes(row) for row in rows}
        assert len(widths) == 1, rows


def test_sections_and_top_findings(report: Report) -> None:
    text = render_markdown(report)
    for heading in (
        "# porter report: <code>demo.ipynb</code>",
        "## Summary",
        "## Top findings",
        "## Environment",
        "## Cells",
        "### Cell 1 · In \\[1\\]",
    ):
        assert heading in text
    top = text[text.index("## Top findings") : text.index("## Environment")]
    rows = [r for r in top.splitlines() if r.startswith("| <code>")]
    assert rows[0].startswith("| <code>Tensor.norm</code> | non\\_standard | 9 |")
    assert "torch.accelerator.synchronize()" in top
    assert "cell 1 · In \\[1\\], cell 2 · In \\[2\\], cell 3 · In \\[3\\]" in top
    _assert_tables_keep_their_shape(text)


def test_cells_show_only_what_needs_a_look(report: Report) -> None:
    text = render_markdown(report)
    assert "1 standard call site(s) not shown." in text
    assert "| 6:4 | <code>torch.zeros</code>" not in text  # a standard call
    assert "Nothing to report in 1 cell(s): cell 4 · In \\[4\\]." in text
    assert "**Raised RuntimeError at line 3: " in text
    assert "**Replays that did not run**" in text
    assert "timed out after 30 s" in text
    assert "❌" in text and "✅" in text


def _outside_fences(text: str) -> str:
    return re.sub(r"^(`{3,})python\n.*?\n\1$", "", text, flags=re.S | re.M)


def test_person_text_is_inert_and_tables_keep_their_columns() -> None:
    text = render_markdown(_evil_report())
    outside = _outside_fences(text)
    assert "<script>alert" not in outside
    assert "<img" not in outside
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in outside
    assert "a\\|b&#96;c&#96;&#96;d" in outside
    _assert_tables_keep_their_shape(text)
    # The source is shown verbatim, but only inside a fenced code block (where Markdown
    # renders everything as text) whose fence no backtick run in it can close.
    fence = "```"
    assert f"{fence}python\nx = 1  # {EVIL}\ny = f(x)\n{fence}" in text
    assert text.count("<script>alert") == 1


def test_md_text() -> None:
    assert md_text("a|b") == "a\\|b"
    assert md_text("x\ny\r\nz") == "x<br>y<br>z"
    assert md_text("<b>&`") == "&lt;b&gt;&amp;&#96;"
    assert md_text("*bold* _it_ [l](u) \\") == "\\*bold\\* \\_it\\_ \\[l\\](u) \\\\"
    assert md_text("@someone") == "&#64;someone"
    assert md_text("y" * 1000, limit=10) == "y" * 9 + "…"
    assert md_text(None) == ""


def test_fence_is_longer_than_any_backtick_run() -> None:
    source = "s = '```'\nt = '`````'\n"
    block = fenced(source)
    assert block.startswith("``````python\n") and block.endswith("\n``````")
    assert fenced("x = 1") == "```python\nx = 1\n```"


def test_cell_with_fences_in_its_source_stays_one_block() -> None:
    cell = make_cell(0, source='doc = """\n```\nnot code\n```\n"""\n', calls=1)
    text = render_markdown(Report.build([cell], make_environment(), array_api_version="x"))
    section = text[text.index("### Cell 1") :]
    fences = re.findall(r"^(`{3,})", section, flags=re.M)
    assert fences[0] == "````" and fences.count("````") == 2


def test_unicode_and_multiline_messages() -> None:
    cell = make_cell(0, calls=1, error=ErrorInfo("ValueError", "Δ too big\nline 2 | 日本", 1))
    text = render_markdown(
        Report.build([cell], make_environment(), array_api_version="x", notebook="résumé.ipynb")
    )
    assert "<code>résumé.ipynb</code>" in text
    assert "Δ too big<br>line 2 \\| 日本" in text


def test_empty_report_and_quiet_cells() -> None:
    text = render_markdown(Report.build([], Environment("3.11"), array_api_version="x"))
    assert "No cells were recorded." in text
    assert "## Top findings" not in text
    quiet = [
        CellEntry(0, 1, "y = 1"),
        replace(make_cell(1, calls=0, replays=0), device_findings=[]),
    ]
    text = render_markdown(Report.build(quiet, Environment("3.11"), array_api_version="x"))
    assert "Nothing to report in 2 cell(s): cell 1 · In \\[1\\], cell 2 · In \\[2\\]." in text
    assert "###" not in text


def test_standard_only_cell_is_quiet() -> None:
    cell = make_cell(0, calls=0, replays=0, device_findings=[])
    cell = replace(cell, calls=[make_call(4)])  # torch.zeros, standard
    text = render_markdown(Report.build([cell], make_environment(), array_api_version="x"))
    assert "Nothing to report in 1 cell(s)" in text


def test_big_report_markdown_is_linear() -> None:
    text = render_markdown(make_report(300, calls=20, replays=3))
    assert text.count("### Cell") == 300
    _assert_tables_keep_their_shape(text)


def test_max_cells_keeps_a_pull_request_comment_short() -> None:
    report = make_report(300, calls=20, replays=3)
    text = render_markdown(report, max_cells=5)
    assert text.count("### Cell") == 5
    assert (
        "295 more cell(s) with findings are in the full report: cell 6 · In \\[6\\], cell 7 · In \\[7\\]"
        in text
    )
    assert len(text) < 65_000
    assert f"| 300 | {report.summary.calls} |" in text  # the summary covers every cell

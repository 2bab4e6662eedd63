"""A ``%%port`` cell's output: one plain MIME bundle (text, the one HTML template of a
cell, the cell's JSON), no widget; its ``text/html`` is the report's cell section for the
same entry, drawn from the model's fields (issue 27)."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import replace
from html import escape, unescape

import pytest
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import ReplayEntry, RewriteEntry
from porter_ext.model.report import Report
from porter_ext.report.html import render_html
from porter_ext.session.result import PortResult
from porter_ext.ui.mime import MIME_TYPE, cell_bundle, cell_html
from tests.report.test_html import _tags as parse
from tests.ui.entries import ALERT_IMG, ALERT_SCRIPT, EVIL, IMG, SCRIPT, demo_cell, environment

#: the markup of porter's one cell template; anything else came from person text
TEMPLATE_TAGS = {"b", "br", "code", "p", "small", "span", "table", "tbody", "td", "th"}
TEMPLATE_TAGS |= {"thead", "tr", "div", "h3", "h4", "ol", "ul", "li", "i", "section"}
TEMPLATE_TAGS |= {"details", "summary", "style"}


def section(html: str) -> str:
    """The first cell section of a page or fragment, up to its tables' end (the figures
    after it are the report's: a cell's own output draws none)."""
    start = html.index('<section class="cell porter-cell"')
    return html[start : html.index("</details>\n", start)]


@pytest.fixture
def entry() -> CellEntry:
    return demo_cell()


def test_the_bundle_is_text_html_and_json_only(entry):
    bundle = cell_bundle(entry)
    assert set(bundle) == {"text/plain", "text/html", MIME_TYPE}
    assert bundle["text/html"] == cell_html(entry)
    assert bundle[MIME_TYPE]["label"] == entry.label == "cell 1 · In [1]"


def test_the_cell_html_and_the_reports_section_are_one_template(entry):
    """The same entry gives the same fragments in both: title, headline, plan, source,
    findings, calls, replays, numerics and devices; only the page's anchor and the
    folding of the tables differ."""
    page = render_html(Report.build([entry], environment(), array_api_version="2025.12"))
    in_report = (
        section(page)
        .replace(' id="cell-0"', "")
        .replace('<details class="tables">', '<details class="tables" open>')
    )
    assert section(cell_html(entry)) == in_report
    # and the template is the one the report links its stylesheet to
    assert '<div class="porter-cell-html"><style>' in cell_html(entry)


def test_the_cell_html_draws_the_models_fields(entry):
    html = cell_html(entry)
    text = unescape(re.sub(r"<[^>]+>", "", html))
    assert f"<h3>{escape(entry.title)}</h3>" in html
    assert f'<p class="headline">{escape(entry.headline.text)}</p>' in html
    for item in entry.plan:  # every plan item with its state in the model's words
        assert f'<span class="v bad">{escape(item.state_text)}</span>' in html
        assert item.title in text
    for row in entry.diagnostics:  # message, severity, place
        where = escape(row.place or "cell")
        cells = f'<td class="sev-{row.severity}">{row.severity}<td>{where}<td>{escape(row.message)}'
        assert cells in html
    for replay in entry.replays:
        for out in replay.outputs:
            assert f">{escape(out.verdict_text)}\n" in html
    assert '<td class="bad">differs (max abs err 0.5, 12 mismatched)' in html
    assert '<td class="bad">wrong<td>copy: not 64-byte aligned' in html  # devices
    assert "cupy is not installed" in html and "TypeError" in html  # replays
    # a notebook output stores no figures: it says where they are drawn
    assert "<img" not in html and "the HTML report draws them" in html


@pytest.mark.parametrize("status", ["verified", "partial", "refused"])
def test_the_rewrite_and_its_diff_and_each_plan_items_state(entry, status):
    rewrite = RewriteEntry(
        source="y = xp.sum(x, axis=1)\n",
        status=status,
        verified_on=["numpy"] if status == "verified" else [],
        diff="--- a\n+++ b\n-y = x.sum(1)\n+y = xp.sum(x, axis=1)",
        reason=None if status == "verified" else "not verified on strict",
    )
    rewritten = replace(entry, rewrite=rewrite)
    html = cell_html(rewritten)
    assert f'<span class="{"ok" if status == "verified" else "bad"}">{status}</span>' in html
    assert '<div class="add">+y = xp.sum(x, axis=1)</div>' in html
    assert '<div class="del">-y = x.sum(1)</div>' in html
    for item in rewritten.plan:
        assert f">{escape(item.state_text)}</span>" in html


@pytest.mark.parametrize("evil", [EVIL, SCRIPT, IMG, ALERT_SCRIPT, ALERT_IMG])
def test_person_text_is_escaped(evil):
    html = cell_html(demo_cell(evil))
    parsed = parse(html)
    for tag, attrs in parsed.tags:
        assert tag in TEMPLATE_TAGS, tag
        assert set(attrs) <= {"class", "data-s", "open"}, (tag, attrs)
    text = "".join(parsed.text)
    for where in (
        "z = torch.zeros(4)  # ",  # source
        "torch.zeros",  # call name
        "no device= given",  # message
        "no CUDA here",  # the cell's error
        "float32",  # dtype
        "cpu:0",  # device
        "while the inputs were on cpu:1",  # device finding message
        "copy: not 64-byte aligned",  # conversion
    ):
        assert where + evil in text, where


def test_a_cell_with_no_calls_and_a_cell_with_replays_only():
    quiet = cell_html(CellEntry(index=None, execution_count=3, source="a = 1\n"))
    assert '<p class="cell quiet porter-cell"><b>In [3]</b> · no array work' in quiet
    timed_out = CellEntry(
        index=1,
        execution_count=2,
        source="y = f(x)\n",
        replays=[ReplayEntry("torch", "timeout", 30.0), ReplayEntry("jax", "ok", 0.1)],
    )
    html = cell_html(timed_out)
    assert "No array calls were recorded in this cell." in html
    assert '<td class="bad">timeout' in html and "<h3>Cell 2 · In [2]</h3>" in html


# --- displaying it: one output, the plain bundle --------------------------------------------


def test_a_port_result_displays_the_plain_bundle(entry):
    InteractiveShell.instance()
    with capture_output() as captured:
        from IPython.display import display

        display(PortResult(entry))
    assert len(captured.outputs) == 1
    assert captured.outputs[0].data == cell_bundle(entry)


def test_nbconvert_renders_the_html_of_a_saved_output(entry):
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%port\n" + entry.source)
    cell.outputs = [nbformat.v4.new_output("display_data", data=cell_bundle(entry))]
    nb.cells = [cell]
    html, _ = nbconvert.HTMLExporter(template_name="basic").from_notebook_node(nb)
    assert '<div class="porter-cell-html">' in html
    assert escape(entry.headline.text) in html and entry.plan[0].state_text in html


def test_importing_porter_ext_ui_loads_nothing_heavy():
    code = (
        "import sys, porter_ext.ui\n"
        "heavy = [m for m in ('ipywidgets', 'matplotlib', 'pandas', 'jinja2', 'torch')"
        " if m in sys.modules]\n"
        "print(heavy)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"

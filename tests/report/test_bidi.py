"""Bidi controls and invisible characters are shown for what they are, with a finding.

Mirrors porter_ext/report/text.py and its use in every view: the HTML report, the
Markdown report, a cell's text/html (the same template as the report's cells) and its
text/plain.
"""

from __future__ import annotations

import sys
import unicodedata
from dataclasses import replace

import pytest
from IPython.core.interactiveshell import InteractiveShell

from porter_ext.model.cells import CellEntry
from porter_ext.model.report import Environment, Report
from porter_ext.report.codec import report_from_dict, report_to_dict
from porter_ext.report.html import render_html
from porter_ext.report.markdown import render_markdown
from porter_ext.report.text import BIDI_FINDING, FORMAT_FINDING, cell_notes, visible
from porter_ext.ui.mime import cell_html, cell_text
from tests.report.conftest import make_call

BIDI = "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c"
TROJAN = "b = np.add(a, 1)  # \u202e)a(mus.b = c\u202c"


def _report(source: str, **kw) -> Report:
    cell = CellEntry(index=0, execution_count=1, source=source, **kw)
    return Report.build([cell], Environment(python="3.11"), array_api_version="2025.12")


def test_every_format_character_of_this_python_is_escaped():
    invisible = [
        chr(c)
        for c in range(sys.maxunicode + 1)
        if unicodedata.category(chr(c)) in ("Cf", "Zl", "Zp")
    ]
    missed = [f"U+{ord(c):04X}" for c in invisible if visible(c) == c]
    assert not missed
    assert visible("a\u202eb") == "a\\u202eb"
    assert visible("tag\U000e0041") == "tag\\U000e0041"
    assert visible("plain é 中 \t text") == "plain é 中 \t text"


def test_a_source_with_bidi_controls_gets_a_finding_on_its_line():
    notes = cell_notes(
        CellEntry(index=0, execution_count=1, source=f"x = 1\n{TROJAN}\ny\u200b = 2")
    )
    assert [line for line, _ in notes] == [2, 3]
    assert BIDI_FINDING in notes[0][1] and "U+202E RIGHT-TO-LEFT OVERRIDE" in notes[0][1]
    assert FORMAT_FINDING in notes[1][1] and "ZERO WIDTH SPACE" in notes[1][1]


@pytest.mark.parametrize("char", list(BIDI))
def test_no_view_shows_a_bidi_control_raw(char):
    source = f"b = a{char}.sum(0)"
    call = replace(make_call(0), name=f"Tensor.sum{char}", message=f"msg{char}")
    entry = CellEntry(
        index=0, execution_count=1, source=source, calls=[call], notes=[f"note{char}"]
    )
    report = Report.build(
        [entry], Environment(python="3.11"), array_api_version="2025.12", notebook=f"n{char}.ipynb"
    )
    escaped = f"\\u{ord(char):04x}"
    views = {
        "html": render_html(report),
        "md": render_markdown(report),
        "cell html": cell_html(entry),
        "cell text": cell_text(entry),
    }
    for name, text in views.items():
        assert char not in text, name
        assert escaped in text, name
    for name in ("html", "md", "cell html"):
        assert BIDI_FINDING in views[name], name


def test_the_reproducer_cell_through_the_magics(tmp_path):
    """adv_23: U+202E in a %%port cell's source and its exception reached HTML and Markdown raw."""
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "porter_ext")
    try:
        ip.run_cell("import numpy as np\na = np.ones(2)")
        ip.run_cell(f"%%port --quiet\n{TROJAN}\nraise ValueError('\u202eevil')")
        for name in ("r.html", "r.md"):
            ip.run_line_magic("port", f"report -o {tmp_path / name}")
            text = (tmp_path / name).read_text(encoding="utf-8")
            assert "\u202e" not in text and "\u202c" not in text, name
            assert "\\u202e" in text and BIDI_FINDING in text, name
    finally:
        ip.run_line_magic("unload_ext", "porter_ext")
        ip.reset(new_session=False)


def test_the_json_report_keeps_the_source_exactly():
    report = _report(TROJAN)
    assert report_from_dict(report_to_dict(report)).cells[0].source == TROJAN

"""`%port report` without -o: a whole report as one notebook output."""

from __future__ import annotations

from html import unescape
from html.parser import HTMLParser

import pytest

from porter_ext.model.report import Report
from porter_ext.report.codec import report_from_dict, report_to_dict
from porter_ext.report.html import render_html
from porter_ext.report.markdown import render_markdown
from porter_ext.ui import report_bundle
from porter_ext.ui.mime import REPORT_MIME_TYPE
from tests.ui.entries import EVIL, demo_report


@pytest.fixture(scope="module")
def report() -> Report:
    return demo_report(EVIL)


def test_default_is_markdown_with_a_plain_summary(report):
    bundle = report_bundle(report, None)
    assert set(bundle) == {"text/plain", "text/markdown", REPORT_MIME_TYPE}
    assert bundle["text/markdown"] == render_markdown(report)
    assert bundle["text/plain"].startswith("porter report: 2 cell(s), 10 array call(s)")
    assert report_bundle(report, "md") == bundle


def test_json_is_the_report_itself(report):
    bundle = report_bundle(report, "json")
    assert set(bundle) == {"text/plain", "application/json", REPORT_MIME_TYPE}
    assert bundle["application/json"]["schema"] == "porter.report/1"
    assert report_to_dict(report_from_dict(bundle["application/json"])) == report_to_dict(report)


def test_html_is_a_sandboxed_iframe_holding_the_escaped_report(report):
    html = report_bundle(report, "html")["text/html"]

    class Tags(HTMLParser):
        tags: list = []

        def handle_starttag(self, tag, attrs):
            self.tags.append((tag, dict(attrs)))

    parser = Tags()
    parser.feed(html)
    [(tag, attrs)] = parser.tags  # one element: the report cannot break out of srcdoc
    assert tag == "iframe"
    assert attrs["sandbox"] == "allow-scripts"  # no allow-same-origin
    assert attrs["srcdoc"] == render_html(report)
    assert unescape(html[html.index('"') + 1 : html.index('" sandbox')]) == render_html(report)


def test_unknown_format_is_refused(report):
    with pytest.raises(ValueError, match="unknown report format 'pdf'"):
        report_bundle(report, "pdf")


def test_the_report_mime_type_carries_the_report_for_the_jupyterlab_extension(report):
    for fmt in ("md", "json"):
        data = report_bundle(report, fmt)[REPORT_MIME_TYPE]
        assert report_to_dict(report_from_dict(data)) == report_to_dict(report)
    assert REPORT_MIME_TYPE not in report_bundle(report, "html")  # HTML was asked for


def test_the_plain_text_view_shows_bidi_controls_as_escapes():
    """A bidi override in text a cell produced (here a replay's reason) would reorder the
    line in a terminal or a plain-text front end: `text/plain` writes it as ``\\u202e``,
    as the HTML and Markdown views do."""
    from porter_ext.model.cells import CellEntry
    from porter_ext.model.entries import ReplayEntry
    from porter_ext.ui.mime import cell_text

    entry = CellEntry(
        index=0,
        execution_count=1,
        source="x = 1",
        replays=[ReplayEntry(backend="torch", status="skipped", reason="evil\u202eoverride")],
    )
    text = cell_text(entry)
    assert "\u202e" not in text and "evil\\u202eoverride" in text

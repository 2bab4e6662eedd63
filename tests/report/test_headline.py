"""A cell's headline is derived once, in the model, and every view says its words: the
text view, the cell's HTML (the report's template), the JSON (read back as written) and
the report summary
(issue 17: the same cell got four different headlines in four views)."""

from __future__ import annotations

import json
from dataclasses import replace
from html import escape

import pytest

from porter_ext.model.calls import ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.headline import Headline, HeadlineCounts
from porter_ext.model.report import Report
from porter_ext.report.codec import (
    cell_from_dict,
    cell_to_dict,
    headline_to_dict,
    report_from_dict,
    report_to_json,
)
from porter_ext.report.validation import validate
from porter_ext.ui.mime import MIME_TYPE, cell_bundle, cell_html, cell_text
from tests.report.headline_cells import (
    FIXTURE,
    ISSUE_HEADLINE,
    fixture_data,
    headline_cells,
    issue_cell,
)
from tests.ui.entries import environment


def test_the_issue_cell_has_one_headline_in_the_model() -> None:
    cell = issue_cell()
    assert cell.headline.text == ISSUE_HEADLINE
    assert cell.headline.counts == HeadlineCounts(
        calls=5,
        findings=3,  # exactly the finding rows of its diagnostics
        device_findings=1,
        replays=2,  # the control checks the original itself: not a replay to port to
        replays_ok=2,
        failed_on=(),
        differs_on=(),  # only a dtype changed (every element within tolerance)
        notes=1,
        kinds={"non_standard": 1, "non_standard_usage": 1, "device": 1},
        noted={"dtype_changed": 1},
        dtype_changed_on=("numpy (float32 → float64)",),
    )
    assert [r.kind for r in cell.diagnostics if r.finding] == [
        "non_standard_usage",
        "non_standard",
        "device",
    ]


@pytest.mark.parametrize("cell", headline_cells(), ids=lambda c: c.label)
def test_text_html_and_json_say_the_same_words(cell: CellEntry) -> None:
    words = cell.headline.text
    bundle = cell_bundle(cell)
    assert cell_text(cell).splitlines()[0] == words
    assert bundle["text/plain"].splitlines()[0] == words
    shown = f'<p class="headline">{escape(words)}</p>'
    assert shown in cell_html(cell) and shown in bundle["text/html"]
    assert bundle[MIME_TYPE]["headline"] == headline_to_dict(cell.headline)
    assert bundle[MIME_TYPE]["headline"]["text"] == words


def test_the_report_carries_each_headline_and_sums_them() -> None:
    cells = headline_cells()
    report = Report.build(cells, environment(), array_api_version="2024.12")
    data = json.loads(report_to_json(report))
    validate(data)
    assert [c["headline"]["text"] for c in data["cells"]] == [c.headline.text for c in cells]
    counts = [c.headline.counts for c in cells]
    assert report.summary.replays_ok == sum(c.replays_ok for c in counts)
    assert report.summary.replays_failed == sum(len(c.failed_on) for c in counts)
    assert report.summary.device_findings == sum(c.device_findings for c in counts)
    assert report.summary.calls == sum(c.calls for c in counts)
    from porter_ext.report.html import render_html

    page = render_html(report)
    for cell in cells:
        assert f'<p class="headline">{escape(cell.headline.text)}</p>' in page


def test_a_headline_is_read_back_as_written_not_recounted() -> None:
    data = cell_to_dict(issue_cell())
    data["headline"] = headline_to_dict(
        Headline(HeadlineCounts(calls=7), "porter: as the writer said")
    )
    assert cell_from_dict(data).headline.text == "porter: as the writer said"
    assert cell_from_dict(data).headline.counts.calls == 7


def test_an_old_report_without_headlines_gets_one_derived_at_load() -> None:
    data = cell_to_dict(issue_cell())
    del data["headline"]
    report = Report.build([issue_cell()], environment(), array_api_version="2024.12")
    old = json.loads(report_to_json(report))
    del old["cells"][0]["headline"]
    validate(old)  # the field is optional: reports older than it still load
    assert cell_from_dict(data).headline.text == ISSUE_HEADLINE
    assert report_from_dict(old).cells[0].headline.text == ISSUE_HEADLINE


def test_a_changed_entry_gets_its_own_headline() -> None:
    raised = replace(issue_cell(), error=ErrorInfo("ValueError", "no", 2))
    assert raised.headline.text == (
        ISSUE_HEADLINE.replace("3 findings", "4 findings").replace(
            "1 device finding)", "1 device finding, 1 error of the cell)"
        )
        + "; the cell raised ValueError"
    )


def test_the_extensions_fixture_is_what_python_writes_now() -> None:
    """labextension/src/__tests__/headline.spec.ts reads this file; regenerate it with
    ``python -m tests.report.headline_cells`` when an entry's JSON changes."""
    committed = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert committed == fixture_data()
    assert committed["text_view"][0] == ISSUE_HEADLINE

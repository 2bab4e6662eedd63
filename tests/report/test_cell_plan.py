"""A cell's port plan is derived once, in the model, carried in the JSON (`plan` per
cell, CONTRACT.md) and read by every view: the text and the HTML (the report's cell
template) show the plan the entry carries, each item with its state in words,, never one they build again (issue 17: the plan was rebuilt
three times per display)."""

from __future__ import annotations

import json
from html import escape

from porter_ext.model.plan import build_plan
from porter_ext.model.report import Report
from porter_ext.report.codec import cell_from_dict, cell_to_dict, plan_item_to_dict, report_to_json
from porter_ext.report.validation import validate
from porter_ext.ui.mime import MIME_TYPE, cell_bundle, cell_html, cell_text
from tests.report.headline_cells import issue_cell
from tests.ui.entries import environment


def test_the_cell_plan_is_in_the_json_and_read_back_as_written() -> None:
    cell = issue_cell()
    assert cell.plan and cell.plan == build_plan([cell])
    data = cell_to_dict(cell)
    assert data["plan"] == [plan_item_to_dict(item) for item in cell.plan]
    assert cell_bundle(cell)[MIME_TYPE]["plan"] == data["plan"]
    # what the JSON says is what a view shows: a plan written elsewhere is not rebuilt
    data["plan"][0]["title"] = "the title the report carries"
    back = cell_from_dict(data)
    assert back.plan[0].title == "the title the report carries"
    assert "the title the report carries" in cell_text(back)
    assert escape("the title the report carries") in cell_html(back)
    data["plan"][0]["state_text"] = "the state the report carries"
    html = cell_html(cell_from_dict(data))
    assert '<span class="v bad">the state the report carries</span>' in html


def test_a_cell_without_a_plan_in_its_json_gets_one_derived_once() -> None:
    data = cell_to_dict(issue_cell())
    del data["plan"]  # a report written before cells carried their plan
    assert cell_from_dict(data).plan == build_plan([issue_cell()])


def test_a_report_with_cell_plans_is_valid() -> None:
    report = Report.build([issue_cell()], environment(), array_api_version="2024.12")
    document = json.loads(report_to_json(report))
    assert document["cells"][0]["plan"]
    validate(document)

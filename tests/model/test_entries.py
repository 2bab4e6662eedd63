"""Issue 27: the words views show of a cell's rewrite and of a verdict on the rewrite of
a person's file are the model's (`RewriteEntry.verified_text`, `FileVerdict.summary`,
`FileVerdict.applied_text`), carried in the JSON, so that the Porting panel and the
cell's output build no sentence of their own."""

from __future__ import annotations

import json

from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import FileVerdict, RewriteEntry
from porter_ext.report.codec import cell_from_dict, cell_to_dict
from porter_ext.report.validation import validate
from tests.ui.entries import environment


def test_a_rewrite_says_what_verified_it() -> None:
    assert RewriteEntry("s", "verified", ["numpy", "jax:cpu"]).verified_text == (
        "verified on numpy, jax:cpu"
    )
    # verified, but the replays named no spec: still verified, by its replays
    assert RewriteEntry("s", "verified").verified_text == "verified on its replays"
    assert RewriteEntry("s", "partial", ["numpy"]).verified_text == "verified on numpy"
    assert RewriteEntry("s", "refused", reason="no").verified_text is None


def test_a_file_verdict_says_what_verified_it_and_who_called() -> None:
    verified = FileVerdict(
        "mymod.py", "d", "src", True, ["torch", "numpy"], where="cell 2 · In [3]"
    )
    assert verified.summary == "verified on torch, numpy (called from cell 2 · In [3])"
    assert FileVerdict("m.py", "d", "src", True).summary == "verified on its replays"
    refused = FileVerdict(
        "mymod.py", "d", "", False, reason="the replays disagree", where="cell 3 · In [4]"
    )
    assert refused.summary == "not verified by cell 3 · In [4]: the replays disagree"
    assert FileVerdict("m.py", "d", "", False).summary == "not verified"
    assert verified.applied_text == "rewrite applied; run a cell that calls it to check it again"


def test_the_json_carries_the_words_and_validates() -> None:
    from porter_ext.model.report import Report
    from porter_ext.report.codec import report_to_json

    verdict = FileVerdict("mymod.py", "d", "src", True, ["numpy"], where="In [2]")
    cell = CellEntry(
        1,
        2,
        "y = f(x)\n",
        rewrite=RewriteEntry("y = f(x)\n", "verified", ["numpy"]),
        file_verdicts=[verdict],
    )
    data = json.loads(json.dumps(cell_to_dict(cell)))
    assert data["rewrite"]["verified_text"] == "verified on numpy"
    assert data["file_verdicts"][0]["summary"] == "verified on numpy (called from In [2])"
    assert data["file_verdicts"][0]["applied_text"] == verdict.applied_text
    # nothing verified: no words for it
    refused = CellEntry(1, 2, "y\n", rewrite=RewriteEntry("y\n", "refused", reason="no"))
    assert "verified_text" not in cell_to_dict(refused)["rewrite"]
    # read back: the words are derived again, never stored
    back = cell_from_dict(data)
    assert back.file_verdicts == [verdict] and back.rewrite == cell.rewrite
    report = Report.build([cell, refused], environment(), array_api_version="2024.12")
    validate(json.loads(report_to_json(report)))


def test_an_error_says_what_was_raised_and_where_as_the_editor_counts() -> None:
    """Issue 27: one line for an exception (`ErrorInfo.text_in`, the JSON's
    ``error.text``), its line counted as the editor counts the cell's lines."""
    from porter_ext.model.calls import ErrorInfo

    error = ErrorInfo("ValueError", "bad shape", 3)
    assert error.text_in(1) == "Raised ValueError at line 3: bad shape"
    assert error.text_in(2) == "Raised ValueError at line 4: bad shape"  # below %%port
    assert ErrorInfo("ValueError", "bad shape").text_in(2) == "Raised ValueError: bad shape"
    inside = ErrorInfo("KeyError", "'k'", 3, file="mymod.py", file_line=7)
    assert inside.text_in(2) == "Raised KeyError at mymod.py line 7 (called from line 4): 'k'"
    cell = CellEntry(1, 2, "x = 1\ny = 2\nz = f(x)\n", error=error, first_line=2)
    assert cell.error_text == "Raised ValueError at line 4: bad shape"
    assert CellEntry(1, 2, "x = 1\n").error_text is None


def test_a_report_says_its_counts_and_what_made_it_in_one_line() -> None:
    from porter_ext.model.report import Report, Summary

    summary = Summary(2, 10, 3, 1, 4, 1, 0)
    assert summary.text == (
        "2 cell(s), 10 array call(s), 3 outside the standard, 1 device finding(s), "
        "4 replay(s) ok, 1 failed, 0 numeric mismatch(es)"
    )
    report = Report.build([], environment(), array_api_version="2024.12", porter_version="0.4")
    assert report.environment_text == "porter 0.4 · array API standard 2024.12 · Python 3.11.9"


def test_a_rows_severity_is_said_with_its_kind() -> None:
    from tests.model.test_diagnostics import every_status_cell

    rows = every_status_cell().diagnostics
    assert {r.severity_text for r in rows} >= {
        "error: call outside the standard",
        "warning: usage outside the standard",
        "info: acknowledged call",
    }
    assert all(r.severity_text == f"{r.severity}: {r.kind_text}" for r in rows)


def test_the_json_carries_the_error_summary_and_environment_words() -> None:
    from porter_ext.model.calls import ErrorInfo
    from porter_ext.model.entries import ReplayEntry
    from porter_ext.model.report import Report
    from porter_ext.report.codec import report_from_dict, report_to_json

    error = ErrorInfo("ZeroDivisionError", "division by zero", 2)
    cell = CellEntry(
        0,
        1,
        "x = 1\n1 / 0\n",
        error=error,
        replays=[ReplayEntry("numpy", "error", 0.1, error=error)],
        first_line=2,
    )
    report = Report.build([cell], environment(), array_api_version="2024.12", porter_version="0.4")
    data = json.loads(report_to_json(report))
    validate(data)
    said = "Raised ZeroDivisionError at line 3: division by zero"
    assert data["cells"][0]["error"]["text"] == said
    assert data["cells"][0]["replays"][0]["error"]["text"] == said
    assert data["summary"]["text"] == report.summary.text
    assert data["environment"]["text"] == report.environment_text
    assert all(r["severity_text"] for r in data["cells"][0]["diagnostics"])
    # read back: the words are derived again, never stored
    back = report_from_dict(data)
    assert back.cells[0].error == error and back.summary == report.summary
    assert json.loads(report_to_json(back)) == data

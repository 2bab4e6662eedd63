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

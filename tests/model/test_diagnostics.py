"""Issue 27 item 1: findings, severities, verdicts, plan states and numbering are decided
once, in the model, and carried in the JSON; every view draws them.

One cell with calls of every status, a device finding, a replay failure, a dtype-only
change, a mismatch and an error of its own: its diagnostics rows, the headline counted
over exactly them, the JSON that carries both, and the lines as the editor counts them.
"""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from porter_ext.model.calls import SEVERITY_OF_STATUS, STATUSES, CallOrigin, CallRecord, ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.comparison import VERDICTS, DeviceFinding
from porter_ext.model.entries import ReplayEntry, RewriteEntry, RewriteSiteEntry
from porter_ext.model.headline import sum_text
from porter_ext.model.plan import PLAN_KINDS, PLAN_STATES
from porter_ext.model.report import Report
from porter_ext.report.codec import cell_from_dict, cell_to_dict, report_to_json
from porter_ext.report.validation import validate
from tests.ui.entries import call, environment, output

SOURCE = (
    "import torch\n"
    "y = torch.max(a, b)\n"
    "s = x.sum(1)\n"
    "e = xp.backend.exp2(x)\n"
    "v = float(s[0])\n"
    "f = jax.jit(g)\n"
    "z = torch.zeros(3)\n"
)


def every_status_cell(first_line: int = 2) -> CellEntry:
    """A ``%%port`` cell (its body starts on the editor's line 2) with every kind of row."""
    calls = [
        call(2, 4, "torch.max", "non_standard_usage", suggestion="xp.maximum(a, b)"),
        call(3, 4, "Tensor.sum", "non_standard", suggestion="xp.sum(x, axis=1)"),
        call(4, 4, "xp.backend.exp2", "acknowledged"),
        call(5, 4, "float", "host_sync"),
        call(6, 4, "jax.jit", "outside_namespace"),
        call(7, 4, "torch.zeros", "standard", standard_name="zeros"),
    ]
    findings = [DeviceFinding(7, "torch.zeros", "default_device_creation", "jax:cpu:1", "m")]
    replays = [
        ReplayEntry(
            "jax:cpu:1",
            "ok",
            0.1,
            outputs=[
                output("y", dtype="float32", expected_dtype="float64", difference="dtype_changed"),
                output(
                    "s", within_tolerance=False, max_abs_err=0.5, mismatched=3, difference="numeric"
                ),
                output("z"),
            ],
        ),
        ReplayEntry("strict", "error", 0.1, error=ErrorInfo("TypeError", "no sum\nmore", 3)),
    ]
    return CellEntry(
        index=6,
        execution_count=5,
        source=SOURCE,
        calls=calls,
        device_findings=findings,
        replays=replays,
        error=ErrorInfo("ValueError", "bad", 7),
        first_line=first_line,
    )


def test_one_documented_severity_per_status() -> None:
    assert set(SEVERITY_OF_STATUS) == set(STATUSES)
    made = {s: CallRecord(1, 0, "f", "numpy", "function", s) for s in STATUSES}  # type: ignore[arg-type]
    assert {s: c.severity for s, c in made.items()} == SEVERITY_OF_STATUS
    assert {s for s, c in made.items() if c.finding} == {
        "non_standard",
        "non_standard_usage",
        "device_specific",
    }


def test_the_rows_of_a_cell_with_every_status() -> None:
    cell = every_status_cell()
    rows = [(r.kind, r.severity, r.finding, r.line) for r in cell.diagnostics]
    assert rows == [
        # calls: lines as the editor counts them, the %%port line being line 1
        ("non_standard_usage", "warning", True, 3),
        ("non_standard", "error", True, 4),
        ("acknowledged", "info", False, 5),
        ("host_sync", "info", False, 6),
        # jax.jit (outside_namespace) and the standard torch.zeros have no row
        ("device", "warning", True, 8),
        ("cell_error", "error", True, 8),
        ("dtype_changed", "info", False, None),
        ("mismatch", "error", True, None),
        ("replay_failure", "error", True, 4),
    ]
    assert [r.source_line for r in cell.diagnostics][:2] == [2, 3]
    words = {r.kind: r.message for r in cell.diagnostics}
    assert words["dtype_changed"] == "jax:cpu:1: y dtype changed (float64 → float32)"
    assert words["mismatch"] == "jax:cpu:1: s differs (max abs err 0.5, 3 mismatched)"
    assert words["replay_failure"] == "replay on strict: error TypeError: no sum …"


def test_the_headline_counts_exactly_the_rows() -> None:
    cell = every_status_cell()
    counts = cell.headline.counts
    assert counts.findings == sum(r.finding for r in cell.diagnostics) == 6
    assert counts.notes == sum(not r.finding for r in cell.diagnostics) == 3
    assert counts.differs_on == ("jax:cpu:1",)  # the mismatch, not the dtype change
    assert counts.dtype_changed_on == ("jax:cpu:1 (float64 → float32)",)
    # the panel adds up cells' counts (each cell's entry comes on its own) in these words
    assert cell.headline.sum_format == "findings: {findings} · noted: {notes}"
    assert sum_text([cell.headline, cell.headline]) == "findings: 12 · noted: 6"
    assert cell_to_dict(cell)["headline"]["sum_format"] == cell.headline.sum_format
    assert cell.headline.text == (
        "porter: 6 findings in 6 array calls (1 call outside the standard, 1 usage outside "
        "the standard, 1 device finding, 1 error of the cell, 1 replay failure, 1 mismatch); "
        "noted: 1 acknowledged call, 1 host sync; 1/2 replays ok; failed on strict; "
        "differs on jax:cpu:1; dtype changed on jax:cpu:1 (float64 → float32); "
        "the cell raised ValueError"
    )


def test_a_dtype_change_alone_never_reads_differs() -> None:
    """Issue 27 item 5: the tutorial's portable cell read "differs on jax:cpu:1" where
    only float64 became float32, with 0 mismatched elements."""
    out = output("y", dtype="float32", expected_dtype="float64", difference="dtype_changed")
    cell = CellEntry(0, 1, "y = f(x)\n", replays=[ReplayEntry("jax:cpu:1", "ok", outputs=[out])])
    assert out.verdict == "dtype_changed"
    assert out.verdict_text == "dtype changed (float64 → float32)"
    assert "differs" not in cell.headline.text
    assert cell.headline.text.endswith("dtype changed on jax:cpu:1 (float64 → float32)")


@pytest.mark.parametrize(
    ("values", "verdict"),
    [
        ({}, "match"),
        ({"within_tolerance": False, "difference": "numeric"}, "mismatch"),
        ({"difference": "shape_changed", "within_tolerance": False}, "mismatch"),
        ({"difference": "dtype_changed"}, "dtype_changed"),
        ({"difference": "dtype_changed", "within_tolerance": False}, "mismatch"),
        ({"difference": "order_only"}, "order_only"),
        ({"difference": "sign_only"}, "sign_only"),
        ({"deterministic": False, "within_tolerance": None}, "nondeterministic"),
        ({"within_tolerance": None}, "not_compared"),
    ],
)
def test_one_verdict_per_output(values: dict, verdict: str) -> None:
    out = output("y", **values)
    assert out.verdict == verdict and verdict in VERDICTS


def test_the_json_carries_every_decision_and_validates() -> None:
    cell = every_status_cell()
    data = json.loads(json.dumps(cell_to_dict(cell)))
    report = Report.build([cell], environment(), array_api_version="2024.12")
    validate(json.loads(report_to_json(report)))
    assert data["label"] == "cell 7 · In [5]"  # index 6: JupyterLab's cell 7
    assert data["first_line"] == 2
    assert [(c["finding"], c["severity"]) for c in data["calls"][:2]] == [
        (True, "warning"),
        (True, "error"),
    ]
    outs = data["replays"][0]["outputs"]
    assert [o["verdict"] for o in outs] == ["dtype_changed", "mismatch", "match"]
    assert len(data["diagnostics"]) == len(cell.diagnostics)
    assert data["diagnostics"][0]["hover"].startswith("torch.max")
    # each row's kind in the headline's words (the panel's glyph says it in its title)
    words = {r["kind"]: r["kind_text"] for r in data["diagnostics"]}
    assert words["non_standard_usage"] == "usage outside the standard"
    assert words["non_standard"] == "call outside the standard"
    assert len(set(words.values())) == len(words) >= 6  # one word per kind, kinds apart
    assert data["headline"]["counts"]["findings"] == 6
    back = cell_from_dict(data)
    assert back.diagnostics == cell.diagnostics and back.headline == cell.headline


def test_rows_of_code_in_another_cell_are_placed_there_with_its_lines() -> None:
    origin = CallOrigin(2, 3, line=4, col=8, end_line=4, end_col=20, first_line=2)
    inside = replace(call(1, 4, "Tensor.view", "non_standard"), origin=origin)
    cell = CellEntry(5, 9, "y = f(x)\n", calls=[inside], first_line=2)
    [row] = cell.diagnostics
    # line 4 of the writing cell's body is its editor line 5; the caller's line 1 is 2
    assert (row.line, row.source_line, row.end_line, row.col) == (5, 4, 5, 8)
    assert row.origin == origin and row.called_from == "cell 6 · In [9], line 2"
    assert row.calling_line == 1
    # where it is and who called, in the words every view shows (the panel's row and
    # Cell column, the text output, the hover and the title)
    assert row.place == "cell 3 · In [3], line 5"
    assert row.called_from_text == "called from cell 6 · In [9], line 2"
    assert row.hover.endswith("\ncalled from cell 6 · In [9], line 2")
    assert (
        row.title == "cell 3 · In [3], line 5: Tensor.view (called from cell 6 · In [9], "
        "line 2) — Tensor.view"
    )


def test_rows_say_where_they_are_and_who_called_in_words() -> None:
    """Issue 27: the panel's place and "called from" come from the model, not from
    TypeScript (labextension/src builds no sentence)."""
    in_file = CallOrigin(None, None, line=5, col=8, file="norms.py")
    written = replace(call(2, 4, "Tensor.pow", "non_standard"), origin=in_file)
    own = call(3, 4, "Tensor.sum", "non_standard")
    cell = CellEntry(5, 9, "import norms\ny = norms.f(x)\nz = x.sum()\n", calls=[written, own])
    cell = replace(cell, first_line=2)
    there, here = cell.diagnostics
    assert (there.place, there.called_from_text) == (
        "norms.py line 5",
        "called from cell 6 · In [9], line 3",
    )
    assert (here.place, here.called_from_text) == ("line 4", None)
    # the whole cell (an output on the wrong device has no line): no place
    assert every_status_cell().diagnostics[6].place == ""
    rows = json.loads(json.dumps(cell_to_dict(cell)))["diagnostics"]
    assert [(r["place"], r["called_from_text"]) for r in rows] == [
        ("norms.py line 5", "called from cell 6 · In [9], line 3"),
        ("line 4", None),
    ]
    assert cell_from_dict({**cell_to_dict(cell)}).diagnostics == cell.diagnostics


def test_plan_states_say_what_became_of_each_fix() -> None:
    """A partial rewrite is never "fixed automatically" (the issue's cumsum cell)."""
    base = every_status_cell(first_line=1)
    site = RewriteSiteEntry(3, 4, "Tensor.sum", "x.sum(1)", "xp.sum(x, axis=1)", applied=True)
    left = RewriteSiteEntry(2, 4, "torch.max", "torch.max(a, b)", None, reason="no template")

    def state(rewrite: RewriteEntry | None, name: str) -> tuple[str, str]:
        cell = replace(base, rewrite=rewrite)
        item = next(i for i in cell.plan if i.title.startswith(name))
        assert item.state in PLAN_STATES
        return item.state, item.state_text

    assert state(None, "Tensor.sum") == ("needs_you", "needs you")
    verified = RewriteEntry("...", "verified", ["numpy"], [site, left])
    assert state(verified, "Tensor.sum") == ("verified", "verified rewrite (Apply offered)")
    assert state(verified, "torch.max") == ("refused", "rewrite refused: no template")
    why = "not verified on numpy: 'Tensor' object has no attribute 'astype'"
    partial = RewriteEntry("...", "partial", [], [site], reason=why)
    assert state(partial, "Tensor.sum") == (
        "partial",
        f"rewritten in a partial rewrite, not offered: {why}",
    )
    cell = replace(base, rewrite=partial)
    assert not any(i.automatic for i in cell.plan)
    assert all("fixed automatically" not in i.state_text for i in cell.plan)


def test_plan_items_name_their_kind_in_words() -> None:
    """Every view (the HTML's plan, Markdown's, the extension's) shows `kind_text`."""
    cell = every_status_cell()
    words = {i.kind: i.kind_text for i in cell.plan}
    assert words == {
        "replay_failure": "replay failure",
        "non_standard": "outside the standard",
        "device": "device",
    }
    assert set(words) == set(PLAN_KINDS)
    data = cell_to_dict(cell)["plan"]
    assert [p["kind_text"] for p in data] == [i.kind_text for i in cell.plan]

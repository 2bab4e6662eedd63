"""The report's JSON codec (`porter_ext.report.codec`): every field of every model type
through JSON text and back, exactly, in the contract's key order."""

from __future__ import annotations

import json
import math

from porter_ext.model.calls import CallOrigin, CallRecord, ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.comparison import DeviceFinding, ErrorHistogram, OutputComparison
from porter_ext.model.entries import (
    DefinitionVerdict,
    ReplayEntry,
    RewriteEntry,
    RewriteSiteEntry,
)
from porter_ext.model.report import Report
from porter_ext.report.codec import (
    cell_from_dict,
    cell_to_dict,
    report_from_dict,
    report_to_json,
)
from porter_ext.report.validation import validate
from tests.report.conftest import make_environment


def every_field_cell() -> CellEntry:
    """A cell with a value in every optional field: an origin in another cell, a replay
    with and one without calls, non-finite errors, plots' data, a rewrite, notes and a
    verdict on an earlier cell's definition."""
    output = OutputComparison(
        name="y",
        shape=[2, 2],
        dtype="float32",
        device="cpu",
        expected_device="cpu",
        device_ok=True,
        max_abs_err=math.inf,
        max_rel_err=0.5,
        mismatched=1,
        nan_mismatch=False,
        within_tolerance=False,
        rtol=1e-5,
        atol=1e-8,
        conversion="dlpack",
        note="n",
        reference_err=-math.inf,
        original_reference_err=0.5,
        difference="numeric",
        deterministic=True,
        error_histogram=ErrorHistogram([0.0, 1.0, 2.0], [1, 2], 1),
        error_map=[[0.5, None]],
    )
    call = CallRecord(
        line=3,
        col=4,
        name="ndarray.sum",
        library="numpy",
        kind="method",
        status="non_standard_usage",
        standard_name="sum",
        suggestion="xp.sum(x, axis=1)",
        devices_in=["cpu"],
        device_out="cpu",
        count=2,
        message="positional axis",
        keywords=["axis"],
        end_line=3,
        end_col=12,
        origin=CallOrigin(1, 5, 2, 3, end_line=2, end_col=9, cell_id="cell-id"),
    )
    return CellEntry(
        index=2,
        execution_count=7,
        source="y = x.sum(1)\n",
        error=ErrorInfo("ValueError", "bad", 1),
        calls=[call],
        device_findings=[DeviceFinding(1, "y", "cross_device", "jax:cpu:1", "moved")],
        replays=[
            ReplayEntry(
                "numpy", "ok", 0.25, None, None, "local", "target", outputs=[output], calls=[call]
            ),
            ReplayEntry("torch", "error", None, ErrorInfo("E", "m", 2), "why", role="control"),
        ],
        notes=["a note"],
        rewrite=RewriteEntry(
            "y = xp.sum(x, axis=1)\n",
            "partial",
            ["numpy"],
            [RewriteSiteEntry(1, 4, "ndarray.sum", "x.sum(1)", "xp.sum(x, axis=1)", True)],
            "one site refused",
            "diff",
        ),
        definition_verdicts=[DefinitionVerdict(1, "f", True, "line 2: `f(x)`", ["numpy"])],
    )


def test_every_field_of_a_cell_travels_exactly() -> None:
    cell = every_field_cell()
    back = cell_from_dict(json.loads(json.dumps(cell_to_dict(cell), allow_nan=False)))
    assert back == cell
    assert (back.headline, back.plan) == (cell.headline, cell.plan)
    assert back.calls[0].origin == cell.calls[0].origin
    assert back.replays[0].outputs[0].max_abs_err == math.inf
    assert back.replays[1].calls is None


def test_a_cell_is_written_in_the_contracts_order() -> None:
    data = cell_to_dict(every_field_cell())
    keys = "index execution_count source error calls device_findings replays headline plan"
    extensions = ["first_line", "label", "diagnostics", "source_states"]
    assert list(data) == [*keys.split(), "rewrite", *extensions, "notes", "definition_verdicts"]
    assert "origin_cell" not in data["calls"][0]  # the recorder's own label stays inside
    assert data["replays"][0]["outputs"][0]["reference_err"] == "-inf"
    assert "calls" not in data["replays"][1]


def test_a_report_of_such_cells_validates_and_reads_back() -> None:
    report = Report.build(
        [every_field_cell()], make_environment(), array_api_version="2024.12", notebook="n"
    )
    text = report_to_json(report)
    validate(json.loads(text))
    assert report_from_dict(json.loads(text)) == report

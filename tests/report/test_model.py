"""The report model: exact JSON round trips and the summary's counting rules."""

from __future__ import annotations

import json
import math
from dataclasses import replace

from porter_ext.model.calls import ErrorInfo
from porter_ext.model.comparison import OutputComparison
from porter_ext.report import (
    SCHEMA,
    CellEntry,
    OutputEntry,
    ReplayEntry,
    Report,
    Summary,
    report_from_dict,
    report_from_json,
    report_to_dict,
    report_to_json,
    validate,
)
from porter_ext.report.codec import replay_to_dict
from tests.report.conftest import (
    make_call,
    make_cell,
    make_environment,
    make_output,
    make_replay,
    make_report,
    mismatched_entry,
)


def test_round_trip_through_dict_and_json_is_exact(report: Report) -> None:
    data = report_to_dict(report)
    validate(data)
    assert report_from_dict(data) == report
    again = report_from_json(report_to_json(report))
    assert again == report
    assert report_to_json(again) == report_to_json(report)


def test_round_trip_keeps_output_classes_and_optional_fields() -> None:
    entry = mismatched_entry()
    bare = make_output("q")  # plot keys present but null
    inf = make_output("w", max_abs_err=math.inf, max_rel_err=-math.inf, mismatched=3)
    replay = make_replay("numpy", outputs=[entry, bare, inf], calls=[make_call(1)])
    no_calls = make_replay("jax", calls=None)
    empty_calls = make_replay("strict", calls=[])
    cell = make_cell(None, replays=[replay, no_calls, empty_calls])
    report = Report.build([cell], make_environment(), array_api_version="2023.12")
    back = report_from_json(report_to_json(report))
    assert back == report
    outputs = back.cells[0].replays[0].outputs
    assert type(outputs[0]) is OutputEntry and outputs[0].error_histogram is not None
    assert type(outputs[1]) is OutputEntry and outputs[1].error_histogram is None
    assert type(outputs[2]) is OutputComparison and outputs[2].max_abs_err == math.inf
    assert back.cells[0].replays[1].calls is None
    assert back.cells[0].replays[2].calls == []
    assert "calls" not in report_to_dict(report)["cells"][0]["replays"][1]


def test_json_has_the_contract_keys_and_only_standard_numbers() -> None:
    report = make_report(1)
    data = json.loads(report_to_json(report))
    assert data["schema"] == SCHEMA
    assert list(data) == [
        "schema",
        "porter_version",
        "array_api_version",
        "source",
        "environment",
        "plan",
        "cells",
        "summary",
    ]
    cell = data["cells"][0]
    assert set(cell) == {
        "index",
        "execution_count",
        "source",
        "error",
        "calls",
        "device_findings",
        "replays",
        "headline",
        "plan",
        "rewrite",
        "first_line",
        "label",
        "diagnostics",
        "source_states",
    }
    assert set(cell["calls"][0]) >= {
        "line",
        "col",
        "name",
        "library",
        "kind",
        "status",
        "standard_name",
        "suggestion",
        "devices_in",
        "device_out",
        "count",
        "message",
    }
    output = cell["replays"][0]["outputs"][0]
    assert set(output) >= {
        "name",
        "shape",
        "dtype",
        "device",
        "expected_device",
        "device_ok",
        "max_abs_err",
        "max_rel_err",
        "mismatched",
        "nan_mismatch",
        "within_tolerance",
        "rtol",
        "atol",
        "conversion",
    }
    nonfinite = make_output(max_abs_err=math.nan, max_rel_err=math.inf)
    text = replay_to_dict(ReplayEntry("numpy", "ok", 0.1, outputs=[nonfinite]))
    assert text["outputs"][0]["max_abs_err"] == "nan"
    assert text["outputs"][0]["max_rel_err"] == "inf"


def test_unknown_keys_from_a_newer_writer_are_ignored() -> None:
    data = report_to_dict(make_report(1))
    data["extra"] = 1
    data["cells"][0]["calls"][0]["future_field"] = "x"
    validate(data)
    assert report_from_dict(data) == make_report(1)


def test_summary_counts() -> None:
    std = make_call(4)  # standard, count 2
    calls = [
        make_call(1, count=2),  # non_standard_usage → counts
        make_call(3, count=1),  # device_specific → counts
        make_call(0, count=4),  # non_standard → counts
        make_call(6, count=5),  # host_sync → does not count
        make_call(7, count=7),  # acknowledged → does not count
        std,
    ]
    replays = [
        make_replay(
            "numpy",
            outputs=[
                make_output("a", mismatch=True),
                make_output("b"),
                make_output("c", within_tolerance=None),
            ],
        ),
        make_replay("jax", outputs=[make_output("a", device_ok=False)]),  # device, not numeric
        make_replay("strict", "error"),
        make_replay("torch", "timeout"),
        make_replay("cupy", "skipped"),
    ]
    cell = CellEntry(0, 1, "x", calls=calls, replays=replays, device_findings=[])
    clean = CellEntry(1, 2, "y = 1")
    summary = Summary.of([cell, clean])
    assert summary == Summary(
        cells=2,
        calls=2 + 1 + 4 + 5 + 7 + std.count,
        non_standard=2 + 1 + 4,
        device_findings=1,  # the wrong device the devices table shows (issue 10)
        replays_ok=2,
        replays_failed=2,
        mismatches=1,
    )
    assert Summary.of([]) == Summary()


def test_build_computes_the_summary_and_labels_cells() -> None:
    report = make_report(2)
    assert report.summary == Summary.of(report.cells)
    assert report.summary.device_findings == 2
    assert report.cells[1].label == "cell 2 · In [2]"  # index 1: JupyterLab's cell 2
    live = CellEntry(None, 7, "x")
    assert live.label == "In [7]"
    assert CellEntry(None, None, "").label == "cell"
    assert replace(live, error=ErrorInfo("E", "m")).error.line is None

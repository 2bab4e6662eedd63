"""The cells whose headline every view must say in the same words, and the JSON fixture
the extension's jest test reads (labextension/src/__tests__/fixtures/headline.json).

`issue_cell` is the cell of issue 17 that four views described four ways: a torch cell
whose control replay timed out, whose jax replay put an output on the wrong device and
whose numpy replay changed a dtype. The fixture is these entries as Python writes them,
with the first line of Python's text view beside each; `tests/report/test_headline.py`
checks the committed file equals what this module makes now, so it cannot go stale.
Regenerate it with ``.venv/bin/python -m tests.report.headline_cells``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from porter_ext.model.calls import ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import ReplayEntry
from porter_ext.model.report import Report
from porter_ext.report.codec import cell_to_dict, report_to_json
from porter_ext.ui.mime import cell_text
from tests.ui.entries import call, environment, output

FIXTURE = Path(__file__).resolve().parents[2] / "labextension/src/__tests__/fixtures/headline.json"

#: the words the issue's cell must get in every view
ISSUE_HEADLINE = (
    "porter: 3 findings in 5 array calls (1 call outside the standard, 1 usage outside the "
    "standard, 1 device finding); 2/2 replays ok; dtype changed on numpy (float32 → float64)"
)


def issue_cell() -> CellEntry:
    """Control replay timed out, jax on the wrong device, numpy changed a dtype."""
    source = "import torch\nx = torch.ones(3, 4)\ny = x.sum(1)\nz = torch.zeros(4)\n"
    calls = [
        call(2, 4, "torch.ones", "non_standard_usage", suggestion="xp.ones((3, 4))"),
        call(3, 4, "Tensor.sum", "non_standard", suggestion="xp.sum(x, axis=1)", count=2),
        call(4, 4, "torch.zeros", "standard", standard_name="zeros", count=2),
    ]
    replays = [
        ReplayEntry("torch", "timeout", 30.0, reason="ran past 30 s", role="control"),
        ReplayEntry(
            "jax:cpu:1",
            "ok",
            0.2,
            outputs=[
                output("y", device="cpu:0", expected_device="cpu:1", device_ok=False),
                output("z", device="cpu:1", expected_device="cpu:1"),
            ],
        ),
        ReplayEntry(
            "numpy",
            "ok",
            0.01,
            outputs=[
                output(
                    "y",
                    dtype="float64",
                    expected_dtype="float32",
                    difference="dtype_changed",
                    note="dtype_changed: float32 → float64",
                ),
                output("z"),
            ],
        ),
    ]
    return CellEntry(index=3, execution_count=4, source=source, calls=calls, replays=replays)


def headline_cells() -> list[CellEntry]:
    """The issue's cell, a clean one, and one that raised with a failed replay."""
    clean = CellEntry(
        index=0,
        execution_count=1,
        source="y = xp.sum(xp.ones(3))\n",
        calls=[
            call(1, 11, "numpy.ones", "standard", library="numpy"),
            call(1, 4, "numpy.sum", "standard", library="numpy"),
        ],
        replays=[ReplayEntry("torch", "ok", 0.01, outputs=[output("y", shape=[])])],
    )
    raised = CellEntry(
        index=1,
        execution_count=2,
        source="1 / 0\n",
        error=ErrorInfo("ZeroDivisionError", "division by zero", 1),
        replays=[
            ReplayEntry(
                "strict", "error", 0.01, error=ErrorInfo("ZeroDivisionError", "division by zero", 1)
            ),
            ReplayEntry("cupy", "skipped", reason="cupy is not installed"),
        ],
    )
    return [issue_cell(), clean, raised]


def fixture_data() -> dict[str, Any]:
    """What the committed fixture holds: the entries' JSON and Python's words for each,
    and the report of the three (porter's version fixed, so the file does not change
    with it)."""
    cells = headline_cells()
    report = Report.build(cells, environment(), array_api_version="2024.12", porter_version="0.0.0")
    return {
        "about": "written by tests/report/headline_cells.py: python -m tests.report.headline_cells",
        "cells": [json.loads(json.dumps(cell_to_dict(c), allow_nan=False)) for c in cells],
        "text_view": [cell_text(c).splitlines()[0] for c in cells],
        "report": json.loads(report_to_json(report)),
    }


def write_fixture() -> None:
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(fixture_data(), indent=2, ensure_ascii=False)
    FIXTURE.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_fixture()
    print(f"wrote {FIXTURE}")

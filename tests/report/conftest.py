"""A small factory of realistic reports: the calls, findings and comparisons porter really
produces for PyTorch / NumPy / JAX code, so the views are tested on what they will show.

Plain functions (importable as `tests.report.conftest`, which the benchmark uses too) and
a few fixtures over them.
"""

from __future__ import annotations

import itertools
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from porter_ext.compare.summary import summarize
from porter_ext.model.calls import CallRecord, ErrorInfo
from porter_ext.model.comparison import DeviceFinding, OutputComparison
from porter_ext.report import (
    BackendEntry,
    CellEntry,
    Environment,
    ReplayEntry,
    Report,
)

SOURCE = """\
import torch
x = torch.randn(4, 3, device=dev)
m = torch.max(x, y)
s = x.sum(1)
torch.cuda.synchronize()
z = torch.zeros(3)
n = float(s.norm())
out = xp.backend.exp2(m)
"""

#: (line, col, name, library, kind, status, standard_name, suggestion, message)
CALLS: list[tuple[Any, ...]] = [
    (
        2,
        4,
        "torch.randn",
        "torch",
        "function",
        "non_standard",
        None,
        "use a random generator outside the array code",
        "randn is not in the standard",
    ),
    (
        3,
        4,
        "torch.max",
        "torch",
        "function",
        "non_standard_usage",
        "maximum",
        "xp.maximum(x, y)",
        "a two-array max is spelled maximum in the standard",
    ),
    (
        4,
        4,
        "Tensor.sum",
        "torch",
        "method",
        "non_standard_usage",
        "sum",
        "xp.sum(x, axis=1)",
        "positional axis",
    ),
    (
        5,
        0,
        "torch.cuda.synchronize",
        "torch",
        "function",
        "device_specific",
        None,
        "torch.accelerator.synchronize()",
        "ties the code to CUDA",
    ),
    (6, 4, "torch.zeros", "torch", "function", "standard", "zeros", None, ""),
    (
        7,
        4,
        "Tensor.norm",
        "torch",
        "method",
        "non_standard",
        "linalg.vector_norm",
        "xp.linalg.vector_norm(s)",
        "norm is not in the standard",
    ),
    (
        7,
        4,
        "float",
        "builtins",
        "function",
        "host_sync",
        None,
        None,
        "copies the value to the host",
    ),
    (
        8,
        6,
        "torch.exp2",
        "torch",
        "function",
        "acknowledged",
        None,
        None,
        "through the backend escape hatch",
    ),
]


def make_call(i: int = 0, **overrides: Any) -> CallRecord:
    """The i-th call of a cell whose source is `source_for(n)`: call i sits in copy
    i // len(CALLS) of `SOURCE`."""
    line, col, name, library, kind, status, std, suggestion, message = CALLS[i % len(CALLS)]
    call = CallRecord(
        line=line + SOURCE.count("\n") * (i // len(CALLS)),
        col=col,
        name=name,
        library=library,
        kind=kind,
        status=status,
        standard_name=std,
        suggestion=suggestion,
        devices_in=["cuda:0"] if kind == "method" else ["cuda:0", "cuda:0"],
        device_out="cuda:0" if status != "host_sync" else None,
        count=1 + i % 3,
        message=message,
    )
    return replace(call, **overrides)


def source_for(calls: int) -> str:
    """A cell source long enough to hold `calls` calls (copies of `SOURCE`)."""
    return SOURCE * max(1, -(-calls // len(CALLS)))


def make_finding(**overrides: Any) -> DeviceFinding:
    base = DeviceFinding(
        line=6,
        name="torch.zeros",
        kind="default_device_creation",
        backend="torch:cuda:0",
        message="created on cpu while the inputs are on cuda:0; pass device=x.device",
    )
    return replace(base, **overrides)


def make_output(name: str = "m", *, mismatch: bool = False, **overrides: Any) -> OutputComparison:
    base = OutputComparison(
        name=name,
        shape=[4, 3],
        dtype="float32",
        device="cpu",
        expected_device="cpu",
        device_ok=True,
        max_abs_err=0.25 if mismatch else 1.2e-7,
        max_rel_err=0.5 if mismatch else 3.4e-7,
        mismatched=5 if mismatch else 0,
        nan_mismatch=False,
        within_tolerance=not mismatch,
        rtol=1e-5,
        atol=1e-8,
        conversion="zero_copy",
    )
    return replace(base, **overrides)


def mismatched_entry(name: str = "m", shape: tuple[int, ...] = (40, 30), seed: int = 0):
    """An `OutputEntry` with real error summaries of two arrays that differ in places."""
    rng = np.random.default_rng(seed)
    expected = rng.standard_normal(shape).astype(np.float32)
    actual = expected.copy()
    flat = actual.reshape(-1)
    flat[:: max(1, flat.size // 7)] += 0.3
    comparison = make_output(name, mismatch=True, shape=list(shape))
    hist, emap = summarize(expected, actual)
    return replace(comparison, error_histogram=hist, error_map=emap)


def make_replay(backend: str = "numpy", status: str = "ok", **overrides: Any) -> ReplayEntry:
    outputs: list[OutputComparison] = []
    error = reason = None
    if status == "ok":
        outputs = [make_output("m"), make_output("s", shape=[4], dtype="float32")]
    elif status == "error":
        error = ErrorInfo("TypeError", "max() received an invalid combination of arguments", 3)
    elif status == "skipped":
        reason = "cupy is not installed"
    fields = dict(
        backend=backend, status=status, seconds=0.0123, error=error, reason=reason, outputs=outputs
    )
    fields.update(overrides)
    return ReplayEntry(**fields)


def make_cell(
    index: int | None = 0,
    calls: int = len(CALLS),
    replays: int | list[ReplayEntry] = 2,
    source: str | None = None,
    **overrides: Any,
) -> CellEntry:
    backends = itertools.cycle(["numpy", "jax:cpu:1", "strict:device1", "cupy"])
    statuses = itertools.cycle(["ok", "ok", "ok", "skipped"])
    fields = dict(
        index=index,
        execution_count=None if index is None else index + 1,
        source=source_for(calls) if source is None else source,
        error=None,
        calls=[make_call(i) for i in range(calls)],
        device_findings=[make_finding()],
        replays=replays
        if isinstance(replays, list)
        else [make_replay(next(backends), next(statuses)) for _ in range(replays)],
    )
    fields.update(overrides)
    return CellEntry(**fields)


def make_environment() -> Environment:
    return Environment(
        python="3.11.9",
        backends=[
            BackendEntry("numpy", "numpy", "2.1.0", True, ["cpu"]),
            BackendEntry("torch:cuda:0", "torch", "2.13.0", True, ["cpu", "cuda:0"]),
            BackendEntry("jax:cpu:1", "jax", "0.4.35", True, ["cpu:0", "cpu:1"]),
            BackendEntry("cupy", "cupy", None, False, [], "cupy is not installed"),
        ],
    )


def make_report(
    cells: int = 3, calls: int = len(CALLS), replays: int = 2, notebook: str | None = "demo.ipynb"
) -> Report:
    return Report.build(
        [make_cell(i, calls=calls, replays=replays) for i in range(cells)],
        make_environment(),
        array_api_version="2024.12",
        notebook=notebook,
        porter_version="0.1.0",
    )


@pytest.fixture
def report() -> Report:
    """A small report with every kind of entry: findings, errors, mismatches with plots."""
    cells = [make_cell(i) for i in range(3)]
    cells[1] = replace(
        cells[1],
        error=ErrorInfo("RuntimeError", "Expected all tensors to be on the same device", 3),
        replays=[
            make_replay(
                "numpy",
                outputs=[
                    mismatched_entry(),
                    make_output("s", device_ok=False, device="cpu:0", expected_device="cpu:1"),
                ],
            ),
            make_replay("jax:cpu:1", "error"),
            make_replay("cupy", "skipped"),
            make_replay("torch:meta", "timeout", seconds=30.0, reason="timed out after 30 s"),
        ],
    )
    cells.append(make_cell(3, calls=0, replays=0, source="# just a comment\n", device_findings=[]))
    return Report.build(
        cells,
        make_environment(),
        array_api_version="2024.12",
        notebook="demo.ipynb",
        porter_version="0.1.0",
    )

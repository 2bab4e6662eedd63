"""Cell entries and reports for the widget and browser tests, built through the report model.

`demo_cell(evil)` is one realistic `%%port` cell (torch code, four replays: a match, a
numeric mismatch with a real error histogram, a failed and a skipped replay, device
findings); `evil` is woven into the source, names, messages, dtype and device strings so
the same builder serves the escaping tests and the screenshots (with `evil=""`).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from porter_ext.compare.summary import summarize
from porter_ext.model.calls import CallRecord, ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.comparison import DeviceFinding, OutputComparison
from porter_ext.model.entries import OutputEntry, ReplayEntry
from porter_ext.model.report import BackendEntry, Environment, Report

SCRIPT = "<script>window.__xss=1</script>"
IMG = '"><img src=x onerror="window.__xss=1">'
ALERT_SCRIPT = "<script>alert(1)</script>"
ALERT_IMG = '"><img src=x onerror=alert(1)>'
PIPE = "a|b"
TICKS = "`rm -rf /`"
#: every hostile string at once: HTML, attribute breakout, a Markdown table pipe, backticks
EVIL = f" {SCRIPT} {IMG} {ALERT_SCRIPT} {ALERT_IMG} {PIPE} {TICKS}"


def call(line: int, col: int, name: str, status: str, **kw: object) -> CallRecord:
    kw.setdefault("library", "torch")
    kw.setdefault("kind", "method" if name.startswith("Tensor.") else "function")
    return CallRecord(line=line, col=col, name=name, status=status, **kw)  # type: ignore[arg-type]


def output(name: str, **kw: object) -> OutputComparison:
    values: dict[str, object] = {
        "shape": [3],
        "dtype": "float32",
        "device": "cpu",
        "expected_device": "cpu",
        "device_ok": True,
        "max_abs_err": 0.0,
        "max_rel_err": 0.0,
        "mismatched": 0,
        "nan_mismatch": False,
        "within_tolerance": True,
        "rtol": 1e-5,
        "atol": 1e-8,
        "conversion": "zero_copy",
    }
    values.update(kw)
    return OutputComparison(name=name, **values)  # type: ignore[arg-type]


def mismatch(name: str, *, seed: int = 0, **kw: object) -> OutputEntry:
    """A float32 (40, 30) output, 12 elements far off, with the real error summaries."""
    rng = np.random.default_rng(seed)
    expected = rng.standard_normal((40, 30)).astype(np.float32)
    actual = expected + rng.standard_normal(expected.shape).astype(np.float32) * 1e-7
    actual.flat[::100] += 0.5
    hist, emap = summarize(expected, actual)
    err = np.abs(actual.astype(np.float64) - expected)
    comparison = output(
        name,
        shape=[40, 30],
        max_abs_err=float(err.max()),
        max_rel_err=float((err / np.abs(expected)).max()),
        mismatched=12,
        within_tolerance=False,
        **kw,
    )
    return replace(comparison, error_histogram=hist, error_map=emap)


def demo_cell(evil: str = "", *, index: int | None = 0, count: int | None = 1) -> CellEntry:
    comment = f"  # {evil}" if evil else ""
    source = (
        "import torch\n"
        "x = torch.ones(3, 4)\n"
        "y = x.sum(1)\n"
        f"z = torch.zeros(4){comment}\n"
        f"w = torch.cuda.synchronize(){comment}\n"
    )
    calls = [
        call(
            2,
            4,
            "torch.ones",
            "non_standard_usage",
            standard_name="ones",
            suggestion="xp.ones((3, 4))",
            device_out="cpu",
            message="the standard takes the shape as one tuple",
        ),
        call(
            3,
            4,
            "Tensor.sum",
            "non_standard",
            standard_name="sum",
            suggestion="xp.sum(x, axis=1)",
            devices_in=["cpu"],
            device_out="cpu",
            message="array methods are not in the standard; call the namespace function",
        ),
        call(
            4,
            4,
            f"torch.zeros{evil}",
            "standard",
            standard_name="zeros",
            devices_in=[f"cpu{evil}"],
            device_out=f"cpu{evil}",
            count=2,
            message=f"no device= given{evil}",
        ),
        call(
            5,
            4,
            "torch.cuda.synchronize",
            "device_specific",
            suggestion=f"torch.accelerator.synchronize(){evil}",
            message="ties the code to CUDA; use the device-agnostic torch.accelerator API",
        ),
    ]
    findings = [
        DeviceFinding(
            line=4,
            name="torch.zeros",
            kind="default_device_creation",
            backend="jax:cpu:1",
            message=f"created on the default device cpu:0 while the inputs were on cpu:1{evil}",
        )
    ]
    replays = [
        ReplayEntry("numpy", "ok", 0.012, outputs=[output("y"), output(f"z{evil}")]),
        ReplayEntry(
            "jax:cpu:1",
            "ok",
            0.201,
            outputs=[
                mismatch("y", dtype=f"float32{evil}", device="cpu:1", expected_device="cpu:1"),
                output(
                    f"z{evil}",
                    device=f"cpu:0{evil}",
                    expected_device="cpu:1",
                    device_ok=False,
                    conversion=f"copy: not 64-byte aligned{evil}",
                ),
            ],
        ),
        ReplayEntry(
            "strict",
            "error",
            0.004,
            error=ErrorInfo("TypeError", f"sum() got an unexpected keyword dim{evil}", 3),
        ),
        ReplayEntry("cupy", "skipped", reason=f"cupy is not installed{evil}"),
    ]
    return CellEntry(
        index=index,
        execution_count=count,
        source=source,
        error=ErrorInfo("RuntimeError", f"no CUDA here{evil}", 5) if evil else None,
        calls=calls,
        device_findings=findings,
        replays=replays,
    )


def plain_cell(i: int) -> CellEntry:
    """A cheap cell for big reports: two calls and one matching replay."""
    return CellEntry(
        index=i,
        execution_count=i + 1,
        source=f"a{i} = xp.asarray([{i}, 2, 3])\nb{i} = a{i}.sum()\n",
        calls=[
            call(1, 5, "numpy.asarray", "standard", library="numpy"),
            call(2, 5, "ndarray.sum", "non_standard", library="numpy", suggestion=f"xp.sum(a{i})"),
        ],
        replays=[ReplayEntry("torch", "ok", 0.01, outputs=[output(f"b{i}", shape=[])])],
    )


def environment(evil: str = "") -> Environment:
    return Environment(
        python="3.11.9",
        backends=[
            BackendEntry("numpy", "numpy", "2.4.6", True, ["cpu"]),
            BackendEntry("torch", "torch", "2.13.0", True, ["cpu", "meta"]),
            BackendEntry("jax:cpu:1", "jax", "0.10.2", True, ["cpu:0", f"cpu:1{evil}"]),
            BackendEntry("cupy", "cupy", None, False, reason="No module named 'cupy'"),
        ],
    )


def demo_report(evil: str = "", *, extra_cells: int = 0) -> Report:
    cells = [demo_cell(evil), demo_cell(evil, index=2, count=3)]
    cells += [plain_cell(i) for i in range(3, 3 + extra_cells)]
    return Report.build(
        cells,
        environment(evil),
        array_api_version="2024.12",
        notebook=f"porting{evil}.ipynb",
    )

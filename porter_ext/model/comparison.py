"""Results of comparing a replay with the original run: per-output diffs and device findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

DeviceFindingKind = Literal[
    "default_device_creation",
    "cross_device",
    "implicit_transfer",
    "traced_device",
    "host_sync",
]


@dataclass(frozen=True)
class DeviceFinding:
    """A place where data did not stay on, or land on, the device it should have."""

    line: int | None
    name: str
    kind: DeviceFindingKind
    backend: str | None
    message: str


#: what kind of difference an output shows, when it shows one (CONTRACT.md ``difference``)
DifferenceKind = Literal["dtype_changed", "shape_changed", "order_only", "sign_only", "numeric"]
DIFFERENCE_KINDS: tuple[str, ...] = get_args(DifferenceKind)


@dataclass(frozen=True)
class ErrorHistogram:
    """Distribution of the absolute error of one output: enough to plot, small at any size.

    `edges` has one more entry than `counts`; the first edge is 0 and the rest are
    powers of two, because errors span orders of magnitude. `nonfinite` counts elements
    whose error is NaN or infinite (they fit in no bin).
    """

    edges: list[float]
    counts: list[int]
    nonfinite: int = 0


@dataclass(frozen=True)
class OutputComparison:
    """One output of a cell on one replay backend, compared with the original run.

    Field names are the keys of `replays[].outputs[]` in the report (CONTRACT.md).
    """

    name: str
    shape: list[int] | None
    dtype: str | None
    device: str | None
    expected_device: str | None
    device_ok: bool | None
    max_abs_err: float | None
    max_rel_err: float | None
    mismatched: int | None
    nan_mismatch: bool | None
    within_tolerance: bool | None
    rtol: float | None
    atol: float | None
    conversion: str | None
    note: str | None = None
    #: max |result - float64 reference|, where there is a usable reference
    reference_err: float | None = None
    #: the original run's own max |original - float64 reference| (what ``reference_err``
    #: is judged against)
    original_reference_err: float | None = None
    #: None, or one of DIFFERENCE_KINDS
    difference: DifferenceKind | None = None
    #: False when the control replay disagreed with the original (then not compared);
    #: None without a control replay
    deterministic: bool | None = None
    #: the error summaries of the compare pass, kept only for outputs that differ (plots)
    error_histogram: ErrorHistogram | None = None
    #: block-wise max |error| of a 2-D output, at most 64 x 64, None for non-finite blocks
    error_map: list[list[float | None]] | None = None

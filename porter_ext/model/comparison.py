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

#: the one verdict on an output compared with the original run (CONTRACT.md
#: ``outputs[].verdict``), decided by `OutputComparison.verdict` and nowhere else
Verdict = Literal[
    "match",
    "mismatch",
    "order_only",
    "sign_only",
    "nondeterministic",
    "dtype_changed",
    "not_compared",
]
VERDICTS: tuple[str, ...] = get_args(Verdict)
#: verdicts of an output that is not the original's (a rewrite that gives one is not
#: verified): values, shape or dtype changed; order and sign only are the same values
DIFFERING_VERDICTS = frozenset({"mismatch", "dtype_changed"})


def number(value: float | None) -> str:
    """A measure as every view writes it (4 significant digits; "—" for none)."""
    return "—" if value is None else f"{value:.4g}"


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
    #: the original run's dtype of the output, where it was compared
    expected_dtype: str | None = None

    @property
    def verdict(self) -> Verdict:
        """The output's one verdict: ``nondeterministic`` where the control replay
        disagreed with the original (not compared); ``mismatch`` where values (or the
        shape) differ beyond tolerance; ``dtype_changed`` where only the dtype changed
        (every element within tolerance); ``not_compared`` where the values could not be
        compared; ``order_only``/``sign_only`` where the same values came in another
        order or up to sign; else ``match``. A wrong device is a device finding, not a
        verdict on the values."""
        if self.deterministic is False:
            return "nondeterministic"
        if self.within_tolerance is False or self.difference in ("numeric", "shape_changed"):
            return "mismatch"
        if self.difference == "dtype_changed":
            return "dtype_changed"
        if self.within_tolerance is None:
            return "not_compared"
        if self.difference in ("order_only", "sign_only"):
            return self.difference
        return "match"

    @property
    def verdict_text(self) -> str:
        """The verdict in the words every view shows (never "differs" for a dtype
        change whose every element is within tolerance)."""
        verdict = self.verdict
        if verdict == "mismatch":
            if self.difference == "shape_changed":
                return f"differs: shape changed ({self.note})" if self.note else "shape changed"
            mismatched = "?" if self.mismatched is None else self.mismatched
            return f"differs (max abs err {number(self.max_abs_err)}, {mismatched} mismatched)"
        if verdict == "dtype_changed":
            if self.expected_dtype and self.dtype:
                return f"dtype changed ({self.expected_dtype} → {self.dtype})"
            return "dtype changed"
        if verdict == "nondeterministic":
            return "nondeterministic: the original backend gave another value; not compared"
        if verdict == "not_compared":
            return f"not compared: {self.note}" if self.note else "not compared"
        if verdict == "order_only":
            return "same values in another order"
        if verdict == "sign_only":
            return "same values up to sign"
        return "matches"

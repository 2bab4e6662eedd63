"""Small summaries of where two arrays differ, so a report can plot a mismatch of any size.

A report must stay a few megabytes whatever the notebook computes, so it never carries
the arrays themselves: a log-binned histogram of the absolute error and, for outputs with
two or more dimensions, a block-wise maximum of it no bigger than 64 x 64.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from porter_ext.compare.model import OutputComparison
from porter_ext.report.model import ErrorHistogram, OutputEntry

MAP_SIZE = 64
BINS = 24


def _round(values: np.ndarray) -> list[float]:
    # 4 significant digits are plenty for a plot and keep the JSON short.
    return [float(f"{v:.4g}") for v in values.tolist()]


def error_histogram(abs_err: np.ndarray, *, bins: int = BINS) -> ErrorHistogram:
    """Histogram of absolute errors: a bin [0, smallest positive error) for exact matches
    and near-matches, then log-spaced bins up to the largest error."""
    flat = np.ravel(abs_err)
    finite = flat[np.isfinite(flat)]
    nonfinite = int(flat.size - finite.size)
    positive = finite[finite > 0]
    if positive.size == 0:
        return ErrorHistogram(edges=[0.0, 1.0], counts=[int(finite.size)], nonfinite=nonfinite)
    lo, hi = float(positive.min()), float(positive.max())
    if hi <= lo:
        hi = lo * 2
    inner = np.geomspace(lo, hi, bins)
    edges = np.concatenate([[0.0], inner])
    # The geomspace ends may round below the true extremes; widen the outer edge.
    edges[-1] = np.nextafter(hi, np.inf)
    counts, _ = np.histogram(finite, bins=edges)
    rounded = _round(edges)
    rounded[-1] = max(rounded[-1], float(edges[-1]))
    return ErrorHistogram(edges=rounded, counts=[int(c) for c in counts], nonfinite=nonfinite)


def error_map(abs_err: np.ndarray, *, size: int = MAP_SIZE) -> list[list[float | None]] | None:
    """Block-wise maximum of a ≥2-D error array over its last two axes (leading axes are
    folded in by maximum), at most `size` x `size`; None for 0-D and 1-D outputs."""
    if abs_err.ndim < 2 or abs_err.size == 0:
        return None
    err = np.asarray(abs_err, dtype=np.float64)
    # NaN/inf must win a block maximum: mark them as +inf and keep the fact.
    err = np.where(np.isfinite(err), err, np.inf)
    err = err.reshape(-1, *err.shape[-2:]).max(axis=0)
    rows = np.array_split(np.arange(err.shape[0]), min(size, err.shape[0]))
    cols = np.array_split(np.arange(err.shape[1]), min(size, err.shape[1]))
    row_starts = [r[0] for r in rows]
    col_starts = [c[0] for c in cols]
    blocks = np.maximum.reduceat(np.maximum.reduceat(err, row_starts, axis=0), col_starts, axis=1)
    return [[None if not np.isfinite(v) else float(f"{v:.4g}") for v in row] for row in blocks]


def summarize_error(
    expected: Any, actual: Any
) -> tuple[ErrorHistogram, list[list[float | None]] | None]:
    """Histogram and error map of |actual - expected| for two host arrays of one shape."""
    exp = np.asarray(expected)
    act = np.asarray(actual)
    if exp.shape != act.shape:
        raise ValueError(f"cannot summarize the error of shapes {act.shape} and {exp.shape}")
    if exp.dtype == bool:
        exp = exp.astype(np.int8)
    if act.dtype == bool:
        act = act.astype(np.int8)
    with np.errstate(invalid="ignore", over="ignore"):
        abs_err = np.abs(act.astype(np.result_type(act, exp, np.float64)) - exp)
        # A NaN in both places is a match, not an error.
        abs_err = np.where(np.isnan(exp) & np.isnan(act), 0.0, abs_err)
    return error_histogram(abs_err), error_map(abs_err)


def with_error_summary(comparison: OutputComparison, expected: Any, actual: Any) -> OutputEntry:
    """The comparison as an `OutputEntry` carrying the error summaries the HTML view plots.

    Callers attach summaries only to mismatched outputs: a matching output needs no plot,
    and the report stays small.
    """
    hist, emap = summarize_error(expected, actual)
    return OutputEntry.of(comparison, error_histogram=hist, error_map=emap)

"""The compare pass's error summaries in the report's form: small at any output size.

`arrays.compare_arrays` bins |error| by powers of two and keeps a block-wise maximum of
it for 2-D outputs; here those become an `ErrorHistogram` of at most ``MAX_BINS`` bins
and a 64 x 64 map of 4-significant-digit numbers (None for a non-finite block).
"""

from __future__ import annotations

import math

import numpy as np

from porter_ext.model.comparison import ErrorHistogram

MAX_BINS = 32


def histogram_of(rows: np.ndarray | None) -> ErrorHistogram | None:
    """The report's histogram of one comparison (``ArrayStats.histogram`` rows)."""
    if rows is None or not len(rows):
        return None
    zeros = 0
    bins: list[tuple[float, float, int]] = []
    nonfinite = 0
    for lo, hi, count in rows.tolist():
        if lo == 0 and hi == 0:
            zeros += int(count)
        elif math.isinf(lo) or math.isnan(lo):
            nonfinite += int(count)
        else:
            bins.append((lo, hi, int(count)))
    while len(bins) > MAX_BINS:  # merge neighbours: twice as wide, half as many
        bins = [
            (
                bins[i][0],
                bins[min(i + 1, len(bins) - 1)][1],
                bins[i][2] + (bins[i + 1][2] if i + 1 < len(bins) else 0),
            )
            for i in range(0, len(bins), 2)
        ]
    if not bins:
        return ErrorHistogram(edges=[0.0, 1.0], counts=[zeros], nonfinite=nonfinite)
    edges = [0.0, bins[0][0], *(hi for _, hi, _ in bins)]
    return ErrorHistogram(
        edges=edges, counts=[zeros, *(c for _, _, c in bins)], nonfinite=nonfinite
    )


def map_of(error_map: np.ndarray | None) -> list[list[float | None]] | None:
    """The block-wise max |error| as nested lists (None for non-finite blocks)."""
    if error_map is None or error_map.size == 0:
        return None
    return [
        [float(f"{v:.4g}") if math.isfinite(v) else None for v in row] for row in error_map.tolist()
    ]


def summarize(
    expected: np.ndarray, actual: np.ndarray
) -> tuple[ErrorHistogram | None, list[list[float | None]] | None]:
    """The histogram and map of |actual - expected| for two host arrays of one shape, from
    the compare pass itself (what a row of a mismatched output carries)."""
    from .arrays import compare_arrays
    from .tolerance import get_policy

    tol = get_policy("porter").for_dtype(expected.dtype, actual.dtype)
    stats = compare_arrays(np.asarray(expected), np.asarray(actual), tol)
    return histogram_of(stats.histogram), map_of(stats.error_map)

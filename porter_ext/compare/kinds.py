"""Differences that are not errors: the same values in another order, or the same
vectors with another sign.

Sorting ties (``argsort``, ``partition``) and the sign of eigenvectors, singular vectors
and discriminant axes are left to the implementation by every library, so a replay may
legitimately differ from the original there. These checks run only on outputs that
already failed the plain comparison, and only up to ``MAX_ELEMENTS`` (they make a few
full-size temporaries).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

MAX_ELEMENTS = 1 << 22

SIGN_NOTE = (
    "sign_only: equal up to the sign of {what} (eigenvectors, singular vectors and "
    "discriminant axes have no fixed sign)"
)
ORDER_NOTE = "order_only: the same values in a different order (ties of a sort, partition)"


def sign_flips(expected: np.ndarray, actual: np.ndarray) -> Iterator[tuple[np.ndarray, str]]:
    """``actual`` with the sign of each column, or of each row, turned to agree with
    ``expected``, and what was turned; only where some sign differs. Matrices only: a
    1-D result with the other sign, or a matrix with every one of more than two vectors
    turned, is a sign error, not a convention."""
    if expected.dtype.kind != "f" or actual.dtype.kind != "f" or expected.ndim < 2:
        return
    for axis, what in ((-2, "column"), (-1, "row")):
        dots = np.sum(expected.astype(np.float64) * actual, axis=axis, keepdims=True)
        signs = np.where(dots < 0, -1.0, 1.0)
        flipped = int(np.count_nonzero(signs < 0))
        if flipped and not (flipped == signs.size > 2):  # all of many: a sign error
            yield actual * signs.astype(actual.dtype), f"{flipped} {what}(s)"


def recognise(
    expected: np.ndarray,
    actual: np.ndarray,
    judge: Callable[[np.ndarray, np.ndarray, str], bool],
) -> tuple[str, str] | None:
    """(kind, note) when ``actual`` equals ``expected`` up to signs or order, each
    candidate judged by ``judge(expected', actual', kind)`` (True: within tolerance)."""
    if not 0 < expected.size <= MAX_ELEMENTS or expected.shape != actual.shape:
        return None
    with np.errstate(all="ignore"):
        for fixed, what in sign_flips(expected, actual):
            if judge(expected, fixed, "sign_only"):
                return "sign_only", SIGN_NOTE.format(what=what)
        orderable = expected.dtype.kind in "biuf" and actual.dtype.kind in "biuf"
        if orderable and judge(
            np.sort(expected, axis=None), np.sort(actual, axis=None), "order_only"
        ):
            return "order_only", ORDER_NOTE
    return None

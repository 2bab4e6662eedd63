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
from dataclasses import dataclass

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


PARTITION_NOTE = (
    "order_only: another valid partition at kth={kth} (the k-th values agree and so do "
    "the values on each side of them, in another order)"
)
NOT_A_PARTITION = (
    "not a valid partition at kth={kth}: the values on each side of the k-th differ from "
    "the original's"
)


@dataclass(frozen=True)
class Partition:
    """How an output was made by a partition call (`producers.PartitionCall`, its names
    read): ``kth`` positions along ``axis`` (None: flattened); for indices, ``data`` is
    the array they index (None: not known, then they are not checked as a partition)."""

    kth: tuple[int, ...]
    axis: int | None
    indices: bool
    data: np.ndarray | None = None


def partition_order(
    expected: np.ndarray,
    actual: np.ndarray,
    partition: Partition,
    judge: Callable[[np.ndarray, np.ndarray, str], bool],
) -> tuple[bool, str] | None:
    """(valid, note) for an output made by a partition call: ``actual`` is valid when it
    partitions the original's values at the same ``kth`` (sorted within each side, it is
    the original sorted, judged by ``judge``); None when that cannot be told (the
    original itself is no such partition: another call made it, or it was changed)."""
    if not 0 < expected.size <= MAX_ELEMENTS or expected.shape != actual.shape:
        return None
    lanes = [_lanes(v, partition.axis) for v in (expected, actual)]
    if lanes[0] is None or lanes[1] is None or lanes[0].shape[-1] == 0:
        return None
    n = lanes[0].shape[-1]
    if any(not -n <= k < n for k in partition.kth):
        return None
    kth = sorted({k % n for k in partition.kth})
    shown = ", ".join(map(str, partition.kth))
    if partition.indices:
        data = _indexed(lanes[0], partition)
        if data is None:
            return None
        if lanes[1].dtype.kind not in "iu" or not _is_permutation(lanes[1]):
            return False, NOT_A_PARTITION.format(kth=shown)
        lanes = [np.take_along_axis(data, v.astype(np.intp), axis=-1) for v in lanes]
    if lanes[0].dtype.kind not in "biufc" or lanes[1].dtype.kind not in "biufc":
        return None
    with np.errstate(all="ignore"):
        truth = np.sort(lanes[0], axis=-1)
        nan = truth.dtype.kind in "fc"
        if not np.array_equal(_sides_sorted(lanes[0], kth), truth, equal_nan=nan):
            return None  # the original is no partition at kth: nothing to rely on
        valid = judge(truth, _sides_sorted(lanes[1], kth), "order_only")
    if valid:
        return True, PARTITION_NOTE.format(kth=shown)
    return False, NOT_A_PARTITION.format(kth=shown)


def _lanes(value: np.ndarray, axis: int | None) -> np.ndarray | None:
    """``value`` with the partitioned axis last (flattened for None)."""
    if axis is None:
        return value.reshape(-1)
    if value.ndim == 0 or not -value.ndim <= axis < value.ndim:
        return None
    return np.moveaxis(value, axis, -1)


def _indexed(original: np.ndarray, partition: Partition) -> np.ndarray | None:
    """The partitioned array (its axis last) that the original's indices index, where it
    is known and they are one permutation of it per lane."""
    data = None if partition.data is None else _lanes(partition.data, partition.axis)
    if data is None or data.shape != original.shape or original.dtype.kind not in "iu":
        return None
    return data if _is_permutation(original) else None


def _is_permutation(indices: np.ndarray) -> bool:
    """Whether every lane holds each index along it exactly once."""
    n = indices.shape[-1]
    ordered = np.sort(indices, axis=-1)
    return bool(np.array_equal(ordered, np.broadcast_to(np.arange(n), indices.shape)))


def _sides_sorted(lanes: np.ndarray, kth: list[int]) -> np.ndarray:
    """``lanes`` sorted within each stretch between the ``kth`` positions (which stay)."""
    out = np.array(lanes, copy=True)
    bounds = [0]
    for k in kth:
        bounds += [k, k + 1]
    bounds.append(lanes.shape[-1])
    for lo, hi in zip(bounds[::2], bounds[1::2], strict=True):
        if hi - lo > 1:
            out[..., lo:hi] = np.sort(lanes[..., lo:hi], axis=-1)
    return out

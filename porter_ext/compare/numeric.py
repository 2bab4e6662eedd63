"""Numeric comparison of a replay's outputs with the original run's.

Outputs can be large (a cell may produce 10^8-element arrays), so arrays are compared in
tiles of about a million elements with preallocated buffers: memory stays bounded by a
few tile-sized buffers whatever the array size, and the data stays in cache between the
passes. NumPy only; the caller moves every value to the host first.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tolerance import Tolerance, TolerancePolicy, dtype_category, get_policy

HISTOGRAM_DTYPE = np.dtype([("lo", "f8"), ("hi", "f8"), ("count", "i8")])
MAP_BLOCKS = 64
_SCALARS = (bool, int, float, complex, np.generic)


@dataclass(frozen=True)
class ArrayStats:
    """What comparing two equal-shaped arrays found.

    ``histogram`` has one row per power-of-two bin of |error| (``lo <= err < hi``), led by
    an exact-zero row (lo = hi = 0) and followed, when there are any, by a row of
    overflowed differences (lo = inf) and one of NaN/inf pattern mismatches (lo = nan).
    ``error_map`` (2-D arrays only) holds the max |error| of each of at most 64x64 blocks.
    """

    size: int
    max_abs_err: float | None  # over positions where both values are finite
    max_rel_err: float | None  # over positions where expected is finite and nonzero
    mismatched: int
    nan_mismatch: bool
    histogram: np.ndarray
    error_map: np.ndarray | None

    @property
    def within_tolerance(self) -> bool:
        return self.mismatched == 0


@dataclass(frozen=True)
class NumericDiff:
    """One leaf of an output (an array or a number) compared with the original run.

    ``path`` names the leaf inside containers (``out[0]['a']``). ``reason`` says why the
    leaf was not compared, or notes a structural difference that values cannot show (a
    change of dtype kind, integer to floating). ``within_tolerance`` is None only when the
    values are not comparable at all (strings, model objects).
    """

    path: str
    compared: bool
    reason: str | None
    shape: tuple[int, ...] | None
    dtype: str | None
    expected_shape: tuple[int, ...] | None
    expected_dtype: str | None
    max_abs_err: float | None
    max_rel_err: float | None
    mismatched: int | None
    nan_mismatch: bool | None
    within_tolerance: bool | None
    rtol: float | None
    atol: float | None
    error_sample: np.ndarray | None = None  # ArrayStats.histogram
    error_map: np.ndarray | None = None  # ArrayStats.error_map


def compare_values(
    name: str, expected: Any, actual: Any, policy: TolerancePolicy | None = None
) -> list[NumericDiff]:
    """Compare an original output with a replay's: one diff per leaf of nested containers.

    Lists and tuples are compared item by item, dicts key by key; a missing key, a
    different length or a container against a leaf is reported as a diff that was not
    compared. Never raises for odd values: what cannot be compared says why.
    """
    diffs: list[NumericDiff] = []
    _walk(name, expected, actual, policy or get_policy("porter"), diffs)
    return diffs


def _walk(path: str, e: Any, a: Any, policy: TolerancePolicy, out: list[NumericDiff]) -> None:
    if isinstance(e, Mapping) and isinstance(a, Mapping):
        for k in e:
            sub = f"{path}[{k!r}]"
            if k in a:
                _walk(sub, e[k], a[k], policy, out)
            else:
                out.append(_not_compared(sub, "missing in the replay", within=False))
        out.extend(
            _not_compared(f"{path}[{k!r}]", "not in the original", within=False)
            for k in a
            if k not in e
        )
    elif isinstance(e, list | tuple) and isinstance(a, list | tuple):
        if len(e) != len(a):
            out.append(_not_compared(path, f"length {len(e)} vs {len(a)}", within=False))
        for i, (x, y) in enumerate(zip(e, a, strict=False)):
            _walk(f"{path}[{i}]", x, y, policy, out)
    elif isinstance(e, Mapping | list | tuple) or isinstance(a, Mapping | list | tuple):
        reason = f"{type(e).__name__} vs {type(a).__name__}"
        out.append(_not_compared(path, reason, within=False))
    else:
        out.append(_compare_leaf(path, e, a, policy))


def _not_compared(path: str, reason: str, within: bool | None, **fields: Any) -> NumericDiff:
    blank = dict.fromkeys(("shape", "dtype", "expected_shape", "expected_dtype"))
    return NumericDiff(
        path, False, reason, **{**blank, **fields}, max_abs_err=None, max_rel_err=None,
        mismatched=None, nan_mismatch=None, within_tolerance=within, rtol=None, atol=None,
    )  # fmt: skip


def _as_array(x: Any) -> np.ndarray | None:
    if isinstance(x, np.ndarray):
        return x
    return np.asarray(x) if isinstance(x, _SCALARS) and not isinstance(x, str | bytes) else None


def _compare_leaf(path: str, e: Any, a: Any, policy: TolerancePolicy) -> NumericDiff:
    ea, aa = _as_array(e), _as_array(a)
    if ea is None or aa is None:
        if ea is None and aa is None:
            return _not_compared(path, f"{type(e).__name__} is not an array or a number", None)
        return _not_compared(path, f"{type(e).__name__} vs {type(a).__name__}", within=False)
    fields = {
        "shape": aa.shape, "dtype": aa.dtype.name,
        "expected_shape": ea.shape, "expected_dtype": ea.dtype.name,
    }  # fmt: skip
    ce, ca = dtype_category(ea.dtype), dtype_category(aa.dtype)
    if ce is None or ca is None:
        bad = ea.dtype if ce is None else aa.dtype
        return _not_compared(path, f"dtype {bad} is not numeric", None, **fields)
    if ea.shape != aa.shape:
        return _not_compared(path, f"shape {ea.shape} vs {aa.shape}", False, **fields)
    note = None if ce == ca else f"dtype kind {ce} ({ea.dtype}) vs {ca} ({aa.dtype})"
    try:
        tol = policy.for_dtype(ea.dtype, aa.dtype)
        s = compare_arrays(ea, aa, tol, summaries=False)
        if s.mismatched:  # the error summaries are for plots of mismatches: a second pass
            s = compare_arrays(ea, aa, tol)
    except Exception as exc:  # a porter bug must not break the person's cell
        return _not_compared(
            path, f"comparison failed: {type(exc).__name__}: {exc}", None, **fields
        )
    return NumericDiff(
        path, True, note, **fields, max_abs_err=s.max_abs_err, max_rel_err=s.max_rel_err,
        mismatched=s.mismatched, nan_mismatch=s.nan_mismatch,
        within_tolerance=s.within_tolerance, rtol=tol.rtol, atol=tol.atol,
        error_sample=s.histogram, error_map=s.error_map,
    )  # fmt: skip


def compare_arrays(
    expected: np.ndarray,
    actual: np.ndarray,
    tol: Tolerance,
    *,
    chunk_elements: int = 1 << 20,
    summaries: bool = True,
) -> ArrayStats:
    """Compare two arrays of one shape elementwise, without any full-size temporary.

    ``summaries=False`` skips the error histogram and map (only counts and maxima are
    right then): the fast first pass when most outputs match.

    Integers and booleans must be equal; floats satisfy ``|a - e| <= atol + rtol * |e|``;
    complex values use the modulus of the difference. NaN matches NaN and an infinity
    matches the same infinity; any other difference in where they are is a mismatch.
    """
    if expected.shape != actual.shape:
        raise ValueError(f"shapes differ: {expected.shape} vs {actual.shape}")
    cats = (dtype_category(expected.dtype), dtype_category(actual.dtype))
    if None in cats:
        raise TypeError(f"cannot compare dtypes {expected.dtype} and {actual.dtype}")
    e, a, flipped = expected, actual, False
    c_order = e.flags.c_contiguous and a.flags.c_contiguous
    if e.ndim == 2 and not c_order and e.flags.f_contiguous and a.flags.f_contiguous:
        e, a, flipped = e.T, a.T, True  # walk the memory in order
    acc = _Accumulator(e, a, cats, tol, max(1, min(chunk_elements, e.size)))
    acc.summaries = summaries
    if e.size:
        with np.errstate(all="ignore"):
            for idx in _tiles(e.shape, chunk_elements):
                acc.add(e[idx], a[idx], idx)
    return acc.result(flipped)


def _tiles(shape: tuple[int, ...], k: int) -> Iterator[tuple[Any, ...]]:
    """Basic-slicing indices of C-ordered tiles of at most ``k`` elements (views, no copy)."""
    inner, j = 1, len(shape)
    while j > 0 and inner * shape[j - 1] <= k:
        inner, j = inner * shape[j - 1], j - 1
    if j == 0:
        yield (Ellipsis,)
        return
    step = max(1, k // inner)
    for outer in np.ndindex(*shape[: j - 1]):
        for s in range(0, shape[j - 1], step):
            yield (*outer, slice(s, min(s + step, shape[j - 1])))


class _Accumulator:
    """Buffers and running statistics of one array comparison."""

    def __init__(self, e: np.ndarray, a: np.ndarray, cats: tuple, tol: Tolerance, n: int):
        self.exact = all(c in ("bool", "integer") for c in cats)
        self.complex = "complex" in cats
        self.tol = tol
        dts = [e.dtype, a.dtype]
        std = [d for d in dts if d.kind in "iufc" and d.type.__module__ == "numpy"]
        work = np.result_type(np.float32, *std) if not self.exact else np.dtype(np.float64)
        self.work = np.dtype(work.char.lower()) if work.kind == "c" else work  # real part
        self.cwork = np.result_type(self.work, np.complex64) if self.complex else None
        self.d, self.t, self.r = (np.empty(n, self.work) for _ in range(3))
        self.c = np.empty(n, self.cwork) if self.complex else None
        self.m = np.empty(n, bool)
        self.exp = np.empty(n, np.int32)
        fi = np.finfo(self.work)
        self.exp_lo = fi.minexp - fi.nmant - 1
        self.bins = np.zeros(fi.maxexp + 2 - self.exp_lo, np.int64)
        self.size, self.mismatched, self.pattern, self.nonfinite = e.size, 0, 0, 0
        self.zeros, self.overflow = 0, 0
        self.max_abs, self.max_rel = 0.0, math.nan
        self.map = self.block = None
        self.summaries = True  # histogram and error map (for plots); off: counts only
        if e.ndim == 2:
            self.block = tuple(-(-s // MAP_BLOCKS) or 1 for s in e.shape)
            self.map = np.zeros([-(-s // b) for s, b in zip(e.shape, self.block, strict=True)])

    def add(self, ev: np.ndarray, av: np.ndarray, idx: tuple[Any, ...]) -> None:
        n, shp = ev.size, ev.shape
        d, t, m, r = (b[:n].reshape(shp) for b in (self.d, self.t, self.m, self.r))
        diff = self.c[:n].reshape(shp) if self.complex else d
        np.subtract(av, ev, out=diff, dtype=diff.dtype)
        np.abs(diff, out=d)
        if self.exact:  # the float difference above only measures; equality decides
            self.mismatched += int(np.count_nonzero(np.not_equal(ev, av, out=m)))
        else:
            np.isfinite(d, out=m)
            if np.count_nonzero(m) != n:
                self._nonfinite(ev, av, d, m)
        np.abs(ev, out=t, **({} if ev.dtype.kind == "c" else {"dtype": self.work}))
        dmax = float(d.max())
        self.max_abs = max(self.max_abs, dmax)
        np.divide(d, t, out=r)
        rmax = np.fmax.reduce(r, axis=None)
        if rmax == math.inf:  # also from expected == 0: exclude those
            np.not_equal(t, 0, out=m)
            rmax = np.fmax.reduce(r, axis=None, where=m, initial=-math.inf)
        self.max_rel = float(np.fmax(self.max_rel, rmax))
        if dmax == 0:
            self.zeros += n
            return
        if self.summaries:
            self._histogram(d, r, dmax)
            if self.map is not None:
                self._update_map(d, idx)
        if not self.exact and dmax > self.tol.atol:
            np.multiply(t, self.tol.rtol, out=t)
            np.add(t, self.tol.atol, out=t)
            np.greater(d, t, out=m)
            self.mismatched += int(np.count_nonzero(m))

    def _nonfinite(self, ev: np.ndarray, av: np.ndarray, d: np.ndarray, m: np.ndarray) -> None:
        """Settle the positions whose difference is not finite: NaN or inf on either side."""
        np.logical_not(m, out=m)
        eb, ab = ev[m], av[m]  # copies of just these positions
        both_finite = np.isfinite(eb) & np.isfinite(ab)  # the difference overflowed
        same = (np.isnan(eb) & np.isnan(ab)) | (eb == ab)
        d[m] = np.where(both_finite, math.inf, 0.0)
        bad = int(np.count_nonzero(~same & ~both_finite))
        self.mismatched += bad
        self.pattern += bad
        self.nonfinite += eb.size - int(np.count_nonzero(both_finite))

    def _histogram(self, d: np.ndarray, scratch: np.ndarray, dmax: float) -> None:
        exp = self.exp[: d.size].reshape(d.shape)
        np.frexp(d, out=(scratch, exp))  # 0 and inf both give exponent 0: corrected below
        np.subtract(exp, self.exp_lo, out=exp)
        self.bins += np.bincount(exp.reshape(-1), minlength=self.bins.size)
        zeros = d.size - int(np.count_nonzero(d))
        infs = int(np.count_nonzero(np.isinf(d))) if dmax == math.inf else 0
        self.bins[-self.exp_lo] -= zeros + infs
        self.zeros += zeros
        self.overflow += infs

    def _update_map(self, d: np.ndarray, idx: tuple[Any, ...]) -> None:
        if idx[0] is Ellipsis:
            r0, c0 = 0, 0
        elif len(idx) == 1:  # whole rows
            r0, c0 = idx[0].start, 0
        else:  # part of one row
            r0, c0 = idx[0], idx[1].start
        d2 = d.reshape(-1, d.shape[-1]) if d.ndim else d.reshape(1, 1)
        br, bc = self.block

        def starts(o: int, n: int, b: int) -> np.ndarray:
            return np.concatenate(([0], np.arange((o // b + 1) * b, o + n, b) - o)).astype(np.intp)

        red = np.maximum.reduceat(d2, starts(c0, d2.shape[1], bc), axis=1)
        red = np.maximum.reduceat(red, starts(r0, d2.shape[0], br), axis=0)
        sub = self.map[r0 // br : r0 // br + red.shape[0], c0 // bc : c0 // bc + red.shape[1]]
        np.maximum(sub, red, out=sub)

    def result(self, flipped: bool) -> ArrayStats:
        self.zeros -= self.pattern  # pattern mismatches were set to 0 above; own row below
        rows = [(0.0, 0.0, self.zeros)]
        nz = np.flatnonzero(self.bins)
        if nz.size:
            for k in range(nz[0], nz[-1] + 1):
                e = k + self.exp_lo
                rows.append((math.ldexp(1.0, e - 1), math.ldexp(1.0, e), int(self.bins[k])))
        if self.overflow:
            rows.append((math.inf, math.inf, self.overflow))
        if self.pattern:
            rows.append((math.nan, math.nan, self.pattern))
        all_nonfinite = self.size == 0 or self.nonfinite == self.size
        error_map = self.map.T.copy() if flipped and self.map is not None else self.map
        return ArrayStats(
            size=self.size,
            max_abs_err=None if all_nonfinite else self.max_abs,
            max_rel_err=self.max_rel if self.max_rel >= 0 else None,  # nan, -inf: none
            mismatched=self.mismatched,
            nan_mismatch=self.pattern > 0,
            histogram=np.array(rows, HISTOGRAM_DTYPE),
            error_map=error_map,
        )

"""The bounded-memory pass over two arrays of one shape: counts, maxima and error summaries.

Outputs can be large (a cell may produce 10^8-element arrays), so arrays are compared in
tiles of about a million elements with preallocated buffers: memory stays bounded by a
few tile-sized buffers whatever the array size, and the data stays in cache between the
passes. Everything the report shows of a difference (max abs/rel error, mismatched
count, histogram, downsampled error map, the error against the float64 reference) comes
out of this one pass. NumPy only; the caller moves every value to the host first.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from .tolerance import Tolerance, dtype_category

HISTOGRAM_DTYPE = np.dtype([("lo", "f8"), ("hi", "f8"), ("count", "i8")])
MAP_BLOCKS = 64


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
    max_magnitude: float | None = None  # max finite |expected|, when asked for
    reference_err: float | None = None  # max finite |actual - reference|, with a reference

    @property
    def within_tolerance(self) -> bool:
        return self.mismatched == 0


@dataclass(frozen=True)
class ReferenceBound:
    """The float64 reference of an output (its shape) and how far from it a replay's
    value may be: floats agree when ``|actual - values| <= bound``."""

    values: np.ndarray
    bound: float


def compare_arrays(
    expected: np.ndarray,
    actual: np.ndarray,
    tol: Tolerance,
    *,
    against: ReferenceBound | None = None,
    magnitude: bool = False,
    chunk_elements: int = 1 << 20,
    summaries: bool = True,
) -> ArrayStats:
    """Compare two arrays of one shape elementwise, without any full-size temporary.

    ``summaries=False`` skips the error histogram and map (only counts and maxima are
    right then). ``magnitude`` also measures max finite |expected|.

    Integers and booleans must be equal; floats satisfy ``|a - e| <= atol + rtol * |e|``;
    complex values use the modulus of the difference. NaN matches NaN and an infinity
    matches the same infinity; any other difference in where they are is a mismatch.
    ``against`` a float64 reference (`ReferenceBound`) floats are judged by it instead:
    an element mismatches when ``|a - reference| > bound``; the errors and the histogram
    still measure ``|a - e|``, in the same pass.
    """
    if expected.shape != actual.shape:
        raise ValueError(f"shapes differ: {expected.shape} vs {actual.shape}")
    if against is not None and against.values.shape != expected.shape:
        raise ValueError(f"a reference needs the outputs' shape: {against.values.shape}")
    cats = (dtype_category(expected.dtype), dtype_category(actual.dtype))
    if None in cats:
        raise TypeError(f"cannot compare dtypes {expected.dtype} and {actual.dtype}")
    e, a, flipped = expected, actual, False
    c_order = e.flags.c_contiguous and a.flags.c_contiguous
    if e.ndim == 2 and not c_order and e.flags.f_contiguous and a.flags.f_contiguous:
        e, a, flipped = e.T, a.T, True  # walk the memory in order
    acc = _Accumulator(e, a, cats, tol, max(1, min(chunk_elements, e.size)))
    acc.summaries, acc.magnitude = summaries, magnitude
    r = None
    if against is not None and not acc.exact:  # integers and booleans: equal or not
        r = against.values.T if flipped else against.values
        acc.use_reference(r.dtype, float(against.bound))
    if e.size:
        with np.errstate(all="ignore"):
            for idx in _tiles(e.shape, chunk_elements):
                acc.add(e[idx], a[idx], idx, None if r is None else r[idx])
    return acc.result(flipped)


def _power_of_two(exponent: int) -> float:
    """``2**exponent`` as a float, the largest float past it: the top bin of float64
    errors (from 2^1023, as uninitialised memory holds) ends at 2^1024, which no float is
    (and the report's histogram edges stay finite numbers)."""
    return math.ldexp(1.0, exponent) if exponent < sys.float_info.max_exp else sys.float_info.max


def acc_exact(cats: tuple) -> bool:
    """Whether values of these categories must be equal (integers, booleans)."""
    return all(c in ("bool", "integer") for c in cats)


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
        self.exact = acc_exact(cats)
        self.complex = "complex" in cats
        self.tol = tol
        dts = [e.dtype, a.dtype]
        std = [d for d in dts if d.kind in "iufc"]  # not ml_dtypes' (kind "V")
        work = np.result_type(np.float32, *std) if not self.exact else np.dtype(np.float64)
        self.work = np.dtype(work.char.lower()) if work.kind == "c" else work  # real part
        self.cwork = np.result_type(self.work, np.complex64) if self.complex else None
        self.d, self.t, self.r = (np.empty(n, self.work) for _ in range(3))
        self.c = np.empty(n, self.cwork) if self.complex else None
        self.m = np.empty(n, bool)
        # the histogram reads each |error|'s biased exponent straight from its bits
        fi = np.finfo(self.work)
        self.minexp, self.nmant = fi.minexp, fi.nmant
        self.bits = np.dtype(f"i{self.work.itemsize}")
        self.exp = np.empty(n, np.intp)
        self.bins = np.zeros(1 << (fi.bits - fi.nmant - 1), np.int64)
        self.size, self.mismatched, self.pattern, self.nonfinite = e.size, 0, 0, 0
        self.zeros, self.overflow = 0, 0
        self.max_abs, self.max_rel = 0.0, math.nan
        self.map = self.block = None
        self.summaries = True  # histogram and error map (for plots); off: counts only
        self.magnitude = False  # measure max finite |expected| too
        self.max_mag = 0.0
        self.bound: float | None = None  # with a reference: |a - ref| <= bound
        self.ref_err = 0.0
        self.rd = self.rc = None
        if e.ndim == 2:
            self.block = tuple(-(-s // MAP_BLOCKS) or 1 for s in e.shape)
            self.map = np.zeros([-(-s // b) for s, b in zip(e.shape, self.block, strict=True)])

    def use_reference(self, dtype: np.dtype, bound: float) -> None:
        """Judge by ``|a - ref| <= bound`` from now on (buffers in the reference's dtype)."""
        n = self.d.size
        real = np.dtype(dtype.char.lower()) if dtype.kind == "c" else np.dtype(dtype)
        self.bound = bound
        self.rd = np.empty(n, np.result_type(real, self.work))
        if self.complex or dtype.kind == "c":
            self.rc = np.empty(n, np.result_type(self.rd.dtype, np.complex64))

    def _reference(self, av: np.ndarray, rv: np.ndarray, m: np.ndarray) -> None:
        n, shp = av.size, av.shape
        rd = self.rd[:n].reshape(shp)
        diff = self.rc[:n].reshape(shp) if self.rc is not None else rd
        np.subtract(av, rv, out=diff, dtype=diff.dtype)
        np.abs(diff, out=rd)
        np.isfinite(rd, out=m)
        if np.count_nonzero(m) != n:  # where a or ref is NaN/inf: the pattern decides
            np.logical_not(m, out=m)
            rd[m] = 0.0
        self.ref_err = max(self.ref_err, float(rd.max()))
        self.mismatched += int(np.count_nonzero(np.greater(rd, self.bound, out=m)))

    def add(
        self, ev: np.ndarray, av: np.ndarray, idx: tuple[Any, ...], rv: np.ndarray | None = None
    ) -> None:
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
        if self.magnitude:
            tmax = float(np.fmax.reduce(t, axis=None))
            if tmax == math.inf:
                np.isfinite(t, out=m)
                tmax = float(np.fmax.reduce(t, axis=None, where=m, initial=0.0))
            self.max_mag = max(self.max_mag, tmax)
        if rv is not None:
            self._reference(av, rv, m)
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
            self._histogram(d, dmax)
            if self.map is not None:
                self._update_map(d, idx)
        if not self.exact and self.bound is None and dmax > self.tol.atol:
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

    def _histogram(self, d: np.ndarray, dmax: float) -> None:
        exp = self.exp[: d.size].reshape(d.shape)
        # d >= 0, so its bits shifted right by the mantissa width are its biased exponent
        # (0 for zeros and subnormals, the top value for inf): two cheap passes, no frexp
        np.right_shift(d.view(self.bits), self.nmant, out=exp)
        self.bins += np.bincount(exp.reshape(-1), minlength=self.bins.size)
        zeros = d.size - int(np.count_nonzero(d))
        infs = int(np.count_nonzero(np.isinf(d))) if dmax == math.inf else 0
        self.bins[0] -= zeros
        self.bins[-1] -= infs
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

        # rows first: reducing whole rows is one vectorised pass, the columns then are few
        red = np.maximum.reduceat(d2, starts(r0, d2.shape[0], br), axis=0)
        red = np.maximum.reduceat(red, starts(c0, d2.shape[1], bc), axis=1)
        sub = self.map[r0 // br : r0 // br + red.shape[0], c0 // bc : c0 // bc + red.shape[1]]
        np.maximum(sub, red, out=sub)

    def result(self, flipped: bool) -> ArrayStats:
        self.zeros -= self.pattern  # pattern mismatches were set to 0 above; own row below
        rows = [(0.0, 0.0, self.zeros)]
        nz = np.flatnonzero(self.bins)
        if nz.size:
            for k in range(nz[0], nz[-1] + 1):  # biased exponent k: [2^(k+minexp-1), 2^(k+minexp))
                lo = math.ldexp(1.0, k + self.minexp - 1 if k else self.minexp - self.nmant)
                rows.append((lo, _power_of_two(k + self.minexp), int(self.bins[k])))
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
            max_magnitude=self.max_mag if self.magnitude else None,
            reference_err=self.ref_err if self.bound is not None else None,
        )

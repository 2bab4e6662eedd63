"""Diff throughput: porter's chunked compare_arrays against np.allclose.

Two float32 arrays of 10^8 elements (about 400 MB each), the replay off by a few ulps.
Targets: compare_arrays within 2x the time of np.allclose (min of 3 runs each), and less
than 64 MiB of extra memory at peak (tracemalloc sees NumPy's allocations).

    python benchmarks/bench_compare.py [N]
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from porter_ext.compare.numeric import compare_arrays
from porter_ext.compare.tolerance import get_policy


def best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def peak_extra(fn: Callable[[], object]) -> int:
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def main(n: int = 100_000_000) -> None:
    rng = np.random.default_rng(0)
    expected = rng.standard_normal(n, dtype=np.float32)
    actual = expected * np.float32(1 + 2e-7)  # a couple of ulps, as another library gives
    tol = get_policy("porter").for_dtype(np.float32)

    stats = compare_arrays(expected, actual, tol)
    same = np.allclose(actual, expected, rtol=tol.rtol, atol=tol.atol)
    assert stats.within_tolerance == same, (stats, same)

    t_porter = best_of(lambda: compare_arrays(expected, actual, tol))
    t_allclose = best_of(lambda: np.allclose(actual, expected, rtol=tol.rtol, atol=tol.atol))
    mem_porter = peak_extra(lambda: compare_arrays(expected, actual, tol))
    mem_allclose = peak_extra(lambda: np.allclose(actual, expected, rtol=tol.rtol, atol=tol.atol))

    mib = 2**20
    print(f"arrays: 2 x {n:,} float32 ({expected.nbytes / mib:,.0f} MiB each)")
    print(f"compare_arrays: {t_porter:.3f} s   np.allclose: {t_allclose:.3f} s (min of 3)")
    print(f"ratio compare_arrays / allclose: {t_porter / t_allclose:.2f}x (target <= 2x)")
    print(f"peak extra memory: compare_arrays {mem_porter / mib:.1f} MiB (target < 64 MiB), "
          f"np.allclose {mem_allclose / mib:,.0f} MiB")  # fmt: skip
    print(f"max_abs_err {stats.max_abs_err:.3g}  max_rel_err {stats.max_rel_err:.3g}  "
          f"mismatched {stats.mismatched}")  # fmt: skip


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 100_000_000)

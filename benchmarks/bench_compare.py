"""Diff throughput: porter's one compare pass against np.allclose, and the reference's cost.

Two float32 arrays of 10^8 elements (about 400 MB each), the replay off by a few ulps.
Targets: compare_arrays, with the error summary (histogram, map, maxima, count) included,
within 2x the time of np.allclose (min of 3 runs each), and less than 64 MiB of extra
memory at peak (tracemalloc sees NumPy's allocations). Then the float64 reference
replay of a float32 matmul cell, as a ratio to the control replay of the same cell.

    python benchmarks/bench_compare.py [N]
"""

from __future__ import annotations

import sys
import time
import tracemalloc
from collections.abc import Callable

import numpy as np

from porter_ext.compare.arrays import compare_arrays
from porter_ext.compare.summary import histogram_of, map_of
from porter_ext.compare.tolerance import get_policy

REFERENCE_CELL = """\
from array_api_compat import array_namespace
xp = array_namespace(A)
C = xp.matmul(A, B)
s = float(xp.sum(C))
m = xp.mean(C, axis=0)
"""


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

    def porter() -> object:  # the pass and the summary the report would carry
        stats = compare_arrays(expected, actual, tol)
        return stats, histogram_of(stats.histogram), map_of(stats.error_map)

    stats = porter()[0]
    same = np.allclose(actual, expected, rtol=tol.rtol, atol=tol.atol)
    assert stats.within_tolerance == same, (stats, same)

    t_porter = best_of(porter)
    t_allclose = best_of(lambda: np.allclose(actual, expected, rtol=tol.rtol, atol=tol.atol))
    mem_porter = peak_extra(porter)
    mem_allclose = peak_extra(lambda: np.allclose(actual, expected, rtol=tol.rtol, atol=tol.atol))

    mib = 2**20
    print(f"arrays: 2 x {n:,} float32 ({expected.nbytes / mib:,.0f} MiB each)")
    print(f"compare_arrays: {t_porter:.3f} s   np.allclose: {t_allclose:.3f} s (min of 3)")
    print(f"ratio compare_arrays / allclose: {t_porter / t_allclose:.2f}x (target <= 2x)")
    print(
        f"peak extra memory: compare_arrays {mem_porter / mib:.1f} MiB (target < 64 MiB), "
        f"np.allclose {mem_allclose / mib:,.0f} MiB"
    )
    print(
        f"max_abs_err {stats.max_abs_err:.3g}  max_rel_err {stats.max_rel_err:.3g}  "
        f"mismatched {stats.mismatched}"
    )


def reference_cost() -> None:
    """The float64 reference replay against the control replay (both on NumPy, in process)."""
    from porter_ext.replay.reference import reference_replay
    from porter_ext.replay.run import replay_cell

    rng = np.random.default_rng(0)
    ns = {
        "A": rng.standard_normal((512, 2000), dtype=np.float32),
        "B": rng.standard_normal((2000, 512), dtype=np.float32),
    }
    t_control = best_of(lambda: replay_cell(REFERENCE_CELL, ns, "numpy"))
    t_reference = best_of(lambda: reference_replay(REFERENCE_CELL, ns, ns))
    print(
        f"reference replay {t_reference * 1e3:.1f} ms, control replay {t_control * 1e3:.1f} ms: "
        f"ratio {t_reference / t_control:.2f}x (float64 work and the promotion of the inputs)"
    )


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 100_000_000)
    reference_cost()

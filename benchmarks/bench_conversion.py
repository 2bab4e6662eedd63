"""How much cheaper porter's zero-copy conversions are than copying the array.

For a 100 MB float32 array and each pair that DLPack moves without a copy on a CPU
machine, prints the median time of ``porter_ext.backends.convert_to`` next to the bare
``from_dlpack`` call and ``np.array(x, copy=True)``, and the ratio copy / convert
(target: at least 1000x). Run: ``python benchmarks/bench_conversion.py``.
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from porter_ext.backends import aligned_copy, convert_to  # noqa: E402

MEGABYTES = 100
TARGET_RATIO = 1000


def median_seconds(action: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def pairs() -> list[tuple[str, object, str, Callable[[], object]]]:
    """(name, source array, target spec, bare DLPack import) for each zero-copy pair."""
    import array_api_strict as xps
    import jax
    import torch

    n = MEGABYTES * 1024 * 1024 // 4
    host = aligned_copy(np.random.default_rng(0).random(n, dtype=np.float32))
    tensor = torch.from_numpy(host).clone()  # torch allocates 64-byte aligned buffers
    array = jax.device_put(host)
    return [
        ("numpy -> torch", host, "torch", lambda: torch.from_dlpack(host)),
        ("torch -> jax", tensor, "jax", lambda: jax.dlpack.from_dlpack(tensor)),
        ("jax -> torch", array, "torch", lambda: torch.from_dlpack(array)),
        ("jax -> numpy", array, "numpy", lambda: np.from_dlpack(array)),
        ("numpy -> strict", host, "strict", lambda: xps.from_dlpack(host)),
        ("numpy (64-byte aligned) -> jax", host, "jax", lambda: jax.dlpack.from_dlpack(host)),
    ]


def main() -> int:
    cases = pairs()
    baseline = median_seconds(lambda: np.array(cases[0][1], copy=True), repeat=7)
    print(f"{MEGABYTES} MB float32; np.array(x, copy=True): {baseline * 1e3:.1f} ms (median of 7)")
    print()
    header = f"{'pair':32} {'mode':9} {'convert':>11} {'from_dlpack':>12} {'copy/convert':>13}"
    print(header)
    print("-" * len(header))
    below = []
    for name, source, target, bare in cases:
        mode = convert_to(source, target).mode
        for _ in range(20):  # warm caches and lazy imports
            convert_to(source, target)
        converted = median_seconds(lambda s=source, t=target: convert_to(s, t), repeat=201)
        raw = median_seconds(bare, repeat=201)
        ratio = baseline / converted
        if ratio < TARGET_RATIO:
            below.append(name)
        print(f"{name:32} {mode:9} {converted * 1e6:9.1f} µs {raw * 1e6:9.1f} µs {ratio:12,.0f}x")
    print()
    if below:
        print(f"below the {TARGET_RATIO}x target: {', '.join(below)}")
    else:
        print(f"every pair is at least {TARGET_RATIO}x cheaper than a copy")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Recording overhead: a realistic cell, tiny calls, and ``%load_ext porter_ext``.

Prints ratios measured in one run (minimum of interleaved rounds), so that a noisy machine
compares like with like. Targets (issue 2): realistic cell recorded/plain <= 1.03; tiny
calls <= 1.5 us of overhead per call; %load_ext < 0.3 s with torch and jax not imported.

    python benchmarks/bench_recording.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

from _common import steady_allocator  # noqa: I001

from porter_ext.record.cell import run_recorded

# one thread per library (set before numpy/torch load, in `_namespaces`): on a shared
# 2-core machine, thread pools add noise to the ratios
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

REALISTIC = """
def step(a, b, xp):
    c = xp.matmul(a, b)
    d = xp.tanh(c) + xp.exp(-xp.abs(c))
    e = xp.sum(d, axis=0) / xp.max(xp.abs(d))
    f = xp.sqrt(xp.abs(a - b)) * xp.sin(a) + xp.cos(b)
    g = xp.where(f > 0, f, xp.zeros_like(f))
    h = xp.mean(g, axis=1) + xp.std(g, axis=1)
    k = xp.concat([e, h])
    k = xp.flip(xp.sort(k), axis=0)
    m = xp.reshape(g, (-1,))
    n = xp.clip(m, -1.0, 1.0)
    o = xp.log1p(xp.abs(n)) - xp.square(n)
    return xp.sum(o) + xp.sum(k)

total = 0.0
for _ in range(2):
    total = total + float(step(a, b, xp))
"""


def _namespaces():
    import array_api_compat.numpy as xnp
    import array_api_compat.torch as xtorch
    import numpy as np
    import torch

    rng = np.random.default_rng(0)
    a = rng.standard_normal((1000, 1000), dtype=np.float32)
    b = rng.standard_normal((1000, 1000), dtype=np.float32)
    return {
        "numpy": {"a": a, "b": b, "xp": xnp},
        "torch": {"a": torch.from_numpy(a.copy()), "b": torch.from_numpy(b.copy()), "xp": xtorch},
    }


def _plain(source: str, ns: dict) -> float:
    """A plain cell run: parse, compile, run (as IPython does for every cell)."""
    start = time.perf_counter()
    exec(compile(source, "<plain>", "exec"), ns)
    return time.perf_counter() - start


def _recorded(source: str, ns: dict) -> tuple[float, int]:
    start = time.perf_counter()
    run = run_recorded(source, ns)
    elapsed = time.perf_counter() - start
    assert run.exception is None, run.exception
    return elapsed, sum(c.count for c in run.calls)


def realistic(rounds: int = 9) -> None:
    import torch

    torch.set_num_threads(1)  # threads add noise on a shared 2-core machine
    steady_allocator()
    for lib, base in _namespaces().items():
        plain, recorded, calls = [], [], 0
        for _ in range(rounds):
            plain.append(_plain(REALISTIC, dict(base)))
            t, calls = _recorded(REALISTIC, dict(base))
            recorded.append(t)
        ratio = min(recorded) / min(plain)
        print(
            f"realistic cell ({lib}, {calls} recorded array calls on 1000x1000 float32): "
            f"recorded/plain = {ratio:.3f} (target <= 1.03)"
        )


TINY = """
for _ in range(n):
    f(a, b)
"""


def tiny(n: int = 200_000, rounds: int = 7) -> None:
    import numpy as np
    import torch

    cases = {
        "torch.add": (torch.add, torch.ones(4), torch.ones(4)),
        "np.add": (np.add, np.ones(4), np.ones(4)),
    }
    for name, (f, a, b) in cases.items():
        ns = {"f": f, "a": a, "b": b, "n": n}
        plain, recorded = [], []
        for _ in range(rounds):
            plain.append(_plain(TINY, dict(ns)))
            recorded.append(_recorded(TINY, dict(ns))[0])
        per_call_plain = min(plain) / n * 1e6
        overhead = (min(recorded) - min(plain)) / n * 1e6
        print(
            f"tiny calls ({name} on 4 elements): plain {per_call_plain:.2f} us/call, "
            f"recording overhead {overhead:.2f} us/call (target <= 1.5)"
        )


LOAD = """
import sys, time
from IPython.core.interactiveshell import InteractiveShell
ip = InteractiveShell.instance()
start = time.perf_counter()
ip.run_line_magic("load_ext", "porter_ext")
elapsed = time.perf_counter() - start
print(__import__("json").dumps({"seconds": elapsed, "torch": "torch" in sys.modules, "jax": "jax" in sys.modules}))
"""


def load_ext(rounds: int = 5) -> None:
    results = []
    for _ in range(rounds):
        out = subprocess.run(
            [sys.executable, "-c", LOAD], capture_output=True, text=True, check=True
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
    best = min(r["seconds"] for r in results)
    imported = [m for m in ("torch", "jax") if any(r[m] for r in results)]
    print(
        f"%load_ext porter_ext in a fresh interpreter: {best:.3f} s (target < 0.3 s); "
        f"torch/jax imported: {', '.join(imported) or 'neither'}"
    )


if __name__ == "__main__":
    load_ext()
    tiny()
    realistic()

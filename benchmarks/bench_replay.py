"""Replay overhead: a realistic cell replayed on torch from NumPy inputs.

porter's own work for one replay (analysing the cell, converting its inputs, rewriting
and recording the run, comparing the outputs with the original's) against the backend's
own run time of the cell (plain ``exec`` on the already converted inputs). Minimum of
interleaved rounds, so that a noisy machine compares like with like. Target: overhead
<= 10% of the plain run.

Two spellings of the same 52-call computation on 1000x1000 float32: one whose
intermediates stay inside functions (the outputs are reductions), one written flat
(every intermediate is an output, eight of them 1000x1000, each compared in full).

    python benchmarks/bench_replay.py [ROUNDS]
"""

from __future__ import annotations

import gc
import sys
import time

import numpy as np
from _common import steady_allocator

#: what both cells start with
LAYERS = """
xp = array_namespace(x)

def layer(h, w, b):
    z = xp.matmul(h, w) + b
    return xp.where(z > 0, z, 0.01 * z)

def normalise(v):
    mu = xp.mean(v, axis=1, keepdims=True)
    sd = xp.std(v, axis=1, keepdims=True)
    return (v - mu) / (sd + 1e-5)
"""

#: intermediates stay inside functions; the cell's outputs are reductions (a typical
#: analysis cell: the 1000x1000 work happens, the results are small)
REDUCED = (
    LAYERS
    + """
def head(h2):
    scores = xp.exp(xp.tanh(h2) - xp.max(xp.tanh(h2), axis=1, keepdims=True))
    probs = scores / xp.sum(scores, axis=1, keepdims=True)
    clipped = xp.clip(probs, 1e-6, 1.0)
    return probs, -xp.sum(clipped * xp.log(clipped), axis=1)

def features(x, h1, h2):
    mask = xp.astype(xp.abs(x) > 1.0, xp.float32)
    dist = xp.sqrt(xp.square(x - xp.mean(x, axis=0)) + xp.square(h1 - xp.mean(h1, axis=0)))
    feat = xp.concat([xp.sum(dist * mask, axis=0), xp.min(dist, axis=0), xp.max(dist, axis=0)])
    energy = xp.sum(xp.cos(x) * xp.sin(h1)) + xp.sum(xp.log1p(xp.abs(h2)))
    return xp.flip(xp.sort(feat), axis=0), energy, xp.mean(mask, axis=0)

h1 = layer(x, w, b)
h2 = layer(normalise(h1), w, b)
probs, entropy = head(h2)
ranked, energy, coverage = features(x, h1, h2)
counts = xp.count_nonzero(probs > 1e-3, axis=1)
top = xp.argmax(probs, axis=1)
stats = xp.stack([xp.mean(entropy), xp.std(entropy), xp.min(entropy), xp.max(entropy)])
diag = xp.linalg.diagonal(xp.matmul(xp.matrix_transpose(h1), h1) / x.shape[0])
norm = xp.linalg.vector_norm(h2, axis=1)
y = xp.reshape(xp.expm1(xp.negative(xp.abs(h2[:10, :10]))), (-1,))
result = xp.sum(probs, axis=0) + coverage - xp.square(diag) / (1 + norm[0])
del h1, h2, probs
"""
)

#: the same work written flat: every intermediate is an output, nine of them 1000x1000
FLAT = (
    LAYERS
    + """
h1 = layer(x, w, b)
h2 = layer(normalise(h1), w, b)
scores = xp.exp(xp.tanh(h2) - xp.max(xp.tanh(h2), axis=1, keepdims=True))
probs = scores / xp.sum(scores, axis=1, keepdims=True)
clipped = xp.clip(probs, 1e-6, 1.0)
entropy = -xp.sum(clipped * xp.log(clipped), axis=1)
mask = xp.astype(xp.abs(x) > 1.0, xp.float32)
dist = xp.sqrt(xp.square(x - xp.mean(x, axis=0)) + xp.square(h1 - xp.mean(h1, axis=0)))
feat = xp.concat([xp.sum(dist * mask, axis=0), xp.min(dist, axis=0), xp.max(dist, axis=0)])
ranked = xp.flip(xp.sort(feat), axis=0)
energy = xp.sum(xp.cos(x) * xp.sin(h1)) + xp.sum(xp.log1p(xp.abs(h2)))
counts = xp.count_nonzero(probs > 1e-3, axis=1)
top = xp.argmax(probs, axis=1)
stats = xp.stack([xp.mean(entropy), xp.std(entropy), xp.min(entropy), xp.max(entropy)])
cov = xp.matmul(xp.matrix_transpose(h1), h1) / x.shape[0]
diag = xp.linalg.diagonal(cov)
norm = xp.linalg.vector_norm(h2, axis=1)
y = xp.reshape(xp.expm1(xp.negative(xp.abs(h2[:10, :10]))), (-1,))
result = xp.sum(probs, axis=0) + xp.mean(mask, axis=0) - xp.square(diag) / (1 + norm[0])
"""
)


def person_namespace() -> dict:
    from array_api_compat import array_namespace

    rng = np.random.default_rng(0)
    return {
        "__name__": "__main__",
        "array_namespace": array_namespace,
        "x": rng.standard_normal((1000, 1000), dtype=np.float32),
        "w": rng.standard_normal((1000, 1000), dtype=np.float32) / 30,
        "b": rng.standard_normal(1000, dtype=np.float32),
    }


def count_calls(cell: str, ns: dict) -> int:
    from porter_ext.record import run_recorded

    run = run_recorded(cell, dict(ns))
    assert run.error is None, run.error
    return sum(c.count for c in run.calls)


def measure(cell: str, label: str, rounds: int) -> float:
    """Print the figures of one cell; return porter's overhead as a fraction of its run."""
    from porter_ext.backends import BackendSpec
    from porter_ext.compare import compare_outputs, get_policy
    from porter_ext.record import run_recorded
    from porter_ext.replay import analyse, build_namespace, collect_outputs, replay_cell

    person = person_namespace()
    run = run_recorded(cell, person)  # the person's own run, on NumPy
    assert run.error is None, run.error
    original = collect_outputs(analyse(cell), person, run.value)
    policy = get_policy("porter")
    spec = BackendSpec("torch")
    code = compile(cell, "<cell>", "exec")
    io = analyse(cell)
    inputs = build_namespace(io, person, spec).namespace  # converted once, for the plain run

    def plain() -> float:
        # the cell's functions hold its namespace in a reference cycle: collect the last
        # run's arrays first, or this run pays page faults for fresh memory
        gc.collect()
        ns = dict(inputs)
        start = time.perf_counter()
        exec(code, ns)
        return time.perf_counter() - start

    def porter() -> tuple[float, dict[str, float]]:  # rows: an int among the floats
        gc.collect()
        start = time.perf_counter()
        cell_io = analyse(cell)
        t_analyse = time.perf_counter()
        result = replay_cell(cell, person, spec, io=cell_io)
        t_replay = time.perf_counter()
        rows = compare_outputs(original, result, policy)
        end = time.perf_counter()
        assert result.status == "ok", result.error
        assert rows, rows
        parts = {
            "rows": len(rows),
            "analysis": t_analyse - start,
            "conversion": result.prepare_seconds or 0.0,
            "rewrite+compile": (t_replay - t_analyse)
            - (result.prepare_seconds or 0.0)
            - (result.seconds or 0.0),
            "recorded run": result.seconds or 0.0,
            "comparison": end - t_replay,
        }
        return end - start, parts

    plain(), porter()  # warm up: imports, caches, torch kernels
    plains, porters, parts = [], [], []
    for _ in range(rounds):
        plains.append(plain())
        total, detail = porter()
        porters.append(total)
        parts.append(detail)
    t_plain = min(plains)
    t_porter = min(porters)
    rows = parts[0].pop("rows")
    for p in parts[1:]:
        p.pop("rows")
    best = {k: min(p[k] for p in parts) for k in parts[0]}
    overhead = t_porter - t_plain
    ratio = overhead / t_plain
    big = sum(1 for v in original.values() if isinstance(v, np.ndarray) and v.size >= 10**6)
    print(
        f"{label}: {count_calls(cell, person)} array calls on 1000x1000 float32, "
        f"{rows} outputs compared ({big} of 1000x1000); replay numpy -> torch"
    )
    print(f"plain exec on converted inputs: {t_plain * 1e3:8.1f} ms (min of {rounds})")
    print(f"porter replay, all included:    {t_porter * 1e3:8.1f} ms")
    for name, seconds in best.items():
        print(f"  {name:<16} {seconds * 1e3:8.2f} ms")
    recording = best["recorded run"] - t_plain
    print(f"  (recording itself: {recording * 1e3:+.2f} ms over the plain run)")
    print(f"overhead: {overhead * 1e3:.1f} ms = {ratio:.1%} of the plain run (target <= 10%)\n")
    return ratio


def main(rounds: int = 7) -> None:
    import torch

    steady_allocator()

    torch.set_num_threads(1)  # a shared machine: one thread gives steadier figures
    measure(REDUCED, "reduced outputs", rounds)
    measure(FLAT, "flat cell", rounds)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 7)

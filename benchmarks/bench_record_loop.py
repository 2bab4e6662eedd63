"""Recording a Python-level array loop, measured through ``%%port`` in a real IPython
shell (issue 19 item 7).

The loop is the one of the Python Data Science Handbook's 02.03, ``compute_reciprocals``:
``output[i] = 1.0 / values[i]`` over 200 000 NumPy int64 elements, three recorded
operations an element (a read, an operator, a write) that NumPy does in 2 us together.
The function is defined twice, in a plain cell and in a ``%%port`` cell (whose code
is rewritten), and called plainly and in ``%%port --no-replay --quiet`` respectively,
alternated; the minimum of the rounds is kept. Targets: recorded/plain <= 3.0 for this
loop, <= 2 us of extra time per recorded operation (what an operator's fast path costs).
The same loop on torch tensors (whose every operation costs a few microseconds itself)
is printed for information.

    python benchmarks/bench_record_loop.py [ROUNDS]
"""

from __future__ import annotations

import os
import sys

# one thread per library (set before numpy/torch load): thread pools add noise
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

from bench_workers import shell, timed  # noqa: E402 (after the thread settings)

PORT = "%%port --no-replay --quiet\n"
LOOP = """
def compute_reciprocals{suffix}(values):
    output = xp.empty(len(values))
    for i in range(len(values)):
        output[i] = 1.0 / values[i]
    return output
"""
TARGET_RATIO = 3.0
TARGET_US = 2.0


def loop(ip, setup: str, rounds: int) -> tuple[float, float, int]:
    """(min plain seconds, min recorded seconds, recorded operations of one call)."""
    timed(ip, setup)
    timed(ip, LOOP.format(suffix=""))
    timed(ip, PORT + LOOP.format(suffix="_p"))
    call, call_p = "r = compute_reciprocals(values)\n", PORT + "r = compute_reciprocals_p(values)\n"
    timed(ip, call)
    timed(ip, call_p)
    plain, recorded = [], []
    for _ in range(rounds):
        plain.append(timed(ip, call))
        recorded.append(timed(ip, call_p))
    operations = sum(c.count for c in ip.user_ns["_port"].entry.calls)
    return min(plain), min(recorded), operations


def report(label: str, plain: float, recorded: float, operations: int, target: bool) -> float:
    ratio = recorded / plain
    extra = (recorded - plain) / operations * 1e6
    goal = f" (target <= {TARGET_RATIO:g}x, <= {TARGET_US:g} us)" if target else ""
    print(
        f"{label}: plain {plain:.2f} s, recorded {recorded:.2f} s, ratio {ratio:.2f}x, "
        f"{extra:.2f} us extra per recorded operation ({operations} operations){goal}"
    )
    return max(ratio / TARGET_RATIO, extra / TARGET_US)


def main(rounds: int = 5) -> None:
    ip = shell()
    numpy = loop(
        ip,
        "import numpy as xp\n"
        "values = xp.random.default_rng(seed=1701).integers(1, 100, size=200_000)\n",
        rounds,
    )
    within = report("numpy, 200 000 elements", *numpy, target=True)
    try:
        import torch  # noqa: F401
    except ImportError:
        print("torch: not installed, skipped")
    else:
        torch_loop = loop(
            ip,
            "import torch as xp\ntorch_threads = xp.set_num_threads(1)\n"
            "values = xp.randint(1, 100, (50_000,)).double()\n",
            rounds,
        )
        report("torch, 50 000 elements (informational)", *torch_loop, target=False)
    print(f"ratio to target (<= 1 is within): {within:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)

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

Replays (issue 19 item 7): the same call in ``%%port -b numpy,torch --quiet``; each
replay's own run time (the worker's clock around the cell) against the plain loop on that
backend in this process (torch: the loop over ``array_api_compat.torch``, which is what
a replay's ``xp`` is there). A replay records each loop until its iterations record
nothing new, then runs it as written. Target: replay/plain <= 1.5 on NumPy.

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
TARGET_REPLAY = 1.5


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


def replay_loop(ip, rounds: int) -> float:
    """Replays of the recorded loop against the plain loop on each backend; the NumPy
    replay's ratio to its target."""
    backends = ["numpy"]
    plain = {"numpy": lambda: timed(ip, "r = compute_reciprocals(values)\n")}
    try:
        import array_api_compat.torch as xpt
        import torch
    except ImportError:
        print("replays on torch: not installed, skipped")
    else:
        loop_globals = {"xp": xpt}
        exec(LOOP.format(suffix=""), loop_globals)
        tensor = torch.asarray(ip.user_ns["values"])
        plain["torch"] = lambda: _seconds(loop_globals["compute_reciprocals"], tensor)
        backends.append("torch")
    cell = f"%%port -b {','.join(backends)} --quiet\nr = compute_reciprocals_p(values)\n"
    replayed: dict[str, list[float]] = {b: [] for b in backends}
    plain_runs: dict[str, list[float]] = {b: [] for b in backends}
    for _ in range(rounds):
        timed(ip, cell)
        for replay in ip.user_ns["_port"].entry.replays:
            if replay.role == "target" and replay.status == "ok":
                replayed[replay.backend].append(replay.seconds)
        for backend in backends:
            plain_runs[backend].append(plain[backend]())
    within = 0.0
    for backend in backends:
        if not replayed[backend]:
            print(f"replay on {backend}: did not finish ok")
            continue
        ratio = min(replayed[backend]) / min(plain_runs[backend])
        goal = f" (target <= {TARGET_REPLAY:g}x)" if backend == "numpy" else " (informational)"
        print(
            f"replay on {backend}: {min(replayed[backend]):.2f} s, plain on {backend} "
            f"{min(plain_runs[backend]):.2f} s, ratio {ratio:.2f}x{goal}"
        )
        if backend == "numpy":
            within = ratio / TARGET_REPLAY
    return within


def _seconds(function, *args) -> float:
    import time

    start = time.perf_counter()
    function(*args)
    return time.perf_counter() - start


def main(rounds: int = 5) -> None:
    ip = shell()
    numpy = loop(
        ip,
        "import numpy as xp\n"
        "values = xp.random.default_rng(seed=1701).integers(1, 100, size=200_000)\n",
        rounds,
    )
    within = report("numpy, 200 000 elements", *numpy, target=True)
    replay_within = replay_loop(ip, max(2, rounds // 2))
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
    print(f"replay ratio to target (<= 1 is within): {replay_within:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 5)

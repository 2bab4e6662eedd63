"""The person's code outside the recorded cell, measured through ``%%port`` in a real
IPython shell (issue 26's targets), ratios measured in one run (minimum of interleaved
rounds):

- a recorded call inside a function of the person's module costs what the same call
  written in the cell costs (``module/cell`` recorded, target about 1.0);
- with the extension loaded and nothing recording, plain cells calling the module's
  functions run at <= 1.02x their speed without porter (``loaded/unloaded``);
- ``%load_ext porter_ext`` stays under 0.3 s (printed by bench_recording.py too).

    python benchmarks/bench_person_code.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import textwrap
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

MODULE = textwrap.dedent(
    """\
    import numpy as np


    def kernel(a, b):
        c = np.tanh(a @ b) + np.exp(-np.abs(a))
        d = np.sum(c, axis=0) / np.max(np.abs(c))
        return np.sqrt(np.abs(d)) * np.sin(d)


    def many(a, b, n):
        total = 0.0
        for _ in range(n):
            total = total + float(np.sum(kernel(a, b)))
        return total
    """
)
IN_CELL = MODULE.replace("import numpy as np\n", "")
CALL = "r = many(a, b, 200)"
SETUP = "import numpy as np\na = np.ones((8, 8)) * 0.1\nb = np.ones((8, 8)) * 0.2"
PORT = "%%port --no-replay --quiet\n"


def _time(ip, source: str) -> float:
    start = time.perf_counter()
    result = ip.run_cell(source, store_history=False, silent=True)
    elapsed = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"benchmark cell failed: {result.error_in_exec}")
    return elapsed


def _best(ip, sources: list[str], rounds: int) -> list[float]:
    for source in sources:
        _time(ip, source)
    times: list[list[float]] = [[] for _ in sources]
    for _ in range(rounds):
        for i, source in enumerate(sources):
            times[i].append(_time(ip, source))
    return [min(t) for t in times]


def _loaded_and_not(ip, rounds: int) -> tuple[float, float]:
    """(min seconds with the extension loaded, without), interleaved round by round."""
    loaded, unloaded = [], []
    for _ in range(rounds):
        ip.run_line_magic("unload_ext", "porter_ext")
        unloaded.append(_time(ip, CALL))
        ip.run_line_magic("load_ext", "porter_ext")
        loaded.append(_time(ip, CALL))
    return min(loaded), min(unloaded)


def main() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    folder = tempfile.mkdtemp(prefix="porter-bench-")
    with open(os.path.join(folder, "benchmod.py"), "w", encoding="utf-8") as handle:
        handle.write(MODULE)
    os.chdir(folder)
    sys.path.insert(0, folder)
    ip = InteractiveShell.instance()
    ip.run_cell(SETUP, store_history=False)
    ip.run_cell("from benchmod import many", store_history=False)
    _time(ip, CALL)
    start = time.perf_counter()
    ip.run_line_magic("load_ext", "porter_ext")
    load = time.perf_counter() - start
    # nothing records: a plain cell calling the module, with and without the extension
    loaded, unloaded = _loaded_and_not(ip, rounds=15)
    # a recorded cell calling the module's functions, and the same functions written in
    # an earlier recorded cell (both run their rewritten twins)
    ip.run_cell(PORT + IN_CELL.replace("def many", "def cell_many"), store_history=False)
    module, cell = _best(ip, [PORT + CALL, PORT + CALL.replace("many", "cell_many")], rounds=7)
    print(f"%load_ext porter_ext: {load:.3f} s (target < 0.3 s)")
    print(f"plain cell, extension loaded / not loaded: {loaded / unloaded:.3f}x (target <= 1.02x)")
    print(
        f"recorded calls inside the person's module / in a function written in a cell: "
        f"{module / cell:.3f}x (module {module * 1e3:.1f} ms, cell {cell * 1e3:.1f} ms; "
        "target about 1.0x)"
    )


if __name__ == "__main__":
    main()

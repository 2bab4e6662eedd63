"""A long cell of distinct call sites (generated code, a pasted script), through ``%%port``
in a real IPython shell: its time must grow about linearly with the number of sites.

``turn4/attacks/87`` measured ``porter run`` of 10 000 and 25 000 such lines: 2.5x the
lines took 4.7x the time (the port plan checked each site against a list). This prints,
from one run, the seconds for N and 2.5 N lines recorded (``--no-replay``: the replays'
own cost is the replay benchmarks') and their ratio against the lines' ratio. Target:
time ratio <= 1.2x the lines' ratio (2.5).

    python benchmarks/bench_call_sites.py [N]
"""

from __future__ import annotations

import sys
import time

PORT = "%%port --no-replay --quiet\n"
TARGET = 1.2


def _cell(lines: int) -> str:
    body = [f"y{i % 97} = np.sum(x, 0) + {i}" for i in range(lines)]
    return "\n".join(["import numpy as np", "x = np.arange(4.0)", *body])


def _seconds(ip, source: str) -> float:
    start = time.perf_counter()
    result = ip.run_cell(PORT + source, store_history=False, silent=True)
    elapsed = time.perf_counter() - start
    if not result.success:
        raise RuntimeError(f"benchmark cell failed: {result.error_in_exec}")
    return elapsed


def main() -> None:
    from IPython.core.interactiveshell import InteractiveShell

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4000
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "porter_ext")
    _seconds(ip, _cell(200))  # imports, the recorder's first compilation
    small = _seconds(ip, _cell(n))
    large = _seconds(ip, _cell(int(n * 2.5)))
    ratio = large / small
    verdict = "OK" if ratio <= 2.5 * TARGET else "ABOVE TARGET"
    print(f"{n} call sites: {small:.2f} s; {int(n * 2.5)}: {large:.2f} s")
    print(
        f"2.5x the call sites took {ratio:.2f}x the time (target <= {2.5 * TARGET:.1f}x): {verdict}"
    )


if __name__ == "__main__":
    main()

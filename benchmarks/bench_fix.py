"""``porter fix`` on the shipped worked example with three backends (issue 11: < 30 s).

The whole command as a person runs it: the console script, a fresh kernel, every code
cell under ``%%port --fix``, its replays and the rewrite's verification rounds in worker
kernels, the ported notebook and the report written.

    python benchmarks/bench_fix.py [ROUNDS]
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "01_port_a_torch_function.ipynb"
BACKENDS = "numpy,jax,strict"
TARGET = 30.0


def fix_once(out: Path) -> float:
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    args = [
        exe,
        "fix",
        str(NOTEBOOK),
        "-o",
        str(out / "ported.ipynb"),
        "-b",
        BACKENDS,
        "--report",
        str(out / "fix.json"),
    ]
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, timeout=600)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"porter fix failed ({done.returncode}): {done.stderr}")
    return seconds


def main(rounds: int = 1) -> None:
    times = []
    with tempfile.TemporaryDirectory(prefix="bench-fix-") as tmp:
        for _ in range(rounds):
            times.append(fix_once(Path(tmp)))
    best = min(times)
    verdict = "ok" if best < TARGET else "SLOW"
    print(
        f"porter fix {NOTEBOOK.name} -b {BACKENDS}: {best:.1f} s "
        f"(of {rounds} round(s); target < {TARGET:g} s) {verdict}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1)

"""Benchmark: ``porter lint`` on a generated 5 000-line package. Target: under 3 s,
counted as a person sees it (a fresh ``porter`` process, start-up included).

Run from the repository root:  python benchmarks/bench_lint.py [--lines N]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from porter_ext.fix.lint import lint_paths  # noqa: E402
from tests.fix.generated import make_package  # noqa: E402

TARGET_S = 3.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pkg"
        lines = make_package(root, args.lines)
        in_process = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = lint_paths([root])
            in_process.append(time.perf_counter() - start)
        whole = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-m", "porter_ext.cli", "lint", "--format", "json", str(root)],
                capture_output=True,
                check=False,
            )
            whole.append(time.perf_counter() - start)
    best = min(whole)
    print(f"porter lint: {lines} lines in {result.files} files, {len(result.findings)} findings")
    print(f"  in process  best {min(in_process):.3f} s")
    print(f"  porter lint best {best:.3f} s (process start-up included; target < {TARGET_S} s)")
    print(f"  ratio to target: {best / TARGET_S:.2f}")
    return 0 if best < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())

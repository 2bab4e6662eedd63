"""Benchmark: ``porter lint`` as a person sees it (a fresh ``porter`` process, start-up
included), on a generated 5 000-line package (target under 3 s) and on generated single
files of 0.5 MB and 5 MB (target: 5 MB in under 10 s, time and memory linear in the size:
the 5 MB file takes about ten times the 0.5 MB one, and peak memory does not grow with
the file beyond the findings it reports).

Two shapes of file: ``blocks`` (module-level code, functions, loops and branches) and
``dense`` (every line the same three calls, as ``turn3/attacks/54`` writes it: a call
written the same way many times, whose suggestion is spelled once). The reproducer's own
sizes, 5 MB and 50 MB of ``dense``, are run last (``--repro-sizes``): the 5 MB against
the 10 s target, the 50 MB against ten times that (time linear in the size), and the peak
memory of both (bounded: findings are printed as they are made, the file is read a chunk
at a time).

Wall seconds, CPU seconds (the machines are shared: wall time counts the neighbours' work)
and the process's peak resident memory are printed for each; for the reproducer's files
the throughput too (MB/s of CPU time and of wall time, start-up included).

Run from the repository root:
python benchmarks/bench_lint.py [--lines N] [--sizes MB,MB] [--shapes blocks,dense]
    [--repro-sizes MB,MB]
"""

from __future__ import annotations

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fix.generated import PEAK_WRAPPER, make_package  # noqa: E402

PACKAGE_TARGET_S = 3.0
FIVE_MB_TARGET_S = 10.0

#: one block of the generated file: module-level array code, a function, a loop and a
#: branch, so that names change type along the way (the flow the lint follows)
_BLOCK = """
X_{n}, Y_{n} = [], []
for w in words:
    X_{n}.append(len(w))
    Y_{n}.append(w.upper())
X_{n} = torch.tensor(X_{n})
y_{n} = np.sum(x, 1) + x.sum(0) * torch.max(a, b)


def step_{n}(x, w):
    xp = array_namespace(x)
    z = xp.matmul(x, w)
    if z.ndim > 1:
        z = np.cumsum(np.asarray(z), axis=0)
    else:
        z = xp.zeros(3)
    return xp.mean(z, axis=0), X_{n}.sort()
"""

#: the ``dense`` shape's line: three findings in 47 bytes
_DENSE_LINE = "y = np.sum(x, 1) + x.sum(0) * torch.max(a, b)\n"


def write_file(path: Path, megabytes: float, shape: str = "blocks") -> int:
    """A generated module of about ``megabytes``; returns its size in bytes."""
    header = "import numpy as np\nimport torch\nfrom array_api_compat import array_namespace\n"
    parts = [header]
    size, n = len(header), 0
    while size < megabytes * 1_000_000:
        block = _BLOCK.format(n=n) if shape == "blocks" else _DENSE_LINE
        parts.append(block)
        size += len(block)
        n += 1
    path.write_text("".join(parts))
    return size


def run_lint(path: Path) -> tuple[float, float, float, int]:
    """(wall s, CPU s, peak MB, findings) of one ``porter lint`` process (text output, as
    a person runs it: findings past ``--max-repeats`` counted, not shown)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK_WRAPPER, "lint", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    peak = next(
        (int(line[6:]) for line in proc.stderr.splitlines() if line.startswith("VmHWM=")), 0
    )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"porter lint failed ({proc.returncode}): {proc.stderr[-500:]}")
    summary = re.search(r"(\d+) findings?, (\d+) needing a run", proc.stdout)
    found = int(summary.group(1)) + int(summary.group(2)) if summary else 0
    return wall, cpu, peak / 1024, found


def bench_package(lines: int, repeat: int) -> bool:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "pkg"
        written = make_package(root, lines)
        runs = [run_lint(root) for _ in range(repeat)]
    best = min(runs)
    print(f"porter lint: package of {written} lines, {best[3]} findings")
    print(f"  best {best[0]:.2f} s wall, {best[1]:.2f} s CPU, peak {best[2]:.0f} MB")
    print(f"  ratio to target ({PACKAGE_TARGET_S} s): {best[0] / PACKAGE_TARGET_S:.2f}")
    return best[0] < PACKAGE_TARGET_S


def bench_sizes(sizes: list[float], shape: str) -> bool:
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in sizes:
            path = Path(tmp) / f"generated_{megabytes}mb.py"
            size = write_file(path, megabytes, shape)
            wall, cpu, peak, found = run_lint(path)
            results.append((size, wall, cpu, peak))
            print(
                f"porter lint: {size / 1e6:.1f} MB {shape} file, {found} findings: "
                f"{wall:.2f} s wall, "
                f"{cpu:.2f} s CPU, peak {peak:.0f} MB"
            )
            path.unlink()
    (small, *_, big) = results
    grow = big[0] / small[0]
    print(
        f"  linearity: {grow:.0f}x the size took {big[1] / small[1]:.1f}x the wall time, "
        f"{big[2] / small[2]:.1f}x the CPU time, {big[3] / small[3]:.1f}x the peak memory"
    )
    ok = big[1] < FIVE_MB_TARGET_S * big[0] / 5e6
    print(f"  ratio to target ({FIVE_MB_TARGET_S} s per 5 MB): {big[1] / FIVE_MB_TARGET_S:.2f}")
    return ok


def bench_reproducer(sizes: list[float]) -> bool:
    """``turn3/attacks/54``'s files: 5 MB under `FIVE_MB_TARGET_S`, every size under the
    target scaled to it, the peak memory the same whatever the size."""
    ok = True
    peaks = []
    with tempfile.TemporaryDirectory() as tmp:
        for megabytes in sizes:
            path = Path(tmp) / f"attack54_{megabytes}mb.py"
            size = write_file(path, megabytes, "dense")
            wall, cpu, peak, found = run_lint(path)
            path.unlink()
            target = FIVE_MB_TARGET_S * size / 5e6
            peaks.append(peak)
            print(
                f"porter lint (turn3/attacks/54): {size / 1e6:.1f} MB, {found} findings: "
                f"{wall:.1f} s wall, {cpu:.1f} s CPU, peak {peak:.0f} MB; target "
                f"{target:.1f} s, ratio {wall / target:.2f} (CPU {cpu / target:.2f})"
            )
            print(
                f"  throughput: {size / 1e6 / cpu:.2f} MB/s CPU, {size / 1e6 / wall:.2f} MB/s wall"
            )
            ok = ok and wall < target
    print(f"  peak memory: {' / '.join(f'{p:.0f} MB' for p in peaks)} (bounded: not the size)")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sizes", default="0.5,5", help="file sizes in MB (default 0.5,5)")
    parser.add_argument("--shapes", default="blocks,dense", help="blocks, dense or both")
    parser.add_argument(
        "--repro-sizes", default="5,50", help="turn3/attacks/54's sizes in MB (default 5,50)"
    )
    args = parser.parse_args()
    sizes = [float(s) for s in args.sizes.split(",")]
    ok = bench_package(args.lines, args.repeat)
    for shape in args.shapes.split(","):
        ok = bench_sizes(sizes, shape) and ok
    ok = bench_reproducer([float(s) for s in args.repro_sizes.split(",")]) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

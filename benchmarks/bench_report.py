"""Benchmark: render the HTML (and the other formats) of a big report.

The workload is the report of a 500-cell notebook with 20 array calls per cell, most of
them outside the standard (the dense case a porting assistant is for), a device finding
per cell and 3 replays per cell with two outputs each, built by the test factory in
`tests/report/conftest.py`. Targets: HTML in under 2 s and under 5 MB.

Run from the repository root:  python benchmarks/bench_report.py [--cells N] [--calls N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from porter_ext.report import (  # noqa: E402
    Report,
    render_html,
    render_markdown,
    report_to_dict,
    report_to_json,
    validate,
)
from tests.report.conftest import make_replay, make_report, mismatched_entry  # noqa: E402


def timed(fn, *args, repeat: int = 1):
    """Result, best wall seconds, median wall seconds and best CPU seconds of `repeat` runs.

    The best of several runs is the figure to compare: the build machines are shared, and
    a single run can take twice as long for reasons outside the code."""
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        result = fn(*args)
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return result, min(walls), statistics.median(walls), min(cpus)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=500)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--replays", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement")
    parser.add_argument(
        "--mismatched-cells",
        type=int,
        default=10,
        help="cells whose first replay has a mismatched 2-D output (plotted)",
    )
    args = parser.parse_args()

    report = make_report(args.cells, calls=args.calls, replays=args.replays)
    # A few cells with real mismatches, so that plots are part of the measurement.
    cells = list(report.cells)
    for i in range(min(args.mismatched_cells, len(cells))):
        j = i * max(1, len(cells) // max(1, args.mismatched_cells))
        replays = [
            make_replay("numpy", outputs=[mismatched_entry(shape=(200, 300), seed=i)]),
            *cells[j].replays[1:],
        ]
        cells[j] = replace(cells[j], replays=replays)
    report = Report.build(
        cells,
        report.environment,
        array_api_version=report.array_api_version,
        notebook=report.source.notebook,
        porter_version=report.porter_version,
    )

    calls = sum(len(c.calls) for c in report.cells)
    print(
        f"report: {len(report.cells)} cells, {calls} call sites, "
        f"{sum(len(c.replays) for c in report.cells)} replays, "
        f"{report.summary.mismatches} mismatched outputs"
    )
    render_html(report)  # warm-up: template compilation, matplotlib import
    html, t_html, med_html, cpu_html = timed(render_html, report, repeat=args.repeat)
    md, t_md, _, _ = timed(render_markdown, report, repeat=args.repeat)
    data, t_dict, _, _ = timed(report_to_dict, report, repeat=args.repeat)
    _, t_validate, _, _ = timed(validate, data, repeat=args.repeat)
    text, t_json, _, _ = timed(report_to_json, report, repeat=args.repeat)

    mb = len(html.encode()) / 1e6
    ok_time, ok_size = t_html < 2.0, mb < 5.0
    print(f"best of {args.repeat} runs (wall seconds); median and CPU seconds for HTML")
    print(
        f"html      {t_html:6.3f} s  {mb:6.2f} MB   median {med_html:.3f} s, CPU {cpu_html:.3f} s"
        f"   (targets < 2 s: {'ok' if ok_time else 'MISSED'}, < 5 MB: {'ok' if ok_size else 'MISSED'})"
    )
    print(f"markdown  {t_md:6.3f} s  {len(md.encode()) / 1e6:6.2f} MB")
    print(
        f"json      {t_json:6.3f} s  {len(text.encode()) / 1e6:6.2f} MB  (report_to_dict {t_dict:.3f} s)"
    )
    print(f"validate  {t_validate:6.3f} s")
    return 0 if ok_time and ok_size else 1


if __name__ == "__main__":
    sys.exit(main())

"""``bench_fix_coverage.py --corpus DIR``: porter fix on notebooks nobody here wrote.

Issue 29 item 7. For every notebook under DIR (prepared by
``benchmarks/corpus/prepare.py``; see benchmarks/README.md), as a person would run it:

1. the notebook in a plain ``python3`` kernel (nbclient), timed; then once more, so that
   cells whose output differs between two plain runs (unseeded draws) are known;
2. ``porter run NB -b numpy,jax,strict``, timed (target <= 3x the plain run);
3. ``porter fix NB -o PORTED -b numpy,jax,strict --report FIX.json``, timed;
4. the ported notebook in a plain kernel, in the original's folder: does it print what
   the original prints (every cell that prints the same in both plain runs)?

It prints per notebook: finding sites and the sites fixed and verified (counted as the
fixture mode counts them; "at calls": of those, the sites verified at their calls in a
cell that stays on its original library, `porter_ext.fix.site_checks`), the cells whose rewrite is verified / partial / refused, why
the other sites were left (reasons with particulars stripped, by count), whether the
ported notebook prints what the original prints, the two time ratios, mismatches, and
porter's own failures seen on its stderr; then the totals, the share of finding sites
fixed and verified (target >= 60 %), and the reasons and calls left, by count.

    python benchmarks/bench_fix_coverage.py --corpus DIR [--keep OUT] [--only TEXT ...]
        [--command-timeout S] [--cell-timeout S]

``--keep OUT`` keeps the ported notebooks, reports and each notebook's figures
(``NAME.figures.json``) in OUT; a notebook whose figures are there already is not run
again, so an interrupted run resumes. ``--only TEXT`` measures the notebooks whose path
contains TEXT (repeatable). Commands that crash or pass ``--command-timeout`` are noted
and the next notebook goes on.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _plain_run import differing_cells, run_plain, unsteady_cells
from bench_fix_coverage import BACKENDS, _mismatches, coverage

TARGET = 0.60
#: lines of porter's stderr that say porter itself failed
_PORTER_FAILURE = re.compile(
    r"failed inside porter|Traceback|Error: unknown library|porter could not", re.IGNORECASE
)


def _porter(args: list[str], cwd: Path, timeout: int) -> tuple[float, int | str, str]:
    """Seconds, exit status (or ``"timeout"``) and stderr of one porter command."""
    exe = Path(sys.executable).parent / "porter"
    start = time.perf_counter()
    try:
        done = subprocess.run(
            [str(exe), *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as exc:
        err = exc.stderr.decode(errors="replace") if isinstance(exc.stderr, bytes) else ""
        return time.perf_counter() - start, "timeout", err or ""
    return time.perf_counter() - start, done.returncode, done.stderr


def _failures(command: str, status: int | str, stderr: str) -> list[str]:
    """porter's own failures: a crash, a timeout, or a line of stderr that names one."""
    out = []
    if status not in (0, 1):
        tail = stderr.strip().splitlines()[-1:] or [""]
        out.append(f"porter {command} exited {status}: {tail[0][:300]}")
    seen = set()
    for line in stderr.splitlines():
        if _PORTER_FAILURE.search(line) and line.strip() not in seen:
            seen.add(line.strip())
            out.append(f"porter {command}: {line.strip()[:300]}")
    return out


def _report_failures(report: dict, label: str) -> list[str]:
    """porter's own failures that a report carries: a replay or a rewrite that failed
    in porter or in its worker rather than in the person's code."""
    out = []
    for cell in report["cells"]:
        texts = [(r.get("error") or {}).get("message") or "" for r in cell["replays"]]
        texts += [r.get("reason") or "" for r in cell["replays"]]
        texts.append((cell.get("rewrite") or {}).get("reason") or "")
        for text in texts:
            if _PORTER_FAILURE.search(text) or "WorkerError" in text:
                out.append(f"{label} cell {cell['index']}: {' '.join(text.split())[:300]}")
                break
    return out


def _reason(why: str) -> str:
    """A reason of the fixture mode (``NAME: reason``) without the call's name and the
    particulars it still carries (variable names, array reprs), on one line."""
    text = why.split(": ", 1)[1] if ": " in why else why
    text = re.sub(r"\s+", " ", text)
    text = re.sub(r"\b\d+ site\(s\)", "N site(s)", text)
    text = re.sub(r"\((\w+): (dtype_changed|shape_changed|numeric)", r"(...: \2", text)
    text = re.sub(r"got \(Array\(.*", "got (Array(...", text)
    return text[:160]


def measure(notebook: Path, out: Path, args: argparse.Namespace) -> dict:
    stem, folder = notebook.stem, notebook.parent
    ported = out / f"{stem}.ported.ipynb"
    fix_json, run_json = out / f"{stem}.fix.json", out / f"{stem}.run.json"
    for stale in (ported, fix_json, run_json):
        stale.unlink(missing_ok=True)
    specs = ",".join(BACKENDS)
    timeout = ["--timeout", str(args.cell_timeout)]
    plain = run_plain(notebook, folder, args.command_timeout)
    again = run_plain(notebook, folder, args.command_timeout)
    run_s, run_rc, run_err = _porter(
        ["run", str(notebook), "-b", specs, "-o", str(run_json), "--force", *timeout],
        folder,
        args.command_timeout,
    )
    fix_s, fix_rc, fix_err = _porter(
        ["fix", str(notebook), "-o", str(ported), "-b", specs, "--report", str(fix_json)]
        + ["--force", *timeout],
        folder,
        args.command_timeout,
    )
    result: dict = {
        "notebook": notebook.name,
        "plain_s": plain.seconds,
        "plain_failure": plain.failure,
        "run_s": run_s,
        "fix_s": fix_s,
        "failures": _failures("run", run_rc, run_err) + _failures("fix", fix_rc, fix_err),
        "unsteady_cells": unsteady_cells(plain, again),
    }
    if fix_json.exists():
        fix = json.loads(fix_json.read_text())
        figures = coverage(fix)
        result.update(
            findings=figures.findings,
            fixed=figures.fixed,
            at_calls=figures.at_calls,
            why=dict(figures.why),
        )
        statuses = Counter((c.get("rewrite") or {}).get("status") for c in fix["cells"])
        result["cells"] = {s: statuses.get(s, 0) for s in ("verified", "partial", "refused")}
        _mismatches(fix, f"{stem} (fix)", figures)
        result["failures"] += _report_failures(fix, "porter fix report")
        if run_json.exists():
            run = json.loads(run_json.read_text())
            _mismatches(run, f"{stem} (run)", figures)
            result["failures"] += _report_failures(run, "porter run report")
        result.update(
            mismatches=figures.mismatches,
            false_mismatches=figures.false_mismatches,
            listed=figures.listed,
        )
    if ported.exists():
        after = run_plain(ported, folder, args.command_timeout)
        result["differing_cells"] = differing_cells(plain, again, after)
        result["differences"] = [
            f"code cell {i + 1}: {plain.printed[i][:120]!r} -> "
            f"{(after.printed[i] if i < len(after.printed) else '<missing>')[:120]!r}"
            for i in result["differing_cells"]
        ]
    return result


def _share(fixed: int, findings: int) -> str:
    return f"{fixed / findings:6.1%}" if findings else "   -  "


def _print(r: dict) -> None:
    plain = r["plain_s"] or float("nan")
    same = (
        "not ported (no notebook)"
        if "differing_cells" not in r
        else "same output"
        if not r["differing_cells"]
        else f"OUTPUT DIFFERS in {len(r['differing_cells'])} cells"
    )
    cells = r.get("cells", {})
    print(
        f"{r['notebook']:<44} sites {r.get('findings', 0):>4}  verified {r.get('fixed', 0):>4} "
        f"({_share(r.get('fixed', 0), r.get('findings', 0))}, at calls {r.get('at_calls', 0)})"
        f"  cells verified {cells.get('verified', 0)} partial {cells.get('partial', 0)} refused "
        f"{cells.get('refused', 0)}",
        flush=True,
    )
    print(
        f"    {same} ({r['unsteady_cells']} cells differ between two plain runs, not judged)"
        f"  run/plain {r['run_s'] / plain:.1f}x ({r['run_s']:.0f}s / {plain:.0f}s)"
        f"  fix/run {r['fix_s'] / r['run_s']:.1f}x  mismatches {r.get('mismatches', '-')}"
        f" (false {r.get('false_mismatches', '-')})",
        flush=True,
    )
    if r.get("plain_failure"):
        print(f"    plain run did not finish: {r['plain_failure']}")
    reasons = Counter()
    for why, n in r.get("why", {}).items():
        reasons[_reason(why)] += n
    for why, n in reasons.most_common():
        print(f"    {n:>4}  {why}")
    for line in r.get("differences", [])[:10]:
        print(f"    differs: {line}")
    for line in r["failures"]:
        print(f"    PORTER FAILURE: {line}")


def _notebooks(corpus: Path, only: list[str]) -> list[Path]:
    found = sorted(
        p
        for p in corpus.rglob("*.ipynb")
        if ".ipynb_checkpoints" not in p.parts and not p.name.endswith(".ported.ipynb")
    )
    return [p for p in found if not only or any(o in str(p) for o in only)]


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_fix_coverage.py --corpus")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--keep", type=Path)
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--command-timeout", type=int, default=3600)
    parser.add_argument("--cell-timeout", type=int, default=600)
    args = parser.parse_args(argv)
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-corpus-") as tmp:
        out = args.keep or Path(tmp)
        out.mkdir(parents=True, exist_ok=True)
        for notebook in _notebooks(args.corpus, args.only):
            cached = out / f"{notebook.stem}.figures.json"
            if args.keep and cached.exists():
                result = json.loads(cached.read_text())
            else:
                result = measure(notebook, out, args)
                cached.write_text(json.dumps(result, indent=1))
            _print(result)
            results.append(result)
    totals(results)


def totals(results: list[dict]) -> None:
    findings = sum(r.get("findings", 0) for r in results)
    fixed = sum(r.get("fixed", 0) for r in results)
    at_calls = sum(r.get("at_calls", 0) for r in results)
    cells = Counter()
    reasons, calls = Counter(), Counter()
    for r in results:
        cells.update(r.get("cells", {}))
        for why, n in r.get("why", {}).items():
            reasons[_reason(why)] += n
            calls[f"{why.split(': ', 1)[0]}: {_reason(why)}"] += n
    same = sum(1 for r in results if r.get("differing_cells") == [])
    ratios = sorted(r["run_s"] / r["plain_s"] for r in results if r["plain_s"])
    median = ratios[len(ratios) // 2] if ratios else float("nan")
    false = sum(r.get("false_mismatches", 0) for r in results)
    print(
        f"TOTAL {len(results)} notebooks: sites {findings}  verified {fixed} "
        f"({_share(fixed, findings).strip()}, at calls {at_calls})  cells verified {cells['verified']} partial "
        f"{cells['partial']} refused {cells['refused']}  same output {same}/{len(results)}  "
        f"run/plain median {median:.1f}x (max {max(ratios, default=float('nan')):.1f}x)  "
        f"mismatches {sum(r.get('mismatches', 0) for r in results)} (false {false})"
    )
    listed = [line for r in results for line in r.get("listed", [])]
    if listed:
        print("mismatches:")
        for line in listed:
            print(f"  {line}")
    print("why sites were left, by count:")
    for why, n in reasons.most_common():
        print(f"  {n:>4}  {why}")
    print("calls left, by count (first 25):")
    for why, n in calls.most_common(25):
        print(f"  {n:>4}  {why}")
    failures = [(r["notebook"], f) for r in results for f in r["failures"]]
    if failures:
        print("porter's own failures:")
        for name, line in failures:
            print(f"  {name}: {line}")
    share = fixed / findings if findings else 1.0
    print(
        f"share {share:.1%} of finding sites fixed and verified (target >= {TARGET:.0%}, "
        f"then 80 %): {'ok' if share >= TARGET else 'BELOW TARGET'}; every ported notebook "
        f"prints what the original prints: {same}/{len(results)}; run/plain <= 3x: "
        f"{sum(x <= 3 for x in ratios)}/{len(ratios)}"
    )

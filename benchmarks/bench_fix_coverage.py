"""How much of the non-standard code ``porter fix`` ports (issue 19's target: >= 80 %).

For every notebook in ``notebooks/`` and ``notebooks/fixtures/`` the real CLI runs as a
person runs it: ``porter fix NOTEBOOK -o PORTED -b numpy,jax,strict --report FIX.json``,
then ``porter run PORTED -b numpy,jax,strict -o RUN.json`` on what it wrote. From the two
reports it prints, per notebook and in total:

- findings: the original run's calls outside the standard (the report's non-standard
  statuses, and host syncs such as ``.item()``/``.numpy()`` that have no standard name),
  one per place they are written (a call made by another cell's code counts where it is
  written);
- fixed: those whose site the rewrite applied, in a rewrite verified on every requested
  backend the original cell exercises (a ``partial`` rewrite counts for its applied
  sites when only sites were left out, not backends), or in an accepted rewrite where
  the site itself was verified at its calls on the backends the cell was not (a training
  cell kept on torch by ``loss.backward()``: `porter_ext.fix.site_checks`; printed apart
  as "at calls"); the share is fixed / findings;
- clean: ported cells (rewrite verified or partial) whose replays of the ported notebook
  on numpy, jax and strict all ran (``ok``, or ``not_exercised``: they never touched that
  library) with no output outside tolerance;
- false mismatches: outputs counted as mismatches (an ok replay's output outside
  tolerance) that the contract says are none (``dtype_changed``, ``order_only``,
  ``sign_only``, or no error at all), in either report; every other mismatch is listed;
- why the rest was not fixed, grouped with counts (so the next gaps are visible).

It exits non-zero only when a command crashes.

    python benchmarks/bench_fix_coverage.py [--keep DIR] [NOTEBOOK ...]

``--keep DIR`` leaves the ported notebooks and both reports of each notebook in DIR.

``--corpus DIR`` measures notebooks nobody here wrote instead (issue 29's public corpus,
fetched and prepared as benchmarks/README.md says; target >= 60 % on the way to 80 %):
see ``benchmarks/_corpus.py`` for what it runs and prints.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from porter_ext.model.report import NON_STANDARD_STATUSES  # noqa: E402

BACKENDS = ("numpy", "jax", "strict")
TARGET = 0.80
#: host syncs (``.item()``, ``.numpy()``) are outside the standard, except its own spelling
HOST_SYNC = "host_sync"
PYTHON_CONVERSIONS = {"float", "int", "bool", "complex"}
#: differences that the contract says are not mismatches
NOT_MISMATCHES = {"dtype_changed", "order_only", "sign_only"}


@dataclass
class Figures:
    findings: int = 0
    fixed: int = 0
    #: of ``fixed``: sites verified at their calls in a cell verified whole on fewer
    #: backends (`porter_ext.fix.site_checks`)
    at_calls: int = 0
    ported_cells: int = 0
    clean_cells: int = 0
    mismatches: int = 0
    false_mismatches: int = 0
    why: Counter = field(default_factory=Counter)
    listed: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        for name in (
            "findings",
            "fixed",
            "at_calls",
            "ported_cells",
            "clean_cells",
            "mismatches",
            "false_mismatches",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.why.update(other.why)
        self.listed.extend(other.listed)

    def share(self) -> float:
        return self.fixed / self.findings if self.findings else 1.0


def _porter(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    done = subprocess.run([exe, *args], capture_output=True, text=True, timeout=1800)
    if done.returncode not in (0, 1):
        raise SystemExit(f"porter {args[0]} {args[1]} crashed ({done.returncode}): {done.stderr}")
    return done


def _is_finding(call: dict) -> bool:
    if call["status"] in NON_STANDARD_STATUSES:
        return True
    return call["status"] == HOST_SYNC and call["name"] not in PYTHON_CONVERSIONS


def _general(reason: str | None) -> str:
    """A reason without the cell's particulars, so that alike reasons group together."""
    text = re.sub(r"line \d+", "line N", reason or "no reason given")
    text = re.sub(r"`[^`]*`", "`...`", text)
    text = re.sub(r"'[^']*'", "'...'", text)
    return text[:150]


def _required(cell: dict) -> set[str]:
    """The requested backends the original cell exercised (the rest cannot verify it)."""
    skipped = {
        r["backend"]
        for r in cell["replays"]
        if r["role"] == "target" and r["status"] == "not_exercised"
    }
    return set(BACKENDS) - skipped


def _verified(rewrite: dict | None, cell: dict) -> bool:
    if rewrite is None or rewrite["status"] == "refused":
        return False
    if rewrite["status"] == "partial" and "not verified on" in (rewrite["reason"] or ""):
        return False
    return _required(cell) <= set(rewrite["verified_on"])


def _checked(rewrite: dict | None, cell: dict, site: dict) -> bool:
    """A site of an accepted rewrite verified at its calls (``checked_on``) on every
    requested backend the cell exercises where the cell as a whole was not verified."""
    if rewrite is None or rewrite["status"] == "refused" or not site.get("checked_on"):
        return False
    return _required(cell) <= set(rewrite["verified_on"]) | set(site["checked_on"])


def _why_not(call: dict, site: dict | None, rewrite: dict | None) -> str:
    if site is None:
        return f"{call['name']}: no rewrite proposed"
    if not site["applied"]:
        return f"{call['name']}: {_general(site['reason'] or (rewrite or {}).get('reason'))}"
    return f"{call['name']}: applied, not verified: {_general((rewrite or {}).get('reason'))}"


def _same_site(site: dict, where: tuple[int, int, str]) -> bool:
    """The site of a call: its position and its name (a method's after its type, which
    the codemod may not know: ``array.max`` for the run's ``ndarray.max``)."""
    line, col, name = where
    if (site["line"], site["col"]) != (line, col):
        return False
    return site["name"] == name or site["name"].rpartition(".")[2] == name.rpartition(".")[2]


def coverage(fix: dict) -> Figures:
    """Findings of the original run, and which of them the verified rewrites fixed."""
    out = Figures()
    cells = {c["index"]: c for c in fix["cells"]}
    seen = set()
    for cell in fix["cells"]:
        for call in cell["calls"]:
            if not _is_finding(call):
                continue
            origin = call.get("origin") or {}
            where = origin.get("index", cell["index"]) if origin else cell["index"]
            line, col = (origin["line"], origin["col"]) if origin else (call["line"], call["col"])
            key = (where, line, col, call["name"])
            if key in seen:
                continue
            seen.add(key)
            out.findings += 1
            if origin.get("file"):
                fixed, why = _file_site(fix, cell, origin["file"], key[1:], call)
                out.fixed += fixed
                if not fixed:
                    out.why[why] += 1
                continue
            home = cells.get(where, cell)
            rewrite = home.get("rewrite")
            sites = (rewrite or {}).get("sites", [])
            site = next((s for s in sites if _same_site(s, key[1:])), None)
            if site is not None and site["applied"] and _verified(rewrite, home):
                out.fixed += 1
            elif site is not None and site["applied"] and _checked(rewrite, home, site):
                out.fixed += 1
                out.at_calls += 1
            else:
                out.why[_why_not(call, site, rewrite)] += 1
    return out


def _file_site(
    fix: dict, cell: dict, file: str, where: tuple[int, int, str], call: dict
) -> tuple[bool, str]:
    """A site in one of the person's files (``where``, first seen from ``cell``): fixed
    when a verdict on the file applied it and verified it on every backend the calling
    cell runs on; else why not, in the words of the verdict that came nearest."""
    verdicts = [v for c in fix["cells"] for v in c.get("file_verdicts", []) if v["file"] == file]
    nearest = None
    for verdict in verdicts:
        site = next((s for s in verdict.get("sites", []) if _same_site(s, where)), None)
        if site is None:
            continue
        if (
            site["applied"]
            and verdict["accepted"]
            and _required(cell) <= set(verdict["verified_on"])
        ):
            return True, ""
        nearest = (site, verdict)
    if nearest is None:
        return False, f"{call['name']}: in {file}: no rewrite proposed"
    site, verdict = nearest
    why = site["reason"] if not site["applied"] else f"applied, not verified: {verdict['reason']}"
    return False, f"{call['name']}: in {file}: {_general(why or verdict['reason'])}"


def _mismatches(report: dict, label: str, out: Figures) -> None:
    for cell in report["cells"]:
        for replay in cell["replays"]:
            if replay["role"] != "target" or replay["status"] != "ok":
                continue
            for o in replay["outputs"]:
                if o["within_tolerance"] is not False:
                    continue
                out.mismatches += 1
                false = o.get("difference") in NOT_MISMATCHES or o.get("max_abs_err") == 0
                out.false_mismatches += false
                out.listed.append(
                    f"{label} cell {cell['index']} {replay['backend']} {o['name']}: "
                    f"{o.get('difference')} max_abs_err={o.get('max_abs_err')}"
                    f"{' (FALSE)' if false else ''}"
                )


def replayed_clean(fix: dict, run: dict, out: Figures) -> None:
    """Ported cells of ``fix`` whose replays in ``run`` (the ported notebook) are clean."""
    after = {c["index"]: c for c in run["cells"]}
    for cell in fix["cells"]:
        rewrite = cell.get("rewrite")
        if rewrite is None or rewrite["status"] == "refused":
            continue
        out.ported_cells += 1
        ported = after.get(cell["index"])
        if ported is None:
            continue
        replays = {r["backend"]: r for r in ported["replays"] if r["role"] == "target"}
        clean = all(
            b in replays
            and replays[b]["status"] in ("ok", "not_exercised")
            and all(o["within_tolerance"] is not False for o in replays[b]["outputs"])
            for b in BACKENDS
        )
        out.clean_cells += clean


def measure(notebook: Path, tmp: Path) -> Figures:
    ported, fix_json, run_json = (
        tmp / f"{notebook.stem}{s}" for s in (".ported.ipynb", ".fix.json", ".run.json")
    )
    specs = ",".join(BACKENDS)
    _porter("fix", str(notebook), "-o", str(ported), "-b", specs, "--report", str(fix_json))
    _porter("run", str(ported), "-b", specs, "-o", str(run_json), "--format", "json")
    fix, run = (json.loads(p.read_text()) for p in (fix_json, run_json))
    out = coverage(fix)
    replayed_clean(fix, run, out)
    _mismatches(fix, f"{notebook.stem} (fix)", out)
    _mismatches(run, f"{notebook.stem} (ported)", out)
    return out


def _line(name: str, f: Figures) -> str:
    return (
        f"{name:<34} findings {f.findings:>4}  fixed+verified {f.fixed:>4} "
        f"({f.share():6.1%}, at calls {f.at_calls})  clean cells {f.clean_cells:>3}/{f.ported_cells:<3} "
        f"mismatches {f.mismatches} (false {f.false_mismatches})"
    )


def notebooks(args: list[str]) -> list[Path]:
    if args:
        return [Path(a).resolve() for a in args]
    return sorted((ROOT / "notebooks").glob("*.ipynb")) + sorted(
        (ROOT / "notebooks" / "fixtures").glob("*.ipynb")
    )


def main(args: list[str]) -> None:
    if args[:1] == ["--corpus"] or "--corpus" in args:
        from _corpus import main as corpus_main

        corpus_main(args)
        return
    total = Figures()
    keep = None
    if args[:1] == ["--keep"] and len(args) > 1:
        keep, args = Path(args[1]), args[2:]
        keep.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-fix-coverage-") as tmp:
        for notebook in notebooks(args):
            figures = measure(notebook, keep or Path(tmp))
            print(_line(notebook.relative_to(ROOT).as_posix(), figures), flush=True)
            total.add(figures)
    print(_line("TOTAL", total))
    if total.listed:
        print("mismatches:")
        for line in total.listed:
            print(f"  {line}")
    print("not fixed, grouped:")
    for why, count in total.why.most_common():
        print(f"  {count:>4}  {why}")
    ok = total.share() >= TARGET and total.false_mismatches == 0
    print(
        f"share {total.share():.1%} (target >= {TARGET:.0%}), false mismatches "
        f"{total.false_mismatches} (target 0): {'ok' if ok else 'BELOW TARGET'}"
    )


if __name__ == "__main__":
    main(sys.argv[1:])

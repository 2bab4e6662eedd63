"""``porter fix``'s last check: the ported notebook run top to bottom in a fresh kernel,
every code cell's outputs and errors compared with the original run (issue 28 item 3).

Replays verify each rewrite on the cell's recorded inputs and outputs; they cannot see
what a cell prints, nor a name the ported notebook no longer binds where a later cell
reads it. So once the notebook is settled, porter runs the ported notebook in a fresh
kernel (the headless runner's, every cell under ``%%port --quiet --no-replay``, the
person's files as ported in place of theirs) and compares, cell by cell, what the cell
showed with what it showed in the original run (porter's own run of the notebook under
``porter fix``):

- *printed*: its standard output and the ``text/plain`` form of each result and display
  (porter's own displays left out), normalised for what differs from run to run by
  nature (`porter_ext.fix.shown`);
- *error*: the type and message of what it raised, or none.

A cell that reads porter's own view of the notebook (``_port``, a ``%port`` line) is not
compared: what porter finds is what the port changes. At the first difference the
original notebook runs again, once: a cell that shows something else there too is the
notebook's own (a random draw, the time), not compared.

A difference is traced to the rewrites it can come from (`traced`): the cell's own
rewrite, the rewritten definitions of other cells whose calls the original run recorded
in it, the ported files it called into; where none of those was applied, every rewrite
before the cell. Those are reverted (`reverted`: the rewrite of a cell refused, a
function or file given a refusing verdict that `porter_ext.fix.settle` and
`porter_ext.fix.files.settle_files` apply) and the notebook runs again, until the fresh
run shows what the original showed. A difference nothing rewritten can explain is the
notebook's own: printed text is noted and let be (a notebook that prints a random draw),
an error refuses the notebook (`FreshRunRefused`).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from porter_ext.fix.deferred import def_spans, hunks, patched
from porter_ext.fix.shown import Difference, Shown, differences, quoted, shown
from porter_ext.model.entries import DefinitionVerdict, FileVerdict, RewriteEntry
from porter_ext.model.plan import build_plan

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from porter_ext.fix.files import FileOutcome
    from porter_ext.fix.notebook import FixOutcome
    from porter_ext.model.cells import CellEntry
    from porter_ext.model.report import Report

__all__ = ["FreshCheck", "FreshRunRefused", "compared", "fresh_check", "fresh_sources", "traced"]

#: the cell magic each cell of the fresh run runs under: recorded as the original was,
#: replayed nowhere
FRESH_MAGIC = "%%port --quiet --no-replay"
#: what the cells of the original run may have ended with that is no output of theirs
_NOT_COMPARED = frozenset({"TimeoutError", "DeadKernelError", "NotRun"})
_APPLIED = ("verified", "partial")
#: where a verdict of the fresh run was given (a call site's verdict says its line)
_WHERE = "fresh run of the ported notebook"
#: porter's own view of the notebook, which a cell may print (``_port.calls``, ``%port``)
_READS_PORTER = re.compile(r"(?<![\w.])_port\b|^\s*%port\b", re.M)


def fresh_sources(nb: NotebookNode) -> NotebookNode:
    """A copy of the ported notebook as the fresh run runs it, without outputs: a
    ``%%port`` cell keeps its options (``--strict`` raises as it did) but ``--fix`` and
    gains ``--no-replay``; any other code cell runs under `FRESH_MAGIC`."""
    import copy

    fresh = copy.deepcopy(nb)
    for cell in fresh.cells:
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        if not cell.source.strip():
            continue
        text = cell.source.lstrip()
        if text.startswith("%%port"):
            first, _, body = text.partition("\n")
            words = [w for w in first.split() if w != "--fix"]
            cell.source = " ".join([*words, "--no-replay"]) + "\n" + body
        else:
            cell.source = f"{FRESH_MAGIC}\n{cell.source}"
    return fresh


def compared(work: NotebookNode, report: Report) -> dict[int, Shown]:
    """What each code cell of the original run (``work``: the notebook as ``porter fix``
    ran it, with its outputs) showed, by notebook index; cells it stopped (a time limit,
    a kernel that died) or never ran, and cells that read porter's own view of the
    notebook (``_port``, ``%port``: what porter finds is what the port changes), are not
    compared."""
    stopped = {
        c.index for c in report.cells if c.error is not None and c.error.type in _NOT_COMPARED
    }
    return {
        index: shown(cell.get("outputs", []))
        for index, cell in enumerate(work.cells)
        if cell.cell_type == "code"
        and cell.source.strip()
        and index not in stopped
        and not _READS_PORTER.search(cell.source)
    }


# --- what a difference traces to, and reverting it ---------------------------------------


@dataclass(frozen=True)
class Revert:
    """One rewrite to take back: the whole rewrite of ``cell`` (``name`` and ``lines``
    None), one function of it, the hunks of it that start at ``lines`` (`hunks`), or the
    ported ``file``."""

    cell: int | None = None
    name: str | None = None
    file: str | None = None
    lines: tuple[int, ...] | None = None

    def words(self) -> str:
        if self.file is not None:
            return f"rewrite of {self.file}"
        if self.name is not None:
            return f"rewrite of {self.name} (cell {self.cell})"
        if self.lines is not None:
            at = ", ".join(str(n) for n in self.lines)
            return f"rewrite of cell {self.cell} at line{'s' if len(self.lines) > 1 else ''} {at}"
        return f"rewrite of cell {self.cell}"

    @property
    def whole_cell(self) -> bool:
        return self.cell is not None and self.name is None and self.lines is None


def _applied_in(entry: CellEntry, span: tuple[int, int] | None = None) -> bool:
    rewrite = entry.rewrite
    if rewrite is None or rewrite.status not in _APPLIED:
        return False
    return any(s.applied and (span is None or span[0] <= s.line <= span[1]) for s in rewrite.sites)


def traced(index: int, cells: Iterable[CellEntry], files: Iterable[FileOutcome]) -> list[Revert]:
    """The applied rewrites a difference in cell ``index`` can come from (``cells``: the
    settled entries): its own, the functions of other cells and the ported files whose
    calls the original run recorded in it; where none, every applied rewrite before it
    (a name or a value an earlier rewrite changed)."""
    by_index = {c.index: c for c in cells if c.index is not None}
    accepted = {f.file for f in files if f.accepted}
    found: dict[Revert, None] = {}
    own = by_index.get(index)
    if own is not None and _applied_in(own):
        found[Revert(index)] = None
    for call in own.calls if own is not None else []:
        origin = call.origin
        if origin is None:
            continue
        if origin.file is not None:
            if origin.file in accepted:
                found[Revert(file=origin.file)] = None
            continue
        writer = by_index.get(origin.index)
        if writer is None or origin.index == index or not _applied_in(writer):
            continue
        spans = def_spans(writer.source)
        name = next((n for n, (a, b) in spans.items() if a <= origin.line <= b), None)
        if name is None:  # a method of a class, or code settle cannot take apart
            found[Revert(origin.index)] = None
        elif _applied_in(writer, spans[name]):
            found[Revert(origin.index, name)] = None
    if found:
        return list(found)
    return _before(index, by_index, accepted)


def _before(index: int, by_index: Mapping[int, CellEntry], accepted: set[str]) -> list[Revert]:
    """Every applied rewrite before cell ``index``: of the cells, then the files."""
    earlier = [Revert(c.index) for i, c in sorted(by_index.items()) if i < index and _applied_in(c)]
    return earlier + [Revert(file=f) for f in sorted(accepted)]


def _widened(
    index: int, reverts: list[Revert], cells: Iterable[CellEntry], files: Iterable[FileOutcome]
) -> list[Revert]:
    """``reverts`` (what the difference in cell ``index`` traced to, which alone does not
    make it go) with every other applied rewrite before the cell: a loss a training
    cell's rewrite moved prints differently in the later cell that reads it, whose own
    rewrite is not the cause."""
    by_index = {c.index: c for c in cells if c.index is not None}
    accepted = {f.file for f in files if f.accepted}
    return [r for r in _before(index, by_index, accepted) if r not in reverts] + reverts


def reverted(report: Report, reverts: Iterable[Revert], difference: Difference) -> Report:
    """The (unsettled) report with ``reverts`` taken back for ``difference``: a cell's
    rewrite refused, a function or file given a refusing verdict in the differing cell
    (settled as any refused call is), and the differing cell noted."""
    why = f"reverted: in a fresh run of the ported notebook, {difference.line()}"
    said = difference.line().partition(": ")[2]  # a call site's verdict names the cell
    cells = list(report.cells)
    at = {c.index: n for n, c in enumerate(cells) if c.index is not None}
    verdicts: list[DefinitionVerdict] = []
    file_verdicts: list[FileVerdict] = []
    lines: dict[int, set[int]] = {}
    for revert in reverts:
        if revert.file is not None:
            file_verdicts.append(FileVerdict(revert.file, "", "", False, reason=why, where=_WHERE))
        elif revert.name is not None:
            verdicts.append(DefinitionVerdict(revert.cell, revert.name, False, _WHERE, reason=said))
        elif revert.lines is not None:
            lines.setdefault(revert.cell, set()).update(revert.lines)
        elif revert.cell in at:
            entry = cells[at[revert.cell]]
            cells[at[revert.cell]] = dataclasses.replace(entry, rewrite=_refused(entry, why))
    for index, starts in lines.items():
        if index in at:
            entry = cells[at[index]]
            cells[at[index]] = dataclasses.replace(entry, rewrite=_narrowed(entry, starts, why))
    n = at[difference.index]
    entry = cells[n]
    undone = ", ".join(r.words() for r in reverts)
    cells[n] = dataclasses.replace(
        entry,
        notes=[*entry.notes, f"porter fix: fresh run: {difference.line()}: {undone} reverted"],
        definition_verdicts=[*entry.definition_verdicts, *verdicts],
        file_verdicts=[*entry.file_verdicts, *file_verdicts],
    )
    return dataclasses.replace(report, cells=cells, plan=build_plan(cells))


def _hunks_of(entry: CellEntry) -> tuple[str, dict[int, tuple[int, int]]]:
    """The cell's rewrite as a diff without context, a hunk of lines rewritten one for
    one split into a hunk per line (a loss's line and the line that prints it), and its
    hunks (`hunks`)."""
    from porter_ext.fix.rewrite import CellRewrite

    diff = CellRewrite(entry.source, entry.rewrite.source).diff(context=0)
    split = _line_by_line(diff)
    return split, hunks(split)


_HEADER = re.compile(r"^@@ -(\d+),(\d+) \+(\d+),(\d+) @@")


def _line_by_line(diff: str) -> str:
    """``diff`` (without context) with each hunk that replaces n lines by n lines written
    as n hunks of one line each; other hunks as they are."""
    lines = diff.splitlines(keepends=True)
    out: list[str] = []
    n = 0
    while n < len(lines):
        header = _HEADER.match(lines[n])
        count = int(header[2]) if header else 0
        body = lines[n + 1 : n + 1 + 2 * count]
        if (
            header is None
            or count < 2
            or count != int(header[4])
            or len(body) != 2 * count
            or not all(line.startswith("-") for line in body[:count])
            or not all(line.startswith("+") for line in body[count:])
        ):
            out.append(lines[n])
            n += 1
            continue
        old, new = int(header[1]), int(header[3])
        for i in range(count):
            out += [f"@@ -{old + i},1 +{new + i},1 @@\n", body[i], body[count + i]]
        n += 1 + 2 * count
    return "".join(out)


def _site_hunks(entry: CellEntry) -> list[int]:
    """The hunks of an applied rewrite (by first line) that hold an applied site: those a
    difference can be narrowed to (an inserted ``xp = ...`` line holds none)."""
    if not _applied_in(entry):
        return []
    _, found = _hunks_of(entry)
    applied = [s.line for s in entry.rewrite.sites if s.applied]
    return [
        start
        for start, (first, last) in found.items()
        if any(first <= line <= last for line in applied)
    ]


def _narrowed(entry: CellEntry, starts: set[int], why: str) -> RewriteEntry:
    """The rewrite of ``entry`` with the hunks that start at ``starts`` taken back (their
    lines as written, their sites left out with ``why``): verified on the backend the
    cell ran on by the fresh run that showed it, and on no other as a whole (the
    narrowed cell was not replayed; each site keeps what its own check said)."""
    from porter_ext.fix.rewrite import CellRewrite

    rewrite = entry.rewrite
    diff, found = _hunks_of(entry)
    spans = [found[s] for s in starts if s in found]
    sites = [
        dataclasses.replace(s, applied=False, reason=why)
        if s.applied and any(a <= s.line <= b for a, b in spans)
        else s
        for s in rewrite.sites
    ]
    if not any(s.applied for s in sites):
        return _refused(entry, why)
    source = patched(entry.source, diff, lambda start: start not in starts)
    original = {r.backend for r in entry.replays if r.role == "control"}
    on = [spec for spec in rewrite.verified_on if spec in original]
    others = [spec for spec in rewrite.verified_on if spec not in original]
    taken = sum(1 for s, t in zip(rewrite.sites, sites, strict=True) if s.applied and not t.applied)
    reason = f"{taken} site(s) {why}; the rest ran as the original in that run" + (
        f"; not verified on {', '.join(others)} as narrowed" if others else ""
    )
    if rewrite.reason:
        reason = f"{reason}; {rewrite.reason}"
    return dataclasses.replace(
        rewrite,
        source=source,
        status="partial",
        verified_on=on,
        sites=sites,
        reason=reason,
        diff=CellRewrite(entry.source, source).diff(),
    )


def _refused(entry: CellEntry, why: str) -> RewriteEntry:
    sites = []
    for site in entry.rewrite.sites if entry.rewrite is not None else []:
        sites.append(dataclasses.replace(site, applied=False, reason=site.reason or why))
    return RewriteEntry(entry.source, "refused", [], sites, why, "")


# --- the check ---------------------------------------------------------------------------


class FreshRunRefused(Exception):
    """The ported notebook raises in a fresh run where the original ran (or raises
    something else) with nothing rewritten that could explain it: nothing is written."""


#: runs a ported notebook in a fresh kernel (the person's files as ported: real path →
#: source) and says what each code cell showed, by notebook index
Runner = Callable[["NotebookNode", dict[str, str]], dict[int, Shown]]


@dataclass
class FreshCheck:
    """The check's course: its runs, the cells compared, and one line per difference
    (what it was, what was reverted, or why it was let be)."""

    compared: int = 0
    runs: int = 0
    reverted: int = 0
    lines: list[str] = field(default_factory=list)
    #: every rewrite was reverted: the ported notebook is the original, not run again
    nothing_left: bool = False
    #: the original notebook run again in a fresh kernel (once a difference asks whether
    #: the cell shows the same twice), by notebook index
    again: dict[int, Shown] | None = None
    #: the original notebook run more times, where no fewer rewrites were found to make a
    #: difference go (`_unsteady`)
    reruns: list[dict[int, Shown]] = field(default_factory=list)

    def summary(self) -> str:
        """One line for the end of ``porter fix``'s output."""
        if not self.runs:
            return "fresh run: skipped (nothing was rewritten: the ported notebook is the original)"
        what = "every cell printed and raised what it did in the original run"
        if self.nothing_left:
            what = "nothing rewritten is left, so the ported notebook is the original"
        if self.reverted:
            what = f"{self.reverted} difference(s) traced and reverted; {what}"
        return (
            f"fresh run of the ported notebook: {self.compared} code cell(s) compared with "
            f"the original run (printed text, results, errors) in {self.runs} run(s): {what}"
        )


def fresh_check(
    nb: NotebookNode,
    report: Report,
    origin: str,
    original: Mapping[int, Shown],
    run: Runner,
    real_path: Callable[[str], str],
) -> tuple[NotebookNode, FixOutcome, Report, list[FileOutcome], FreshCheck]:
    """Settle ``report`` into the ported notebook (`ported_notebook`), run it fresh,
    revert what a difference traces to and run again, until the fresh run shows what the
    ``original`` run showed; returns the ported notebook, what was applied, the settled
    report, the files' outcomes and the check's course. ``real_path``: a person's file
    (as the report names it) → its real path. Raises `FreshRunRefused`."""
    from porter_ext.fix.files import settle_files
    from porter_ext.fix.notebook import ported_notebook

    course = FreshCheck(compared=len(original))
    excused: set[int] = set()
    last: tuple | None = None
    handled: Difference | None = None  # the difference the last revert was for
    while True:
        ported, outcome, settled = ported_notebook(nb, report, origin)
        files = settle_files(settled.cells)
        overlay = {real_path(v.file): v.source for v in _accepted_sources(files, settled.cells)}
        if not overlay and not any(_applied_in(c) for c in settled.cells):
            course.nothing_left = course.runs > 0
            return ported, outcome, settled, files, course
        now = ([c.source for c in ported.cells], sorted(overlay))
        if now == last and handled is not None:  # a revert that changed nothing: all back
            everything = [Revert(c.index) for c in settled.cells if _applied_in(c)]
            everything += [Revert(file=f.file) for f in files if f.accepted]
            report = reverted(report, everything, handled)
            course.lines.append(f"{handled.line()}: every rewrite reverted")
            continue
        last = now
        fresh = run(fresh_sources(ported), overlay)
        course.runs += 1
        for difference in differences(original, fresh):
            if difference.index in excused or _the_notebooks_own(difference, course, nb, run):
                excused.add(difference.index)
                continue
            reverts = traced(difference.index, settled.cells, files)
            if not reverts:  # reproducible, and nothing rewritten up to it: never expected
                _refuse(difference)
            trial = Trial(nb, origin, run, real_path, original)
            reverts, proven = _blamed(reverts, difference, report, trial, course)
            if not proven:
                proven = _goes(reverts, difference, report, trial, course)
            if not proven:  # what it traced to is not (all of) it: those before the cell too
                wider = _widened(difference.index, reverts, settled.cells, files)
                found, proven = (
                    _blamed(wider, difference, report, trial, course)
                    if len(wider) > len(reverts)
                    else (wider, False)
                )
                # none found alone (a loss two cells' rewrites move together): what it
                # traced to goes first, and the next run traces what is left
                reverts = found if proven else reverts
            if not proven and len(reverts) > 1 and _unsteady(difference, course, nb, run):
                excused.add(difference.index)
                continue
            course.reverted += 1
            undone = ", ".join(r.words() for r in reverts)
            course.lines.append(f"{difference.line()}: {undone} reverted")
            report, handled = reverted(report, reverts, difference), difference
            break
        else:
            return ported, outcome, settled, files, course


#: the fresh runs of the notebook (each a whole run) that finding which rewrites a
#: difference comes from may take, beyond the run that showed it
MAX_BLAME_RUNS = 6


@dataclass(frozen=True)
class Trial:
    """What a fresh run of a report's port needs (`fresh_check`'s arguments)."""

    nb: NotebookNode
    origin: str
    run: Runner
    real_path: Callable[[str], str]
    original: Mapping[int, Shown]


def _to_blame(
    reverts: list[Revert],
    difference: Difference,
    report: Report,
    trial: Trial,
    course: FreshCheck,
) -> list[Revert] | None:
    """The fewest rewrites of ``reverts`` whose revert makes ``difference`` go, found by
    halving (the later half tried first, at most `MAX_BLAME_RUNS` fresh runs), or None
    where no half alone does: a training loop's printed loss that one rewrite moves by a
    rounding reverts that rewrite, not every rewrite before the cell."""
    found, runs = list(reverts), 0
    while len(found) > 1 and runs < MAX_BLAME_RUNS:
        middle = len(found) // 2
        later, earlier = found[middle:], found[:middle]
        runs += 1
        if _goes(later, difference, report, trial, course):
            found = later
            continue
        if runs >= MAX_BLAME_RUNS:
            break
        runs += 1
        if not _goes(earlier, difference, report, trial, course):
            break  # it needs rewrites of both halves
        found = earlier
    return found if len(found) < len(reverts) else None


def _blamed(
    reverts: list[Revert],
    difference: Difference,
    report: Report,
    trial: Trial,
    course: FreshCheck,
) -> tuple[list[Revert], bool]:
    """The fewest of ``reverts`` found to make ``difference`` go (`_to_blame`), one
    cell's rewrite narrowed to its hunks (`_to_hunks`); and whether a run showed that
    they make it go (False: none was narrowed, and no run tried them alone)."""
    found = _to_blame(reverts, difference, report, trial, course) if len(reverts) > 1 else None
    reverts = found or reverts
    narrowed = _to_hunks(reverts, difference, report, trial, course)
    return narrowed, found is not None or narrowed is not reverts


def _to_hunks(
    reverts: list[Revert],
    difference: Difference,
    report: Report,
    trial: Trial,
    course: FreshCheck,
) -> list[Revert]:
    """One cell's whole rewrite to blame, narrowed by halving to the hunks of it whose
    revert makes ``difference`` go (`_to_blame` over its hunks): a training loop's
    ``F.cross_entropy`` written as its formula moves the printed loss by a rounding, and
    its exact ``xp.mean``/``xp.reshape`` lines stay ported. As it was where no part alone
    does."""
    if len(reverts) != 1 or not reverts[0].whole_cell:
        return reverts
    index = reverts[0].cell
    entry = next((c for c in report.cells if c.index == index), None)
    starts = _site_hunks(entry) if entry is not None else []
    if len(starts) < 2:
        return reverts
    parts = [Revert(index, lines=(start,)) for start in starts]
    found = _to_blame(parts, difference, report, trial, course)
    if found is None:
        return reverts
    return [Revert(index, lines=tuple(sorted(n for part in found for n in part.lines or ())))]


def _goes(
    reverts: list[Revert], difference: Difference, report: Report, trial: Trial, course: FreshCheck
) -> bool:
    """Whether the fresh run with ``reverts`` taken back shows what the original showed
    up to the cell of ``difference``."""
    from porter_ext.fix.files import settle_files
    from porter_ext.fix.notebook import ported_notebook

    ported, _, settled = ported_notebook(
        trial.nb, reverted(report, reverts, difference), trial.origin
    )
    files = settle_files(settled.cells)
    overlay = {trial.real_path(v.file): v.source for v in _accepted_sources(files, settled.cells)}
    fresh = trial.run(fresh_sources(ported), overlay)
    course.runs += 1
    return not any(d.index <= difference.index for d in differences(trial.original, fresh))


def _the_notebooks_own(
    difference: Difference, course: FreshCheck, nb: NotebookNode, run: Runner
) -> bool:
    """Whether the original notebook, run again in a fresh kernel (once), shows something
    else in that cell too: a cell that prints a random draw or the time is not the
    port's to answer for (noted, not compared), one that raises then refuses the
    notebook (its port cannot be checked)."""
    if course.again is None:
        course.again = run(fresh_sources(nb), {})
        course.runs += 1
    index = difference.index
    again = course.again.get(index, Shown("", "NotRun: not run"))
    if again == difference.original:
        return False
    own = Difference(index, difference.original, again, "when the original notebook ran again")
    if own.raised:
        _refuse(own)
    course.lines.append(
        f"{difference.line()}; the original notebook, run again, printed "
        f"{quoted(again.printed)} there: the notebook's own (a draw, the time), not compared"
    )
    return True


#: the more runs of the original notebook that may show a cell unsteady (a last digit
#: that threads summing in another order move) before several rewrites are reverted for it
UNSTEADY_RUNS = 2


def _unsteady(difference: Difference, course: FreshCheck, nb: NotebookNode, run: Runner) -> bool:
    """Whether the original notebook, run again up to `UNSTEADY_RUNS` more times (the runs
    kept for the next difference), shows something else in the cell of ``difference``
    than the original run did: asked where no fewer rewrites were found to make the
    difference go (makemore part 4 prints the largest difference between two gradients,
    whose last digits vary from run to run; one run again showed the same, and 12 cells'
    rewrites were reverted for it)."""
    index = difference.index
    for n in range(UNSTEADY_RUNS):
        if n == len(course.reruns):
            course.reruns.append(run(fresh_sources(nb), {}))
            course.runs += 1
        again = course.reruns[n].get(index, Shown("", "NotRun: not run"))
        if again != difference.original and again.error == difference.original.error:
            course.lines.append(
                f"{difference.line()}; the original notebook, run again, printed "
                f"{quoted(again.printed)} there: the notebook's own (it varies from run to "
                "run), not compared"
            )
            return True
    return False


def _refuse(difference: Difference) -> None:
    raise FreshRunRefused(
        f"in a fresh run, {difference.line()}: the notebook does not run the same twice, so "
        "porter cannot check its port; nothing was written"
    )


def _accepted_sources(files: Iterable[FileOutcome], cells: Iterable[CellEntry]):
    """The accepted files' verdicts (their ported source)."""
    accepted = {f.file for f in files if f.accepted}
    seen: dict[str, FileVerdict] = {}
    for cell in cells:
        for verdict in cell.file_verdicts:
            if verdict.accepted and verdict.file in accepted:
                seen.setdefault(verdict.file, verdict)
    return list(seen.values())

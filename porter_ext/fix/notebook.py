"""``porter fix``: a whole notebook's cells under ``%%port --fix``, and the ported notebook.

The notebook runs headless (as under ``porter run``) with every code cell a ``%%port
--fix`` cell. In that run a verified rewrite's definitions are put in effect in the
kernel (`porter_ext.fix.verify`), so each later cell is verified against the earlier
cells as ported. The ported notebook is the original with each code cell whose rewrite
verified (in whole, or narrowed to the sites that verify) replaced by the rewrite; every
other cell, output-free, as it was.
"""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbformat import NotebookNode

    from porter_ext.model.report import Report

__all__ = ["FixOutcome", "fix_sources", "ported_notebook"]

#: the notebook metadata key of a notebook porter ported (what it may overwrite)
PORTED_KEY = "porter"
APPLIED = ("verified", "partial")


@dataclass
class FixOutcome:
    """What became of each code cell: applied (with its status) or not, and why."""

    applied: list[tuple[int, str, str]] = field(default_factory=list)  # index, status, note
    refused: list[tuple[int, str]] = field(default_factory=list)  # index, reason
    #: code cells with no rewrite to apply (nothing outside the standard, or not run)
    unchanged: int = 0

    def lines(self) -> list[str]:
        out = [
            f"cell {i}: {status}{f' ({note})' if note else ''}" for i, status, note in self.applied
        ]
        out += [f"cell {i}: not rewritten: {reason}" for i, reason in self.refused]
        return out


def _with_fix(source: str, timeout: float | None) -> str:
    """A code cell as it runs under ``porter fix``: a ``%%port`` cell keeps its options
    and gains ``--fix``; any other becomes ``%%port --quiet --fix``."""
    text = source.lstrip()
    if text.startswith("%%port"):
        first, _, body = text.partition("\n")
        if "--fix" not in first.split():
            first += " --fix"
        return f"{first}\n{body}"
    limit = f" --timeout {timeout:g}" if timeout is not None else ""
    return f"%%port --quiet --fix{limit}\n{source}"


def fix_sources(nb: NotebookNode, timeout: float | None = None) -> NotebookNode:
    """A copy of ``nb`` whose code cells run under ``%%port --fix``."""
    work = copy.deepcopy(nb)
    for cell in work.cells:
        if cell.cell_type == "code" and cell.source.strip():
            cell.source = _with_fix(cell.source, timeout)
    return work


def settled_report(report: Report) -> Report:
    """``report`` with each deferred rewrite (definitions verified where a later cell
    calls them, `porter_ext.fix.deferred`) given its verdict, and its plan made
    again from them."""
    import dataclasses

    from porter_ext.fix.settle import settle
    from porter_ext.model.plan import build_plan

    settled = settle(report.cells)
    if settled == report.cells:
        return report
    return dataclasses.replace(report, cells=list(settled), plan=build_plan(settled))


def ported_notebook(
    nb: NotebookNode, report: Report, origin: str
) -> tuple[NotebookNode, FixOutcome, Report]:
    """The original notebook with the rewrites that verified applied, what happened, and
    the report with its deferred rewrites settled (`settled_report`)."""
    report = settled_report(report)
    ported = copy.deepcopy(nb)
    rewrites = {
        cell.index: cell.rewrite
        for cell in report.cells
        if cell.index is not None and cell.rewrite is not None
    }
    outcome = FixOutcome()
    put: set[int] = set()  # the cells whose rewrite went into the ported notebook
    for index, cell in enumerate(ported.cells):
        if cell.cell_type != "code":
            continue
        cell.outputs, cell.execution_count = [], None
        rewrite = rewrites.get(index)
        if rewrite is None:
            outcome.unchanged += 1
            continue
        if rewrite.status not in APPLIED:
            outcome.refused.append((index, rewrite.reason or rewrite.status))
            continue
        text = cell.source.lstrip()
        if text.startswith("%%port"):
            cell.source = text.partition("\n")[0] + "\n" + rewrite.source
        else:
            cell.source = rewrite.source
        cell.source = cell.source.rstrip("\n")
        applied = sum(1 for s in rewrite.sites if s.applied)
        note = f"{applied} site(s), verified on {', '.join(rewrite.verified_on)}"
        if rewrite.reason:
            note += f"; {rewrite.reason}"
        outcome.applied.append((index, rewrite.status, note))
        put.add(index)
    ported.metadata[PORTED_KEY] = {"ported_from": origin}
    return ported, outcome, _marked_applied(report, put)


def _marked_applied(report: Report, put: set[int]) -> Report:
    """``report`` with the rewrites of the cells at ``put`` marked applied (the plan then
    says their fixes are applied, not offered)."""
    import dataclasses

    from porter_ext.model.plan import build_plan

    if not put:
        return report
    cells = [
        dataclasses.replace(c, rewrite=dataclasses.replace(c.rewrite, applied=True))
        if c.index in put and c.rewrite is not None
        else c
        for c in report.cells
    ]
    return dataclasses.replace(report, cells=cells, plan=build_plan(cells))


def is_ported_notebook(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` is a notebook ``porter fix`` wrote (so it may be replaced)."""
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            return PORTED_KEY in json.load(handle).get("metadata", {})
    except (OSError, ValueError, AttributeError):
        return False

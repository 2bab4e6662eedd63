"""Where a view shows each call: in the cell where its code is written.

A call made by a function an earlier cell defined is recorded by the cell that ran it,
with ``origin`` saying where the code is written. A report holds both cells, so it
shows the finding under the writing cell, at its line there, naming the cell that
called it; one cell's own output (the widget, ``text/plain``) cannot, so it names the
writing cell and the line there instead. Both name cells as `cell_label` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from porter_ext.model.calls import CallOrigin, CallRecord
from porter_ext.model.cells import CellEntry

__all__ = ["FileFinding", "PlacedCall", "calls_by_cell", "calls_by_file"]


@dataclass(frozen=True)
class PlacedCall:
    """A call at the position a view shows it, and what to say of a call made elsewhere."""

    call: CallRecord
    line: int
    col: int
    #: the cell whose run made the call, when it is shown under the cell that wrote it
    called_from: str | None = None
    #: the cell that wrote it, when the view does not hold that cell
    written_in: str | None = None
    #: the calling cell's line, as its editor counts it
    calling_line: int | None = None

    @property
    def note(self) -> str:
        """``"called from cell 6 · In [9], line 2"`` or ``"in code from In [2]"``; "" for a call
        written where it is shown."""
        if self.called_from is not None:
            return f"called from {self.called_from}, line {self.calling_line}"
        if self.written_in is not None:
            return f"in code from {self.written_in}"
        return ""


def _writer(cells: Sequence[CellEntry], calling: int, origin: CallOrigin) -> int | None:
    """The position in ``cells`` of the cell that wrote the code: the same notebook
    position (and execution count, where several entries share one), else the same
    execution count; the last such cell before the calling one, if any."""

    def rank(cell: CellEntry) -> int:
        same_count = (
            origin.execution_count is not None and cell.execution_count == origin.execution_count
        )
        if origin.index is not None:
            return 0 if cell.index != origin.index else 1 + same_count
        return int(same_count)

    ranks = [rank(cell) for cell in cells]
    top = max(ranks, default=0)
    if top == 0:
        return None
    found = [position for position, r in enumerate(ranks) if r == top]
    before = [position for position in found if position < calling]
    return before[-1] if before else found[0]


def calls_by_cell(cells: Sequence[CellEntry]) -> list[list[PlacedCall]]:
    """For each cell of a report, the calls written in it (its own, and those that
    code written in it made when a later cell called it), in source order."""
    placed: list[list[PlacedCall]] = [[] for _ in cells]
    writers: dict[tuple, int | None] = {}
    for position, cell in enumerate(cells):
        for call in cell.calls:
            origin = call.origin
            if origin is None:
                placed[position].append(PlacedCall(call, cell.line(call.line), call.col))
                continue
            key = (origin.index, origin.execution_count, position)
            if key not in writers:
                writers[key] = _writer(cells, position, origin)
            writer = writers[key]
            if writer is None:
                placed[position].append(
                    PlacedCall(call, origin.editor_line, origin.col, written_in=origin.label)
                )
            else:
                placed[writer].append(
                    PlacedCall(
                        call,
                        origin.editor_line,
                        origin.col,
                        called_from=cell.label,
                        calling_line=cell.line(call.line),
                    )
                )
    for calls in placed:
        calls.sort(key=lambda p: (p.line, p.col))
    return placed


@dataclass
class FileFinding:
    """One call site in a Python file of the person's, once however many cells reached it:
    the call (its count summed over them) and the cells whose runs made it."""

    call: CallRecord
    callers: list[str]

    @property
    def line(self) -> int:
        origin = self.call.origin
        return origin.editor_line if origin is not None else self.call.line


def calls_by_file(cells: Sequence[CellEntry]) -> dict[str, list[FileFinding]]:
    """The findings written in the person's files (``origin.file``), file by file in name
    order, one per site and status with the cells that called it, in line order."""
    import dataclasses

    sites: dict[tuple, FileFinding] = {}
    for cell in cells:
        for call in cell.calls:
            origin = call.origin
            if origin is None or origin.file is None or not call.flagged:
                continue
            key = (origin.file, origin.line, origin.col, call.name, call.status)
            found = sites.get(key)
            if found is None:
                sites[key] = FileFinding(dataclasses.replace(call), [cell.label])
                continue
            found.call.count += call.count
            if cell.label not in found.callers:
                found.callers.append(cell.label)
    files: dict[str, list[FileFinding]] = {}
    for key in sorted(sites, key=lambda k: (k[0], k[1], k[2], k[3])):
        files.setdefault(key[0], []).append(sites[key])
    return files

"""Where the session's recorded cells are: the recorder labels a cell's calls with its
own number for the cell (its execution count, or a running number without IPython),
and a call made by code another cell wrote carries that label. The session remembers,
per label, the cell's notebook position (`porter run`, or the front end's cell order in
a live kernel), execution count and the front end's cell id (JupyterLab sends ``cellId``
with each execute request), so that the call's `CallOrigin` names the cell the way every
view does: where the front end's order places that id now (the cell may have moved since
it ran), else the position it had.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from porter_ext.model.calls import CallRecord

if TYPE_CHECKING:
    from IPython.core.interactiveshell import ExecutionResult, InteractiveShell

    from porter_ext.session.cell_order import CellOrder

#: labels remembered (a function keeps the label of the cell that defined it)
KEPT_PLACES = 4096


@dataclasses.dataclass(frozen=True)
class CellPlace:
    """One recorded cell: its notebook position, execution count and front-end id."""

    index: int | None
    execution_count: int | None
    cell_id: str | None = None
    #: the editor line of the recorded source's first line (`CellEntry.first_line`)
    first_line: int = 1


def front_end_cell_id(shell: InteractiveShell) -> str | None:
    """The id the front end gave the running cell (JupyterLab and Notebook 7 put
    ``cellId`` in the execute request's metadata), or None."""
    header = getattr(shell, "parent_header", None)
    metadata = header.get("metadata") if isinstance(header, dict) else None
    cell_id = metadata.get("cellId") if isinstance(metadata, dict) else None
    return cell_id if isinstance(cell_id, str) else None


class CellPlaces:
    """Recorder label → `CellPlace`, and the origins of calls resolved against it."""

    def __init__(self) -> None:
        self._places: OrderedDict[int | str, CellPlace] = OrderedDict()

    def note(self, label: int | str | None, place: CellPlace) -> None:
        if label is None:
            return
        self._places[label] = place
        self._places.move_to_end(label)
        while len(self._places) > KEPT_PLACES:
            self._places.popitem(last=False)

    def note_ran(self, result: ExecutionResult) -> None:
        """After every cell (IPython's ``post_run_cell``): a cell porter did not record
        is remembered by the front end's id of it, so that a function it defined, called
        from a recorded cell, names it where it is (a recorded cell's place stays)."""
        count = result.execution_count
        cell_id = getattr(result.info, "cell_id", None)
        if isinstance(count, int) and isinstance(cell_id, str) and count not in self._places:
            self.note(count, CellPlace(None, count, cell_id))

    def resolve(self, calls: Iterable[CallRecord], order: CellOrder) -> bool:
        """Give each call made by another cell's code that cell's place (in place: the
        records are the cell's own, not yet shown), its position where ``order`` puts
        its id now; True where any call got one. A label the session never recorded (a
        worker's, a cleared kernel's) keeps what the recorder knew."""
        resolved = False
        for call in calls:
            if call.origin is None or call.origin_cell is None:
                continue
            place = self._places.get(call.origin_cell)
            if place is not None:
                moved = order.position(place.cell_id)
                call.origin = dataclasses.replace(
                    call.origin,
                    index=place.index if moved is None else moved,
                    execution_count=place.execution_count,
                    cell_id=place.cell_id,
                    first_line=place.first_line,
                )
                resolved = True
        return resolved

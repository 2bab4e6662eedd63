"""The notebook's cell order, as the front end tells the person's kernel.

A live kernel does not know where a cell is in its notebook, only the id the front end
gave it (JupyterLab and Notebook 7 put ``cellId`` in each execute request's metadata).
porter's JupyterLab extension opens the ``porter.cells`` comm and sends the ids of the
notebook's cells in order (all cells, as JupyterLab counts them), again whenever they
move; the session looks the running cell's id up here, so that a live cell is named as
``porter run`` names it (``cell 3 · In [2]``). Without the extension (plain IPython, the
classic Notebook, VS Code) nothing is sent and cells keep their prompt (``In [2]``).

Only the person's kernel listens: the target is registered when porter is loaded into
an IPython kernel (never in plain IPython, nor in a replay worker, which does not load
porter's extension). The comm's messages are the front end's to send, never trusted: an
order that is not a list of strings is ignored.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from comm.base_comm import BaseComm
    from IPython.core.interactiveshell import InteractiveShell

__all__ = ["COMM_TARGET", "CellOrder", "order_of"]

#: the comm porter's JupyterLab extension opens (labextension/src/cellorder.ts)
COMM_TARGET = "porter.cells"


class CellOrder:
    """Front-end cell id → its position in the notebook (0-based, every cell counted)."""

    def __init__(self) -> None:
        self._positions: dict[str, int] = {}

    def position(self, cell_id: str | None) -> int | None:
        """Where the cell ``cell_id`` is in the notebook, or None (no id, or an id the
        front end did not name)."""
        return None if cell_id is None else self._positions.get(cell_id)

    def receive(self, data: object) -> None:
        """Take the order a comm message carries (``{"cells": [id, ...]}``); anything
        else leaves the order as it was."""
        cells = data.get("cells") if isinstance(data, dict) else None
        if isinstance(cells, list) and all(isinstance(c, str) for c in cells):
            # one assignment: a cell starting meanwhile sees the old order or the new
            self._positions = {cell_id: i for i, cell_id in enumerate(cells)}

    def opened(self, comm: BaseComm, message: dict) -> None:
        """The front end opened the comm: its first order, and each one it sends."""
        comm.on_msg(lambda msg: self.receive(msg.get("content", {}).get("data")))
        self.receive(message.get("content", {}).get("data"))


_orders: dict[int, CellOrder] = {}


def order_of(shell: InteractiveShell) -> CellOrder:
    """The cell order of ``shell``'s notebook, kept per shell for the kernel's life (a
    comm opened before ``%reload_ext porter_ext`` still updates it). The comm target
    is registered the first time, where the shell is an IPython kernel's."""
    order = _orders.get(id(shell))
    if order is None:
        order = _orders[id(shell)] = CellOrder()
        if getattr(shell, "kernel", None) is not None:
            import comm  # ipykernel has imported it: its manager is the kernel's

            comm.get_comm_manager().register_target(COMM_TARGET, order.opened)
    return order

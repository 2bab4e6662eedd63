"""A cell's inputs as they are before the original run, ready to travel to workers.

Everything the cell reads from the person's namespace (and, through cloudpickle, what the
person's functions it calls read) is serialised before the cell runs, arrays copied once
into shared memory: that copy is the pre-run snapshot, so a cell that changes its inputs
in place, advances a generator or steps an optimizer is replayed from the state the
original run started from. The global random states are captured with them. Objects of
IPython itself (``get_ipython``, ``In``, ``Out``) stay behind: the worker has its own.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from porter_ext.replay import process_state, rng, transport
from porter_ext.replay.analysis import CellIO

#: names IPython binds in every namespace; the worker's kernel has its own
_SHELL_NAMES = frozenset({"get_ipython", "exit", "quit", "In", "Out", "_ih", "_oh", "_dh"})


@dataclass
class Capture:
    """The pre-run inputs of one cell: the parcel (or why it could not be made)."""

    parcel: transport.Parcel | None
    states: rng.RandomStates
    unsendable: str | None = None  # the reason every replay is skipped
    slots: int = 0  # call sites numbered here (see `transport.reserve_slots`)
    #: the environment, import path, folder and library settings the run starts from
    process: process_state.ProcessState | None = None
    #: the input that could not be sent (``unsendable`` says why)
    unsent: str | None = None

    def release(self) -> None:
        if self.parcel is not None:
            self.parcel.release()


def _is_shell_object(value: Any) -> bool:
    owner = value.__self__ if isinstance(value, types.MethodType) else value
    module = getattr(type(owner), "__module__", "") or ""
    return module.partition(".")[0] in ("IPython", "ipykernel")


def cell_inputs(io: CellIO, namespace: Mapping[str, Any]) -> dict[str, Any]:
    """The values of ``namespace`` the cell reads (and builtins it shadows)."""
    values = {}
    for name in (*io.inputs, *io.builtins):
        if name in namespace and name not in _SHELL_NAMES:
            value = namespace[name]
            if not _is_shell_object(value):
                values[name] = value
    return values


def capture(io: CellIO, namespace: Mapping[str, Any]) -> Capture:
    """Serialise the cell's inputs now (call before the original run)."""
    states = rng.capture()
    process = process_state.capture()
    try:
        parcel = transport.pack(cell_inputs(io, namespace), local=True)
    except transport.Unsendable as error:
        return Capture(None, states, str(error), process=process, unsent=error.name)
    return Capture(parcel, states, slots=transport.slots_in_use(), process=process)

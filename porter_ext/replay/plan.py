"""What a cell's replays need before it runs: its analysis, where its array inputs live,
and (when it will be replayed) its inputs as they are before the run: captured for the
workers (serialised, arrays copied once into shared memory), or a snapshot of those it
may change for an in-process replay (``--in-process``).

The plan is made before the person's run and read after it, by the replays
(`porter_ext.replay.dispatch`) and by the comparison (`porter_ext.compare.pipeline`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from porter_ext.backends import BackendSpec
from porter_ext.replay.analysis import CellIO

if TYPE_CHECKING:
    from porter_ext.record.syntax import CellSyntax
    from porter_ext.replay.capture import Capture
    from porter_ext.replay.workers import WorkerPool


@dataclass
class ReplayPlan:
    """What a cell's replays need before it runs: its analysis, where its array inputs
    live, and (when it will be replayed) the inputs as they are before the run: captured
    for the workers, or a snapshot for an in-process replay."""

    specs: list[BackendSpec]
    io: CellIO
    snapshot: dict[str, Any] = field(default_factory=dict)
    input_devices: list[str] = field(default_factory=list)
    default_device: str | None = None
    #: the workers' pre-run inputs (None: in-process, or nothing to replay)
    capture: Capture | None = None
    pool: WorkerPool | None = None
    control: bool = True
    in_process: bool = False
    #: the values of the cell's inputs before the run (for the control's backend)
    inputs: dict[str, Any] = field(default_factory=dict)


class PreRunNamespace(dict):
    """The person's namespace as it was before the cell ran: a copy holding the snapshot of
    the inputs the cell rebinds or mutates. ``person`` is the real namespace, so that the
    replay can tell the person's own functions (whose globals are the real one)."""

    def __init__(self, person: Mapping[str, Any], snapshot: Mapping[str, Any]):
        super().__init__(person)
        self.update(snapshot)
        self.person = person


def plan(
    code: str,
    namespace: Mapping[str, Any],
    specs: list[BackendSpec],
    *,
    pool: WorkerPool | None = None,
    control: bool = True,
    in_process: bool = False,
    syntax: CellSyntax | None = None,
) -> ReplayPlan:
    """Analyse the cell (from its ``syntax`` where given: one parse) and, when it will be
    replayed, capture its inputs as they are now (for workers from ``pool``), or
    snapshot those it may change (``in_process``)."""
    from porter_ext.backends import backend_for
    from porter_ext.replay.analysis import analyse
    from porter_ext.replay.inputs import input_devices, snapshot, user_callables

    io = analyse(code, syntax)
    result = ReplayPlan(
        specs=specs,
        io=io,
        input_devices=input_devices(io, namespace),
        pool=pool,
        control=control,
        in_process=in_process,
    )
    for name in io.inputs:
        backend = backend_for(namespace.get(name))
        if backend is not None:
            result.default_device = backend.default_device()
            break
    if not specs:
        return result
    if not in_process:
        from porter_ext.replay.capture import capture, cell_inputs

        result.inputs = cell_inputs(io, namespace)
        result.capture = capture(io, namespace)
        pool.warm(specs)
        return result
    mutated = set(io.mutated_given(n for n in io.passed if n in user_callables(namespace)))
    for name in io.inputs:
        if name in namespace:
            value = namespace[name]
            result.snapshot[name] = snapshot(value) if name in mutated else value
    return result

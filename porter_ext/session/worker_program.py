"""The program the session's worker kernels run (``worker_kernel.use_program``): the
replay stage does the replay and answers (`replay.worker_side.run`); this adds, like the
session in the person's process, what the later stages make of it where the replay's
own arrays are: the device findings, and whether the target library was exercised at
all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from porter_ext.backends import LIBRARIES, backend_for
from porter_ext.compare.devices import device_findings
from porter_ext.replay import worker_side

if TYPE_CHECKING:
    from porter_ext.backends.base import Backend
    from porter_ext.replay.run import ReplayResult


def run(request_id: str) -> None:
    """Run the replay that arrived under ``request_id`` and answer it."""
    worker_side.run(request_id, finish=finish)


def finish(result: ReplayResult, outputs: dict[str, Any], backend: Backend | None) -> None:
    """What the later stages add to a replay's result while its arrays are here."""
    if backend is not None and result.status == "ok":
        judge_exercised(result, backend.name, outputs)
    # a replay that never touched its target says nothing about the target's placement
    if backend is not None and result.status in ("ok", "error"):
        result.findings = device_findings(
            result.calls,
            backend=result.backend,
            input_devices=result.input_devices,
            default_device=result.default_device,
            outputs=outputs,
        )


def judge_exercised(result: ReplayResult, target: str, outputs: dict[str, Any]) -> None:
    """`not_exercised` when the replay's calls and outputs never touched the ``target``
    library but did touch another one (the cell called that library directly)."""
    libraries = {c.library for c in result.calls if c.library in LIBRARIES}
    for leaf in worker_side.output_leaves(outputs).values():
        owner = backend_for(leaf)
        if owner is not None:
            libraries.add(owner.name)
    if libraries and target not in libraries:
        result.status = "not_exercised"
        result.reason = (
            f"the replay never touched {target}: its calls and outputs were "
            f"{', '.join(sorted(libraries))} (the cell calls that library directly, not "
            "the namespace of its inputs)"
        )

"""The program a worker kernel runs (``__porter_worker__`` there): the replay stage does
the replay (`replay.worker_side`), and this, like the session in the person's process,
adds what the later stages make of it where the replay's own arrays are: the device
findings, whether the target library was exercised at all, and each output's device and
dtype; then it answers with host copies of the outputs.
"""

from __future__ import annotations

import types
from typing import Any

from porter_ext.backends import LIBRARIES, backend_for, device_of, dtype_name
from porter_ext.compare.devices import device_findings
from porter_ext.compare.outputs import leaves
from porter_ext.replay import transport, worker_side
from porter_ext.replay.inputs import is_array_namespace


def start(scratch: str, sys_path: list[str], preload: list[str]) -> str:
    """Set the worker up (see `worker_side.start`)."""
    return worker_side.start(scratch, sys_path, preload)


def run(request_id: str) -> None:
    """Run the replay that arrived under ``request_id`` and answer it."""
    request, buffers = worker_side.take(request_id)
    result, outputs, backend = worker_side.replay(request, buffers)
    if backend is not None and result.status == "ok":
        judge_exercised(result, backend.name, outputs)
    # a replay that never touched its target says nothing about the target's placement
    if backend is not None and result.status in ("ok", "error"):
        result.findings = device_findings(result.calls, backend=result.spec,
                                          input_devices=result.input_devices,
                                          default_device=result.default_device,
                                          outputs=outputs)  # fmt: skip
    parcel, meta = pack_outputs(outputs, request.local, result)
    worker_side.answer(worker_side.ReplayReply(request.id, result, parcel.header(), meta), parcel)
    worker_side.tidy()


def _leaves(outputs: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, value in outputs.items():
        leaves(value, name, found)
    return found


def judge_exercised(result: Any, target: str, outputs: dict[str, Any]) -> None:
    """`not_exercised` when the replay's calls and outputs never touched the ``target``
    library but did touch another one (the cell called that library directly)."""
    libraries = {c.library for c in result.calls if c.library in LIBRARIES}
    for leaf in _leaves(outputs).values():
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


def _is_code(value: Any) -> bool:
    kinds = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return isinstance(value, kinds) or is_array_namespace(value)


def pack_outputs(outputs: dict[str, Any], local: bool, result: Any) -> tuple[Any, dict]:
    """The outputs as host copies for the person's process, and each array leaf's own
    (device, dtype); an output that cannot travel is left out and named in ``unsent``."""
    # code (modules, namespaces, functions, classes) is not an output worth comparing
    outputs = {k: v for k, v in outputs.items() if not _is_code(v)}
    while True:
        try:
            parcel = transport.pack(outputs, local=local, results=True)
            break
        except transport.Unsendable as error:
            result.unsent[error.name] = error.reason
            outputs = (
                {k: v for k, v in outputs.items() if k != error.name}
                if error.name in outputs
                else {}
            )
    meta = {}
    for path, leaf in _leaves(outputs).items():
        if backend_for(leaf) is not None:
            meta[path] = (device_of(leaf), dtype_name(leaf))
    return parcel, meta

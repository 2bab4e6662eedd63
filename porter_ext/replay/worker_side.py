"""What runs inside a worker kernel: receive a replay, run it, send back what it gave.

A request arrives as a comm message (``porter.replay``) whose buffers hold the pickled
`ReplayRequest`, the inputs' stream and, for a kernel elsewhere, the arrays' bytes; the
kernel then executes ``__porter_worker__.run(id)``, so that an interrupt stops the replay
as it stops any cell. The replay restores the inputs (arrays zero-copy from shared memory
where it can), moves them to the backend, restores the person's pre-run random states,
runs the cell with the same recorder as the original run inside the sandbox, and answers
with a `ReplayResult` (outputs as host copies with their devices and dtypes).

This module is the worker's program: like the session in the person's process it uses
the stages after replay (device findings) lazily.
"""

from __future__ import annotations

import builtins
import gc
import os
import pickle
import sys
import time
from dataclasses import dataclass, field
from typing import Any

from porter_ext.record.hooks_importlib_bootstrap import HOOK_NAMES
from porter_ext.replay import shared_blocks, transport

COMM_TARGET = "porter.replay"


@dataclass
class ReplayRequest:
    """One replay of one cell on one spec (everything but the inputs' bytes)."""

    id: str
    code: str
    io: Any  # CellIO
    spec: str  # the local spec the worker serves ("jax:cpu:1")
    label: str  # the spec as the person wrote it (with @WHERE)
    settings: Any  # ReplaySettings
    states: Any  # rng.RandomStates
    inputs: dict[str, Any]  # Parcel.header()
    exclusive: bool = True  # this worker alone reads the shared block: no private copy
    local: bool = True
    #: the spec's WHERE names the kernel this runs in (not a place for the backend)
    remote_kernel: bool = False
    role: str = "target"
    worker: str = ""
    cwd: str | None = None
    unsent: dict[str, str] = field(default_factory=dict)
    #: call sites the sender's recorder had numbered (see `transport.reserve_slots`)
    slots: int = 0
    #: the float64 reference: floating inputs promoted before the run (see `reference`)
    promote: bool = False


@dataclass
class ReplayReply:
    """The worker's answer: the result without its outputs, which travel beside it."""

    id: str
    result: Any  # ReplayResult
    outputs: dict[str, Any]  # Parcel.header()
    meta: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)


@dataclass
class _Worker:
    comm: Any = None
    pending: dict[str, list] = field(default_factory=dict)
    sandbox: Any = None
    baseline: set[str] = field(default_factory=set)


_worker = _Worker()


def start(scratch: str, sys_path: list[str], preload: list[str]) -> str:
    """Set the worker up (once): sandbox, import path, the backend's library, the comm."""
    import comm as comm_package

    from porter_ext.replay import sandbox

    os.makedirs(scratch, exist_ok=True)
    _worker.sandbox = sandbox.install(scratch)
    for entry in sys_path:
        if entry not in sys.path:
            sys.path.append(entry)
    for name in preload:
        from porter_ext.backends import get_backend

        backend = get_backend(name)
        if backend.available()[0]:
            backend.lib()
    comm_package.get_comm_manager().register_target(COMM_TARGET, _opened)
    shell = sandbox._shell()
    if shell is not None:
        _worker.baseline = set(shell.user_ns)
    return "ready"


def _opened(comm: Any, message: dict) -> None:
    _worker.comm = comm
    comm.on_msg(_received)


def _received(message: dict) -> None:
    data = message["content"]["data"]
    _worker.pending[data["id"]] = list(message.get("buffers") or [])


def run(request_id: str) -> None:
    """Run the replay whose request arrived under ``request_id`` and answer it."""
    buffers = _worker.pending.pop(request_id)
    request: ReplayRequest = pickle.loads(buffers[0])
    reply, answer = replay(request, buffers[1:])
    payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    _worker.comm.send(
        {"id": request.id, "outputs": reply.outputs},
        buffers=[payload, answer.payload, *answer.buffers],
    )
    answer.hand_over()
    _tidy()


def _tidy() -> None:
    """Forget what the replay left in the worker's own namespace (``%timeit`` merges)."""
    from porter_ext.replay import sandbox

    shell = sandbox._shell()
    if shell is not None and _worker.baseline:
        for name in set(shell.user_ns) - _worker.baseline:
            del shell.user_ns[name]
    gc.collect(0)
    shared_blocks.close_unused()


def replay(request: ReplayRequest, buffers: list) -> tuple[ReplayReply, transport.Parcel]:
    """The replay of ``request`` here; never raises for the cell's own failures."""
    from porter_ext.backends import BackendUnavailable, ConversionError, get_backend, parse_spec
    from porter_ext.record.model import ErrorInfo
    from porter_ext.replay.run import ReplayResult

    result = ReplayResult(request.label, "ok", role=request.role, worker=request.worker)
    empty = transport.Parcel(pickle.dumps({}))
    if request.cwd and os.path.isdir(request.cwd):
        os.chdir(request.cwd)
    try:
        spec = parse_spec(request.spec)
        backend = get_backend(spec.library)
        backend.resolve_device(spec.device)
        result.default_device = backend.default_device()
    except BackendUnavailable as error:
        return _skipped(request, result, error.reason), empty
    start = time.perf_counter()
    parcel = transport.Parcel(buffers[0], spans=[tuple(s) for s in request.inputs["spans"]],
                              shm_name=request.inputs["shm"], buffers=list(buffers[1:]))  # fmt: skip
    try:
        ns = _namespace(request, parcel, backend, spec.device, result)
    except ConversionError as error:
        return _skipped(request, result, f"cannot move an input to {spec}: {error}"), empty
    except Exception as error:  # porter's own failure: this backend only
        result.status = "error"
        result.error = ErrorInfo(
            type(error).__name__, f"porter could not prepare the replay: {error}"
        )
        return ReplayReply(request.id, result, empty.header()), empty
    result.prepare_seconds = time.perf_counter() - start
    try:
        return _run(request, ns, backend, result)
    finally:
        ns.clear()


def _skipped(request: ReplayRequest, result: Any, reason: str) -> ReplayReply:
    result.status, result.reason = "skipped", reason
    return ReplayReply(request.id, result, {"spans": [], "shm": None})


def _namespace(request: ReplayRequest, parcel: transport.Parcel, backend: Any, device: Any,
               result: Any) -> dict[str, Any]:  # fmt: skip
    from porter_ext.replay.placement import Placer, home_globals

    def place(host: Any, meta: transport.ArrayMeta) -> Any:
        return transport.own_library(host, meta, private=not request.exclusive)

    transport.reserve_slots(request.slots)
    values = transport.unpack(parcel, place)
    if request.promote:
        from porter_ext.replay.reference import promote_inputs

        found = promote_inputs(values)
        if found is not None:
            values = found[0]
    ns = home_globals(values)
    ns = ns if ns is not None else {}
    for name in HOOK_NAMES:  # the recorder binds this worker's own hooks when it runs
        ns.pop(name, None)
    ns["__name__"] = "__main__"
    ns["__builtins__"] = builtins
    ns.update(values)
    placer = Placer(backend, device)
    placer.namespace(ns)
    result.conversions = placer.conversions
    result.input_devices = placer.devices
    result.notes += placer.summary()
    return ns


def _run(
    request: ReplayRequest, ns: dict, backend: Any, result: Any
) -> tuple[ReplayReply, transport.Parcel]:
    from porter_ext.backends import parse_spec
    from porter_ext.record.cell import cell_filename, run_recorded
    from porter_ext.record.model import ErrorInfo
    from porter_ext.replay import rng
    from porter_ext.replay.run import collect_outputs

    settings = request.settings
    filename = cell_filename(f"{settings.record.cell}@{request.label}", request.code)
    rng.restore(request.states)
    sandbox = _worker.sandbox
    where = parse_spec(request.label).where
    with backend.replay_context(None if request.remote_kernel else where) as scope:
        with sandbox.active(ns):
            run = run_recorded(request.code, ns, settings.record, filename=filename)
        outputs = {}
        if not isinstance(run.exception, KeyboardInterrupt):
            found = collect_outputs(request.io, ns, run.value)
            outputs = {k: scope.finish(v) for k, v in found.items()}
    result.notes += [n for n in scope.notes if n not in result.notes]
    result.seconds = run.seconds
    result.calls = run.calls
    result.notes += [w for w in run.warnings if w not in result.notes]
    if isinstance(run.exception, KeyboardInterrupt):
        result.status, result.reason = "timeout", "interrupted"
    elif sandbox.refused:
        line = run.error.line if run.error is not None else None
        result.status = "error"
        result.error = ErrorInfo("SideEffectRefused", sandbox.refused[0], line)
    elif run.error is not None:
        result.status, result.error = "error", run.error
    for command in sandbox.skipped_commands:
        result.notes.append(f"the replay did not run !{command}: shell commands are side effects")
    if sandbox.figures:
        result.notes.append(f"{sandbox.figures} figure(s) of the replay discarded")
    if result.status == "ok":
        _judge_exercised(result, backend, outputs)
    if result.status in ("ok", "error", "not_exercised"):
        result.findings = _findings(result, outputs)
    answer, meta = _pack_outputs(outputs, request.local, result)
    return ReplayReply(request.id, result, answer.header(), meta), answer


def _leaves(outputs: dict[str, Any]) -> dict[str, Any]:
    from porter_ext.compare.outputs import leaves

    found: dict[str, Any] = {}
    for name, value in outputs.items():
        leaves(value, name, found)
    return found


def _judge_exercised(result: Any, backend: Any, outputs: dict[str, Any]) -> None:
    """`not_exercised` when the replay's calls and outputs never touched the target library
    but did touch another one (the cell called that library directly)."""
    from porter_ext.backends import LIBRARIES, backend_for

    libraries = {c.library for c in result.calls if c.library in LIBRARIES}
    for leaf in _leaves(outputs).values():
        owner = backend_for(leaf)
        if owner is not None:
            libraries.add(owner.name)
    if libraries and backend.name not in libraries:
        result.status = "not_exercised"
        result.reason = (
            f"the replay never touched {backend.name}: its calls and outputs were "
            f"{', '.join(sorted(libraries))} (the cell calls that library directly, not "
            "the namespace of its inputs)"
        )


def _findings(result: Any, outputs: dict[str, Any]) -> list:
    from porter_ext.compare.devices import device_findings

    return device_findings(result.calls, backend=result.spec, input_devices=result.input_devices,
                           default_device=result.default_device, outputs=outputs)  # fmt: skip


def _is_code(value: Any) -> bool:
    import types

    from porter_ext.replay.inputs import is_array_namespace

    kinds = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return isinstance(value, kinds) or is_array_namespace(value)


def _pack_outputs(
    outputs: dict[str, Any], local: bool, result: Any
) -> tuple[transport.Parcel, dict]:
    from porter_ext.backends import backend_for, device_of
    from porter_ext.backends.base import dtype_name

    # code (modules, namespaces, functions, classes) is not an output worth comparing
    outputs = {k: v for k, v in outputs.items() if not _is_code(v)}
    while True:
        try:
            answer = transport.pack(outputs, local=local, results=True)
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
    return answer, meta

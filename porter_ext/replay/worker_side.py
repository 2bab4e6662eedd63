"""What runs inside a worker kernel: receive a replay, run it, send back what it gave.

A request arrives as a comm message (``porter.replay``) whose buffers hold the pickled
`ReplayRequest`, the inputs' stream and, for a kernel elsewhere, the arrays' bytes; the
kernel then executes ``__porter_worker__.run(id)``, so that an interrupt stops the replay
as it stops any cell. The replay restores the inputs (arrays zero-copy from shared memory
where it can), moves them to the backend, restores the person's pre-run random states,
runs the cell with the same recorder as the original run inside the sandbox, and
answers with host copies of the outputs (`run`). The stage that uses the workers may
hand a program of its own (`worker_kernel.use_program`: the session's adds what the
later stages make of the replay where its arrays are, through `run`'s ``finish``).
"""

from __future__ import annotations

import builtins
import contextlib
import gc
import os
import pickle
import sys
import time
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from porter_ext.guard import internal_error
from porter_ext.record.hooks_importlib_bootstrap import HOOK_NAMES
from porter_ext.replay import confine, shared_blocks, transport

if TYPE_CHECKING:
    from comm.base_comm import BaseComm

    from porter_ext.backends.base import Backend
    from porter_ext.record.sites import Site
    from porter_ext.replay.analysis import CellIO
    from porter_ext.replay.process_state import ProcessState
    from porter_ext.replay.rng import RandomStates
    from porter_ext.replay.run import ReplayResult, ReplaySettings
    from porter_ext.replay.sandbox import Sandbox

COMM_TARGET = "porter.replay"


@dataclass
class ReplayRequest:
    """One replay of one cell on one spec (everything but the inputs' bytes)."""

    id: str
    code: str
    io: CellIO
    spec: str  # the local spec the worker serves ("jax:cpu:1")
    label: str  # the spec as the person wrote it (with @WHERE)
    settings: ReplaySettings
    states: RandomStates
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
    #: the sites of the sender's code that IPython compiled (see `transport.adopt_sites`)
    sites: tuple[Site, ...] = ()
    #: the float64 reference: floating inputs promoted before the run (see `reference`)
    promote: bool = False
    #: the person's process state the replay starts from (see `process_state`)
    process: ProcessState | None = None
    #: the cell's rewrite as the kernel compiled it (`record.cell.exported_rewrite`): the
    #: worker neither parses nor rewrites the cell; None: it does
    compiled: bytes | None = None
    #: the plain code of the person's functions armed in the kernel
    #: (`as_written.armed_plain_codes`): what a compiler traces in the worker too
    plain_codes: bytes | None = None


@dataclass
class ReplayReply:
    """The worker's answer: the result without its outputs, which travel beside it."""

    id: str
    result: ReplayResult
    outputs: dict[str, Any]  # Parcel.header()
    meta: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    #: why this worker cannot serve another replay (a hard limit the replay lowered): the
    #: pool replaces it; None: it can
    retire: str | None = None


@dataclass
class _Worker:
    comm: BaseComm | None = None
    pending: dict[str, list] = field(default_factory=dict)
    sandbox: Sandbox | None = None
    baseline: set[str] = field(default_factory=set)
    #: the worker's import path when it started (what it needs besides the person's)
    own_path: list[str] = field(default_factory=list)


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
    _worker.own_path = list(sys.path)
    confine.current_isolation()  # before any replay takes the person's environment
    comm_package.get_comm_manager().register_target(COMM_TARGET, _opened)
    shell = sandbox._shell()
    if shell is not None:
        _worker.baseline = set(shell.user_ns)
    return "ready"


def _opened(comm: BaseComm, message: dict) -> None:
    _worker.comm = comm
    comm.on_msg(_received)


def _received(message: dict) -> None:
    data = message["content"]["data"]
    _worker.pending[data["id"]] = list(message.get("buffers") or [])


def take(request_id: str) -> tuple[ReplayRequest, list]:
    """The request that arrived under ``request_id``, and its buffers (the inputs)."""
    buffers = _worker.pending.pop(request_id)
    return pickle.loads(buffers[0]), buffers[1:]


def answer(reply: ReplayReply, outputs: transport.Parcel) -> None:
    """Send ``reply`` and the outputs' parcel back through the comm."""
    payload = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
    _worker.comm.send(
        {"id": reply.id, "outputs": reply.outputs},
        buffers=[payload, outputs.payload, *outputs.buffers],
    )
    outputs.hand_over()


def run(
    request_id: str,
    finish: Callable[[ReplayResult, dict[str, Any], Backend | None], None] | None = None,
) -> None:
    """Run the replay that arrived under ``request_id`` and answer it. ``finish(result,
    outputs, backend)`` (a program's own) adds to the result while the replay's own
    arrays are here, before they travel as host copies."""
    request, buffers = take(request_id)
    result, outputs, backend = replay(request, buffers)
    if finish is not None:
        finish(result, outputs, backend)
    parcel, meta = pack_outputs(outputs, request.local, result)
    answer(ReplayReply(request.id, result, parcel.header(), meta, _retire(request)), parcel)
    tidy()


def _retire(request: ReplayRequest) -> str | None:
    """Why this worker cannot take the person's state again, after ``request``'s replay."""
    if request.process is None:
        return None
    from porter_ext.replay import process_state

    lost = process_state.unreachable(request.process)
    if not lost:
        return None
    return (
        f"the replay lowered the worker's hard limit ({', '.join(lost)}) below the person's "
        "soft one: the next cell runs in a fresh worker"
    )


def output_leaves(outputs: dict[str, Any]) -> dict[str, Any]:
    """Path → leaf of every output."""
    from porter_ext.replay.run import leaves

    found: dict[str, Any] = {}
    for name, value in outputs.items():
        leaves(value, name, found)
    return found


def _is_code(value: Any) -> bool:
    from porter_ext.replay.inputs import is_array_namespace

    kinds = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type)
    return isinstance(value, kinds) or is_array_namespace(value)


def pack_outputs(
    outputs: dict[str, Any], local: bool, result: ReplayResult
) -> tuple[transport.Parcel, dict]:
    """The outputs as host copies for the person's process, and each array leaf's own
    (device, dtype); an output that cannot travel is left out and named in ``unsent``."""
    from porter_ext.backends import backend_for, device_of, dtype_name

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
    for path, leaf in output_leaves(outputs).items():
        if backend_for(leaf) is not None:
            meta[path] = (device_of(leaf), dtype_name(leaf))
    return parcel, meta


def tidy() -> None:
    """Forget what the replay left in the worker's own namespace (``%timeit`` merges)."""
    from porter_ext.replay import sandbox

    shell = sandbox._shell()
    if shell is not None and _worker.baseline:
        for name in set(shell.user_ns) - _worker.baseline:
            del shell.user_ns[name]
    gc.collect(0)
    shared_blocks.close_unused()


def replay(
    request: ReplayRequest, buffers: list
) -> tuple[ReplayResult, dict[str, Any], Backend | None]:
    """The replay of ``request`` here: its result, its outputs (this worker's own values)
    and the backend it ran on (None when it did not run). Never raises for the cell's own
    failures."""
    from porter_ext.backends import BackendUnavailable, ConversionError, get_backend, parse_spec
    from porter_ext.model.calls import ErrorInfo
    from porter_ext.replay.run import ReplayResult

    result = ReplayResult(
        request.label,
        "ok",
        role=request.role,
        worker=request.worker,
        isolation=confine.current_isolation(),
    )
    if request.cwd and os.path.isdir(request.cwd):
        os.chdir(request.cwd)
    if request.process is not None:
        from porter_ext.replay import process_state

        failed = process_state.take(request.process, _worker.own_path)
        if failed:
            reason = "; ".join(failed)
            return (
                _skipped(result, f"the worker cannot take the person's limits ({reason})"),
                {},
                None,
            )
    try:
        spec = parse_spec(request.spec)
        backend = get_backend(spec.library)
        backend.resolve_device(spec.device)
        result.default_device = backend.default_device()
    except BackendUnavailable as error:
        return _skipped(result, error.reason), {}, None
    start = time.perf_counter()
    parcel = transport.Parcel(
        buffers[0],
        spans=[tuple(s) for s in request.inputs["spans"]],
        shm_name=request.inputs["shm"],
        buffers=list(buffers[1:]),
    )
    try:
        ns = _namespace(request, parcel, backend, spec.device, result)
    except ConversionError as error:
        return _skipped(result, f"cannot move an input to {spec}: {error}"), {}, None
    except Exception as error:  # porter's own failure: this backend only
        internal_error(f"preparing the replay on {spec}", error)
        result.status = "error"
        result.error = ErrorInfo(
            type(error).__name__, f"porter could not prepare the replay: {error}"
        )
        return result, {}, None
    result.prepare_seconds = time.perf_counter() - start
    try:
        return (*_run(request, ns, backend, result), backend)
    finally:
        ns.clear()


def _cut_graphs_reached() -> list[str]:
    """The graph operations whose stand-ins a backward pass reached since the last call
    (`Backend.cut_graphs_reached`), of every library."""
    from porter_ext.backends import all_backends

    return [name for backend in all_backends() for name in backend.cut_graphs_reached()]


def _skipped(result: ReplayResult, reason: str) -> ReplayResult:
    result.status, result.reason = "skipped", reason
    return result


def _namespace(
    request: ReplayRequest,
    parcel: transport.Parcel,
    backend: Backend,
    device: str | None,
    result: ReplayResult,
) -> dict[str, Any]:
    from porter_ext.replay.placement import Placer, home_globals

    def place(host: Any, meta: transport.ArrayMeta) -> Any:
        return transport.own_library(host, meta, private=not (request.exclusive or shared))

    transport.reserve_slots(request.slots)
    transport.adopt_sites(request.sites)
    from porter_ext.record import person_code

    # a module of the person's this worker loaded from a file the kernel no longer uses
    person_code.forget_other_files(request.settings.record.modules)
    # a block other workers read too is mapped copy-on-write (no copy of the inputs per
    # worker); where it cannot be, each array is copied before the replay may write it
    shared = not request.exclusive and shared_blocks.maps_privately(parcel.shm_name)
    values = transport.unpack(parcel, place, copy_on_write=shared)
    if request.promote:
        from porter_ext.replay.reference import promote_inputs

        found = promote_inputs(values)
        if found is not None:
            values = found[0]
    ns = home_globals(values)
    ns = ns if ns is not None else {}
    from porter_ext.record import as_written

    as_written.adopt_plain_codes(values, request.plain_codes)
    for name in HOOK_NAMES:  # the recorder binds this worker's own hooks when it runs
        ns.pop(name, None)
    ns["__name__"] = "__main__"
    ns["__builtins__"] = builtins
    ns.update(values)
    placer = Placer(backend, device, moves_draws=request.settings.moves_draws)
    placer.namespace(ns)
    result.conversions = placer.conversions
    result.input_devices = placer.devices
    result.notes += placer.summary()
    return ns


def _run(
    request: ReplayRequest, ns: dict, backend: Backend, result: ReplayResult
) -> tuple[ReplayResult, dict]:
    from porter_ext.backends import parse_spec
    from porter_ext.model.calls import ErrorInfo
    from porter_ext.record import as_written, person_code
    from porter_ext.record.cell import cell_filename, run_recorded
    from porter_ext.record.syntax import CellSyntax
    from porter_ext.replay import rng
    from porter_ext.replay.run import collect_outputs, sampled_note

    settings = request.settings
    filename = cell_filename(f"{settings.record.cell}@{request.label}", request.code)
    rng.restore(request.states)
    _cut_graphs_reached()  # none yet: forget any an earlier replay left
    sandbox = _worker.sandbox
    where = parse_spec(request.label).where
    before = confine.processes() if confine.in_own_pid_namespace() else set()
    with contextlib.ExitStack() as stack:
        context = backend.replay_context(None if request.remote_kernel else where)
        try:
            scope = stack.enter_context(context)
        except Exception as error:  # the place answered but cannot serve (not a scheduler)
            where_text = f" at {where}" if where else ""
            return _skipped(result, f"{backend.name}{where_text} cannot run it: {error}"), {}
        with sandbox.active(ns), person_code.more_paths(settings.record.paths):
            syntax = CellSyntax(request.code, filename, settings.record.compile_flags)
            syntax.compiled = request.compiled
            # the person's modules record their calls here too (imported plainly by the
            # inputs' unpickling: their twins are made from the same files)
            notes: list[str] = []
            person_code.reachable(ns, notes)
            probe = None
            if settings.probes:
                from porter_ext.replay.probes import PROBE, Probe

                probe = ns[PROBE] = Probe(settings.probes, settings.probe_specs)
            armed = as_written.arm()
            try:
                run = run_recorded(
                    request.code, ns, settings.recording(), filename=filename, syntax=syntax
                )
            finally:
                as_written.disarm(armed)
                if probe is not None:
                    result.probes = probe.taken
                    ns.pop(PROBE, None)
            result.notes += [n for n in notes if n not in result.notes]
        strays = confine.end_strays(before)
        outputs = {}
        if not isinstance(run.exception, KeyboardInterrupt):
            found = collect_outputs(request.io, ns, run.value)
            outputs = {k: scope.finish(v) for k, v in found.items()}
    result.notes += [n for n in scope.notes if n not in result.notes]
    result.seconds = run.seconds
    result.calls = run.calls
    result.notes += [w for w in run.warnings if w not in result.notes]
    result.notes += sampled_note(run, settings.record.cell)
    if isinstance(run.exception, KeyboardInterrupt):
        result.status, result.reason = "timeout", "interrupted"
    elif sandbox.refused:
        line = run.error.line if run.error is not None else None
        result.status = "error"
        result.error = ErrorInfo("SideEffectRefused", sandbox.refused[0], line)
    elif run.error is not None:
        result.status, result.error = "error", run.error
    reached = _cut_graphs_reached()
    if reached and result.status != "timeout":
        result.status, result.error = "skipped", None
        result.reason = (
            "the cell's backward pass reached an input that arrived without its autograd "
            f"graph (made by {', '.join(dict.fromkeys(reached))}): the gradients that pass "
            "gives the tensors which made that input exist only where the graph is, in "
            "your process"
        )
    for command in sandbox.skipped_commands:
        result.notes.append(f"the replay did not run !{command}: shell commands are side effects")
    if strays:
        result.notes.append(f"{strays} process(es) the replay started were ended with it")
    result.notes += sandbox.output_notes()
    return result, outputs

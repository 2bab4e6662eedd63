"""Sending one cell's replays to workers: the targets, and the control on the original's
own backend and device (outputs where the control differs from the original run are
nondeterministic, not porting mismatches).
"""

from __future__ import annotations

import dataclasses
import os
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from porter_ext.backends import HOST_LIBRARY, LIBRARIES, BackendSpec, backend_for, get_backend
from porter_ext.record import as_written
from porter_ext.record.cell import exported_rewrite
from porter_ext.replay import transport
from porter_ext.replay.capture import Capture
from porter_ext.replay.plan import ReplayPlan
from porter_ext.replay.run import ReplayResult, ReplaySettings
from porter_ext.replay.worker_side import ReplayRequest
from porter_ext.replay.workers import Job, kernel_place


def control_spec(input_values: Iterable[Any], calls: Iterable[Any]) -> BackendSpec | None:
    """The original run's backend and device: those of its first array input, else the
    library of its first array call on its default device; None for a cell without arrays."""
    for value in input_values:
        backend = backend_for(value)
        if backend is not None:
            device = backend.device_of(value)
            if device == backend.default_device():
                return BackendSpec(backend.name)
            return BackendSpec(backend.name, device)
    for call in calls:
        if call.library in LIBRARIES and get_backend(call.library).available()[0]:
            return BackendSpec(call.library)
    return None


def reference_spec(inputs: dict) -> tuple[BackendSpec, bool] | None:
    """Where the float64 reference runs, and whether its worker needs x64: the original's
    backend (JAX in a worker with x64 on), NumPy where that backend has no float64; None
    when no input is below float64 (the original is its own reference)."""
    from porter_ext.replay.reference import lacks_float64, original_backend
    from porter_ext.replay.workers import can_enable_x64

    backend = original_backend(inputs)
    if backend is None:
        return None
    if not lacks_float64(backend):
        return BackendSpec(backend.name), False
    if can_enable_x64(backend.name):
        return BackendSpec(backend.name), True
    return BackendSpec(HOST_LIBRARY), False


#: seconds the door waits, at most, for a backend's place (a Dask scheduler) to answer
PLACE_TIMEOUT = 5.0
#: inputs at least this big (bytes of arrays) are replayed one backend at a time, without
#: the float64 reference: each replay's outputs are as big as its inputs, so replays at
#: once (and a float64 copy of everything) would hold many times the inputs in memory.
#: From 64 MiB, so that a big input's replays stay within 3x it above the plain cell
#: (three replays at once of a 200 MB input took 4.2x, turn4/attacks/91); below, replays
#: at once cost at most a few hundred MiB however many backends there are
ONE_AT_A_TIME_BYTES = 64 << 20


def one_at_a_time(capture: Capture | None) -> bool:
    """Whether the cell's inputs are big enough to be replayed one backend at a time."""
    return (
        capture is not None
        and capture.parcel is not None
        and capture.parcel.nbytes >= ONE_AT_A_TIME_BYTES
    )


def absent_places(specs: Iterable[BackendSpec], timeout: float | None) -> dict[BackendSpec, str]:
    """The specs whose place (a WHERE that is the backend's business: a Dask scheduler)
    does not answer, each with the reason: skipped at the door, never a replay failure."""
    wait = PLACE_TIMEOUT if timeout is None else min(timeout, PLACE_TIMEOUT)
    found = {}
    for spec in specs:
        if spec.where and kernel_place(spec) is None:
            reason = get_backend(spec.library).place_error(spec.where, wait)
            if reason is not None:
                found[spec] = f"not replayed: {reason}"
    return found


def replay_in_workers(
    plan: ReplayPlan,
    code: str,
    settings: ReplaySettings,
    *,
    control: BackendSpec | None = None,
    reference: tuple[BackendSpec, bool] | None = None,
    finished: Callable[[ReplayResult], None] | None = None,
) -> list[ReplayResult]:
    """The replays of ``code`` on the specs of its ``plan`` (after the control), from the
    inputs the plan captured, in the plan's pool of workers, and the float64
    ``reference`` (role "reference", last; spec and whether it needs x64), run at once.
    Inputs too big for that (`one_at_a_time`) are replayed one backend at a time, the
    control first, without the reference; ``finished`` is then handed each result as it
    comes (to compare it and let its outputs go before the next one runs)."""
    capture, pool, specs = plan.capture, plan.pool, list(plan.specs)
    if capture.parcel is None:
        reason = f"not replayed: {capture.unsendable}"
        results = [ReplayResult(str(s), "skipped", reason=reason) for s in specs]
        if control is not None:
            results.insert(0, ReplayResult(str(control), "skipped", reason=reason, role="control"))
        return results  # and no reference: there is nothing to promote
    absent = absent_places(specs, settings.timeout)
    specs = [s for s in specs if s not in absent]
    bounded = one_at_a_time(capture)
    skipped_reference = None
    if bounded and reference is not None:
        n = capture.parcel.nbytes
        size = f"{n / (1 << 30):.1f} GiB" if n >= 1 << 30 else f"{n / (1 << 20):.0f} MiB"
        why = (
            f"no float64 reference: the cell's inputs are {size}, replayed one "
            "backend at a time and without a float64 copy, to keep memory bounded"
        )
        skipped_reference = ReplayResult(str(reference[0]), "skipped", reason=why, role="reference")
        reference = None
    # a target on the original's own spec is a control already: it is not run twice
    # (except one at a time, where the control runs first, alone)
    shared = control is not None and control in specs and not bounded
    # the control first: a listing keyed by backend keeps the target of the same spec
    wanted = [(control, "control")] if control is not None and not shared else []
    wanted += [(s, "target") for s in specs]
    if reference is not None:
        wanted.append((reference[0], "reference"))
    local = sum(1 for s, _ in wanted if kernel_place(s) is None)
    # local workers run the rewrite this kernel compiled (same Python: marshal), whose
    # sites' slots are numbered here; a kernel elsewhere parses and rewrites the cell
    compiled = exported_rewrite(code, settings.record)
    slots = max(capture.slots, transport.slots_in_use())
    sites = transport.sites_in_use()  # one copy of the table for every request
    plain_codes = as_written.armed_plain_codes()  # for compilers in the worker
    jobs = []
    for spec, role in wanted:
        remote = kernel_place(spec) is not None
        request = ReplayRequest(
            id=secrets.token_hex(8),
            code=code,
            io=plan.io,
            spec=str(spec.local) if remote else str(spec),
            label=str(spec),
            settings=settings,
            states=capture.states,
            inputs=capture.parcel.header()
            if not remote
            else {"spans": capture.parcel.spans, "shm": None},
            exclusive=not remote and local == 1,
            local=not remote,
            remote_kernel=remote,
            role=role,
            cwd=None if remote else os.getcwd(),
            slots=slots,
            sites=sites,
            promote=role == "reference",
            process=capture.process,
            compiled=None if remote else compiled,
            plain_codes=None if remote else plain_codes,
        )
        x64 = role == "reference" and reference is not None and reference[1]
        apart = role == "reference" and not remote
        job = Job(spec, request, capture.parcel, x64=x64, apart=apart, network=settings.network)
        jobs.append(job)
    if bounded:
        results = pool.run(jobs, settings.timeout, at_once=1, finished=finished)
    else:
        results = pool.run(jobs, settings.timeout)
    if skipped_reference is not None:
        results.append(skipped_reference)
    if shared:
        twin = next(r for r in results if r.role == "target" and r.backend == str(control))
        results.insert(0, dataclasses.replace(twin, role="control"))
    at = next((i for i, r in enumerate(results) if r.role == "reference"), len(results))
    results[at:at] = [ReplayResult(str(s), "skipped", reason=r) for s, r in absent.items()]
    return results

"""Replaying a recorded cell on other backends and comparing the replays with the
original run: the glue between the replay and compare stages and the cell model, for the
session's replays and for the verification rounds of ``--fix`` (`porter_ext.fix.verify`).

The original run is the person's and comes first. Before it, the cell's inputs are
captured (serialised for the workers, arrays copied once into shared memory); after it,
the replays run in worker kernels on those pre-run inputs, one per backend at the same
time, with the control replay on the original backend and device beside them, and each
becomes a `ReplayEntry`. An output on which the control disagrees with the original run
is nondeterministic: it is shown, but not counted as a mismatch anywhere. The in-process
replay (``--in-process``) is kept for speed, on a snapshot of the inputs it may change.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io as _io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import ReplayEntry
from porter_ext.record.cell import NO_VALUE, CellRun
from porter_ext.record.syntax import CellSyntax
from porter_ext.replay import shared_blocks
from porter_ext.replay.run import ReplaySettings

IN_PROCESS_WARNING = (
    "porter: --in-process: replays ran inside this kernel; porter cannot keep what they do "
    "(file writes, global state, crashes, endless loops) away from your session"
)


@dataclass
class ReplayPlan:
    """What a cell's replays need before it runs: its analysis, where its array inputs
    live, and (when it will be replayed) the inputs as they are before the run: captured
    for the workers, or a snapshot for an in-process replay."""

    specs: list
    io: Any
    snapshot: dict[str, Any] = field(default_factory=dict)
    input_devices: list[str] = field(default_factory=list)
    default_device: str | None = None
    #: the workers' pre-run inputs (None: in-process, or nothing to replay)
    capture: Any = None
    pool: Any = None
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
    specs: list,
    *,
    pool: Any = None,
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


def replay_entries(
    plan_: ReplayPlan,
    code: str,
    namespace: Mapping[str, Any],
    run: CellRun,
    settings: ReplaySettings,
    policy: Any,
) -> tuple[list[ReplayEntry], list]:
    """Replay on every spec and compare with the original run: the report's replay
    entries and the device findings of the replays."""
    from porter_ext.replay.run import collect_outputs

    try:
        if not plan_.specs:
            return [], []
        if run.exception is not None:
            reason = f"not replayed: the original run raised {type(run.exception).__name__}"
            return [
                ReplayEntry(backend=str(s), status="skipped", reason=reason) for s in plan_.specs
            ], []
        original = collect_outputs(
            plan_.io, namespace, run.value if run.value is not NO_VALUE else NO_VALUE
        )
        from porter_ext.replay.dispatch import one_at_a_time

        streamed = None
        if not plan_.in_process and one_at_a_time(plan_.capture):
            streamed = _Streamed(plan_, code, namespace, original, settings, policy, run.calls)
        results = _replays(plan_, code, namespace, run, settings, streamed)
    finally:
        if plan_.capture is not None:
            plan_.capture.release()
    reference = next((r for r in results if r.role == "reference"), None)
    results = [r for r in results if r.role != "reference"]
    if streamed is not None:  # compared as they came, their outputs let go
        compared = [(r, streamed.rows.get(id(r), [])) for r in results]
        if reference is not None and reference.status == "skipped" and reference.reason:
            for result in results:  # what the numbers were not judged against, and why
                result.notes.append(reference.reason)
    else:
        baseline = _baseline(
            plan_, code, namespace, original, results, settings, policy, reference, run.calls
        )
        compared = [(r, _rows(baseline, r)) for r in results]
    compared = _mark_nondeterministic(compared)
    if not plan_.in_process:  # in this process the shell runs the lines again
        compared = _mark_unrepeated(compared, code)
    entries, findings = [], []
    for result, rows in compared:
        entries.append(
            ReplayEntry(
                backend=result.spec,
                status=result.status,
                seconds=result.seconds,
                error=result.error,
                reason=result.reason or ("; ".join(result.notes) or None),
                outputs=rows,
                calls=result.calls,
                worker=result.worker,
                role=result.role,
                isolation=result.isolation,
            )
        )
        # a replay that never touched its target says nothing about its placement
        if result.role == "target" and result.status in ("ok", "error"):
            findings.extend(result.findings)
    return entries, findings


def _rows(baseline: Any, result: Any) -> list:
    """One replay's rows against ``baseline`` (none for a replay that did not finish)."""
    if result.status not in ("ok", "not_exercised"):
        return []
    return _worker_rows(baseline.compare(result), result)


class _Streamed:
    """Replays compared one by one as they come (inputs too big to hold every replay's
    outputs at once, see `one_at_a_time`): the control, first, makes the baseline; each
    replay's outputs are let go once its rows are made."""

    def __init__(
        self,
        plan_: ReplayPlan,
        code: str,
        namespace: Mapping[str, Any],
        original: Mapping,
        settings: ReplaySettings,
        policy: Any,
        calls: Any,
    ) -> None:
        """The arguments `_baseline` needs (more than 7: it is built from the first
        result, the control, when that comes)."""
        self.context = (plan_, code, namespace, original)
        self.settings, self.policy, self.calls = settings, policy, calls
        self.baseline: Any = None
        #: id of a result -> its rows
        self.rows: dict[int, list] = {}

    def __call__(self, result: Any) -> None:
        if result.role == "reference":
            return
        if self.baseline is None:
            plan_, code, namespace, original = self.context
            control = [result] if result.role == "control" else []
            self.baseline = _baseline(
                plan_,
                code,
                namespace,
                original,
                control,
                self.settings,
                self.policy,
                None,
                self.calls,
            )
        self.rows[id(result)] = _rows(self.baseline, result)
        result.outputs = {}  # the baseline read the control's when it was made
        # their block's pages go now, not when the next replay's answer is read: the
        # next replay runs meanwhile, and its worker fills a block of its own (a cycle
        # of the unpickling can hold the last view: collected first)
        gc.collect()
        shared_blocks.close_unused()


def _replays(
    plan_: ReplayPlan,
    code: str,
    namespace: Mapping[str, Any],
    run: CellRun,
    settings: ReplaySettings,
    finished: Any = None,
) -> list:
    """The cell's replays: in workers (with the control), or in this process;
    ``finished`` sees each worker's result as it comes, when they come one at a time."""
    if plan_.in_process:
        return _in_process(plan_, code, namespace, settings)
    from porter_ext.replay.dispatch import control_spec, reference_spec, replay_in_workers

    control = control_spec(plan_.inputs.values(), run.calls) if plan_.control else None
    # the reference runs beside the other replays, from the same pre-run inputs
    return replay_in_workers(
        code,
        plan_.io,
        plan_.capture,
        list(plan_.specs),
        settings,
        plan_.pool,
        control=control,
        reference=reference_spec(plan_.inputs),
        finished=finished,
    )


def _in_process(
    plan_: ReplayPlan, code: str, namespace: Mapping[str, Any], settings: ReplaySettings
) -> list:
    from porter_ext.compare.devices import device_findings
    from porter_ext.replay.run import replay_all
    from porter_ext.replay.sandbox import close_new_figures, ipython_namespace, shell_of

    held = _io.StringIO()
    shell = shell_of(namespace)
    with (
        contextlib.redirect_stdout(held),
        contextlib.redirect_stderr(held),
        close_new_figures(),
        ipython_namespace(shell, dict(namespace)),
    ):
        results = replay_all(
            code, PreRunNamespace(namespace, plan_.snapshot), plan_.specs, settings, io=plan_.io
        )
    for result in results:
        result.worker = "in-process"
        if result.status in ("ok", "error"):
            result.findings = device_findings(
                result.calls,
                backend=result.spec,
                input_devices=result.input_devices,
                default_device=result.default_device,
                outputs=result.outputs,
            )
    return results


def _worker_rows(rows: list, result: Any) -> list:
    """A worker's outputs arrive as host copies: their devices and dtypes are the replay's
    own (``output_meta``); outputs it could not send back are not comparable."""
    if not result.output_meta and not result.unsent:
        return rows
    fixed = []
    for row in rows:
        meta = result.output_meta.get(row.name)
        root = row.name.partition("[")[0]
        if meta is not None:
            device, dtype = meta
            ok = (
                None
                if device is None or row.expected_device is None
                else device == row.expected_device
            )
            row = dataclasses.replace(row, device=device, dtype=dtype, device_ok=ok)
        elif root in result.unsent:
            row = dataclasses.replace(
                row, within_tolerance=None, note=f"not comparable: {result.unsent[root]}"
            )
        fixed.append(row)
    return fixed


def _replace(row: Any, **changes: Any) -> Any:
    """``row`` with ``changes``, leaving out fields its comparison model does not have."""
    known = {f.name for f in dataclasses.fields(row)}
    return dataclasses.replace(row, **{k: v for k, v in changes.items() if k in known})


def _mark_nondeterministic(compared: list) -> list:
    """Outputs on which the control replay disagreed with the original run: shown, with a
    note, but not counted as mismatches on any backend."""
    control = next((r for r, _ in compared if r.role == "control" and r.status == "ok"), None)
    if control is None:
        return compared
    rows = next(rows for r, rows in compared if r is control)
    differs = {row.name for row in rows if row.within_tolerance is False}
    note = (
        f"nondeterministic: the control replay on {control.spec} (the original backend) "
        "gave a different value, so this output is not compared"
    )
    out = []
    for result, result_rows in compared:
        result_rows = [
            _replace(row, within_tolerance=None, note=note, deterministic=False)
            if row.name in differs
            else _replace(row, deterministic=True)
            for row in result_rows
        ]
        out.append((result, result_rows))
    return out


def _mark_unrepeated(compared: list, code: str) -> list:
    """Outputs made by IPython shell lines that workers do not run again (``out = !cmd``),
    and what the cell computed from them: shown, not compared, and each replay says why."""
    from porter_ext.replay.unrepeated import unrepeated_outputs

    found = unrepeated_outputs(code)
    if not found:
        return compared
    out = []
    for result, rows in compared:
        marked, names = [], {}
        for row in rows:
            root = row.name.partition("[")[0]
            line = found.get(root)
            if line is not None:
                note = f"not compared: it comes from {line}, which the replay does not run"
                row = _replace(
                    row, within_tolerance=None, deterministic=None, difference=None, note=note
                )
                names.setdefault(line, []).append(root)
            marked.append(row)
        for line, roots in names.items():
            shown = ", ".join(dict.fromkeys(roots))
            text = f"not compared: {shown} (from {line}, which replays do not run)"
            if text not in result.notes:  # a target on the control's spec shares its notes
                result.notes.append(text)
        out.append((result, marked))
    return out


def _baseline(
    plan_: ReplayPlan,
    code: str,
    namespace: Mapping[str, Any],
    original: Mapping,
    results: list,
    settings: ReplaySettings,
    policy: Any,
    reference: Any = None,
    calls: Any = (),
) -> Any:
    """What every replay is compared against: the original's outputs, the control replay
    (nondeterminism), the float64 reference (the cell on the original's backend with
    its floating inputs promoted; in a worker, or here for ``--in-process``) and the
    outputs a partition call made (from the original run's ``calls``)."""
    from porter_ext.compare.outputs import Baseline
    from porter_ext.compare.producers import partition_outputs
    from porter_ext.guard import guarded
    from porter_ext.replay.reference import reference_replay

    control = next((r for r in results if r.role == "control" and r.status == "ok"), None)
    inputs = plan_.inputs or plan_.snapshot
    if plan_.in_process and any(r.status in ("ok", "not_exercised") for r in results):
        with guarded("the float64 reference replay"):
            reference = reference_replay(
                code, PreRunNamespace(namespace, plan_.snapshot), inputs, settings, io_=plan_.io
            )
    made_by = partition_outputs(code, calls)
    return Baseline(
        original, policy, control=control, reference=reference, inputs=inputs, made_by=made_by
    )


def original_findings(
    entry: CellEntry, plan_: ReplayPlan | None, namespace: Mapping[str, Any], run: CellRun
) -> list:
    """Device findings of the original run: host syncs, mixed devices, traced device
    reads, and outputs that landed on the default device while the inputs live elsewhere."""
    from porter_ext.compare.devices import device_findings

    if plan_ is None:
        devices = sorted({d for c in entry.calls for d in c.devices_in if d != "traced"})
        return device_findings(
            entry.calls, backend=None, input_devices=devices, default_device=None
        )
    from porter_ext.replay.run import collect_outputs

    outputs = collect_outputs(plan_.io, namespace, run.value) if run.exception is None else None
    return device_findings(
        entry.calls,
        backend=None,
        input_devices=plan_.input_devices,
        default_device=plan_.default_device,
        outputs=outputs,
    )

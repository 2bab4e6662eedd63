"""Replaying a recorded cell on other backends and comparing the replays with the
original run: the glue between the replay and compare stages and the cell model, for the
session's replays and for the verification rounds of ``--fix`` (`porter_ext.fix.verify`).

The original run is the person's and comes first. Before it, the cell's inputs are
captured (`porter_ext.replay.plan`); after it, the replays run in worker kernels on those
pre-run inputs, one per backend at the same time, with the control replay on the
original backend and device beside them, and each becomes a `ReplayEntry`. An output on
which the control disagrees with the original run is nondeterministic: it is shown, but
not counted as a mismatch anywhere. The in-process replay (``--in-process``) is kept for
speed, on a snapshot of the inputs it may change.

What is fixed for one cell's replays (its plan, code, namespace, settings and tolerance
policy) travels as one `ReplayJob` from the session through every layer here.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io as _io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import ReplayEntry
from porter_ext.record.cell import CellRun
from porter_ext.replay import shared_blocks
from porter_ext.replay.plan import PreRunNamespace, ReplayPlan
from porter_ext.replay.plan import plan as plan  # the fix stage's rounds plan from here
from porter_ext.replay.run import ReplaySettings

if TYPE_CHECKING:
    from porter_ext.compare.outputs import Baseline
    from porter_ext.compare.tolerance import TolerancePolicy
    from porter_ext.model.comparison import OutputComparison
    from porter_ext.replay.run import ReplayResult

IN_PROCESS_WARNING = (
    "porter: --in-process: replays ran inside this kernel; porter cannot keep what they do "
    "(file writes, global state, crashes, endless loops) away from your session"
)


@dataclass(frozen=True)
class ReplayJob:
    """What is fixed for one cell's replays, made once by the session: the `ReplayPlan`
    made before the run (None: the cell is not replayed), the code the replays run, the
    person's namespace, the replays' settings and the tolerance policy that judges them
    (None: porter's own). The layers below take it whole, not its values one by one."""

    plan: ReplayPlan | None
    code: str
    namespace: Mapping[str, Any]
    settings: ReplaySettings
    policy: TolerancePolicy | None = None


def replay_entries(
    plan_: ReplayPlan,
    code: str,
    namespace: Mapping[str, Any],
    run: CellRun,
    settings: ReplaySettings,
    policy: TolerancePolicy | None,
) -> tuple[list[ReplayEntry], list]:
    """`compare_replays` of the job these values make (the fix stage's rounds, which
    replay a rewrite of the cell with the original's plan, hand them one by one)."""
    return compare_replays(ReplayJob(plan_, code, namespace, settings, policy), run)


def compare_replays(job: ReplayJob, run: CellRun) -> tuple[list[ReplayEntry], list]:
    """Replay the cell of ``job`` on every spec of its plan and compare each replay with
    the original ``run``: the report's replay entries and the replays' device findings."""
    from porter_ext.replay.run import collect_outputs

    plan_ = job.plan
    if plan_ is None:
        return [], []
    try:
        if not plan_.specs:
            return [], []
        if run.exception is not None:
            reason = f"not replayed: the original run raised {type(run.exception).__name__}"
            return [
                ReplayEntry(backend=str(s), status="skipped", reason=reason) for s in plan_.specs
            ], []
        original = collect_outputs(plan_.io, job.namespace, run.value)
        from porter_ext.replay.dispatch import one_at_a_time

        streamed = None
        if not plan_.in_process and one_at_a_time(plan_.capture):
            streamed = _Streamed(job, original, run.calls)
        results = _replays(job, run, streamed)
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
        baseline = _baseline(job, original, results, reference, run.calls)
        compared = [(r, _rows(baseline, r)) for r in results]
    compared = _mark_nondeterministic(compared)
    if not plan_.in_process:  # in this process the shell runs the lines again
        compared = _mark_unrepeated(compared, job.code)
    entries, findings = [], []
    for result, rows in compared:
        entries.append(
            ReplayEntry.of(
                result, rows, result.calls, result.reason or "; ".join(result.notes) or None
            )
        )
        # a replay that never touched its target says nothing about its placement
        if result.role == "target" and result.status in ("ok", "error"):
            findings.extend(result.findings)
    return entries, findings


def _rows(baseline: Baseline, result: ReplayResult) -> list:
    """One replay's rows against ``baseline`` (none for a replay that did not finish)."""
    if result.status not in ("ok", "not_exercised"):
        return []
    return _worker_rows(baseline.compare(result), result)


class _Streamed:
    """Replays compared one by one as they come (inputs too big to hold every replay's
    outputs at once, see `one_at_a_time`): the control, first, makes the baseline; each
    replay's outputs are let go once its rows are made."""

    def __init__(self, job: ReplayJob, original: Mapping, calls: Any) -> None:
        """What `_baseline` needs: it is built from the first result, the control, when
        that comes."""
        self.job, self.original, self.calls = job, original, calls
        self.baseline: Baseline | None = None
        #: id of a result -> its rows
        self.rows: dict[int, list] = {}

    def __call__(self, result: ReplayResult) -> None:
        if result.role == "reference":
            return
        if self.baseline is None:
            control = [result] if result.role == "control" else []
            self.baseline = _baseline(self.job, self.original, control, calls=self.calls)
        self.rows[id(result)] = _rows(self.baseline, result)
        result.outputs = {}  # the baseline read the control's when it was made
        # their block's pages go now, not when the next replay's answer is read: the
        # next replay runs meanwhile, and its worker fills a block of its own (a cycle
        # of the unpickling can hold the last view: collected first)
        gc.collect()
        shared_blocks.close_unused()


def _replays(job: ReplayJob, run: CellRun, finished: _Streamed | None = None) -> list:
    """The cell's replays: in workers (with the control), or in this process;
    ``finished`` sees each worker's result as it comes, when they come one at a time."""
    plan_ = job.plan
    if plan_.in_process:
        return _in_process(job)
    from porter_ext.replay.dispatch import control_spec, reference_spec, replay_in_workers

    control = control_spec(plan_.inputs.values(), run.calls) if plan_.control else None
    # the reference runs beside the other replays, from the same pre-run inputs
    return replay_in_workers(
        plan_,
        job.code,
        job.settings,
        control=control,
        reference=reference_spec(plan_.inputs),
        finished=finished,
    )


def _in_process(job: ReplayJob) -> list:
    from porter_ext.compare.devices import replay_findings
    from porter_ext.replay.run import replay_all
    from porter_ext.replay.sandbox import close_new_figures, ipython_namespace, shell_of

    plan_, namespace = job.plan, job.namespace
    held = _io.StringIO()
    shell = shell_of(namespace)
    with (
        contextlib.redirect_stdout(held),
        contextlib.redirect_stderr(held),
        close_new_figures(),
        ipython_namespace(shell, dict(namespace)),
    ):
        before = PreRunNamespace(namespace, plan_.snapshot)
        results = replay_all(job.code, before, plan_.specs, job.settings, io=plan_.io)
    for result in results:
        result.worker = "in-process"
        result.findings = replay_findings(result, result.outputs)
    return results


def _worker_rows(rows: list[OutputComparison], result: ReplayResult) -> list[OutputComparison]:
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
        f"nondeterministic: the control replay on {control.backend} (the original backend) "
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
    job: ReplayJob,
    original: Mapping,
    results: list,
    reference: ReplayResult | None = None,
    calls: Any = (),
) -> Baseline:
    """What every replay is compared against: the original's outputs, the control replay
    (nondeterminism), the float64 reference (the cell on the original's backend with
    its floating inputs promoted; in a worker, or here for ``--in-process``) and the
    outputs a partition call made (from the original run's ``calls``)."""
    from porter_ext.compare.outputs import Baseline
    from porter_ext.compare.producers import partition_outputs
    from porter_ext.guard import guarded
    from porter_ext.replay.reference import reference_replay

    plan_ = job.plan
    control = next((r for r in results if r.role == "control" and r.status == "ok"), None)
    inputs = plan_.inputs or plan_.snapshot
    if plan_.in_process and any(r.status in ("ok", "not_exercised") for r in results):
        with guarded("the float64 reference replay"):
            before = PreRunNamespace(job.namespace, plan_.snapshot)
            reference = reference_replay(job.code, before, inputs, job.settings, io_=plan_.io)
    made_by = partition_outputs(job.code, calls)
    return Baseline(
        original, job.policy, control=control, reference=reference, inputs=inputs, made_by=made_by
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

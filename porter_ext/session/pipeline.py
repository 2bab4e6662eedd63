"""Replaying a recorded cell on other backends, for the session: the glue between the
replay and compare stages and the report model.

The original run is the person's and comes first; replays run afterwards on the inputs
as they were *before* the original run (a snapshot of what the cell reads and may
change), with their printed output held back, and each becomes a `ReplayEntry`.
"""

from __future__ import annotations

import contextlib
import io as _io
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from porter_ext.record.cell import NO_VALUE, CellRun
from porter_ext.replay.run import ReplaySettings
from porter_ext.report.model import CellEntry, ReplayEntry


@dataclass
class ReplayPlan:
    """What the session needs before a cell runs: its analysis, where its array inputs
    live, and (when it will be replayed) the pre-run snapshot of its inputs."""

    specs: list
    io: Any
    snapshot: dict[str, Any] = field(default_factory=dict)
    input_devices: list[str] = field(default_factory=list)
    default_device: str | None = None


class PreRunNamespace(dict):
    """The person's namespace as it was before the cell ran: a copy holding the snapshot of
    the inputs the cell rebinds or mutates. ``person`` is the real namespace, so that the
    replay can tell the person's own functions (whose globals are the real one)."""

    def __init__(self, person: Mapping[str, Any], snapshot: Mapping[str, Any]):
        super().__init__(person)
        self.update(snapshot)
        self.person = person


def plan(code: str, namespace: Mapping[str, Any], specs: list) -> ReplayPlan:
    """Analyse the cell and, when it will be replayed, snapshot the inputs it may change."""
    from porter_ext.backends import backend_for
    from porter_ext.replay.analysis import analyse
    from porter_ext.replay.inputs import input_devices, snapshot, user_callables

    io = analyse(code)
    result = ReplayPlan(specs=specs, io=io, input_devices=input_devices(io, namespace))
    for name in io.inputs:
        backend = backend_for(namespace.get(name))
        if backend is not None:
            result.default_device = backend.default_device()
            break
    if not specs:
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
    from porter_ext.compare.devices import device_findings
    from porter_ext.compare.outputs import compare_outputs
    from porter_ext.replay.run import collect_outputs, replay_all

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
    held = _io.StringIO()
    with contextlib.redirect_stdout(held), contextlib.redirect_stderr(held):
        results = replay_all(
            code,
            PreRunNamespace(namespace, plan_.snapshot),
            plan_.specs,
            settings,
            io=plan_.io,
        )
    entries, findings = [], []
    for result in results:
        outputs = []
        if result.status == "ok":
            outputs = _with_error_summaries(
                compare_outputs(original, result, policy), original, result
            )
        entries.append(
            ReplayEntry(
                backend=result.spec,
                status=result.status,
                seconds=result.seconds,
                error=result.error,
                reason=result.reason or ("; ".join(result.notes) or None),
                outputs=outputs,
                calls=result.calls,
            )
        )
        if result.status in ("ok", "error"):
            findings.extend(
                device_findings(
                    result.calls,
                    backend=result.spec,
                    input_devices=result.input_devices,
                    default_device=result.default_device,
                    outputs=result.outputs,
                )
            )
    return entries, findings


def _with_error_summaries(comparisons: list, original: Mapping, result: Any) -> list:
    """Attach the error histogram (and map, for 2-D) the report plots to mismatched outputs."""
    from porter_ext.report.error_summary import with_error_summary

    out = []
    for comp in comparisons:
        if comp.within_tolerance is False and comp.name in original and comp.name in result.outputs:
            # a summary is a nicety: the comparison itself stands without it
            with contextlib.suppress(Exception):
                comp = with_error_summary(
                    comp, _host(original[comp.name]), _host(result.outputs[comp.name])
                )
        out.append(comp)
    return out


def _host(value: Any) -> Any:
    from porter_ext.backends import backend_for

    backend = backend_for(value)
    return backend.to_host(value) if backend is not None else value


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

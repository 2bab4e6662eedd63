"""A replay's outputs against the original run's: numbers side by side, and where each landed.

`Baseline` holds what every replay of one cell is compared against: the original's
outputs on the host (moved once), their float64 references (from the reference replay),
and which outputs are nondeterministic (where the control replay on the original's own
backend disagreed with the original). `Baseline.compare` then gives each replay's rows.

Outputs stay bounded: arrays (and lists of arrays, as their arrays) are compared element
by element; a list or dict of numbers is one value, converted once; strings and lists of
them are compared by equality; dtypes by name (``numpy.dtype('int64')`` is
``torch.int64``); anything else (a model object, a plot and its artists, inside a
container too) is not compared. An output gives one row per leaf while it has at most
``MAX_LEAF_ROWS`` leaves, and one row for all of them beyond that, so a 20 000-element
list is one row. What is not data (modules, namespaces such as ``xp``, functions,
classes) is left out. An output made by a partition call (`producers.partition_outputs`)
is compared as a partition. The device of each replay value is checked against the
device the replay's inputs shared, or the backend's default device when the cell had no
array inputs; a replay that never touched its target (``not_exercised``) says nothing
about placement, so its devices are not judged.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from porter_ext.backends import device_of, dtype_name, is_array
from porter_ext.compare.host import (
    narrower,
    paired,
    to_host,
    working_dtype,
)
from porter_ext.compare.kinds import Partition
from porter_ext.compare.leaves import as_array
from porter_ext.compare.numeric import Judging, NumericDiff, compare_values
from porter_ext.compare.reference import LeafReference, leaf_reference
from porter_ext.compare.summary import histogram_of, map_of
from porter_ext.compare.tolerance import REFERENCE_RULE, ReferenceRule, TolerancePolicy, get_policy
from porter_ext.model.comparison import OutputComparison
from porter_ext.replay.run import leaves

if TYPE_CHECKING:
    from porter_ext.compare.producers import PartitionCall
    from porter_ext.replay.run import ReplayResult

#: an output with more leaves than this is one row
MAX_LEAF_ROWS = 8
#: which difference an aggregated row names, most telling first
_DIFFERENCE_ORDER = ("shape_changed", "dtype_changed", "numeric", "sign_only", "order_only")


def _is_code(value: object) -> bool:
    from porter_ext.record.strict import NamespaceView

    kinds = (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type, NamespaceView)
    return isinstance(value, kinds)


def expected_device(input_devices: list[str], default_device: str | None) -> str | None:
    """Where outputs should land: the one device of the array inputs; the default device
    when there were no array inputs; None (no expectation) when inputs were on several."""
    devices = [d for d in dict.fromkeys(input_devices) if d != "traced"]
    if len(devices) == 1:
        return devices[0]
    return default_device if not devices else None


def _partitions(
    made_by: Mapping[str, PartitionCall],
    host: Mapping[str, Any],
    original: Mapping[str, Any],
    inputs: Mapping[str, Any],
) -> dict[str, Partition]:
    """The outputs made by a partition call, their ``kth`` and ``axis`` read (a name the
    cell passed: its value after the run, or as an input) and, for indices, the array
    they index on the host; calls whose arguments cannot be read are left out."""

    def value(name: str) -> Any:
        return original[name] if name in original else inputs.get(name)

    found = {}
    for path, call in made_by.items():
        if path not in host:
            continue
        kth = _ints(value(call.kth)) if isinstance(call.kth, str) else call.kth
        axis = value(call.axis) if isinstance(call.axis, str) else call.axis
        if isinstance(axis, int | np.integer) and not isinstance(axis, bool):
            axis = int(axis)
        elif axis is not None:
            continue
        if kth is None:
            continue
        data = None
        if call.indices and call.array is not None:
            data = as_array(to_host(value(call.array), call.array, {}))
        found[path] = Partition(kth, axis, call.indices, data)
    return found


def _ints(value: Any) -> tuple[int, ...] | None:
    """``kth`` as the cell gave it: an int or a sequence of them."""
    items = value if isinstance(value, list | tuple) else [value]
    if not items or not all(
        isinstance(v, int | np.integer) and not isinstance(v, bool) for v in items
    ):
        return None
    return tuple(int(v) for v in items)


class Baseline:
    """The original run of one cell, ready for every replay to be compared with.

    ``control``: the control replay on the original's backend (outputs it disagrees on
    are nondeterministic: marked ``deterministic: false`` and not judged). ``reference``:
    the float64 reference replay (its floating outputs become `LeafReference`s where the
    original agrees with them). ``inputs``: the cell's inputs, for the working precision
    and for what a partition's indices index. ``made_by``: the outputs a partition call
    made (`producers.partition_outputs`), compared as partitions.
    """

    def __init__(
        self,
        original: Mapping[str, Any],
        policy: TolerancePolicy | None = None,
        *,
        control: ReplayResult | None = None,
        reference: ReplayResult | None = None,
        inputs: Mapping[str, Any] | None = None,
        rule: ReferenceRule = REFERENCE_RULE,
        made_by: Mapping[str, PartitionCall] | None = None,
    ):
        self.original = {n: v for n, v in original.items() if not _is_code(v)}
        self.policy = policy or get_policy("porter")
        self.rule = rule
        errors: dict[str, str] = {}
        self.host = {n: to_host(v, n, errors) for n, v in self.original.items()}
        self.errors = {p: f"original: {e}" for p, e in errors.items()}
        self.working = working_dtype([*self.original.values(), *(inputs or {}).values()])
        self.partitions = _partitions(made_by or {}, self.host, original, inputs or {})
        self.references: dict[str, LeafReference] = {}
        #: leaf path -> why its reference is not used (only for floating leaves)
        self.reference_notes: dict[str, str] = {}
        if reference is not None and reference.status == "ok":
            self._take_reference(reference)
        self.control = control if control is not None and control.status == "ok" else None
        self.nondeterministic: set[str] = set()
        if self.control is not None:
            for diffs in self._diffs(self.control).values():
                self.nondeterministic.update(d.name for d in diffs if d.within_tolerance is False)

    def _take_reference(self, reference: ReplayResult) -> None:
        for name, host in self.host.items():
            if name not in reference.outputs:
                continue
            ref_host = to_host(reference.outputs[name], name, {})
            for path, o, r in paired(host, ref_host, name):
                arr = as_array(o)
                if arr is None or arr.dtype.kind not in "fc":
                    continue
                found = leaf_reference(o, r, self.rule, self.working)
                if isinstance(found, LeafReference):
                    self.references[path] = found
                else:
                    self.reference_notes[path] = found

    def _diffs(self, replay: ReplayResult) -> dict[str, list[NumericDiff]]:
        """Output name -> its leaves' diffs against the original."""
        out: dict[str, list[NumericDiff]] = {}
        # a Python float the replay computed from its own float32 arrays (a backend's
        # default dtype) is judged as float32 too
        working = narrower(self.working, working_dtype(replay.outputs.values()))
        for name, host in self.host.items():
            if name not in replay.outputs:
                continue
            errors: dict[str, str] = {}
            actual = to_host(replay.outputs[name], name, errors)
            judging = Judging(self.policy, self.references, working, self.rule, self.partitions)
            out[name] = compare_values(name, host, actual, judging)
            for diff_index, diff in enumerate(out[name]):
                if diff.name in errors:
                    out[name][diff_index] = replace(diff, note=errors[diff.name])
        return out

    def compare(self, replay: ReplayResult) -> list[OutputComparison]:
        """The rows of one replay (a target, or the control itself). Empty for a replay
        that did not finish (its status and error say why)."""
        if replay.status not in ("ok", "not_exercised"):
            return []  # a failed replay's half-made values would only mislead
        # a replay that never touched its target holds another library's arrays: where
        # they landed says nothing about the target's placement
        expected = (
            None
            if replay.status == "not_exercised"
            else expected_device(replay.input_devices, replay.default_device)
        )
        diffs = self._diffs(replay)
        rows: list[OutputComparison] = []
        for name in self.host:
            if name not in replay.outputs:
                rows.append(_absent(name, "missing in the replay", False, replay, expected))
                continue
            found = leaves(replay.outputs[name], name, {})
            leaf_rows = [self._row(d, found.get(d.name), replay, expected) for d in diffs[name]]
            rows.extend(
                leaf_rows if len(leaf_rows) <= MAX_LEAF_ROWS else [_merged(name, leaf_rows)]
            )
        for name, value in replay.outputs.items():
            if name not in self.host and not _is_code(value) and name not in self.original:
                rows.append(_absent(name, "not in the original run", None, replay, expected))
        return rows

    def _row(
        self, diff: NumericDiff, leaf: Any, replay: ReplayResult, expected: str | None
    ) -> OutputComparison:
        """The leaf's row, with what the replay says of it: where the leaf landed, the
        conversion of its input, determinism (with a control) and, for a mismatch, the
        plotted summaries."""
        path = diff.name
        meta = replay.output_meta.get(path) if replay.output_meta else None
        if meta is not None:
            device, dtype = meta
        else:
            device = device_of(leaf) if leaf is not None else None
            dtype = dtype_name(leaf) if is_array(leaf) else diff.dtype
        shape = [int(n) for n in leaf.shape] if is_array(leaf) else diff.shape
        root = path.partition("[")[0]
        conversion = replay.conversions.get(path, replay.conversions.get(root))
        note = self.errors.get(path) or diff.note
        within, deterministic = diff.within_tolerance, None
        if self.control is not None:
            deterministic = path not in self.nondeterministic
            if not deterministic:
                note = (
                    f"nondeterministic: the control replay on {self.control.backend} (the "
                    "original backend) gave a different value; not compared"
                )
                if replay is not self.control:
                    within = None
        if note is None and path in self.reference_notes and diff.compared:
            note = f"per-dtype tolerance: {self.reference_notes[path]}"
        if root in getattr(replay, "unsent", {}):
            within, note = None, f"not comparable: {replay.unsent[root]}"
        mismatch = within is False
        return replace(
            diff.comparison(),
            shape=shape,
            dtype=dtype,
            device=device,
            expected_device=expected,
            device_ok=None if device is None or expected is None else device == expected,
            within_tolerance=within,
            conversion=conversion,
            note=note,
            difference=diff.difference
            if within is not None or diff.difference in ("shape_changed", "dtype_changed")
            else None,
            deterministic=deterministic,
            error_histogram=histogram_of(diff.error_sample) if mismatch else None,
            error_map=map_of(diff.error_blocks) if mismatch else None,
        )


def _merged(name: str, rows: list[OutputComparison]) -> OutputComparison:
    """One row for an output of many leaves: the worst of each measure, the worst leaf named."""

    def worst(key: str) -> float | None:
        values = [getattr(r, key) for r in rows if getattr(r, key) is not None]
        return max(values) if values else None

    verdicts = [r.within_tolerance for r in rows]
    within = False if False in verdicts else (None if all(v is None for v in verdicts) else True)
    kinds = {r.difference for r in rows}
    difference = next((k for k in _DIFFERENCE_ORDER if k in kinds), None)
    bad = [r for r in rows if r.within_tolerance is False] or [
        r for r in rows if r.difference == difference
    ]
    pick = max(bad or rows, key=lambda r: r.max_abs_err or 0.0)
    counts = [r.mismatched for r in rows if r.mismatched is not None]
    devices = {r.device for r in rows}
    dtypes = {r.dtype for r in rows}
    oks = {r.device_ok for r in rows} - {None}
    note = f"{len(rows)} leaves compared as one output"
    if bad:
        note += (
            f"; {len([r for r in rows if r.within_tolerance is False])} differ, worst {pick.name}"
        )
        if pick.note:
            note += f": {pick.note}"
    return replace(
        pick,
        name=name,
        shape=None,
        dtype=dtypes.pop() if len(dtypes) == 1 else None,
        device=devices.pop() if len(devices) == 1 else None,
        device_ok=None if not oks else all(oks),
        max_abs_err=worst("max_abs_err"),
        max_rel_err=worst("max_rel_err"),
        mismatched=sum(counts) if counts else None,
        nan_mismatch=any(r.nan_mismatch for r in rows),
        within_tolerance=within,
        reference_err=worst("reference_err"),
        difference=difference,
        note=note,
        deterministic=None
        if pick.deterministic is None
        else all(r.deterministic is not False for r in rows),
    )


def _absent(
    name: str, note: str, within: bool | None, replay: ReplayResult, expected: str | None
) -> OutputComparison:
    return OutputComparison(
        name=name,
        shape=None,
        dtype=None,
        device=None,
        expected_device=expected,
        device_ok=None,
        max_abs_err=None,
        max_rel_err=None,
        mismatched=None,
        nan_mismatch=None,
        within_tolerance=within,
        rtol=None,
        atol=None,
        conversion=replay.conversions.get(name),
        note=note,
    )


def compare_outputs(
    original: Mapping[str, Any],
    replay: ReplayResult,
    policy: TolerancePolicy | None = None,
    *,
    control: ReplayResult | None = None,
    reference: ReplayResult | None = None,
    inputs: Mapping[str, Any] | None = None,
    made_by: Mapping[str, PartitionCall] | None = None,
) -> list[OutputComparison]:
    """Compare each output of the original run (name → value, ``_`` for the last value)
    with the replay's: numbers (against the float64 ``reference`` where there is one),
    shape, dtype, determinism (with a ``control``) and the device of the replay value.
    ``made_by`` names the outputs a partition call made (`producers.partition_outputs`).
    Several replays of one cell are compared with one `Baseline` (``.compare``), which
    does the original's work once."""
    baseline = Baseline(
        original, policy, control=control, reference=reference, inputs=inputs, made_by=made_by
    )
    return baseline.compare(replay)

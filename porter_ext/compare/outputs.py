"""A replay's outputs against the original run's: numbers side by side, and where each landed.

Both sides move to the host (zero-copy where the library allows) and go through
`compare_values`, one comparison per leaf of nested containers, named by its path
(``out[0]['a']``). What is not data (modules, namespaces such as ``xp``, functions,
classes) is not an output worth a row and is left out. The device of each replay value
is checked against the device the replay's inputs shared, or the backend's default
device when the cell had no array inputs.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from porter_ext.backends import backend_for, device_of, is_array
from porter_ext.compare.model import OutputComparison
from porter_ext.compare.numeric import NumericDiff, compare_values
from porter_ext.compare.tolerance import TolerancePolicy, get_policy

if TYPE_CHECKING:
    from porter_ext.replay.run import ReplayResult


class _NotOnHost:
    """Stands in for a value that could not be moved to the host, with the reason."""

    def __init__(self, reason: str):
        self.reason = reason


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


def to_host(value: Any, path: str, errors: dict[str, str]) -> Any:
    """``value`` with every array moved to host NumPy, containers rebuilt as plain ones."""
    if is_array(value):
        backend = backend_for(value)
        if backend is None:
            return value
        try:
            return backend.to_host(value)
        except Exception as error:
            errors[path] = f"could not move to the host: {type(error).__name__}: {error}"
            return _NotOnHost(errors[path])
    if isinstance(value, Mapping):
        return {k: to_host(v, f"{path}[{k!r}]", errors) for k, v in value.items()}
    if isinstance(value, list | tuple):
        items = [to_host(v, f"{path}[{i}]", errors) for i, v in enumerate(value)]
        return items if isinstance(value, list) else tuple(items)
    return value


def leaves(value: Any, path: str, out: dict[str, Any]) -> dict[str, Any]:
    """Path → leaf, with the path spelling of `compare_values`."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            leaves(v, f"{path}[{k!r}]", out)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            leaves(v, f"{path}[{i}]", out)
    else:
        out[path] = value
    return out


def _dtype(value: Any) -> str | None:
    dtype = getattr(value, "dtype", None)
    return None if dtype is None else str(dtype).rpartition(".")[2]


def _row(diff: NumericDiff, leaf: Any, replay: ReplayResult, expected: str | None,
         errors: dict[str, str]) -> OutputComparison:  # fmt: skip
    device = device_of(leaf) if leaf is not None else None
    if is_array(leaf):
        shape, dtype = [int(n) for n in leaf.shape], _dtype(leaf)
    else:
        shape = list(diff.shape) if diff.shape is not None else None
        dtype = diff.dtype
    root = diff.path.partition("[")[0]
    conversion = replay.conversions.get(diff.path, replay.conversions.get(root))
    return OutputComparison(
        name=diff.path, shape=shape, dtype=dtype, device=device, expected_device=expected,
        device_ok=None if device is None or expected is None else device == expected,
        max_abs_err=diff.max_abs_err, max_rel_err=diff.max_rel_err,
        mismatched=diff.mismatched, nan_mismatch=diff.nan_mismatch,
        within_tolerance=diff.within_tolerance, rtol=diff.rtol, atol=diff.atol,
        conversion=conversion, note=errors.get(diff.path) or diff.reason,
    )  # fmt: skip


def _absent(name: str, note: str, within: bool | None, replay: ReplayResult,
            expected: str | None) -> OutputComparison:  # fmt: skip
    return OutputComparison(
        name=name, shape=None, dtype=None, device=None, expected_device=expected,
        device_ok=None, max_abs_err=None, max_rel_err=None, mismatched=None,
        nan_mismatch=None, within_tolerance=within, rtol=None, atol=None,
        conversion=replay.conversions.get(name), note=note,
    )  # fmt: skip


def compare_outputs_detailed(
    original: Mapping[str, Any], replay: ReplayResult, policy: TolerancePolicy | None = None
) -> list[tuple[OutputComparison, NumericDiff | None]]:
    """`compare_outputs`, each row with the `NumericDiff` behind it (its error histogram
    and map are what the report plots); None for outputs missing on one side."""
    if replay.status != "ok":
        return []  # a failed replay's half-made values would only mislead
    policy = policy or get_policy("porter")
    expected = expected_device(replay.input_devices, replay.default_device)
    rows: list[tuple[OutputComparison, NumericDiff | None]] = []
    for name, value in original.items():
        if _is_code(value):
            continue
        if name not in replay.outputs:
            rows.append((_absent(name, "missing in the replay", False, replay, expected), None))
            continue
        actual = replay.outputs[name]
        errors: dict[str, str] = {}
        host_expected = to_host(value, name, errors)  # the original's failures first
        errors = {p: f"original: {e}" for p, e in errors.items()}
        host_actual = to_host(actual, name, errors)
        found = leaves(actual, name, {})
        for diff in compare_values(name, host_expected, host_actual, policy):
            rows.append((_row(diff, found.get(diff.path), replay, expected, errors), diff))
    for name, value in replay.outputs.items():
        if name not in original and not _is_code(value):
            rows.append((_absent(name, "not in the original run", None, replay, expected), None))
    return rows


def compare_outputs(
    original: Mapping[str, Any], replay: ReplayResult, policy: TolerancePolicy | None = None
) -> list[OutputComparison]:
    """Compare each output of the original run (name → value, ``_`` for the last value)
    with the replay's: numbers, shape, dtype and device of the replay value. Empty for a
    replay that did not finish (its status and error say why)."""
    return [row for row, _ in compare_outputs_detailed(original, replay, policy)]

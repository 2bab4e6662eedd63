"""`compare_outputs`: a replay's values against the original's, leaf by leaf, with devices."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.compare import (
    ErrorHistogram,
    compare_outputs,
    expected_device,
    get_policy,
)
from porter_ext.record.strict import strict_namespace
from porter_ext.replay import ReplayResult

torch = pytest.importorskip("torch")
xps = pytest.importorskip("array_api_strict")
POLICY = get_policy("porter")


def replay(outputs: dict, **kw) -> ReplayResult:
    fields = {"status": "ok", "default_device": "cpu", "input_devices": ["cpu"], **kw}
    return ReplayResult(backend="torch", outputs=outputs, **fields)


def test_expected_device() -> None:
    assert expected_device(["cpu:1", "cpu:1"], "cpu:0") == "cpu:1"
    assert expected_device([], "cpu:0") == "cpu:0"
    assert expected_device(["cpu:0", "cpu:1"], "cpu:0") is None
    assert expected_device(["traced", "cpu:1"], "cpu:0") == "cpu:1"


def test_nested_outputs_give_one_row_per_leaf() -> None:
    a, b = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.ones(2)
    original = {
        "out": (a, {"b": b, "n": 2.0}),
        "s": "text",
        "mod": np,
        "f": len,
        "xp": strict_namespace(np),
        "g": lambda v: v,
    }
    result = replay(
        {"out": [torch.from_numpy(a.copy()), {"b": torch.from_numpy(b), "n": 2.0}], "s": "text"},
        conversions={"out[0]": "zero_copy", "s": "copy: because"},
    )
    rows = {row.name: row for row in compare_outputs(original, result, POLICY)}
    assert list(rows) == ["out[0]", "out[1]['b']", "out[1]['n']", "s"]
    first = rows["out[0]"]
    assert (first.shape, first.dtype, first.device) == ([2, 3], "float32", "cpu")
    assert first.expected_device == "cpu" and first.device_ok and first.within_tolerance
    assert (first.rtol, first.atol) == (1e-5, 1e-6) and first.conversion == "zero_copy"
    assert rows["out[1]['b']"].dtype == "float64" and rows["out[1]['b']"].conversion is None
    assert rows["out[1]['n']"].device is None and rows["out[1]['n']"].device_ok is None
    assert rows["out[1]['n']"].within_tolerance and rows["out[1]['n']"].shape == []
    text = rows["s"]
    assert text.within_tolerance and text.note is None  # compared by equality
    assert text.conversion == "copy: because"  # the input of the same name


def test_missing_and_extra_outputs() -> None:
    result = replay({"extra": np.ones(1), "same": 1})
    rows = compare_outputs({"gone": np.ones(1), "same": 1}, result, POLICY)
    by_name = {row.name: row for row in rows}
    assert by_name["gone"].within_tolerance is False
    assert by_name["gone"].note == "missing in the replay"
    assert by_name["extra"].within_tolerance is None
    assert by_name["extra"].note == "not in the original run"
    assert by_name["same"].within_tolerance


def test_a_mismatch_is_counted() -> None:
    expected = np.linspace(0, 1, 100)
    actual = torch.from_numpy(expected.copy())
    actual[:10] += 1e-3
    (row,) = compare_outputs({"y": expected}, replay({"y": actual}), POLICY)
    assert row.within_tolerance is False and row.mismatched == 10
    assert row.max_abs_err == pytest.approx(1e-3) and row.difference == "numeric"
    # the summary comes from the same pass: every element counted once
    assert isinstance(row.error_histogram, ErrorHistogram)
    assert sum(row.error_histogram.counts) + row.error_histogram.nonfinite == 100
    (same,) = compare_outputs({"y": expected}, replay({"y": torch.from_numpy(expected)}), POLICY)
    assert same.within_tolerance and same.error_histogram is None  # kept for mismatches only


def test_devices_are_checked_against_the_inputs() -> None:
    on1 = xps.asarray([1.0, 2.0], device=xps.Device("device1"))
    on0 = xps.asarray([1.0, 2.0])
    result = ReplayResult(
        backend="strict:device1",
        status="ok",
        outputs={"a": on1, "b": on0},
        default_device="CPU_DEVICE",
        input_devices=["device1"],
    )
    rows = {r.name: r for r in compare_outputs({"a": np.ones(2), "b": np.ones(2)}, result, POLICY)}
    assert rows["a"].device == "device1" and rows["a"].device_ok
    assert rows["b"].device == "CPU_DEVICE" and rows["b"].device_ok is False
    assert rows["a"].dtype == "float64"  # not "array_api_strict.float64"


def test_values_that_cannot_reach_the_host_say_why() -> None:
    result = replay({"m": torch.ones(2, device="meta")})
    (row,) = compare_outputs({"m": np.ones(2)}, result, POLICY)
    assert row.device == "meta" and row.shape == [2]
    assert row.note.startswith("could not move to the host")


def test_a_replay_that_did_not_finish_compares_nothing() -> None:
    for status in ("error", "skipped", "timeout"):
        result = replay({"y": np.ones(1)}, status=status)
        assert compare_outputs({"y": np.ones(1)}, result, POLICY) == []


def test_the_default_policy_applies_without_one() -> None:
    (row,) = compare_outputs({"y": np.ones(2)}, replay({"y": torch.ones(2, dtype=torch.float64)}))
    assert row.within_tolerance and row.rtol == 1e-9


def test_rows_are_the_models_type_and_leaves_extend_it() -> None:
    # one type (issue 17 item 1): a leaf's diff is the model's row with the pass's extras,
    # and a replay's rows are the model's rows themselves, which the codec spells as is
    from dataclasses import fields

    from porter_ext.compare import NumericDiff, OutputComparison, compare_values
    from porter_ext.report.codec_records import output_to_dict

    (leaf,) = compare_values("y", np.zeros(3), np.ones(3))
    assert isinstance(leaf, OutputComparison) and leaf.within_tolerance is False
    assert leaf.error_sample is not None and leaf.error_histogram is None
    (row,) = compare_outputs({"y": np.zeros(3)}, replay({"y": torch.ones(3)}), POLICY)
    assert type(row) is OutputComparison and not isinstance(row, NumericDiff)
    # the fields, then the model's verdict on them and its words
    assert list(output_to_dict(row)) == [
        *(f.name for f in fields(OutputComparison)),
        "verdict",
        "verdict_text",
    ]
    assert row.error_histogram is not None and row.device == "cpu" and row.shape == [3]

"""Honest numbers on real backends: the float64 reference, named kinds of difference,
nondeterminism from the control, bounded outputs (issue 10)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from porter_ext.compare import Baseline, compare_outputs
from porter_ext.compare.leaves import PythonNumbers, judged_dtype
from porter_ext.replay.reference import promote_inputs, reference_replay
from porter_ext.replay.run import replay_cell

pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("array_api_strict")

ML_CELL = """\
from array_api_compat import array_namespace
xp = array_namespace(A)
C = xp.matmul(A, B)
if BUGGY in type(A).__module__:
    C = C * 1.01
s = float(xp.sum(C))
m = xp.mean(C, axis=0)
"""
TARGETS = ("torch", "jax", "strict")


@pytest.fixture(scope="module")
def ml_inputs() -> dict:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((128, 1000), dtype=np.float32)
    B = rng.standard_normal((1000, 128), dtype=np.float32)
    return {"A": A, "B": B, "BUGGY": "no backend"}


def _run(spec: str, ns: dict) -> object:
    result = replay_cell(ML_CELL, ns, spec)
    assert result.status == "ok", (result.error, result.reason)
    return result


@pytest.fixture(scope="module")
def ml_runs(ml_inputs: dict) -> dict:
    runs = {spec: _run(spec, ml_inputs) for spec in ("numpy", *TARGETS)}
    runs["reference"] = reference_replay(ML_CELL, ml_inputs, ml_inputs)
    return runs


def _rows(baseline: Baseline, result: object) -> dict:
    return {row.name: row for row in baseline.compare(result)}


def test_the_reference_promotes_float32_inputs_to_float64(ml_inputs: dict, ml_runs: dict) -> None:
    promoted, spec = promote_inputs(ml_inputs)
    assert (
        spec == "numpy" and promoted["A"].dtype == np.float64 and promoted["BUGGY"] == "no backend"
    )
    ref = ml_runs["reference"]
    assert ref.role == "reference" and ref.outputs["C"].dtype == np.float64
    assert promote_inputs({"A": ml_inputs["A"].astype(np.float64)}) is None  # its own reference


def test_float32_summation_order_is_within_tolerance_on_every_backend(ml_inputs, ml_runs) -> None:
    baseline = Baseline(ml_runs["numpy"].outputs, inputs=ml_inputs, reference=ml_runs["reference"])
    assert set(baseline.references) == {"C", "s", "m"}
    for spec in TARGETS:
        rows = _rows(baseline, ml_runs[spec])
        for name in ("C", "s", "m"):
            row = rows[name]
            assert row.within_tolerance, (spec, row)
            assert row.difference is None and row.mismatched == 0
            assert row.reference_err is not None and row.original_reference_err is not None
            assert row.reference_err <= row.atol  # atol: the bound against the reference


def test_without_the_reference_float32_products_are_judged_at_the_scale_of_their_terms(
    ml_inputs, ml_runs
) -> None:
    """What 0.1.0 reported (the policy's elementwise rtol alone): summation order as
    mismatches near zero. Without a reference, an element may now differ by a few ulps
    of the output's largest magnitude (the reference rule's floor), and no more."""
    baseline = Baseline(ml_runs["numpy"].outputs, inputs=ml_inputs)
    c = _rows(baseline, ml_runs["torch"])["C"]
    assert c.within_tolerance and c.mismatched == 0 and c.reference_err is None
    assert 1e-6 < c.max_abs_err <= c.atol  # above the policy's own atol: the floor judged
    buggy = _run("torch", {**ml_inputs, "BUGGY": "torch"})  # C off by 1 %
    c = _rows(baseline, buggy)["C"]
    assert c.within_tolerance is False and c.mismatched > 0 and c.atol == 1e-6


def test_a_python_float_from_float32_is_judged_as_float32(ml_inputs, ml_runs) -> None:
    baseline = Baseline(ml_runs["numpy"].outputs, inputs=ml_inputs)  # no reference
    for spec in TARGETS:
        row = _rows(baseline, ml_runs[spec])["s"]
        assert row.within_tolerance, (spec, row)
        assert (row.rtol, row.atol) == (1e-5, 1e-6)  # float32's row of the policy
    # the replay's own float32 arrays tell the working precision too (issue 19)
    alone = compare_outputs({"s": ml_runs["numpy"].outputs["s"]}, ml_runs["torch"])
    assert alone[0].rtol == 1e-5
    # without knowing the working precision it is a float64, and fails as it did in 0.1.0
    bare = dataclasses.replace(ml_runs["torch"], outputs={"s": ml_runs["torch"].outputs["s"]})
    assert compare_outputs({"s": ml_runs["numpy"].outputs["s"]}, bare)[0].rtol == 1e-9


def test_a_list_of_python_floats_from_float32_is_judged_as_float32(ml_inputs) -> None:
    """makemore's ``lossi.append(loss.log10().item())``: the list of floats was judged as
    float64 (rtol 1e-9), so a rewrite one float32 ulp off was "it changes the result"."""
    cell = (
        "from array_api_compat import array_namespace\nxp = array_namespace(A)\n"
        "sums = [float(xp.sum(A[i, :] * A[i + 1, :])) for i in range(8)]\n"
        "pairs = {'a': float(xp.sum(A[0, :] * A[1, :])), 'b': float(xp.sum(A[2, :]))}\n"
    )
    ns = {"A": ml_inputs["A"]}
    original = replay_cell(cell, ns, "numpy")
    assert all(type(v) is float for v in original.outputs["sums"])
    baseline = Baseline(original.outputs, inputs=ns)
    for spec in TARGETS:
        rows = _rows(baseline, replay_cell(cell, ns, spec))
        for name in ("sums", "pairs"):
            assert (rows[name].rtol, rows[name].atol) == (1e-5, 1e-6), (spec, rows[name])
            assert rows[name].within_tolerance, (spec, rows[name])
    # a float64 array is a float64 value, whatever the cell's working dtype
    assert judged_dtype(np.ones(3), np.ones(3), "float32") == np.float64
    listed = np.ones(1).view(PythonNumbers)  # what a list of Python floats becomes
    assert judged_dtype(listed, listed, "float32") == np.float32


@pytest.mark.parametrize("buggy", ["torch", "jax", "array_api_strict"])
def test_a_one_percent_bug_on_one_backend_is_a_mismatch(ml_inputs, ml_runs, buggy) -> None:
    baseline = Baseline(ml_runs["numpy"].outputs, inputs=ml_inputs, reference=ml_runs["reference"])
    ns = {**ml_inputs, "BUGGY": buggy}
    for spec in TARGETS:
        rows = _rows(baseline, _run(spec, ns))
        bad = spec == {"array_api_strict": "strict"}.get(buggy, buggy)
        for name in ("C", "s", "m"):
            assert rows[name].within_tolerance is (not bad), (spec, name, rows[name])
            assert rows[name].difference == ("numeric" if bad else None)
        if bad:
            assert rows["C"].mismatched > 16_000 and rows["C"].error_histogram is not None
            assert rows["C"].error_map is not None and len(rows["C"].error_map) == 64


def test_a_reference_the_original_disagrees_with_is_not_used() -> None:
    """Random draws: the reference draws other numbers, so the per-dtype policy decides."""
    src = "import numpy\nr = numpy.random.default_rng().random(4).astype(x.dtype) + x\n"
    ns = {"x": np.ones(4, dtype=np.float32)}
    original = replay_cell(src, ns, "numpy")
    reference = reference_replay(src, ns, ns)
    baseline = Baseline(original.outputs, inputs=ns, reference=reference)
    assert "r" not in baseline.references
    assert "does not compute the same values" in baseline.reference_notes["r"]


def test_the_reference_falls_back_to_numpy_when_the_backend_lacks_float64() -> None:
    import jax

    if jax.config.jax_enable_x64:
        pytest.skip("jax runs with x64 here")
    x = jax.numpy.ones(3, dtype=jax.numpy.float32)
    promoted, spec = promote_inputs({"x": x})
    assert spec == "numpy" and type(promoted["x"]) is np.ndarray
    assert promoted["x"].dtype == np.float64


# --- kinds of difference ---------------------------------------------------------------


def test_a_sign_flipped_eigenvector_is_sign_only() -> None:
    import torch

    rng = np.random.default_rng(3)
    a = rng.standard_normal((6, 6))
    sym = a + a.T
    _, v = np.linalg.eigh(sym)
    _, tv = torch.linalg.eigh(torch.from_numpy(sym))
    tv = tv.clone()
    tv[:, 2] *= -1 if np.dot(v[:, 2], tv[:, 2].numpy()) > 0 else 1  # the other convention
    result = replay_cell("out = v", {"v": tv}, "torch")
    (row,) = compare_outputs({"out": v}, result)
    assert row.difference == "sign_only" and row.within_tolerance
    assert "sign" in row.note and row.mismatched == 0
    # the whole matrix negated is a sign error, not a convention
    (row,) = compare_outputs(
        {"out": v}, replay_cell("out = -v", {"v": torch.from_numpy(v)}, "torch")
    )
    assert row.within_tolerance is False and row.difference == "numeric"
    # a column that is wrong, not flipped, is still a mismatch
    bad = tv.clone()
    bad[:, 2] *= 2
    (row,) = compare_outputs({"out": v}, replay_cell("out = v", {"v": bad}, "torch"))
    assert row.within_tolerance is False and row.difference == "numeric"


def test_a_reordered_partition_is_order_only() -> None:
    import torch

    x = np.random.default_rng(1).permutation(50).astype(np.float64)
    original = np.partition(x, 10)
    other = torch.from_numpy(np.concatenate([np.sort(original[:10])[::-1], original[10:]]))
    assert not np.array_equal(original, other.numpy())
    (row,) = compare_outputs({"p": original}, replay_cell("p = q", {"q": other}, "torch"))
    assert row.difference == "order_only" and row.within_tolerance and "order" in row.note
    # argsort ties: indices in another order
    ties = np.array([2, 1, 2, 1])
    (row,) = compare_outputs(
        {"i": np.argsort(ties, kind="stable")},
        replay_cell("i = j", {"j": torch.tensor([3, 1, 2, 0])}, "torch"),
    )
    assert row.difference == "order_only"


def test_float64_to_float32_is_a_dtype_finding() -> None:
    import jax

    if jax.config.jax_enable_x64:
        pytest.skip("jax runs with x64 here")
    x = np.linspace(0.1, 1.0, 5)
    result = replay_cell("y = xp.sqrt(x)", {"x": x, "xp": np}, "jax")
    (row,) = compare_outputs({"y": np.sqrt(x)}, result)
    assert row.difference == "dtype_changed" and row.note == "dtype_changed: float64 → float32"
    assert row.within_tolerance  # the values agree at float32's tolerance: not a mismatch


def test_a_shape_change_is_its_own_kind() -> None:
    result = replay_cell("y = x[None]", {"x": np.ones(3)}, "torch")
    (row,) = compare_outputs({"y": np.ones(3)}, result)
    assert row.difference == "shape_changed" and row.within_tolerance is False


# --- determinism and bounded outputs -----------------------------------------------------


def test_an_output_the_control_disagrees_on_is_nondeterministic_and_not_compared() -> None:
    src = "import numpy\nr = numpy.random.default_rng().random(3)\nk = x * 2\n"
    ns = {"x": np.arange(3.0)}
    original = replay_cell(src, ns, "numpy")
    control = replay_cell(src, ns, "numpy")
    control.role = "control"
    target = replay_cell(src, ns, "torch")
    baseline = Baseline(original.outputs, control=control)
    rows = _rows(baseline, target)
    assert rows["r"].deterministic is False and rows["r"].within_tolerance is None
    assert rows["r"].note.startswith("nondeterministic")
    assert rows["k"].deterministic is True and rows["k"].within_tolerance
    assert _rows(baseline, control)["r"].within_tolerance is False  # the control's own row
    # without a control nothing is known about determinism, and the draw is a mismatch
    (r_row, _) = compare_outputs(original.outputs, target)
    assert r_row.deterministic is None and r_row.within_tolerance is False


def test_a_20000_element_list_output_is_one_row() -> None:
    src = "words = [str(i) for i in range(n)]\nsizes = [i * 0.5 for i in range(n)]\n"
    ns = {"n": 20_000}
    original = replay_cell(src, ns, "numpy")
    rows = compare_outputs(original.outputs, replay_cell(src, ns, "torch"))
    assert [r.name for r in rows] == ["words", "sizes"]
    assert rows[0].within_tolerance and rows[0].note is None  # by equality, once
    assert rows[1].within_tolerance and rows[1].shape == [20_000]  # one array of numbers
    wrong = {"words": original.outputs["words"][:-1] + ["x"], "sizes": original.outputs["sizes"]}
    rows = compare_outputs(wrong, replay_cell(src, ns, "torch"))
    assert rows[0].within_tolerance is False and len(rows) == 2


def test_a_long_list_of_arrays_is_compared_as_its_arrays_in_one_row() -> None:
    import torch

    arrays = [np.full(3, float(i)) for i in range(50)]
    replayed = [torch.from_numpy(a.copy()) for a in arrays]
    replayed[7][1] += 1.0
    (row,) = compare_outputs({"parts": arrays}, replay_cell("parts = p", {"p": replayed}, "torch"))
    assert row.name == "parts" and row.within_tolerance is False and row.mismatched == 1
    assert "parts[7]" in row.note and row.max_abs_err == 1.0
    few = compare_outputs(
        {"parts": arrays[:3]}, replay_cell("parts = p", {"p": replayed[:3]}, "torch")
    )
    assert [r.name for r in few] == ["parts[0]", "parts[1]", "parts[2]"]

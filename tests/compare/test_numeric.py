import math
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

from porter_ext.compare.arrays import HISTOGRAM_DTYPE, ArrayStats, ReferenceBound, compare_arrays
from porter_ext.compare.numeric import Judging, NumericDiff, compare_values
from porter_ext.compare.tolerance import Tolerance, get_policy
from porter_ext.guard import PorterInternalError

PORTER = get_policy("porter")
JUDGING = Judging(PORTER)
TOL = Tolerance(1e-5, 1e-6)


def one(expected, actual, policy=PORTER) -> NumericDiff:
    (diff,) = compare_values("out", expected, actual, Judging(policy))
    return diff


def reference(e: np.ndarray, a: np.ndarray, tol: Tolerance) -> dict:
    """Full-size, obviously correct version of compare_arrays (same working precision)."""
    work = np.result_type(np.float32, e.dtype, a.dtype)
    E, A = e.astype(work), a.astype(work)
    with np.errstate(all="ignore"):
        fin = np.isfinite(E) & np.isfinite(A)
        same = (np.isnan(E) & np.isnan(A)) | (E == A)
        pattern = ~fin & ~same
        err = np.where(fin, np.abs(A - E), 0).real.astype(work.char.lower())
        bound = np.abs(E).real.astype(err.dtype) * tol.rtol + tol.atol
        rel = np.where(fin & (E != 0), err / np.abs(E), np.nan)
    return {
        "mismatched": int(pattern.sum() + (fin & (err > bound)).sum()),
        "nan_mismatch": bool(pattern.any()),
        "max_abs_err": float(err[fin].max()) if fin.any() else None,
        "max_rel_err": float(np.nanmax(rel)) if not np.isnan(rel).all() else None,
        "err": err,
    }


def block_max(err: np.ndarray) -> np.ndarray:
    br, bc = (-(-s // 64) for s in err.shape)
    rows = [np.maximum.reduceat(err, np.arange(0, err.shape[1], bc), axis=1)]
    return np.maximum.reduceat(rows[0], np.arange(0, err.shape[0], br), axis=0)


def check_against_reference(e, a, tol=TOL, chunk_elements=1 << 20) -> ArrayStats:
    stats = compare_arrays(e, a, tol, chunk_elements=chunk_elements)
    ref = reference(e, a, tol)
    assert stats.mismatched == ref["mismatched"]
    assert stats.nan_mismatch == ref["nan_mismatch"]
    assert stats.max_abs_err == pytest.approx(ref["max_abs_err"], rel=1e-6)
    assert stats.max_rel_err == pytest.approx(ref["max_rel_err"], rel=1e-6)
    assert stats.histogram["count"].sum() == e.size
    if e.ndim == 2:
        np.testing.assert_allclose(stats.error_map, block_max(ref["err"]), rtol=1e-6)
    else:
        assert stats.error_map is None
    return stats


def noisy(shape, dtype=np.float32, seed=0, specials=True):
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(shape).astype(dtype)
    a = (e + rng.standard_normal(shape) * 1e-5 * rng.random(shape)).astype(dtype)
    if specials:
        flat_e, flat_a = e.reshape(-1), a.reshape(-1)  # views: shapes are small and C-ordered
        n = flat_e.size
        for i, (x, y) in enumerate(
            [
                (np.nan, np.nan),
                (np.inf, np.inf),
                (np.nan, 1.0),
                (np.inf, -np.inf),
                (0.0, 1e-3),
                (-np.inf, 5.0),
            ]
        ):
            flat_e[(i * 7919) % n], flat_a[(i * 7919) % n] = x, y
    return e, a


# --- exact dtypes -----------------------------------------------------------------------


def test_equal_integers_are_within():
    d = one(np.arange(10, dtype=np.int64), np.arange(10, dtype=np.int64))
    assert d.compared and d.within_tolerance and d.note is None and d.difference is None
    d = one(np.arange(10, dtype=np.int32), np.arange(10, dtype=np.int64))
    assert d.compared and d.within_tolerance and d.difference == "dtype_changed"
    assert (d.rtol, d.atol, d.mismatched, d.max_abs_err) == (0.0, 0.0, 0, 0.0)
    assert (d.dtype, d.expected_dtype) == ("int64", "int32")


def test_integers_must_be_exactly_equal():
    e = np.array([10**15, 2, 3], dtype=np.int64)
    a = e.copy()
    a[0] += 1  # a float64 difference would survive, float32 would not
    d = one(e, a, PORTER.override(rtol=1.0, atol=100))  # overrides apply to floats only
    assert not d.within_tolerance and d.mismatched == 1 and d.max_abs_err == 1.0


def test_big_integers_differing_by_one_are_caught():
    e = np.array([2**62], dtype=np.int64)
    assert one(e, e + 1).mismatched == 1


def test_bools():
    e = np.array([True, False, True])
    assert one(e, e.copy()).within_tolerance
    d = one(e, np.array([True, True, True]))
    assert d.mismatched == 1 and d.max_abs_err == 1.0
    assert one(True, False).mismatched == 1


# --- floats and tolerance edges ---------------------------------------------------------


def test_tolerance_edge_is_inclusive():
    tol = Tolerance(rtol=0.5, atol=0.25)  # dyadic: the bound 0.75 is exact
    e = np.array([1.0, 1.0, -2.0])
    assert compare_arrays(e, np.array([1.75, 0.25, -3.25]), tol).mismatched == 0
    a = np.array([np.nextafter(1.75, 2), 0.25, np.nextafter(-3.25, -4)])
    assert compare_arrays(e, a, tol).mismatched == 2


def test_relative_error_skips_zero_expected_values():
    stats = compare_arrays(np.array([0.0, 2.0]), np.array([1e-3, 2.0 + 1e-3]), TOL)
    assert stats.max_abs_err == pytest.approx(1e-3)
    assert stats.max_rel_err == pytest.approx(5e-4)
    only_zeros = compare_arrays(np.zeros(3), np.full(3, 1e-3), TOL)
    assert only_zeros.max_rel_err is None and only_zeros.mismatched == 3


def test_per_dtype_policies_decide():
    e = np.float32(100.0)
    a = np.float32(100.0 * (1 + 5e-6))  # ~42 ulp: fine for porter, not for torch
    assert one(e, a).within_tolerance
    d = one(e, a, get_policy("torch"))
    assert not d.within_tolerance and (d.rtol, d.atol) == (1.3e-6, 1e-5)
    assert one(e, a, get_policy("torch").override(rtol=1e-5)).within_tolerance


def test_float64_against_float32_uses_the_looser_tolerance():
    e = np.linspace(0.1, 10, 1000)
    d = one(e, e.astype(np.float32))
    assert d.within_tolerance and d.difference == "dtype_changed"
    assert d.note == "dtype_changed: float64 → float32"  # its own kind, not a mismatch
    assert (d.expected_dtype, d.dtype) == ("float64", "float32")
    assert (d.rtol, d.atol) == (1e-5, 1e-6)
    assert 1e-9 < d.max_rel_err < 1e-7  # measured in float64: the float32 rounding shows


def test_change_of_dtype_kind_is_reported_and_values_compared():
    d = one(np.arange(3), np.arange(3.0))
    assert d.compared and d.within_tolerance
    assert d.note == "dtype_changed: int64 → float64" and d.difference == "dtype_changed"
    d = one(np.array([1.0, 2.0]), np.array([1.0, 2.0], dtype=np.complex128))
    assert "complex128" in d.note and d.within_tolerance


def test_nan_and_inf_patterns_that_match():
    e = np.array([np.nan, np.inf, -np.inf, 1.0])
    d = one(e, e.copy())
    assert d.within_tolerance and not d.nan_mismatch and d.max_abs_err == 0.0
    assert d.error_sample["count"].sum() == 4


@pytest.mark.parametrize(
    ("x", "y"), [(np.nan, 1.0), (1.0, np.nan), (np.inf, -np.inf), (np.inf, 1e308), (np.inf, np.nan)]
)
def test_nan_and_inf_patterns_that_differ(x, y):
    d = one(np.array([x, 2.0]), np.array([y, 2.5]))
    assert d.nan_mismatch and d.mismatched == 2 and not d.within_tolerance
    assert d.max_abs_err == 0.5  # over the finite pairs only
    nan_row = d.error_sample[np.isnan(d.error_sample["lo"])]
    assert nan_row["count"].tolist() == [1]


def test_all_nan_has_no_max_abs_err():
    d = one(np.full(3, np.nan), np.full(3, np.nan))
    assert d.within_tolerance and d.max_abs_err is None and d.max_rel_err is None


def test_an_overflowing_difference_is_a_mismatch_not_a_nan_pattern():
    d = one(np.float32([3e38]), np.float32([-3e38]))
    assert d.mismatched == 1 and d.nan_mismatch is False and d.max_abs_err == math.inf
    assert d.error_sample[-1]["lo"] == math.inf


def test_differences_in_the_top_binade_of_float64_are_compared():
    """``np.empty((2, 3))`` holds whatever the memory held: differences from 2^1023 up
    fell into a histogram bin whose upper edge, 2^1024, is no float (OverflowError:
    "comparing _ failed inside porter")."""
    e = np.array([0.0, 1e-310, 2.0, 5e-324, 1.0])
    a = np.array([1.5e308, 0.0, -1.7e308, 0.0, 1.0])
    d = one(e, a)
    assert d.compared and d.mismatched == 2 and d.max_abs_err == pytest.approx(1.7e308)
    rows = d.error_sample
    assert rows["count"].sum() == e.size
    top = rows[rows["lo"] == 2.0**1023]
    assert top["count"].tolist() == [2] and np.isfinite(top["hi"]).all()


def test_complex_uses_the_modulus_of_the_difference():
    e = np.array([1 + 1j, 2j])
    a = e + np.array([0.375 + 0.5j, 0])  # |diff| = 0.625 exactly
    assert compare_arrays(e, a, Tolerance(0, 0.625)).mismatched == 0
    assert compare_arrays(e, a, Tolerance(0, 0.62)).mismatched == 1
    stats = compare_arrays(e, a, Tolerance(0, 0))
    assert stats.max_abs_err == 0.625
    assert stats.max_rel_err == pytest.approx(0.625 / abs(1 + 1j))
    c = np.array([complex(np.nan, 0), complex(np.inf, 1)])
    assert compare_arrays(c, c.copy(), TOL).mismatched == 0


def test_complex64_against_reference():
    e, a = noisy((300,), np.float32)
    ce, ca = np.empty(300, np.complex64), np.empty(300, np.complex64)
    ce.real, ce.imag, ca.real, ca.imag = e, e[::-1], a, a[::-1]
    check_against_reference(ce, ca, chunk_elements=37)


# --- scalars and shapes -----------------------------------------------------------------


def test_zero_d_arrays_and_scalars():
    d = one(np.array(1.5), np.array(1.5 + 1e-3))
    assert d.shape == [] and d.mismatched == 1
    assert one(1, 1).within_tolerance
    assert one(2.0, np.float64(2.0)).within_tolerance
    d = one(1.0, np.float32(1.0 + 1e-6))
    assert d.within_tolerance and (d.expected_dtype, d.dtype) == ("float64", "float32")
    assert one(1 + 2j, 1 + 2j).within_tolerance
    assert one(np.int64(3), 4).mismatched == 1


def test_shape_mismatch_is_reported_not_broadcast():
    for e, a in [(np.zeros(3), np.zeros(4)), (np.zeros(3), np.zeros((1, 3))), (0.0, np.zeros(1))]:
        d = one(e, a)
        assert not d.compared and d.within_tolerance is False
        assert d.note.startswith("shape_changed: ") and d.difference == "shape_changed"
        assert d.expected_shape == np.shape(e) and d.shape == list(np.shape(a))
    assert one(np.zeros(3), np.zeros(4)).note == "shape_changed: (3,) → (4,)"
    with pytest.raises(ValueError, match="shapes differ"):
        compare_arrays(np.zeros(3), np.zeros((3, 1)), TOL)


def test_empty_arrays():
    d = one(np.zeros((0, 3)), np.zeros((0, 3)))
    assert d.compared and d.within_tolerance and d.mismatched == 0 and d.max_abs_err is None
    assert d.error_blocks.shape == (0, 3)


# --- what cannot be compared ------------------------------------------------------------


@pytest.mark.parametrize("value", [object(), {1, 2}, np.datetime64("2020")])
def test_values_that_are_not_numbers(value):
    d = one(value, value)
    assert not d.compared and d.within_tolerance is None and d.note


@pytest.mark.parametrize("value", ["text", None, b"bytes", np.str_("s")])
def test_plain_values_are_compared_by_equality(value):
    d = one(value, value)
    assert d.compared and d.within_tolerance and d.note is None
    d = one(value, "other")
    assert d.compared and d.within_tolerance is False and "differ" in d.note


def test_non_numeric_dtypes_are_not_compared():
    d = one(np.array(["a", "b"]), np.array(["a", "b"]))
    assert not d.compared and "not numeric" in d.note and d.dtype == "str32"
    d = one(np.array([1, "x"], dtype=object), np.array([1, "x"], dtype=object))
    assert not d.compared and "object" in d.note
    with pytest.raises(TypeError):
        compare_arrays(np.array(["a"]), np.array(["a"]), TOL)


def test_an_array_against_a_string_is_a_mismatch():
    d = one(np.zeros(2), "zeros")
    assert not d.compared and d.within_tolerance is False and d.note == "ndarray vs str"


# --- containers -------------------------------------------------------------------------


def test_nested_containers_name_their_leaves():
    e = [{"a": np.ones(2), "b": (1, 2.0)}, "label"]
    a = ({"a": np.ones(2) + 1, "b": [1, 2.0]}, "label")  # tuples and lists are alike
    diffs = compare_values("out", e, a, JUDGING)
    assert [d.name for d in diffs] == ["out[0]['a']", "out[0]['b'][0]", "out[0]['b'][1]", "out[1]"]
    assert [d.within_tolerance for d in diffs] == [False, True, True, True]


def test_container_structure_differences():
    diffs = compare_values("r", {"x": 1, "y": [1, 2, 3]}, {"y": [1, 2], "z": 0}, JUDGING)
    got = {d.name: (d.compared, d.note, d.within_tolerance) for d in diffs}
    assert got == {
        "r['x']": (False, "missing in the replay", False),
        "r['y']": (False, "length 3 vs 2", False),
        "r['y'][0]": (True, None, True),
        "r['y'][1]": (True, None, True),
        "r['z']": (False, "not in the original", False),
    }
    (d,) = compare_values("r", [np.zeros(2)], np.zeros((1, 2)), JUDGING)
    assert (d.compared, d.note, d.within_tolerance) == (False, "list vs ndarray", False)
    (d,) = compare_values("r", {"k": 1}, [1], JUDGING)
    assert d.note == "dict vs list"


def test_default_policy_is_porter():
    (d,) = compare_values("x", np.float32(1), np.float32(1))
    assert (d.rtol, d.atol) == (1e-5, 1e-6)


# --- bfloat16 ---------------------------------------------------------------------------


def test_bfloat16():
    e = np.linspace(-4, 4, 101).astype(ml_dtypes.bfloat16)
    a = (e.astype(np.float32) * (1 + 2**-8)).astype(ml_dtypes.bfloat16)  # within 1 ulp
    d = one(e, a)
    assert d.dtype == "bfloat16" and d.within_tolerance and d.rtol == 1.6e-2
    assert 0 < d.max_rel_err <= 2**-7
    bad = a.copy()
    bad[10] = ml_dtypes.bfloat16(100)
    bad[11] = ml_dtypes.bfloat16(np.nan)
    d = one(e, bad)
    assert d.mismatched == 2 and d.nan_mismatch
    d = one(e, e.astype(np.float32))
    assert d.within_tolerance and (d.expected_dtype, d.dtype) == ("bfloat16", "float32")
    assert d.rtol == 1.6e-2 and d.max_abs_err == 0.0


# --- layouts and chunks -----------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 7, 64, 1000, 1 << 20])
@pytest.mark.parametrize("shape", [(1000,), (37, 53), (5, 7, 11), (3, 200), ()])
def test_chunks_agree_with_the_reference(shape, chunk):
    e, a = noisy(shape, specials=shape != ())
    check_against_reference(e, a, chunk_elements=chunk)


@pytest.mark.parametrize("chunk", [13, 1 << 20])
def test_non_contiguous_layouts(chunk):
    e, a = noisy((120, 90), np.float64, seed=3)
    check_against_reference(e.T, a.T, chunk_elements=chunk)  # both F-ordered
    check_against_reference(e.T, np.ascontiguousarray(a.T), chunk_elements=chunk)  # mixed
    check_against_reference(e[::2, ::-3], a[1::2, ::3], chunk_elements=chunk)  # strided
    e3, a3 = noisy((20, 30, 40), seed=4)
    check_against_reference(e3.transpose(2, 0, 1), a3.transpose(2, 0, 1), chunk_elements=chunk)
    check_against_reference(e3[:, ::4, 1], a3[:, ::4, 1], chunk_elements=chunk)


def test_error_map_is_coarse_and_finds_the_error():
    e = np.zeros((1000, 300), dtype=np.float32)
    a = e.copy()
    a[700, 10] = 1.0
    stats = compare_arrays(e, a, TOL, chunk_elements=4096)
    assert stats.error_map.shape == (63, 60)  # blocks of 16 rows x 5 columns
    assert stats.error_map[700 // 16, 10 // 5] == 1.0 and stats.error_map.sum() == 1.0
    flipped = compare_arrays(np.asfortranarray(e), np.asfortranarray(a), TOL)
    np.testing.assert_array_equal(flipped.error_map, stats.error_map)


def test_a_reference_and_its_bound_judge_floats_as_one_object():
    # judged against the float64 reference (within the bound), not against the expected
    # values; the errors still measure |actual - expected|, and integers stay exact
    e = np.array([1.0, 2.0, 3.0], np.float32)
    a = np.array([1.5, 2.0, 3.0], np.float32)
    near = ReferenceBound(np.array([1.49, 2.0, 3.0]), 0.02)
    stats = compare_arrays(e, a, TOL, against=near, chunk_elements=2)
    assert stats.mismatched == 0 and stats.reference_err == pytest.approx(0.01, rel=1e-5)
    assert stats.max_abs_err == 0.5
    far = compare_arrays(e, a, TOL, against=ReferenceBound(np.array([1.0, 2.0, 3.0]), 0.02))
    assert far.mismatched == 1
    ints = np.arange(3)
    exact = compare_arrays(ints, ints + 1, TOL, against=ReferenceBound(ints + 1.0, 2.0))
    assert exact.mismatched == 3 and exact.reference_err is None
    with pytest.raises(ValueError, match="shape"):
        compare_arrays(e, a, TOL, against=ReferenceBound(np.zeros(2), 0.02))


def test_histogram_counts_powers_of_two():
    e = np.zeros(6)
    a = np.array([0.0, 0.3, 0.4, 1.0, 3.0, 2**-40])
    h = compare_arrays(e, a, TOL).histogram
    assert h.dtype == HISTOGRAM_DTYPE
    assert h[0].tolist() == (0.0, 0.0, 1)
    counts = {(lo, hi): n for lo, hi, n in h.tolist() if n}
    assert counts == {
        (0.0, 0.0): 1,
        (0.25, 0.5): 2,
        (1.0, 2.0): 1,
        (2.0, 4.0): 1,
        (2**-40, 2**-39): 1,
    }
    assert len(h) == 1 + 42  # every bin from 2**-40 to 4, so plots need no gaps filled


def test_peak_extra_memory_is_bounded():
    rng = np.random.default_rng(1)
    e = rng.standard_normal(20_000_000, dtype=np.float32)
    a = e + np.float32(1e-6)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        stats = compare_arrays(e, a, TOL)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    assert stats.size == 20_000_000
    assert peak < 64 * 2**20, f"peak extra memory {peak / 2**20:.1f} MiB"


@pytest.mark.parametrize("chunk", [5, 1 << 20])
def test_integer_chunks_agree_with_the_reference(chunk):
    rng = np.random.default_rng(7)
    e = rng.integers(-1000, 1000, (40, 30), dtype=np.int16)
    a = np.where(rng.random(e.shape) < 0.1, e + 3, e).astype(np.int64)
    stats = check_against_reference(e.T, a.T, Tolerance(0, 0), chunk_elements=chunk)
    assert stats.mismatched == int((a != e).sum()) > 0 and stats.max_abs_err == 3.0


def test_an_internal_error_is_reported_not_raised(monkeypatch):
    import porter_ext.compare.numeric as numeric

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(numeric, "compare_arrays", broken)
    with pytest.raises(PorterInternalError, match="boom"):  # PORTER_DEBUG=1 in the suite
        one(np.zeros(2), np.zeros(2))
    monkeypatch.setenv("PORTER_DEBUG", "0")
    d = one(np.zeros(2), np.zeros(2))
    assert not d.compared and "RuntimeError: boom" in d.note
    assert d.shape == [2] and d.within_tolerance is None

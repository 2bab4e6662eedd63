import ml_dtypes
import numpy as np
import pytest

from porter_ext.compare.tolerance import (
    DEFAULT_POLICY,
    FLOAT_KEYS,
    POLICIES,
    Tolerance,
    TolerancePolicy,
    dtype_category,
    get_policy,
)


def test_default_policy_is_porter_and_covers_every_float_dtype():
    assert DEFAULT_POLICY == "porter"
    for policy in POLICIES.values():
        assert set(policy.per_dtype) == set(FLOAT_KEYS)


def test_porter_tolerances_catch_a_lower_precision_detour():
    porter = get_policy("porter")
    # rtol below the unit roundoff of the next lower precision
    assert porter.for_dtype(np.float64).rtol < np.finfo(np.float32).eps / 2
    assert porter.for_dtype(np.float32).rtol < np.finfo(np.float16).eps / 2
    assert porter.for_dtype(np.float16).rtol < ml_dtypes.finfo(ml_dtypes.bfloat16).eps / 2
    # ... and above a few ulps of the dtype itself
    for dt in (np.float16, np.float32, np.float64):
        assert porter.for_dtype(dt).rtol >= 2 * np.finfo(dt).eps


def test_torch_table():
    torch = get_policy("torch")
    assert torch.for_dtype(np.float16) == Tolerance(1e-3, 1e-5)
    assert torch.for_dtype(ml_dtypes.bfloat16) == Tolerance(1.6e-2, 1e-5)
    assert torch.for_dtype(np.float32) == Tolerance(1.3e-6, 1e-5)
    assert torch.for_dtype(np.float64) == Tolerance(1e-7, 1e-7)
    assert torch.for_dtype(np.complex64) == Tolerance(1.3e-6, 1e-5)
    assert torch.for_dtype(np.complex128) == Tolerance(1e-7, 1e-7)


def test_scipy_uses_four_sqrt_eps_and_no_atol():
    scipy = get_policy("scipy")
    for dt in (np.float16, np.float32, np.float64, np.complex64, np.complex128):
        tol = scipy.for_dtype(dt)
        assert tol.rtol == pytest.approx(4 * np.sqrt(np.finfo(dt).eps))
        assert tol.atol == 0.0
    eps = float(ml_dtypes.finfo(ml_dtypes.bfloat16).eps)
    assert scipy.for_dtype(ml_dtypes.bfloat16).rtol == pytest.approx(4 * np.sqrt(eps))


def test_numpy_is_allclose_for_every_dtype():
    numpy = get_policy("numpy")
    for key in FLOAT_KEYS:
        assert numpy.for_dtype(key) == Tolerance(1e-5, 1e-8)


@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint64, np.int64, ml_dtypes.int4])
def test_integers_and_bools_are_exact(dtype):
    for policy in POLICIES.values():
        assert policy.for_dtype(dtype) == Tolerance(0.0, 0.0)


def test_mixed_dtypes_take_the_looser_tolerance():
    porter = get_policy("porter")
    assert porter.for_dtype(np.float64, np.float32) == porter.for_dtype(np.float32)
    assert porter.for_dtype(np.float32, np.float64) == porter.for_dtype(np.float32)
    assert porter.for_dtype(np.int64, np.float64) == porter.for_dtype(np.float64)
    mixed = TolerancePolicy(
        "mixed", {**porter.per_dtype, "float16": Tolerance(1.0, 0.0), "float32": Tolerance(0, 2.0)}
    )
    assert mixed.for_dtype(np.float16, np.float32) == Tolerance(1.0, 2.0)


def test_dtypes_outside_the_table():
    porter = get_policy("porter")
    assert porter.for_dtype(np.longdouble) == porter.for_dtype(np.float64)
    assert porter.for_dtype(np.clongdouble) == porter.for_dtype(np.complex128)
    f8 = porter.for_dtype(ml_dtypes.float8_e4m3fn)
    assert f8.rtol > porter.for_dtype(ml_dtypes.bfloat16).rtol
    with pytest.raises(TypeError, match="not numeric"):
        porter.for_dtype(np.dtype("U3"))


def test_override_changes_floats_only_and_names_itself():
    porter = get_policy("porter")
    loose = porter.override(rtol=0.1)
    assert loose.name == "porter(rtol=0.1)"
    assert loose.for_dtype(np.float32) == Tolerance(0.1, porter.for_dtype(np.float32).atol)
    both = porter.override(rtol=0, atol=1e-3)
    assert all(t == Tolerance(0.0, 1e-3) for t in both.per_dtype.values())
    assert both.for_dtype(np.int64) == Tolerance(0.0, 0.0)
    assert porter.override() is porter
    assert porter.for_dtype(np.float32) == Tolerance(1e-5, 1e-6)  # unchanged
    with pytest.raises(ValueError, match="rtol"):
        porter.override(rtol=-1)


def test_get_policy_names_the_valid_ones():
    with pytest.raises(ValueError, match="numpy, porter, scipy, torch"):
        get_policy("jax")


def test_policy_table_is_complete_and_read_only():
    with pytest.raises(ValueError, match="lacks"):
        TolerancePolicy("half", {"float32": Tolerance(0, 0)})
    with pytest.raises(TypeError):
        get_policy("porter").per_dtype["float32"] = Tolerance(1, 1)


@pytest.mark.parametrize(
    ("dtype", "category"),
    [
        (bool, "bool"),
        (np.uint8, "integer"),
        (np.float16, "real"),
        (ml_dtypes.bfloat16, "real"),
        (ml_dtypes.float8_e5m2, "real"),
        (ml_dtypes.int4, "integer"),
        (np.complex64, "complex"),
        (np.dtype("U2"), None),
        (object, None),
        (np.dtype([("a", "f4")]), None),
        (np.dtype("M8[s]"), None),
    ],
)
def test_dtype_category(dtype, category):
    assert dtype_category(dtype) == category

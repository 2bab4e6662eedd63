"""Strict namespaces: standard code runs unchanged, anything else names its replacement."""

from __future__ import annotations

import array_api_strict as xs
import numpy as np
import pytest

import porter_ext
from porter_ext import NonStandardError, strict_namespace

torch = pytest.importorskip("torch")
compat_torch = pytest.importorskip("array_api_compat.torch")
compat_numpy = pytest.importorskip("array_api_compat.numpy")


@pytest.mark.parametrize("xp", [compat_numpy, compat_torch, xs], ids=["numpy", "torch", "strict"])
def test_standard_code_gives_the_same_results_types_and_devices(xp):
    sxp = strict_namespace(xp)
    x = xp.asarray([[1.0, -2.0], [3.0, 4.0]])
    expected = xp.maximum(xp.sum(x * x, axis=1), xp.asarray(0.0))
    got = sxp.maximum(sxp.sum(x * x, axis=1), sxp.asarray(0.0))
    assert type(got) is type(expected)
    assert bool(xp.all(got == expected))
    assert sxp.float32 is xp.float32
    assert sxp.linalg.vector_norm(x) is not None
    assert str(getattr(got, "device", "cpu")) == str(getattr(expected, "device", "cpu"))


def test_wrapping_is_idempotent():
    sxp = strict_namespace(compat_torch)
    assert strict_namespace(sxp) is sxp
    assert porter_ext.strict_namespace is strict_namespace


def test_a_name_outside_the_standard_raises_with_the_escape_hatch():
    sxp = strict_namespace(compat_torch)
    with pytest.raises(NonStandardError, match=r"exp2.*xp\.backend\.exp2"):
        sxp.exp2(torch.ones(2))


def test_a_usage_outside_the_standard_raises_with_the_signature():
    sxp = strict_namespace(compat_numpy)
    with pytest.raises(NonStandardError, match=r"axis is keyword-only"):
        sxp.sum(np.ones((2, 2)), 1)
    with pytest.raises(NonStandardError, match="maximum|max"):
        sxp.max(np.ones(2), np.ones(2))


def test_non_callable_names_outside_the_standard_raise_on_access_and_hasattr_sees_it():
    sxp = strict_namespace(compat_numpy)
    assert not hasattr(sxp, "float128") or not isinstance(
        getattr(compat_numpy, "float128", None), type
    )
    with pytest.raises(NonStandardError):
        sxp.ndarray  # noqa: B018


def test_backend_escape_hatch_reaches_the_real_library():
    sxp = strict_namespace(compat_torch)
    out = sxp.backend.exp2(torch.tensor([1.0, 3.0]))
    assert torch.equal(out, torch.tensor([2.0, 8.0]))


def test_a_strict_namespace_checks_the_version_its_namespace_claims():
    import array_api_strict

    from porter_ext.spec.standard import DEFAULT_VERSION

    assert DEFAULT_VERSION == "2025.12"
    xp = strict_namespace(array_api_strict)
    assert xp._version == array_api_strict.__array_api_version__
    x = array_api_strict.asarray([1, 2, 3])
    assert bool(xp.all(xp.isin(x, x)))  # 2025.12: a 2024.12 check refused it
    assert xp.broadcast_shapes((2, 1), (1, 3)) == (2, 3)
    older = strict_namespace(array_api_strict, version="2024.12")
    with pytest.raises(NonStandardError, match="isin"):
        older.isin(x, x)


def test_the_strict_message_fills_the_suggestion_from_the_call():
    import array_api_compat.numpy as xnp

    xp = strict_namespace(xnp)
    with pytest.raises(NonStandardError) as caught:
        xp.concatenate([np.ones(2), np.ones(2)], axis=0)
    assert "{" not in str(caught.value)
    assert "xp.concat(arrays, axis=0)" in str(caught.value)

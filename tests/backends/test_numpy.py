"""The NumPy adapter, and the aligned buffers JAX can import without a copy."""

from __future__ import annotations

import array_api_compat.numpy
import numpy as np
import pytest

from porter_ext.backends import (
    DeviceUnavailable,
    aligned_copy,
    aligned_empty,
    get_backend,
    is_aligned,
)

numpy_backend = get_backend("numpy")


def test_available_with_version_and_one_device() -> None:
    assert numpy_backend.available() == (True, None)
    assert numpy_backend.version() == np.__version__
    assert numpy_backend.devices() == ["cpu"]
    assert numpy_backend.default_device() == "cpu"


def test_namespace_is_compat_numpy() -> None:
    assert numpy_backend.namespace() is array_api_compat.numpy


def test_resolve_device() -> None:
    assert numpy_backend.resolve_device(None) == "cpu"
    assert numpy_backend.resolve_device("cpu") == "cpu"
    with pytest.raises(DeviceUnavailable, match="only the 'cpu' device"):
        numpy_backend.resolve_device("cuda:0")


def test_owns_arrays_and_scalars_only() -> None:
    assert numpy_backend.owns(np.ones(2))
    assert numpy_backend.owns(np.float64(1))
    assert not numpy_backend.owns(1.0)
    assert not numpy_backend.owns([1.0])


def test_to_host_is_the_array_itself() -> None:
    x = np.arange(4.0)
    assert numpy_backend.to_host(x) is x
    assert numpy_backend.to_host(np.float32(2)).shape == ()


def test_host_copy_is_independent_and_native() -> None:
    x = np.arange(4, dtype=">f4")[::2]
    copy = numpy_backend.host_copy(x)
    assert not np.shares_memory(copy, x)
    assert copy.dtype == np.float32 and copy.dtype.isnative
    assert copy.flags.c_contiguous and copy.flags.writeable
    np.testing.assert_array_equal(copy, x)


@pytest.mark.parametrize("shape", [(), (1,), (3, 5), (0,), (1000,)])
@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "complex64", "bool"])
def test_aligned_buffers(shape: tuple[int, ...], dtype: str) -> None:
    empty = aligned_empty(shape, dtype)
    assert empty.shape == shape and empty.dtype == dtype
    assert is_aligned(empty)
    source = np.ones(shape, dtype=dtype)
    copy = aligned_copy(source)
    assert is_aligned(copy) and copy.flags.c_contiguous
    assert not np.shares_memory(copy, source)
    np.testing.assert_array_equal(copy, source)


def test_aligned_to_other_boundaries() -> None:
    assert is_aligned(aligned_copy(np.ones(7), alignment=256), alignment=256)

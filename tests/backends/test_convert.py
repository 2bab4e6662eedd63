"""Moving real arrays between libraries: zero-copy where DLPack allows, copies with reasons."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import (
    BackendSpec,
    Conversion,
    ConversionError,
    DeviceUnavailable,
    aligned_copy,
    aligned_empty,
    backend_for,
    convert_to,
    device_of,
    get_backend,
)

from .helpers import address

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
xps = pytest.importorskip("array_api_strict")

N = 1024


def unaligned(n: int = N) -> np.ndarray:
    """A float32 array whose buffer starts 4 bytes past a 64-byte boundary."""
    x = aligned_empty((n + 1,), np.float32)[1:]
    x[...] = np.arange(n)
    return x


def assert_zero_copy(conversion: Conversion, source: object) -> None:
    assert conversion.mode == "zero_copy", conversion.reason
    assert conversion.reason is None
    assert conversion.shares_memory
    assert address(conversion.value) == address(source)


def assert_copy(conversion: Conversion, source: object, reason: str) -> None:
    assert conversion.mode == "copy"
    assert reason in conversion.reason
    assert not conversion.shares_memory
    assert address(conversion.value) != address(source)


def on_host(x: object) -> np.ndarray:
    return backend_for(x).to_host(x)


def _library(x: object) -> str:
    return backend_for(x).name


# --- the zero-copy pairs -------------------------------------------------------------


def test_numpy_to_torch_shares_the_buffer() -> None:
    x = np.arange(N, dtype=np.float32)
    conversion = convert_to(x, "torch")
    assert_zero_copy(conversion, x)
    assert isinstance(conversion.value, torch.Tensor)
    conversion.value[0] = 42
    assert x[0] == 42


def test_torch_to_jax_shares_the_buffer() -> None:
    t = torch.arange(N, dtype=torch.float32)
    conversion = convert_to(t, "jax")
    assert_zero_copy(conversion, t)
    assert device_of(conversion.value) == "cpu:0"
    np.testing.assert_array_equal(np.asarray(conversion.value), t.numpy())


def test_jax_to_torch_shares_the_buffer() -> None:
    x = jnp.arange(N, dtype=jnp.float32)
    conversion = convert_to(x, "torch")
    assert_zero_copy(conversion, x)
    assert conversion.value.device == torch.device("cpu")


@pytest.mark.parametrize("device", [None, "CPU_DEVICE", "device1"])
def test_numpy_to_strict_shares_the_buffer(device: str | None) -> None:
    x = np.arange(N, dtype=np.float32)
    conversion = convert_to(x, BackendSpec("strict", device))
    assert_zero_copy(conversion, x)
    assert device_of(conversion.value) == (device or "CPU_DEVICE")


def test_torch_to_numpy_and_strict_to_numpy_share() -> None:
    t = torch.arange(N, dtype=torch.float32)
    assert_zero_copy(convert_to(t, "numpy"), t)
    s = xps.asarray(np.arange(N, dtype=np.float32))
    assert_zero_copy(convert_to(s, "numpy"), s)


def test_jax_to_numpy_is_read_only() -> None:
    x = jnp.arange(N, dtype=jnp.float32)
    conversion = convert_to(x, "numpy")
    assert_zero_copy(conversion, x)
    assert not conversion.value.flags.writeable
    assert any("read-only" in note for note in conversion.notes)


@pytest.mark.parametrize(
    "make",
    [
        lambda: np.arange(4.0),
        lambda: torch.arange(4.0),
        lambda: jnp.arange(4.0),
        lambda: xps.asarray([1.0, 2.0], device=xps.Device("device2")),
    ],
)
def test_same_library_same_device_is_the_array_itself(make) -> None:
    x = make()
    conversion = convert_to(x, _library(x), device_of(x))
    assert conversion.value is x
    assert conversion.mode == "zero_copy" and conversion.shares_memory


# --- numpy -> jax and the 64-byte rule -----------------------------------------------


def test_numpy_to_jax_copies_an_unaligned_buffer() -> None:
    x = unaligned()
    conversion = convert_to(x, "jax")
    assert_copy(conversion, x, "numpy buffer not 64-byte aligned")
    assert conversion.reason == "numpy buffer not 64-byte aligned"
    np.testing.assert_array_equal(np.asarray(conversion.value), x)


def test_numpy_to_jax_zero_copy_when_aligned() -> None:
    x = aligned_copy(unaligned())
    assert_zero_copy(convert_to(x, "jax"), x)


def test_float64_to_jax_becomes_float32_with_a_note() -> None:
    if jax.config.jax_enable_x64:
        pytest.skip("jax_enable_x64 is on")
    for source in (aligned_copy(np.arange(4.0)), torch.arange(4.0, dtype=torch.float64)):
        conversion = convert_to(source, "jax")
        assert conversion.value.dtype == jnp.float32
        assert conversion.mode == "copy" and not conversion.shares_memory
        assert "float64 became float32: JAX runs with jax_enable_x64 off" in conversion.notes
    strict = convert_to(xps.asarray([1.0, 2.0]), "jax")
    assert strict.value.dtype == jnp.float32 and strict.mode == "copy"
    assert "float64 became float32: JAX runs with jax_enable_x64 off" in strict.notes
    int64 = convert_to(np.arange(3), "jax")
    assert int64.value.dtype == jnp.int32
    assert "int64 became int32: JAX runs with jax_enable_x64 off" in int64.notes


# --- bfloat16, autograd, conjugates --------------------------------------------------


def test_bfloat16_between_torch_and_jax_is_zero_copy() -> None:
    t = torch.tensor([1.5, -2.0, 3.25], dtype=torch.bfloat16)
    to_jax = convert_to(t, "jax")
    assert_zero_copy(to_jax, t)
    assert to_jax.value.dtype == jnp.bfloat16
    back = convert_to(to_jax.value, "torch")
    assert_zero_copy(back, t)
    assert back.value.dtype == torch.bfloat16


@pytest.mark.parametrize("target", ["numpy", "strict", "strict:device1"])
@pytest.mark.parametrize(
    "make",
    [
        lambda: torch.tensor([1.5, -2.0], dtype=torch.bfloat16),
        lambda: jnp.array([1.5, -2.0], dtype=jnp.bfloat16),
    ],
)
def test_bfloat16_to_numpy_becomes_float32(make, target: str) -> None:
    conversion = convert_to(make(), target)
    assert conversion.mode == "copy" and not conversion.shares_memory
    assert "bfloat16" in conversion.reason
    assert "bfloat16 became float32: NumPy has no bfloat16" in conversion.notes
    np.testing.assert_array_equal(on_host(conversion.value), [1.5, -2.0])


@pytest.mark.parametrize("target", ["numpy", "jax", "torch", "strict"])
def test_requires_grad_is_detached(target: str) -> None:
    t = torch.arange(4.0, requires_grad=True)
    conversion = convert_to(t, target)
    assert conversion.mode == "zero_copy" and conversion.shares_memory
    assert any("requires_grad" in note for note in conversion.notes)
    assert address(conversion.value) == t.data_ptr()
    assert t.requires_grad
    if target == "torch":
        assert not conversion.value.requires_grad


def test_conjugate_bit_is_resolved_with_a_copy() -> None:
    t = torch.tensor([1 + 2j, 3 - 1j]).conj()
    conversion = convert_to(t, "numpy")
    assert conversion.mode == "copy" and "conjugate" in conversion.reason
    np.testing.assert_array_equal(conversion.value, [1 - 2j, 3 + 1j])


# --- scalars and 0-d arrays ----------------------------------------------------------


@pytest.mark.parametrize("target", ["numpy", "torch", "jax", "strict", "strict:device1"])
@pytest.mark.parametrize("scalar", [3.5, 7, True, 1 + 2j, np.float32(2.5)])
def test_scalars_become_0d_arrays(scalar: object, target: str) -> None:
    conversion = convert_to(scalar, target)
    assert conversion.mode == "copy" and not conversion.shares_memory
    assert "scalar" in conversion.reason
    value = on_host(conversion.value)
    assert value.shape == ()
    assert value == scalar


@pytest.mark.parametrize(
    ("make", "target"),
    [
        (lambda: np.asarray(3.0, dtype=np.float32), "torch"),
        (lambda: np.asarray(3.0, dtype=np.float32), "strict:device1"),
        (lambda: torch.tensor(3.0), "jax"),
        (lambda: jnp.asarray(3.0), "torch"),
        (lambda: jnp.asarray(3.0), "numpy"),
    ],
)
def test_0d_arrays_convert_without_a_copy(make, target: str) -> None:
    x = make()
    conversion = convert_to(x, target)
    assert_zero_copy(conversion, x)
    assert on_host(conversion.value).shape == ()


# --- fallbacks through host NumPy ----------------------------------------------------


def test_strided_torch_to_jax_falls_back_to_a_copy() -> None:
    t = torch.arange(12.0).reshape(3, 4)[:, ::2]
    conversion = convert_to(t, "jax")
    assert conversion.mode == "copy" and "DLPack import into JAX failed" in conversion.reason
    np.testing.assert_array_equal(np.asarray(conversion.value), t.numpy())


@pytest.mark.parametrize("target", ["torch", "jax", "strict", "strict:device1"])
def test_big_endian_numpy_falls_back_to_a_copy(target: str) -> None:
    x = np.arange(4, dtype=">f4")
    conversion = convert_to(x, target)
    assert conversion.mode == "copy" and not conversion.shares_memory
    assert "byte order" in conversion.reason
    np.testing.assert_array_equal(on_host(conversion.value), x)


# --- what cannot be converted --------------------------------------------------------


def test_unconvertible_values() -> None:
    with pytest.raises(ConversionError, match="meta"):
        convert_to(torch.ones(2, device="meta"), "numpy")
    with pytest.raises(ConversionError, match="not an array"):
        convert_to([1, 2], "torch")
    with pytest.raises(ConversionError, match="float16"):
        convert_to(np.ones(2, dtype=np.float16), "strict")

    @jax.jit
    def f(x):
        with pytest.raises(ConversionError, match="traced"):
            convert_to(x, "numpy")
        return x

    f(jnp.ones(2))


def test_missing_devices_raise_device_unavailable() -> None:
    with pytest.raises(DeviceUnavailable):
        convert_to(np.ones(2), "strict:device9")
    with pytest.raises(DeviceUnavailable):
        convert_to(np.ones(2), "numpy:cuda:0")
    if not torch.accelerator.is_available():
        with pytest.raises(DeviceUnavailable, match="is_available"):
            convert_to(np.ones(2), "torch:cuda:0")


# --- ways to name the target ---------------------------------------------------------


def test_target_as_backend_spec_or_string() -> None:
    x = np.arange(4.0)
    by_backend = convert_to(x, get_backend("strict"), "device1")
    by_spec = convert_to(x, BackendSpec("strict", "device1"))
    by_text = convert_to(x, "strict:device1")
    by_override = convert_to(x, "strict", device="device1")
    for conversion in (by_backend, by_spec, by_text, by_override):
        assert device_of(conversion.value) == "device1"
        assert conversion.mode == "zero_copy"


def test_conversion_is_frozen() -> None:
    conversion = convert_to(np.ones(2), "numpy")
    with pytest.raises(AttributeError):
        conversion.mode = "copy"  # type: ignore[misc]

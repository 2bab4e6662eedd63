"""The JAX adapter: devices as platform:id, tracers, the x64 narrowing."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import ConversionError, DeviceUnavailable, get_backend

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
backend = get_backend("jax")


def test_available_with_version_and_devices() -> None:
    assert backend.available() == (True, None)
    assert backend.version() == jax.__version__
    devices = backend.devices()
    assert devices[0] == f"{jax.devices()[0].platform}:{jax.devices()[0].id}"
    assert "cpu:0" in devices


def test_namespace_is_jax_numpy() -> None:
    assert backend.namespace() is jnp


def test_resolve_device() -> None:
    assert backend.resolve_device(None) == jax.devices()[0]
    assert backend.resolve_device("cpu:0") == jax.devices("cpu")[0]
    assert backend.resolve_device("cpu") == jax.devices("cpu")[0]


@pytest.mark.skipif(len(jax.devices("cpu")) > 1, reason="this process has a second CPU device")
def test_missing_cpu_device_names_the_flag() -> None:
    with pytest.raises(DeviceUnavailable, match="xla_force_host_platform_device_count"):
        backend.resolve_device("cpu:1")


@pytest.mark.skipif(
    any(d.platform == "gpu" for d in jax.devices()), reason="this machine has a GPU"
)
def test_missing_gpu() -> None:
    with pytest.raises(DeviceUnavailable, match="no 'gpu' platform"):
        backend.resolve_device("gpu:0")


def test_owns_and_device_of() -> None:
    assert backend.owns(jnp.ones(2))
    assert not backend.owns(np.ones(2))
    assert backend.device_of(jnp.ones(2)) == "cpu:0"


def test_narrows_64_bit_dtypes_without_x64() -> None:
    if jax.config.jax_enable_x64:
        pytest.skip("jax_enable_x64 is on")
    assert backend.narrows("float64") == "float32"
    assert backend.narrows("int64") == "int32"
    assert backend.narrows("float32") is None


def test_to_host() -> None:
    x = jnp.arange(4.0)
    host = backend.to_host(x)
    assert isinstance(host, np.ndarray)
    np.testing.assert_array_equal(host, [0, 1, 2, 3])
    bf16 = backend.to_host(jnp.array([1.5, 2.0], dtype=jnp.bfloat16))
    assert bf16.dtype == np.float32


def test_host_copy_is_writable() -> None:
    copy = backend.host_copy(jnp.arange(3.0))
    copy[0] = 5
    assert copy.flags.writeable


def test_tracers_cannot_go_to_the_host() -> None:
    @jax.jit
    def f(x):
        with pytest.raises(ConversionError, match="traced"):
            backend.to_host(x)
        return x

    f(jnp.ones(2))

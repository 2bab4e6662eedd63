"""The array-api-strict adapter: named fake devices, CPU_DEVICE first."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import DeviceUnavailable, get_backend

xps = pytest.importorskip("array_api_strict")
backend = get_backend("strict")


def test_available_with_version_and_devices() -> None:
    assert backend.available() == (True, None)
    assert backend.version() == xps.__version__
    devices = backend.devices()
    assert devices[:3] == ["CPU_DEVICE", "device1", "device2"]
    assert backend.default_device() == "CPU_DEVICE"


def test_namespace_is_array_api_strict() -> None:
    assert backend.namespace() is xps


@pytest.mark.parametrize(
    ("spelled", "name"),
    [
        (None, "CPU_DEVICE"),
        ("CPU_DEVICE", "CPU_DEVICE"),
        ("cpu", "CPU_DEVICE"),
        ("device1", "device1"),
    ],
)
def test_resolve_device(spelled: str | None, name: str) -> None:
    assert backend.resolve_device(spelled) == xps.Device(name)


def test_unknown_device_lists_the_real_ones() -> None:
    with pytest.raises(DeviceUnavailable, match="device1"):
        backend.resolve_device("device9")


def test_owns_and_device_of() -> None:
    x = xps.ones(2, device=xps.Device("device2"))
    assert backend.owns(x)
    assert not backend.owns(np.ones(2))
    assert backend.device_of(x) == "device2"


def test_to_host_from_a_fake_device() -> None:
    x = xps.asarray([1.0, 2.0], device=xps.Device("device1"))
    host = backend.to_host(x)
    np.testing.assert_array_equal(host, [1.0, 2.0])
    assert x.device == xps.Device("device1")


def test_to_host_on_cpu_device_shares() -> None:
    base = np.arange(3.0)
    host = backend.to_host(xps.asarray(base))
    assert np.shares_memory(host, base)


@pytest.mark.parametrize("device", ["CPU_DEVICE", "device1"])
def test_host_copy_is_independent(device: str) -> None:
    base = np.arange(3.0)
    x = xps.asarray(base, device=xps.Device(device))
    copy = backend.host_copy(x)
    assert not np.shares_memory(copy, base)
    copy[0] = 7
    assert base[0] == 0

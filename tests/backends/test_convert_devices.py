"""Where converted arrays land: JAX's second CPU device, array-api-strict's fake devices."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import aligned_copy, convert_to, device_of

from .helpers import address

xps = pytest.importorskip("array_api_strict")
torch = pytest.importorskip("torch")

# Runs with two JAX CPU devices; prints {case: [device, mode, reason, shares_memory,
# same buffer as the source, values equal]}.
TWO_DEVICE_CASES = """
import json
import numpy as np, torch, jax, jax.numpy as jnp
from porter_ext.backends import aligned_copy, convert_to, device_of, get_backend, list_backends

def pointer(x):
    if isinstance(x, np.ndarray): return x.ctypes.data
    if isinstance(x, torch.Tensor): return x.data_ptr()
    return x.unsafe_buffer_pointer()

def values(x):
    return np.asarray(x.numpy() if isinstance(x, torch.Tensor) else x).tolist()

cpu0, cpu1 = jax.devices()
on_cpu1 = jax.device_put(jnp.arange(6.0), cpu1)
on_cpu0 = jnp.arange(6.0)
sources = {
    "numpy": aligned_copy(np.arange(6, dtype=np.float32)),
    "torch": torch.arange(6.0),
    "jax_cpu1": on_cpu1,
    "jax_cpu0": on_cpu0,
}
cases = [
    ("numpy", "jax:cpu:1"), ("torch", "jax:cpu:1"), ("jax_cpu0", "jax:cpu:1"),
    ("jax_cpu1", "torch"), ("jax_cpu1", "numpy"), ("jax_cpu1", "strict:device1"),
    ("jax_cpu1", "jax:cpu:1"), ("jax_cpu1", "jax"), ("jax_cpu1", "jax:cpu:0"),
]
out = {}
for name, target in cases:
    x = sources[name]
    c = convert_to(x, target)
    got = np.from_dlpack(c.value) if target.startswith("strict") else c.value
    out[f"{name}->{target}"] = [device_of(c.value), c.mode, c.reason, c.shares_memory,
                                pointer(got) == pointer(x), values(got) == values(x)]

# round trip: torch -> jax:cpu:1 -> torch -> jax:cpu:1
t = torch.arange(6.0)
a = convert_to(t, "jax:cpu:1").value
b = convert_to(a, "torch")
c = convert_to(b.value, "jax:cpu:1")
out["round_trip"] = [device_of(a), b.mode, c.mode, device_of(c.value), values(c.value) == values(t)]
out["devices"] = get_backend("jax").devices()
jax.config.update("jax_default_device", cpu1)
out["default_cpu1"] = [get_backend("jax").devices(),
                       device_of(convert_to(sources["numpy"], "jax").value)]
jax.config.update("jax_default_device", None)
out["specs"] = [i.spec for i in list_backends() if i.library == "jax" and i.available]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def two_devices(jax_two_cpus) -> dict:
    return jax_two_cpus(TWO_DEVICE_CASES)


def test_two_cpu_devices_are_listed(two_devices: dict) -> None:
    assert two_devices["devices"] == ["cpu:0", "cpu:1"]
    assert two_devices["specs"] == ["jax", "jax:cpu:1"]


@pytest.mark.parametrize(
    ("case", "device", "mode", "reason"),
    [
        ("numpy->jax:cpu:1", "cpu:1", "copy", "moved cpu:0 → cpu:1 with jax.device_put"),
        ("torch->jax:cpu:1", "cpu:1", "copy", "moved cpu:0 → cpu:1 with jax.device_put"),
        ("jax_cpu0->jax:cpu:1", "cpu:1", "copy", "moved cpu:0 → cpu:1 with jax.device_put"),
        ("jax_cpu1->jax", "cpu:0", "copy", "moved cpu:1 → cpu:0 with jax.device_put"),
        ("jax_cpu1->jax:cpu:0", "cpu:0", "copy", "moved cpu:1 → cpu:0 with jax.device_put"),
        ("jax_cpu1->jax:cpu:1", "cpu:1", "zero_copy", None),
        ("jax_cpu1->torch", "cpu", "zero_copy", None),
        ("jax_cpu1->numpy", "cpu", "zero_copy", None),
        ("jax_cpu1->strict:device1", "device1", "zero_copy", None),
    ],
)
def test_jax_second_cpu_device(
    two_devices: dict, case: str, device: str, mode: str, reason
) -> None:
    landed, got_mode, got_reason, shares, same_buffer, equal = two_devices[case]
    assert (landed, got_mode, got_reason) == (device, mode, reason)
    assert shares == same_buffer == (mode == "zero_copy")
    assert equal


def test_jax_default_device_setting_is_the_library_default(two_devices: dict) -> None:
    devices, landed = two_devices["default_cpu1"]
    assert devices == ["cpu:1", "cpu:0"]
    assert landed == "cpu:1"


def test_jax_second_cpu_device_round_trip(two_devices: dict) -> None:
    first, back_mode, again_mode, last, equal = two_devices["round_trip"]
    assert first == last == "cpu:1"
    assert back_mode == "zero_copy"  # DLPack out of cpu:1 needs no copy
    assert again_mode == "copy"  # DLPack lands on cpu:0, device_put moves it
    assert equal


@pytest.mark.parametrize("target", ["numpy", "torch", "jax", "strict", "strict:device2"])
def test_leaving_a_fake_strict_device_goes_through_to_device(target: str) -> None:
    x = xps.asarray(np.arange(4.0, dtype=np.float32), device=xps.Device("device1"))
    conversion = convert_to(x, target)
    assert conversion.mode == "copy" and not conversion.shares_memory
    assert "to_device" in conversion.reason
    assert address(conversion.value) != address(x)
    assert device_of(x) == "device1"


def test_strict_device_round_trip() -> None:
    x = np.arange(5.0)
    there = convert_to(x, "strict:device1")
    assert device_of(there.value) == "device1" and there.mode == "zero_copy"
    with pytest.raises(ValueError):  # array-api-strict refuses to mix devices
        there.value + xps.asarray(x)
    back = convert_to(there.value, "numpy")
    assert back.mode == "copy" and not np.shares_memory(back.value, x)
    np.testing.assert_array_equal(back.value, x)


def test_strict_to_strict_device_moves_copy() -> None:
    x = xps.asarray([1.0, 2.0])
    moved = convert_to(x, "strict:device2")
    assert device_of(moved.value) == "device2"
    assert moved.mode == "copy" and "to_device" in moved.reason


def test_numpy_torch_jax_numpy_round_trip_shares_one_buffer() -> None:
    x = aligned_copy(np.arange(16, dtype=np.float32))
    t = convert_to(x, "torch")
    j = convert_to(t.value, "jax")
    n = convert_to(j.value, "numpy")
    assert all(c.mode == "zero_copy" for c in (t, j, n))
    assert address(n.value) == address(x)
    np.testing.assert_array_equal(n.value, x)

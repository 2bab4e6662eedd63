"""The PyTorch adapter: cpu, accelerators through torch.accelerator, never meta."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import ConversionError, DeviceUnavailable, get_backend

torch = pytest.importorskip("torch")
backend = get_backend("torch")
no_accelerator = pytest.mark.skipif(
    torch.accelerator.is_available(), reason="this machine has an accelerator"
)


def test_available_with_version() -> None:
    assert backend.available() == (True, None)
    assert backend.version().split("+")[0] == torch.__version__.split("+")[0]


def test_namespace_is_compat_torch() -> None:
    import array_api_compat.torch

    assert backend.namespace() is array_api_compat.torch
    assert array_api_compat.array_namespace(torch.ones(1)) is backend.namespace()


def test_devices_start_with_the_default() -> None:
    devices = backend.devices()
    assert devices[0] == "cpu"
    assert "meta" not in devices
    if torch.accelerator.is_available():
        kind = torch.accelerator.current_accelerator().type
        assert f"{kind}:0" in devices
    else:
        assert devices == ["cpu"]


def test_resolve_device() -> None:
    assert backend.resolve_device(None) == torch.device("cpu")
    assert backend.resolve_device("cpu") == torch.device("cpu")


def test_meta_is_not_a_replay_device() -> None:
    with pytest.raises(DeviceUnavailable, match="meta"):
        backend.resolve_device("meta")


@no_accelerator
@pytest.mark.parametrize("device", ["cuda:0", "cuda", "xpu:0", "mps"])
def test_accelerator_devices_unavailable_with_reason(device: str) -> None:
    with pytest.raises(DeviceUnavailable) as raised:
        backend.resolve_device(device)
    assert "torch.accelerator.is_available() is False" in raised.value.reason


def test_unknown_device() -> None:
    with pytest.raises(DeviceUnavailable, match="does not know"):
        backend.resolve_device("quantum:3")


def test_owns_and_device_of() -> None:
    assert backend.owns(torch.ones(1))
    assert not backend.owns(np.ones(1))
    assert backend.device_of(torch.ones(1)) == "cpu"
    assert backend.device_of(torch.ones(1, device="meta")) == "meta"


def test_to_host_shares_and_detaches() -> None:
    t = torch.arange(4.0, requires_grad=True)
    host = backend.to_host(t)
    assert isinstance(host, np.ndarray)
    assert host.ctypes.data == t.data_ptr()
    assert t.requires_grad  # the person's tensor is untouched


def test_to_host_bfloat16_becomes_float32() -> None:
    host = backend.to_host(torch.tensor([1.5, 2.25], dtype=torch.bfloat16))
    assert host.dtype == np.float32
    np.testing.assert_array_equal(host, [1.5, 2.25])


def test_to_host_resolves_conjugate() -> None:
    t = torch.tensor([1 + 2j]).conj()
    np.testing.assert_array_equal(backend.to_host(t), [1 - 2j])


def test_meta_tensors_have_no_data() -> None:
    with pytest.raises(ConversionError, match="meta"):
        backend.to_host(torch.ones(2, device="meta"))


def test_host_copy_is_independent() -> None:
    t = torch.arange(4.0)
    copy = backend.host_copy(t)
    copy[0] = 99
    assert t[0] == 0
    assert backend.host_copy(torch.ones(2, dtype=torch.bfloat16)).dtype == np.float32

"""GPU paths: torch accelerators (through torch.accelerator), JAX GPUs and CuPy.

Every test here skips with the reason when the hardware or library is missing.
"""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import convert_to, device_of, get_backend, list_backends

from .helpers import address

pytestmark = pytest.mark.gpu


def accelerator() -> str:
    """The torch accelerator's device spelling (``cuda:0``, ``xpu:0``, ``mps:0``), or skip."""
    torch = pytest.importorskip("torch")
    if not torch.accelerator.is_available():
        pytest.skip("no accelerator (torch.accelerator.is_available() is False)")
    return f"{torch.accelerator.current_accelerator().type}:0"


def jax_gpu() -> str:
    jax = pytest.importorskip("jax")
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        pytest.skip("jax has no GPU platform")
    return f"gpu:{gpus[0].id}"


def cupy_device() -> str:
    pytest.importorskip("cupy")
    ok, reason = get_backend("cupy").available()
    if not ok:
        pytest.skip(reason)
    return "cuda:0"


def test_torch_accelerator_is_listed() -> None:
    device = accelerator()
    infos = {info.spec: info for info in list_backends()}
    assert infos[f"torch:{device}"].available
    assert device in get_backend("torch").devices()


def test_numpy_to_torch_accelerator_copies_with_reason() -> None:
    device = accelerator()
    x = np.arange(8, dtype=np.float32)
    conversion = convert_to(x, f"torch:{device}")
    assert device_of(conversion.value) == device
    assert conversion.mode == "copy" and "Tensor.to" in conversion.reason
    assert not conversion.shares_memory
    np.testing.assert_array_equal(conversion.value.cpu().numpy(), x)


def test_torch_accelerator_to_numpy_copies_to_the_host() -> None:
    torch = pytest.importorskip("torch")
    device = accelerator()
    t = torch.arange(8.0, device=device)
    conversion = convert_to(t, "numpy")
    assert conversion.mode == "copy" and "host" in conversion.reason
    np.testing.assert_array_equal(conversion.value, np.arange(8.0))
    bf16 = convert_to(t.to(torch.bfloat16), "numpy")
    assert bf16.value.dtype == np.float32


def test_torch_accelerator_to_cpu_and_back() -> None:
    torch = pytest.importorskip("torch")
    device = accelerator()
    t = torch.arange(8.0, device=device)
    assert convert_to(t, f"torch:{device}").value is t
    on_cpu = convert_to(t, "torch")
    assert device_of(on_cpu.value) == "cpu" and on_cpu.mode == "copy"


def test_torch_cuda_and_jax_gpu_share_through_dlpack() -> None:
    torch = pytest.importorskip("torch")
    device = accelerator()
    if not device.startswith("cuda"):
        pytest.skip(f"the accelerator is {device}, JAX GPUs are CUDA/ROCm")
    gpu = jax_gpu()
    t = torch.arange(8.0, device=device)
    to_jax = convert_to(t, f"jax:{gpu}")
    assert to_jax.mode == "zero_copy"
    assert address(to_jax.value) == t.data_ptr()
    back = convert_to(to_jax.value, f"torch:{device}")
    assert back.mode == "zero_copy" and back.value.data_ptr() == t.data_ptr()


def test_jax_gpu_to_numpy_copies() -> None:
    gpu = jax_gpu()
    x = convert_to(np.arange(4.0, dtype=np.float32), f"jax:{gpu}").value
    assert device_of(x) == gpu
    conversion = convert_to(x, "numpy")
    assert conversion.mode == "copy"
    np.testing.assert_array_equal(conversion.value, np.arange(4.0))


def test_numpy_to_cupy_and_back() -> None:
    device = cupy_device()
    x = np.arange(8, dtype=np.float32)
    there = convert_to(x, f"cupy:{device}")
    assert device_of(there.value) == device and there.mode == "copy"
    back = convert_to(there.value, "numpy")
    assert back.mode == "copy"
    np.testing.assert_array_equal(back.value, x)


def test_cupy_and_torch_cuda_share_through_dlpack() -> None:
    torch = pytest.importorskip("torch")
    device = cupy_device()
    if accelerator() != device:
        pytest.skip("torch's accelerator is not CUDA device 0")
    t = torch.arange(8.0, device=device)
    to_cupy = convert_to(t, f"cupy:{device}")
    assert to_cupy.mode == "zero_copy" and to_cupy.value.data.ptr == t.data_ptr()
    back = convert_to(to_cupy.value, f"torch:{device}")
    assert back.mode == "zero_copy" and back.value.data_ptr() == t.data_ptr()


def test_cupy_namespace() -> None:
    cupy_device()
    import array_api_compat.cupy

    assert get_backend("cupy").namespace() is array_api_compat.cupy

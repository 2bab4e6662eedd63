"""Placement and host transfers: code that names a device (``x.cuda()``, ``x.to('cuda')``,
``jax.device_put``) and code that copies to the host and waits for the device
(``x.item()``, ``x.numpy()``, ``cupy.asnumpy``).
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import DEVICE, NS, SYNC, Chapter

chapter = Chapter()

_TO_DEVICE_NOTE = (
    "take the device from the data (x.device) or from the caller rather than naming one; "
    "x.to_device(device) and xp.asarray(x, device=device) are the standard spellings"
)
chapter.add(
    "t",
    "method",
    "cuda",
    DEVICE,
    "to_device",
    "x.to_device(device)",
    "ties the code to CUDA; " + _TO_DEVICE_NOTE,
    rewrite="{x}.to({lib}.accelerator.current_accelerator())",
    example="x.cuda()",
)
chapter.add(
    "t",
    "method",
    "cpu",
    DEVICE,
    "to_device",
    "x.to_device(device)",
    "a device-to-host copy that waits for the device when x is on an accelerator; "
    "for host data use np.from_dlpack(x, device='cpu')",
)
chapter.add(
    "t",
    "method",
    "to",
    DEVICE,
    "to_device",
    "x.to_device(device)",
    "ties the code to CUDA; " + _TO_DEVICE_NOTE,
    when="cuda_arg",
)
chapter.add(
    "t",
    "method",
    "to",
    DEVICE,
    "to_device",
    "x.to_device(device)",
    _TO_DEVICE_NOTE,
    when="device_arg",
)
chapter.add(
    "t",
    "method",
    "to",
    NS,
    "astype",
    "xp.astype(x, {dtype}, copy=False)",
    "a dtype cast is xp.astype in the standard",
    when="dtype_arg",
    rewrite="xp.astype({x}, {dtype}, copy=False)",
    example="x.to(lib.float32)",
)
chapter.add(
    "t",
    "method",
    "to",
    NS,
    "to_device",
    "x.to_device(y.device)",
    "x.to(y) takes both the device and the dtype of y: x.to_device(y.device) and "
    "xp.astype(x, y.dtype)",
)
chapter.add(
    "t",
    "method",
    "pin_memory",
    DEVICE,
    None,
    "x",
    "page-locked host memory only speeds up host-to-accelerator copies in PyTorch; "
    "drop it or keep it behind array_api_compat.is_torch_array(x)",
)
chapter.add(
    "t",
    "method",
    "get_device",
    DEVICE,
    "device",
    "x.device",
    "returns a CUDA ordinal (-1 on the CPU); the standard array carries its device",
)
chapter.add(
    "t",
    "attribute",
    "is_cuda",
    DEVICE,
    "device",
    "x.device",
    "asks for one vendor; compare x.device with the device you want instead",
)
chapter.add(
    "j",
    "function",
    "device_put",
    DEVICE,
    "asarray",
    "xp.asarray(x, device=device)",
    "jax.device_put is JAX's placement call; the standard moves arrays with "
    "xp.asarray(x, device=device) or x.to_device(device)",
)

_HOST_NOTE = (
    "copies to the host and waits for pending device work; keep values on the device "
    "as long as possible"
)
_ITEM_NOTE = (
    "reads one value on the host (a device sync); the standard spells it float(x), "
    "int(x), bool(x) or complex(x) on a 0-D array, by its dtype"
)
# a tensor autograd tracks: float(t) warns ("Converting a tensor with requires_grad=True
# to a scalar may lead to unexpected behavior") where t.item() is silent, so a ported
# notebook would print what the original does not
chapter.add(
    "t",
    "method",
    "item",
    SYNC,
    None,
    "float(x)",
    _ITEM_NOTE,
    when="requires_grad",
    no_rewrite="float(x) of a tensor that requires grad warns in torch where .item() does "
    "not (the ported notebook would print a warning the original does not): read the "
    "value of a tensor outside autograd, or keep .item() here",
)
for _when, _py, _example in (
    ("int_dtype", "int", "n.item()"),
    ("bool_dtype", "bool", "t.item()"),
    ("complex_dtype", "complex", "c.item()"),
    (None, "float", "f.item()"),
):
    # the standard's name is the array's own conversion (x.__int__): it also tells a run's
    # verdict at the site which of the four the codemod writes
    chapter.add(
        "*",
        "method",
        "item",
        SYNC,
        f"__{_py}__",
        f"{_py}(x)",
        _ITEM_NOTE,
        when=_when,
        rewrite=f"{_py}({{x}})",
        example=_example,
    )
chapter.add(
    "*", "method", "tolist", SYNC, None, "np.from_dlpack(x, device='cpu').tolist()", _HOST_NOTE
)
# NumPy's from_dlpack takes any library's array (a view of CPU data, as .numpy() is); no
# device=: .numpy() takes CPU tensors only, and a replay binds np to its library's
# namespace, where the string 'cpu' names no device (jax, array-api-strict) while
# from_dlpack(x) keeps x where it is. The codemod imports NumPy as np where the cell does not
chapter.add(
    "t",
    "method",
    "numpy",
    SYNC,
    "from_dlpack",
    "np.from_dlpack(x)",
    _HOST_NOTE + "; DLPack hands CPU data over without a copy (for an accelerator's "
    "array, np.from_dlpack(x, device='cpu') copies it to the host)",
    rewrite="np.from_dlpack({x})",
    example="x.numpy()",
)
chapter.add(
    "c", "method", "get", SYNC, "from_dlpack", "np.from_dlpack(x, device='cpu')", _HOST_NOTE
)
chapter.add(
    "c", "function", "asnumpy", SYNC, "from_dlpack", "np.from_dlpack(x, device='cpu')", _HOST_NOTE
)
chapter.add(
    "j",
    "function",
    "device_get",
    SYNC,
    "from_dlpack",
    "np.from_dlpack(x, device='cpu')",
    _HOST_NOTE,
)
for _kind in ("function", "method"):
    chapter.add(
        "j",
        _kind,
        "block_until_ready",
        NS,
        None,
        "if is_jax_array(x): x.block_until_ready()",
        "waits for JAX's asynchronous dispatch; the standard has no synchronisation call, "
        "so keep it behind array_api_compat.is_jax_array(x) (benchmarks)",
    )
chapter.add(
    "j",
    "method",
    "devices",
    NS,
    "device",
    "x.device",
    "the standard array has exactly one device, x.device",
)

ENTRIES = chapter.entries

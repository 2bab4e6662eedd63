"""Runtime calls: torch.cuda.* (and torch.mps.*, torch.xpu.*), whose torch.accelerator form
is the same call on whatever accelerator is present, CuPy's runtime API, and JAX's device
lists.
"""

from __future__ import annotations

from porter_ext.spec.table.chapter import DEVICE, NS, Chapter

chapter = Chapter()

_ACCELERATOR_NOTE = (
    "torch.cuda.* ties the code to one vendor; torch.accelerator is the same call for "
    "whatever accelerator is present (CUDA, ROCm, XPU, MPS)"
)
#: the runtime calls whose torch.accelerator form is the same call wherever CUDA is (and,
#: without an accelerator, gives the same: False, 0, or raises as torch.cuda does)
_ACCELERATOR_REWRITES = {
    "cuda.is_available": "{lib}.accelerator.is_available()",
    "cuda.device_count": "{lib}.accelerator.device_count()",
    "cuda.current_device": "{lib}.accelerator.current_device_index()",
    "cuda.synchronize": "{lib}.accelerator.synchronize()",
    "cuda.set_device": "{lib}.accelerator.set_device_index({arg0})",
}
_ACCELERATOR_ARGS = {"cuda.set_device": "0"}
_NO_ACCELERATOR_DIFFERS = (
    "without an accelerator torch.cuda.{} does nothing (or returns 0) while "
    "torch.accelerator's form raises RuntimeError: a rewrite would break CPU-only runs"
)
_ACCELERATOR_NO_REWRITE = {
    name: _NO_ACCELERATOR_DIFFERS.format(name.partition(".")[2] + "()")
    for name in (
        "cuda.empty_cache",
        "cuda.memory_allocated",
        "cuda.max_memory_allocated",
        "cuda.memory_reserved",
    )
}
for _name, _suggestion in {
    "cuda.synchronize": "torch.accelerator.synchronize()",
    "cuda.is_available": "torch.accelerator.is_available()",
    "cuda.device_count": "torch.accelerator.device_count()",
    "cuda.current_device": "torch.accelerator.current_device_index()",
    "cuda.set_device": "torch.accelerator.set_device_index({arg0})",
    "cuda.device": "torch.accelerator.device_index({arg0})",
    "cuda.current_stream": "torch.accelerator.current_stream()",
    "cuda.set_stream": "torch.accelerator.set_stream(stream)",
    "cuda.Stream": "torch.Stream()",
    "cuda.Event": "torch.Event()",
    "cuda.empty_cache": "torch.accelerator.empty_cache()",
    "cuda.memory_allocated": "torch.accelerator.memory_allocated()",
    "cuda.max_memory_allocated": "torch.accelerator.max_memory_allocated()",
    "cuda.memory_reserved": "torch.accelerator.memory_reserved()",
    "cuda.reset_peak_memory_stats": "torch.accelerator.reset_peak_memory_stats()",
    "cuda.mem_get_info": "torch.accelerator.get_memory_info()",
    "cuda.get_device_capability": "torch.accelerator.get_device_capability()",
    "mps.synchronize": "torch.accelerator.synchronize()",
    "mps.is_available": "torch.accelerator.is_available()",
    "backends.mps.is_available": "torch.accelerator.is_available()",
    "xpu.synchronize": "torch.accelerator.synchronize()",
    "xpu.is_available": "torch.accelerator.is_available()",
    "xpu.device_count": "torch.accelerator.device_count()",
}.items():
    _rewrite = _ACCELERATOR_REWRITES.get(_name)
    chapter.add(
        "t",
        "function",
        _name,
        DEVICE,
        None,
        _suggestion,
        _ACCELERATOR_NOTE,
        rewrite=_rewrite,
        example=f"lib.{_name}({_ACCELERATOR_ARGS.get(_name, '')})" if _rewrite else None,
        no_rewrite=_ACCELERATOR_NO_REWRITE.get(_name, ""),
    )

for _name in ("cuda.manual_seed", "cuda.manual_seed_all"):
    chapter.add(
        "t",
        "function",
        _name,
        DEVICE,
        None,
        "torch.manual_seed({arg0})",
        "torch.manual_seed seeds the CPU and every accelerator",
    )
chapter.add(
    "t",
    "function",
    "cuda.stream",
    DEVICE,
    None,
    "with torch.Stream():",
    "torch.Stream is a device-agnostic stream and its own context manager",
)
chapter.add(
    "t",
    "function",
    "device",
    DEVICE,
    None,
    "torch.accelerator.current_accelerator()",
    "naming 'cuda' ties the code to one vendor; current_accelerator() is the device of "
    "whatever accelerator is present (None without one), and arrays carry theirs in x.device",
    when="cuda_arg",
)

_CUPY_RUNTIME_NOTE = (
    "the standard has no runtime API; pass device= explicitly, and keep CuPy-only calls "
    "behind array_api_compat.is_cupy_namespace(xp)"
)
chapter.add(
    "c",
    "function",
    "cuda.Device",
    DEVICE,
    "asarray",
    "xp.asarray(x, device=device)",
    "selecting a device by context is CuPy-specific; " + _CUPY_RUNTIME_NOTE,
)
chapter.add(
    "c",
    "function",
    "cuda.runtime.getDeviceCount",
    DEVICE,
    "__array_namespace_info__",
    "len(xp.__array_namespace_info__().devices())",
    "the inspection API lists the devices of any library",
)
chapter.add(
    "c",
    "function",
    "cuda.runtime.deviceSynchronize",
    DEVICE,
    None,
    "if is_cupy_namespace(xp): cupy.cuda.runtime.deviceSynchronize()",
    _CUPY_RUNTIME_NOTE,
)
chapter.add(
    "c",
    "function",
    "cuda.Stream",
    DEVICE,
    None,
    "if is_cupy_namespace(xp): cupy.cuda.Stream()",
    _CUPY_RUNTIME_NOTE,
)
chapter.add(
    "c",
    "function",
    "cuda.get_current_stream",
    DEVICE,
    None,
    "if is_cupy_namespace(xp): cupy.cuda.get_current_stream()",
    _CUPY_RUNTIME_NOTE,
)
for _name in ("devices", "local_devices"):
    chapter.add(
        "j",
        "function",
        _name,
        NS,
        "__array_namespace_info__",
        "xp.__array_namespace_info__().devices()",
        "the inspection API lists the devices of any library",
        no_rewrite=f"no rewrite: jax.{_name}() needs no array, and the standard's "
        "xp.__array_namespace_info__().devices() needs the namespace of one "
        "(xp = array_namespace(x)); devices are no values a replay compares, so write it "
        "by hand where an array is at hand",
    )

ENTRIES = chapter.entries

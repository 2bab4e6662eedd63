"""Moving an array to another backend: DLPack first, the library's own move next, a host copy last.

Order of work for every conversion:

1. prepare the source: detach a torch tensor that requires grad, resolve its
   conjugate bit, refuse tracers and ``meta`` tensors, turn Python scalars into 0-d
   NumPy arrays, bring an array-api-strict array off a fake device with ``to_device``
   (its fake devices all report DLPack device ``(1, 0)``, so DLPack cannot be trusted
   with them);
2. read the producer's ``__dlpack_device__()`` and import with the consumer's
   ``from_dlpack`` where the devices allow it: zero-copy;
3. move to the requested device with the library's own API (``Tensor.to``,
   ``jax.device_put``, ``to_device``, ``cupy.asarray`` under a device): a copy;
4. if DLPack refused, copy through host NumPy and say why.

Streams: for a CUDA/ROCm producer the consumer's ``from_dlpack`` (torch, CuPy, JAX)
passes its own current stream to ``__dlpack__`` (1 for CUDA's legacy default stream);
porter never calls ``__dlpack__`` itself, so it never passes a stream to a CPU producer
and never asks for ``-1`` (no synchronisation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._jax import spell as spell_jax
from ._numpy import aligned_copy, aligned_empty, is_aligned
from ._strict import DEFAULT as STRICT_DEFAULT
from ._strict import device_name as strict_device_name
from .base import Backend, Conversion, ConversionError, dtype_name
from .registry import backend_for, get_backend
from .spec import BackendSpec, parse_spec

if TYPE_CHECKING:
    import numpy

__all__ = ["aligned_copy", "aligned_empty", "convert_to", "is_aligned"]

DL_CPU = 1
DL_GPU = {2: "CUDA", 10: "ROCm"}  # kDLCUDA, kDLROCM
#: what DLPack importers raise when they refuse an array
REFUSED = (BufferError, RuntimeError, TypeError, ValueError)


class _Trail:
    """What a conversion did: the copies it made (with reasons) and its notes."""

    def __init__(self) -> None:
        self.copies: list[str] = []
        self.notes: list[str] = []

    def copied(self, reason: str) -> None:
        self.copies.append(reason)

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def result(self, value: object) -> Conversion:
        if self.copies:
            return Conversion(value, "copy", "; ".join(self.copies), False, tuple(self.notes))
        return Conversion(value, "zero_copy", None, True, tuple(self.notes))


def convert_to(
    x: object, target: Backend | BackendSpec | str, device: str | None = None
) -> Conversion:
    """Move ``x`` (an array of any supported library, or a Python scalar) to ``target``.

    ``target`` is an adapter, a spec or a spec string (``"jax:cpu:1"``); ``device``
    overrides the spec's device. Raises BackendUnavailable / DeviceUnavailable when the
    target is not there and ConversionError when ``x`` cannot be converted.
    """
    if isinstance(target, str):
        target = parse_spec(target)
    if isinstance(target, BackendSpec):
        device = device if device is not None else target.device
        target = get_backend(target.library)
    resolved = target.resolve_device(device)
    trail = _Trail()
    x, source = _prepare(x, trail)
    value = _IMPORTERS[target.name](x, source, target, resolved, trail)
    return trail.result(value)


def _prepare(x: Any, trail: _Trail) -> tuple[Any, Backend]:
    import numpy as np

    source = backend_for(x)
    if source is None:
        if isinstance(x, bool | int | float | complex):
            trail.copied("a Python scalar has no buffer: made a 0-d NumPy array")
            return aligned_copy(np.asarray(x)), get_backend("numpy")
        raise ConversionError(f"cannot convert a {type(x).__name__}: it is not an array")
    if source.name == "numpy" and isinstance(x, np.generic):
        trail.copied("a NumPy scalar has no buffer to share: made a 0-d array")
        x = aligned_copy(np.asarray(x))
    elif source.name == "torch":
        if x.device.type == "meta":
            raise ConversionError("a torch 'meta' tensor carries no data to convert")
        if x.requires_grad:
            x = x.detach()
            trail.note("detached from autograd (the tensor had requires_grad=True)")
        if x.is_conj() or x.is_neg():
            x = x.resolve_conj().resolve_neg()
            trail.copied("the tensor had its conjugate/negative bit set: resolved with a copy")
    elif source.name == "jax":
        source._check_concrete(x)  # type: ignore[attr-defined]
    return x, source


def _why(error: BaseException, limit: int = 160) -> str:
    """An exception's first line, short enough for a report cell."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _dlpack_device(x: Any) -> tuple[int, int] | None:
    try:
        kind, index = x.__dlpack_device__()
    except (AttributeError, *REFUSED):
        return None
    return int(kind), int(index)


def _off_fake_device(x: Any, source: Backend, trail: _Trail) -> Any:
    """An array-api-strict array moved to CPU_DEVICE (a copy) so DLPack may take it."""
    if source.name != "strict" or strict_device_name(x.device) == STRICT_DEFAULT:
        return x
    trail.copied(
        f"array-api-strict arrays leave {strict_device_name(x.device)} only through"
        " to_device, which copies"
    )
    return source.on_default(x)  # type: ignore[attr-defined]


def _host_view(x: Any, source: Backend, trail: _Trail) -> numpy.ndarray:
    """``x`` as a host NumPy array: a DLPack view when it is on the CPU, else a copy."""
    import numpy as np

    if source.name == "numpy":
        return x
    x = _off_fake_device(x, source, trail)
    if dtype_name(x) == "bfloat16":
        trail.copied("DLPack cannot carry bfloat16 into NumPy")
        return _host_copy(x, source, trail)
    dl_device = _dlpack_device(x)
    if dl_device is None or dl_device[0] != DL_CPU:
        trail.copied(f"the {source.name} array is on {source.device_of(x)}; NumPy is host-only")
        return _host_copy(x, source, trail)
    try:
        host = np.from_dlpack(x)
    except REFUSED as error:
        trail.copied(f"DLPack export to NumPy failed ({_why(error)}); copied through the host")
        return _host_copy(x, source, trail)
    if not host.flags.writeable:
        trail.note(f"read-only: a NumPy view of an immutable {source.title} buffer")
    return host


def _host_copy(x: Any, source: Backend, trail: _Trail) -> numpy.ndarray:
    """The source adapter's host copy, noting a dtype NumPy lacks (bfloat16 → float32)."""
    host = source.host_copy(x)
    before, after = dtype_name(x), dtype_name(host)
    if before != after:
        trail.note(f"{before} became {after}: NumPy has no {before}")
    return host


def _to_numpy(x: Any, source: Backend, target: Backend, device: Any, trail: _Trail) -> Any:
    return _host_view(x, source, trail)


def _to_strict(x: Any, source: Backend, target: Backend, device: Any, trail: _Trail) -> Any:
    xps = target.lib()
    name = strict_device_name(device)
    if source is target:
        if strict_device_name(x.device) == name:
            return x
        trail.copied(f"array-api-strict's to_device copies ({source.device_of(x)} → {name})")
        return x.to_device(device)
    host = _host_view(x, source, trail)
    if not host.dtype.isnative:
        trail.copied("array-api-strict (and DLPack) take native byte order only")
        host = get_backend("numpy").host_copy(host)
    try:
        if name == STRICT_DEFAULT:
            return xps.from_dlpack(host)
        return xps.asarray(host, device=device)
    except TypeError as error:
        raise ConversionError(f"array-api-strict cannot hold this array: {error}") from None


def _to_torch(x: Any, source: Backend, target: Backend, device: Any, trail: _Trail) -> Any:
    torch = target.lib()
    if source is target:
        tensor = x
    else:
        ready = _off_fake_device(x, source, trail)
        try:
            tensor = torch.from_dlpack(ready)
        except REFUSED as error:
            trail.copied(
                f"DLPack import into torch failed ({_why(error)}); copied through host NumPy"
            )
            try:
                tensor = torch.from_numpy(source.host_copy(x))
            except TypeError as error:
                raise ConversionError(f"torch cannot hold this array: {error}") from None
    if tensor.device != device:
        trail.copied(f"moved {tensor.device} → {device} with Tensor.to")
        tensor = tensor.to(device)
    return tensor


def _data_pointer(x: Any, source: Backend) -> int | None:
    """Address of the first element of a host array, for JAX's alignment rule."""
    import numpy as np

    if source.name == "numpy":
        return x.ctypes.data
    if source.name == "torch":
        return x.data_ptr()
    if source.name == "strict":
        return np.from_dlpack(x).ctypes.data
    return None


def _to_jax(x: Any, source: Backend, target: Backend, device: Any, trail: _Trail) -> Any:
    jax = target.lib()
    if source is not target:
        name = dtype_name(x)
        narrowed = target.narrows(name)  # type: ignore[attr-defined]
        if narrowed:
            trail.copied(f"JAX stores {name} as {narrowed}")
            trail.note(f"{name} became {narrowed}: JAX runs with jax_enable_x64 off")
        x = _jax_import(x, source, jax, trail, exact=not narrowed)
    current = x.devices()
    if current != {device}:
        where = ",".join(sorted(spell_jax(d) for d in current))
        trail.copied(f"moved {where} → {spell_jax(device)} with jax.device_put")
        x = jax.device_put(x, device)
    return x


def _jax_import(x: Any, source: Backend, jax: Any, trail: _Trail, exact: bool) -> Any:
    """DLPack import onto the producer's device; ``exact``: the dtype is kept, so no cast."""
    ready = _off_fake_device(x, source, trail)
    try:
        if not exact:
            return jax.dlpack.from_dlpack(ready)  # JAX casts, hence copies, anyway
        dl_device = _dlpack_device(ready)
        pointer = None
        if dl_device is not None and dl_device[0] == DL_CPU:
            pointer = _data_pointer(ready, source)
            if pointer is not None and pointer % 64:
                # JAX imports a host buffer without a copy only when it is 64-byte
                # aligned; aligned_copy() makes one that is.
                trail.copied(f"{source.name} buffer not 64-byte aligned")
                return jax.dlpack.from_dlpack(ready)
        fast = _jax_cpu_import(ready, jax, pointer) if dl_device == (DL_CPU, 0) else None
        return fast if fast is not None else jax.dlpack.from_dlpack(ready, copy=False)
    except REFUSED as error:
        trail.copied(f"DLPack import into JAX failed ({_why(error)}); copied through host NumPy")
        return jax.device_put(source.host_copy(x))


def _jax_cpu_import(ready: Any, jax: Any, pointer: int | None) -> Any:
    """Zero-copy import of an aligned host buffer whose dtype JAX keeps, straight through
    jaxlib. ``jax.dlpack.from_dlpack`` spends ~25 us re-checking dtype and placement,
    which is most of the cost of moving an input. Anything unexpected (another jaxlib
    API, a copy after all) gives None, and the caller takes the public path."""
    if pointer is None:
        return None
    try:
        from jax._src.lib import _jax as jaxlib_ext
        from jax._src.lib import jaxlib_extension_version

        if jaxlib_extension_version < 467:
            return None
        device = jax.devices("cpu")[0]
        arr = jaxlib_ext.dlpack_managed_tensor_to_buffer(
            ready.__dlpack__(), device, None, False, DL_CPU
        )
        if arr.unsafe_buffer_pointer() != pointer or arr.dtype != jax.dtypes.canonicalize_dtype(
            arr.dtype
        ):
            return None
        return arr
    except Exception:
        return None


def _to_cupy(x: Any, source: Backend, target: Backend, device: Any, trail: _Trail) -> Any:
    cupy = target.lib()
    with device:
        if source is target:
            if x.device.id == device.id:
                return x
            trail.copied(f"moved cuda:{x.device.id} → cuda:{device.id} (peer copy)")
            return cupy.array(x, copy=True)
        ready = _off_fake_device(x, source, trail)
        dl_device = _dlpack_device(ready)
        if dl_device is not None and dl_device[0] in DL_GPU and dl_device[1] == device.id:
            try:
                return cupy.from_dlpack(ready)  # CuPy passes its current stream
            except REFUSED as error:
                trail.copied(f"DLPack import into CuPy failed ({_why(error)})")
        host = _host_view(x, source, trail)
        trail.copied(f"copied from {source.device_of(x)} to cuda:{device.id}")
        return cupy.asarray(host)


_IMPORTERS = {
    "numpy": _to_numpy,
    "strict": _to_strict,
    "torch": _to_torch,
    "jax": _to_jax,
    "cupy": _to_cupy,
}

"""Moving an array to another backend: DLPack first, the library's own move next, a host copy last.

Order of work for every conversion:

1. prepare the source (``Backend.export_ready``): detach a torch tensor that requires
   grad, resolve its conjugate bit, refuse tracers and ``meta`` tensors; Python scalars
   become 0-d NumPy arrays;
2. the target's ``import_array`` reads the producer's ``__dlpack_device__()`` (after
   ``dlpack_ready``: array-api-strict's fake devices all report ``(1, 0)``, so such an
   array first moves to its default device) and imports with its ``from_dlpack`` where
   the devices allow it: zero-copy;
3. it moves to the requested device with the library's own API (``Tensor.to``,
   ``jax.device_put``, ``to_device``, ``cupy.asarray`` under a device): a copy;
4. if DLPack refused, it copies through host NumPy and says why.

Streams are the consumer's business: see ``dlpack.py``.
"""

from __future__ import annotations

from .base import Backend, Conversion, ConversionError
from .dlpack import Trail
from .numpy import aligned_copy, aligned_empty, is_aligned
from .registry import backend_for, get_backend, parse_spec
from .spec import BackendSpec

__all__ = ["aligned_copy", "aligned_empty", "convert_to", "is_aligned"]


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
    trail = Trail()
    source = backend_for(x)
    if source is None:
        if not isinstance(x, bool | int | float | complex):
            raise ConversionError(f"cannot convert a {type(x).__name__}: it is not an array")
        import numpy as np

        trail.copied("a Python scalar has no buffer: made a 0-d NumPy array")
        x, source = aligned_copy(np.asarray(x)), get_backend("numpy")
    x = source.export_ready(x, trail)
    return trail.result(target.import_array(x, source, resolved, trail))

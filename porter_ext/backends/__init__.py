"""The one home of each array library, and moving arrays between them.

One adapter per library (``numpy.py``, ``torch.py``, ``jax.py``, ``cupy.py``,
``strict.py``, ``dask.py``) knows everything porter knows about it; the registry finds
adapters by name, array, type or module. Importing this package imports no array
library: adapters recognise arrays through ``sys.modules`` and import their library only
when asked to do something with it.
"""

from .base import (
    TRACED,
    Backend,
    BackendInfo,
    BackendUnavailable,
    Conversion,
    ConversionError,
    DeviceUnavailable,
    Namespace,
    ReplayScope,
    dtype_name,
)
from .convert import aligned_copy, aligned_empty, convert_to, is_aligned
from .registry import (
    HELPER_NAMESPACES,
    HELPERS,
    HOST_LIBRARY,
    LIBRARIES,
    all_backends,
    backend_for,
    backend_of_module,
    device_of,
    generator_reduction,
    get_backend,
    is_array,
    is_device,
    library_of,
    list_backends,
    names_device_type,
    namespace_backend,
    namespace_owner,
    own_semantics,
    parse_spec,
    parse_specs,
)
from .spec import BackendSpec, SpecError

__all__ = [
    "HELPERS",
    "HELPER_NAMESPACES",
    "HOST_LIBRARY",
    "LIBRARIES",
    "TRACED",
    "Backend",
    "BackendInfo",
    "BackendSpec",
    "BackendUnavailable",
    "Conversion",
    "ConversionError",
    "DeviceUnavailable",
    "Namespace",
    "ReplayScope",
    "SpecError",
    "aligned_copy",
    "aligned_empty",
    "all_backends",
    "backend_for",
    "backend_of_module",
    "convert_to",
    "device_of",
    "dtype_name",
    "generator_reduction",
    "get_backend",
    "is_aligned",
    "is_array",
    "is_device",
    "library_of",
    "list_backends",
    "names_device_type",
    "namespace_backend",
    "namespace_owner",
    "own_semantics",
    "parse_spec",
    "parse_specs",
]

"""One small adapter per array library, and moving arrays between them.

Importing this package imports no array library: adapters recognise arrays through
``sys.modules`` and import their library only when asked to do something.
"""

from .base import (
    Backend,
    BackendInfo,
    BackendUnavailable,
    Conversion,
    ConversionError,
    DeviceUnavailable,
)
from .convert import aligned_copy, aligned_empty, convert_to, is_aligned
from .registry import backend_for, device_of, get_backend, list_backends
from .spec import LIBRARIES, BackendSpec, SpecError, parse_spec, parse_specs

__all__ = [
    "LIBRARIES",
    "Backend",
    "BackendInfo",
    "BackendSpec",
    "BackendUnavailable",
    "Conversion",
    "ConversionError",
    "DeviceUnavailable",
    "SpecError",
    "aligned_copy",
    "aligned_empty",
    "backend_for",
    "convert_to",
    "device_of",
    "get_backend",
    "is_aligned",
    "list_backends",
    "parse_spec",
    "parse_specs",
]

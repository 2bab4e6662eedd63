"""Helpers for the backend tests: Python snippets in a fresh process, buffer addresses."""

from __future__ import annotations

from typing import Any

from tests.snippets import ROOT, TWO_CPUS, run_snippet

__all__ = ["ROOT", "TWO_CPUS", "address", "run_snippet"]


def address(x: Any) -> int:
    """Where an array's first element lives, to tell a view from a copy."""
    import numpy as np

    module = type(x).__module__
    if isinstance(x, np.ndarray):
        return x.ctypes.data
    if module.startswith("torch"):
        return x.data_ptr()
    if module.startswith(("jax", "jaxlib")):
        return x.unsafe_buffer_pointer()
    if module.startswith("array_api_strict"):
        return np.from_dlpack(x).ctypes.data
    raise TypeError(type(x))

"""The CuPy adapter where CuPy or a GPU is missing: unavailable, with the reason."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from porter_ext.backends import BackendUnavailable, convert_to, get_backend

backend = get_backend("cupy")
pytestmark = pytest.mark.skipif(
    backend.available()[0], reason="CuPy sees a GPU here: see test_gpu.py"
)


def test_unavailable_with_reason() -> None:
    ok, reason = backend.available()
    assert not ok
    if importlib.util.find_spec("cupy") is None:
        assert reason == "cupy is not installed (pip install porter-ext[cupy])"
        assert backend.version() is None
    else:
        assert reason.startswith("cupy sees no GPU")
    assert backend.devices() == []


def test_using_it_raises_backend_unavailable() -> None:
    with pytest.raises(BackendUnavailable) as raised:
        backend.namespace()
    assert raised.value.reason == backend.available()[1]
    with pytest.raises(BackendUnavailable):
        convert_to(np.ones(2), "cupy")


def test_numpy_arrays_are_not_cupy_arrays() -> None:
    assert not backend.owns(np.ones(2))

"""Fixtures for the backend tests: real arrays, and Python snippets run in a fresh process.

A fresh process is how to see what importing porter pulls in, and how to give JAX a
second CPU device (``XLA_FLAGS`` must be set before JAX starts).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest

from .helpers import TWO_CPUS, run_snippet


@pytest.fixture(scope="session")
def jax_two_cpus() -> Callable[[str], Any]:
    """Run a snippet where JAX has two CPU devices, ``cpu:0`` and ``cpu:1``."""
    pytest.importorskip("jax")
    flags = f"{os.environ.get('XLA_FLAGS', '')} {TWO_CPUS}".strip()

    def run(code: str) -> Any:
        return run_snippet(code, env={"XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"})

    return run

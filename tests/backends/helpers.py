"""Helpers for the backend tests: Python snippets in a fresh process, buffer addresses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TWO_CPUS = "--xla_force_host_platform_device_count=2"


def run_snippet(code: str, env: dict[str, str] | None = None, timeout: float = 120) -> Any:
    """Run ``code`` in a fresh interpreter with porter importable; return its JSON.

    The snippet prints one JSON document as the last line of its stdout.
    """
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=ROOT,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise AssertionError(f"snippet failed ({done.returncode}):\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


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

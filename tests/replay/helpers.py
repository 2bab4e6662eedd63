"""Helpers for the replay tests: a Python snippet in a fresh process with two JAX CPUs."""

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


def run_two_cpus(code: str, timeout: float = 180) -> Any:
    """Run ``code`` where JAX sees ``cpu:0`` and ``cpu:1`` (XLA_FLAGS must be set before
    JAX starts, hence a fresh interpreter); return the JSON its last stdout line prints."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} {TWO_CPUS}".strip()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise AssertionError(f"snippet failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])

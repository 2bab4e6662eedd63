"""Python snippets in a fresh interpreter: for what must be set before a library starts
(two JAX CPU devices need ``XLA_FLAGS`` before JAX is imported) or a clean ``sys.modules``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TWO_CPUS = "--xla_force_host_platform_device_count=2"


def run_snippet(code: str, env: dict[str, str] | None = None, timeout: float = 180) -> Any:
    """Run ``code`` with porter importable; return the JSON its last stdout line prints."""
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
        raise AssertionError(f"snippet failed ({done.returncode}):\n{done.stderr[-4000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def run_two_cpus(code: str, timeout: float = 180) -> Any:
    """`run_snippet` where JAX sees ``cpu:0`` and ``cpu:1``."""
    flags = f"{os.environ.get('XLA_FLAGS', '')} {TWO_CPUS}".strip()
    return run_snippet(code, {"XLA_FLAGS": flags, "JAX_PLATFORMS": "cpu"}, timeout)


#: a module of the person's beside the notebook (the ``folder`` fixture writes it)
MYMOD = textwrap.dedent(
    """\
    def norm_rows(m):
        n = m.pow(2).sum(1, keepdim=True).sqrt()
        return m / n


    def twice(m):
        return norm_rows(m) * 2


    class Scaler:
        def __init__(self, k):
            self.k = k

        def __call__(self, m):
            return m.mul(self.k)
    """
)

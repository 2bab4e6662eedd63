"""The person's process state a replay starts from: environment variables, the import
path, the working directory and each imported library's settings (error states, default
dtype, determinism, read through its adapter).

A worker kernel lives across cells; the person changes these between cells (a variable
set, a folder added to ``sys.path``, ``np.seterr`` restored). Each replay is sent with the
state the person's process had when the cell started, and the worker takes it before the
run, undoing what an earlier replay changed, so a replay starts where the original did.
"""

from __future__ import annotations

import importlib
import os
import sys
from dataclasses import dataclass, field
from typing import Any

from porter_ext.backends import LIBRARIES, get_backend
from porter_ext.backends.base import loaded


@dataclass
class ProcessState:
    """What the person's process had when a cell started. ``environ`` is what the worker
    is to have (the person's variables and the worker's own, see
    `LocalWorker.environment`), or None for a worker on another machine."""

    environ: dict[str, str] | None
    sys_path: list[str]
    cwd: str
    #: library name -> its adapter's `process_state`, for libraries the person imported
    libraries: dict[str, dict[str, Any]] = field(default_factory=dict)


def capture() -> ProcessState:
    """This process's state, now (no library is imported for it)."""
    libraries = {}
    for name in LIBRARIES:
        backend = get_backend(name)
        if loaded(backend.module) is not None:
            state = backend.process_state()
            if state is not None:
                libraries[name] = state
    return ProcessState(dict(os.environ), list(sys.path), os.getcwd(), libraries)


def take(state: ProcessState, own_path: list[str]) -> None:
    """Make this worker's state the person's ``state``; ``own_path``: the import path
    entries the worker needs besides the person's (porter itself). A worker on another
    machine takes the libraries' settings only."""
    if state.environ is not None:
        for key in set(os.environ) - set(state.environ):
            del os.environ[key]
        for key, value in state.environ.items():
            if os.environ.get(key) != value:
                os.environ[key] = value
        sys.path[:] = [*state.sys_path, *(p for p in own_path if p not in state.sys_path)]
        if os.path.isdir(state.cwd):
            os.chdir(state.cwd)
    for name, settings in state.libraries.items():
        backend = get_backend(name)
        if loaded(backend.module) is None:
            if settings == backend.initial_process_state:
                continue  # the cell that imports it gets this state anyway
            importlib.import_module(backend.module)
        backend.set_process_state(settings)

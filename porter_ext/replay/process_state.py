"""The person's process state a replay starts from: environment variables, the import
path, the working directory, the resource limits and the recursion limit, and each
imported library's settings (error states, default dtype, determinism, read through its
adapter).

A worker kernel lives across cells; the person changes these between cells (a variable
set, a folder added to ``sys.path``, ``np.seterr`` or ``resource.setrlimit`` restored). Each replay is sent with the
state the person's process had when the cell started, and the worker takes it before the
run, undoing what an earlier replay changed, so a replay starts where the original did.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from porter_ext.backends import LIBRARIES, get_backend
from porter_ext.backends.base import loaded

try:
    import resource
except ImportError:  # not on Windows: no limits to take
    resource = None  # type: ignore[assignment]

#: limits on what a process has used so far (CPU seconds), not on what it may use: a
#: worker that has run many cells would be past the person's at once
_CUMULATIVE = frozenset({"RLIMIT_CPU", "RLIMIT_RTTIME"})


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
    #: ``RLIMIT_*`` name -> the soft limit (`resource.RLIM_INFINITY` for none)
    limits: dict[str, int] = field(default_factory=dict)
    recursion_limit: int | None = None


def _limits() -> Iterator[tuple[str, int]]:
    """The resource limits a worker takes: name and ``resource`` constant."""
    if resource is None:
        return
    for name in sorted(dir(resource)):
        if name.startswith("RLIMIT_") and name not in _CUMULATIVE:
            yield name, getattr(resource, name)


def _soft_limits() -> dict[str, int]:
    found = {}
    for name, which in _limits():
        try:
            found[name] = resource.getrlimit(which)[0]
        except (OSError, ValueError):  # a limit this kernel does not know
            continue
    return found


def capture() -> ProcessState:
    """This process's state, now (no library is imported for it)."""
    libraries = {}
    for name in LIBRARIES:
        backend = get_backend(name)
        if loaded(backend.module) is not None:
            state = backend.process_state()
            if state is not None:
                libraries[name] = state
    return ProcessState(
        dict(os.environ),
        list(sys.path),
        os.getcwd(),
        libraries,
        _soft_limits(),
        sys.getrecursionlimit(),
    )


def _above(soft: int, hard: int) -> bool:
    """Whether a soft limit ``soft`` cannot be set under the hard limit ``hard``."""
    infinity = resource.RLIM_INFINITY
    return hard != infinity and (soft == infinity or soft > hard)


def unreachable(state: ProcessState) -> list[str]:
    """The person's soft limits this worker's hard limits no longer allow (a replay
    lowered them): what keeps it from taking ``state`` for good."""
    if state.environ is None or resource is None:
        return []
    lost = []
    for name, which in _limits():
        if name in state.limits:
            try:
                hard = resource.getrlimit(which)[1]
            except (OSError, ValueError):
                continue
            if _above(state.limits[name], hard):
                lost.append(name)
    return lost


def _take_limits(state: ProcessState) -> list[str]:
    """Set the person's soft limits here; the ones that cannot be set, with why."""
    failed = []
    for name, which in _limits():
        soft = state.limits.get(name)
        if soft is None:
            continue
        try:
            mine, hard = resource.getrlimit(which)
            if mine == soft:
                continue
            if _above(soft, hard):
                failed.append(f"{name} {soft} is above this worker's hard limit {hard}")
                continue
            resource.setrlimit(which, (soft, hard))
        except (OSError, ValueError) as error:
            failed.append(f"{name} {soft}: {error}")
    return failed


def take(state: ProcessState, own_path: list[str]) -> list[str]:
    """Make this worker's state the person's ``state``; ``own_path``: the import path
    entries the worker needs besides the person's (porter itself). A worker on another
    machine takes the recursion limit and the libraries' settings only (the rest are
    that machine's). Returns what could not be taken, each with why (empty: all was)."""
    failed = []
    if state.recursion_limit is not None and state.recursion_limit != sys.getrecursionlimit():
        try:
            sys.setrecursionlimit(state.recursion_limit)
        except (RecursionError, ValueError) as error:  # too low for this worker's stack
            failed.append(f"the recursion limit {state.recursion_limit}: {error}")
    if state.environ is not None:
        if resource is not None:
            failed += _take_limits(state)
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
    return failed

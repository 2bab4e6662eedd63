"""The person's process-wide random states, captured before a cell runs and restored in
the worker before each replay, so that a cell that draws numbers draws the same ones in
its replays and the person's own generators are never advanced by one.

Covered: Python's `random`, every loaded library's legacy global generator
(``module.random.get_state``: NumPy's ``np.random.*``) and global CPU generator
(``module.get_rng_state``: torch's), and that library's accelerator generators through
its device-agnostic runtime. Libraries are found through the registry and duck-typed;
nothing is imported that the person's process did not already import.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass, field
from typing import Any

from porter_ext.backends import LIBRARIES, get_backend


@dataclass
class RandomStates:
    """Plain-picklable copies of the global random states of one process."""

    python: Any = None
    legacy: dict[str, Any] = field(default_factory=dict)  # module → get_state() value
    cpu: dict[str, bytes] = field(default_factory=dict)  # module → raw generator state
    accelerator: dict[str, list[bytes]] = field(default_factory=dict)


def _loaded_libraries() -> list[Any]:
    found = []
    for name in LIBRARIES:
        module = sys.modules.get(get_backend(name).module)
        if module is not None:
            found.append(module)
    return found


def _raw(state: Any) -> bytes:
    """A generator state tensor as bytes (it is a uint8 array of its library)."""
    from porter_ext.backends import backend_for

    backend = backend_for(state)
    return backend.host_copy(state).tobytes() if backend is not None else bytes(state)


def _accelerator_module(module: Any) -> Any:
    accelerator = getattr(module, "accelerator", None)
    if accelerator is None or not accelerator.is_available():
        return None
    get = getattr(module, "get_device_module", None)
    return get() if get is not None else None


def capture() -> RandomStates:
    """The global random states of this process, now."""
    states = RandomStates(python=random.getstate())
    for module in _loaded_libraries():
        legacy = getattr(module, "random", None)
        if legacy is not None and callable(getattr(legacy, "get_state", None)):
            states.legacy[module.__name__] = legacy.get_state()
        if callable(getattr(module, "get_rng_state", None)):
            states.cpu[module.__name__] = _raw(module.get_rng_state())
            device_module = _accelerator_module(module)
            if device_module is not None:
                states.accelerator[module.__name__] = [
                    _raw(s) for s in device_module.get_rng_state_all()
                ]
    return states


def restore(states: RandomStates) -> None:
    """Set this process's global random states to ``states`` (importing a library only
    when the sender had it loaded)."""
    import importlib

    if states.python is not None:
        random.setstate(states.python)
    for name, state in states.legacy.items():
        importlib.import_module(name).random.set_state(state)
    for name, raw in states.cpu.items():
        module = importlib.import_module(name)
        module.set_rng_state(module.frombuffer(bytearray(raw), dtype=module.uint8))
        device_module = _accelerator_module(module)
        if device_module is not None and name in states.accelerator:
            device_module.set_rng_state_all(
                [
                    module.frombuffer(bytearray(r), dtype=module.uint8)
                    for r in states.accelerator[name]
                ]
            )

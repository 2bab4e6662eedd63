"""The person's process-wide random states, captured before a cell runs and restored in
the worker before each replay, so that a cell that draws numbers draws the same ones in
its replays and the person's own generators are never advanced by one.

Covered: Python's `random`, and each loaded library's global generators as its adapter
reads them (`Backend.random_state`: NumPy's ``np.random.*``, torch's CPU generator and
its accelerator's). Nothing is imported that the person's process did not already import.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from porter_ext.backends import LIBRARIES, get_backend


@dataclass
class RandomStates:
    """Plain-picklable copies of the global random states of one process."""

    python: Any = None
    #: library (its spec name) → its adapter's `random_state`
    libraries: dict[str, Any] = field(default_factory=dict)


def capture() -> RandomStates:
    """The global random states of this process, now."""
    states = RandomStates(python=random.getstate())
    for name in LIBRARIES:
        state = get_backend(name).random_state()
        if state is not None:
            states.libraries[name] = state
    return states


def restore(states: RandomStates) -> None:
    """Set this process's global random states to ``states`` (importing a library only
    when the sender had it loaded)."""
    if states.python is not None:
        random.setstate(states.python)
    for name, state in states.libraries.items():
        get_backend(name).set_random_state(state)

"""Replaying a recorded cell on other backends and devices.

`analyse` finds what a cell reads, writes and may modify in place. Replays run in worker
kernels (`workers`, `dispatch`): `capture` serialises the inputs before the original run
(`transport`: shared memory for arrays, cloudpickle for the rest), and in the worker
(`worker_side`, `placement`, `sandbox`, `rng`) they move to the backend and the cell runs
recorded like the original. In-process (``--in-process``): `build_namespace` converts the
inputs without touching the person's namespace and `replay_cell` / `replay_all` run it.
"""

from porter_ext.replay.analysis import CellIO, analyse
from porter_ext.replay.inputs import (
    ReplayInputs,
    build_namespace,
    conversion_label,
    input_devices,
    is_array_namespace,
)
from porter_ext.replay.run import (
    ReplayResult,
    ReplaySettings,
    ReplayTimeout,
    collect_outputs,
    replay_all,
    replay_cell,
)

__all__ = [
    "CellIO",
    "ReplayInputs",
    "ReplayResult",
    "ReplaySettings",
    "ReplayTimeout",
    "analyse",
    "build_namespace",
    "collect_outputs",
    "conversion_label",
    "input_devices",
    "is_array_namespace",
    "replay_all",
    "replay_cell",
]

"""Replaying a recorded cell on other backends and devices.

`analyse` finds what a cell reads, writes and may modify in place; `build_namespace`
converts its inputs to a target backend without touching the person's namespace;
`replay_cell` / `replay_all` run it there, recorded like the original run.
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

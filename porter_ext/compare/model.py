"""Results of comparing a replay with the original run: per-output diffs and device findings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

DeviceFindingKind = Literal[
    "default_device_creation",
    "cross_device",
    "implicit_transfer",
    "traced_device",
    "host_sync",
]


@dataclass(frozen=True)
class DeviceFinding:
    """A place where data did not stay on, or land on, the device it should have."""

    line: int | None
    name: str
    kind: DeviceFindingKind
    backend: str | None
    message: str


@dataclass(frozen=True)
class OutputComparison:
    """One output of a cell on one replay backend, compared with the original run.

    Field names are the keys of `replays[].outputs[]` in the report (CONTRACT.md).
    """

    name: str
    shape: list[int] | None
    dtype: str | None
    device: str | None
    expected_device: str | None
    device_ok: bool | None
    max_abs_err: float | None
    max_rel_err: float | None
    mismatched: int | None
    nan_mismatch: bool | None
    within_tolerance: bool | None
    rtol: float | None
    atol: float | None
    conversion: str | None
    note: str | None = None

"""What the recorder keeps of a cell run: one `CallRecord` per distinct call at a site."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

CallKind = Literal["function", "method", "attribute", "operator", "index", "transformation"]
KINDS: tuple[str, ...] = ("function", "method", "attribute", "operator", "index", "transformation")
CallStatus = Literal[
    "standard",
    "non_standard",
    "non_standard_usage",
    "acknowledged",
    "device_specific",
    "host_sync",
    "outside_namespace",
]
STATUSES: tuple[str, ...] = (
    "standard",
    "non_standard",
    "non_standard_usage",
    "acknowledged",
    "device_specific",
    "host_sync",
    "outside_namespace",
)
#: statuses that are findings (everything but a standard call, and but a call of another
#: library or a transformation, which the standard does not judge: ``outside_namespace``)
FINDING_STATUSES = frozenset(STATUSES) - {"standard", "outside_namespace"}


@dataclass(frozen=True)
class ErrorInfo:
    """An exception a cell (or a replay of it) raised, with the cell line it came from."""

    type: str
    message: str
    line: int | None = None


@dataclass
class CallRecord:
    """One array call site of a cell, merged over identical calls (same callee, status, devices)."""

    line: int
    col: int
    name: str
    library: str
    kind: CallKind
    status: CallStatus
    standard_name: str | None = None
    suggestion: str | None = None
    devices_in: list[str] = field(default_factory=list)
    device_out: str | None = None
    count: int = 1
    message: str = ""
    #: keyword names the call passed (``device`` tells a creation call that placed its output)
    keywords: list[str] = field(default_factory=list)
    #: the cell whose code made the call when it is not the recorded cell (a function
    #: defined in an earlier cell): ``line``/``col`` are then that cell's
    origin_cell: int | str | None = None

    @property
    def is_finding(self) -> bool:
        return self.status in FINDING_STATUSES

"""What a run could see: Python and every backend spec, available or not (CONTRACT.md's
``environment``). `BackendEntry` is also what ``porter backends`` lists: the backends
foundation (`porter_ext.backends.list_backends`) makes these entries itself."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class BackendEntry:
    """A backend spec the run could see, or could not (then `reason` says why)."""

    spec: str
    library: str
    version: str | None
    available: bool
    devices: list[str] = field(default_factory=list)
    reason: str | None = None


@dataclass(frozen=True)
class Environment:
    python: str
    backends: list[BackendEntry] = field(default_factory=list)

"""Options of one ``%%port`` cell and the session-wide settings, with their defaults."""

from __future__ import annotations

from dataclasses import dataclass, field

from porter_ext.spec.standard import DEFAULT_VERSION

#: set to 1: every cell's replays may reach the network (``porter run --allow-network``
#: sets it for its kernel)
NETWORK_VARIABLE = "PORTER_ALLOW_NETWORK"


@dataclass
class PortOptions:
    """Options of one ``%%port`` cell (defaults come from the session)."""

    strict: bool = False
    quiet: bool = False
    #: backend specs to replay on; None: the session's (``%port backends``)
    backends: list | None = None
    no_replay: bool = False
    rtol: float | None = None
    atol: float | None = None
    #: tolerance policy name (see porter_ext.compare.tolerance.POLICIES); None: the session's
    policy: str | None = None
    #: seconds each replay may run
    timeout: float | None = None
    #: the standard version this cell is checked against; None: the session's
    version: str | None = None
    #: replay in the person's own process (faster, unprotected) instead of in workers
    in_process: bool = False
    #: skip the control replay on the original backend (no determinism check)
    no_control: bool = False
    #: replays reach the person's network (local workers otherwise have none)
    allow_network: bool = False
    #: propose a rewrite into the standard, verified by replays (``--fix``)
    fix: bool = False
    #: more folders whose Python files are the person's code, for this cell (``--paths``)
    paths: list[str] = field(default_factory=list)


@dataclass
class SessionConfig:
    """Session-wide settings, with their defaults."""

    #: the standard version calls are checked against
    version: str = DEFAULT_VERSION
    #: strict checking in cells recorded by ``%port on``
    strict: bool = False
    #: backend specs every recorded cell is replayed on (``%port backends SPECS``)
    backends: list = field(default_factory=list)
    #: tolerance policy for comparing replays
    policy: str = "porter"

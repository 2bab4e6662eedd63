"""The porter session: configuration, the history of cell results, the per-cell pipeline.

`Session` (``session.py``) keeps what lives between cells of one kernel and runs each
cell through the stages (its replays through `porter_ext.compare.pipeline`, ``--fix``
through `porter_ext.fix.verify`); `options` holds the settings and their defaults;
`result` is what ``_port`` is bound to.
"""

from porter_ext.session.options import PortOptions, SessionConfig
from porter_ext.session.result import PortResult, environment
from porter_ext.session.session import OnTransformer, Session, drop_session, get_session

__all__ = [
    "OnTransformer",
    "PortOptions",
    "PortResult",
    "Session",
    "SessionConfig",
    "drop_session",
    "environment",
    "get_session",
]

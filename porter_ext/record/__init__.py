"""Watching a cell run: the call-site rewrite, the recorder and the strict namespace."""

from porter_ext.model.calls import STATUSES, CallRecord, ErrorInfo
from porter_ext.record.cell import NO_VALUE, CellRun, run_recorded
from porter_ext.record.recorder import Recorder, clear_caches
from porter_ext.record.strict import NonStandardError, strict_namespace

__all__ = [
    "NO_VALUE",
    "STATUSES",
    "CallRecord",
    "CellRun",
    "ErrorInfo",
    "NonStandardError",
    "Recorder",
    "clear_caches",
    "run_recorded",
    "strict_namespace",
]

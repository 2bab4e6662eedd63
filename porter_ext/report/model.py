"""The report model moved to `porter_ext.model` (issue 17); these names stay importable
from here for the modules that have not moved yet (session's verification of rewrites,
and tests/browser/)."""

# re-exported for session/fixing.py & co. until they move (issue 17)
from porter_ext.model.cells import DIFFERS, CellEntry
from porter_ext.model.entries import DefinitionVerdict, ReplayEntry, RewriteEntry, RewriteSiteEntry
from porter_ext.model.report import NON_STANDARD_STATUSES, Report

__all__ = [
    "DIFFERS",
    "NON_STANDARD_STATUSES",
    "CellEntry",
    "DefinitionVerdict",
    "ReplayEntry",
    "Report",
    "RewriteEntry",
    "RewriteSiteEntry",
]

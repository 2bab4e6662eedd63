"""The cell model, beneath the stages: what a cell's run, replays, comparisons and rewrite
produced (`CellEntry` and its parts, the `Report` of many), each type once, with what is
derived from them when an entry is made (its headline, its plan; a report's summary).

The stages fill it; the report stage encodes it as JSON (`porter_ext.report.codec`),
validates, reads back and renders it. It imports no stage, and no array library.
"""

from porter_ext._lazy import lazy_names

_NAMES = {
    "CallOrigin": "calls",
    "CallRecord": "calls",
    "ErrorInfo": "calls",
    "cell_label": "calls",
    "CellEntry": "cells",
    "Diagnostic": "diagnostics",
    "diagnostics_of": "diagnostics",
    "headline_of": "cells",
    "DeviceFinding": "comparison",
    "ErrorHistogram": "comparison",
    "OutputComparison": "comparison",
    "DefinitionVerdict": "entries",
    "ReplayEntry": "entries",
    "ReplayOutcome": "entries",
    "RewriteEntry": "entries",
    "RewriteSiteEntry": "entries",
    "Headline": "headline",
    "HeadlineCounts": "headline",
    "PlanItem": "plan",
    "build_plan": "plan",
    "BackendEntry": "environment",
    "Environment": "environment",
    "Report": "report",
    "Source": "report",
    "Summary": "report",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = sorted(_NAMES)

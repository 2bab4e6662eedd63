"""The report stage: the report model (JSON schema `porter.report/1`) and its views.

Importing this package is cheap: jinja2, jsonschema and matplotlib are imported only
when a report is rendered, validated or plotted, and its names import their modules when
first used.
"""

from porter_ext._lazy import lazy_names

_NAMES = {
    "FindingGroup": "findings",
    "group_findings": "findings",
    "render_html": "html",
    "render_markdown": "markdown",
    "NON_STANDARD_STATUSES": "model",
    "SCHEMA": "model",
    "BackendEntry": "model",
    "CellEntry": "model",
    "Environment": "model",
    "ErrorHistogram": "model",
    "OutputEntry": "model",
    "ReplayEntry": "model",
    "Report": "model",
    "Source": "model",
    "Summary": "model",
    "load_report": "model",
    "ReportError": "validation",
    "report_schema": "validation",
    "validate": "validation",
    "format_of": "write",
    "render": "write",
    "write_report": "write",
}
__getattr__, __dir__ = lazy_names(__name__, _NAMES)

__all__ = [
    "NON_STANDARD_STATUSES",
    "SCHEMA",
    "BackendEntry",
    "CellEntry",
    "Environment",
    "ErrorHistogram",
    "FindingGroup",
    "OutputEntry",
    "ReplayEntry",
    "Report",
    "ReportError",
    "Source",
    "Summary",
    "format_of",
    "group_findings",
    "load_report",
    "render",
    "render_html",
    "render_markdown",
    "report_schema",
    "validate",
    "write_report",
]

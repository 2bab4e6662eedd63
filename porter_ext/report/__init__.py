"""The report stage: the report model (JSON schema `porter.report/1`) and its views.

Importing this package is cheap: jinja2, jsonschema and matplotlib are imported only
when a report is rendered, validated or plotted.
"""

from porter_ext.report.findings import FindingGroup, group_findings
from porter_ext.report.html import render_html
from porter_ext.report.markdown import render_markdown
from porter_ext.report.model import (
    NON_STANDARD_STATUSES,
    SCHEMA,
    BackendEntry,
    CellEntry,
    Environment,
    ErrorHistogram,
    OutputEntry,
    ReplayEntry,
    Report,
    Source,
    Summary,
    load_report,
)
from porter_ext.report.validation import ReportError, report_schema, validate
from porter_ext.report.write import format_of, render, write_report

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

"""The report stage: the report's JSON codec and schema (`porter.report/1`), reading a
report back, and its views. The model it shows is `porter_ext.model`'s; its names are
re-exported here.

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
    "NON_STANDARD_STATUSES": "porter_ext.model.report",
    "SCHEMA": "porter_ext.model.report",
    "BackendEntry": "porter_ext.model.report",
    "CellEntry": "porter_ext.model.cells",
    "cell_from_dict": "codec",
    "cell_to_dict": "codec",
    "report_from_dict": "codec",
    "report_to_dict": "codec",
    "report_to_json": "codec",
    "Environment": "porter_ext.model.report",
    "ErrorHistogram": "porter_ext.model.comparison",
    "OutputEntry": "porter_ext.model.entries",
    "ReplayEntry": "porter_ext.model.entries",
    "Report": "porter_ext.model.report",
    "Source": "porter_ext.model.report",
    "Summary": "porter_ext.model.report",
    "load_report": "load",
    "report_from_json": "load",
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
    "cell_from_dict",
    "cell_to_dict",
    "format_of",
    "group_findings",
    "load_report",
    "render",
    "render_html",
    "render_markdown",
    "report_from_dict",
    "report_from_json",
    "report_schema",
    "report_to_dict",
    "report_to_json",
    "validate",
    "write_report",
]

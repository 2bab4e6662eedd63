"""Reading a report back: the JSON text, validated against the schema, as the model."""

from __future__ import annotations

from os import PathLike
from pathlib import Path

from porter_ext.model.report import Report
from porter_ext.report.codec import report_from_dict
from porter_ext.report.validation import ReportError, parse_report_json


def report_from_json(text: str) -> Report:
    """Parse and validate JSON text; `ReportError` names what is wrong."""
    return report_from_dict(parse_report_json(text))


def load_report(path: str | PathLike[str]) -> Report:
    """Read a JSON report from disk; `ReportError` says why it cannot be used."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(f"{path}: cannot read the report: {exc}") from None
    return report_from_dict(parse_report_json(text, origin=str(path)))

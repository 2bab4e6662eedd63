"""Writing a report to disk in any of its formats, after checking it against the schema.

Validating before every write means a report that reaches CI, a reviewer or the
JupyterLab renderer always matches `porter.report/1`, whichever view it was written as.
"""

from __future__ import annotations

import os
import tempfile
from os import PathLike
from pathlib import Path
from typing import Literal

from porter_ext.report.model import Report
from porter_ext.report.validation import ReportError, validate

Format = Literal["html", "md", "json"]
FORMATS: tuple[str, ...] = ("html", "md", "json")
_SUFFIXES = {".html": "html", ".htm": "html", ".md": "md", ".markdown": "md", ".json": "json"}


def format_of(path: str | PathLike[str]) -> Format:
    """The format a path's suffix asks for; `ReportError` when it asks for none."""
    suffix = Path(path).suffix.lower()
    try:
        return _SUFFIXES[suffix]  # type: ignore[return-value]
    except KeyError:
        raise ReportError(
            f"{path}: cannot tell the report format from the suffix {suffix or '(none)'!r}; "
            f"use .html, .md or .json, or give the format ({', '.join(FORMATS)})"
        ) from None


def render(report: Report, format: Format) -> str:
    """The report as text in `format`, validated first."""
    if format not in FORMATS:
        raise ReportError(f"unknown report format {format!r}; use one of {', '.join(FORMATS)}")
    validate(report.to_dict())
    if format == "json":
        return report.to_json() + "\n"
    if format == "md":
        from porter_ext.report.markdown import render_markdown

        return render_markdown(report)
    from porter_ext.report.html import render_html

    return render_html(report)


def write_report(report: Report, path: str | PathLike[str], format: Format | None = None) -> Path:
    """Validate, render and write the report; returns the path written.

    The file is written to a temporary name and then moved into place, so a reader (or a
    browser reloading it) never sees half a report.
    """
    path = Path(path)
    text = render(report, format or format_of(path))
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path

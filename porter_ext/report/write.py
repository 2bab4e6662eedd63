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

from porter_ext.model.report import Report
from porter_ext.report.codec import dump_json, report_to_dict
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
    data = report_to_dict(report)
    validate(data)
    if format == "json":
        return dump_json(data) + "\n"
    if format == "md":
        from porter_ext.report.markdown import render_markdown

        return render_markdown(report)
    from porter_ext.report.html import render_html

    return render_html(report)


class OverwriteError(ReportError):
    """The output path holds something porter must not replace without being told to."""


#: how each format's output begins, and what its first bytes hold: what porter may
#: replace without ``--force``
_PORTER_MARKS = (
    ("{", '"schema": "porter.report/'),
    ("<!doctype html", 'id="porter-meta"'),
    ("# porter report", "# porter report"),
)


def is_porter_output(path: str | PathLike[str]) -> bool:
    """Whether `path` is a file porter wrote (a report in any format) or is empty."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(65536)
    except OSError:
        return False
    if not head.strip():
        return True
    text = head.decode("utf-8", errors="replace").lstrip()
    return any(text.startswith(start) and mark in text for start, mark in _PORTER_MARKS)


def same_file(path: str | PathLike[str], other: str | PathLike[str]) -> bool:
    """Whether two paths name one existing file (links and relative spellings included)."""
    try:
        return os.path.samefile(path, other)
    except OSError:
        return False


def check_overwrite(
    path: str | PathLike[str], *, source: str | PathLike[str] | None = None, force: bool = False
) -> None:
    """Refuse to replace the input (`source`) ever, and a file porter did not write unless
    `force`: `OverwriteError` says which and what to do."""
    path = Path(path)
    if source is not None and same_file(path, source):
        raise OverwriteError(f"{path} is the input itself; choose another output path")
    if not force and path.is_file() and not is_porter_output(path):
        raise OverwriteError(
            f"{path} exists and is not a porter report; choose another path or pass --force"
        )


def _file_mode() -> int:
    """The mode a new file gets under the person's umask (0644 under the usual 022)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return 0o666 & ~int(line.split()[1], 8)
    except (OSError, ValueError):
        pass  # not Linux: ask the process, the only other way to read the umask
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_text_atomic(path: str | PathLike[str], text: str) -> Path:
    """Write `text` to a temporary file beside `path` and move it into place, so a reader
    (or a browser reloading it) never sees half a file; the file gets the umask's mode,
    not the 0600 of a temporary file."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def write_report(
    report: Report,
    path: str | PathLike[str],
    format: Format | None = None,
    *,
    force: bool = False,
    source: str | PathLike[str] | None = None,
) -> Path:
    """Validate, render and write the report atomically; returns the path written.

    Never replaces `source` (the notebook or report it was made from), nor, without
    `force`, a file porter did not write (`OverwriteError`).
    """
    path = Path(path)
    text = render(report, format or format_of(path))
    check_overwrite(path, source=source, force=force)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_text_atomic(path, text)

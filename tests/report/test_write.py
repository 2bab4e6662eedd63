"""Writing reports: format from the suffix, validation before anything touches the disk."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from porter_ext.report import Report, ReportError, format_of, load_report, render, write_report
from tests.report.conftest import make_call, make_cell, make_environment


@pytest.mark.parametrize(
    ("name", "fmt", "start"),
    [
        ("r.html", "html", "<!doctype html>"),
        ("r.HTM", "html", "<!doctype html>"),
        ("r.md", "md", "# porter report"),
        ("r.markdown", "md", "# porter report"),
        ("r.json", "json", "{"),
    ],
)
def test_format_from_suffix(tmp_path: Path, report: Report, name: str, fmt: str, start: str):
    assert format_of(name) == fmt
    path = write_report(report, tmp_path / "out" / name)
    assert path.read_text(encoding="utf-8").startswith(start)
    assert [p.name for p in path.parent.iterdir()] == [name]  # no temporary file left


def test_explicit_format_wins(tmp_path: Path, report: Report) -> None:
    path = write_report(report, tmp_path / "report.txt", "json")
    assert load_report(path) == report


def test_unknown_suffix_and_format(tmp_path: Path, report: Report) -> None:
    with pytest.raises(ReportError, match=r"suffix '\.txt'; use \.html, \.md or \.json"):
        write_report(report, tmp_path / "r.txt")
    with pytest.raises(ReportError, match="unknown report format 'pdf'"):
        render(report, "pdf")  # type: ignore[arg-type]


def test_invalid_report_is_not_written(tmp_path: Path) -> None:
    bad = make_cell(0, calls=0)
    bad = replace(bad, calls=[replace(make_call(0), status="weird")])
    report = Report.build([bad], make_environment(), array_api_version="x")
    for suffix in (".html", ".md", ".json"):
        path = tmp_path / f"r{suffix}"
        with pytest.raises(ReportError, match=r"cells\[0\]\.calls\[0\]\.status: 'weird'"):
            write_report(report, path)
        assert not path.exists()


def test_json_file_is_strict_json(tmp_path: Path, report: Report) -> None:
    text = write_report(report, tmp_path / "r.json").read_text(encoding="utf-8")
    json.loads(text, parse_constant=lambda name: pytest.fail(f"non-standard JSON: {name}"))

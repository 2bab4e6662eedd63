"""Writing reports never surprises: the umask's mode, no foreign file replaced, never the input.

Mirrors the safety half of porter_ext/report/write.py (tests/report/test_write.py covers
formats and validation).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from porter_ext.model.report import Environment, Report
from porter_ext.report.write import OverwriteError, is_porter_output, write_report


@pytest.fixture
def report() -> Report:
    return Report.build([], Environment(python="3.11"), array_api_version="2025.12")


@pytest.fixture
def umask():
    old = os.umask(0o022)
    yield lambda mask: os.umask(mask)
    os.umask(old)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o002, 0o664)])
def test_reports_get_the_umask_mode_not_0600(tmp_path, report, umask, mask, mode):
    umask(mask)
    for name in ("r.json", "r.html", "r.md"):
        path = write_report(report, tmp_path / name)
        assert stat.S_IMODE(path.stat().st_mode) == mode, name
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "r.json", "r.md"]


def test_a_file_porter_did_not_write_is_kept_unless_forced(tmp_path, report):
    mine = tmp_path / "notes.md"
    mine.write_text("# my notes\n")
    with pytest.raises(OverwriteError, match="--force"):
        write_report(report, mine)
    assert mine.read_text() == "# my notes\n"
    write_report(report, mine, force=True)
    assert is_porter_output(mine)
    write_report(report, mine)  # porter's own output: replaced without asking


@pytest.mark.parametrize("name", ["r.json", "r.html", "r.md"])
def test_each_format_is_recognised_as_porter_output(tmp_path, report, name):
    assert is_porter_output(write_report(report, tmp_path / name))


def test_the_input_is_never_replaced_even_with_force(tmp_path, report):
    source = tmp_path / "r.json"
    write_report(report, source)
    link = tmp_path / "link.json"
    link.symlink_to(source)
    for target in (source, link, Path(os.path.relpath(source))):
        with pytest.raises(OverwriteError, match="input itself"):
            write_report(report, target, "json", force=True, source=source)

"""Choosing the standard version: ``%%port --version V`` for one cell, ``%port version V``
for the session; the newest published version (2025.12) by default."""

from __future__ import annotations

import pytest

CELL = "import numpy as np\na = np.arange(4)\nm = np.isin(a, a[:2])\n"


@pytest.fixture
def ip(port_shell):
    yield port_shell
    port_shell.run_line_magic("port", "version 2025.12")


def _isin_status(ip, line: str) -> str:
    result = ip.run_cell(f"%%port {line}\n{CELL}")
    assert result.success, result.error_in_exec
    [call] = [c for c in ip.user_ns["_port"].entry.calls if c.name.endswith("isin")]
    return call.status


def test_the_default_is_the_newest_version_and_a_cell_may_choose_another(ip):
    assert _isin_status(ip, "--no-replay") == "standard"  # isin is new in 2025.12
    assert _isin_status(ip, "--no-replay --version 2024.12") == "non_standard"
    # the cell's choice does not stay: the next cell is checked against 2025.12 again
    assert _isin_status(ip, "--no-replay") == "standard"


def test_port_version_sets_the_session_version(ip, capsys):
    ip.run_line_magic("port", "version 2023.12")
    assert "2023.12" in capsys.readouterr().out
    assert _isin_status(ip, "--no-replay") == "non_standard"


@pytest.mark.parametrize("bad", ["1999.1", "", "2025.12 2024.12", "nan"])
def test_an_unknown_version_is_a_usage_error_and_runs_nothing(ip, bad):
    from IPython.core.error import UsageError

    with pytest.raises(UsageError):
        ip.run_line_magic("port", f"version {bad}".strip())
    shown = bad or '""'
    result = ip.run_cell(f"%%port --version {shown}\nmarker = 1\n")
    assert not result.success and "marker" not in ip.user_ns

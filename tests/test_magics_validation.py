"""Every option of `%%port` and `%port`, given hostile values: a usage message, the cell not run.

Table-driven over the magic's own parser, like tests/test_cli_validation.py over the
CLI's: an option added later needs hostile values here. Also: a cell that does not parse
is recorded; under a headless run `%port clear`, `%port off` and `%unload_ext` keep the
report whole and say so on their cell.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

from porter_ext.magics import PortMagics
from porter_ext.report.codec import report_to_dict
from porter_ext.session import get_session

NUMBERS = ["", " ", "nan", "NaN", "inf", "-inf", "-1", "1e308", "1e999", "abc", "'3", '3"', "3 s"]
SPECS = ["", ",", "nan", "inf", "-1", "1e308", "abc", "'numpy", "numpy:", "tensorflow"]
SPECS += ["torch:cuda:x", "numpy,torch:cuda:-1", "jax:cpu:x"]  # devices no machine has
KINDS_OF = {
    "backends": SPECS,
    "rtol": NUMBERS,
    "atol": NUMBERS,
    "timeout": [*NUMBERS, "0", "0.0"],
    "policy": ["", "nan", "inf", "-1", "abc", "'porter", "PORTER"],
    "version": ["", "nan", "inf", "-1", "2021.11", "'2025.12", "2025.12.1", "latest"],
    "paths": ["", "/no/such/folder", "/etc/hostname", "'unbalanced"],
}
FORMATS = ["", "nan", "inf", "-1", "pdf", "'html"]
OUTPUTS = ["", "DIR", "DIR/", "UNWRITABLE", "MISSING_DIR", "FOREIGN", "PDF"]


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    shell.run_line_magic("load_ext", "porter_ext")
    shell.run_cell("import numpy as np\na = np.arange(3.0)\nn = 0")
    yield shell
    get_session(shell).headless = False
    shell.run_line_magic("unload_ext", "porter_ext")
    shell.reset(new_session=False)


@pytest.fixture
def paths(tmp_path) -> dict[str, str]:
    (tmp_path / "dir").mkdir()
    (tmp_path / "foreign.html").write_text("<p>mine</p>")
    return {
        "DIR": str(tmp_path / "dir"),
        "DIR/": str(tmp_path / "dir") + "/",
        "UNWRITABLE": "/proc/porter-hostile.html",
        "MISSING_DIR": str(tmp_path / "missing" / "r.html"),
        "FOREIGN": str(tmp_path / "foreign.html"),
        "PDF": str(tmp_path / "r.pdf"),
    }


def _word(value: str) -> str:
    """The value as the person would type it; unbalanced quotes stay unbalanced."""
    return value if value.count("'") % 2 or value.count('"') % 2 else shlex.quote(value)


def _options() -> list:
    return [a for a in PortMagics.port.parser._actions if a.nargs != 0 and a.dest != "help"]


def test_every_option_has_hostile_values():
    missing = [a.option_strings for a in _options() if a.dest not in KINDS_OF]
    assert not missing, f"give these %%port options hostile values in KINDS_OF: {missing}"


@pytest.mark.parametrize(
    ("flag", "value"),
    [(a.option_strings[-1], v) for a in _options() for v in KINDS_OF.get(a.dest, [])],
)
def test_port_cell_refuses_a_hostile_value_and_runs_nothing(ip, flag, value):
    result = ip.run_cell(f"%%port -b numpy --quiet {flag} {_word(value)}\nn += 1\nb = a + 1")
    assert isinstance(result.error_in_exec, UsageError), (flag, value, result.error_in_exec)
    assert "\n" not in str(result.error_in_exec).split("\nusage:")[0]
    assert ip.user_ns["n"] == 0  # the cell did not run
    assert "b" not in ip.user_ns


def test_bad_numbers_of_the_reproducer_give_usage_not_lost_replays(ip):
    """adv_22: these ran the cell and silently lost every replay."""
    for args in [
        "--rtol nan",
        "--rtol inf",
        "--atol 1e999",
        "--timeout nan",
        "--timeout inf",
        "--timeout 0",
    ]:
        result = ip.run_cell(f"%%port -b numpy --quiet {args}\nn += 1\nb = a + 1")
        assert isinstance(result.error_in_exec, UsageError), args
    result = ip.run_cell("%%port -b 'numpy\nb = a + 1")
    assert isinstance(result.error_in_exec, UsageError)
    assert "quot" in str(result.error_in_exec)
    assert ip.user_ns["n"] == 0


def test_good_values_still_replay(ip):
    result = ip.run_cell("%%port -b numpy --quiet --rtol 0 --atol 1e-3 --timeout 30\nb = a + 1")
    assert result.success
    replays = ip.user_ns["_port"].entry.replays
    assert "numpy" in {r.backend for r in replays}
    assert {r.status for r in replays} == {"ok"}


@pytest.mark.parametrize(
    "line",
    [
        *(f"backends {_word(v)}" for v in SPECS),
        "backends",
        "backends numpy torch",
        "on now",
        "frobnicate",
        "'on",
        'report "',
        "report --format",
        *(f"report --format {_word(v)}" for v in FORMATS),
        *(f"report -o {_word(v)}" for v in OUTPUTS),
        "report -o MISSING_DIR --format md",
    ],
)
def test_port_line_refuses_with_a_usage_message(ip, paths, line):
    for name, path in paths.items():
        line = line.replace(f" {name}", f" {shlex.quote(path)}")
    before = get_session(ip).config.backends
    with pytest.raises(UsageError):
        ip.run_line_magic("port", line)
    assert get_session(ip).config.backends == before
    assert Path(paths["FOREIGN"]).read_text() == "<p>mine</p>"
    assert not os.path.exists(os.path.dirname(paths["MISSING_DIR"]))  # none created unasked


def test_report_to_a_foreign_file_needs_force(ip, paths):
    ip.run_cell("%%port --quiet\nb = np.add(a, 1)")
    ip.run_line_magic("port", f"report -o {paths['FOREIGN']} --force")
    assert "porter-meta" in Path(paths["FOREIGN"]).read_text()


def test_a_cell_that_does_not_parse_is_recorded_with_its_line(ip):
    ip.run_cell("%%port --quiet\nx = 1\ny = (1,\n")
    entry = get_session(ip).cells[-1]
    assert entry.error is not None and entry.error.type == "SyntaxError"
    assert entry.error.line == 2
    assert entry.source == "x = 1\ny = (1,\n"


def test_headless_keeps_every_cell_and_notes_what_it_ignored(ip):
    session = get_session(ip)
    session.headless = True
    ip.run_cell("%%port --quiet\nb = a.sum(0)")
    ip.run_cell("%%port --quiet\n%port clear")
    ip.run_cell("%%port --quiet\n%port off")
    ip.run_cell("%%port --quiet\n%unload_ext porter_ext")
    assert get_session(ip) is session
    entries = session.cells[-4:]
    assert any(c.status == "non_standard" for c in entries[0].calls)
    assert ["%port clear" in n for n in entries[1].notes] == [True]
    assert ["%port off" in n for n in entries[2].notes] == [True]
    assert ["%unload_ext" in n for n in entries[3].notes] == [True]
    report = session.report()
    assert report.summary.non_standard >= 1
    assert "notes" in report_to_dict(report)["cells"][-1]


def test_clear_still_clears_in_a_live_session(ip):
    ip.run_cell("%%port --quiet\nb = a.sum(0)")
    ip.run_line_magic("port", "clear")
    assert get_session(ip).cells == []

"""Every option of every `porter` command, given hostile values: exit 2, one line, no traceback.

Table-driven over `build_parser()`: a command or option added later must be given a
baseline and a kind here, or `test_every_option_has_a_kind` says which. Runs `main()` in
this process (a few cases also through the real console script), so no kernel starts:
every value is refused before a notebook runs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from porter_ext.cli import main
from porter_ext.cli_parser import build_parser
from porter_ext.model.report import Environment, Report
from porter_ext.report.codec import report_to_json

#: values no number option may take (``0`` is added where 0 is not a value either)
NUMBERS = [
    "",
    " ",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "-1",
    "-0.5",
    "1e308",
    "1e999",
    "abc",
    "'3",
    '3"',
    "3 s",
]
SPECS = ["", ",", " , ", "nan", "inf", "-1", "1e308", "abc", "'numpy", "numpy:", "tensorflow,numpy"]
#: devices no machine has: the spelling breaks the library's own grammar
SPECS += ["torch:cuda:x", "numpy,torch:cuda:-1", "torch:cuda:0:1", "jax:cpu:x", "cupy:tpu"]
KINDS = ["", ",", "nan", "inf", "-1", "everything", "'any", "non_standard,oops"]
FORMATS = ["", "nan", "inf", "-1", "1e308", "pdf", "'html", "HTML"]
#: path values by name; resolved against the fixture's files in `_value`
OUTPUTS = ["", "DIR", "DIR/", "UNWRITABLE", "MISSING_DIR", "INPUT", "FOREIGN", "PDF"]
INPUTS = ["", "DIR", "MISSING", "'quoted"]

#: what a valid call of each command looks like (hostile values replace one part of it)
BASELINES = {
    "run": ["NOTEBOOK"],
    "report": ["REPORT"],
    "backends": [],
    "fix": ["NOTEBOOK", "-o", "OUT_IPYNB"],
    "lint": ["PYFILE"],
    "install-kernels": [],
}
#: (command, option dest) -> hostile values; `None` as command: any command
KINDS_OF = {
    (None, "backends"): SPECS,
    (None, "timeout"): [*NUMBERS, "0", "0.0", "-0"],
    (None, "fail_on"): KINDS,
    (None, "format"): FORMATS,
    (None, "output"): OUTPUTS,
    ("run", "notebook"): [*INPUTS, "NOT_A_NOTEBOOK"],
    ("fix", "notebook"): [*INPUTS, "NOT_A_NOTEBOOK"],
    ("report", "report"): [*INPUTS, "DEEP", "NOT_JSON"],
    ("fix", "report"): OUTPUTS,
    ("lint", "paths"): ["", "MISSING", "'quoted"],
    ("install-kernels", "prefix"): ["", "MISSING", "FOREIGN", "PROC", "'quoted"],
    ("lint", "path"): ["", "MISSING", "'quoted"],
    (None, "paths"): ["", "MISSING", "PYFILE", "'quoted"],
    ("lint", "from_report"): [*INPUTS, "DEEP", "NOT_JSON", "PYFILE"],
    ("lint", "max_repeats"): [*NUMBERS, "2.0", "+3", "0x10", "1" + "0" * 10, "\u0663"],
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    d = tmp_path_factory.mktemp("hostile")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1")]
    nbformat.write(nb, d / "nb.ipynb")
    report = Report.build([], Environment(python="3.11"), array_api_version="2025.12")
    (d / "report.json").write_text(report_to_json(report))
    (d / "dir").mkdir()
    (d / "foreign.json").write_text("my own notes\n")
    (d / "deep.json").write_text(
        '{"schema": "porter.report/1", "x": ' + "[" * 100000 + "]" * 100000 + "}"
    )
    (d / "not_json.json").write_text("{not json")
    (d / "not_a_notebook.ipynb").write_text("hello")
    (d / "code.py").write_text("import numpy as np\n")
    return {
        "NOTEBOOK": str(d / "nb.ipynb"),
        "REPORT": str(d / "report.json"),
        "PYFILE": str(d / "code.py"),
        "OUT_IPYNB": str(d / "ported.ipynb"),
        "DIR": str(d / "dir"),
        "DIR/": str(d / "dir") + "/",
        "UNWRITABLE": "/proc/porter-hostile.json",
        "MISSING_DIR": str(d / "missing" / "r.json"),
        "MISSING": str(d / "missing.ipynb"),
        "FOREIGN": str(d / "foreign.json"),
        "PDF": str(d / "r.pdf"),
        "PROC": "/proc",
        "DEEP": str(d / "deep.json"),
        "NOT_JSON": str(d / "not_json.json"),
        "NOT_A_NOTEBOOK": str(d / "not_a_notebook.ipynb"),
    }


def _commands() -> dict[str, argparse.ArgumentParser]:
    [sub] = [a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(sub.choices)


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    """The actions that take a value (flags have nothing hostile to give)."""
    return [
        a
        for a in parser._actions
        if not isinstance(a, argparse._HelpAction) and a.nargs != 0 and a.dest != "help"
    ]


def _kind(command: str, dest: str) -> list[str] | None:
    return KINDS_OF.get((command, dest), KINDS_OF.get((None, dest)))


def _cases() -> list[tuple[str, str, str]]:
    cases = []
    for command, parser in _commands().items():
        for action in _options(parser):
            for value in _kind(command, action.dest) or []:
                cases.append((command, action.dest, value))
    return cases


def _argv(command: str, dest: str, value: str, files: dict[str, str]) -> list[str]:
    """The command's baseline with `dest` set to the hostile `value`."""
    parser = _commands()[command]
    [action] = [a for a in _options(parser) if a.dest == dest]
    base = [files.get(w, w) for w in BASELINES[command]]
    hostile = base[0] if value == "INPUT" else files.get(value, value)
    if not action.option_strings:  # a positional: replace the baseline's first word
        return [command, hostile, *base[1:]]
    flag = action.option_strings[-1]
    if flag in base:  # the baseline gives it a valid value already: replace that
        i = base.index(flag)
        return [command, *base[:i], flag, hostile, *base[i + 2 :]]
    return [command, *base, flag, hostile]


def test_every_command_and_option_has_a_kind():
    unknown = [c for c in _commands() if c not in BASELINES]
    assert not unknown, f"give these commands a baseline in BASELINES: {unknown}"
    missing = [
        f"{command} {a.option_strings or a.dest}"
        for command, parser in _commands().items()
        for a in _options(parser)
        if _kind(command, a.dest) is None
    ]
    assert not missing, f"give these options hostile values in KINDS_OF: {missing}"


@pytest.mark.parametrize(("command", "dest", "value"), _cases())
def test_hostile_value_exits_2_with_one_line(files, capsys, command, dest, value):
    argv = _argv(command, dest, value, files)
    before = Path(files["NOTEBOOK"]).read_bytes(), Path(files["FOREIGN"]).read_bytes()
    status = main(argv)
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert status == 2, (argv, out, err)
    assert len(lines) == 1 and lines[0].startswith("porter"), (argv, err)
    assert "Traceback" not in err
    assert (Path(files["NOTEBOOK"]).read_bytes(), Path(files["FOREIGN"]).read_bytes()) == before
    assert not Path(files["PDF"]).exists()


@pytest.mark.parametrize("command", sorted(BASELINES))
def test_an_option_without_its_value_is_one_line(files, capsys, command):
    if command not in _commands():
        pytest.skip(f"porter {command} does not exist (yet)")
    for action in _options(_commands()[command]):
        if not action.option_strings:
            continue
        argv = [command, *[files.get(w, w) for w in BASELINES[command]], action.option_strings[-1]]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and "expected one argument" in err, argv


def test_no_command_and_an_unknown_command_are_one_line(capsys):
    for argv in ([], ["frobnicate"], ["run"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1, (argv, err)


def test_the_suffix_wins_over_format_with_a_note(files, tmp_path, capsys):
    out = tmp_path / "r.md"
    assert main(["report", files["REPORT"], "-o", str(out), "--format", "html"]) == 0
    assert "writing md, not --format html" in capsys.readouterr().out
    assert out.read_text().startswith("# porter report")


def test_report_refuses_a_foreign_file_unless_forced(files, tmp_path, capsys):
    out = tmp_path / "notes.html"
    out.write_text("<p>mine</p>")
    assert main(["report", files["REPORT"], "-o", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert out.read_text() == "<p>mine</p>"
    assert main(["report", files["REPORT"], "-o", str(out), "--force"]) == 0
    assert "porter-meta" in out.read_text()
    assert main(["report", files["REPORT"], "-o", str(out)]) == 0  # porter's own: replaced


def _porter(*args: str) -> subprocess.CompletedProcess:
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "args",
    [
        ["run", "NOTEBOOK", "--timeout", "2.5e999"],
        ["run", "NOTEBOOK", "--timeout", "inf"],
        ["run", "NOTEBOOK", "--timeout", "nan"],
        ["run", "NOTEBOOK", "-b", "torch:cuda:x"],
        ["fix", "NOTEBOOK", "-o", "OUT_IPYNB", "-b", "torch:cuda:x"],
        ["run", "NOTEBOOK", "-o", "DIR"],
        ["run", "NOTEBOOK", "-o", "UNWRITABLE"],
        ["run", "NOTEBOOK", "-o", "NOTEBOOK"],
        ["run", "NOTEBOOK", "-o", "PDF"],
        ["report", "DEEP", "-o", "PDF"],
        ["report", "DEEP"],
    ],
)
def test_the_console_script_exits_2_with_one_line(files, args):
    """The reproducer adv_20 (and adv_30's `-o NB`), through the installed script."""
    result = _porter(*[files.get(a, a) for a in args])
    assert result.returncode == 2, result
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert "Traceback" not in result.stderr
    json.loads(Path(files["NOTEBOOK"]).read_text())["cells"]  # still the notebook

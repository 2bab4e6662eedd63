"""What porter reads of a notebook file (issue 28, ``attacks/71, 74, 78, 79``): a notebook
whose cells are malformed or whose JSON nests too deeply is refused by `porter run`,
`porter fix` and `porter lint` alike with one line that names the cell, exit 2; text that
is not valid Unicode (a lone surrogate, a NUL) and a file name that is not UTF-8 are
reported, never a crash."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from porter_ext.cli import main


def _notebook(cells: object, **top: object) -> dict:
    return {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": cells, **top}


def _code(source: object) -> dict:
    return {
        "cell_type": "code",
        "metadata": {},
        "execution_count": None,
        "outputs": [],
        "source": source,
    }


#: name -> (notebook JSON, words the one line must carry)
MALFORMED = {
    "source_int": (_notebook([_code("x = 1"), _code(123)]), ["cell 2", "source"]),
    "source_list_of_ints": (_notebook([_code([1, 2, 3])]), ["cell 1", "source"]),
    "source_null": (_notebook([_code(None)]), ["cell 1", "source", "null"]),
    "source_dict": (_notebook([_code({"a": 1})]), ["cell 1", "source"]),
    "cells_dict": (_notebook({"a": 1}), ["cells"]),
    "cell_a_number": (_notebook([_code("x = 1"), 7]), ["cell 2"]),
    "no_cell_type": (_notebook([{"source": "x = 1", "metadata": {}}]), ["cell 1", "cell_type"]),
    "no_cells": ({"nbformat": 4, "nbformat_minor": 5, "metadata": {}}, ["cells"]),
    "top_level_list": ([1, 2, 3], ["not a notebook"]),
}


def _commands(path: Path, tmp_path: Path) -> dict[str, list[str]]:
    return {
        "run": ["run", str(path), "-o", str(tmp_path / "r.json")],
        "fix": ["fix", str(path), "-o", str(tmp_path / "ported.ipynb")],
        "lint": ["lint", str(path)],
    }


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_a_malformed_notebook_is_one_line_from_every_command(case, tmp_path, capsys):
    content, words = MALFORMED[case]
    path = tmp_path / f"{case}.ipynb"
    path.write_text(json.dumps(content))
    for command, argv in _commands(path, tmp_path).items():
        status = main(argv)
        out, err = capsys.readouterr()
        lines = err.strip().splitlines()
        assert status == 2, (command, out, err)
        assert len(lines) == 1 and "failed inside porter" not in err, (command, err)
        for word in words:
            assert word in lines[0], (command, word, lines[0])
    assert not (tmp_path / "r.json").exists() and not (tmp_path / "ported.ipynb").exists()


def test_an_unknown_cell_type_is_not_code(tmp_path, capsys):
    path = tmp_path / "sql.ipynb"
    cells = [{"cell_type": "sql", "source": "select 1", "metadata": {}}]
    path.write_text(json.dumps(_notebook(cells)))
    assert main(["lint", str(path)]) == 0
    assert "0 findings" in capsys.readouterr().out


def test_a_deeply_nested_notebook_is_one_line_from_every_command(tmp_path, capsys):
    deep = "[" * 100_000 + "]" * 100_000
    text = json.dumps(_notebook([_code("x = 1")], metadata={"deep": "HERE"}))
    path = tmp_path / "deep.ipynb"
    path.write_text(text.replace('"HERE"', deep))
    for command, argv in _commands(path, tmp_path).items():
        status = main(argv)
        err = capsys.readouterr().err
        assert status == 2, (command, err)
        assert len(err.strip().splitlines()) == 1 and "nested too deeply" in err, (command, err)


def _porter(*args: str | bytes) -> subprocess.CompletedProcess:
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    return subprocess.run([exe, *args], capture_output=True, timeout=600)


def test_lint_reports_a_lone_surrogate_and_a_nul_and_lints_the_rest(tmp_path):
    cells = [
        "import numpy as np\nx = np.arange(4.0)",
        "y = 1\x00\nz = 2",
        "s = '\udcff'\nw = np.sum(x, 0)",
        "label = 'admin\u202e'\nv = np.sum(x, 0)",
    ]
    path = tmp_path / "odd.ipynb"
    path.write_text(json.dumps(_notebook([_code(c) for c in cells])))  # \udcff escaped
    result = _porter("lint", str(path))
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 1, (out, err)  # the bidi cell's np.sum is a finding
    assert "Traceback" not in err and "failed inside porter" not in err, err
    assert "[cell 3]:2:" in out  # the np.sum of the last cell
    assert "[cell 1]:1:" in out and "NUL" in out, out
    assert "[cell 2]:1:" in out and "surrogate" in out, out


@pytest.mark.slow
def test_run_on_a_file_name_that_is_not_utf8(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("import numpy as np\ny = np.sum(np.ones(3), 0)")]
    path = os.path.join(os.fsencode(tmp_path), b"lat\xe9.ipynb")
    nbformat.write(nb, os.fsdecode(path))
    report = os.path.join(os.fsencode(tmp_path), b"r.json")
    result = _porter("run", path, "-o", report, "-b", "numpy")
    err = result.stderr.decode(errors="replace")
    assert result.returncode == 0, err
    assert b"Traceback" not in result.stderr and "failed inside porter" not in err
    written = json.loads(Path(os.fsdecode(report)).read_text(encoding="utf-8"))
    assert written["source"]["notebook"] == "lat\\xe9.ipynb"

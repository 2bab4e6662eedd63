"""``porter lint`` on hostile inputs (../shared/repro/turn3/attacks/54_lint_hostile_inputs.py,
issue 19 item 5), through the real command line: each ends with one clear line, never a
traceback or a hang. The FIFO and the invalid notebook are in tests/fix/test_lint.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from tests.fix.test_lint import _run_lint as _lint


def _one_error(done: subprocess.CompletedProcess, *expected: str) -> str:
    """The run failed as a usage error (exit 2) with one ``porter: error:`` line."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    assert done.returncode == 2 and done.stdout == "", done
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("porter: error: "), line
    for part in expected:
        assert part in line, line
    return line


def test_54_lint_hostile_inputs_binary_and_latin1_files(tmp_path):
    """attacks/54: a binary file named ``.py`` and a Latin-1 ``.py`` without a coding line
    (which Python itself refuses) are named as unreadable, not a traceback."""
    binary = tmp_path / "binary.py"
    shutil.copy(sys.executable, binary)
    _one_error(_lint(str(binary)), f"cannot read {binary}", "utf-8")
    latin1 = tmp_path / "latin1.py"
    latin1.write_bytes("# caf\xe9\nimport numpy as np\ny = np.sum(x, 1)\n".encode("latin-1"))
    _one_error(_lint(str(latin1)), f"cannot read {latin1}", "can't decode byte 0xe9")


def test_54_lint_hostile_inputs_missing_path(tmp_path):
    """attacks/54: a path that does not exist is a usage error naming it."""
    missing = tmp_path / "nope.py"
    _one_error(_lint(str(missing)), str(missing), "no such file")


def test_54_lint_hostile_inputs_symlink_loops_in_a_directory(tmp_path):
    """attacks/54: a directory holding a link to itself and two links to each other is
    walked once: its one file is linted once, and the loops are neither followed nor an
    error."""
    if not hasattr(os, "symlink"):
        pytest.skip("needs symbolic links")
    loop = tmp_path / "loopdir"
    loop.mkdir()
    (loop / "ok.py").write_text("import numpy as np\ny = np.cumsum(np.ones(3))\n")
    os.symlink(loop, loop / "self")
    os.symlink(loop / "b", loop / "a")
    os.symlink(loop / "a", loop / "b")
    done = _lint(str(loop))
    assert "Traceback" not in done.stderr and done.stderr == "", done.stderr
    assert done.returncode == 1, done
    found = [line for line in done.stdout.splitlines() if "PA001" in line]
    assert len(found) == 1, done.stdout
    assert found[0].startswith(f"{loop / 'ok.py'}:2:5: PA001 non_standard: numpy.cumsum")
    assert done.stdout.strip().endswith("in 1 file"), done.stdout

"""porter lint on big files (``turn3/attacks/54``, issue 28 item 4): read a chunk at a
time, findings printed as they are made, memory bounded whatever the file's size, and the
output complete: every finding is counted, and JSON lists every one."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from porter_ext.fix import lint
from porter_ext.fix.formats import render, write
from porter_ext.fix.lint import LintResult, LintRun, lint_paths, lint_source
from tests.fix.generated import PEAK_WRAPPER

#: the line of ``turn3/attacks/54``: two findings each (``x.sum(0)`` on an unknown ``x``
#: is none)
_DENSE = "y = np.sum(x, 1) + x.sum(0) * torch.max(a, b)\n"
_PER_LINE = 2


def _dense(path: Path, megabytes: float) -> int:
    """A file of the reproducer's line, about ``megabytes`` big; returns its lines."""
    lines = int(megabytes * 1_000_000 // len(_DENSE))
    path.write_text("import numpy as np, torch\n" + _DENSE * lines)
    return lines


def _porter_lint(tmp_path: Path, *args: str) -> tuple[int, str, int]:
    """(exit status, stdout, peak kB) of the real ``porter lint`` in a process of its own."""
    if not Path("/proc/self/status").exists():
        pytest.skip("needs /proc/self/status (Linux)")
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        done = subprocess.run(
            [sys.executable, "-c", PEAK_WRAPPER, "lint", *args],
            stdout=sink,
            stderr=subprocess.PIPE,
            text=True,
            timeout=900,
        )
    assert "Traceback" not in done.stderr, done.stderr
    peak = int(done.stderr.split("VmHWM=")[1].split()[0])
    return done.returncode, out.read_text(), peak


def test_memory_of_porter_lint_does_not_grow_with_the_file_and_its_output_is_complete(
    tmp_path,
):
    """2 MB and 8 MB of the reproducer's line through the command line: the peak grows
    far less than the file (findings are printed as they are made, the file read a chunk
    at a time), and every finding is counted: shown, or in a "more not shown" line."""
    peaks = []
    for megabytes in (2, 8):
        path = tmp_path / f"dense_{megabytes}.py"
        lines = _dense(path, megabytes)
        status, out, peak = _porter_lint(tmp_path, str(path))
        assert status == 1
        more = [line for line in out.splitlines() if " more not shown " in line]
        at = re.compile(rf"{re.escape(str(path))}:\d+:\d+: ")
        shown = [line for line in out.splitlines() if at.match(line)]
        hidden = sum(int(line.split(": ")[-1].split()[0]) for line in more)
        assert len(shown) == 2 * 50 and len(more) == 2  # numpy.sum and torch.max
        assert len(shown) + hidden == lines * _PER_LINE
        assert out.splitlines()[-1] == (
            f"porter lint: {lines * _PER_LINE} findings, 0 needing a run, in 1 file"
        )
        peaks.append(peak / 1024)
    grown = peaks[1] - peaks[0]
    print(f"\npeak memory: {peaks[0]:.0f} MB for 2 MB, {peaks[1]:.0f} MB for 8 MB")
    # proportional growth would be 3x what the 2 MB file added to an empty run's peak
    assert grown < 15, peaks


def test_json_lists_every_finding_of_a_big_file_as_it_goes(tmp_path):
    """JSON is written a finding at a time and lists every one (no --max-repeats), byte
    for byte what one ``json.dumps`` of the whole result writes."""
    path = tmp_path / "dense.py"
    lines = _dense(path, 0.2)
    status, out, _ = _porter_lint(tmp_path, "--format", "json", str(path))
    assert status == 1
    assert len(json.loads(out)["findings"]) == lines * _PER_LINE
    result = lint_paths([path])
    whole = {
        "schema": "porter.lint/1",
        "porter_version": json.loads(out)["porter_version"],
        "files": 1,
        "findings": [f.to_json() for f in result.findings],
        "errors": [],
    }
    assert out == json.dumps(whole, indent=1) + "\n"


def test_max_repeats_counts_what_it_does_not_show(tmp_path, capsys):
    """Text and GitHub output show ``--max-repeats`` findings of one check on one name per
    file and count the rest in one line; 0 shows every one; the summary counts all."""
    from porter_ext.cli import main

    path = tmp_path / "repeats.py"
    path.write_text("import numpy as np\n" + "y = np.cumsum(x)\n" * 7 + "z = np.sum(x, 1)\n")
    assert main(["lint", "--max-repeats", "3", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert [line.split(":")[1] for line in out if "numpy.cumsum: " in line][:3] == ["2", "3", "4"]
    assert f"{path}: PA001 non_standard: numpy.cumsum: 4 more not shown" in "\n".join(out)
    assert any(line.startswith(f"{path}:9:5: PA002") for line in out)
    assert out[-1] == "porter lint: 8 findings, 0 needing a run, in 1 file"
    assert main(["lint", "--max-repeats", "0", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len([line for line in out if "numpy.cumsum: " in line]) == 7
    assert not any("more not shown" in line for line in out)
    assert main(["lint", "--format", "github", "--max-repeats", "2", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert len([line for line in out if line.startswith("::warning ")]) == 3
    assert any(
        line.endswith("numpy.cumsum: 5 more not shown (--max-repeats 2; 0 shows every one)")
        for line in out
    )


def test_findings_come_before_the_file_is_read_to_its_end(tmp_path, monkeypatch):
    """A big file's first findings are yielded while its end is unread: here a syntax
    error in its last piece, found only once they have been taken."""
    monkeypatch.setattr(lint, "PIECE_LINES", 100)
    path = tmp_path / "late_error.py"
    path.write_text("import numpy as np\n" + "y = np.cumsum(x)\n" * 1000 + "def broken(:\n")
    run = LintRun([path])
    first = next(run.findings)
    assert (first.line, first.name) == (2, "numpy.cumsum")
    assert run.errors == []
    rest = list(run.findings)
    assert run.errors == [f"{path}:1002: syntax error: invalid syntax"]
    assert 1 + len(rest) == run.found < 1000  # the pieces before the one that does not parse


def _functions_source() -> str:
    """Module-level functions read names that a later line rebinds (half of them: those
    are judged again at the end), with ignores and non-ASCII text along the way."""
    parts = [
        "import numpy as np, torch",
        "a = torch.ones(3)",
        "b = torch.ones(3)",
        "w = np.ones(3)",
    ]
    for n in range(300):
        parts += [
            f"def f_{n}(x):",
            f"    y = {'ab'[n % 2]}.sort()",
            "    return np.cumsum(w) + np.sum(x, 1)",
            f"z_{n} = np.cumsum(w)" + ("  # porter: ignore" if n % 7 == 0 else ""),
            "s = 'température'; q = np.sum(w, 0)",
        ]
    return "\n".join([*parts, "b = [1]"]) + "\n"


@pytest.mark.parametrize(("piece", "hold"), [(1, 1), (7, 5), (2000, 20_000)])
def test_findings_of_functions_judged_again_do_not_depend_on_pieces_or_spilling(
    monkeypatch, piece, hold
):
    """Findings held to the end of the module (a later line may change what a function's
    were judged on), in memory or a temporary file, are the findings of one walk of the
    whole module, in its order."""
    source = _functions_source()
    monkeypatch.setattr(lint, "PIECE_LINES", 10**9)
    whole = lint_source(source)
    assert len([f for f in whole if f.name == "Tensor.sort"]) == 150  # a's: b changed
    monkeypatch.setattr(lint, "PIECE_LINES", piece)
    monkeypatch.setattr(lint, "HOLD_MAX", hold)
    assert lint_source(source) == whole


def test_a_byte_that_is_not_utf8_deep_in_a_big_file_is_refused_before_any_finding(tmp_path):
    """The file is read through once first: a byte that is not UTF-8 past the first chunk
    is one error naming its place in the file, and no finding is printed before it."""
    path = tmp_path / "late_byte.py"
    data = ("import numpy as np\n" + "y = np.cumsum(x)\n" * 150_000).encode() + b"z = '\xe9'\n"
    path.write_bytes(data)
    with pytest.raises(UnicodeDecodeError) as expected:
        data.decode("utf-8")
    status, out, _ = _porter_lint(tmp_path, str(path))
    assert status == 2 and out == ""
    run = LintRun([path])
    with pytest.raises(lint.LintError, match=rf"position {expected.value.start}: invalid"):
        next(run.findings)


def test_written_and_rendered_forms_agree(tmp_path):
    """`write` of a `LintRun` as it goes and `render` of the finished `LintResult` are the
    same text, in every format."""
    import io

    path = tmp_path / "f.py"
    path.write_text(_functions_source()[:4000] + "\n")
    for fmt in ("text", "json", "sarif", "github"):
        out = io.StringIO()
        write(LintRun([path]), fmt, out)
        result = lint_paths([path])
        assert out.getvalue() == render(result, fmt) + "\n"
    empty = LintResult([], 0, [])
    assert json.loads(render(empty, "json"))["findings"] == []

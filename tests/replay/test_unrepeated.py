"""Replays compare only what they ran: a value made by an IPython shell line the replay
does not run again (``out = !cmd``, ``x = %sx cmd``), and what the cell computes from it,
is shown but not compared, and each replay says why (attacks/28 as a test)."""

from __future__ import annotations

import pytest

from porter_ext.replay.unrepeated import unrepeated_outputs
from tests.replay.isolation import run


def test_the_values_of_shell_lines_are_followed_through_the_cell():
    source = (
        "get_ipython().system('echo hi')\n"
        "out = get_ipython().getoutput('echo captured')\n"
        "listing = get_ipython().run_line_magic('sx', 'ls')\n"
        "y = x * len(out)\n"
        "acc = []\n"
        "for line in listing:\n"
        "    acc.append(line)\n"
        "if out:\n"
        "    flag = True\n"
        "z = x + 1\n"
        "len(acc)\n"
    )
    found = dict(unrepeated_outputs(source))
    assert found == {
        "out": "!echo captured",
        "y": "!echo captured",
        "listing": "%sx ls",
        "line": "%sx ls",
        "acc": "%sx ls",
        "flag": "!echo captured",
        "_": "%sx ls",
    }
    assert unrepeated_outputs("y = x + 1\nz = get_ipython().run_line_magic('time', 'x')") == {}


@pytest.mark.slow
@pytest.mark.parametrize("line", ["out = !echo captured", "out = %sx echo captured"])
def test_a_value_the_replay_does_not_make_is_not_compared(port_shell, tmp_path, line):
    log = tmp_path / "bang.txt"
    run(port_shell, "import numpy as np\nx = np.arange(4.0)")
    cell = f"%%port -b numpy,strict\n!echo hi >> {log}\n{line}\ny = x * len(out)\nz = x + 1"
    result = run(port_shell, cell)
    assert result.success, result.output
    assert log.read_text().splitlines() == ["hi"]  # the person's run, once
    assert port_shell.user_ns["y"].tolist() == [0.0, 1.0, 2.0, 3.0]
    entry = port_shell.user_ns["_port"].entry
    assert {(r.backend, r.role) for r in entry.replays} == {
        ("numpy", "control"),
        ("numpy", "target"),
        ("strict", "target"),
    }
    shown = line.partition("= ")[2]
    for replay in entry.replays:
        assert replay.status == "ok", (replay.error, replay.reason)
        rows = {o.name: o for o in replay.outputs}
        for name in ("out", "y"):
            assert rows[name].within_tolerance is None, rows[name]
            assert rows[name].deterministic is None, rows[name]
            assert rows[name].difference is None, rows[name]
            assert shown in rows[name].note and "not compared" in rows[name].note
        assert rows["z"].within_tolerance is True and rows["z"].deterministic is True
        assert f"not compared: out, y (from {shown}" in replay.reason
    assert entry.headline.counts.differs_on == ()  # the model's verdicts: nothing differs

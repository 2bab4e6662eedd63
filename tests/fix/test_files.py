"""The fix stage of the person's files (porter_ext/fix/files.py): a live ``%%port --fix``
verifies a module's rewrite with the cell's replays, and porter's side accepts a file's
rewrite only when every calling cell verified the same one. Real shells, real workers."""

from __future__ import annotations

import json

import pytest

from porter_ext.fix.files import digest, settle_files
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import FileVerdict
from tests.replay.isolation import run
from tests.snippets import MYMOD

pytest.importorskip("torch")


def test_fix_in_a_live_cell_verifies_the_modules_rewrite(folder, port_shell):
    """``%%port --fix`` of a cell that calls into the person's module verifies the
    module's rewrite with the cell's replays; the entry carries it (what Apply offers)."""
    ip = port_shell
    assert run(ip, "import torch\nfrom mymod import norm_rows\na = torch.ones(2, 3)").success
    result = run(ip, "%%port --fix -b numpy --quiet\nb = norm_rows(a)\n")
    assert result.success, result.output
    entry = json.loads(ip.user_ns["_port"].to_json())
    [verdict] = entry["file_verdicts"]
    assert verdict["file"] == "mymod.py" and verdict["accepted"], verdict
    assert "numpy" in verdict["verified_on"]
    assert "xp.sum(xp.pow(m, 2), axis=1, keepdims=True)" in verdict["source"]
    assert any("verified the rewrite of mymod.py" in n for n in entry["notes"])
    # what the Porting panel shows of it, in the model's words (issue 27)
    on = ", ".join(verdict["verified_on"])
    assert verdict["summary"] == f"verified on {on} (called from {entry['label']})"
    # nothing was written: a live cell only proposes
    assert (folder / "mymod.py").read_text(encoding="utf-8") == MYMOD
    assert not (folder / "mymod.ported.py").exists()


def test_a_refused_verdict_names_the_calling_cell(folder, port_shell):
    """The panel says which calling cell refused a file's rewrite, in the model's words:
    the refused verdict carries the cell (`where`) as the verified one does."""
    ip = port_shell
    assert run(ip, "import torch\nfrom mymod import norm_rows\na = torch.ones(2, 3)").success
    run(ip, "%%port --fix -b numpy --quiet\nb = norm_rows(a)\nraise ValueError('no')\n")
    entry = json.loads(ip.user_ns["_port"].to_json())
    [verdict] = entry["file_verdicts"]
    assert not verdict["accepted"] and verdict["where"] == entry["label"]
    assert verdict["summary"] == (
        f"not verified by {entry['label']}: the cell raised, so no replay of it can verify "
        "the rewrite"
    )


def _cell(index: int, *verdicts: FileVerdict) -> CellEntry:
    return CellEntry(
        index=index, execution_count=index + 1, source="", file_verdicts=list(verdicts)
    )


def test_a_file_is_accepted_only_when_every_calling_cell_verified_it():
    ok = FileVerdict("m.py", digest("a"), "ported", True, verified_on=["numpy", "jax"])
    narrower = FileVerdict("m.py", digest("a"), "ported", True, verified_on=["numpy"])
    [outcome] = settle_files([_cell(1, ok), _cell(2, narrower)])
    assert outcome.accepted and outcome.verified_on == ["numpy"]
    assert outcome.cells == ["cell 2 · In [2]", "cell 3 · In [3]"]
    no = FileVerdict("m.py", digest("a"), "ported", False, reason="it changes the result on jax")
    [outcome] = settle_files([_cell(1, ok), _cell(3, no)])
    assert not outcome.accepted
    assert outcome.reason == "refused at its call in cell 4 · In [4]: it changes the result on jax"
    edited = FileVerdict("m.py", digest("b"), "other", True, verified_on=["numpy"])
    [outcome] = settle_files([_cell(1, ok), _cell(2, edited)])
    assert not outcome.accepted and "changed between the cells" in outcome.reason

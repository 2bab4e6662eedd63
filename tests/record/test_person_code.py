"""The person's code beyond the recorded cell (issue 26, DESIGN.md "The person's code"):
functions defined in plain cells and in Python files under the person's folders are
recorded when a recorded cell calls them, placed where they are written, and left as
they are outside recorded cells. Real IPython shells, real torch and NumPy, real files;
mirrors porter_ext/record/person_code.py."""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path

import pytest

from porter_ext.record import person_code
from tests.replay.isolation import run
from tests.snippets import MYMOD

torch = pytest.importorskip("torch")


def _calls(ip) -> dict[str, dict]:
    return {c["name"]: c for c in json.loads(ip.user_ns["_port"].to_json())["calls"]}


def test_a_helper_from_a_plain_cell_is_recorded_where_it_is_written(port_shell):
    ip = port_shell
    assert run(ip, "import torch\nx = torch.ones(3, 4)").success
    defining = run(ip, "def f(t):\n    u = t.sum(0)\n    return torch.max(u, -u)\n")
    assert defining.success
    plain_code = ip.user_ns["f"].__code__
    result = run(ip, "%%port --no-replay --quiet\nr = f(x)\n")
    assert result.success, result.output
    calls = _calls(ip)
    assert calls["Tensor.sum"]["status"] == "non_standard"
    assert calls["torch.max"]["status"] == "non_standard_usage"
    origin = calls["Tensor.sum"]["origin"]
    assert origin["execution_count"] == defining.execution_count
    assert (origin["line"], origin["col"]) == (2, 8)
    # shown where this cell called into the helper
    assert (calls["Tensor.sum"]["line"], calls["Tensor.sum"]["col"]) == (1, 4)
    # the helper is the person's as written again once the cell is done
    assert ip.user_ns["f"].__code__ is plain_code
    assert torch.equal(ip.user_ns["r"], torch.max(torch.full((4,), 3.0), -torch.full((4,), 3.0)))


def test_a_plain_cells_layers_in_a_list_replay_with_their_methods(port_shell):
    """makemore part 5's layers, reached through a list: their class, defined in a plain
    cell, came to the worker by value with every recording hook it reads left None (the
    replay ran in another globals dict than the one its methods read), so calling a
    layer raised "'NoneType' object is not callable" on every backend, the control too."""
    ip = port_shell
    defining = (
        "import torch\nX = torch.arange(24.0).reshape(4, 6)\n"
        "class Flat:\n    def __call__(self, x):\n        return x.view(x.shape[0], -1) * 2\n"
        "layers = [Flat(), Flat()]\n"
    )
    assert run(ip, defining).success
    result = run(ip, "%%port --quiet -b numpy\nh = X\nfor layer in layers:\n    h = layer(h)\n")
    assert result.success, result.output
    replays = {r.backend: r for r in ip.user_ns["_port"].entry.replays}
    assert replays["torch"].status == "ok", replays["torch"].error
    # numpy's view takes a dtype, not a shape: the replay fails in the layer, as it does
    assert "NoneType" not in str(replays["numpy"].error)


def test_a_function_of_a_local_module_is_recorded_at_its_file_and_line(folder, port_shell):
    ip = port_shell
    assert run(ip, "import torch\nfrom mymod import norm_rows\na = torch.ones(2, 3)").success
    result = run(ip, "%%port --no-replay --quiet\nb = norm_rows(a)\n")
    assert result.success, result.output
    calls = _calls(ip)
    assert "mymod.norm_rows" not in calls  # the person's code, not another library
    for name in ("Tensor.pow", "Tensor.sum", "Tensor.sqrt"):
        assert calls[name]["origin"]["file"] == "mymod.py", calls[name]
        assert calls[name]["origin"]["line"] == 2
    assert calls["Tensor.sum"]["status"] == "non_standard"
    assert calls["Tensor.__truediv__"]["origin"]["line"] == 3
    # the module's function is its plain self after the cell, its file untouched
    import mymod

    assert not person_code.rewritten(mymod.norm_rows)
    assert (folder / "mymod.py").read_text(encoding="utf-8") == MYMOD
    expected = torch.ones(2, 3) / torch.ones(2, 3).pow(2).sum(1, keepdim=True).sqrt()
    assert torch.equal(ip.user_ns["b"], expected)


def test_module_functions_called_through_others_and_methods_are_recorded(folder, port_shell):
    ip = port_shell
    setup = "import torch\nimport mymod\nscale = mymod.Scaler(3.0)\na = torch.ones(2, 3)"
    assert run(ip, setup).success
    result = run(ip, "%%port --no-replay --quiet\nb = mymod.twice(a)\nc = scale(a)\n")
    assert result.success, result.output
    calls = _calls(ip)
    assert calls["Tensor.pow"]["origin"]["file"] == "mymod.py"  # norm_rows, through twice
    assert calls["Tensor.mul"]["origin"] == {**calls["Tensor.mul"]["origin"], "line": 15}


def test_a_module_imported_in_the_recorded_cell_is_recorded_too(folder, port_shell):
    ip = port_shell
    cell = "%%port --no-replay --quiet\nimport torch\nfrom mymod import norm_rows\nb = norm_rows(torch.ones(2, 2))\n"
    result = run(ip, cell)
    assert result.success, result.output
    assert _calls(ip)["Tensor.pow"]["origin"]["file"] == "mymod.py"


def test_files_outside_the_persons_folders_are_libraries(folder, port_shell, tmp_path_factory):
    ip = port_shell
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    (elsewhere / "theirlib.py").write_text("def g(m):\n    return m.sum(1)\n", encoding="utf-8")
    sys.path.insert(0, str(elsewhere))
    try:
        assert run(ip, "import torch\nfrom theirlib import g\na = torch.ones(2, 2)").success
        assert run(ip, "%%port --no-replay --quiet\nb = g(a)\n").success
        calls = _calls(ip)
        assert "Tensor.sum" not in calls
        assert calls["theirlib.g"]["status"] == "outside_namespace"
        # until the person adds the folder
        assert run(ip, f"%port paths add {elsewhere}").success
        assert run(ip, "%%port --no-replay --quiet\nb = g(a)\n").success
        assert _calls(ip)["Tensor.sum"]["origin"]["file"] == os.path.relpath(
            elsewhere / "theirlib.py", folder
        )
    finally:
        sys.path.remove(str(elsewhere))
        sys.modules.pop("theirlib", None)
        person_code.configure(extra=())


def test_a_file_that_changed_since_it_was_imported_is_left_unrecorded_with_a_reason(
    folder, port_shell
):
    ip = port_shell
    assert run(ip, "import torch\nfrom mymod import norm_rows\na = torch.ones(2, 2)").success
    (folder / "mymod.py").write_text("# edited\n" + MYMOD, encoding="utf-8")
    result = run(ip, "%%port --no-replay\nb = norm_rows(a)\n")
    assert result.success
    assert "Tensor.pow" not in _calls(ip)
    assert "mymod.py changed since it was imported" in result.output


@pytest.mark.parametrize(
    "content",
    [b"\xff\xfe\x00binary\x00", "def norm_rows(m):\n    return m.sum(1)\n".encode("utf-16")],
    ids=["binary", "utf-16"],
)
def test_an_unreadable_module_file_is_one_line_and_the_import_works(folder, port_shell, content):
    ip = port_shell
    assert run(ip, "import torch\nfrom mymod import norm_rows\na = torch.ones(2, 2)").success
    # the file is replaced after the import by something porter cannot read as Python
    (folder / "mymod.py").write_bytes(content)
    result = run(ip, "%%port --no-replay\nb = norm_rows(a)\n")
    assert result.success
    assert result.output.count("mymod.py") == 1, result.output


def test_nothing_records_outside_recorded_cells(folder, port_shell):
    ip = port_shell
    assert run(ip, "import torch\nimport mymod\na = torch.ones(2, 2)").success
    assert run(ip, "%%port --no-replay --quiet\nb = mymod.norm_rows(a)\n").success
    import mymod

    # between recorded cells the module's code is the code Python compiled from the file
    compiled = compile(MYMOD, mymod.__file__, "exec")
    plain = next(c for c in compiled.co_consts if getattr(c, "co_name", "") == "norm_rows")
    assert mymod.norm_rows.__code__.co_code == plain.co_code
    assert not person_code.rewritten(mymod.norm_rows)


def test_paths_option_of_port_cell_magic(folder, port_shell, tmp_path_factory):
    ip = port_shell
    elsewhere = tmp_path_factory.mktemp("more")
    (elsewhere / "extra_helpers.py").write_text(
        "def h(m):\n    return m.sum(0)\n", encoding="utf-8"
    )
    sys.path.insert(0, str(elsewhere))
    try:
        assert run(ip, "import torch\nfrom extra_helpers import h").success
        assert run(
            ip, f"%%port --no-replay --quiet --paths {elsewhere}\nb = h(torch.ones(2))\n"
        ).success
        assert "origin" in _calls(ip)["Tensor.sum"] and _calls(ip)["Tensor.sum"]["origin"]
        assert (
            run(ip, "%%port --no-replay --quiet --paths /no/such/folder\nb = 1\n").output.count(
                "/no/such/folder"
            )
            == 1
        )
    finally:
        sys.path.remove(str(elsewhere))
        sys.modules.pop("extra_helpers", None)
        person_code.configure(extra=())


def test_symlink_out_of_the_paths_is_not_the_persons(folder, port_shell, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    (outside / "real.py").write_text("def g(m):\n    return m.sum(1)\n", encoding="utf-8")
    Path(folder / "linked.py").symlink_to(outside / "real.py")
    assert person_code.person_file(str(folder / "mymod.py")) is not None
    assert person_code.person_file(str(folder / "linked.py")) is None
    # called from a recorded cell: another library's function, said in one line
    ip = port_shell
    assert run(ip, "import torch\nfrom linked import g").success
    result = run(ip, "%%port --no-replay\nb = g(torch.ones(2, 2))\n")
    assert result.success
    assert "Tensor.sum" not in _calls(ip)
    assert result.output.count("is a link to") == 1, result.output
    assert str(outside / "real.py") in result.output
    sys.modules.pop("linked", None)


def test_replays_import_the_persons_module_and_place_its_failure_there(folder, port_shell):
    """The replays run the same file (read-only in the worker's sandbox), record its
    calls, and a failure inside it is placed at its file and line, the calling cell's
    line beside it."""
    ip = port_shell
    assert run(ip, "import torch\nfrom mymod import norm_rows\na = torch.ones(2, 3)").success
    result = run(ip, "%%port -b numpy,torch --quiet\nb = norm_rows(a)\n")
    assert result.success, result.output
    replays = {r["backend"]: r for r in json.loads(ip.user_ns["_port"].to_json())["replays"]}
    failed = replays["numpy"]
    assert failed["status"] == "error"
    assert "no attribute 'pow'" in failed["error"]["message"]
    assert (failed["error"]["file"], failed["error"]["file_line"]) == ("mymod.py", 2)
    assert failed["error"]["line"] == 1
    # shown in the file at its line, the calling cell's line as its editor counts it
    shown = str(ip.user_ns["_port"])
    assert "mymod.py line 2: [error] replay on numpy" in shown
    assert re.search(r"\(called from In \[\d+\], line 2\)", shown), shown
    # the worker recorded the module's calls on torch, where they are written
    ok = next(r for r in replays.values() if r["backend"].startswith("torch"))
    assert ok["status"] == "ok", ok
    recorded = {c["name"]: c for c in ok.get("calls", [])}
    assert recorded["Tensor.pow"]["origin"]["file"] == "mymod.py"


def test_a_module_that_fails_to_import_fails_as_without_porter(folder, port_shell):
    """The person's import is theirs: porter does not hook it, so a module that raises
    while it is imported raises the same in a recorded cell, placed in the file."""
    ip = port_shell
    (folder / "broken_mod.py").write_text("x = 1\nraise ValueError('not today')\n")
    plain = run(ip, "import broken_mod\n")
    recorded = run(ip, "%%port --no-replay --quiet\nimport broken_mod\n")
    for result in (plain, recorded):
        assert isinstance(result.error_in_exec, ValueError)
        assert str(result.error_in_exec) == "not today"
    error = json.loads(ip.user_ns["_port"].to_json())["error"]
    assert (error["type"], error["file"], error["file_line"], error["line"]) == (
        "ValueError",
        "broken_mod.py",
        2,
        1,
    )
    sys.modules.pop("broken_mod", None)


def test_non_ascii_module_and_a_typed_cell_place_calls_in_characters(folder, port_shell):
    """A module with non-ASCII text before a call on its line, and a cell typed without a
    trailing newline: columns count characters, as the editor does."""
    ip = port_shell
    (folder / "accents.py").write_text(
        "def échelle(m):\n    note = 'température 🔥'; return m.sum(1)\n", encoding="utf-8"
    )
    assert run(ip, "import torch\nfrom accents import échelle").success
    result = run(ip, "%%port --no-replay --quiet\nrésultat = échelle(torch.ones(2, 2))")
    assert result.success, result.output
    origin = _calls(ip)["Tensor.sum"]["origin"]
    line = "    note = 'température 🔥'; return m.sum(1)"
    assert (origin["file"], origin["line"], origin["col"]) == ("accents.py", 2, line.index("m.sum"))
    assert origin["end_col"] == len(line)
    sys.modules.pop("accents", None)

"""`%%port -b SPECS` in a real IPython shell: replays, numerics and devices tables."""

from __future__ import annotations

import json

import numpy as np
import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell

pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("array_api_strict")

ALL = "numpy,torch,jax,strict,strict:device1"


@pytest.fixture
def ip():
    shell = InteractiveShell.instance()
    shell.reset(new_session=False)
    shell.run_line_magic("load_ext", "porter_ext")
    shell.run_cell(
        "import numpy as np\nfrom array_api_compat import array_namespace\n"
        "x = np.linspace(-1, 1, 12).reshape(3, 4)\n",
        store_history=True,
    )
    yield shell
    shell.run_line_magic("port", "backends none")
    shell.run_line_magic("unload_ext", "porter_ext")
    shell.reset(new_session=False)


def port(ip, options, body):
    result = ip.run_cell(f"%%port {options}\n{body}", store_history=True)
    return result, ip.user_ns.get("_port")


def test_one_cell_on_every_cpu_backend(ip):
    result, p = port(
        ip,
        f"-b {ALL}",
        "xp = array_namespace(x)\ny = xp.tanh(xp.sum(x * x, axis=1))\nxp.max(y)",
    )
    assert result.success
    replays = {r.backend: r for r in p.entry.replays}
    assert set(replays) == set(ALL.split(","))
    assert all(r.status == "ok" for r in replays.values()), [
        (r.backend, r.error) for r in replays.values()
    ]
    numerics = p.numerics
    assert set(numerics["name"]) == {"y", "_"}
    assert numerics["within_tolerance"].all()
    devices = p.devices.set_index(["backend", "name"])
    assert devices.loc[("strict:device1", "y"), "device"] == "device1"
    assert devices.loc[("jax", "y"), "device"] == "cpu:0"
    assert devices["device_ok"].all()
    assert "float64 became float32" in (replays["jax"].reason or "")
    entry = json.loads(p.to_json())
    assert {r["backend"] for r in entry["replays"]} == set(ALL.split(","))


def test_a_divergent_cell_is_a_mismatch_on_the_one_backend_where_it_diverges(ip):
    _, p = port(
        ip,
        "-b numpy,torch,jax",
        "xp = array_namespace(x)\nshift = 1.0 if 'jax' in type(x).__module__ else 0.0\ny = xp.sum(x, axis=0) + shift",
    )
    numerics = p.numerics.set_index(["backend", "name"])
    assert not numerics.loc[("jax", "y"), "within_tolerance"]
    assert numerics.loc[("jax", "y"), "mismatched"] == 4
    assert numerics.loc[("torch", "y"), "within_tolerance"]
    assert numerics.loc[("numpy", "y"), "within_tolerance"]


def test_a_cell_that_mutates_its_inputs_leaves_the_persons_arrays_as_a_plain_run_would(ip):
    ip.run_cell("import torch\nt = torch.ones(3)\nkeep = x.copy()\nalias = x\n", store_history=True)
    result, p = port(
        ip, "-b numpy,torch,jax,strict", "x += 1\nx[0, 0] = 0\nnp.add(x, 1, out=x)\nt.add_(1)\n"
    )
    assert result.success
    plain = ip.user_ns["keep"] + 2
    plain[0, 0] = 1
    np.testing.assert_array_equal(ip.user_ns["x"], plain)
    assert ip.user_ns["alias"] is ip.user_ns["x"]
    assert ip.user_ns["t"].tolist() == [2.0, 2.0, 2.0]


def test_a_cell_calling_one_library_fails_on_the_others_with_its_line(ip):
    ip.run_cell("import torch\ntx = torch.linspace(0, 1, 4)\n", store_history=True)
    _, p = port(ip, "-b torch,jax", "a = tx * 2\nb = torch.max(a, -a)\n")
    replays = {r.backend: r for r in p.entry.replays}
    assert replays["torch"].status == "ok"
    assert replays["jax"].status == "error"
    assert replays["jax"].error.line == 2


def test_missing_backends_and_devices_are_skipped_with_reasons(ip):
    _, p = port(ip, "-b cupy,torch:cuda,jax:gpu:0", "y = x + 1")
    targets = [r for r in p.entry.replays if r.role == "target"]
    assert [r.status for r in targets] == ["skipped"] * 3
    assert all(r.reason for r in targets)


def test_an_unknown_spec_is_a_usage_error_and_runs_nothing(ip):
    ip.user_ns["marker"] = 1
    result = ip.run_cell("%%port -b tensorflow\nmarker = 2\n", store_history=True)
    assert ip.user_ns["marker"] == 1
    assert isinstance(result.error_in_exec, UsageError) or not result.success
    with pytest.raises(UsageError, match="numpy"):
        ip.run_line_magic("port", "backends tensorflow")


def test_outputs_that_are_not_arrays_are_compared_by_equality(ip):
    _, p = port(ip, "-b numpy", "label = 'hello'\ny = x + 1")
    rows = p.numerics.set_index("name")
    assert bool(rows.loc["label", "within_tolerance"])  # a string: by equality (issue 10)


def test_port_backends_sets_the_default_for_following_cells(ip, capsys):
    ip.run_line_magic("port", "backends numpy,torch")
    assert "numpy, torch" in capsys.readouterr().out
    _, p = port(ip, "", "y = x * 2")
    assert [r.backend for r in p.entry.replays if r.role == "target"] == ["numpy", "torch"]
    _, p = port(ip, "--no-replay", "y = x * 2")
    assert p.entry.replays == []


def test_tolerances_can_be_overridden(ip):
    _, p = port(
        ip,
        "-b jax --rtol 0.5 --atol 0.5",
        "xp = array_namespace(x)\ny = xp.sum(x, axis=0) + (0.1 if 'jax' in type(x).__module__ else 0.0)",
    )
    row = p.numerics.set_index("name").loc["y"]
    assert row["within_tolerance"] and row["rtol"] == 0.5


def test_the_persons_functions_read_the_replays_namespace(ip):
    ip.run_cell(
        "%%port\nxp = array_namespace(x)\ndef total(v):\n    return xp.sum(v, axis=0)\n",
        store_history=True,
    )
    _, p = port(ip, "-b torch,strict:device1", "y = total(x)")
    replays = {r.backend: r for r in p.entry.replays}
    assert replays["torch"].status == "ok"
    assert "torch.sum" in {c.name for c in replays["torch"].calls}
    assert (
        p.devices.set_index(["backend", "name"]).loc[("strict:device1", "y"), "device"] == "device1"
    )


def test_port_on_replays_on_the_session_backends(ip):
    ip.run_line_magic("port", "backends numpy,strict")
    ip.run_line_magic("port", "on")
    try:
        result = ip.run_cell("xp = array_namespace(x)\ny = xp.sum(x, axis=0)\n", store_history=True)
    finally:
        ip.run_line_magic("port", "off")
    assert result.success
    p = ip.user_ns["_port"]
    assert [(r.backend, r.status) for r in p.entry.replays if r.role == "target"] == [
        ("numpy", "ok"),
        ("strict", "ok"),
    ]
    assert p.numerics.set_index(["backend", "name"]).loc[("strict", "y"), "within_tolerance"]


def test_a_cell_mutating_a_strict_array_is_replayed_from_its_value_before_the_run(ip):
    ip.run_cell(
        "import array_api_strict as xs\ns = xs.asarray([1.0, 2.0, 3.0])\n", store_history=True
    )
    result, p = port(ip, "-b numpy,strict", "s[0] = 10.0\nt = s * 2")
    assert result.success
    assert p.warnings == []
    replays = {r.backend: r for r in p.entry.replays}
    assert [replays[b].status for b in ("numpy", "strict")] == ["ok", "ok"]
    assert p.numerics["within_tolerance"].all()
    assert float(ip.user_ns["s"][0]) == 10.0

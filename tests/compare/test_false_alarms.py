"""No false alarms (issue 19 item 4): a backend's default dtype, another valid partition,
objects that are not data, and replays that never touched their target.

Each reproducer of ``../shared/repro/turn3/notebooks`` is a test on real IPython shells
and worker kernels (marked slow); the comparisons behind them are tested on real
NumPy, torch, JAX and array-api-strict values.
"""

from __future__ import annotations

import contextlib
import io
import json

import numpy as np
import pytest

from porter_ext.compare import compare_outputs
from porter_ext.compare.producers import partition_outputs
from porter_ext.record.cell import RecordSettings, run_recorded
from porter_ext.replay import ReplayResult
from porter_ext.replay.run import replay_cell

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
xps = pytest.importorskip("array_api_strict")
jnp = pytest.importorskip("jax.numpy")

HANDBOOK = (
    "x = np.linspace(0, 5, 50)\n"
    "y = np.linspace(0, 5, 50)[:, np.newaxis]\n"
    "z = np.sin(x) ** 10 + np.cos(10 + y * x) * np.cos(x)\n"
    "s = float(np.sum(z))\n"
)


def _x64() -> bool:
    return bool(jax.config.jax_enable_x64)


def _original(code: str, ns: dict) -> tuple[dict, list]:
    """The cell run once, recorded, in ``ns``: its outputs and its calls."""
    run = run_recorded(code, ns, RecordSettings(cell=1))
    assert run.exception is None, run.exception
    return ns, run.calls


def _rows(original: dict, result: ReplayResult, **kw) -> dict:
    assert result.status == "ok", (result.error, result.reason)
    return {row.name: row for row in compare_outputs(original, result, **kw)}


def _replay(outputs: dict, spec: str = "jax", **kw) -> ReplayResult:
    fields = {"status": "ok", "default_device": "cpu", "input_devices": [], **kw}
    return ReplayResult(backend=spec, outputs=outputs, **fields)


# --- a backend's default dtype ----------------------------------------------------------


@pytest.mark.parametrize("spec", ["torch", "jax"])
def test_a_float64_cell_on_a_float32_backend_is_dtype_changed_not_a_mismatch(spec) -> None:
    if spec == "jax" and _x64():
        pytest.skip("jax runs with x64 here")
    ns = {"np": np}
    exec(HANDBOOK, ns)
    original = {k: ns[k] for k in ("x", "y", "z", "s")}
    rows = _rows(original, replay_cell(HANDBOOK, {"np": np}, spec))
    z = rows["z"]
    assert (z.dtype, z.difference) == ("float32", "dtype_changed")
    # ordinary float32 rounding of terms of order one, near zero too: judged in float32
    assert z.max_abs_err > 1e-6 and z.within_tolerance and z.mismatched == 0
    assert z.atol >= z.max_abs_err and z.note.startswith("dtype_changed: float64 → float32")
    # a Python float computed from float32 arrays is judged as float32
    assert rows["s"].within_tolerance and rows["s"].rtol == 1e-5


def test_a_real_bug_behind_a_dtype_change_is_still_a_mismatch() -> None:
    z = np.linspace(-1.0, 1.0, 200)
    wrong = torch.from_numpy(z.astype(np.float32))
    wrong[7] += 1e-3  # far above float32 rounding
    (row,) = compare_outputs({"z": z}, _replay({"z": wrong}, "torch"))
    assert row.difference == "dtype_changed" and row.within_tolerance is False
    assert row.mismatched == 1


# --- sums of products rounded at the scale of their terms ------------------------------

MATMUL = "logits = h @ W2 + b2\n"


def _matmul_inputs() -> dict:
    g = torch.Generator().manual_seed(0)
    h = torch.tanh(torch.randn(2000, 200, generator=g) * 2)
    return {"h": h, "W2": torch.randn(200, 27, generator=g), "b2": torch.randn(27, generator=g)}


def test_a_float32_matmul_summed_in_another_order_is_not_a_mismatch_without_a_reference():
    """makemore part 2 (no float64 reference: its inputs are too big to copy): jax sums
    the 200 products of each logit in another order than torch, and near-zero logits
    differ by a few ulps of the terms (|h| @ |W2| ~ 100), far above 1e-5 of themselves."""
    ns = _matmul_inputs()
    exec(MATMUL, ns)
    rows = _rows({"logits": ns["logits"]}, replay_cell(MATMUL, _matmul_inputs(), "jax"))
    logits = rows["logits"]
    assert logits.dtype == "float32" and logits.max_abs_err > 1e-6
    assert logits.within_tolerance and logits.mismatched == 0 and logits.difference is None
    assert logits.atol >= logits.max_abs_err


def test_a_small_logit_wrong_by_far_more_than_rounding_is_still_a_mismatch():
    ns = _matmul_inputs()
    exec(MATMUL, ns)
    wrong = ns["logits"].clone()
    wrong[3, 5] += 1e-3  # 10x the rounding of terms as large as the output's largest
    (row,) = compare_outputs({"logits": ns["logits"]}, _replay({"logits": wrong}, "torch"))
    assert row.within_tolerance is False and row.mismatched == 1


# --- partitions -------------------------------------------------------------------------

X = np.array([7, 2, 3, 1, 6, 5, 4])


def _partition_cell(code: str, ns: dict | None = None) -> tuple[dict, dict]:
    ns = {"np": np, "x": X.copy(), **(ns or {})}
    original, calls = _original(code, dict(ns))
    return original, partition_outputs(code, calls)


def test_outputs_made_by_a_partition_are_known_from_the_recorded_calls() -> None:
    code = (
        "p = np.partition(x, 3)\ni = np.argpartition(x, kth=[1, 4], axis=0)\n"
        "q = np.sort(x)\nw = x.copy()\nw.partition(2)\ns = 'a,b'.partition(',')\n"
        "r = np.partition(x, 3)\nr = r + 1\n"
    )
    _, made = _partition_cell(code)
    assert set(made) == {"p", "i", "w"}  # not q (a sort), s (a string's), r (rebound)
    assert (made["p"].indices, made["p"].kth, made["p"].axis) == (False, (3,), -1)
    assert (made["i"].indices, made["i"].kth, made["i"].axis, made["i"].array) == (
        True,
        (1, 4),
        0,
        "x",
    )
    assert made["w"].kth == (2,) and not made["w"].indices


def test_another_valid_partition_on_jax_is_not_a_mismatch() -> None:
    original, made = _partition_cell("p = np.partition(x, 3)\n")
    other = jnp.asarray(np.array([1, 2, 3, 4, 7, 6, 5]))  # what JAX gives
    assert not np.array_equal(np.asarray(other), original["p"])
    (row,) = compare_outputs({"p": original["p"]}, _replay({"p": other}), made_by=made)
    assert row.within_tolerance and row.mismatched == 0
    assert row.difference == ("order_only" if _x64() else "dtype_changed")
    assert "partition" in row.note


def test_the_same_values_in_an_invalid_partition_are_a_mismatch() -> None:
    original, made = _partition_cell("p = np.partition(x, 3)\n")
    # the same multiset, but 5 (not 4) at kth=3: not a partition at 3
    bad = torch.tensor([1, 2, 3, 5, 4, 6, 7])
    (row,) = compare_outputs({"p": original["p"]}, _replay({"p": bad}, "torch"), made_by=made)
    assert row.within_tolerance is False and row.difference == "numeric"
    assert "partition" in row.note


def test_argpartition_indices_are_compared_through_the_values_they_take() -> None:
    data = np.array([[5.0, 1.0, 4.0, 1.0], [2.0, 2.0, 0.0, 3.0]])
    code = "i = np.argpartition(d, 1, axis=1)\n"
    original, made = _partition_cell(code, {"d": data})
    assert made["i"].array == "d"
    # other valid indices: the two 1.0 of row 0 swap, row 1's sides in another order
    other = torch.tensor([[3, 1, 2, 0], [2, 1, 0, 3]])
    assert np.take_along_axis(data, other.numpy(), 1)[:, 1].tolist() == [1.0, 2.0]
    assert other.tolist() != original["i"].tolist()
    inputs = {"d": data}
    (row,) = compare_outputs(
        {"i": original["i"]}, _replay({"i": other}, "torch"), made_by=made, inputs=inputs
    )
    assert row.within_tolerance and row.difference == "order_only", row.note
    # a permutation of the indices that is not a partition at 1
    wrong = torch.tensor([[0, 1, 2, 3], [3, 2, 1, 0]])
    (row,) = compare_outputs(
        {"i": original["i"]}, _replay({"i": wrong}, "torch"), made_by=made, inputs=inputs
    )
    assert row.within_tolerance is False


def test_a_partition_along_an_axis_of_a_matrix() -> None:
    m = np.random.default_rng(3).permutation(20).reshape(5, 4).astype(np.float64)
    original, made = _partition_cell("p = np.partition(m, 2, axis=0)\n", {"m": m})
    p = original["p"]
    other = p[[1, 0, 2, 4, 3]]  # each side's rows in another order: still valid at 2
    (row,) = compare_outputs(
        {"p": p}, _replay({"p": torch.from_numpy(other)}, "torch"), made_by=made
    )
    assert row.within_tolerance and row.difference == "order_only"
    # two columns' values swapped: the same values overall, another multiset per column
    mixed = p.copy()
    mixed[0, [0, 1]] = mixed[0, [1, 0]]
    (row,) = compare_outputs(
        {"p": p}, _replay({"p": torch.from_numpy(mixed)}, "torch"), made_by=made
    )
    assert row.within_tolerance is False and row.difference == "numeric"


# --- objects that are not data ----------------------------------------------------------


@pytest.mark.parametrize(
    "theirs",
    [torch.float32, xps.float32, jnp.float32, np.dtype("float32")],
    ids=["torch", "strict", "jax", "numpy"],
)
def test_dtypes_compare_by_name_across_libraries(theirs) -> None:
    (row,) = compare_outputs({"d": np.dtype("float32")}, _replay({"d": theirs}))
    assert row.within_tolerance is True and row.dtype == "float32"


def test_a_tuple_of_a_shape_and_a_dtype_is_not_a_mismatch() -> None:
    X = torch.zeros((4, 3), dtype=torch.int64)
    n = np.zeros((4, 3), dtype=np.int64)
    rows = compare_outputs({"_": (X.shape, X.dtype)}, _replay({"_": (n.shape, n.dtype)}))
    assert rows and all(r.within_tolerance is not False for r in rows), rows
    # a dtype that changed is named, not counted
    rows = compare_outputs(
        {"_": (n.shape, np.dtype("float64"))}, _replay({"_": (n.shape, torch.float32)})
    )
    assert [r.difference for r in rows if r.difference] == ["dtype_changed"]
    assert all(r.within_tolerance is not False for r in rows)


def test_plot_artists_and_code_in_containers_are_not_compared() -> None:
    matplotlib = pytest.importorskip("matplotlib")

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mine, theirs = plt.plot([0, 1], [1.0, 0.5]), plt.plot([0, 1], [1.0, 0.5])
    fig = plt.figure()
    plt.close("all")
    rows = compare_outputs(
        {"_": mine, "pair": (np, len), "fig": fig},
        _replay({"_": theirs, "pair": (np, len), "fig": plt.figure()}, "torch"),
    )
    plt.close("all")
    assert rows and all(r.within_tolerance is None for r in rows), rows
    assert any("Line2D" in (r.note or "") for r in rows)


# --- not_exercised ----------------------------------------------------------------------


def test_a_replay_that_never_touched_its_target_judges_no_placement() -> None:
    out = torch.randn(3)
    result = _replay({"C": out}, "jax", status="not_exercised", default_device="cpu:0")
    (row,) = compare_outputs({"C": out.clone()}, result)
    assert row.expected_device is None and row.device_ok is None
    assert row.within_tolerance  # its values are still shown against the original


# --- the reproducers, on real shells and worker kernels ---------------------------------


def _cell(ip, source: str) -> dict:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        ip.run_cell(source, store_history=True)
    entry = ip.user_ns["_port"].to_json()
    return json.loads(entry) if isinstance(entry, str) else entry


def _targets(entry: dict) -> dict:
    return {r["backend"]: r for r in entry["replays"] if r["role"] == "target"}


@pytest.mark.slow
def test_repro_dtype_changed_counted_as_mismatch(port_shell) -> None:
    port_shell.run_cell("import numpy as np\n")
    entry = _cell(port_shell, "%%port -b torch --quiet\n" + HANDBOOK)
    torch_replay = _targets(entry)["torch"]
    assert torch_replay["status"] == "ok", torch_replay
    rows = {o["name"]: o for o in torch_replay["outputs"]}
    assert rows["z"]["difference"] == "dtype_changed" and rows["z"]["within_tolerance"]
    assert all(o["within_tolerance"] is not False for o in torch_replay["outputs"])


@pytest.mark.slow
def test_repro_partition_order_counted_as_mismatch(port_shell) -> None:
    port_shell.run_cell("import numpy as np\nx = np.array([7, 2, 3, 1, 6, 5, 4])\n")
    entry = _cell(
        port_shell, "%%port -b jax --quiet\np = np.partition(x, 3)\ni = np.argpartition(x, 3)\n"
    )
    jax_replay = _targets(entry)["jax"]
    assert jax_replay["status"] == "ok", jax_replay
    rows = {o["name"]: o for o in jax_replay["outputs"]}
    assert set(rows) == {"p", "i"}
    assert all(o["within_tolerance"] for o in rows.values()), rows


@pytest.mark.slow
def test_repro_plot_and_dtype_tuple_false_mismatch(port_shell) -> None:
    pytest.importorskip("matplotlib")
    port_shell.run_cell(
        "import torch\nimport matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\n"
        "stepi = list(range(5))\nlossi = [0.5, 0.4, 0.3, 0.25, 0.2]\n"
        "X = torch.zeros((4, 3), dtype=torch.int64)\n"
    )
    plot = _cell(port_shell, "%%port -b numpy,torch --quiet\nplt.plot(stepi, lossi)\n")
    pair = _cell(port_shell, "%%port -b numpy --quiet\nX.shape, X.dtype\n")
    for entry in (plot, pair):
        replays = _targets(entry).values()
        assert replays and all(r["outputs"] for r in replays), entry["replays"]
        assert all(o["within_tolerance"] is not False for r in replays for o in r["outputs"])
    rows = _targets(pair)["numpy"]["outputs"]
    assert all(o["within_tolerance"] for o in rows), rows  # the same shape, the same dtype


@pytest.mark.slow
def test_repro_not_exercised_counted_as_wrong_device(port_shell, tmp_path) -> None:
    port_shell.run_cell("import torch\n", store_history=True)
    entry = _cell(
        port_shell,
        "%%port -b jax,strict --quiet\ng = torch.Generator().manual_seed(1)\n"
        "C = torch.randn((27, 2), generator=g)\n",
    )
    targets = _targets(entry)
    assert {r["status"] for r in targets.values()} == {"not_exercised"}
    assert all(o["device_ok"] is None for r in targets.values() for o in r["outputs"])
    assert entry["device_findings"] == []
    with contextlib.redirect_stdout(io.StringIO()):
        port_shell.run_line_magic("port", f"report -o {tmp_path}/r.json --format json")
    summary = json.loads((tmp_path / "r.json").read_text())["summary"]
    assert summary["device_findings"] == 0

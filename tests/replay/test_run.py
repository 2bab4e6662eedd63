"""Replaying real cells on numpy, torch, jax and array-api-strict (no mocks)."""

from __future__ import annotations

import signal
import threading

import numpy as np
import pytest
from array_api_compat import array_namespace

from porter_ext.backends import parse_specs
from porter_ext.compare import compare_outputs, get_policy
from porter_ext.record import run_recorded
from porter_ext.record.cell import RecordSettings
from porter_ext.replay import ReplaySettings, analyse, collect_outputs, replay_all, replay_cell

torch = pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("array_api_strict")
POLICY = get_policy("porter")
ALL = parse_specs("numpy,torch,jax,strict,strict:device1")


def person(**values) -> dict:
    return {"__name__": "__main__", "array_namespace": array_namespace, **values}


def original(source: str, ns: dict) -> dict:
    """Run the cell for real in the person's namespace; its outputs."""
    run = run_recorded(source, ns)
    assert run.error is None, run.error
    return collect_outputs(analyse(source), ns, run.value)


SOFTMAX = """\
xp = array_namespace(x)
def softmax(v):
    e = xp.exp(v - xp.max(v, axis=-1, keepdims=True))
    return e / xp.sum(e, axis=-1, keepdims=True)
p = softmax(x)
total = xp.sum(p, axis=0)
p
"""


def test_an_array_api_cell_gives_the_same_numbers_everywhere() -> None:
    x = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    ns = person(x=x)
    expected = original(SOFTMAX, ns)
    results = replay_all(SOFTMAX, ns, ALL)
    devices = {
        "numpy": "cpu",
        "torch": "cpu",
        "jax": "cpu:0",
        "strict": "CPU_DEVICE",
        "strict:device1": "device1",
    }
    for result in results:
        assert result.status == "ok", (result.backend, result.error, result.reason)
        rows = {row.name: row for row in compare_outputs(expected, result, POLICY)}
        assert set(rows) == {"p", "total", "_"}  # xp and softmax are not data
        for row in rows.values():
            assert row.within_tolerance, (result.backend, row)
            assert row.device == devices[result.backend] and row.device_ok, (result.backend, row)
            assert row.dtype == "float32"
        assert rows["p"].shape == [4, 5] and rows["total"].shape == [5]
        assert result.input_devices == [devices[result.backend]]
        assert result.calls and result.seconds is not None and result.seconds >= 0
    by_spec = {r.backend: r for r in results}
    assert isinstance(by_spec["torch"].outputs["p"], torch.Tensor)
    assert any(c.name == "torch.exp" for c in by_spec["torch"].calls)
    assert by_spec["jax"].default_device == "cpu:0"
    assert by_spec["strict:device1"].default_device == "CPU_DEVICE"
    assert ns["x"] is x and "softmax" in ns


def test_float32_cancellation_on_jax_is_a_mismatch_there_only() -> None:
    # float64 data: JAX runs it in float32 (x64 disabled), where adding and removing a
    # large offset loses the low digits; the others keep float64
    x = np.linspace(0.1, 3.0, 50)
    src = "xp = array_namespace(x)\ny = (x + 1e4) - 1e4\n"
    ns = person(x=x)
    expected = original(src, ns)
    verdicts = {}
    for result in replay_all(src, ns, ALL):
        assert result.status == "ok", result
        (row,) = compare_outputs(expected, result, POLICY)
        verdicts[result.backend] = row.within_tolerance
        if result.backend == "jax":
            assert row.dtype == "float32" and row.mismatched > 0
            assert any("float64 became float32" in note for note in result.notes)
            assert result.conversions["x"].startswith("copy: JAX stores float64 as float32")
    assert verdicts == {
        "numpy": True,
        "torch": True,
        "jax": False,
        "strict": True,
        "strict:device1": True,
    }


def test_a_branch_on_the_array_type_diverges_on_that_backend() -> None:
    src = "xp = array_namespace(x)\nk = 2 if type(x).__name__ == 'Tensor' else 1\ny = x * k\n"
    ns = person(x=np.arange(4.0))
    expected = original(src, ns)
    verdicts = {}
    for result in replay_all(src, ns, ALL):
        rows = {row.name: row for row in compare_outputs(expected, result, POLICY)}
        verdicts[result.backend] = rows["y"].within_tolerance
        assert rows["k"].within_tolerance == (result.backend != "torch")
    assert [spec for spec, ok in verdicts.items() if not ok] == ["torch"]


MUTATING = [
    "x += 1",
    "x[0] = 0",
    "x *= 2\nx[1:] -= 1",
    "torch.add(x, 1, out=x)",
    "x.add_(1)",
    "x.fill_(3)",
    "v = x[1:]\nv[0] = 99",
    "rows = [r for r in m]\nrows[0][0] = 5",
    "bump(x)",
    "reset()",
]


@pytest.mark.parametrize("source", MUTATING)
def test_a_replay_that_mutates_never_touches_the_person_arrays(source: str) -> None:
    x, m = np.arange(1.0, 5.0), np.ones((2, 3))
    ns = person(x=x, m=m, torch=torch)
    exec("def bump(t):\n    t[0] += 100\ndef reset():\n    x[:] = 0\n", ns)
    kept = {"x": x.copy(), "m": m.copy()}
    result = replay_cell(source, ns, "torch")
    assert result.status == "ok", result.error
    assert np.array_equal(x, kept["x"]) and np.array_equal(m, kept["m"])
    assert ns["x"] is x and ns["m"] is m
    label = result.conversions.get("x") or result.conversions.get("m")
    assert label.startswith("copy: the cell may modify")


def test_the_replay_sees_its_own_mutation() -> None:
    x = np.arange(3.0)
    result = replay_cell("x += 1\ny = x * 1", person(x=x), "torch")
    assert result.outputs["x"].tolist() == [1.0, 2.0, 3.0]
    assert x.tolist() == [0.0, 1.0, 2.0]


def test_a_direct_torch_call_fails_on_jax_with_its_line() -> None:
    src = "xp = array_namespace(x)\ny = xp.exp(x)\nm = torch.max(y, xp.zeros_like(y))\n"
    ns = person(x=np.ones(3, dtype=np.float32), torch=torch)
    results = {r.backend: r for r in replay_all(src, ns, parse_specs("torch,jax,strict"))}
    assert results["torch"].status == "ok"
    for spec in ("jax", "strict"):
        assert results[spec].status == "error"
        assert results[spec].error.type == "TypeError" and results[spec].error.line == 3
        assert results[spec].outputs["y"] is not None  # what ran before the failure
        assert compare_outputs({"y": 1, "m": 2}, results[spec], POLICY) == []


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("cupy", "not installed"),
        ("jax:cpu:7", "xla_force_host_platform_device_count"),
        ("strict:nowhere", "has no device 'nowhere'"),
        ("torch:bogus", "does not know the device"),
        ("torch:meta", "not a replay device"),
        ("numpy:cuda:0", "only the 'cpu' device"),
        ("nosuchlib", "unknown library"),
    ],
)
def test_unavailable_backends_and_devices_are_skipped(spec: str, reason: str) -> None:
    result = replay_cell("y = x + 1", person(x=np.ones(2)), spec)
    assert result.status == "skipped" and reason in result.reason
    assert result.error is None and result.outputs == {}


def test_a_missing_accelerator_is_skipped() -> None:
    if torch.accelerator.is_available():
        pytest.skip("this machine has an accelerator")
    result = replay_cell("y = x + 1", person(x=np.ones(2)), "torch:cuda:0")
    assert result.status == "skipped" and "no accelerator" in result.reason


def test_a_runaway_replay_times_out_and_the_next_backend_goes_on() -> None:
    def mine(signum, frame):  # the person's own handler must come back
        raise AssertionError("not expected to fire")

    previous = signal.signal(signal.SIGALRM, mine)
    try:
        src = "y = x + 1\nwhile True:\n    pass\n"
        first, second = replay_all(
            src.replace("while True", "while x.sum() > 0"),
            person(x=np.ones(2)),
            ["numpy", "torch"],
            ReplaySettings(timeout=0.3),
        )
        assert first.status == second.status == "timeout"
        assert "0.3 s" in first.reason  # the loop never ends: returning shows it stopped
        assert signal.getsignal(signal.SIGALRM) is mine
        assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
        ok = replay_cell("y = x + 1", person(x=np.ones(2)), "numpy", ReplaySettings(timeout=5))
        assert ok.status == "ok"
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_the_alarm_repeats_when_something_swallows_it() -> None:
    # C code that clears errors can lose the first ReplayTimeout; so can a cell
    src = (
        "swallowed = 0\n"
        "while True:\n"
        "    try:\n"
        "        while True:\n"
        "            pass\n"
        "    except BaseException:\n"
        "        swallowed += 1\n"
        "        if swallowed >= 2:\n"
        "            raise\n"
    )
    result = replay_cell(src, person(), "numpy", ReplaySettings(timeout=0.2))
    assert result.status == "timeout"  # the loop never ends: returning shows it stopped
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_someone_elses_timer_keeps_running() -> None:
    previous = signal.signal(signal.SIGALRM, lambda *_: None)
    try:
        signal.setitimer(signal.ITIMER_REAL, 30)
        assert (
            replay_cell("y = x", person(x=np.ones(1)), "numpy", ReplaySettings(timeout=5)).status
            == "ok"
        )
        left, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 25 < left <= 30
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def test_outside_the_main_thread_the_limit_is_not_applied_and_said_so() -> None:
    out = []
    thread = threading.Thread(
        target=lambda: out.append(
            replay_cell("y = x", person(x=np.ones(1)), "numpy", ReplaySettings(timeout=1))
        )
    )
    thread.start()
    thread.join()
    assert out[0].status == "ok" and any("main thread" in n for n in out[0].notes)


def test_non_array_outputs_are_listed_as_not_compared() -> None:
    src = "import math\nxp = array_namespace(x)\nname = 'n' + str(len(x))\nf = lambda v: v\nz = xp.sum(x)\n"
    ns = person(x=np.ones(3))
    expected = original(src, ns)
    result = replay_cell(src, ns, "torch")
    rows = {row.name: row for row in compare_outputs(expected, result, POLICY)}
    assert set(rows) == {"name", "z"}  # math, xp and f are not data
    assert rows["name"].within_tolerance and rows["name"].note is None  # a string: by equality
    assert rows["z"].within_tolerance


def test_strict_replays_reject_non_standard_calls() -> None:
    src = "xp = array_namespace(x)\ny = x.sum()\n"
    result = replay_cell(
        src, person(x=np.ones((2, 2))), "torch", ReplaySettings(RecordSettings(strict=True))
    )
    assert result.status == "error" and result.error.type == "NonStandardError"
    assert result.error.line == 2
    assert replay_cell(src, person(x=np.ones((2, 2))), "torch").status == "ok"


def test_a_cell_that_raises_everywhere_is_an_error_everywhere() -> None:
    results = replay_all(
        "y = x + 1\nraise ValueError('boom')\n", person(x=np.ones(1)), parse_specs("numpy,torch")
    )
    assert [(r.status, r.error.type, r.error.line) for r in results] == [
        ("error", "ValueError", 2),
        ("error", "ValueError", 2),
    ]

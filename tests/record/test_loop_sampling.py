"""Replays record a loop until its iterations record nothing new, then run it as written
(issue 19 item 7: a Python-level loop over array elements replays at the backend's own
speed). The person's own run records every iteration (exact counts)."""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from porter_ext.record import run_recorded
from porter_ext.record.cell import RecordSettings

RECIPROCALS = """
def reciprocals(values):
    output = np.empty(len(values))
    for i in range(len(values)):
        output[i] = 1.0 / values[i]
    return output
r = reciprocals(values)
"""


def run(source: str, sample: int = 0, **namespace):
    namespace.setdefault("np", np)
    settings = RecordSettings(cell="t", loop_sample=sample)
    return run_recorded(textwrap.dedent(source), namespace, settings), namespace


def counts(cell_run) -> dict[tuple[int, str], int]:
    return {(c.line, c.name.rpartition(".")[2]): c.count for c in cell_run.calls}


def test_every_iteration_is_recorded_without_sampling():
    values = np.arange(1, 501)
    cell_run, ns = run(RECIPROCALS, values=values)
    assert cell_run.error is None
    assert counts(cell_run)[(5, "__setitem__")] == 500
    assert counts(cell_run)[(5, "__rtruediv__")] == 500
    assert not cell_run.sampled_loops


def test_a_sampled_loop_stops_recording_once_nothing_new_is_seen():
    values = np.arange(1, 501)
    cell_run, ns = run(RECIPROCALS, sample=8, values=values)
    assert cell_run.error is None
    np.testing.assert_array_equal(ns["r"], 1.0 / values)  # every iteration ran
    seen = counts(cell_run)
    assert 1 <= seen[(5, "__setitem__")] <= 16
    assert 1 <= seen[(5, "__rtruediv__")] <= 16
    assert seen[(3, "empty")] == 1  # outside the loop: as before
    assert [site[1] for site in cell_run.sampled_loops] == [4]


def test_what_a_loop_records_anew_restarts_its_count():
    # a sampled loop runs as written only after `sample` iterations in a row that
    # recorded nothing new: the mean at iteration 6 restarts the count, so the std at
    # iteration 12 (past the first 8) is still recorded
    source = """
    total = np.zeros(3)
    for i in range(200):
        total[0] += values[i]
        if i == 6:
            m = np.mean(values)
        if i == 12:
            s = np.std(values)
    """
    cell_run, ns = run(source, sample=8, values=np.arange(200.0))
    assert ns["total"][0] == sum(range(200))
    assert ns["s"] == np.std(np.arange(200.0))
    seen = counts(cell_run)
    assert (6, "mean") in seen and (8, "std") in seen
    assert seen[(4, "__getitem__")] < 200


@pytest.mark.parametrize(
    "body, expected",
    [
        # break, continue and the loop's else clause keep their meaning on both paths
        (
            "out = []\nfor i in range(100):\n    if i % 2:\n        continue\n"
            "    if i > 60:\n        break\n    out.append(float(x[i] * 2))\nelse:\n    out = None\n",
            [float(2 * i) for i in range(0, 61, 2)],
        ),
        (
            "out = []\ni = 0\nwhile x[i] < 50:\n    out.append(float(x[i] + 1))\n    i += 1\n",
            [float(i + 1) for i in range(50)],
        ),
        (
            "out = 0.0\nfor row in range(20):\n    for col in range(20):\n"
            "        out += float(x[row] * x[col])\n",
            float(sum(range(20)) ** 2),
        ),
    ],
    ids=["for-break-continue-else", "while", "nested"],
)
def test_sampled_loops_compute_what_plain_loops_compute(body, expected):
    for sample in (0, 4):
        cell_run, ns = run(body, sample=sample, x=np.arange(100.0))
        assert cell_run.error is None
        assert ns["out"] == expected


def test_an_exception_in_a_sampled_loop_is_the_persons_at_its_line():
    source = """
    for i in range(100):
        y = x[i] * 2
        if i == 50:
            raise ValueError(i)
    """
    cell_run, _ = run(source, sample=4, x=np.arange(100.0))
    assert cell_run.error.type == "ValueError"
    assert cell_run.error.line == 5


def test_a_loop_defining_a_function_is_recorded_every_iteration():
    # a function the plain copy defined would record nothing when called after the loop
    source = """
    fs = []
    for i in range(50):
        fs.append(lambda: np.sum(x))
    y = fs[-1]()
    """
    cell_run, ns = run(source, sample=4, x=np.arange(5.0))
    assert ns["y"] == 10.0
    assert (4, "sum") in counts(cell_run)
    assert not cell_run.sampled_loops


def test_a_function_of_an_earlier_recorded_cell_samples_its_loop_when_replayed():
    ns: dict = {"np": np}
    run_recorded(textwrap.dedent(RECIPROCALS.rsplit("r =", 1)[0]), ns, RecordSettings(cell="defs"))
    ns["values"] = np.arange(1, 301)
    replayed = run_recorded("r = reciprocals(values)\n", ns, RecordSettings(cell=2, loop_sample=8))
    np.testing.assert_array_equal(ns["r"], 1.0 / ns["values"])
    assert max(c.count for c in replayed.calls) <= 16
    exact = run_recorded("r = reciprocals(values)\n", ns, RecordSettings(cell=3))
    assert max(c.count for c in exact.calls) == 300


@pytest.mark.parametrize(
    "source, name",
    [
        ("out = [float(1.0 / x[i]) for i in range(300)]\n", "__rtruediv__"),
        ("out = {i: float(x[i] * 2) for i in range(300) if x[i] > 0}\n", "__getitem__"),
        ("out = sum(float(v * 2) for v in x[:300])\n", "__mul__"),
    ],
    ids=["list", "dict-with-test", "generator"],
)
def test_a_comprehension_is_sampled_like_a_loop(source, name):
    x = np.arange(1.0, 301.0)
    exact, ns_exact = run(source, x=x)
    sampled, ns_sampled = run(source, sample=4, x=x)
    assert ns_sampled["out"] == ns_exact["out"]
    exact_counts = {c.name.rpartition(".")[2]: c.count for c in exact.calls}
    sampled_counts = {c.name.rpartition(".")[2]: c.count for c in sampled.calls}
    assert exact_counts[name] >= 300
    assert 0 < sampled_counts[name] < 20
    assert len(sampled.sampled_loops) == 1


def test_a_host_copy_in_a_loop_is_one_record_kept_once():
    # float() of an array, called again and again, merges into one bucket (not one per
    # call: a loop of a million would keep a million), so a sampled loop ends
    cell_run, ns = run("out = [float(x[i]) for i in range(300)]\n", sample=4, x=np.arange(300.0))
    assert ns["out"] == list(np.arange(300.0))
    [host] = [c for c in cell_run.calls if c.name == "float"]
    assert host.status == "host_sync" and host.count < 20
    assert cell_run.sampled_loops

"""Replays on ``jax:cpu:1``: two JAX CPU devices, in a fresh process (XLA_FLAGS)."""

from __future__ import annotations

from typing import Any

import pytest

from .helpers import run_two_cpus

pytest.importorskip("jax")

SNIPPET = '''
import json
import numpy as np
import jax
from array_api_compat import array_namespace, device
from porter_ext.compare import compare_outputs, device_findings, get_policy
from porter_ext.record import run_recorded
from porter_ext.replay import analyse, collect_outputs, replay_cell

CELL = """\\
xp = array_namespace(x)
@jax.jit
def init_state(a):
    return xp.zeros(a.shape[0], dtype=a.dtype)
@jax.jit
def normalise(a):
    d = device(a)
    return a / xp.sum(a), xp.zeros(3, device=d)
state = init_state(x)
y, pad = normalise(x)
z = xp.exp(x) + 1
"""
x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
ns = {"__name__": "__main__", "array_namespace": array_namespace, "device": device,
      "jax": jax, "x": x}
run = run_recorded(CELL, ns)
assert run.error is None, run.error
expected = collect_outputs(analyse(CELL), ns, run.value)
report = {"devices": [str(d) for d in jax.devices()]}
for spec in ("jax:cpu:1", "jax"):
    r = replay_cell(CELL, ns, spec)
    rows = compare_outputs(expected, r, get_policy("porter"))
    findings = device_findings(r.calls, backend=r.backend, input_devices=r.input_devices,
                               default_device=r.default_device, outputs=r.outputs)
    report[spec] = {
        "status": r.status, "error": repr(r.error), "default": r.default_device,
        "inputs": r.input_devices, "conversions": r.conversions,
        "rows": {o.name: [o.device, o.expected_device, o.device_ok, o.within_tolerance]
                 for o in rows},
        "findings": [[f.kind, f.name, f.line, f.message] for f in findings],
    }
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    return run_two_cpus(SNIPPET)


def test_inputs_move_to_cpu1_and_dependent_outputs_stay_there(report: dict[str, Any]) -> None:
    r = report["jax:cpu:1"]
    assert r["status"] == "ok", r["error"]
    assert r["default"] == "cpu:0" and r["inputs"] == ["cpu:1"]
    assert set(r["conversions"]) == {"x"}
    for name in ("y", "z", "pad"):  # pad: in a jit with dependent outputs, all land on cpu:1
        device, expected, ok, within = r["rows"][name]
        assert (device, expected, ok, within) == ("cpu:1", "cpu:1", True, True), name


def test_a_jitted_creation_without_device_lands_on_cpu0_and_is_flagged(
    report: dict[str, Any],
) -> None:
    r = report["jax:cpu:1"]
    assert r["rows"]["state"] == ["cpu:0", "cpu:1", False, True]  # right numbers, wrong place
    # inside jit the creation call only recorded `traced` (and calling the person's
    # jitted function is not an array call): the output is what shows it
    creations = [f for f in r["findings"] if f[0] == "default_device_creation"]
    assert [(f[1], f[2]) for f in creations] == [("state", None)]
    assert "cpu:0" in creations[0][3] and "cpu:1" in creations[0][3]


def test_reading_the_device_of_a_traced_value_is_flagged(report: dict[str, Any]) -> None:
    traced = [f for f in report["jax:cpu:1"]["findings"] if f[0] == "traced_device"]
    assert [(f[1], f[2]) for f in traced] == [("array_api_compat.device", 7)]
    assert "cpu:0" in traced[0][3]


def test_on_the_default_device_nothing_lands_elsewhere(report: dict[str, Any]) -> None:
    r = report["jax"]
    assert r["status"] == "ok" and r["inputs"] == ["cpu:0"]
    assert all(row[2] for row in r["rows"].values())
    kinds = {kind for kind, *_ in r["findings"]}
    assert "default_device_creation" not in kinds and "implicit_transfer" not in kinds
    assert "traced_device" in kinds  # reading .device under jit is a finding anywhere

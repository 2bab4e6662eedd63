"""`replay_in_workers` takes the cell's `ReplayPlan` (its analysis, captured inputs,
specs and pool) as one object, with the code and the settings: on real worker kernels."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import BackendSpec
from porter_ext.record.cell import RecordSettings
from porter_ext.replay.dispatch import control_spec, replay_in_workers
from porter_ext.replay.plan import plan
from porter_ext.replay.run import ReplaySettings
from porter_ext.replay.workers import shared_pool

pytestmark = pytest.mark.slow


def test_the_plan_goes_to_the_workers_as_one_object():
    code = "y = x * 2"
    namespace = {"x": np.arange(3.0)}
    planned = plan(code, namespace, [BackendSpec("numpy")], pool=shared_pool())
    control = control_spec(planned.inputs.values(), [])
    assert control == BackendSpec("numpy")
    settings = ReplaySettings(record=RecordSettings(), timeout=120)
    try:
        results = replay_in_workers(planned, code, settings, control=control)
    finally:
        planned.capture.release()
    # a target on the control's own spec is run once, shown as both
    assert [(r.role, r.backend, r.status) for r in results] == [
        ("control", "numpy", "ok"),
        ("target", "numpy", "ok"),
    ], [r.error for r in results]
    assert np.asarray(results[1].outputs["y"]).tolist() == [0.0, 2.0, 4.0]

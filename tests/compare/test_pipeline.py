"""`compare.pipeline`: what is fixed for one cell's replays travels as one `ReplayJob`,
through the replays and the comparison, on real libraries."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from porter_ext.backends import BackendSpec
from porter_ext.compare.pipeline import ReplayJob, compare_replays, replay_entries
from porter_ext.compare.tolerance import get_policy
from porter_ext.record.cell import RecordSettings, run_recorded
from porter_ext.replay.plan import PreRunNamespace, ReplayPlan, plan
from porter_ext.replay.run import ReplaySettings

pytest.importorskip("torch")

CODE = "y = x / 3\nx += 1"


def _job(policy=None) -> tuple[ReplayJob, dict]:
    namespace = {"x": np.arange(4.0)}  # float64: no float64 reference, the policy judges
    planned = plan(CODE, namespace, [BackendSpec("torch")], in_process=True)
    settings = ReplaySettings(record=RecordSettings())
    return ReplayJob(planned, CODE, namespace, settings, policy), namespace


def test_the_jobs_policy_judges_its_replays():
    policy = get_policy("porter").override(rtol=0.5, atol=0.25)
    job, namespace = _job(policy)
    run = run_recorded(CODE, namespace, RecordSettings())
    entries, findings = compare_replays(job, run)
    (torch,) = entries
    assert torch.backend == "torch" and torch.status == "ok", torch
    rows = {row.name: row for row in torch.outputs}
    # the replay started from the inputs as they were before the run (x += 1 after it)
    assert rows["y"].within_tolerance and (rows["y"].rtol, rows["y"].atol) == (0.5, 0.25)
    assert namespace["x"].tolist() == [1.0, 2.0, 3.0, 4.0]
    assert findings == []


def test_a_job_without_a_plan_replays_nothing():
    job, namespace = _job()
    run = run_recorded(CODE, namespace, RecordSettings())
    assert compare_replays(dataclasses.replace(job, plan=None), run) == ([], [])


def test_the_values_one_by_one_make_the_same_entries():
    # the fix stage's rounds still hand the values one by one (`replay_entries`)
    job, namespace = _job()
    run = run_recorded(CODE, namespace, RecordSettings())
    (entry,), _ = replay_entries(job.plan, CODE, namespace, run, job.settings, None)
    assert entry.status == "ok" and [r.name for r in entry.outputs] == ["y", "x"]


def test_the_plan_is_made_of_the_replay_stage():
    namespace = {"x": np.ones(2)}
    planned = plan("x += 1", namespace, [BackendSpec("numpy")], in_process=True)
    assert isinstance(planned, ReplayPlan) and planned.in_process
    # an input the cell changes is snapshotted: the person's own array is not the replay's
    assert planned.snapshot["x"] is not namespace["x"]
    before = PreRunNamespace(namespace, planned.snapshot)
    assert before.person is namespace and before["x"] is planned.snapshot["x"]

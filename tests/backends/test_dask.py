"""Dask as a backend: arrays in and out, replays on chunked lazy arrays with their computes
counted, and replays on a real distributed scheduler (a LocalCluster on 127.0.0.1)."""

from __future__ import annotations

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

from porter_ext.backends import convert_to, device_of, get_backend, library_of  # noqa: E402
from porter_ext.replay import ReplaySettings, replay_cell  # noqa: E402


def test_dask_arrays_are_recognised_and_live_on_the_host():
    x = da.ones((4, 4), chunks=2)
    assert library_of(x) == "dask"
    assert device_of(x) == "cpu"
    assert get_backend("dask").devices() == ["cpu"]


def test_arrays_move_into_dask_chunked_and_back_by_computing():
    x = np.arange(12.0).reshape(3, 4)
    into = convert_to(x, "dask")
    assert library_of(into.value) == "dask"
    assert into.value.chunks == ((2, 1), (2, 2))  # chunked, not one NumPy-like block
    back = convert_to(into.value * 2, "torch")
    assert back.mode == "copy" and "computed" in back.reason
    assert back.value.tolist() == (x * 2).tolist()


def test_a_device_dask_lacks_is_refused_with_the_reason():
    from porter_ext.backends import DeviceUnavailable

    with pytest.raises(DeviceUnavailable, match="host"):
        get_backend("dask").resolve_device("cuda:0")


CELL = """\
y = xp.sum(x * 2.0, axis=0)
total = float(xp.sum(y))
"""


def test_a_replay_on_dask_computes_outputs_once_and_counts_what_the_cell_forced():
    import array_api_compat.numpy as xnp

    person = {"xp": xnp, "x": np.arange(8.0).reshape(4, 2)}
    result = replay_cell(CELL, person, "dask", ReplaySettings())
    assert result.status == "ok", result.error
    assert library_of(result.outputs["y"]) == "dask"
    assert result.outputs["y"].compute().tolist() == [24.0, 32.0]
    assert result.outputs["total"] == 56.0
    notes = " ".join(result.notes)
    assert "computed its Dask graph 1 time(s)" in notes  # float() forced one compute
    assert "1 lazy output(s) computed once, at the end" in notes
    assert person["x"].tolist() == np.arange(8.0).reshape(4, 2).tolist()


@pytest.mark.slow
def test_a_replay_runs_on_a_distributed_scheduler_named_in_the_spec():
    distributed = pytest.importorskip("distributed")
    import array_api_compat.numpy as xnp

    with distributed.LocalCluster(
        n_workers=1,
        threads_per_worker=1,
        processes=False,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address=None,
    ) as cluster:
        address = cluster.scheduler_address
        assert address.startswith("tcp://127.0.0.1:")
        assert get_backend("dask").place_error(address, 5.0) is None  # it answers at the door
        person = {"xp": xnp, "x": np.arange(8.0).reshape(4, 2)}

        def transitions() -> int:
            return cluster.scheduler.transition_counter

        before = transitions()
        result = replay_cell(CELL, person, f"dask@{address}", ReplaySettings())
        assert result.status == "ok", result.error
        assert result.backend == f"dask@{address}"
        assert result.outputs["y"].compute().tolist() == [24.0, 32.0]
        assert any(address in note for note in result.notes)
        assert transitions() > before  # the scheduler really ran the graph's tasks


def test_port_magic_replays_on_dask(port_shell):
    port_shell.run_cell(
        "import numpy as np\nimport array_api_compat.numpy as xp\nx = np.ones((4, 4))"
    )
    port_shell.run_cell("%%port -b dask\ny = xp.sum(x * 3.0, axis=1)\n")
    port = port_shell.user_ns["_port"]
    [replay] = [r for r in port.entry.replays if r.backend == "dask"]
    assert replay.status == "ok", (replay.error, replay.reason)
    assert all(o.within_tolerance for o in replay.outputs)

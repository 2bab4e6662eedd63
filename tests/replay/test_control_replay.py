"""The control replay runs what the original ran: on the original's own library the
person's names (``np``) stay that library itself, never an array-api-compat wrapper, so
valid NumPy replays ``ok`` on NumPy (attacks/50 as a test); a wrapper only where the
target is another library. On real worker kernels."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.backends import BackendSpec, get_backend
from porter_ext.replay import analyse, build_namespace
from porter_ext.replay.placement import Placer
from tests.replay.isolation import replays, run, shell

pytestmark = pytest.mark.slow

#: valid NumPy that array-api-compat's numpy spells otherwise (``correction``, ``min``)
VALID_NUMPY = [
    "v = np.var(x, ddof=1)",
    "v = np.std(x, ddof=1)",
    "v = np.clip(x, a_min=0, a_max=2)",
    "v = np.__name__ + str(x.shape)",
]


@pytest.fixture(scope="module")
def ip():
    ip = shell()
    run(ip, "import numpy as np\nx = np.array([[1.0, 2.0], [3.0, 6.0]])")
    return ip


@pytest.mark.parametrize("cell", VALID_NUMPY)
def test_valid_numpy_replays_ok_on_the_numpy_control(ip, cell):
    result = run(ip, f"%%port -b numpy\n{cell}")
    assert result.success, result.output
    port = ip.user_ns["_port"]
    [control] = replays(port, "control").values()
    assert control.status == "ok", (control.error, control.reason)
    assert control.outputs, "the control compared nothing"
    for output in control.outputs:
        assert output.within_tolerance is not False, output
        assert output.deterministic is not False, output


def test_the_person_names_stay_their_library_on_its_own_replay_only():
    import array_api_compat.numpy as compat_numpy

    pytest.importorskip("torch")
    person = {"__name__": "__main__", "np": np, "xp": compat_numpy, "x": np.ones(2)}
    io = analyse("v = np.var(x, ddof=1), xp.var(x, correction=1)")
    on_numpy = build_namespace(io, person, BackendSpec("numpy")).namespace
    assert on_numpy["np"] is np and on_numpy["xp"] is compat_numpy
    on_torch = build_namespace(io, person, BackendSpec("torch")).namespace
    assert on_torch["np"].__name__ == on_torch["xp"].__name__ == "array_api_compat.torch"

    placed = dict(person)  # the worker's placement does the same
    Placer(get_backend("numpy"), None).namespace(placed)
    assert placed["np"] is np and placed["xp"] is compat_numpy
    Placer(get_backend("strict"), None).namespace(placed)
    assert placed["np"].__name__ == "array_api_strict"

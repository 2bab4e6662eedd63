"""Building a replay namespace: conversions, copies before mutation, rebinding, functions."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from porter_ext.backends import BackendSpec, BackendUnavailable, ConversionError
from porter_ext.record import run_recorded
from porter_ext.record.strict import NamespaceView, strict_namespace
from porter_ext.replay import analyse, build_namespace, input_devices, is_array_namespace
from porter_ext.replay.user_functions import may_mutate, user_functions

torch = pytest.importorskip("torch")
TORCH = BackendSpec("torch")


def person(code: str = "", **values) -> dict:
    ns: dict = {"__name__": "__main__", **values}
    exec(code, ns)
    return ns


def test_arrays_move_zero_copy_and_the_person_namespace_is_untouched() -> None:
    x = np.arange(6.0)
    ns = person(x=x, n=3, label="a")
    before = dict(ns)
    built = build_namespace(analyse("y = x * n\nz = label"), ns, TORCH)
    assert isinstance(built.namespace["x"], torch.Tensor)
    assert built.namespace["x"].data_ptr() == x.ctypes.data  # shared, not copied
    assert built.labels() == {"x": "zero_copy"}
    assert built.namespace["n"] == 3 and built.namespace["label"] == "a"
    assert built.devices == ["cpu"]
    assert ns == before and all(ns[k] is before[k] for k in ns)


def test_an_input_the_cell_may_modify_is_copied_first() -> None:
    x, y = np.arange(4.0), np.ones(3)
    built = build_namespace(analyse("x[0] = 9\nz = y + 1"), person(x=x, y=y), TORCH)
    assert built.namespace["x"].data_ptr() != x.ctypes.data
    assert built.labels()["x"].startswith("copy: the cell may modify x in place")
    assert built.labels()["y"] == "zero_copy"  # only what may be modified is copied


def test_jax_inputs_are_never_copied_for_mutation() -> None:
    pytest.importorskip("jax")
    x = np.arange(4.0, dtype=np.float32)
    x = x if x.ctypes.data % 64 == 0 else np.array(x)  # alignment decides zero-copy
    built = build_namespace(analyse("x += 1"), person(x=x), BackendSpec("jax"))
    assert not built.labels()["x"].startswith("copy: the cell may modify")


def test_containers_are_searched_and_rebuilt_with_paths() -> None:
    Pair = collections.namedtuple("Pair", "a b")
    data = {"w": np.ones(2), "meta": ["text", (np.zeros(1), 3)], "p": Pair(np.ones(1), 2)}
    ns = person(data=data, plain=[1, 2, 3])
    built = build_namespace(analyse("r = data, plain"), ns, TORCH)
    got = built.namespace["data"]
    assert isinstance(got["w"], torch.Tensor) and isinstance(got["meta"][1][0], torch.Tensor)
    assert got["meta"][0] == "text" and got["meta"][1][1] == 3
    assert isinstance(got["p"], Pair) and isinstance(got["p"].a, torch.Tensor)
    assert set(built.labels()) == {"data['w']", "data['meta'][1][0]", "data['p'][0]"}
    assert built.namespace["plain"] is ns["plain"]  # nothing to convert, not modified
    assert isinstance(data["w"], np.ndarray)  # the person's dict is untouched


def test_a_container_the_cell_may_modify_is_copied() -> None:
    ns = person(log=["a"], seen={1})
    built = build_namespace(analyse("log.append('b')\nseen.add(2)"), ns, TORCH)
    assert built.namespace["log"] == ["a"] and built.namespace["log"] is not ns["log"]
    assert built.namespace["seen"] is not ns["seen"]


def test_numpy_scalars_stay_numbers() -> None:
    built = build_namespace(analyse("y = list(range(k))"), person(k=np.int64(3)), TORCH)
    assert built.namespace["k"] is not None and isinstance(built.namespace["k"], np.integer)


def test_array_namespaces_are_rebound_but_torch_is_not() -> None:
    import array_api_compat.numpy as compat_numpy

    ns = person(
        "import numpy as np\nimport torch\nimport array_api_strict as xps",
        xp=compat_numpy,
        sxp=strict_namespace(compat_numpy),
    )
    built = build_namespace(analyse("a = np, torch, xps, xp, sxp"), ns, TORCH)
    target = built.namespace
    assert target["np"].__name__ == "array_api_compat.torch"
    assert target["xps"].__name__ == "array_api_compat.torch"
    assert target["xp"].__name__ == "array_api_compat.torch"
    assert target["torch"] is torch
    assert isinstance(target["sxp"], NamespaceView) and target["sxp"]._strict
    assert target["sxp"]._real.__name__ == "array_api_compat.torch"
    assert set(built.rebound) == {"np", "xps", "xp", "sxp"}
    assert not is_array_namespace(torch) and not is_array_namespace(np.linalg)


def test_a_recorded_namespace_view_keeps_its_kind() -> None:
    from array_api_compat import array_namespace

    ns = person(array_namespace=array_namespace, x=np.ones(2))
    run_recorded("xp = array_namespace(x)", ns)
    assert isinstance(ns["xp"], NamespaceView) and not ns["xp"]._strict
    built = build_namespace(analyse("y = xp.sum(x)"), ns, TORCH)
    assert isinstance(built.namespace["xp"], NamespaceView) and not built.namespace["xp"]._strict
    assert built.namespace["xp"]._real.__name__ == "array_api_compat.torch"


def test_person_functions_are_recreated_over_the_replay_namespace() -> None:
    from array_api_compat import array_namespace

    ns = person(
        "def scale(a, *, k=2):\n    return helper(a) * k\n"
        "def helper(a):\n    return xp.exp(a) + w\n",
        xp=array_namespace(np.ones(1)),
        w=np.ones(3),
    )
    scale = ns["scale"]
    scale.tag = "kept"
    ns["x"] = np.zeros(3)
    built = build_namespace(analyse("y = scale(x)"), ns, TORCH)
    got = built.namespace
    assert set(built.recreated) == {"scale", "helper"}
    assert got["scale"] is not scale and got["scale"].__globals__ is got
    assert got["scale"].__kwdefaults__ == {"k": 2} and got["scale"].tag == "kept"
    assert isinstance(got["w"], torch.Tensor)  # helper's global came along, converted
    assert isinstance(got["scale"](got["x"]), torch.Tensor)
    assert scale.__globals__ is ns and ns["scale"] is scale


def test_globals_of_a_person_function_that_writes_are_copied() -> None:
    ns = person(
        "def reset():\n    state[0] = 0\ndef read():\n    return state[0]\n", state=np.arange(3.0)
    )
    functions = user_functions(ns)
    assert may_mutate(functions["reset"], functions)
    assert not may_mutate(functions["read"], functions)
    built = build_namespace(analyse("reset()"), ns, TORCH)
    assert built.labels()["state"].startswith("copy: the cell may modify state")
    built = build_namespace(analyse("v = read()"), ns, TORCH)
    assert built.labels()["state"] == "zero_copy"


def test_arguments_to_person_functions_may_be_modified() -> None:
    ns = person("def bump(t):\n    return t\n", x=np.ones(2))
    built = build_namespace(analyse("bump(x)"), ns, TORCH)
    assert built.labels()["x"].startswith("copy:")


def test_missing_backend_and_device_raise_with_a_reason() -> None:
    with pytest.raises(BackendUnavailable, match="cupy"):
        build_namespace(analyse("y = x"), person(x=np.ones(1)), BackendSpec("cupy"))
    with pytest.raises(BackendUnavailable, match="no device"):
        build_namespace(analyse("y = x"), person(x=np.ones(1)), BackendSpec("strict", "nowhere"))


def test_an_input_that_cannot_move_names_itself() -> None:
    meta = torch.ones(2, device="meta")
    with pytest.raises(ConversionError, match="input 'm'"):
        build_namespace(analyse("y = m"), person(m=meta), BackendSpec("numpy"))


def test_input_devices_of_the_original_run() -> None:
    import array_api_strict as xps

    ns = person(a=xps.ones(2, device=xps.Device("device1")), b=[np.ones(1)], c=3)
    assert input_devices(analyse("y = a, b, c"), ns) == ["device1", "cpu"]

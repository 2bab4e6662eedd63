"""Reading a replay's outputs back (transport.unpack) in the person's process."""

from __future__ import annotations

import gc
import io

import cloudpickle
import numpy as np
import pytest

from porter_ext.replay import transport


def _read_back(values: dict) -> dict:
    parcel = transport.pack(values, results=True)
    parcel.hand_over()
    return transport.unpack(parcel, transport.host_copy, take=True, keep_classes=True)


def test_a_class_already_here_is_read_back_as_it_is():
    namespace: dict = {"__name__": "__main__"}
    exec("class C:\n    def m(self):\n        return 1\nc = C()\nc.w = 2\n", namespace)
    klass = namespace["C"]
    method = klass.__dict__["m"]
    # the class travels by value; cloudpickle finds it here by its tracking id, and would
    # set the stream's copies of its methods on it
    out = _read_back({"c": namespace["c"]})
    assert type(out["c"]) is klass and out["c"].w == 2
    assert klass.__dict__["m"] is method and klass.m.__code__ is method.__code__


def test_a_class_not_here_is_rebuilt_from_the_stream():
    namespace: dict = {"__name__": "__main__"}
    exec("class D:\n    k = 3\n", namespace)
    blob = cloudpickle.dumps(namespace["D"]())
    del namespace
    gc.collect()  # the class is gone from this process: the stream's copy is rebuilt
    rebuilt = transport._KeepClasses(io.BytesIO(blob)).load()
    assert type(rebuilt).k == 3


def test_torch_parameters_and_modules_are_read_back():
    torch = pytest.importorskip("torch")
    module = torch.nn.Linear(3, 2)
    out = _read_back({"p": torch.nn.Parameter(torch.ones(2)), "m": module, "n": 2})
    assert isinstance(out["p"], np.ndarray) and out["p"].tolist() == [1.0, 1.0]
    assert isinstance(out["m"], torch.nn.Linear) and out["n"] == 2


def test_two_answers_read_at_once_on_two_threads_each_get_their_own_arrays():
    import threading

    zeros_started, ones_started, zeros_done = (threading.Event() for _ in range(3))
    found: dict = {}

    def place(host, meta):  # the first array of each parcel waits for the other thread
        value = transport.host_copy(host, meta)
        name = threading.current_thread().name
        if name == "zeros" and not zeros_started.is_set():
            zeros_started.set()
            ones_started.wait(timeout=5)
        elif name == "ones" and not ones_started.is_set():
            ones_started.set()
            zeros_done.wait(timeout=5)  # still unpacking while the other one goes on
        return value

    def read(fill: float):
        parcel = transport.pack({"a": np.full(3, fill), "b": np.full(5, fill)}, results=True)
        parcel.hand_over()
        found[threading.current_thread().name] = transport.unpack(parcel, place, take=True)
        if fill == 0.0:
            zeros_done.set()

    zeros = threading.Thread(target=read, args=(0.0,), name="zeros")
    ones = threading.Thread(target=read, args=(1.0,), name="ones")
    zeros.start()
    zeros_started.wait(timeout=30)
    ones.start()
    for thread in (zeros, ones):
        thread.join(timeout=60)
    assert {k: v.tolist() for k, v in found["zeros"].items()} == {"a": [0.0] * 3, "b": [0.0] * 5}
    assert {k: v.tolist() for k, v in found["ones"].items()} == {"a": [1.0] * 3, "b": [1.0] * 5}


_GUARDED = """
class frozendict(dict):
    def __setitem__(self, key, value):
        raise TypeError(f"frozendict.__setitem__() is not allowed: {key!r}")

class frozenlist(list):
    def append(self, value):
        raise TypeError("frozenlist is read-only")

    extend = append
"""


def test_a_mapping_that_refuses_item_assignment_travels_whole():
    """A person's ``frozendict`` (a dict whose ``__setitem__`` raises) was filled through
    that ``__setitem__`` on the receiving side: every replay of a cell reading one failed
    with "porter could not prepare the replay: frozendict.__setitem__() …"."""
    namespace: dict = {"__name__": "__main__"}
    exec(_GUARDED, namespace)
    cfg = namespace["frozendict"](n=3, w=np.arange(4.0))
    cfg.__dict__["note"] = "kept"
    dict.__setitem__(cfg, "me", cfg)  # holds itself
    items = namespace["frozenlist"]([1, np.ones(2)])
    parcel = transport.pack({"cfg": cfg, "items": items})
    try:
        out = transport.unpack(parcel, transport.host_copy)
    finally:
        parcel.release()
    got, listed = out["cfg"], out["items"]
    assert type(got).__name__ == "frozendict" and isinstance(got, dict)
    assert got["n"] == 3 and got["w"].tolist() == [0.0, 1.0, 2.0, 3.0]
    assert got["me"] is got and got.note == "kept"
    with pytest.raises(TypeError, match="not allowed"):
        got["n"] = 4  # still the person's class, refusing as it did
    assert type(listed).__name__ == "frozenlist" and listed[0] == 1
    assert listed[1].tolist() == [1.0, 1.0]

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

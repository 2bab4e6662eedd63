"""`device_findings`: each kind from recorded calls, and from where outputs landed."""

from __future__ import annotations

import pytest

from porter_ext.compare import device_findings
from porter_ext.record import CallRecord, run_recorded
from porter_ext.replay import analyse, input_devices


def call(
    name: str,
    devices_in=(),
    out=None,
    *,
    line=1,
    status="standard",
    kind="function",
    keywords=(),
    message="",
) -> CallRecord:
    return CallRecord(
        line,
        0,
        name,
        name.partition(".")[0],
        kind,
        status,
        devices_in=list(devices_in),
        device_out=out,
        keywords=list(keywords),
        message=message,
    )


def kinds(calls, inputs=("cpu:1",), default="cpu:0", outputs=None) -> list[tuple[str, str]]:
    found = device_findings(
        calls,
        backend="jax:cpu:1",
        input_devices=list(inputs),
        default_device=default,
        outputs=outputs,
    )
    assert all(f.backend == "jax:cpu:1" and f.message for f in found)
    return [(f.kind, f.name) for f in found]


def test_creation_without_device_on_the_default_device() -> None:
    z = call("jax.numpy.zeros", [], "cpu:0", line=3)
    assert kinds([z]) == [("default_device_creation", "jax.numpy.zeros")]
    assert kinds([call("jax.numpy.zeros", [], "cpu:0", keywords=["device"])]) == []
    assert kinds([z], inputs=["cpu:0"]) == []  # the inputs are on the default device too
    assert kinds([z], inputs=[]) == []  # no array inputs: nowhere else to be
    assert kinds([z], default=None) == []
    assert kinds([call("jax.numpy.asarray", [], "cpu:0")]) == [
        ("default_device_creation", "jax.numpy.asarray")
    ]
    assert kinds([call("jax.numpy.zeros", [], "traced")]) == []  # judged by the outputs


def test_creation_from_an_array_must_keep_its_device() -> None:
    assert kinds([call("jax.numpy.zeros_like", ["cpu:1"], "cpu:1")]) == []
    like = call("jax.numpy.zeros_like", ["cpu:1"], "cpu:0")
    assert kinds([like]) == [("default_device_creation", "jax.numpy.zeros_like")]
    assert kinds([call("jax.numpy.asarray", ["cpu:1"], "cpu:1")]) == []


def test_cross_device_and_implicit_transfer() -> None:
    mixed = call("jax.numpy.add", ["cpu:0", "cpu:1"], "cpu:0")
    assert kinds([mixed]) == [("cross_device", "jax.numpy.add")]
    moved = call("jax.numpy.exp", ["cpu:1"], "cpu:0")
    assert kinds([moved]) == [("implicit_transfer", "jax.numpy.exp")]
    assert kinds([call("jax.numpy.exp", ["cpu:1"], "cpu:1")]) == []
    assert kinds([call("jax.device_put", ["cpu:1"], "cpu:0")]) == []  # moving is the point
    assert kinds([call("Array.to_device", ["cpu:1"], "cpu:0", kind="method")]) == []


def test_traced_device_and_host_sync() -> None:
    read = call("Array.device", ["traced"], None, kind="attribute")
    helper = call("array_api_compat.device", ["traced"], None)
    assert kinds([read, helper]) == [
        ("traced_device", "Array.device"),
        ("traced_device", "array_api_compat.device"),
    ]
    assert kinds([call("Array.device", ["cpu:1"], None, kind="attribute")]) == []
    sync = call("float", ["cpu:1"], None, status="host_sync", message="float() of an array")
    found = device_findings([sync], backend=None, input_devices=[], default_device=None)
    assert [(f.kind, f.line, f.message, f.backend) for f in found] == [
        ("host_sync", 1, "float() of an array", None)
    ]


def test_outputs_on_the_default_device_are_named() -> None:
    jnp = pytest.importorskip("jax.numpy")
    on0 = jnp.zeros(2)  # this process has one JAX device: the default, cpu:0
    outputs = {"state": on0, "pair": (on0, 3), "n": 1, "text": "x"}
    assert kinds([], outputs=outputs) == [
        ("default_device_creation", "state"),
        ("default_device_creation", "pair[0]"),
    ]
    assert kinds([], inputs=["cpu:0"], outputs=outputs) == []


def test_a_call_record_without_keywords_is_accepted() -> None:
    z = call("jax.numpy.zeros", [], "cpu:0")
    del z.keywords  # records from before the recorder kept keyword names
    assert kinds([z]) == [("default_device_creation", "jax.numpy.zeros")]


def test_findings_of_a_real_run_on_array_api_strict_devices() -> None:
    xps = pytest.importorskip("array_api_strict")
    ns = {"xps": xps, "x": xps.asarray([1.0, 2.0, 3.0], device=xps.Device("device1"))}
    src = "z = xps.zeros(3)\nw = xps.zeros(3, device=x.device)\nq = xps.add(x, z)\n"
    run = run_recorded(src, ns)
    assert run.error is not None and run.error.line == 3  # strict refuses to mix devices
    found = device_findings(
        run.calls,
        backend=None,
        default_device="CPU_DEVICE",
        input_devices=input_devices(analyse(src), ns),
    )
    assert [(f.kind, f.line) for f in found] == [
        ("default_device_creation", 1),
        ("cross_device", 3),
    ]
    assert "device1" in found[0].message and "CPU_DEVICE" in found[1].message


def test_a_replays_findings_from_its_own_result() -> None:
    """`replay_findings` reads one replay's calls, input devices, default device and
    outputs (as a worker and an in-process replay both do); a replay that did not run
    its cell on the target says nothing about placement."""
    import dataclasses

    import numpy as np

    from porter_ext.compare.devices import replay_findings
    from porter_ext.replay.run import replay_cell

    pytest.importorskip("array_api_strict")
    src = "from array_api_compat import array_namespace\nz = array_namespace(x).zeros(3)\n"
    result = replay_cell(src, {"x": np.ones(3)}, "strict:device1")
    assert result.status == "ok" and result.input_devices == ["device1"], result.error
    found = replay_findings(result, result.outputs)
    assert [(f.kind, f.line, f.name) for f in found] == [
        ("default_device_creation", 2, "array_api_strict.zeros"),
        ("default_device_creation", None, "z"),
    ]
    assert {f.backend for f in found} == {"strict:device1"}
    for status in ("skipped", "timeout", "not_exercised"):
        assert replay_findings(dataclasses.replace(result, status=status), result.outputs) == []


def test_a_finding_in_code_from_another_cell_is_at_its_calls_line():
    from porter_ext.compare.devices import device_findings
    from porter_ext.model.calls import CallRecord

    call = CallRecord(
        line=4,
        col=8,
        name="jax.numpy.zeros",
        library="jax",
        kind="function",
        status="standard",
        devices_in=[],
        device_out="cpu:0",
        message="a message that says nothing of cells",
        origin_cell=3,
    )
    [finding] = device_findings(
        [call], backend="jax:cpu:1", input_devices=["cpu:1"], default_device="cpu:0"
    )
    assert finding.kind == "default_device_creation"
    # at the call's line; where the code is written travels in the call's `origin`
    # (views find the call by line and name), not in message text
    assert finding.line == 4 and not finding.message.startswith("(in code from cell")


def test_a_transformation_is_named_only_where_the_cell_went_through_one() -> None:
    """Issue 27 item 5: an output on the default device of a cell without any
    transformation (on strict:device1 too) did read "(inside jax.jit, …)"."""
    xps = pytest.importorskip("array_api_strict")
    plain = {"total": xps.zeros(2)}  # made without device=: on the default device
    found = device_findings(
        [],
        backend="strict:device1",
        input_devices=["device1"],
        default_device="CPU_DEVICE",
        outputs=plain,
    )
    assert [f.kind for f in found] == ["default_device_creation"]
    assert "jit" not in found[0].message and "inside" not in found[0].message
    jit = call("jax.jit", kind="transformation", status="outside_namespace")
    read = call("array_api_compat.device", ["traced"], None)
    found = device_findings(
        [jit, read],
        backend="strict:device1",
        input_devices=["device1"],
        default_device="CPU_DEVICE",
        outputs=plain,
    )
    messages = {f.kind: f.message for f in found}
    assert "(inside jax.jit)" in messages["traced_device"]
    assert "inside jax.jit, results that do not depend" in messages["default_device_creation"]

"""Integer true division (issue 19 item 3, the data-science handbook's ``i / 4``): the run
records it as ``non_standard_usage`` with the dtypes its verdict judged in the record's
``operands`` (which the fix stage reads, never the message), and the codemod casts the
integer arrays to float64, so the ported cell runs on array-api-strict and gives what
NumPy gave."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.fix.rewrite import RunKnowledge, rewrite_source
from porter_ext.fix.verify_support import mixed_operators
from porter_ext.model.calls import CallRecord
from tests.fix.test_chains import _has
from tests.record.test_usage_without_names import _calls

CELL = "r = i / 4\ns = i / (i + 1)\nt = 10 / (i + 1)\n"
SETUP = "import numpy as np\ni = np.arange(6).reshape(2, 3)\n"


def test_the_record_names_the_dtypes_of_an_integer_true_division(port_shell):
    calls = _calls(port_shell, CELL, SETUP)
    assert calls[(1, "ndarray.__truediv__")][0].message.startswith("/ mixes int64 and int:")
    assert calls[(2, "ndarray.__truediv__")][0].message.startswith("/ mixes int64 and int64:")
    (right,) = calls[(3, "ndarray.__rtruediv__")]
    assert right.status == "non_standard_usage"
    assert right.message.startswith("/ mixes int64 and int:")
    assert "true division of int64" in right.message


def test_the_record_carries_the_dtypes_its_verdict_judged(port_shell):
    calls = _calls(port_shell, CELL + "u = i * 2.5\nv = i + [1, 2, 3]\nw = i < i\n", SETUP)
    assert calls[(1, "ndarray.__truediv__")][0].operands == ["int64", "python int"]
    assert calls[(2, "ndarray.__truediv__")][0].operands == ["int64", "int64"]
    assert calls[(3, "ndarray.__rtruediv__")][0].operands == ["int64", "python int"]
    (scaled,) = calls[(4, "ndarray.__mul__")]
    assert scaled.status == "non_standard_usage" and scaled.operands == ["int64", "python float"]
    (listed,) = calls[(5, "ndarray.__add__")]  # a list: the verdict is not about dtypes
    assert listed.status == "non_standard_usage" and listed.operands == []
    assert calls[(6, "ndarray.__lt__")][0].operands == []  # standard


def _operator(name: str, message: str, operands: list[str]) -> CallRecord:
    return CallRecord(
        1, 4, name, "numpy", "operator", "non_standard_usage", message=message, operands=operands
    )


def test_the_fix_stage_reads_the_dtypes_from_the_record_not_its_message():
    """The codemod's casts came from a regex over the message ("/ mixes int64 and int:"):
    a record whose message says it another way was not cast, and one whose message
    matched was, whatever it judged."""
    division = "ndarray.__truediv__"
    assert mixed_operators(
        [_operator(division, "true division of integers", ["int64", "python int"])]
    ) == {(1, 4, division): ("int64", "int")}
    assert mixed_operators([_operator(division, "/ mixes int64 and int: worded so", [])]) == {}
    kinds = _operator("ndarray.__mul__", "", ["float32", "int64"])
    assert mixed_operators([kinds]) == {(1, 4, "ndarray.__mul__"): ("float32", "int64")}
    # a float scalar with an integer array: the array is cast (``1.0 / i``)
    floating = _operator(division, "", ["int64", "python float"])
    assert mixed_operators([floating]) == {(1, 4, division): ("int64", "python float")}
    # two integer dtypes in a product: no cast the codemod writes
    assert mixed_operators([_operator("ndarray.__mul__", "", ["int32", "int64"])]) == {}


def test_porter_fix_casts_an_integer_true_division_from_the_run(port_shell):
    pytest.importorskip("array_api_strict")
    port_shell.run_cell(SETUP)
    result = port_shell.run_cell(f"%%port --fix --quiet --in-process -b strict\n{CELL}")
    assert result.error_in_exec is None
    rewrite = port_shell.user_ns["_port"].entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    _has(
        rewrite.source,
        "r = xp.astype(i, xp.float64) / 4\n",
        "t = 10 / xp.astype(i + 1, xp.float64)\n",
    )


def test_integer_arrays_of_a_true_division_are_cast_to_float64():
    strict = pytest.importorskip("array_api_strict")
    operators = {
        (1, 4, "ndarray.__truediv__"): ("int64", "int"),
        (2, 4, "ndarray.__truediv__"): ("int64", "int64"),
        (3, 4, "ndarray.__rtruediv__"): ("int64", "int"),
    }
    result = rewrite_source(
        CELL, imports={"np": "numpy"}, arrays={"i": "numpy"}, run=RunKnowledge(operators=operators)
    )
    _has(
        result.source,
        "xp = array_namespace(i)\n",
        "r = xp.astype(i, xp.float64) / 4\n",
        "s = xp.astype(i, xp.float64) / xp.astype(i + 1, xp.float64)\n",
        "t = 10 / xp.astype(i + 1, xp.float64)\n",
    )
    assert [s.replacement is not None for s in result.sites] == [True, True, True]
    before: dict = {}
    exec(SETUP + CELL, before)
    with pytest.raises(TypeError):  # what the original cell does on array-api-strict
        exec(CELL, {"i": strict.asarray(before["i"])})
    for i in (before["i"], strict.asarray(before["i"])):
        after: dict = {"i": i}
        exec(result.source, after)
        for name in ("r", "s", "t"):
            value = np.asarray(after[name])
            assert value.dtype == before[name].dtype == np.float64, name
            np.testing.assert_array_equal(value, before[name], err_msg=name)


def test_a_torch_integer_division_is_cast_to_torch_default_float():
    torch = pytest.importorskip("torch")
    cell = "r = ti / 4\n"
    result = rewrite_source(
        cell,
        imports={"torch": "torch"},
        arrays={"ti": "torch"},
        run=RunKnowledge(operators={(1, 4, "Tensor.__truediv__"): ("int64", "int")}),
    )
    _has(result.source, "r = xp.astype(ti, xp.float32) / 4\n")
    before: dict = {"ti": torch.arange(6)}
    after: dict = {"ti": torch.arange(6)}
    exec(cell, before)
    exec(result.source, after)
    assert after["r"].dtype == before["r"].dtype
    assert torch.equal(after["r"], before["r"])


def test_a_float_array_divided_by_an_integer_array_casts_the_integer_one():
    """The handbook's ``heights.astype(float) / heights.max()``: float64 by int64."""
    strict = pytest.importorskip("array_api_strict")
    cell = "tall = f / i.max()\n"
    result = rewrite_source(
        cell,
        imports={"np": "numpy"},
        arrays={"f": "numpy", "i": "numpy"},
        run=RunKnowledge(operators={(1, 7, "ndarray.__truediv__"): ("float64", "int64")}),
    )
    _has(result.source, "tall = f / xp.astype(xp.max(i), xp.float64)\n")
    i = np.arange(1, 7)
    before: dict = {"f": i.astype(float), "i": i}
    exec(cell, before)
    for xs in (np, strict):
        after: dict = {"f": xs.asarray(i.astype(float)), "i": xs.asarray(i)}
        exec(result.source, after)
        np.testing.assert_array_equal(np.asarray(after["tall"]), before["tall"])

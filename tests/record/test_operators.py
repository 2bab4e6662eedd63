"""Operators, indexing, argument kinds and attribution, on real libraries (from the
reproducers nb_07, nb_15 and nb__misc_probe of ../shared/repro)."""

from __future__ import annotations

import numpy as np
import pytest

from porter_ext.record import run_recorded
from porter_ext.record.cell import RecordSettings

torch = pytest.importorskip("torch")


def calls_at(source: str, **namespace):
    namespace.setdefault("np", np)
    namespace.setdefault("torch", torch)
    run = run_recorded(source, namespace)
    assert run.exception is None, run.exception
    by_line: dict[int, list] = {}
    for call in run.calls:
        by_line.setdefault(call.line, []).append(call)
    return run, by_line


def one(by_line, line, name):
    found = [c for c in by_line.get(line, []) if c.name == name]
    assert found, f"{name} not recorded on line {line}: {by_line.get(line)}"
    return found[0]


NB_07 = """x = np.arange(1, 6)
a = np.add.reduce(x)
b = np.multiply.accumulate(x)
c = np.multiply.outer(x, x)
np.add.at(x, [0, 0], 1)
d = x[[3, 1]]
x[np.array([1, 2])] = 0
e = np.exp([1.0, 2.0])
f = np.sum(x < 3)
g = np.zeros((2, 2), dtype=int)
h = np.arange('2016-07', '2016-08', dtype='datetime64[D]')
"""


def test_ufunc_methods_are_recorded_with_their_standard_spelling():
    _, lines = calls_at(NB_07)
    # a ufunc's reduce and accumulate work along axis 0, not over every axis
    assert one(lines, 2, "numpy.add.reduce").suggestion == "xp.sum(x, axis=0)"
    assert one(lines, 3, "numpy.multiply.accumulate").suggestion == (
        "xp.cumulative_prod(x, axis=0)"
    )
    assert one(lines, 4, "numpy.multiply.outer").suggestion == "xp.multiply(a[:, None], b)"
    assert one(lines, 5, "numpy.add.at").status == "non_standard"


def test_list_index_and_integer_array_assignment_are_outside_the_standard():
    _, lines = calls_at(NB_07)
    get = one(lines, 6, "ndarray.__getitem__")
    assert (get.kind, get.status) == ("index", "non_standard_usage")
    assert "list" in get.message
    put = one(lines, 7, "ndarray.__setitem__")
    assert put.status == "non_standard_usage" and "integer-array" in put.message


def test_argument_kinds_and_dtypes_bind_to_the_standard_signature():
    _, lines = calls_at(NB_07)
    assert one(lines, 8, "numpy.exp").status == "non_standard_usage"  # a list for x
    total = one(lines, 9, "numpy.sum")  # a sum of booleans
    assert total.status == "non_standard_usage" and "boolean" in total.message
    assert one(lines, 9, "ndarray.__lt__").status == "standard"
    assert one(lines, 10, "numpy.zeros").suggestion == "dtype=xp.int64"
    assert one(lines, 11, "numpy.arange").status == "non_standard_usage"


def test_the_same_site_judges_each_argument_kind():
    run, _ = calls_at(
        "for v in (np.ones(3), [1.0, 2.0], np.ones(2)):\n    y = np.exp(v)\n"
        "for m in (np.ones(3) > 0, np.ones(3)):\n    s = np.sum(m)\n"
    )
    statuses = sorted((c.line, c.status, c.count) for c in run.calls if c.name != "numpy.ones")
    assert (2, "non_standard_usage", 1) in statuses and (2, "standard", 2) in statuses
    assert (4, "non_standard_usage", 1) in statuses and (4, "standard", 1) in statuses


def test_operators_are_classified_by_their_operands():
    _, lines = calls_at(
        "m = np.ones(2)\n"
        "a = m + [1.0, 2.0]\n"
        "b = torch.ones(2) * np.ones(2)\n"
        "c = m @ m\n"
        "d = np.arange(3) * 1.5\n"
        "e = 2 - m\n"
        "m += 1\n"
    )
    plus = one(lines, 2, "ndarray.__add__")
    assert (plus.kind, plus.status) == ("operator", "non_standard_usage")
    mixed = one(lines, 3, "Tensor.__mul__")
    assert mixed.status == "non_standard_usage" and "two libraries" in mixed.message
    assert one(lines, 4, "ndarray.__matmul__").status == "standard"
    assert one(lines, 5, "ndarray.__mul__").status == "non_standard_usage"  # float * int array
    assert one(lines, 6, "ndarray.__rsub__").status == "standard"
    assert one(lines, 7, "ndarray.__iadd__").status == "standard"


def test_an_in_place_operation_that_would_change_the_dtype_is_flagged():
    _, lines = calls_at("x = np.ones(2, dtype=np.float32)\nx += np.ones(2)\n")
    iadd = one(lines, 2, "ndarray.__iadd__")
    assert iadd.status == "non_standard_usage" and "float32 to float64" in iadd.message


def test_masks_negative_steps_and_transposes():
    _, lines = calls_at(
        "x = np.arange(6)\n"
        "z = x[x > 2]\n"
        "y = x[..., ::-1]\n"
        "t = np.ones((2, 3, 4)).T\n"
        "u = torch.ones(2, 3).T\n"
        "k = torch.ones(2, 3)[0]\n"
    )
    mask = one(lines, 2, "ndarray.__getitem__")
    assert mask.status == "standard" and "depends on the data" in mask.message
    assert "PyTorch" in one(lines, 3, "ndarray.__getitem__").message
    assert one(lines, 4, "ndarray.T").status == "non_standard_usage"
    assert one(lines, 5, "Tensor.T").status == "standard"
    # one index for a 2-D tensor: the standard indexes every axis or ends with ...
    partial = one(lines, 6, "Tensor.__getitem__")
    assert (partial.status, partial.suggestion) == (
        "non_standard_usage",
        "torch.ones(2, 3)[0, ...]",
    )


def test_integer_array_indexing_depends_on_the_version():
    source = "x = np.arange(6)\ny = x[np.array([1, 2])]\n"
    new = run_recorded(source, {"np": np})
    old = run_recorded(source, {"np": np}, RecordSettings(version="2023.12"))
    assert next(c for c in new.calls if c.kind == "index").status == "standard"
    assert next(c for c in old.calls if c.kind == "index").status == "non_standard_usage"


def test_operators_on_python_values_are_not_recorded():
    run, _ = calls_at(
        "s = 0\nfor i in range(100):\n    s += i * 2 - 1\nt = [1] + [2]\nd = {}\nd['k'] = s\n"
    )
    assert run.calls == []


def test_attribution_by_defining_module():
    scipy_special = pytest.importorskip("scipy.special")
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    _, lines = calls_at(
        "g = special.gamma(np.ones(3))\n"
        "l = special.logsumexp(np.ones(3))\n"
        "r = jax.random.normal(jax.random.key(0), (2,))\n"
        "q = np.emath.sqrt(np.ones(2))\n"
        "p = special.gamma(2.0)\n",
        special=scipy_special,
        jax=jax,
        jnp=jnp,
    )
    gamma = one(lines, 1, "scipy.special.gamma")
    assert (gamma.library, gamma.status) == ("scipy", "outside_namespace")
    assert not gamma.flagged
    assert one(lines, 2, "scipy.special.logsumexp").status == "outside_namespace"
    assert one(lines, 3, "jax.random.normal").status == "non_standard"
    assert one(lines, 4, "numpy.emath.sqrt").status == "non_standard"
    assert 5 not in lines  # another library's function given no array: not an array call


def test_jax_transformations_are_recorded_and_trace():
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    _, lines = calls_at(
        "f = jax.grad(lambda x: jnp.sum(x ** 2))\n"
        "g = jax.jit(f)\n"
        "y = g(jnp.ones(3))\n"
        "@jax.jit\n"
        "def h(x):\n"
        "    return jnp.sin(x)\n"
        "z = h(jnp.ones(2))\n",
        jax=jax,
        jnp=jnp,
    )
    grad = one(lines, 1, "jax.grad")
    assert (grad.kind, grad.status) == ("transformation", "outside_namespace")
    assert one(lines, 1, "jax.numpy.sum").device_out == "traced"
    assert one(lines, 2, "jax.jit").kind == "transformation"
    assert one(lines, 4, "jax.jit").kind == "transformation"  # a decorator applies it too
    assert one(lines, 6, "jax.numpy.sin").device_out == "traced"


def test_names_the_cell_binds_to_python_values_skip_the_hooks_but_nothing_is_missed():
    from tests.record.rewritten import rewritten_text

    source = (
        "y = x[::-1]\n"  # x is still the earlier cell's array here
        "x = []\n"
        "seen = {}\n"
        "for i in range(3):\n"
        "    x.append(i)\n"
        "    seen[i] = seen.get(i - 1, 0)\n"
        "    z = a[i] * i\n"
        "def f():\n"
        "    return seen[0]\n"
    )
    text = rewritten_text(source, 0, range_is_builtin=True)
    assert "x.append(i)\n" in text and "seen[i] = seen.get(" in text  # left as written
    assert "__porter_getitem__((0, 1," in text  # before the cell's own binding of x
    run, lines = calls_at(source, x=np.arange(3), a=np.ones(3))
    assert one(lines, 1, "ndarray.__getitem__").count == 1
    assert one(lines, 7, "ndarray.__getitem__").count == 3
    assert one(lines, 7, "ndarray.__mul__").count == 3
    rebound = run_recorded("x = []\nfor i in range(2):\n    x = x + [i]\n", {})
    assert rebound.exception is None  # x = x + [i] is not a literal: x is checked, plainly


def test_in_place_item_updates_record_their_read_operator_and_write():
    run, lines = calls_at(
        "x = np.zeros(4)\nx[[0, 0]] += 1\nfor i in range(3):\n    x[i] += i\nd = {'a': 1}\nd['a'] += 1\nx\n"
    )
    plain = np.zeros(4)
    plain[[0, 0]] += 1
    for i in range(3):
        plain[i] += i
    np.testing.assert_array_equal(run.value, plain)  # the same semantics as Python's
    names = [(c.line, c.name, c.status) for c in run.calls]
    assert (2, "ndarray.__setitem__", "non_standard_usage") in names
    assert (2, "ndarray.__iadd__", "standard") in names
    assert one(lines, 4, "ndarray.__getitem__").count == 3
    assert 6 not in lines  # a dict's item: plain Python


def test_torchs_device_agnostic_runtime_api_is_not_judged_by_the_standard():
    _, lines = calls_at("n = torch.accelerator.device_count()\nm = torch.cuda.device_count()\n")
    assert one(lines, 1, "torch.accelerator.device_count").status == "outside_namespace"
    assert one(lines, 2, "torch.cuda.device_count").status == "device_specific"


def test_an_integer_array_index_into_a_first_axis_is_suggested_as_take_as_written():
    """``C[X]`` (makemore's embedding): the suggestion is the standard's take over the
    person's expressions, by the index's rank; ``len(x)`` alike."""
    _, lines = calls_at(
        "emb = C[X]\nrows = C[ix % 3]\nn = len(X)\n",
        C=torch.ones(27, 2),
        X=torch.zeros(5, 3, dtype=torch.int64),
        ix=torch.arange(4),
    )
    emb = one(lines, 1, "Tensor.__getitem__")
    assert (emb.status, emb.standard_name) == ("non_standard_usage", "take")
    assert emb.suggestion == (
        "xp.reshape(xp.take(C, xp.reshape(X, (-1,)), axis=0), (*X.shape, *C.shape[1:]))"
    )
    assert one(lines, 2, "Tensor.__getitem__").suggestion == "xp.take(C, ix % 3, axis=0)"
    assert one(lines, 3, "len").suggestion == "X.shape[0]"

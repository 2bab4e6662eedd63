"""Every rewrite in the replacement table, verified: the entry's example in its original
spelling on its library against the rewrite on every installed backend, on the example's
inputs and on variations of them. The test is generic over the table: an entry whose
rewrite changes meaning fails here, and no rewrite ships without an example."""

from __future__ import annotations

import importlib
import math
import warnings
from dataclasses import replace

import numpy as np
import pytest

from porter_ext.backends import all_backends, backend_for, get_backend
from porter_ext.compare.kinds import Partition, partition_order
from porter_ext.spec.partitions import partitioning
from porter_ext.spec.replacements import all_entries, choose, find
from porter_ext.spec.rewrites import (
    EXAMPLE_INPUTS,
    NoRewrite,
    SourceCall,
    call_from_source,
    render_rewrite,
    writes_in_place,
)

ENTRIES = all_entries()
#: rewrites within the library's own module (``{lib}``: ``torch.accelerator``, ``torch.zeros((2, 3))``):
#: verified on that library alone (`test_runtime_rewrite_agrees_with_the_original`), the
#: others on every backend
RUNTIME = [e for e in ENTRIES if e.rewrite is not None and "{lib}" in e.rewrite]
REWRITES = [e for e in ENTRIES if e.rewrite is not None and e not in RUNTIME]
#: entries whose tuple result is rewritten field by field (``x.max(dim=1).values``)
PARTS = [e for e in ENTRIES if e.parts]
#: runtime rewrites with a form through xp, for cells with an array at hand
PORTABLE = [e for e in ENTRIES if e.portable is not None]


def _native(library: str, name: str, kind: str = "function"):
    """The library module ``lib.`` stands for: the first of its namespaces (as the recorder
    indexes them) that has ``name`` (``jax.numpy`` for ``exp``, ``jax`` for ``nn.relu``);
    for a method, the library's first namespace where none has the name (``x.type(lib.float32)``)."""
    first = None
    for ns in get_backend(library).namespaces:
        if ns.prefix or ns.module.startswith("array_api_compat"):
            continue
        try:
            module = importlib.import_module(ns.module)
        except ImportError:
            return None
        first = first or module
        obj = module
        for part in name.split("."):
            obj = getattr(obj, part, None)
        if obj is not None:
            return module
    return first if kind != "function" else None


_VARIATIONS = ("as written", "negated", "float32")


def _id(entry) -> str:
    return f"{entry.library}:{entry.kind}:{entry.name}:{entry.when or '-'}"


def _available() -> list:
    return [b for b in all_backends() if b.available()[0] and b.name != "dask"]


def _inputs(xp, variation: str) -> dict:
    values = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # jax without x64 narrows float64, and says so
        for name, (dtype, data) in EXAMPLE_INPUTS.items():
            if variation == "float32" and dtype == "float64":
                dtype = "float32"
            array = xp.asarray(data, dtype=getattr(xp, dtype))
            if variation == "negated" and dtype.startswith("float"):
                array = -array
            values[name] = array
    return values


def _host(value):
    if isinstance(value, list):  # a split's parts come in a list
        return [_host(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_host(v) for v in value)
    if isinstance(value, np.generic):  # NumPy's 0-D results (np.matmul of two vectors)
        return np.asarray(value)
    if isinstance(value, bool | int | float | complex):
        return value
    backend = backend_for(value)
    assert backend is not None, f"not an array: {type(value).__name__}"
    return np.asarray(backend.to_host(value))


def _kind(a: np.ndarray) -> str:
    return {"u": "i"}.get(a.dtype.kind, a.dtype.kind)


def _agree(original, rewritten, what: str) -> None:
    if isinstance(original, tuple | list):
        assert type(rewritten) is type(original), f"{what}: {type(rewritten).__name__}"
        assert len(original) == len(rewritten), f"{what}: {len(rewritten)} parts"
        for a, b in zip(original, rewritten, strict=True):
            _agree(a, b, what)
        return
    if isinstance(original, bool | int | float | complex):
        assert type(original) is type(rewritten), f"{what}: {original!r} vs {rewritten!r}"
        assert np.isclose(original, rewritten, rtol=1e-5), f"{what}: {original} vs {rewritten}"
        return
    assert isinstance(rewritten, np.ndarray), f"{what}: {type(rewritten).__name__}"
    assert original.shape == rewritten.shape, f"{what}: shape {original.shape} vs {rewritten.shape}"
    assert _kind(original) == _kind(rewritten), (
        f"{what}: dtype {original.dtype} vs {rewritten.dtype}"
    )
    np.testing.assert_allclose(
        rewritten, original, rtol=1e-5, atol=1e-6, equal_nan=True, err_msg=what
    )


def _run(source: str, namespace: dict, call: SourceCall):
    """The value of an expression, or the rebound array after an assigning statement."""
    if call.statement:
        exec(source, namespace)
        return namespace[call.receiver or call.args[0]]
    return eval(source, namespace)


def _bound(call: SourceCall, namespace: dict) -> tuple:
    """The example's receiver, args and kwargs as values, for the table's own choice."""
    values = [eval(a, namespace) for a in call.args]
    kwargs = {k: eval(v, namespace) for k, v in call.kwargs.items()}
    receiver = eval(call.receiver, namespace) if call.receiver is not None else None
    return tuple(values), kwargs, receiver


def _statement(entry) -> bool:
    return entry.rewrite.lstrip().startswith(("{x} =", "{x}[...] ="))


def _backends_for(entry) -> list:
    """The installed backends a rewrite runs on: a write into the array (an in-place
    method's rewrite) needs arrays that can be written, as the method does."""
    return [b for b in _available() if b.mutable or not writes_in_place(entry.rewrite)]


def test_every_entry_has_a_rewrite_or_says_plainly_it_has_none():
    for entry in ENTRIES:
        assert (entry.rewrite is None) == bool(entry.no_rewrite), _id(entry)
        assert entry.rewrite is None or entry.example, _id(entry)


def test_examples_call_the_entry_they_belong_to():
    for entry in REWRITES + RUNTIME + PARTS:
        callee, call = call_from_source(
            entry.example, statement=bool(entry.rewrite) and _statement(entry)
        )
        assert call.kind == entry.kind, _id(entry)
        expected = entry.name if entry.kind != "function" else f"lib.{entry.name}"
        assert callee == expected, _id(entry)
        if entry.rewrite is not None:
            render_rewrite(entry, call)  # renders, dropping nothing
        for index, (name, _) in enumerate(entry.parts):  # a field by its name or its index
            assert render_rewrite(entry, call, name) == render_rewrite(entry, call, index)


def _original_runs(entry, call, variation):
    """(library, namespace, value) of the example on each installed library whose table
    chooses ``entry`` for it; skips the test where none is installed."""
    libraries = [entry.library] if entry.library != "*" else ["numpy", "torch", "jax"]
    runs = []
    for library in libraries:
        backend = get_backend(library)
        if not backend.available()[0]:
            continue
        native = _native(library, entry.name, entry.kind)
        if native is None:
            continue
        namespace = {**_inputs(backend.namespace(), variation), "lib": native}
        args, kwargs, receiver = _bound(call, namespace)
        if choose(find(library, entry.kind, entry.name), args, kwargs, receiver) is not entry:
            continue  # the table gives this library's spelling another entry
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # log of a negated input, jax narrowing
                runs.append((library, namespace, _run(entry.example, namespace, call)))
        except (TypeError, AttributeError, RuntimeError) as error:
            # a spelling of "*" entries that this library lacks (numpy arrays have no .exp)
            assert entry.library == "*", f"{_id(entry)} does not run on {library}: {error}"
    if not runs:
        assert entry.library != "*", (
            f"no installed library chooses {_id(entry)} for {entry.example}"
        )
        pytest.skip(f"{entry.library} is not installed: {entry.example} cannot run")
    return runs


def _rewritten_runs(rewritten: str, call: SourceCall, variation: str, backends=None):
    """(backend, namespace, value) of the rewrite on each installed backend."""
    for backend in backends or _available():
        xp = backend.namespace()
        extra = pytest.importorskip("array_api_extra") if "xpx." in rewritten else None
        namespace = {**_inputs(xp, variation), "xp": xp, "xpx": extra, "np": np, "math": math}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield backend, namespace, _run(rewritten, namespace, call)


def _agree_as_partition(entry, call: SourceCall, namespace: dict):
    """How a partition's results are judged (the compare stage's `partition_order`): the
    k-th values in place and each side's values, in any order."""
    kth = int(eval(call.args[1], namespace))
    axis = eval(call.kwargs.get("axis", "-1"), namespace)
    spelling = partitioning(entry.name)
    data = _host(namespace[call.args[0]]) if spelling.indices else None

    def agree(original, rewritten, what: str) -> None:
        assert original.shape == rewritten.shape, f"{what}: shape"
        assert _kind(original) == _kind(rewritten), f"{what}: dtype {rewritten.dtype}"

        def judge(expected, actual, _kind_name):
            return np.allclose(actual, expected, rtol=1e-5, atol=1e-6, equal_nan=True)

        made = Partition((kth,), axis, spelling.indices, data)
        verdict = partition_order(original, rewritten, made, judge)
        assert verdict is not None and verdict[0], f"{what}: {verdict}"

    return agree


@pytest.mark.parametrize("variation", _VARIATIONS)
@pytest.mark.parametrize("entry", REWRITES, ids=_id)
def test_rewrite_agrees_with_the_original(entry, variation):
    _, call = call_from_source(entry.example, statement=_statement(entry))
    rewritten = render_rewrite(entry, call)
    runs = _original_runs(entry, call, variation)
    originals = {lib: _host(value) for lib, _, value in runs}
    agree = _agree
    if partitioning(entry.name) is not None:
        agree = _agree_as_partition(entry, call, runs[0][1])
    for backend, _, value in _rewritten_runs(rewritten, call, variation, _backends_for(entry)):
        result = _host(value)
        for library, original in originals.items():
            agree(
                original, result, f"{entry.example} on {library} vs {rewritten} on {backend.name}"
            )


@pytest.mark.parametrize("entry", [e for e in REWRITES if _statement(e)], ids=_id)
def test_a_rewrite_of_an_in_place_method_writes_into_the_array_its_views_share(entry):
    """``r = t[0]; r.zero_()`` zeroes a row of ``t``; a rewrite that rebinds ``r``
    (``r = xp.zeros_like(r)``) leaves ``t`` as it was, and replays, which compare values
    only, cannot see it. Where the original changes the array it is called on, the
    rewrite writes into that very array; where arrays cannot be written (JAX) it fails
    rather than pretend."""
    _, call = call_from_source(entry.example, statement=True)
    rewritten = render_rewrite(entry, call)
    name = call.receiver if call.kind != "function" else call.args[0]
    originals = []
    for library in [entry.library] if entry.library != "*" else ["numpy", "torch"]:
        backend = get_backend(library)
        native = _native(library, entry.name, entry.kind)
        if not backend.available()[0] or native is None:
            continue
        namespace = {**_inputs(backend.namespace(), "as written"), "lib": native}
        held = namespace[name]
        before = np.array(_host(held), copy=True)
        exec(entry.example, namespace)
        if not np.array_equal(_host(held), before):  # the method changed it in place
            originals.append((library, _host(held)))
    if not originals:
        pytest.skip(f"{entry.example} changes no array in place here")
    for backend in _available():
        xp = backend.namespace()
        namespace = {**_inputs(xp, "as written"), "xp": xp, "np": np}
        held = namespace[name]
        if not backend.mutable:
            with pytest.raises(TypeError):
                exec(rewritten, namespace)
            continue
        exec(rewritten, namespace)
        assert namespace[name] is held, f"{rewritten} rebinds {name} on {backend.name}"
        for library, value in originals:
            _agree(
                value, _host(held), f"{entry.example} on {library} vs {rewritten} on {backend.name}"
            )


@pytest.mark.parametrize("variation", _VARIATIONS)
@pytest.mark.parametrize("entry", PORTABLE, ids=_id)
def test_portable_form_of_a_library_rewrite_agrees_on_every_backend(entry, variation):
    """``torch.tensor(data)`` → ``xp.asarray(data, copy=True)`` where an array gives xp."""
    _, call = call_from_source(entry.example)
    rewritten = render_rewrite(replace(entry, rewrite=entry.portable), call)
    originals = {lib: _host(value) for lib, _, value in _original_runs(entry, call, variation)}
    for backend, _, value in _rewritten_runs(rewritten, call, variation):
        for library, original in originals.items():
            what = f"{entry.example} on {library} vs {rewritten} on {backend.name}"
            _agree(original, _host(value), what)


@pytest.mark.parametrize("variation", _VARIATIONS)
@pytest.mark.parametrize("entry", PARTS, ids=_id)
def test_each_field_of_a_tuple_result_agrees_with_the_original(entry, variation):
    """``x.max(dim=1).values`` and ``x.max(dim=1)[0]`` against the field's rewrite."""
    _, call = call_from_source(entry.example)
    runs = _original_runs(entry, call, variation)
    for index, (name, _) in enumerate(entry.parts):
        rewritten = render_rewrite(entry, call, name)
        originals = {}
        for library, _, value in runs:
            originals[library] = _host(getattr(value, name))
            _agree(originals[library], _host(value[index]), f"{entry.example}[{index}]")
        for backend, _, value in _rewritten_runs(rewritten, call, variation):
            for library, original in originals.items():
                what = f"{entry.example}.{name} on {library} vs {rewritten} on {backend.name}"
                _agree(original, _host(value), what)


def _reached(value, inputs: dict) -> frozenset[str]:
    """The inputs a write through ``value`` (every element set to 7) changes: the inputs
    ``value`` is a view of. A value that cannot be written (a scalar, a JAX array) reaches none."""
    values = value if isinstance(value, tuple | list) else (value,)
    arrays = {n: v for n, v in inputs.items() if backend_for(v) is not None}
    before = {n: np.array(_host(v), copy=True) for n, v in arrays.items()}
    for item in values:
        if backend_for(item) is None:
            continue
        try:
            item[...] = 7
        except Exception:  # noqa: BLE001 (read-only, immutable: nothing is written)
            continue
    return frozenset(
        n for n, v in arrays.items() if not np.array_equal(_host(v), before[n], equal_nan=True)
    )


@pytest.mark.parametrize("variation", _VARIATIONS)
@pytest.mark.parametrize("entry", [e for e in REWRITES if not _statement(e)], ids=_id)
def test_a_write_through_the_rewrite_reaches_what_the_original_reaches(entry, variation):
    """Copy or view, as the original: a view stays a view (a write through it changes the
    array it was taken from), a copy stays a copy (``x.flatten()`` then ``f[0] = 99`` leaves
    ``x`` alone). Replays compare values, not aliasing, so the table itself must keep it."""
    _, call = call_from_source(entry.example)
    rewritten = render_rewrite(entry, call)
    for library, namespace, value in _original_runs(entry, call, variation):
        expected = _reached(value, {n: namespace[n] for n in EXAMPLE_INPUTS})
        (run,) = _rewritten_runs(rewritten, call, variation, [get_backend(library)])
        _, ported, result = run
        got = _reached(result, {n: ported[n] for n in EXAMPLE_INPUTS})
        assert got == expected, (
            f"{entry.example} on {library}: a write through the result reaches "
            f"{sorted(expected)}; through {rewritten}, {sorted(got)}"
        )


def _outcome(source: str, namespace: dict, call: SourceCall):
    """("value", v) or ("raises", exception type name) of running ``source``."""
    try:
        value = _run(source, namespace, call)
    except Exception as error:  # torch.cuda.* without CUDA: AssertionError, RuntimeError
        return "raises", type(error).__name__
    if value is not None and backend_for(value) is not None:
        return "value", (str(value.device), _host(value))
    return "value", value


@pytest.mark.parametrize("variation", _VARIATIONS)
@pytest.mark.parametrize("entry", RUNTIME, ids=_id)
def test_runtime_rewrite_agrees_with_the_original(entry, variation):
    """``torch.cuda.X()`` against ``torch.accelerator``'s form, on the library itself: the same
    value (and device) where both run. Where the original cannot run (no accelerator here:
    ``torch.cuda.current_device()`` raises), the rewrite must not pretend otherwise on the
    same machine; agreement itself is checked on a machine with a GPU."""
    backend = get_backend(entry.library)
    if not backend.available()[0]:
        pytest.skip(f"{entry.library} is not installed")
    _, call = call_from_source(entry.example, statement=_statement(entry))
    rewritten = render_rewrite(entry, call)
    native = _native(
        entry.library, entry.name.partition(".")[0] if entry.kind == "function" else entry.name
    )
    namespace = {**_inputs(backend.namespace(), variation), "lib": native}
    original = _outcome(entry.example, namespace, call)
    result = _outcome(rewritten, namespace, call)
    if original[0] == "raises":
        accelerated = native.accelerator.is_available()
        assert not accelerated, f"{entry.example} raises {original[1]} with an accelerator"
        pytest.skip(f"needs a GPU: {entry.example} raises {original[1]} without an accelerator")
    assert result[0] == "value", f"{rewritten} raises {result[1]} where {entry.example} runs"
    if isinstance(original[1], tuple):
        assert original[1][0] == result[1][0], f"{entry.example} vs {rewritten}: device"
        _agree(original[1][1], result[1][1], f"{entry.example} vs {rewritten}")
    else:
        assert original[1] == result[1] and type(original[1]) is type(result[1]), (
            f"{entry.example} -> {original[1]!r} vs {rewritten} -> {result[1]!r}"
        )


def test_rewrites_keep_meaning_or_refuse():
    """The nb_08 suggestions that changed meaning, as rewrites: kept, or refused with a reason."""
    by = {(e.library, e.kind, e.name, e.when): e for e in ENTRIES}

    def rewrite(library, kind, name, source, statement=False):
        _, call = call_from_source(source, statement=statement)
        args, kwargs, receiver = _bound(call, {**_inputs(np, "as written"), "lib": np})
        entry = choose(find(library, kind, name), args, kwargs, receiver)
        return render_rewrite(entry, call)

    assert rewrite("numpy", "method", "sort", "x.sort()", statement=True) == "x[...] = xp.sort(x)"
    with pytest.raises(NoRewrite, match="statement of its own"):
        rewrite("numpy", "method", "sort", "x.sort()")
    assert rewrite("numpy", "method", "round", "x.round(1)") == "xp.round(x * 10.0**1) / 10.0**1"
    assert rewrite("numpy", "method", "round", "(x + y).round(2)") == (
        "xp.round((x + y) * 10.0**2) / 10.0**2"
    )
    with pytest.raises(NoRewrite, match="no unique along an axis"):
        rewrite("numpy", "function", "unique", "lib.unique(x, axis=0)")
    with pytest.raises(NoRewrite, match="rank"):
        rewrite("numpy", "function", "diag", "lib.diag(v, k=-1)")
    with pytest.raises(NoRewrite, match="drop dtype=float"):
        rewrite("numpy", "method", "sum", "x.sum(1, dtype=float)")
    assert rewrite("numpy", "method", "item", "n.item()") == "int(n)"
    assert by[("torch", "method", "max", "dim_keyword")].rewrite is None
    assert "argmax" in by[("torch", "method", "max", "dim_keyword")].suggestion
    assert (
        "uniform(low, high, size)" in by[("numpy", "function", "random.uniform", None)].suggestion
    )
    at_add = choose(find("jax", "function", "add"), (7.0,), {}, None)
    assert at_add is not None and at_add.suggestion == "xpx.at(x, idx).add(value)"
    assert choose(find("jax", "function", "add"), (1.0, 2.0), {}, None) is None


#: the rewrites into the standard's set functions (unique_values, unique_counts, …)
SET_REWRITES = [e for e in REWRITES if "unique_" in (e.rewrite or "")]
#: NaNs among the values, where set semantics part: NumPy joins them, the standard does not
_WITH_NANS = [3.0, float("nan"), 1.0, float("nan"), 3.0]


@pytest.mark.parametrize("entry", SET_REWRITES, ids=_id)
def test_a_set_rewrite_on_nans_agrees_or_the_table_refuses_it(entry):
    """NaN semantics are part of a set rewrite's entry (issue 28 item 3, attacks/45 and
    60): on an input with NaNs, where the table chooses this entry its rewrite gives what
    the library gives (torch keeps NaNs apart, as the standard does); where the library
    joins NaNs (NumPy, JAX, CuPy) the table chooses an entry that refuses, with the reason."""
    backend = get_backend(entry.library)
    native = _native(entry.library, entry.name) if backend.available()[0] else None
    if native is None:
        pytest.skip(f"{entry.library} is not installed")
    _, call = call_from_source(entry.example)
    xp = backend.namespace()
    namespace = {call.args[0]: xp.asarray(_WITH_NANS, dtype=xp.float64), "lib": native}
    args, kwargs, receiver = _bound(call, namespace)
    chosen = choose(find(entry.library, entry.kind, entry.name), args, kwargs, receiver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        original = _host(_run(entry.example, namespace, call))
    if chosen is not entry:
        assert chosen is not None and chosen.rewrite is None, _id(entry)
        assert "NaN" in chosen.no_rewrite, chosen.no_rewrite
        with pytest.raises(NoRewrite, match="NaN"):
            render_rewrite(chosen, call)
        return
    assert entry.library not in ("numpy", "jax", "cupy"), "they join NaNs: no rewrite for them"
    rewritten = render_rewrite(entry, call)
    result = _host(_run(rewritten, {**namespace, "xp": xp}, call))
    _agree(original, result, f"{entry.example} vs {rewritten} on {entry.library}, with NaNs")

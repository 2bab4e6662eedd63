"""The table of non-standard spellings: every name real, every condition right on real arrays."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
from collections import Counter

import array_api_strict
import numpy as np
import pytest

from porter_ext.spec.replacements import (
    CONDITIONS,
    KINDS,
    LIBRARIES,
    PLACEHOLDERS,
    STATUSES,
    Replacement,
    all_entries,
    choose,
    find,
    render_suggestion,
)

torch = pytest.importorskip("torch")

ENTRIES = all_entries()


def _resolve(module: object, dotted: str) -> object:
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _library_namespaces(library: str) -> list[object]:
    if library == "numpy":
        return [np]
    if library == "torch":
        return [torch]
    if library == "jax":
        jax = pytest.importorskip("jax")
        return [importlib.import_module("jax.numpy"), jax]
    pytest.skip(f"{library} is not installed here")


def _sample_arrays() -> dict[str, object]:
    arrays: dict[str, object] = {
        "numpy": np.ones((2, 3)),
        "torch": torch.ones((2, 3)),
    }
    try:
        import jax.numpy as jnp

        arrays["jax"] = jnp.ones((2, 3))
    except ImportError:
        pass
    return arrays


def _has(obj: object, name: str) -> bool:
    try:  # torch raises RuntimeError for .imag on a real tensor
        getattr(obj, name)
    except Exception:
        return False
    return True


def _ids(entries: list[Replacement]) -> list[str]:
    return [f"{e.library}:{e.kind}:{e.name}:{e.when}" for e in entries]


# --- the table's shape --------------------------------------------------------------------


def test_table_is_large_and_covers_every_library():
    assert len(ENTRIES) >= 80
    libraries = Counter(e.library for e in ENTRIES)
    for library in ("torch", "numpy", "jax", "cupy", "*"):
        assert libraries[library] >= 10, library


def test_entries_are_well_formed():
    for e in ENTRIES:
        assert e.library in LIBRARIES, e
        assert e.kind in KINDS, e
        assert e.status in STATUSES, e
        assert e.when is None or e.when in CONDITIONS, e
        assert e.suggestion.strip(), e
        assert e.note, f"{e} says nothing about why"
        unknown = set(re.findall(r"\{(\w+)\}", e.suggestion)) - PLACEHOLDERS
        assert not unknown, (e, unknown)


def test_no_entry_is_duplicated_or_unreachable():
    seen = Counter((e.library, e.kind, e.name, e.when) for e in ENTRIES)
    assert [key for key, n in seen.items() if n > 1] == []
    for library, kind, name, _ in seen:
        if library == "*":
            continue
        own = [e for e in find(library, kind, name) if e.library == library]
        unconditional = [i for i, e in enumerate(own) if e.when is None]
        # an entry after an unconditional one of the same callee could never be chosen
        assert not unconditional or unconditional[0] == len(own) - 1, own


# --- every name is real -------------------------------------------------------------------

_FUNCTIONS = [e for e in ENTRIES if e.kind == "function" and e.library not in ("*", "cupy")]


@pytest.mark.parametrize("entry", _FUNCTIONS, ids=_ids(_FUNCTIONS))
def test_library_function_exists(entry: Replacement):
    for namespace in _library_namespaces(entry.library):
        try:
            _resolve(namespace, entry.name)
            return
        except AttributeError:
            continue
    pytest.fail(f"{entry.library} has no {entry.name}")


_MEMBERS = [e for e in ENTRIES if e.kind != "function" and e.library not in ("cupy",)]


@pytest.mark.parametrize("entry", _MEMBERS, ids=_ids(_MEMBERS))
def test_array_method_or_attribute_exists(entry: Replacement):
    arrays = _sample_arrays()
    if entry.library == "*":
        owners = [lib for lib, x in arrays.items() if _has(x, entry.name)]
        assert owners, f"no array library has .{entry.name}"
        return
    if entry.library not in arrays:
        pytest.skip(f"{entry.library} is not installed here")
    member = getattr(arrays[entry.library], entry.name)
    assert callable(member) == (entry.kind == "method"), entry


_STANDARD = sorted({e.standard_name for e in ENTRIES if e.standard_name})


@pytest.mark.parametrize("name", _STANDARD)
def test_standard_name_is_in_the_standard(name: str):
    array = array_api_strict.asarray([[1.0, 2.0], [3.0, 4.0]])
    if _has(array, name):  # shape, ndim, size, device, to_device, mT, …
        return
    _resolve(array_api_strict, name)


def test_suggested_torch_runtime_calls_exist():
    named = set()
    for e in ENTRIES:
        named |= set(re.findall(r"torch\.[\w.]+(?=\()", e.suggestion))
    assert "torch.accelerator.synchronize" in named
    for dotted in named:
        _resolve(torch, dotted.removeprefix("torch."))


def test_suggested_array_api_extra_functions_exist():
    xpx = pytest.importorskip("array_api_extra")
    named = {n for e in ENTRIES for n in re.findall(r"\bxpx\.(\w+)", e.suggestion)}
    assert {"isclose", "kron", "cov", "pad"} <= named
    for name in named:
        assert hasattr(xpx, name), name


def test_suggested_standard_functions_exist():
    named = {n for e in ENTRIES for n in re.findall(r"\bxp\.((?:linalg\.)?\w+)\(", e.suggestion)}
    for name in named:
        _resolve(array_api_strict, name)


# --- find ---------------------------------------------------------------------------------


def test_find_puts_library_entries_before_any_library_ones():
    entries = find("torch", "function", "max")
    libraries = [e.library for e in entries]
    assert libraries[0] == "torch"
    assert "*" in libraries
    assert libraries == sorted(libraries, key=lambda lib: lib == "*")


def test_find_returns_any_library_entries_for_every_library():
    assert [e.library for e in find("numpy", "method", "sum")] == ["*"]
    assert find("jax", "method", "sum") == find("cupy", "method", "sum")
    assert find("*", "method", "sum") == find("numpy", "method", "sum")


def test_find_unknown_callee_is_empty():
    assert find("torch", "function", "no_such_function") == ()
    assert find("numpy", "attribute", "sum") == ()


# --- choose on real arrays ----------------------------------------------------------------


def _choose(library, kind, name, *args, self_obj=None, **kwargs) -> Replacement | None:
    return choose(find(library, kind, name), args, kwargs, self_obj)


def test_two_array_max_and_min_are_maximum_and_minimum():
    a, b = torch.ones(3), torch.zeros(3)
    entry = _choose("torch", "function", "max", a, b)
    assert (entry.status, entry.standard_name) == ("non_standard_usage", "maximum")
    assert _choose("torch", "function", "min", a, b).standard_name == "minimum"
    assert _choose("torch", "function", "max", a, other=b).standard_name == "maximum"
    assert _choose("torch", "method", "max", b, self_obj=a).standard_name == "maximum"


def test_max_over_a_dim_returns_values_only():
    x = torch.ones((2, 3))
    for entry in (
        _choose("torch", "function", "max", x, 1),
        _choose("torch", "function", "max", x, dim=1),
        _choose("torch", "method", "max", 1, self_obj=x),
    ):
        assert entry.standard_name == "max"
        assert "argmax" in entry.note
    assert _choose("torch", "function", "max", x) is None  # the standard's full reduction


def test_positional_axis_and_dim_keyword():
    x = np.ones((2, 3))
    assert _choose("numpy", "function", "sum", x, 1).when == "positional_axis"
    assert _choose("numpy", "function", "sum", x, (0, 1)).when == "positional_axis"
    assert _choose("numpy", "function", "sum", x, axis=1) is None
    t = torch.ones((2, 3))
    assert _choose("torch", "function", "sum", t, dim=1).when == "dim_keyword"
    assert _choose("torch", "function", "mean", t, 0, keepdim=True).when == "positional_axis"
    assert _choose("torch", "function", "cat", [t, t], 1).standard_name == "concat"


def test_reduction_methods_are_non_standard_for_every_library():
    for library, x in _sample_arrays().items():
        for name in ("sum", "mean", "max", "min", "prod", "std", "var", "any", "all"):
            entry = _choose(library, "method", name, 1, self_obj=x)
            assert entry.status == "non_standard", (library, name)
            assert entry.standard_name == name
        for name in ("argmax", "argmin", "cumsum"):
            assert _choose(library, "method", name, self_obj=x).status == "non_standard"


def test_transpose_attribute_only_on_arrays_that_are_not_2d():
    assert _choose("numpy", "attribute", "T", self_obj=np.ones((2, 3))) is None
    entry = _choose("numpy", "attribute", "T", self_obj=np.ones((2, 3, 4)))
    assert (entry.status, entry.standard_name) == ("non_standard_usage", "permute_dims")
    assert _choose("torch", "attribute", "T", self_obj=torch.ones(3)).when == "ndim_not_2"
    assert _choose("torch", "attribute", "T", self_obj=None) is None  # nothing to look at


def test_to_device_versus_dtype_cast():
    x = torch.ones(3)
    for args, kwargs in [
        (("cuda",), {}),
        (("cuda:1",), {}),
        ((torch.device("cuda"),), {}),
        ((), {"device": "cuda"}),
    ]:
        entry = choose(find("torch", "method", "to"), args, kwargs, x)
        assert (entry.status, entry.when) == ("device_specific", "cuda_arg"), args
    for args, kwargs in [
        (("cpu",), {}),
        (("meta",), {}),
        ((torch.device("cpu"),), {}),
        ((), {"device": torch.device("meta")}),
        ((0,), {}),
    ]:
        entry = choose(find("torch", "method", "to"), args, kwargs, x)
        assert (entry.status, entry.when) == ("device_specific", "device_arg"), args
    cast = _choose("torch", "method", "to", torch.float32, self_obj=x)
    assert (cast.status, cast.standard_name, cast.when) == ("non_standard", "astype", "dtype_arg")
    assert _choose("torch", "method", "to", dtype=torch.float64, self_obj=x).when == "dtype_arg"
    assert _choose("torch", "method", "to", torch.ones(2), self_obj=x).when is None


def test_device_specific_runtime_and_placement():
    for name in (
        "cuda.synchronize",
        "cuda.is_available",
        "cuda.device_count",
        "cuda.current_device",
        "cuda.set_device",
        "cuda.current_stream",
        "cuda.set_stream",
        "cuda.Stream",
    ):
        entry = _choose("torch", "function", name)
        assert entry.status == "device_specific", name
        assert entry.suggestion.startswith(("torch.accelerator.", "torch.Stream")), name
    assert _choose("torch", "method", "cuda", self_obj=torch.ones(1)).status == "device_specific"
    assert _choose("torch", "method", "cpu", self_obj=torch.ones(1)).status == "device_specific"
    assert _choose("torch", "function", "device", "cuda").status == "device_specific"
    assert _choose("torch", "function", "device", "cpu") is None
    assert _choose("jax", "function", "device_put", np.ones(1)).status == "device_specific"


def test_host_syncs():
    x = torch.ones(1)
    for name in ("item", "tolist", "numpy"):
        assert _choose("torch", "method", name, self_obj=x).status == "host_sync", name
    assert _choose("numpy", "method", "item", self_obj=np.ones(1)).status == "host_sync"
    assert _choose("cupy", "function", "asnumpy", x).status == "host_sync"


def test_torch_corrects_std_and_var_by_default():
    x = torch.ones((2, 3))
    entry = _choose("torch", "function", "std", x)
    assert (entry.status, entry.when) == ("non_standard_usage", "default_correction")
    assert _choose("torch", "function", "var", x, correction=0) is None
    assert _choose("torch", "function", "std", x, unbiased=False).when == "unbiased_keyword"
    assert _choose("numpy", "function", "std", np.ones(3), ddof=1).when == "ddof_keyword"
    assert _choose("numpy", "function", "std", np.ones(3)) is None


def test_other_usage_conditions():
    t = torch.ones((2, 1))
    assert _choose("numpy", "function", "where", np.ones(3) > 0).standard_name == "nonzero"
    assert _choose("numpy", "function", "where", np.ones(3) > 0, 1.0, 0.0) is None
    assert _choose("torch", "function", "zeros", 2, 3).when == "varargs_shape"
    assert _choose("torch", "function", "zeros", (2, 3)) is None
    assert _choose("torch", "function", "squeeze", t).when == "no_axis"
    assert _choose("torch", "function", "squeeze", t, 1) is None
    assert _choose("numpy", "function", "round", np.ones(3), 2).when == "round_decimals"
    assert _choose("numpy", "function", "round", np.ones(3)) is None
    assert _choose("numpy", "function", "clip", np.ones(3), a_min=0).when == "a_min_keyword"
    assert _choose("numpy", "function", "clip", np.ones(3), 0, 1) is None
    assert _choose("torch", "function", "div", t, t, rounding_mode="floor").standard_name == (
        "floor_divide"
    )
    assert _choose("torch", "function", "div", t, t).standard_name == "divide"


def test_a_condition_that_raises_does_not_hold():
    entry = Replacement("*", "function", "f", "non_standard", None, "f()", when="ndim_not_2")
    assert choose([entry], (), {}, self_obj=object()) is None
    unknown = Replacement("*", "function", "f", "non_standard", None, "f()", when="no_such")
    assert choose([unknown], (), {}) is None


# --- render_suggestion --------------------------------------------------------------------


def _render(library, kind, name, *args, self_obj=None, **kwargs) -> str:
    entry = choose(find(library, kind, name), args, kwargs, self_obj)
    return render_suggestion(entry, args, kwargs, self_obj)


def test_render_reduction_axis():
    x = torch.ones((2, 3))
    assert _render("torch", "method", "sum", 1, self_obj=x) == "xp.sum(x, axis=1)"
    assert _render("torch", "method", "sum", self_obj=x) == "xp.sum(x)"
    assert (
        _render("torch", "method", "sum", dim=(0, 1), keepdim=True, self_obj=x)
        == "xp.sum(x, axis=(0, 1), keepdims=True)"
    )
    assert _render("numpy", "function", "mean", np.ones(3), 0) == "xp.mean(x, axis=0)"
    # torch.max(x, 1) returns (values, indices): both standard calls (issue 11, nb_08)
    assert _render("torch", "function", "max", x, 1) == "(xp.max(x, axis=1), xp.argmax(x, axis=1))"
    assert _render("numpy", "function", "sum", x, [0, 1]) == "xp.sum(x, axis=(0, 1))"
    # an axis that is not a simple literal shows as ...
    assert _render("torch", "method", "sum", dim=x, self_obj=x) == "xp.sum(x, axis=...)"


def test_render_fills_arguments():
    x = torch.ones((2, 3))
    assert _render("torch", "function", "cat", [x, x], dim=1) == "xp.concat(arrays, axis=1)"
    assert _render("numpy", "function", "concatenate", [x, x]) == "xp.concat(arrays)"
    # torch's casts return x itself when the dtype is x's already, as copy=False does
    assert _render("torch", "method", "to", torch.float64, self_obj=x) == (
        "xp.astype(x, xp.float64, copy=False)"
    )
    assert _render("numpy", "method", "astype", "float32", self_obj=np.ones(1)) == (
        "xp.astype(x, xp.float32)"
    )
    assert _render("numpy", "method", "astype", np.float32, self_obj=np.ones(1)) == (
        "xp.astype(x, xp.float32)"
    )
    assert _render("torch", "method", "view", 2, 3, self_obj=x) == "xp.reshape(x, (2, 3))"
    assert _render("torch", "method", "reshape", (3, 2), self_obj=x) == "xp.reshape(x, (3, 2))"
    assert _render("torch", "method", "permute", 1, 0, self_obj=x) == "xp.permute_dims(x, (1, 0))"
    assert _render("torch", "function", "clamp", x, max=1.5) == "xp.clip(x, max=1.5)"
    assert _render("torch", "function", "clamp", x, 0, 1) == "xp.clip(x, min=0, max=1)"
    assert _render("torch", "function", "unsqueeze", x, 0) == "xp.expand_dims(x, axis=0)"
    assert _render("torch", "function", "zeros", 2, 3) == "xp.zeros((2, 3))"
    assert _render("torch", "function", "cuda.set_device", 1) == (
        "torch.accelerator.set_device_index(1)"
    )
    assert _render("torch", "method", "float", self_obj=x) == (
        "xp.astype(x, xp.float32, copy=False)"
    )
    assert _render("torch", "method", "pow", 2, self_obj=x) == "xp.pow(x, 2)"
    assert _render("torch", "method", "add", x, self_obj=x) == "xp.add(x, ...)"


def test_render_round_decimals():
    assert _render("numpy", "function", "round", np.ones(3), 2) == (
        "xp.round(x * 10.0**2) / 10.0**2"
    )
    assert _render("torch", "function", "round", torch.ones(3), decimals=1) == (
        "xp.round(x * 10.0**1) / 10.0**1"
    )


def test_round_of_an_integer_array_to_decimals_has_no_rewrite():
    """``np.round(i, 2)`` of integers gives integers (``i`` itself); the scaled rewrite
    gave floats, a dtype change the table now refuses with its reason."""
    i = np.arange(5)
    for kind, args, self_obj in (("function", (i, 2), None), ("method", (2,), i)):
        entry = choose(find("numpy", kind, "round"), args, {}, self_obj)
        assert entry.rewrite is None and "keeps its integers" in entry.no_rewrite
    assert np.round(i, 2).dtype == i.dtype  # what the condition protects
    entry = choose(find("numpy", "function", "round"), (np.ones(3), 2), {}, None)
    assert entry.rewrite == "xp.round({x} * 10.0**{decimals}) / 10.0**{decimals}"


def test_render_std_correction():
    x = torch.ones((2, 3))
    assert _render("torch", "function", "std", x, dim=0) == "xp.std(x, axis=0, correction=1)"
    assert _render("torch", "function", "var", x, unbiased=False) == "xp.var(x, correction=0)"
    assert _render("numpy", "function", "std", np.ones(3), 0, ddof=1) == (
        "xp.std(x, axis=0, correction=1)"
    )


def test_render_transpose_of_a_3d_array():
    x = np.ones((2, 3, 4))
    assert _render("numpy", "attribute", "T", self_obj=x) == "xp.permute_dims(x, (2, 1, 0))"
    entry = find("numpy", "attribute", "T")[0]
    assert render_suggestion(entry, (), {}) == "xp.permute_dims(x, ...)"


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids(list(ENTRIES)))
def test_every_suggestion_renders_without_a_call(entry: Replacement):
    text = render_suggestion(entry, (), {})
    assert text
    assert not re.search(r"\{\w+\}", text), text


# --- the entries the porting issue asks for ------------------------------------------------

_REQUIRED = [
    # (library, kind, name, standard_name, status)
    ("torch", "function", "cat", "concat", "non_standard"),
    ("numpy", "function", "concatenate", "concat", "non_standard"),
    ("jax", "function", "concatenate", "concat", "non_standard"),
    ("cupy", "function", "concatenate", "concat", "non_standard"),
    ("numpy", "function", "transpose", "permute_dims", "non_standard"),
    ("torch", "function", "permute", "permute_dims", "non_standard"),
    ("torch", "method", "permute", "permute_dims", "non_standard"),
    ("numpy", "function", "power", "pow", "non_standard"),
    ("torch", "function", "clamp", "clip", "non_standard"),
    ("numpy", "function", "absolute", "abs", "non_standard"),
    ("numpy", "function", "amax", "max", "non_standard"),
    ("numpy", "function", "amin", "min", "non_standard"),
    ("numpy", "function", "arccos", "acos", "non_standard"),
    ("numpy", "function", "arcsin", "asin", "non_standard"),
    ("numpy", "function", "arctan", "atan", "non_standard"),
    ("numpy", "function", "arctan2", "atan2", "non_standard"),
    ("numpy", "function", "arccosh", "acosh", "non_standard"),
    ("numpy", "function", "invert", "bitwise_invert", "non_standard"),
    ("numpy", "function", "left_shift", "bitwise_left_shift", "non_standard"),
    ("numpy", "function", "dot", "matmul", "non_standard"),
    ("torch", "function", "mm", "matmul", "non_standard"),
    ("torch", "function", "bmm", "matmul", "non_standard"),
    ("numpy", "function", "linalg.norm", "linalg.vector_norm", "non_standard"),
    ("torch", "function", "norm", "linalg.vector_norm", "non_standard"),
    ("numpy", "function", "ravel", "reshape", "non_standard"),
    ("numpy", "function", "swapaxes", "moveaxis", "non_standard"),
    ("torch", "function", "transpose", "moveaxis", "non_standard"),
    ("numpy", "function", "hstack", "concat", "non_standard"),
    ("numpy", "function", "vstack", "concat", "non_standard"),
    ("numpy", "function", "einsum", None, "non_standard"),
    ("numpy", "function", "fill_diagonal", None, "non_standard"),
    ("torch", "function", "rand", None, "non_standard"),
    ("numpy", "function", "random.rand", None, "non_standard"),
    ("numpy", "function", "isclose", None, "non_standard"),
    ("numpy", "function", "allclose", None, "non_standard"),
    ("numpy", "function", "cov", None, "non_standard"),
    ("numpy", "function", "kron", None, "non_standard"),
    ("numpy", "function", "pad", None, "non_standard"),
    ("numpy", "function", "exp2", None, "non_standard"),
    ("torch", "function", "exp2", None, "non_standard"),
    ("jax", "function", "exp2", None, "non_standard"),
    ("numpy", "function", "array", "asarray", "non_standard"),
    ("torch", "function", "tensor", "asarray", "non_standard"),
    ("torch", "function", "from_numpy", "asarray", "non_standard"),
    ("torch", "function", "unsqueeze", "expand_dims", "non_standard"),
    ("torch", "method", "unsqueeze", "expand_dims", "non_standard"),
    ("torch", "method", "flatten", "reshape", "non_standard"),
    ("torch", "method", "view", "reshape", "non_standard"),
    ("numpy", "method", "reshape", "reshape", "non_standard"),
    ("numpy", "method", "astype", "astype", "non_standard"),
    ("torch", "method", "float", "astype", "non_standard"),
    ("torch", "method", "double", "astype", "non_standard"),
    ("torch", "method", "half", "astype", "non_standard"),
    ("torch", "method", "size", "shape", "non_standard"),
    ("torch", "method", "dim", "ndim", "non_standard"),
    ("torch", "method", "ndimension", "ndim", "non_standard"),
    ("torch", "method", "numel", "size", "non_standard"),
    ("torch", "method", "clone", "asarray", "non_standard"),
    ("numpy", "method", "copy", "asarray", "non_standard"),
    ("torch", "method", "contiguous", None, "non_standard"),
    ("torch", "method", "detach", None, "non_standard"),
    ("torch", "function", "no_grad", None, "non_standard"),
    ("jax", "function", "device_put", "asarray", "device_specific"),
    ("torch", "method", "cuda", "to_device", "device_specific"),
    ("torch", "method", "cpu", "to_device", "device_specific"),
    ("torch", "method", "item", "__float__", "host_sync"),
    ("torch", "method", "numpy", "from_dlpack", "host_sync"),
    ("torch", "method", "tolist", None, "host_sync"),
]
_ELEMENTWISE = ["tanh", "exp", "log", "sqrt", "abs", "sin", "cos", "round", "floor", "clip"]


@pytest.mark.parametrize("case", _REQUIRED, ids=[":".join(c[:3]) for c in _REQUIRED])
def test_required_entry(case):
    library, kind, name, standard_name, status = case
    entry = choose(find(library, kind, name), (), {}, torch.ones(2) if kind != "function" else None)
    assert entry is not None, case
    assert (entry.standard_name, entry.status) == (standard_name, status)


@pytest.mark.parametrize("name", _ELEMENTWISE)
def test_element_wise_methods(name: str):
    entry = _choose("torch", "method", name, self_obj=torch.ones(2))
    assert entry.status == "non_standard"
    assert entry.suggestion.startswith(f"xp.{entry.standard_name}(x")
    assert _choose("torch", "method", "clamp", self_obj=torch.ones(2)).standard_name == "clip"


def test_exp2_points_at_the_escape_hatch():
    """Of integers (a float result): the escape hatch; of floats, 2.0 ** x keeps the dtype."""
    entry = _choose("jax", "function", "exp2", np.ones(1, dtype=np.int64))
    assert entry.suggestion == "xp.backend.exp2(x)"
    assert "escape hatch" in entry.note
    assert _choose("jax", "function", "exp2", np.ones(1)).rewrite == "2.0 ** {x}"


# --- cheap to load ------------------------------------------------------------------------


def test_module_imports_no_array_library(tmp_path):
    """The table and its index load without an array library (how fast is for
    benchmarks: tests assert no wall times)."""
    code = textwrap.dedent(
        """
        import sys
        import porter_ext.spec
        heavy = ("numpy", "torch", "jax", "cupy", "array_api_strict")
        before = {m for m in sys.modules if m.split(".")[0] in heavy}
        from porter_ext.spec import replacements as r
        entry = r.choose(r.find("torch", "method", "sum"), (1,), {}, object())  # builds the index
        r.render_suggestion(entry, (1,), {})
        after = {m for m in sys.modules if m.split(".")[0] in heavy}
        print(sorted(after - before))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ
    )
    assert done.stdout.splitlines()[0] == "[]"


def test_quantiles_say_why_they_have_no_rewrite():
    """Handbook 02.04 and 02.06: ``np.percentile`` had no entry ("the table has no rewrite
    for this call"); median and quantiles have none the standard can give, and say why:
    a sort-based form is NaN where NumPy's is not, and torch's median is the lower one."""
    from porter_ext.spec.rewrites import NoRewrite, call_from_source, render_rewrite

    for library, name in [("numpy", "percentile"), ("numpy", "quantile"), ("torch", "quantile")]:
        (entry,) = find(library, "function", name)
        assert entry.rewrite is None and "no quantile" in entry.no_rewrite, entry
        assert "NaN" in entry.no_rewrite
        with pytest.raises(NoRewrite, match="no quantile"):
            render_rewrite(entry, call_from_source(f"lib.{name}(x, 25)")[1])
    (median,) = find("numpy", "function", "median")
    assert "NaN" in median.no_rewrite and "lower" in median.no_rewrite

"""Naming what a cell called: which library, which kind of call, and its name there.

A callee is resolved once per function object (or per array type and method name) and
cached, so that the recorder's per-call cost is a dictionary lookup. Namespaces are
indexed only for libraries the person already imported.
"""

from __future__ import annotations

import sys
import types
from dataclasses import dataclass

from porter_ext.record.arrays import library_of

#: how each library's names are qualified in reports, and the type name of its arrays
PREFIX = {
    "numpy": "numpy",
    "torch": "torch",
    "jax": "jax.numpy",
    "cupy": "cupy",
    "array_api_strict": "array_api_strict",
    "array_api_compat": "array_api_compat",
}
ARRAY_TYPE_NAME = {
    "numpy": "ndarray",
    "torch": "Tensor",
    "jax": "Array",
    "cupy": "ndarray",
    "array_api_strict": "Array",
}

#: (module, library, prefix of the relative name): the namespaces indexed per library,
#: in order of precedence (the first place an object is found names it)
_NAMESPACES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "numpy": (
        ("numpy", "numpy", ""),
        ("numpy.linalg", "numpy", "linalg."),
        ("numpy.fft", "numpy", "fft."),
        ("numpy.random", "numpy", "random."),
        ("array_api_compat.numpy", "numpy", ""),
        ("array_api_compat.numpy.linalg", "numpy", "linalg."),
        ("array_api_compat.numpy.fft", "numpy", "fft."),
    ),
    "torch": (
        ("torch", "torch", ""),
        ("torch.linalg", "torch", "linalg."),
        ("torch.fft", "torch", "fft."),
        ("torch.special", "torch", "special."),
        ("torch.cuda", "torch", "cuda."),
        ("torch.accelerator", "torch", "accelerator."),
        ("torch.nn.functional", "torch", "nn.functional."),
        ("array_api_compat.torch", "torch", ""),
        ("array_api_compat.torch.linalg", "torch", "linalg."),
        ("array_api_compat.torch.fft", "torch", "fft."),
    ),
    "jax": (
        ("jax.numpy", "jax", ""),
        ("jax.numpy.linalg", "jax", "linalg."),
        ("jax.numpy.fft", "jax", "fft."),
        ("jax.random", "jax", "random."),
        ("jax", "jax", "jax."),
    ),
    "cupy": (
        ("cupy", "cupy", ""),
        ("cupy.linalg", "cupy", "linalg."),
        ("cupy.fft", "cupy", "fft."),
        ("cupy.cuda", "cupy", "cuda."),
        ("array_api_compat.cupy", "cupy", ""),
        ("array_api_compat.cupy.linalg", "cupy", "linalg."),
        ("array_api_compat.cupy.fft", "cupy", "fft."),
    ),
    "array_api_strict": (
        ("array_api_strict", "array_api_strict", ""),
        ("array_api_strict.linalg", "array_api_strict", "linalg."),
        ("array_api_strict.fft", "array_api_strict", "fft."),
    ),
    "array_api_compat": (("array_api_compat", "array_api_compat", ""),),
}
_MODULE_ROOT_LIBRARY = {
    "numpy": "numpy",
    "torch": "torch",
    "jax": "jax",
    "jaxlib": "jax",
    "cupy": "cupy",
    "cupyx": "cupy",
    "array_api_strict": "array_api_strict",
    "array_api_compat": "array_api_compat",
}
#: JAX transformations and other calls that build functions rather than compute arrays
_JAX_NOT_ARRAY_CALLS = frozenset(
    [
        "jit",
        "grad",
        "vmap",
        "pmap",
        "value_and_grad",
        "jacfwd",
        "jacrev",
        "hessian",
        "checkpoint",
        "remat",
        "custom_jvp",
        "custom_vjp",
        "named_call",
        "make_jaxpr",
        "eval_shape",
        "tree_map",
        "tree_util",
        "disable_jit",
        "config",
        "ensure_compile_time_eval",
    ]
)
#: builtins that force an array to the host when given one
HOST_BUILTINS = {float: "float", int: "int", bool: "bool", complex: "complex"}


@dataclass(frozen=True, eq=False)  # identity: callees are cached, hashing must be cheap
class Callee:
    """A resolved callee: ``library`` as in reports, ``kind``, ``name`` relative to the
    library's array namespace (``"max"``, ``"linalg.norm"``, method ``"sum"``) and the
    qualified ``qualname`` shown to people (``"torch.max"``, ``"Tensor.sum"``)."""

    library: str
    kind: str
    name: str
    qualname: str


#: namespace modules already indexed
_indexed: set[str] = set()
_index: dict[int, tuple[object, Callee]] = {}


def _index_module(modname: str, library: str, rel: str) -> None:
    mod = sys.modules.get(modname)
    if mod is None:
        return
    _indexed.add(modname)
    for attr in dir(mod):
        if attr.startswith("_"):
            continue
        try:
            obj = getattr(mod, attr)
        except Exception:
            continue
        if isinstance(obj, types.ModuleType) or not callable(obj) or id(obj) in _index:
            continue
        if rel == "jax.":
            if attr in _JAX_NOT_ARRAY_CALLS:
                continue
            callee = Callee("jax", "function", attr, f"jax.{attr}")
        else:
            name = rel + attr
            callee = Callee(library, "function", name, f"{PREFIX[library]}.{name}")
        _index[id(obj)] = (obj, callee)


def _refresh_index() -> None:
    """Index the namespaces imported since the last look (in order of precedence)."""
    for namespaces in _NAMESPACES.values():
        for modname, library, rel in namespaces:
            if modname not in _indexed and modname in sys.modules:
                _index_module(modname, library, rel)


def resolve_function(f: object) -> Callee | None:
    """The array-library function ``f`` is, or None for anything else (user functions,
    ``print``, IPython's own calls)."""
    hit = _index.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    module = getattr(f, "__module__", None)
    if not isinstance(module, str):
        module = getattr(type(f), "__module__", "") or ""
    lib = _MODULE_ROOT_LIBRARY.get(module.partition(".")[0])
    if lib is None:
        return None
    _refresh_index()
    hit = _index.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    name = getattr(f, "__name__", None)
    if not isinstance(name, str) or name.startswith("_"):
        return None
    if lib == "jax" and name in _JAX_NOT_ARRAY_CALLS:
        return None
    if lib == "array_api_compat":
        return None  # compat internals; its public helpers are indexed
    return Callee(lib, "function", name, f"{module}.{name}")


_method_names: dict[type, dict[int, str]] = {}


def method_name(t: type, f: object) -> str:
    """The attribute name a bound method was looked up by (JAX names its methods ``_sum``)."""
    name = getattr(f, "__name__", "?")
    func = getattr(f, "__func__", None)
    if func is None:
        return name
    names = _method_names.get(t)
    if names is None:
        names = {}
        for klass in reversed(t.__mro__):
            for attr, value in vars(klass).items():
                names[id(value)] = attr
        _method_names[t] = names
    return names.get(id(func), name.lstrip("_") or name)


def method_callee(self_obj: object, f: object) -> Callee | None:
    lib = library_of(self_obj)
    if lib is None:
        return None
    name = method_name(type(self_obj), f)
    return Callee(lib, "method", name, f"{ARRAY_TYPE_NAME[lib]}.{name}")


def attribute_callee(obj: object, attr: str) -> Callee | None:
    lib = library_of(obj)
    if lib is None:
        return None
    return Callee(lib, "attribute", attr, f"{ARRAY_TYPE_NAME[lib]}.{attr}")

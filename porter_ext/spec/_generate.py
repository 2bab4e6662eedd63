"""Write ``data/array_api_<version>.json``: the array API standard as data, one file a version.

The names and signatures come from array-api-strict, read with ``inspect.signature`` under
each version flag; where array-api-strict differs from the published standard, the
standard's own facts below win, and the difference is recorded in the file
(``array_api_strict.deviations``). Run ``python -m porter_ext.spec._generate [OUT_DIR]``.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from porter_ext.spec.standard import VERSIONS, FunctionSpec, Param

DATA_DIR = Path(__file__).with_name("data")

# --- Facts of the standard that array-api-strict cannot tell us ------------------------

CONSTANTS = ("e", "inf", "nan", "newaxis", "pi")
NAMESPACE_ATTRIBUTES = ("__array_api_version__",)
EXTENSIONS = ("fft", "linalg")

# The array object chapter: named methods, then the in-place and reflected operators
# that the same chapter requires (identical in 2022.12 ... 2025.12).
_OPERATORS = ("add", "sub", "mul", "truediv", "floordiv", "pow", "mod", "matmul")
_OPERATORS += ("and", "or", "xor", "lshift", "rshift")
ARRAY_METHODS = frozenset(
    ("__abs__", "__array_namespace__", "__bool__", "__complex__", "__dlpack__")
    + ("__dlpack_device__", "__eq__", "__float__", "__ge__", "__getitem__", "__gt__")
    + ("__index__", "__int__", "__invert__", "__le__", "__lt__", "__ne__", "__neg__")
    + ("__pos__", "__setitem__", "to_device")
    + tuple(f"__{prefix}{op}__" for prefix in ("", "i", "r") for op in _OPERATORS)
)
# Members every Python class has; not part of what the standard is about.
_PYTHON_OBJECT_MEMBERS = frozenset(
    ["__new__", "__init__", "__repr__", "__str__", "__reduce__", "__hash__", "__class_getitem__"]
)


# Signatures as the standard gives them, where array-api-strict 2.6.1 gives another one.
# Each entry: (first version it applies to, a stub with the standard's parameters).
# Not listed, because array-api-strict agrees with the standard as amended: expand_dims is
# (x, /, axis) in every version; the pages first published for 2022.12-2024.12 show
# (x, /, *, axis=0), an error that the standard fixed in all revisions (data-apis/array-api#988).
def _astype_2022(x, dtype, /, *, copy=True): ...
def _astype_2023(x, dtype, /, *, copy=True, device=None): ...
def _from_dlpack_2022(x, /): ...
def _from_dlpack_2023(x, /, *, device=None, copy=None): ...
def _fftfreq_2022(n, /, *, d=1.0, device=None): ...
def _fftfreq_2024(n, /, *, d=1.0, dtype=None, device=None): ...
def _dlpack_2022(self, /, *, stream=None): ...
def _dlpack_2023(self, /, *, stream=None, max_version=None, dl_device=None, copy=None): ...
def _to_device(self, device, /, *, stream=None): ...


STANDARD_SIGNATURES: dict[str, tuple[tuple[str, Callable[..., Any]], ...]] = {
    "astype": (("2022.12", _astype_2022), ("2023.12", _astype_2023)),
    "from_dlpack": (("2022.12", _from_dlpack_2022), ("2023.12", _from_dlpack_2023)),
    "fft.fftfreq": (("2022.12", _fftfreq_2022), ("2024.12", _fftfreq_2024)),
    "fft.rfftfreq": (("2022.12", _fftfreq_2022), ("2024.12", _fftfreq_2024)),
    "__dlpack__": (("2022.12", _dlpack_2022), ("2023.12", _dlpack_2023)),
    "to_device": (("2022.12", _to_device),),
}

# --- Reading array-api-strict ------------------------------------------------------------

_SIMPLE_DEFAULTS = (type(None), bool, int, float, complex, str)


@functools.cache
def _gate_codes() -> dict[str, Any]:
    """The code objects of array-api-strict's version and extension gates, to spot them."""
    from array_api_strict import _flags

    return {
        "version": _flags.requires_api_version("0")(lambda: None).__code__,
        "extension": _flags.requires_extension("linalg")(lambda: None).__code__,
    }


def _gates(func: Any) -> Iterator[tuple[str, str]]:
    """(kind, value) of every array-api-strict gate wrapped around ``func``."""
    codes = _gate_codes()
    while func is not None:
        code = getattr(func, "__code__", None)
        for kind, gate in codes.items():
            if code is gate:
                cells = dict(zip(code.co_freevars, func.__closure__, strict=True))
                yield kind, cells[kind].cell_contents
        func = getattr(func, "__wrapped__", None)


def _available(func: Any, version: str) -> bool:
    return all(value <= version for kind, value in _gates(func) if kind == "version")


def _is_strict_helper(obj: Any) -> bool:
    """array-api-strict's own helpers say in their docstring that they are not standard."""
    doc = " ".join((inspect.getdoc(obj) or "").split())
    return "not** part of the array API standard" in doc or isinstance(obj, type)


def _params(
    func: Callable[..., Any], name: str, *, method: bool = False, lenient: bool = False
) -> list[dict]:
    params = list(inspect.signature(func).parameters.values())
    if method:
        params = params[1:]  # self
    out = []
    for p in params:
        has_default = p.default is not inspect.Parameter.empty
        if has_default and not lenient and not isinstance(p.default, _SIMPLE_DEFAULTS):
            raise ValueError(
                f"{name}: default {p.default!r} of {p.name!r} is not simple; add a fact"
            )
        out.append(
            {
                "name": p.name,
                "kind": p.kind.name.lower(),
                "has_default": has_default,
                "default": repr(p.default) if has_default else None,
            }
        )
    return out


def _render(name: str, params: list[dict]) -> str:
    return FunctionSpec(name, tuple(Param(**p) for p in params)).render()


def _standard_params(
    name: str, func: Callable[..., Any], version: str, deviations: dict, *, method: bool = False
) -> list[dict]:
    """Parameters as the standard has them; a difference from array-api-strict is noted."""
    facts = [stub for since, stub in STANDARD_SIGNATURES.get(name, ()) if since <= version]
    if not facts:
        return _params(func, name, method=method)
    standard = _params(facts[-1], name, method=method)
    strict = _params(func, name, method=method, lenient=True)
    if strict != standard:
        deviations[name] = {
            "array_api_strict": _render(name, strict),
            "standard": _render(name, standard),
        }
    return standard


def _namespace(version: str, deviations: dict) -> dict[str, Any]:
    """Functions (with linalg.* and fft.*), constants and dtypes under the ``version`` flag."""
    import array_api_strict as xp
    from array_api_strict import ArrayAPIStrictFlags, get_array_api_strict_flags

    functions: dict[str, list[dict]] = {}
    names: dict[str, list[str]] = {"constants": [], "dtypes": [], "extras": [], "unlisted": []}
    with ArrayAPIStrictFlags(api_version=version):
        extensions = tuple(sorted(get_array_api_strict_flags()["enabled_extensions"]))
        if extensions != EXTENSIONS:
            raise ValueError(f"array-api-strict enables {extensions} for {version}")
        for name in sorted(set(xp.__all__) - set(extensions) - set(NAMESPACE_ATTRIBUTES)):
            obj = getattr(xp, name)
            if name in CONSTANTS:
                names["constants"].append(name)
            elif isinstance(obj, xp._dtypes.DType):
                names["dtypes"].append(name)
            elif not callable(obj) or _is_strict_helper(obj):
                names["extras"].append(name)
            elif _available(obj, version):
                functions[name] = _standard_params(name, obj, version, deviations)
        for ext in extensions:
            module = getattr(xp, ext)
            for name, obj in sorted(vars(module).items()):
                if not callable(obj) or ("extension", ext) not in set(_gates(obj)):
                    continue
                if _available(obj, version):
                    functions[f"{ext}.{name}"] = _standard_params(
                        f"{ext}.{name}", obj, version, deviations
                    )
                    if name not in module.__all__:
                        names["unlisted"].append(f"{ext}.{name}")
    if tuple(names["constants"]) != CONSTANTS:
        raise ValueError(f"array-api-strict has constants {names['constants']}, not {CONSTANTS}")
    return {"functions": functions, "extensions": list(extensions), **names}


def _array_object(version: str, deviations: dict) -> dict[str, Any]:
    """Attributes and methods of the array object (methods without ``self``)."""
    from array_api_strict._array_object import Array

    members = {n for n, v in vars(Array).items() if inspect.isfunction(v)}
    if not members >= ARRAY_METHODS:
        raise ValueError(f"array-api-strict lacks array methods {sorted(ARRAY_METHODS - members)}")
    return {
        "attributes": sorted(n for n, v in vars(Array).items() if isinstance(v, property)),
        "methods": {
            name: _standard_params(name, getattr(Array, name), version, deviations, method=True)
            for name in sorted(ARRAY_METHODS)
        },
        "extras": sorted(
            n
            for n in members - ARRAY_METHODS - _PYTHON_OBJECT_MEMBERS
            if not n.startswith("_") or n.endswith("__")
        ),
    }


def build(version: str) -> dict[str, Any]:
    """Everything the standard of ``version`` names, as array-api-strict shows it, corrected."""
    import array_api_strict

    deviations: dict[str, dict] = {}
    namespace = _namespace(version, deviations)
    array = _array_object(version, deviations)
    return {
        "version": version,
        "functions": namespace["functions"],
        "constants": namespace["constants"],
        "dtypes": namespace["dtypes"],
        "namespace_attributes": list(NAMESPACE_ATTRIBUTES),
        "extensions": namespace["extensions"],
        "array_attributes": array["attributes"],
        "array_methods": array["methods"],
        "array_api_strict": {
            "version": array_api_strict.__version__,
            "deviations": deviations,
            "names_not_in_standard": namespace["extras"],
            "array_members_not_in_standard": array["extras"],
            "extension_functions_missing_from___all__": namespace["unlisted"],
        },
    }


def dumps(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True, ensure_ascii=True) + "\n"


def generate(out_dir: Path = DATA_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for version in VERSIONS:
        path = out_dir / f"array_api_{version}.json"
        path.write_text(dumps(build(version)), encoding="utf-8")
        written.append(path)
    return written


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    for path in generate(Path(args[0]) if args else DATA_DIR):
        print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What the array API standard names and how it spells each signature, version by version.

The data lives in ``data/array_api_<version>.json`` (written by ``_generate.py`` from
array-api-strict, corrected from the standard); it is read lazily, once per version.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

VERSIONS: tuple[str, ...] = ("2022.12", "2023.12", "2024.12", "2025.12")
#: the newest published version (array-api-strict and array-api-compat default to it)
DEFAULT_VERSION = VERSIONS[-1]

_DATA_DIR = Path(__file__).with_name("data")
_POSITIONAL = ("positional_only", "positional_or_keyword")
_KINDS = {
    name: getattr(inspect.Parameter, name.upper())
    for name in (*_POSITIONAL, "var_positional", "keyword_only", "var_keyword")
}


@dataclass(frozen=True)
class Param:
    """One parameter of a standard signature."""

    name: str
    kind: str  # "positional_only" | "positional_or_keyword" | "keyword_only" | "var_positional" | "var_keyword"
    has_default: bool
    default: str | None = None  # repr of the default when simple


class _DefaultText:
    """Stands in for a default value so that a Signature prints the standard's text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


@dataclass(frozen=True)
class FunctionSpec:
    """A function (``"sum"``, ``"linalg.vector_norm"``) or array method, as the standard has it."""

    name: str
    params: tuple[Param, ...]

    def signature(self) -> inspect.Signature:
        return _signature(self)

    def check_call(self, nargs: int, kwnames: tuple[str, ...] = ()) -> str | None:
        """None when ``nargs`` positional arguments and these keywords bind to the standard
        signature; else a short reason naming the rule that the call breaks."""
        positional = [p for p in self.params if p.kind in _POSITIONAL]
        var_positional = any(p.kind == "var_positional" for p in self.params)
        var_keyword = any(p.kind == "var_keyword" for p in self.params)
        if nargs > len(positional) and not var_positional:
            return self._too_many_positional(nargs, positional)
        bound = {p.name for p in positional[:nargs]}
        by_name = {p.name: p for p in self.params}
        for kw in kwnames:
            p = by_name.get(kw)
            if p is None or p.kind in ("var_positional", "var_keyword"):
                if not var_keyword:
                    return f"{self.name}() has no keyword {kw!r}"
            elif p.kind == "positional_only":
                if not var_keyword:
                    return f"{self.name}() takes {kw!r} by position only, not as a keyword"
            elif kw in bound:
                return f"{self.name}() got {kw!r} both by position and as a keyword"
        given = bound | set(kwnames)
        missing = [
            p.name
            for p in self.params
            if not p.has_default
            and p.kind not in ("var_positional", "var_keyword")
            and p.name not in given
        ]
        if missing:
            s = "s" if len(missing) > 1 else ""
            return f"{self.name}() is missing required argument{s}: {', '.join(missing)}"
        return None

    def _too_many_positional(self, nargs: int, positional: list[Param]) -> str:
        required = sum(not p.has_default for p in positional)
        most = len(positional)
        count = f"{most}" if required == most else f"from {required} to {most}"
        s = "" if most == 1 else "s"
        names = f" ({', '.join(p.name for p in positional)})" if positional else ""
        were = "was" if nargs == 1 else "were"
        reason = (
            f"{self.name}() takes {count} positional argument{s}{names} but {nargs} {were} given"
        )
        keyword_only = [p.name for p in self.params if p.kind == "keyword_only"]
        extra = keyword_only[: nargs - most]
        if extra:
            reason += f": {', '.join(extra)} {'is' if len(extra) == 1 else 'are'} keyword-only"
        return reason

    def render(self) -> str:
        """The signature as the standard prints it: ``sum(x, /, *, axis=None, ...)``."""
        parts: list[str] = []
        star_done = False
        for i, p in enumerate(self.params):
            if p.kind == "keyword_only" and not star_done:
                parts.append("*")
                star_done = True
            if p.kind == "var_positional":
                parts.append(f"*{p.name}")
                star_done = True
            elif p.kind == "var_keyword":
                parts.append(f"**{p.name}")
            else:
                default = p.default if p.default is not None else "..."
                parts.append(f"{p.name}={default}" if p.has_default else p.name)
            following = self.params[i + 1] if i + 1 < len(self.params) else None
            if p.kind == "positional_only" and (
                following is None or following.kind != "positional_only"
            ):
                parts.append("/")
        return f"{self.name}({', '.join(parts)})"


@functools.cache
def _signature(spec: FunctionSpec) -> inspect.Signature:
    return inspect.Signature(
        [
            inspect.Parameter(
                p.name,
                _KINDS[p.kind],
                default=_DefaultText(p.default or "...")
                if p.has_default
                else inspect.Parameter.empty,
            )
            for p in spec.params
        ]
    )


@dataclass(frozen=True)
class Standard:
    """The names of one version of the standard, with the signature of each callable."""

    version: str
    functions: Mapping[str, FunctionSpec]  # main namespace + "linalg.*" + "fft.*"
    constants: frozenset[str]
    dtypes: frozenset[str]
    array_attributes: frozenset[str]
    array_methods: Mapping[str, FunctionSpec]  # params exclude `self`
    extensions: frozenset[str]
    namespace_attributes: frozenset[str] = frozenset()  # "__array_api_version__"

    def __hash__(self) -> int:
        return hash(self.version)

    def __repr__(self) -> str:
        return f"Standard({self.version!r}, {len(self.functions)} functions)"

    def is_function(self, name: str) -> bool:
        return name in self.functions

    def is_name(self, name: str) -> bool:
        """A function (also ``"linalg.x"``/``"fft.x"``), constant, dtype or namespace attribute."""
        return (
            name in self.functions
            or name in self.constants
            or name in self.dtypes
            or name in self.namespace_attributes
        )


def _specs(raw: Mapping[str, list[dict]]) -> Mapping[str, FunctionSpec]:
    return MappingProxyType(
        {
            name: FunctionSpec(name, tuple(Param(**p) for p in params))
            for name, params in raw.items()
        }
    )


def standard(version: str = DEFAULT_VERSION) -> Standard:
    """The standard of ``version`` (one of ``VERSIONS``), read once and kept."""
    if version not in VERSIONS:
        raise ValueError(
            f"unknown array API standard version {version!r}; known versions: {', '.join(VERSIONS)}"
        )
    return _load(version)


@functools.lru_cache(maxsize=len(VERSIONS))
def _load(version: str) -> Standard:
    path = _DATA_DIR / f"array_api_{version}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    return Standard(
        version=version,
        functions=_specs(data["functions"]),
        constants=frozenset(data["constants"]),
        dtypes=frozenset(data["dtypes"]),
        array_attributes=frozenset(data["array_attributes"]),
        array_methods=_specs(data["array_methods"]),
        extensions=frozenset(data["extensions"]),
        namespace_attributes=frozenset(data["namespace_attributes"]),
    )


def since(name: str) -> str | None:
    """The first version of the standard that has ``name`` (a function, constant or dtype)."""
    return next((v for v in VERSIONS if standard(v).is_name(name)), None)

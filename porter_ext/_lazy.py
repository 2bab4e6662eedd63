"""Package namespaces that import their modules when a name is first used (PEP 562), so
that importing ``porter_ext.model.comparison`` does not import NumPy through the package's
``__init__`` and ``%load_ext porter_ext`` stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``names`` map each public name
    to the submodule that defines it: relative to the package, or a full
    ``porter_ext.…`` path for a name the package re-exports from another."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        full = module if module.startswith("porter_ext.") else f"{package}.{module}"
        value = getattr(importlib.import_module(full), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__

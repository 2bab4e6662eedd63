"""Package namespaces that import their modules when a name is first used (PEP 562), so
that importing ``porter_ext.compare.model`` does not import NumPy through the package's
``__init__`` and ``%load_ext porter_ext`` stays light."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_names(package: str, names: dict[str, str]) -> tuple[Callable[[str], Any], Callable]:
    """``(__getattr__, __dir__)`` for ``package``, whose ``names`` map each public name
    to the submodule (relative to the package) that defines it."""
    namespace = importlib.import_module(package).__dict__

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{module}"), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted(set(namespace) | set(names))

    return __getattr__, __dir__

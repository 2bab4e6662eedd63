"""porter: a Jupyter porting assistant for the Python array API standard.

``%load_ext porter_ext`` registers the ``%port``/``%%port`` magics. Nothing here imports
torch, jax or cupy; the heavier parts load when first used.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from porter_ext._version import __version__

if TYPE_CHECKING:
    from porter_ext.record import clear_caches
    from porter_ext.record.strict import NonStandardError, strict_namespace

__all__ = [
    "NonStandardError",
    "__version__",
    "clear_caches",
    "load_ipython_extension",
    "strict_namespace",
    "unload_ipython_extension",
]


def load_ipython_extension(ipython: Any) -> None:
    """Register porter's magics with an IPython shell (``%load_ext porter_ext``)."""
    from porter_ext.magics import load

    load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    """Remove what `load_ipython_extension` added (``%unload_ext porter_ext``)."""
    from porter_ext.magics import unload

    unload(ipython)


def _jupyter_labextension_paths() -> list[dict[str, str]]:
    """Where the prebuilt JupyterLab extension lies (``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "porter-ext"}]


def __getattr__(name: str) -> Any:
    if name in ("NonStandardError", "strict_namespace"):
        from porter_ext.record import strict

        return getattr(strict, name)
    if name == "clear_caches":  # what the recorder learnt process-wide (callees, verdicts)
        from porter_ext.record import clear_caches

        return clear_caches
    raise AttributeError(f"module 'porter_ext' has no attribute {name!r}")

"""The show stage: MIME bundles for a cell and a report, and the comparison widget.

Importing this package is cheap: ipywidgets, matplotlib and pandas load only when a
widget is built, a plot drawn or a table made (`CellWidget`, `show`, `mimebundle` are
looked up lazily).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from porter_ext.ui.mime import MIME_TYPE, cell_bundle, cell_html, cell_text, verdict
from porter_ext.ui.report import report_bundle, report_text

if TYPE_CHECKING:
    from porter_ext.ui.widget import CellWidget, has_widget_front_end, mimebundle, show

__all__ = [
    "MIME_TYPE",
    "CellWidget",
    "cell_bundle",
    "cell_html",
    "cell_text",
    "has_widget_front_end",
    "mimebundle",
    "report_bundle",
    "report_text",
    "show",
    "verdict",
]

_LAZY = frozenset({"CellWidget", "has_widget_front_end", "mimebundle", "show"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from porter_ext.ui import widget

        return getattr(widget, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

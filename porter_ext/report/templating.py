"""The templates' environment (autoescape; person text with its invisible characters
shown as escapes) and one cell's view as an HTML fragment: the ``text/html`` of a
``%%port`` cell's output, drawn by the same template (templates/cell.html.j2) as the HTML
report's cell sections, so the two never differ."""

from __future__ import annotations

import functools
from importlib import resources
from typing import TYPE_CHECKING, Any

from porter_ext.model.cells import CellEntry
from porter_ext.report.html_cells import PlotBudget, cell_view
from porter_ext.report.placement import calls_by_cell
from porter_ext.report.text import visible

if TYPE_CHECKING:
    import jinja2
    from markupsafe import Markup

#: figures in one cell's own output: none (each would be stored in the notebook); the
#: HTML report draws them
CELL_PLOTS = 0
_CELL_PLOTS_WHY = "in a cell's output (the HTML report draws them: %port report -o report.html)"


def _visible(value: Any) -> Any:
    """Every value a template writes, with bidi controls and invisible characters shown
    as escapes (markup of porter's own, such as the stylesheet, passes untouched)."""
    from markupsafe import Markup

    return visible(value) if isinstance(value, str) and not isinstance(value, Markup) else value


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment: autoescape, person text made visible, strict names."""
    # jinja2 is imported here so that importing porter_ext.report stays cheap.
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("porter_ext.report", "templates"),
        autoescape=True,
        finalize=_visible,
        trim_blocks=True,
        lstrip_blocks=True,
        undefined=jinja2.StrictUndefined,
    )


@functools.cache
def asset(name: str) -> Markup:
    """A stylesheet or script of the templates, checked not to close its own element."""
    from markupsafe import Markup

    text = resources.files("porter_ext.report").joinpath("templates", name).read_text("utf-8")
    if "</" + "style" in text.lower() or "</" + "script" in text.lower():
        raise RuntimeError(f"template asset {name} would close its own element")
    return Markup(text)


def cell_html(cell: CellEntry) -> str:
    """One cell's view as an HTML fragment (the ``text/html`` of its output): the report's
    cell section for it, tables unfolded, with the cell's stylesheet scoped to it."""
    (placed,) = calls_by_cell([cell])
    view = cell_view(None, cell, PlotBudget(CELL_PLOTS, _CELL_PLOTS_WHY), placed, open=True)
    template = environment().get_template("cell.html.j2")
    return template.render(view=view, css=asset("cell.css")).strip()

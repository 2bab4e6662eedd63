"""The comparison widget: one cell's entry of the report, live, in four tabs.

A thin view: everything it shows is read from a `CellEntry` (the report model), so the
widget, the HTML report and the JupyterLab renderer never disagree. Every piece of text
the person wrote (source, names, messages, even dtype and device strings) is escaped
before it reaches an `HTML` widget, because JupyterLab puts an HTML widget's value into
the page as it is. `show` puts the widget and the plain MIME bundle in one output, so a
saved notebook still reads well where widgets do not render (nbconvert, GitHub).
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from porter_ext.guard import internal_error
from porter_ext.ui.html import (
    _note,
    call_detail_html,
    call_label,
    devices_html,
    find_output,
    header_html,
    numerics_html,
    output_card_html,
    output_grid,
    plan_html,
    rewrite_html,
)
from porter_ext.ui.mime import cell_bundle

try:  # the widget is optional: without ipywidgets `show` displays the plain bundle
    import ipywidgets as W
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    W = None

if TYPE_CHECKING:
    import ipywidgets

    from porter_ext.model.cells import CellEntry
    from porter_ext.model.comparison import OutputComparison

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TAB_TITLES = ("Calls", "Numerics", "Devices", "Side by side")
#: the label of the Apply button, the same in every view (porter's renderer, the panel)
APPLY_LABEL = "Apply verified rewrite"


def error_plot_png(out: OutputComparison) -> bytes | None:
    """The error histogram of an output as PNG bytes, None without one (or matplotlib)."""
    hist = getattr(out, "error_histogram", None)
    if hist is None:
        return None
    from porter_ext.report.plots import error_figure  # imports matplotlib

    uri = error_figure(hist, None)
    return None if uri is None else base64.b64decode(uri.split(",", 1)[1])


# --- the widget --------------------------------------------------------------------------

_Base: Any = W.VBox if W is not None else object


class CellWidget(_Base):
    """Header with the cell's verdict over the tabs Calls, Numerics, Devices, Side by side.

    `calls_list` (a `Select`, None without calls) drives `call_detail`; `output_picker`
    (a `Dropdown`, None without outputs) drives `side_by_side`. Plots are drawn when an
    output is first picked, since each costs a tenth of a second.
    """

    def __init__(self, entry: CellEntry) -> None:
        if W is None:
            raise ImportError("porter's comparison widget needs ipywidgets: pip install ipywidgets")
        super().__init__()
        self.entry = entry
        self._plots: dict[tuple[int, str], bytes | None] = {}
        self.header = W.HTML(header_html(entry))
        self.call_detail = W.HTML()
        self.calls_list: ipywidgets.Select | None = None
        self.output_picker: ipywidgets.Dropdown | None = None
        self.side_by_side = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.tabs = W.Tab(
            children=[
                self._calls_tab(),
                W.HTML(numerics_html(entry)),
                W.HTML(devices_html(entry)),
                self._side_tab(),
            ],
            titles=TAB_TITLES,
        )
        # the port plan and the proposed rewrite come first, where there are any
        self.plan = W.HTML(plan_html(entry))
        self.rewrite = W.HTML(rewrite_html(entry))
        self.apply_button, self.apply_note = self._apply_row()
        html = [w for w in (self.header, self.plan, self.rewrite) if w.value]
        if self.apply_button is not None:  # Apply comes first in the rewrite's place
            html[html.index(self.rewrite) : html.index(self.rewrite)] = [
                self.apply_button,
                self.apply_note,
            ]
        self.children = (*html, self.tabs)

    def _apply_row(self) -> tuple[ipywidgets.Button | None, ipywidgets.HTML | None]:
        """The Apply button, where replays verified the rewrite, and the note it writes;
        (None, None) otherwise. porter's JupyterLab extension (JupyterLab, Notebook 7)
        takes the click in the page and edits the cell with its one Apply function, so
        `_on_apply` runs only in a front end without the extension."""
        rewrite = self.entry.rewrite
        if rewrite is None or rewrite.status != "verified" or rewrite.source is None:
            return None, None
        button = W.Button(
            description=APPLY_LABEL,
            tooltip="Replace the cell's source with the rewrite that replays verified",
            layout=W.Layout(width="max-content"),
        )
        button.add_class("porter-apply")
        button.add_class("porter-widget-apply")
        button.on_click(self._on_apply)
        return button, W.HTML()

    def _on_apply(self, _button: ipywidgets.Button) -> None:
        self.apply_note.value = _note(
            "This front end has no porter extension to edit the cell: run "
            "<code>_port.apply()</code> in a new cell (right after this one) to put the "
            "rewrite there."
        )

    def _calls_tab(self) -> ipywidgets.VBox:
        calls = self.entry.calls
        if not calls:
            return W.VBox([W.HTML(_note("No array calls were recorded in this cell."))])
        counts = self.entry.headline.counts  # the header's numbers, not counted again
        intro = W.HTML(
            _note(
                f"{counts.findings} finding(s) in {counts.calls} array call(s). "
                "Pick a call to see its line."
            )
        )
        first = next((i for i, c in enumerate(calls) if c.flagged), 0)
        self.calls_list = W.Select(
            options=[(call_label(c), i) for i, c in enumerate(calls)],
            value=first,
            rows=min(len(calls), 10),
            layout=W.Layout(width="98%"),  # 100% plus the widget margin overflows the tab
        )
        self.calls_list.observe(self._on_call, names="value")
        self._show_call(first)
        return W.VBox([intro, self.calls_list, self.call_detail])

    def _on_call(self, change: dict[str, Any]) -> None:
        self._show_call(change["new"])

    def _show_call(self, index: int | None) -> None:
        calls = self.entry.calls
        ok = index is not None and 0 <= index < len(calls)
        self.call_detail.value = call_detail_html(self.entry, calls[index]) if ok else ""

    def _side_tab(self) -> ipywidgets.VBox:
        names, _ = output_grid(self.entry)
        if not names:
            return W.VBox([W.HTML(_note("No outputs to compare side by side."))])
        self.output_picker = W.Dropdown(options=names, value=names[0], description="output")
        self.output_picker.observe(self._on_output, names="value")
        self._show_output(names[0])
        return W.VBox([self.output_picker, self.side_by_side])

    def _on_output(self, change: dict[str, Any]) -> None:
        self._show_output(change["new"])

    def _show_output(self, name: str) -> None:
        columns = []
        for i, replay in enumerate(self.entry.replays):
            out = find_output(replay, name)
            if out is None:
                continue
            column = [W.HTML(output_card_html(replay, out))]
            png = self._plot(i, out)
            if png:
                column.append(W.Image(value=png, format="png", layout=W.Layout(width="260px")))
            columns.append(W.VBox(column, layout=W.Layout(margin="0 24px 8px 0")))
        self.side_by_side.children = tuple(columns)

    def _plot(self, replay_index: int, out: OutputComparison) -> bytes | None:
        key = (replay_index, out.name)
        if key not in self._plots:
            try:
                self._plots[key] = error_plot_png(out)
            except Exception as exc:  # a plot is an illustration: never lose the widget
                internal_error("drawing an error plot", exc)
                self._plots[key] = None
        return self._plots[key]

    def view(self) -> dict[str, Any]:
        """The ``application/vnd.jupyter.widget-view+json`` data that points at this widget."""
        return super()._repr_mimebundle_()[WIDGET_VIEW]

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        """The widget view plus the plain bundle, so `display(CellWidget(e))` also degrades."""
        return {**cell_bundle(self.entry), WIDGET_VIEW: self.view()}


# --- showing it ----------------------------------------------------------------------------


def has_widget_front_end() -> bool:
    """True in a kernel (a front end may render widgets); False in a terminal IPython,
    in plain Python, or without ipywidgets, where a widget would only print its repr."""
    if W is None:
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and getattr(shell, "kernel", None) is not None


def mimebundle(entry: CellEntry) -> dict[str, Any]:
    """The output for one cell: the widget view when a front end can show it, always with
    ``text/plain``, ``text/html`` and porter's own MIME type beside it."""
    bundle = cell_bundle(entry)
    if has_widget_front_end():
        try:
            bundle[WIDGET_VIEW] = CellWidget(entry).view()
        except Exception as exc:  # porter's own failure must not break the person's cell
            internal_error("building the widget (the plain view is shown)", exc)
    return bundle


def show(entry: CellEntry) -> None:
    """Display one output for the cell: the widget where it renders, HTML elsewhere."""
    from IPython.display import display

    display(mimebundle(entry), raw=True)

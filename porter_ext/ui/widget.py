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
import math
import re
import sys
from collections.abc import Callable, Iterable
from html import escape
from typing import TYPE_CHECKING, Any

from porter_ext.ui.mime import cell_bundle, verdict

try:  # the widget is optional: without ipywidgets `show` displays the plain bundle
    import ipywidgets as W
except ImportError:  # pragma: no cover - exercised in a subprocess by the tests
    W = None

if TYPE_CHECKING:
    from porter_ext.compare.model import OutputComparison
    from porter_ext.record.model import CallRecord
    from porter_ext.report.model import CellEntry, ReplayEntry

WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
TAB_TITLES = ("Calls", "Numerics", "Devices", "Side by side")
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # where Python numbers lines, unlike splitlines
_COLOURS = {"ok": "46,125,50", "bad": "198,40,40", "na": "128,128,128"}
# every other call status is a finding, shown as "bad"
_STATUS_CLASS = {"standard": "ok", "acknowledged": "na", "host_sync": "na"}
_REPLAY_CLASS = {"ok": "ok", "skipped": "na"}  # error and timeout: "bad"
_TABLE = 'style="border-collapse:collapse;font-size:12px;margin:4px 0"'
_CELL = "padding:2px 8px;border-bottom:1px solid rgba(128,128,128,.3);text-align:left"
_MISSING = "—"
_YES_NO = {None: _MISSING, True: "yes", False: "no"}


# --- small HTML helpers: every argument that can hold person text goes through `_t` ---


def _t(value: object) -> str:
    """Person text as HTML text (quotes too, so it is safe inside attributes)."""
    return escape("" if value is None else str(value), quote=True)


def _num(value: float | None) -> str:
    if value is None:
        return _MISSING
    return "nan" if math.isnan(value) else f"{value:.3g}"


def _badge(text: str, cls: str) -> str:
    rgb = _COLOURS[cls]
    return (
        f'<span style="color:rgb({rgb});background:rgba({rgb},.12);padding:0 4px;'
        f'border-radius:3px;font-weight:600">{_t(text)}</span>'
    )


def _cell(html: str, cls: str | None = None) -> str:
    shade = f";background:rgba({_COLOURS[cls]},.14)" if cls else ""
    return f'<td style="{_CELL}{shade}">{html}</td>'


def _table(header: Iterable[str], rows: Iterable[str]) -> str:
    head = "".join(f'<th style="{_CELL}">{h}</th>' for h in header)
    return f"<table {_TABLE}><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"


def _note(text: str) -> str:
    return f'<p style="opacity:.75;margin:4px 0">{text}</p>'


def _ok_class(value: bool | None) -> str:
    return {None: "na", True: "ok", False: "bad"}[value]


# --- what the tabs say, as HTML --------------------------------------------------------


def source_line(source: str, line: int | None) -> str | None:
    """Line `line` (1-based, as Python numbers it) of a cell source, or None."""
    lines = _LINE_BREAK.split(source)
    return lines[line - 1] if line is not None and 1 <= line <= len(lines) else None


def _caret(text: str, col: int) -> int:
    """`col` is a UTF-8 byte offset (what `ast` gives); the caret needs characters."""
    return len(text.encode("utf-8")[:col].decode("utf-8", errors="ignore"))


def call_label(call: CallRecord) -> str:
    """One row of the calls list (plain text: a `Select` shows its options as text)."""
    tip = f"  → {call.suggestion}" if call.suggestion else ""
    count = f"  ×{call.count}" if call.count > 1 else ""
    return f"{call.line}:{call.col}  {call.name}  [{call.status}]{tip}{count}"


def call_detail_html(entry: CellEntry, call: CallRecord) -> str:
    """What a click on a call shows: where it is in the source and what to write instead."""
    cls = _STATUS_CLASS.get(call.status, "bad")
    parts = [
        f"<p><code>{_t(call.name)}</code> {_badge(call.status, cls)} line {call.line}, "
        f"column {call.col}{f', ran {call.count} times' if call.count > 1 else ''}</p>"
    ]
    text = source_line(entry.source, call.line)
    if text is not None:
        gutter = f"{call.line} | "
        caret = " " * (len(gutter) + _caret(text, call.col)) + "^"
        parts.append(f'<pre style="margin:4px 0">{_t(gutter + text)}\n{caret}</pre>')
    if call.suggestion:
        parts.append(f"<p>Use instead: <code>{_t(call.suggestion)}</code></p>")
    elif call.standard_name and call.status != "standard":
        parts.append(f"<p>Standard name: <code>{_t(call.standard_name)}</code></p>")
    if call.message:
        parts.append(f"<p>{_t(call.message)}</p>")
    devices = ", ".join(dict.fromkeys(call.devices_in)) or _MISSING
    parts.append(_note(f"devices: {_t(devices)} → {_t(call.device_out or _MISSING)}"))
    return "".join(parts)


def _header_html(entry: CellEntry) -> str:
    parts = [f"<b>{_t(verdict(entry))}</b> <small>({_t(entry.label)})</small>"]
    if entry.error is not None:
        where = f" at line {entry.error.line}" if entry.error.line else ""
        parts.append(
            f"<br>{_badge('raised', 'bad')} <code>{_t(entry.error.type)}</code>{where}: "
            f"{_t(entry.error.message)}"
        )
    return "".join(parts)


def _grid(entry: CellEntry) -> tuple[list[str], list[ReplayEntry]]:
    """Output names (in order of first appearance) and the replays: the two table axes."""
    names = list(dict.fromkeys(o.name for r in entry.replays for o in r.outputs))
    return names, list(entry.replays)


def _find(replay: ReplayEntry, name: str) -> OutputComparison | None:
    return next((o for o in replay.outputs if o.name == name), None)


def _matrix_html(entry: CellEntry, cell: Callable[[OutputComparison], tuple[str, str]]) -> str:
    """An outputs × backends table; `cell` gives each output's HTML and its highlight."""
    names, replays = _grid(entry)
    header = ["output"] + [
        f"<code>{_t(r.backend)}</code>"
        + ("" if r.status == "ok" else f" {_badge(r.status, _REPLAY_CLASS.get(r.status, 'bad'))}")
        for r in replays
    ]
    rows = []
    for name in names:
        cells = [_cell(f"<code>{_t(name)}</code>")]
        for replay in replays:
            out = _find(replay, name)
            cells.append(_cell(_MISSING, "na") if out is None else _cell(*cell(out)))
        rows.append(f"<tr>{''.join(cells)}</tr>")
    return _table(header, rows)


def _numeric_cell(out: OutputComparison) -> tuple[str, str]:
    mismatched = "" if out.mismatched is None else f"<br>{out.mismatched} mismatched"
    nan = "<br>NaN pattern differs" if out.nan_mismatch else ""
    note = f"<br><small>{_t(out.note)}</small>" if out.note else ""
    html = (
        f"abs {_num(out.max_abs_err)} · rel {_num(out.max_rel_err)}{mismatched}{nan}"
        f"<br><small>rtol {_num(out.rtol)} · atol {_num(out.atol)}</small>{note}"
    )
    return html, _ok_class(out.within_tolerance)


def _device_cell(out: OutputComparison) -> tuple[str, str]:
    word = {None: "unknown", True: "ok", False: "wrong"}[out.device_ok]
    html = (
        f"<code>{_t(out.device or _MISSING)}</code> ({word})"
        f"<br><small>expected <code>{_t(out.expected_device or _MISSING)}</code></small>"
    )
    return html, _ok_class(out.device_ok)


def _replays_html(entry: CellEntry) -> str:
    rows = []
    for r in entry.replays:
        if r.error is not None:
            where = f" at line {r.error.line}" if r.error.line else ""
            detail = f"<code>{_t(r.error.type)}</code>{where}: {_t(r.error.message)}"
        else:
            detail = _t(r.reason or "")
        cls = _REPLAY_CLASS.get(r.status, "bad")
        seconds = _MISSING if r.seconds is None else f"{r.seconds:.3f}"
        rows.append(
            f"<tr>{_cell(f'<code>{_t(r.backend)}</code>')}{_cell(_t(r.status), cls)}"
            f"{_cell(seconds)}{_cell(detail)}</tr>"
        )
    return _table(["replay", "status", "seconds", "detail"], rows)


def numerics_html(entry: CellEntry) -> str:
    if not entry.replays:
        return _note("The cell was not replayed on other backends: nothing to compare.")
    names, _ = _grid(entry)
    table = _matrix_html(entry, _numeric_cell) if names else _note("No outputs were compared.")
    return table + _replays_html(entry)


def devices_html(entry: CellEntry) -> str:
    parts = []
    names, _ = _grid(entry)
    if names:
        parts.append(_matrix_html(entry, _device_cell))
    elif not entry.replays:
        parts.append(_note("The cell was not replayed: no output placement to check."))
    if entry.device_findings:
        rows = [
            f"<tr>{_cell(_t(f.line or _MISSING))}{_cell(f'<code>{_t(f.name)}</code>')}"
            f"{_cell(_t(f.kind), 'bad')}{_cell(_t(f.backend or _MISSING))}"
            f"{_cell(_t(f.message))}</tr>"
            for f in entry.device_findings
        ]
        parts.append("<p><b>Device findings</b></p>")
        parts.append(_table(["line", "call", "kind", "backend", "message"], rows))
    else:
        parts.append(_note("No device findings."))
    return "".join(parts)


def output_card_html(replay: ReplayEntry, out: OutputComparison) -> str:
    """One backend's column of the side-by-side view, from the OutputComparison fields."""
    shape = _MISSING if out.shape is None else str(tuple(out.shape))
    placement = {None: "", True: " (as expected)", False: " (expected "}[out.device_ok]
    if out.device_ok is False:
        placement += f"<code>{_t(out.expected_device or _MISSING)}</code>)"
    fields = [
        ("shape", _t(shape), None),
        ("dtype", f"<code>{_t(out.dtype or _MISSING)}</code>", None),
        ("device", f"<code>{_t(out.device or _MISSING)}</code>{placement}", None),
        ("conversion", _t(out.conversion or _MISSING), None),
        ("max abs err", _num(out.max_abs_err), None),
        ("max rel err", _num(out.max_rel_err), None),
        ("mismatched", _t(_MISSING if out.mismatched is None else out.mismatched), None),
        ("NaN pattern", {None: _MISSING, True: "differs", False: "same"}[out.nan_mismatch], None),
        ("rtol / atol", f"{_num(out.rtol)} / {_num(out.atol)}", None),
        ("within tolerance", _YES_NO[out.within_tolerance], _ok_class(out.within_tolerance)),
    ]
    if out.note:
        fields.append(("note", _t(out.note), None))
    rows = [
        f'<tr><th style="{_CELL}">{label}</th>{_cell(value, cls)}</tr>'
        for label, value, cls in fields
    ]
    title = f"<b><code>{_t(replay.backend)}</code></b>"
    preview = getattr(out, "preview", None)  # only if the entry carries one
    extra = "" if preview is None else f'<pre style="margin:4px 0">{_t(preview)}</pre>'
    return f"{title}<table {_TABLE}><tbody>{''.join(rows)}</tbody></table>{extra}"


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
        self.header = W.HTML(_header_html(entry))
        self.call_detail = W.HTML()
        self.calls_list: Any = None
        self.output_picker: Any = None
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
        self.children = (self.header, self.tabs)

    def _calls_tab(self) -> Any:
        calls = self.entry.calls
        if not calls:
            return W.VBox([W.HTML(_note("No array calls were recorded in this cell."))])
        findings = sum(1 for c in calls if c.status != "standard")
        intro = W.HTML(
            _note(f"{len(calls)} call site(s), {findings} finding(s). Pick a call to see its line.")
        )
        first = next((i for i, c in enumerate(calls) if c.status != "standard"), 0)
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

    def _side_tab(self) -> Any:
        names, _ = _grid(self.entry)
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
            out = _find(replay, name)
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
            except Exception:  # a plot is an illustration: never lose the widget over one
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
            print(f"porter: showing the plain view, the widget failed: {exc!r}", file=sys.stderr)
    return bundle


def show(entry: CellEntry) -> None:
    """Display one output for the cell: the widget where it renders, HTML elsewhere."""
    from IPython.display import display

    display(mimebundle(entry), raw=True)

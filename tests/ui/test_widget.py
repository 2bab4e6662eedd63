"""The comparison widget, driven as a front end would: selections set, trees walked."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass, replace
from html.parser import HTMLParser

import pytest

W = pytest.importorskip("ipywidgets")

from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

from porter_ext.model.cells import CellEntry  # noqa: E402
from porter_ext.model.entries import ReplayEntry, RewriteEntry  # noqa: E402
from porter_ext.ui import widget as widget_module  # noqa: E402
from porter_ext.ui.mime import MIME_TYPE, cell_bundle  # noqa: E402
from porter_ext.ui.widget import (  # noqa: E402
    APPLY_LABEL,
    TAB_TITLES,
    WIDGET_VIEW,
    CellWidget,
    call_detail_html,
    mimebundle,
    output_card_html,
    show,
)
from tests.ui.entries import (  # noqa: E402
    ALERT_IMG,
    ALERT_SCRIPT,
    EVIL,
    IMG,
    SCRIPT,
    call,
    demo_cell,
)

#: what porter's own markup uses; anything else in an HTML value came from person text
ALLOWED_TAGS = {"b", "br", "code", "p", "pre", "small", "span", "table", "tbody", "td"}
ALLOWED_TAGS |= {"th", "thead", "tr", "div", "h4"}  # div, h4: the text/html fallback
ALLOWED_TAGS |= {"ol", "ul", "li"}  # the port plan; the sites a rewrite left out


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[str]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        self.tags.append((tag, [name for name, _ in attrs]))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(value: str) -> _Tags:
    parser = _Tags()
    parser.feed(value)
    parser.close()
    return parser


def html_values(widget) -> list[str]:
    """The value of every HTML widget under `widget`, as the front end would receive it."""
    found = []
    if isinstance(widget, W.HTML | W.HTMLMath):
        found.append(widget.value)
    for child in getattr(widget, "children", ()):
        found += html_values(child)
    return found


def every_state_html(w: CellWidget) -> list[str]:
    """HTML values of every state reachable by clicking: each call, each output."""
    values = html_values(w)
    if w.calls_list is not None:
        for _, index in w.calls_list.options:
            w.calls_list.value = index
            values += html_values(w)
    if w.output_picker is not None:
        for name in w.output_picker.options:
            w.output_picker.value = name
            values += html_values(w)
    return values


@pytest.fixture
def entry() -> CellEntry:
    return demo_cell()


def test_children_and_tab_titles(entry):
    w = CellWidget(entry)
    # the port plan between the header and the tabs (no rewrite: nothing shown for it)
    assert w.children == (w.header, w.plan, w.tabs)
    assert "Port plan" in w.plan.value and w.rewrite.value == ""
    assert tuple(w.tabs.titles) == TAB_TITLES == ("Calls", "Numerics", "Devices", "Side by side")
    assert len(w.tabs.children) == 4
    assert "porter: 3 findings in 5 array calls" in w.header.value
    assert "cell 0" in w.header.value


@pytest.mark.parametrize("status", ["verified", "partial", "refused"])
def test_apply_button_only_for_a_verified_rewrite(entry, status):
    """The live widget carries "Apply verified rewrite" above the rewrite, as porter's
    renderer does: classes the JupyterLab extension takes the click by; a front end
    without the extension gets a note from the kernel instead of nothing."""
    rewrite = RewriteEntry(
        source="y = xp.sum(x, axis=1)\n", status=status, verified_on=["numpy"], diff="-a\n+b"
    )
    w = CellWidget(replace(entry, rewrite=rewrite))
    if status != "verified":
        assert w.apply_button is None and w.apply_note is None
        assert w.children == (w.header, w.plan, w.rewrite, w.tabs)
        return
    button = w.apply_button
    assert w.children == (w.header, w.plan, button, w.apply_note, w.rewrite, w.tabs)
    assert button.description == APPLY_LABEL == "Apply verified rewrite"
    assert {"porter-apply", "porter-widget-apply"} <= set(button._dom_classes)
    assert w.apply_note.value == ""
    button.click()  # what reaches the kernel where no extension took the click
    assert "_port.apply()" in w.apply_note.value
    assert {tag for tag, _ in parse(w.apply_note.value).tags} <= ALLOWED_TAGS


def test_calls_list_starts_on_the_first_finding(entry):
    w = CellWidget(entry)
    labels = [label for label, _ in w.calls_list.options]
    assert labels[1] == "3:4  Tensor.sum  [non_standard]  → xp.sum(x, axis=1)"
    assert labels[2].endswith("×2")
    assert w.calls_list.value == 0
    assert "xp.ones((3, 4))" in w.call_detail.value


def test_clicking_a_call_shows_suggestion_message_and_source_line(entry):
    w = CellWidget(entry)
    w.calls_list.value = 1
    detail = w.call_detail.value
    assert "<code>Tensor.sum</code>" in detail
    assert "Use instead: <code>xp.sum(x, axis=1)</code>" in detail
    assert "array methods are not in the standard; call the namespace function" in detail
    assert "line 3, column 4" in detail
    # the line itself, with a caret under the call
    assert "3 | y = x.sum(1)\n        ^</pre>" in detail
    w.calls_list.value = 3
    assert "torch.accelerator.synchronize()" in w.call_detail.value
    assert "5 | w = torch.cuda.synchronize()" in w.call_detail.value


def test_numerics_highlight_within_and_outside_tolerance(entry):
    numerics = CellWidget(entry).tabs.children[1].value
    assert "rgba(198,40,40,.14)" in numerics  # the mismatch on jax
    assert "rgba(46,125,50,.14)" in numerics  # the matches on numpy
    assert "12 mismatched" in numerics
    assert "abs 0.5" in numerics
    # failed and skipped replays are named with what happened
    assert "TypeError" in numerics and "cupy is not installed" in numerics


def test_devices_show_placement_and_findings(entry):
    devices = CellWidget(entry).tabs.children[2].value
    assert "<code>cpu:0</code> (wrong)" in devices
    assert "expected <code>cpu:1</code>" in devices
    assert "default_device_creation" in devices
    assert "created on the default device cpu:0 while the inputs were on cpu:1" in devices


def test_side_by_side_switches_outputs_and_plots_the_mismatch(entry, monkeypatch):
    drawn = []
    draw = widget_module.error_plot_png
    monkeypatch.setattr(widget_module, "error_plot_png", lambda out: drawn.append(out) or draw(out))
    w = CellWidget(entry)
    assert list(w.output_picker.options) == ["y", "z"]
    assert w.output_picker.value == "y"
    columns = w.side_by_side.children
    assert len(columns) == 2  # numpy and jax have outputs; strict and cupy none
    numpy_col, jax_col = columns
    assert "<code>numpy</code>" in numpy_col.children[0].value
    assert len(numpy_col.children) == 1  # no histogram, no plot
    image = jax_col.children[1]
    assert isinstance(image, W.Image) and bytes(image.value).startswith(b"\x89PNG")
    assert ">no</td>" in jax_col.children[0].value

    w.output_picker.value = "z"
    cards = [c.children[0].value for c in w.side_by_side.children]
    assert "(as expected)" in cards[0]
    assert "(expected <code>cpu:1</code>)" in cards[1]
    assert "copy: not 64-byte aligned" in cards[1]
    assert all(len(c.children) == 1 for c in w.side_by_side.children)

    w.output_picker.value = "y"  # back again: each plot is drawn once
    assert bytes(w.side_by_side.children[1].children[1].value) == bytes(image.value)
    assert [out.name for out in drawn] == ["y", "y", "z", "z"]


def test_value_preview_only_when_the_entry_carries_one(entry):
    replay = entry.replays[0]
    assert "<pre" not in output_card_html(replay, replay.outputs[0])

    @dataclass(frozen=True)
    class WithPreview(type(replay.outputs[0])):
        preview: str | None = None

    shown = WithPreview(**vars(replay.outputs[0]), preview=f"[1. 2. 3.]{SCRIPT}")
    card = output_card_html(replay, shown)
    assert "<pre" in card and "[1. 2. 3.]&lt;script&gt;" in card


@pytest.mark.parametrize("evil", [EVIL, SCRIPT, IMG, ALERT_SCRIPT, ALERT_IMG])
def test_person_text_is_escaped_in_every_html_value(evil):
    entry = demo_cell(evil)
    w = CellWidget(entry)
    # the widget in every state, and the text/html fallback built from the same fragments
    values = [*every_state_html(w), cell_bundle(entry)["text/html"]]
    assert len(values) > 20
    for value in values:
        parsed = parse(value)
        for tag, attrs in parsed.tags:
            assert tag in ALLOWED_TAGS, (tag, value)
            assert set(attrs) <= {"style", "class"}, (tag, attrs, value)
    text = "".join("".join(parse(v).text) for v in values)
    # every kind of person text arrives as text: source, names, messages, dtype, device
    for where in (
        "z = torch.zeros(4)  # ",  # source
        "torch.zeros",  # call name
        "no device= given",  # message
        "no CUDA here",  # the cell's error
        "float32",  # dtype
        "cpu:0",  # device
        "while the inputs were on cpu:1",  # device finding message
        "copy: not 64-byte aligned",  # conversion
    ):
        assert where + evil in text, where


def test_unicode_survives_and_the_caret_counts_characters():
    source = "α = 1\nβ = x.sum(1)  # 日本語 ✓\n"
    item = call(2, len("β = "), "Tensor.sum", "non_standard", suggestion="xp.sum(x, axis=1)")
    entry = CellEntry(index=None, execution_count=7, source=source, calls=[item])
    detail = call_detail_html(entry, item)
    assert "2 | β = x.sum(1)  # 日本語 ✓\n        ^" in detail
    w = CellWidget(entry)
    assert "In [7]" in w.header.value


def test_a_cell_with_no_calls_and_no_replays():
    entry = CellEntry(index=None, execution_count=None, source="a = 1\n")
    w = CellWidget(entry)
    assert w.calls_list is None and w.output_picker is None
    assert "no array calls recorded" in w.header.value
    values = html_values(w)
    assert any("No array calls were recorded in this cell." in v for v in values)
    assert any("not replayed" in v for v in values)
    assert any("No outputs to compare side by side." in v for v in values)


def test_replays_without_outputs_still_render():
    entry = CellEntry(
        index=1,
        execution_count=2,
        source="y = f(x)\n",
        replays=[ReplayEntry("torch", "timeout", 30.0), ReplayEntry("jax", "ok", 0.1)],
    )
    w = CellWidget(entry)
    assert w.output_picker is None
    assert "No outputs were compared." in w.tabs.children[1].value
    assert "timeout" in w.tabs.children[1].value


# --- showing it: one output, widget plus fallbacks ---------------------------------------


@pytest.fixture
def shell():
    ip = InteractiveShell.instance()
    yield ip


def test_show_without_a_kernel_displays_the_plain_bundle(shell, entry):
    assert not widget_module.has_widget_front_end()
    with capture_output() as captured:
        show(entry)
    assert len(captured.outputs) == 1
    assert captured.outputs[0].data == cell_bundle(entry)


def test_show_in_a_kernel_displays_one_output_with_widget_and_fallbacks(shell, entry, monkeypatch):
    built: list[CellWidget] = []

    class Recording(CellWidget):
        def __init__(self, entry: CellEntry) -> None:
            super().__init__(entry)
            built.append(self)

    monkeypatch.setattr(widget_module, "has_widget_front_end", lambda: True)
    monkeypatch.setattr(widget_module, "CellWidget", Recording)
    with capture_output() as captured:
        show(entry)
    assert len(captured.outputs) == 1
    data = captured.outputs[0].data
    assert {"text/plain", "text/html", MIME_TYPE, WIDGET_VIEW} <= set(data)
    assert data["text/plain"].startswith("porter: ")
    assert data[MIME_TYPE] == cell_bundle(entry)[MIME_TYPE]
    view = data[WIDGET_VIEW]
    assert view["version_major"] == 2
    assert len(built) == 1
    assert view["model_id"] == built[0].model_id and built[0].entry is entry


def test_a_widget_that_fails_to_build_falls_back(entry, monkeypatch, capsys):
    from porter_ext.guard import PorterInternalError

    monkeypatch.setattr(widget_module, "has_widget_front_end", lambda: True)

    def broken(_entry):
        raise RuntimeError("boom")

    monkeypatch.setattr(widget_module, "CellWidget", broken)
    with pytest.raises(PorterInternalError, match="boom"):  # the suite sees porter's bug
        mimebundle(entry)
    monkeypatch.setenv("PORTER_DEBUG", "0")  # a person sees the plain view and one line
    assert mimebundle(entry) == cell_bundle(entry)
    assert "building the widget" in capsys.readouterr().err


def test_nbconvert_renders_the_html_fallback_of_a_saved_widget_output(entry, monkeypatch):
    nbformat = pytest.importorskip("nbformat")
    nbconvert = pytest.importorskip("nbconvert")
    monkeypatch.setattr(widget_module, "has_widget_front_end", lambda: True)
    bundle = mimebundle(entry)
    assert WIDGET_VIEW in bundle
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("%%port\n" + entry.source)
    cell.outputs = [nbformat.v4.new_output("display_data", data=bundle)]
    nb.cells = [cell]
    html, _ = nbconvert.HTMLExporter(template_name="basic").from_notebook_node(nb)
    # no widget state was saved, so nbconvert shows the HTML instead of a dead widget
    assert '<div class="porter-cell">' in html
    assert bundle[WIDGET_VIEW]["model_id"] not in html


def test_display_of_the_widget_itself_carries_the_fallbacks(entry):
    data = CellWidget(entry)._repr_mimebundle_()
    assert {"text/plain", "text/html", MIME_TYPE, WIDGET_VIEW} <= set(data)


def test_without_ipywidgets_show_falls_back_and_the_widget_says_what_to_install():
    code = """
import sys
sys.modules["ipywidgets"] = None
from porter_ext.model.cells import CellEntry
from porter_ext.ui.widget import CellWidget, WIDGET_VIEW, mimebundle, has_widget_front_end
entry = CellEntry(index=None, execution_count=None, source="a = 1")
assert not has_widget_front_end()
assert WIDGET_VIEW not in mimebundle(entry)
try:
    CellWidget(entry)
except ImportError as exc:
    print(exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert "pip install ipywidgets" in done.stdout


def test_importing_porter_ext_ui_loads_nothing_heavy():
    code = (
        "import sys, porter_ext.ui\n"
        "heavy = [m for m in ('ipywidgets', 'matplotlib', 'pandas', 'jinja2', 'torch')"
        " if m in sys.modules]\n"
        "print(heavy)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.strip() == "[]"

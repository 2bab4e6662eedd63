"""The HTML view: self-contained, complete, escaped, and small at any notebook size."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from dataclasses import replace
from html.parser import HTMLParser

from porter_ext.model.calls import ErrorInfo
from porter_ext.model.comparison import DeviceFinding
from porter_ext.report import (
    BackendEntry,
    CellEntry,
    Environment,
    ErrorHistogram,
    Report,
    render_html,
)
from tests.report.conftest import (
    make_call,
    make_cell,
    make_environment,
    make_output,
    make_replay,
    make_report,
    mismatched_entry,
)

XSS = [
    "<script>alert(1)</script>",
    '"><img src=x onerror=alert(1)>',
    "a|b`c``d",
    "</script><!--",
]
EVIL = " ".join(XSS)


class _Tags(HTMLParser):
    """Every start tag with its attributes, the text of <script> elements, and all text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self.text: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_script:
            self.scripts[-1] += data


def _tags(html: str) -> _Tags:
    parser = _Tags()
    parser.feed(html)
    parser.close()
    return parser


def _assert_self_contained(html: str) -> None:
    assert "http://" not in html and "https://" not in html
    assert "<link" not in html.lower()
    assert "@import" not in html and "url(" not in html
    for tag, attrs in _tags(html).tags:
        for name in ("src", "href", "srcset", "action", "data"):
            value = attrs.get(name)
            # in-page links (the plan's cells) load nothing
            inner = tag == "a" and name == "href" and value and value.startswith("#cell-")
            assert value is None or inner or value.startswith("data:image/png;base64,"), (
                tag,
                attrs,
            )


def test_self_contained_with_every_section(report: Report) -> None:
    html = render_html(report)
    _assert_self_contained(html)
    for section in (
        'id="summary"',
        "Top findings",
        'id="environment"',
        'id="cells"',
        "<h4>Calls</h4>",
        "<h4>Numerics</h4>",
        "<h4>Devices</h4>",
        "<h4>Findings</h4>",
        "<h4>Replays</h4>",
    ):
        assert section in html, section
    assert html.startswith("<!doctype html>")
    assert "Content-Security-Policy" in html


def test_environment_shows_unavailable_backends_with_reason(report: Report) -> None:
    html = render_html(report)
    assert "cupy is not installed" in html
    assert "cpu:0, cpu:1" in html


def test_flagged_lines_are_highlighted_and_annotated(report: Report) -> None:
    html = render_html(report)
    cell0 = html[html.index('id="cell-0"') : html.index('id="cell-1"')]
    assert '<div class="f"><i>3</i>m = torch.max(x, y)</div>' in cell0
    assert "torch.max — non_standard_usage → xp.maximum(x, y)" in cell0
    assert "<div><i>1</i>import torch</div>" in cell0  # not flagged
    cell1 = html[html.index('id="cell-1"') : html.index('id="cell-2"')]
    # the original error and the replay error are marked at line 3
    assert '<div class="e"><i>3</i>' in cell1
    assert "raised RuntimeError: Expected all tensors to be on the same device" in cell1
    assert "on jax:cpu:1: TypeError: max() received" in cell1
    assert "Raised TypeError at line 3: max() received" in cell1


def test_numerics_and_devices_highlight_problems(report: Report) -> None:
    html = render_html(report)
    cell1 = html[html.index('id="cell-1"') : html.index('id="cell-2"')]
    assert '<td class="bad">differs (max abs err' in cell1  # the output's verdict, in words
    assert '<td class="bad">wrong' in cell1  # device
    assert "cpu:0<td>cpu:1" in cell1
    assert '<td class="ok">matches' in html
    assert "timed out after 30 s" in cell1


def test_plots_only_where_something_went_wrong(report: Report) -> None:
    html = render_html(report)
    cells = html.split('<section class="cell porter-cell"')
    assert cells[2].count("data:image/png;base64,") == 2  # error + device matrix of cell 1
    assert sum(c.count("<img") for i, c in enumerate(cells) if i != 2) == 0
    clean = make_report(5)
    assert "<img" not in render_html(clean)


def test_plot_budget_caps_figures() -> None:
    cells = [
        make_cell(i, replays=[make_replay("numpy", outputs=[mismatched_entry(shape=(8, 8))])])
        for i in range(4)
    ]
    report = Report.build(cells, make_environment(), array_api_version="2024.12")
    html = render_html(report, max_plots=2)
    assert html.count("<img") == 2
    assert html.count("1 plot(s) omitted to keep the report small") == 2


def test_without_matplotlib_plots_are_omitted_with_the_reason(monkeypatch) -> None:
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "matplotlib" else real(name, *a),
    )
    cell = make_cell(0, replays=[make_replay("numpy", outputs=[mismatched_entry()])])
    html = render_html(Report.build([cell], make_environment(), array_api_version="x"))
    assert "<img" not in html
    assert "1 plot(s) omitted because matplotlib is not installed" in html


def test_rendering_does_not_touch_pyplot() -> None:
    code = (
        "import sys; from tests.report.conftest import make_cell, make_replay, mismatched_entry,"
        " make_environment; from porter_ext.report import Report, render_html;"
        "c = make_cell(0, replays=[make_replay('numpy', outputs=[mismatched_entry()])]);"
        "html = render_html(Report.build([c], make_environment(), array_api_version='x'));"
        "assert '<img' in html; print('matplotlib.pyplot' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_importing_the_package_is_cheap() -> None:
    code = (
        "import sys, porter_ext.report;"
        "print([m for m in ('jinja2', 'jsonschema', 'matplotlib') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def _evil_report() -> Report:
    call = make_call(
        1,
        name=EVIL,
        suggestion=EVIL,
        message=EVIL,
        devices_in=[EVIL],
        device_out=EVIL,
        standard_name=EVIL,
    )
    output = make_output(
        EVIL,
        device=EVIL,
        expected_device=EVIL,
        device_ok=False,
        dtype=EVIL,
        conversion=EVIL,
        mismatch=True,
    )
    output = replace(output, error_histogram=ErrorHistogram([0.0, 1.0], [3]))
    cell = CellEntry(
        index=0,
        execution_count=1,
        source=f"x = 1  # {EVIL}\ny = f(x)\n",
        error=ErrorInfo(EVIL, EVIL, 1),
        calls=[replace(call, line=2)],
        device_findings=[DeviceFinding(2, EVIL, "cross_device", EVIL, EVIL)],
        replays=[
            make_replay(EVIL, outputs=[output], calls=[replace(call, line=1)]),
            make_replay("numpy", "error", error=ErrorInfo(EVIL, EVIL, 2)),
            make_replay("cupy", "skipped", reason=EVIL),
        ],
    )
    env = Environment(EVIL, [BackendEntry(EVIL, EVIL, EVIL, False, [EVIL], EVIL)])
    return Report.build([cell], env, array_api_version=EVIL, notebook=EVIL, porter_version=EVIL)


def test_person_text_is_escaped_everywhere() -> None:
    html = render_html(_evil_report())
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert html.count("<img") == 2  # the error plot and the device matrix, nothing else
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;" in html
    parsed = _tags(html)
    alts = [attrs["alt"] for tag, attrs in parsed.tags if tag == "img"]
    assert alts[0].startswith(f"{EVIL} on {EVIL}: 5 mismatched")  # the attribute held
    for tag, attrs in parsed.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
    assert [tag for tag, _ in parsed.tags].count("script") == 2  # meta JSON + the sorter
    _assert_self_contained(html)


def test_embedded_json_cannot_close_its_script() -> None:
    html = render_html(_evil_report())
    start = html.index('<script type="application/json" id="porter-meta">')
    end = html.index("</script>", start)
    body = html[start + len('<script type="application/json" id="porter-meta">') : end]
    assert "<" not in body and "-->" not in body.replace("\\u003e", "")
    meta = json.loads(body)
    assert meta["source"]["notebook"] == EVIL
    assert meta["summary"]["cells"] == 1


def test_unicode_survives() -> None:
    text = "Δx = √(α² + β²)  # 日本語 🙂 \u2028 end"
    cell = make_cell(0, source=text + "\n", calls=1)
    report = Report.build(
        [cell], make_environment(), array_api_version="2024.12", notebook="résumé.ipynb"
    )
    html = render_html(report)
    assert "Δx = √(α² + β²)  # 日本語 🙂" in html
    assert "résumé.ipynb" in html
    assert '<meta charset="utf-8">' in html


def test_line_numbers_follow_python_not_str_splitlines() -> None:
    source = "a = '\u2028\x0c'\r\nb = f(a)\rc = g(b)\n"
    cell = make_cell(0, calls=0, replays=0, source=source, device_findings=[])
    cell = replace(cell, calls=[make_call(1, line=3, name="g")])
    html = render_html(Report.build([cell], make_environment(), array_api_version="x"))
    assert '<div class="f"><i>3</i>c = g(b)</div>' in html
    assert "<i>4</i>" not in html


def test_empty_report_and_cells_without_calls() -> None:
    empty = Report.build([], Environment("3.11.9"), array_api_version="2024.12")
    html = render_html(empty)
    assert "No cells were recorded." in html
    assert "No backends were listed." in html
    assert "No call outside the standard was recorded." in html
    quiet = CellEntry(None, None, "")
    html = render_html(Report.build([quiet], Environment("3.11"), array_api_version="x"))
    assert '<p class="cell quiet porter-cell" id="cell-0"><b>Cell</b> · no array work' in html
    assert "<h3>Cell</h3>" not in html  # a cell without array work is one line
    failed = CellEntry(None, None, "x = 1", error=ErrorInfo("ValueError", "no"))
    html = render_html(Report.build([failed], Environment("3.11"), array_api_version="x"))
    assert "No array calls were recorded in this cell." in html
    assert "<h3>Cell</h3>" in html


def test_long_sources_and_messages_are_capped() -> None:
    source = "\n".join(f"x{i} = {'y' * 1000}" for i in range(2000))
    cell = make_cell(0, source=source, calls=1000, error=ErrorInfo("ValueError", "z" * 10**6, 1))
    html = render_html(Report.build([cell], make_environment(), array_api_version="x"))
    assert len(html.encode()) < 1_000_000
    assert "1600 more source lines are in the JSON report." in html
    assert "600 more calls are in the JSON report." in html


def test_a_big_report_stays_small_and_fast() -> None:
    report = make_report(2000, calls=5, replays=2)
    start = time.perf_counter()
    html = render_html(report)
    seconds = time.perf_counter() - start
    size = len(html.encode())
    # each cell also carries its plan and its diagnostics rows (issue 27): ~5 kB a cell
    assert size < 11_000_000, size
    print(f"\n2000-cell report rendered in {seconds:.2f} s")
    assert html.count('<section class="cell porter-cell"') == 2000
    assert re.search(r"<b>2000</b>cells", html)

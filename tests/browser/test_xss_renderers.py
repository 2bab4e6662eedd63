"""Hostile text in every string field of a report stays inert in every renderer, in Chromium.

Every renderer porter has: the HTML report, the Markdown report (rendered with raw HTML
allowed, harsher than GitHub's sanitiser), a cell's text/html (the report's cell
template, also put into a page through ``innerHTML``, as a front end without porter's
extension does) and ``%port report``'s display bundles. In each: no script runs, no
element is injected, no request leaves the file, and bidi controls never reach the page
raw. The JupyterLab renderer has its own test beside the extension.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from porter_ext.model.report import Report
from porter_ext.report.codec import report_from_dict, report_to_dict
from porter_ext.report.html import render_html
from porter_ext.report.markdown import render_markdown
from porter_ext.report.validation import report_schema, validate
from porter_ext.ui.mime import cell_html
from porter_ext.ui.report import report_bundle
from tests.browser.support import PageLog, offline
from tests.ui.entries import EVIL, demo_report

pytestmark = pytest.mark.browser

#: what every string field gets: HTML, attribute breakout, script-closing, template syntax,
#: a bidi override; each payload sets window.__xss or the title if it ever runs
PAYLOAD = (
    f'{EVIL} </script><script>window.__xss=2</script> "\'><svg onload="window.__xss=3">'
    " {{7*7}} ${7*7} \u202eevil\u202c <iframe src=javascript:window.__xss=4>"
)


def _enum_keys() -> set[str]:
    """Keys whose values the schema fixes (enums, directly or through a ``$ref``): those
    cannot take free text."""
    schema = report_schema()
    keys: set[str] = set()

    def fixed(node: dict) -> bool:
        ref = node.get("$ref", "")
        target = schema["$defs"].get(ref.rpartition("/")[2], {}) if ref else {}
        return "enum" in node or "const" in node or "enum" in target or "const" in target

    def walk(node: Any, key: str | None) -> None:
        if isinstance(node, dict):
            if fixed(node) and key:
                keys.add(key)
            for k, v in node.items():
                if k == "properties":
                    for name, sub in v.items():
                        walk(sub, name)
                else:
                    walk(v, key)
        elif isinstance(node, list):
            for v in node:
                walk(v, key)

    walk(schema, None)
    return keys


def hostile_report() -> Report:
    """The demo report with the payload appended to every free string field (and to the
    names of dict keys where the model has them), notes included."""
    base = demo_report(EVIL)
    base = replace(base, cells=[replace(c, notes=[f"note{PAYLOAD}"]) for c in base.cells])
    fixed = _enum_keys()

    def hostile(node: Any, key: str | None = None) -> Any:
        if isinstance(node, str):
            return node if key in fixed else node + PAYLOAD
        if isinstance(node, list):
            return [hostile(v, key) for v in node]
        if isinstance(node, dict):
            return {k: hostile(v, k) for k, v in node.items()}
        return node

    data = hostile(report_to_dict(base))
    validate(data)
    return report_from_dict(data)


@pytest.fixture(scope="module")
def report() -> Report:
    return hostile_report()


def _page_html(body: str) -> str:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>porter test</title></head>"
        f"<body>{body}</body></html>"
    )


def _inner_html_page(parts: list[str]) -> str:
    """A page that puts each fragment in through innerHTML, as a front end does."""
    script = (
        "for (const part of JSON.parse(document.getElementById('parts').textContent)) {"
        " const div = document.createElement('div'); div.innerHTML = part;"
        " document.body.appendChild(div); }"
    )
    data = json.dumps(parts).replace("<", "\\u003c")
    return _page_html(
        f"<script type='application/json' id='parts'>{data}</script><script>{script}</script>"
    )


def _markdown_as_html(text: str) -> str:
    mistune = pytest.importorskip("mistune")
    render = mistune.create_markdown(escape=False, plugins=["table", "strikethrough"])
    return _page_html(render(text))


RENDERERS = {
    "html report": lambda r: render_html(r),
    "markdown report": lambda r: _markdown_as_html(render_markdown(r)),
    "text/html fallback": lambda r: _page_html("".join(cell_html(c) for c in r.cells)),
    "cell text/html via innerHTML": lambda r: _inner_html_page([cell_html(c) for c in r.cells]),
    "%port report (html)": lambda r: _page_html(report_bundle(r, "html")["text/html"]),
    "%port report (md)": lambda r: _markdown_as_html(report_bundle(r, "md")["text/markdown"]),
}

INJECTED = "img[src='x'], img[onerror], svg, [onload], [onerror], iframe[src^='javascript'], b > b"


def _check_inert(page: Any, page_log: PageLog, text: str) -> None:
    assert "\u202e" not in text  # no bidi override reaches the page raw
    page.wait_for_timeout(200)
    for frame in page.frames:
        assert frame.evaluate("typeof window.__xss") == "undefined", frame.url
        assert frame.evaluate(f"document.querySelectorAll({INJECTED!r}).length") == 0, frame.url
        assert not frame.evaluate("document.title").startswith("PWNED")
        code = frame.evaluate(
            "[...document.scripts].filter(s => s.type !== 'application/json')"
            ".map(s => s.textContent)"
        )
        assert not any("__xss" in c for c in code), frame.url  # no script of the payload
    assert page_log.dialogs == []
    assert page_log.errors == []
    assert page_log.blocked == []
    assert all(url.startswith(("file:", "data:", "about:")) for url in page_log.requests)


@pytest.mark.parametrize("renderer", sorted(RENDERERS))
def test_every_renderer_keeps_hostile_text_inert(page, page_log, tmp_path, report, renderer):
    text = RENDERERS[renderer](report)
    path = tmp_path / "page.html"
    path.write_text(text, encoding="utf-8")
    offline(page, page_log)
    page.goto(path.as_uri(), wait_until="load")
    _check_inert(page, page_log, text)
    shown = "".join(f.evaluate("document.body ? document.body.innerText : ''") for f in page.frames)
    assert "<script>window.__xss=1</script>" in shown or renderer.startswith("%port report (md")
    assert "\\u202e" in shown  # the override is shown as its escape


#: string fields the model derives on reading a report, not read from it (``kind_text``
#: and ``sum_format``: fixed words for a kind and for the panel's count line; ``place``:
#: a row's line in words, "line 4"; ``severity_text``: a row's severity and kind in
#: words)
DERIVED = {
    "label",
    "verdict_text",
    "applied",
    "stale",
    "kind_text",
    "sum_format",
    "place",
    "severity_text",
}
#: the same, by where they are, for a key that elsewhere holds free text: the summary's
#: counts in words (an error's and the environment's ``text`` hold the person's text)
DERIVED_AT = {"report.summary.text"}


def test_every_string_field_was_made_hostile(report):
    """The fixture itself: no free string field of the report escaped the payload (the
    fields the model derives when it reads a report are made of the others: a cell's
    label of its numbers, an output's verdict in words, the fixed words of source states,
    of a plan item's kind and of the panel's count line, a row's place by its line, the
    summary's counts)."""
    fixed = _enum_keys() | DERIVED
    plain: list[str] = []

    def walk(node: Any, key: str | None, where: str) -> None:
        if isinstance(node, str):
            if key not in fixed and where not in DERIVED_AT and PAYLOAD not in node:
                plain.append(where)
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, key, f"{where}[{i}]")
        elif isinstance(node, dict):
            for k, v in node.items():
                walk(v, k, f"{where}.{k}")

    walk(report_to_dict(report), None, "report")
    assert not plain


@pytest.mark.slow
def test_a_hostile_notebook_through_porter_run(page, page_log, tmp_path):
    """adv_28 (held before, kept): hostile text in cell sources, dict keys, exception and
    replay messages, a device spec and the notebook name, through a real `porter run`."""
    import nbformat

    def pay(tag: str) -> str:
        return (
            f"<img src=x onerror=\"document.title='PWNED_{tag}'\"><script>document.title="
            f"'PWNED_{tag}'</script>\"><svg onload=\"document.title='PWNED_{tag}'\"></script>"
            f"<script>document.title='PWNED_{tag}'</script>{{{{7*7}}}}"
        )

    cells = [
        f"import numpy as np\nK = {pay('KEY')!r}\nd = {{K: np.ones(2)}}\na = np.arange(3.0)",
        f"# {pay('SRC')}\nd[K] += 1\nb = a.sum(0)",
        f"raise ValueError({pay('EXC')!r})",
        f"if 'numpy' not in type(a).__module__:\n    raise RuntimeError({pay('REPLAY')!r})\n"
        "c = a + 1",
    ]
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in cells]
    path = tmp_path / "\"><img src=x onerror=document.title='PWNED_NB'>.ipynb"
    nbformat.write(nb, path)
    out = tmp_path / "r.html"
    exe = shutil.which("porter") or str(Path(sys.executable).parent / "porter")
    result = subprocess.run(
        [exe, "run", str(path), "-b", "numpy,strict,strict:<b>dev</b>", "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stderr
    offline(page, page_log)
    page.goto(out.as_uri(), wait_until="load")
    _check_inert(page, page_log, out.read_text(encoding="utf-8"))
    assert page.title().startswith("porter report: ")
    assert page.locator("script").count() == 2  # the report's own: metadata and sorting

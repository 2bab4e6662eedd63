"""Columns count characters (code points) of the line, as editors do, in every view:
accents, an emoji and CJK earlier on a line do not move a position (CONTRACT.md: ``col``)."""

from __future__ import annotations

import ast
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from porter_ext.record.cell import run_recorded
from porter_ext.record.positions import Columns, char_col, in_characters
from porter_ext.report.codec import report_to_json

LINE = 'label = "température 🔥 東京"; y = np.power(x, 2); z = x.sum(1)'
#: what ast says (UTF-8 bytes) and what an editor says (characters) of np.power there
BYTES, CHARS = LINE.encode().index(b"np.power"), LINE.index("np.power")
LABEXTENSION = Path(__file__).resolve().parent.parent / "labextension"


def test_byte_columns_become_character_columns():
    assert BYTES - CHARS == 1 + 3 + 2 + 2  # é, 🔥 and two CJK characters: bytes beyond one
    assert char_col(LINE, BYTES) == CHARS
    assert char_col("x = 1", 4) == 4 and char_col(LINE, 0) == 0
    source = f"import numpy as np\n{LINE}\r\ncafé = 1\n"
    columns = Columns(source)
    assert columns(2, BYTES) == CHARS and columns(1, 7) == 7 and columns(3, 7) == 6
    call = next(n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call))
    end = LINE.index("(x, 2)") + len("(x, 2)")
    assert columns.span(call) == (2, CHARS, 2, end)
    assert Columns("plain = 1\n")(1, 8) == 8  # ASCII throughout: the byte column as is


def test_recorded_calls_and_operators_carry_character_columns():
    source = (
        f"{LINE}\nw = {{'ключ': 1}}; v = x + y\ndef f(a):\n    s = 'ß'; return a.mean()\nf(x)\n"
    )
    run = run_recorded(source, {"np": np, "x": np.ones((2, 3))})
    lines = source.split("\n")
    found = {c.name: (c.line, c.col) for c in run.calls}
    assert found["numpy.power"] == (1, CHARS)
    assert found["ndarray.sum"] == (1, LINE.index("x.sum"))
    assert found["ndarray.mean"] == (4, lines[3].index("a.mean"))
    operator = next(c for c in run.calls if c.kind == "operator")
    assert (operator.line, operator.col) == (2, lines[1].index("x + y"))


@pytest.fixture
def numpy_shell(port_shell):
    port_shell.run_cell("import numpy as np\nx = np.linspace(-1, 1, 12).reshape(3, 4)\n")
    yield port_shell
    port_shell.run_line_magic("port", "off")


def test_report_json_and_views_put_the_call_under_its_characters(numpy_shell, tmp_path):
    from porter_ext.report.html import render_html
    from porter_ext.report.markdown import render_markdown
    from porter_ext.session import get_session
    from porter_ext.ui.mime import cell_html

    result = numpy_shell.run_cell(f"%%port --no-control -b numpy --in-process\n{LINE}\n")
    assert result.success
    port = numpy_shell.user_ns["_port"]
    bundle = port._repr_mimebundle_()
    calls = bundle["application/vnd.porter.cell+json"]["calls"]
    assert [(c["name"], c["line"], c["col"]) for c in calls] == [
        ("numpy.power", 1, CHARS),
        ("ndarray.sum", 1, LINE.index("x.sum")),
    ]
    report = json.loads(report_to_json(get_session(numpy_shell).report()))
    assert [c["col"] for c in report["cells"][-1]["calls"]] == [CHARS, LINE.index("x.sum")]
    # the cell's own output (the report's cell template) names the character column, on
    # the line as the editor counts it (line 2, below the %%port line)
    html = cell_html(port.entry)
    assert f"<td>2:{CHARS}<td>numpy.power" in html and f"col {CHARS}: numpy.power" in html
    whole = get_session(numpy_shell).report()
    assert f"col {CHARS}: numpy.power" in render_html(whole)
    assert f"2:{CHARS}" in render_markdown(whole)


def test_port_on_records_character_columns(numpy_shell):
    numpy_shell.run_line_magic("port", "on")
    numpy_shell.run_cell(f"{LINE}\n", store_history=True)
    calls = numpy_shell.user_ns["_port"].entry.calls
    assert [(c.name, c.col) for c in calls][:1] == [("numpy.power", CHARS)]


def test_fix_rewrites_and_verifies_a_line_with_non_ascii_text(numpy_shell):
    result = numpy_shell.run_cell(f"%%port --fix --no-control -b numpy --in-process\n{LINE}\n")
    assert result.success
    port = numpy_shell.user_ns["_port"]
    rewrite = port.entry.rewrite
    assert rewrite.status == "verified", rewrite.reason
    assert [(s.name, s.col, s.applied) for s in rewrite.sites] == [
        ("numpy.power", CHARS, True),
        ("ndarray.sum", LINE.index("x.sum"), True),
    ]
    assert 'label = "température 🔥 東京"; y = xp.pow(x, 2); z = xp.sum(x, axis=1)' in port.rewrite


def test_rewrite_source_finds_sites_after_non_ascii_text():
    from porter_ext.fix.rewrite import rewrite_source

    source = "import numpy as np\ndef f(x):\n    s = '東京 🔥'; return np.concatenate([x, x])\n"
    rewrite = rewrite_source(source)
    assert [(s.line, s.col, s.replacement) for s in rewrite.sites] == [
        (3, source.split("\n")[2].index("np."), "xp.concat([x, x])")
    ]


def test_in_characters_converts_lint_sites():
    from porter_ext.fix.checks import Site

    site = Site(1, BYTES, 1, BYTES + len("np.power(x, 2)"), "PA001", "numpy.power", "m", None)
    (moved,) = in_characters([site], [LINE])
    assert (moved.col, moved.end_col) == (CHARS, CHARS + len("np.power(x, 2)"))
    ascii_site = Site(1, 4, 1, 9, "PA001", "numpy.power", "m", None)
    assert in_characters([ascii_site], ["y = np.power(x)"]) == [ascii_site]


def test_lint_json_and_sarif_columns_count_characters():
    from porter_ext.fix.formats import as_sarif
    from porter_ext.fix.lint import LintResult, lint_source

    findings = lint_source(f"import numpy as np\n{LINE}\n")
    power = next(f for f in findings if f.name == "numpy.power")
    assert (power.col, power.end_col) == (CHARS, CHARS + len("np.power(x, 2)"))
    assert power.to_json()["col"] == CHARS
    run = json.loads(as_sarif(LintResult(findings, 1, [])))["runs"][0]
    region = run["results"][0]["locations"][0]["physicalLocation"]["region"]
    assert region["startColumn"] == CHARS + 1


def test_sarif_says_its_columns_are_code_points():
    from porter_ext.fix.formats import as_sarif
    from porter_ext.fix.lint import LintResult

    assert json.loads(as_sarif(LintResult([], 0, [])))["runs"][0]["columnKind"] == (
        "unicodeCodePoints"
    )


_NODE_RUNNER = """
const ts = require(process.argv[1] + '/node_modules/typescript');
const fs = require('fs');
const src = fs.readFileSync(process.argv[1] + '/src/columns.ts', 'utf8');
const options = { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2018 };
const js = ts.transpileModule(src, { compilerOptions: options }).outputText;
const m = { exports: {} };
new Function('module', 'exports', js)(m, m.exports);
const cases = JSON.parse(fs.readFileSync(0, 'utf8'));
console.log(JSON.stringify(cases.map(([text, col]) => m.exports.utf16Column(text, col))));
"""


def test_the_extension_turns_character_columns_into_utf16_offsets():
    node = shutil.which("node")
    if node is None or not (LABEXTENSION / "node_modules" / "typescript").is_dir():
        pytest.skip("needs node and the extension's node_modules (jlpm install)")
    lone = "a\ud83db"  # a lone surrogate counts one unit, as one character
    cases = [[LINE, CHARS], [LINE, len(LINE)], [LINE, len(LINE) + 5], ["ab", -1], [lone, 2]]
    done = subprocess.run(
        [node, "-e", _NODE_RUNNER, str(LABEXTENSION)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    utf16 = len(LINE.encode("utf-16-le")) // 2
    emoji = LINE.index("🔥")
    assert json.loads(done.stdout) == [CHARS + 1, utf16, utf16, 0, 2]
    assert LINE.encode("utf-16-le")[: 2 * (CHARS + 1)].decode("utf-16-le") == LINE[:CHARS]
    assert emoji < CHARS

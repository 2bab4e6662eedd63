"""The port plan: distinct fixes ranked by what they unblock, at the top of every view."""

from __future__ import annotations

import dataclasses
import io
import json

from porter_ext.cli import print_plan
from porter_ext.model.calls import CallRecord, ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.comparison import DeviceFinding
from porter_ext.model.entries import ReplayEntry, RewriteEntry, RewriteSiteEntry
from porter_ext.model.plan import build_plan, plan_line
from porter_ext.model.report import Environment, Report
from porter_ext.report.codec import report_to_json
from porter_ext.report.html import render_html
from porter_ext.report.load import report_from_json
from porter_ext.report.markdown import render_markdown
from porter_ext.report.validation import validate
from porter_ext.ui.mime import cell_html, cell_text


def _call(
    line: int,
    name: str,
    status: str = "non_standard",
    suggestion: str | None = None,
    count: int = 1,
) -> CallRecord:
    return CallRecord(
        line=line,
        col=4,
        name=name,
        library="torch",
        kind="method",
        status=status,
        suggestion=suggestion,
        count=count,
    )


def _failed(backend: str, line: int, message: str) -> ReplayEntry:
    error = ErrorInfo("AttributeError", message, line)
    return ReplayEntry(backend=backend, status="error", error=error)


VIEW = "'numpy.ndarray' object has no attribute 'view'"


def _notebook() -> list[CellEntry]:
    loop = CellEntry(
        0,
        1,
        "import torch\nfor i in range(661):\n    y = x.view(-1)\n",
        calls=[_call(3, "Tensor.view", suggestion="xp.reshape(x, (-1,))", count=661)],
        replays=[_failed("numpy", 3, VIEW), _failed("jax", 3, VIEW)],
    )
    again = CellEntry(
        1,
        2,
        "z = x.view(-1)\nm = torch.max(a, b)\n",
        calls=[
            _call(1, "Tensor.view", suggestion="xp.reshape(x, (-1,))"),
            _call(2, "torch.max", "non_standard_usage", "xp.maximum(a, b)"),
        ],
        replays=[_failed("numpy", 1, VIEW)],
    )
    device = CellEntry(
        2,
        3,
        "w = torch.zeros(3)\nw = w.cuda()\n",
        calls=[_call(2, "Tensor.cuda", "device_specific", "xp.asarray(w, device=dev)")],
        device_findings=[
            DeviceFinding(
                1, "torch.zeros", "default_device_creation", "torch:cuda:0", "created on cpu"
            )
        ],
    )
    quiet = CellEntry(3, 4, "n = 10\n")
    return [loop, again, device, quiet]


def test_replay_failures_come_first_with_the_line_and_why_one_item_per_distinct_fix():
    plan = build_plan(_notebook())
    assert [item.kind for item in plan] == [
        "replay_failure",
        "non_standard",
        "non_standard",
        "device",
        "device",
    ]
    first = plan[0]
    # the same error in two cells is one fix, on every backend it broke
    assert first.cells == ["cell 1 · In [1]", "cell 2 · In [2]"]
    assert "numpy, jax" in first.title and "line 3 `y = x.view(-1)`" in first.title
    assert VIEW in first.title and first.detail == f"AttributeError: {VIEW}"
    assert [(s.cell, s.line) for s in first.sites] == [
        ("cell 1 · In [1]", 3),
        ("cell 2 · In [2]", 1),
    ]


def test_calls_are_grouped_by_replacement_and_ranked_by_cells_not_by_call_counts():
    plan = build_plan(_notebook())
    view, maximum = plan[1], plan[2]
    assert view.title == "Tensor.view → xp.reshape(x, (-1,))"
    assert view.cells == ["cell 1 · In [1]", "cell 2 · In [2]"] and len(view.sites) == 2  # not 662
    assert maximum.title == "torch.max → xp.maximum(a, b)" and maximum.cells == ["cell 2 · In [2]"]
    # a call running 661 times in one cell ranks below a fix needed in two cells
    lone = CellEntry(0, 1, "y = x.view(-1)\n", calls=[_call(1, "Tensor.view", count=661)])
    two = [CellEntry(i, i, "m = a.T\n", calls=[_call(1, "Tensor.T")]) for i in (1, 2)]
    assert [item.title.split(":")[0] for item in build_plan([lone, *two])] == [
        "Tensor.T",
        "Tensor.view",
    ]
    # one replacement spelled with each site's own arguments is still one fix
    sums = [
        CellEntry(
            i,
            i,
            f"s = a{i}.sum()\n",
            calls=[
                CallRecord(
                    1, 4, "ndarray.sum", "numpy", "method", "non_standard", "sum", f"xp.sum(a{i})"
                )
            ],
        )
        for i in range(3)
    ]
    (item,) = build_plan(sums)
    assert item.cells == ["cell 1 · In [0]", "cell 2 · In [1]", "cell 3 · In [2]"]
    assert item.title == "ndarray.sum → xp.sum(a0)"
    device = [item for item in plan if item.kind == "device"]
    assert {item.title for item in device} == {
        "Tensor.cuda → xp.asarray(w, device=dev)",
        "default device creation: torch.zeros",
    }


def test_a_verified_rewrite_makes_a_fix_automatic_and_only_where_it_applied():
    cells = _notebook()
    site = RewriteSiteEntry(2, 4, "torch.max", "torch.max(a, b)", "xp.maximum(a, b)", True)
    refused = RewriteSiteEntry(1, 4, "Tensor.view", "x.view(-1)", None, False, "needs a run")
    rewrite = RewriteEntry(
        "z = x.view(-1)\nm = xp.maximum(a, b)\n", "partial", ["torch", "numpy"], [refused, site]
    )
    cells[1] = dataclasses.replace(cells[1], rewrite=rewrite)
    plan = {item.title.split(" →")[0].split(" fails")[0]: item for item in build_plan(cells)}
    # a partial rewrite is offered to no one: its sites are not fixed automatically
    assert not plan["torch.max"].automatic and plan["torch.max"].state == "partial"
    verified = dataclasses.replace(rewrite, status="verified")
    cells[1] = dataclasses.replace(cells[1], rewrite=verified)
    plan = {item.title.split(" →")[0].split(" fails")[0]: item for item in build_plan(cells)}
    assert plan["torch.max"].automatic
    assert plan["torch.max"].verdict == "verified rewrite (Apply offered)"
    assert not plan["Tensor.view"].automatic  # refused in cell 2, and cell 0 has no rewrite
    failure = next(item for item in build_plan(cells) if item.kind == "replay_failure")
    assert not failure.automatic  # cell 0's replays still fail on numpy and jax
    # refused in cell 1 (its site's reason), left to the person in cell 0
    assert plan_line(plan["Tensor.view"]).startswith("[needs you: needs a run] Tensor.view")
    # a refused rewrite covers nothing
    none = dataclasses.replace(cells[1], rewrite=RewriteEntry("", "refused", [], [site]))
    assert not any(i.automatic for i in build_plan([none]))


def test_the_plan_is_in_the_json_report_first_validated_and_round_tripped():
    report = Report.build(_notebook(), Environment("3.11"), array_api_version="2025.12")
    data = json.loads(report_to_json(report))
    assert list(data).index("plan") < list(data).index("cells")
    validate(data)
    assert set(data["plan"][0]) >= {"kind", "title", "cells", "sites", "automatic"}
    assert report_from_json(report_to_json(report)) == report
    bad = json.loads(report_to_json(report))
    bad["plan"][0]["title"] = 3
    try:
        validate(bad)
    except ValueError as exc:
        assert "plan[0].title" in str(exc)
    else:
        raise AssertionError("a plan item whose title is a number passed the schema")


def test_html_report_opens_with_the_plan_collapses_quiet_cells_and_folds_tables():
    html = render_html(Report.build(_notebook(), Environment("3.11"), array_api_version="x"))
    assert html.index('id="plan"') < html.index('id="summary"') < html.index('id="cells"')
    plan = html[html.index('id="plan"') : html.index('id="summary"')]
    assert plan.count("<li") == 5 and "needs you" in plan
    assert '<a href="#cell-1">cell 2 · In [2]</a>' in plan
    # a cell without array work is one line; the others keep their tables folded
    assert (
        '<p class="cell quiet porter-cell" id="cell-3"><b>Cell 4 · In [4]</b> · no array work'
        in html
    )
    assert html.count('<section class="cell porter-cell"') == 3
    # each cell opens with its headline, the words every view shows
    assert (
        '<p class="headline">porter: 3 findings in 661 array calls (1 call outside the '
        "standard, 2 replay failures); 0/2 replays ok; failed on numpy, jax</p>"
    ) in html
    assert '<details class="tables"><summary>Tables</summary>' in html


def test_markdown_widget_html_and_text_open_with_the_plan():
    cells = _notebook()
    md = render_markdown(Report.build(cells, Environment("3.11"), array_api_version="x"))
    assert md.index("## Port plan") < md.index("## Summary")
    assert "Tensor.view → xp.reshape" in md.replace("\\", "")
    html = cell_html(cells[1])
    assert html.index("Port plan") < html.index("<h4>Calls</h4>")
    text = cell_text(cells[1]).splitlines()
    assert text[1].startswith("  plan: [needs you] replay on numpy fails at line 1")


def test_porter_run_prints_the_plan_on_stderr():
    out = io.StringIO()
    report = Report.build(_notebook(), Environment("3.11"), array_api_version="x")
    print_plan(report.plan, out)
    lines = out.getvalue().splitlines()
    assert lines[0] == "porter: port plan (5 distinct fix(es)):"
    assert lines[1].startswith("  1. [needs you] replay on numpy, jax fails at line 3")
    out = io.StringIO()
    print_plan([], out)
    assert out.getvalue() == "porter: port plan: nothing to change\n"

"""A rewritten cell's sites are named tuples, one kind per site (`porter_ext.record.sites`),
in the code porter compiles, in the code a worker receives, and where IPython compiles a
rewritten tree (issue 17 item 8: sites read by name)."""

from __future__ import annotations

import ast
import types

import numpy as np

from porter_ext.record import compiled
from porter_ext.record.cell import RecordSettings, run_recorded
from porter_ext.record.hooks_importlib_bootstrap import SITES_NAME
from porter_ext.record.recorder import Recorder, install_hooks
from porter_ext.record.sites import CallSite, LoopSite, OperationSite
from porter_ext.record.transformer import transform

SOURCE = "def f(v):\n    return np.exp(v) + v[0]\ny = [f(x) for _ in range(3)]\n"


def _sites(code: types.CodeType) -> list:
    found = []
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _sites(const)
        elif isinstance(const, tuple) and len(const) in (3, 8):
            found.append(const)
    return found


def _compiled(cell: int) -> tuple[types.CodeType, types.CodeType | None]:
    key = compiled.RewriteKey(SOURCE, 0, split_last=True, range_is_builtin=True)
    return compiled.rewrite_and_compile(key, ast.parse(SOURCE), cell, f"<sites-{cell}>")


def test_compiled_code_holds_each_site_as_its_kind():
    compiled.clear()
    code, _ = _compiled(3)
    kinds = {type(site) for site in _sites(code)}
    assert kinds == {CallSite, OperationSite, LoopSite}
    call = next(s for s in _sites(code) if type(s) is CallSite and s.spelled == "exp")
    assert (call.cell, call.line, call.col, call.end_col) == (3, 2, 11, 20)
    op = next(s for s in _sites(code) if type(s) is OperationSite and s.name == "__getitem__")
    assert (op.line, op.col) == (2, 23) and isinstance(op.key, int)


def test_a_rerun_under_another_label_keeps_the_kinds():
    compiled.clear()
    _compiled(3)
    code, _ = compiled.cached((SOURCE, 0, True, True), 4, "<sites-4>")
    sites = _sites(code)
    assert sites and all(type(s) in (CallSite, OperationSite, LoopSite) for s in sites)
    assert {s.cell for s in sites} == {4}


def test_a_workers_code_gets_its_sites_named_again():
    compiled.clear()
    key = (SOURCE, 0, True, True)
    _compiled(5)
    data = compiled.exported(SOURCE, 0, 5)
    code, _ = compiled.imported(data, key, "<sites-5@numpy>")
    sites = _sites(code)
    assert sites and all(type(s) in (CallSite, OperationSite, LoopSite) for s in sites)
    assert code.co_filename == "<sites-5@numpy>"


def test_a_recorded_run_reads_its_sites_by_name():
    ns = {"np": np, "x": np.arange(3.0)}
    run = run_recorded(SOURCE, ns, RecordSettings(cell=6))
    assert run.error is None
    counts = {(c.name, c.line): c.count for c in run.calls}
    assert counts[("numpy.exp", 2)] == 3 and counts[("ndarray.__add__", 2)] == 3


def test_a_tree_compiled_elsewhere_reads_its_named_sites_from_a_table():
    # `%port on` and `%time` lines: IPython compiles the rewritten tree itself (its
    # constants can only be plain tuples), so the code reads its sites from a table
    tree = transform(ast.parse(SOURCE), "elsewhere", source=SOURCE)
    code = compile(tree, "<elsewhere>", "exec")
    assert _sites(code) == [] and SITES_NAME in code.co_names
    ns = {"np": np, "x": np.arange(3.0)}
    install_hooks(ns)
    with Recorder(cell="elsewhere").activate() as rec:
        exec(code, ns)  # noqa: S102
    counts = {(c.name, c.line): c.count for c in rec.records()}
    assert counts[("numpy.exp", 2)] == 3 and counts[("ndarray.__add__", 2)] == 3

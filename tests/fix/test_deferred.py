"""Deferred definitions (``porter fix``): the pieces that need no kernel.

The whole flow (a function-only cell verified at a later call, refused when that call
disagrees, never called) is in tests/test_cli_fix.py."""

from __future__ import annotations

import json

from porter_ext.fix.deferred import (
    NEVER_CALLED,
    WAITING,
    Deferred,
    adopt_line,
    array_parameters,
    def_spans,
    definitions_only,
    patched,
    unexercised_defs,
    verdict,
)
from porter_ext.fix.rewrite import rewrite_source
from porter_ext.fix.settle import settle
from porter_ext.model.calls import CallOrigin, CallRecord
from porter_ext.model.cells import CellEntry
from porter_ext.model.entries import DefinitionVerdict, RewriteEntry, RewriteSiteEntry
from porter_ext.replay.instances import made_before
from porter_ext.report.codec import cell_from_dict, cell_to_dict, report_to_json
from porter_ext.report.validation import validate

SOURCE = "def f(x):\n    return x.sum(1)\n\n\ndef g(x):\n    return x.mean(0)\n\nk = 1"


def _deferred_cell() -> tuple[CellEntry, str]:
    full = rewrite_source(SOURCE, arrays={"x": "numpy"})
    sites = [
        RewriteSiteEntry(s.line, s.col, s.name, s.original, s.replacement, False, WAITING)
        for s in full.sites
    ]
    rewrite = RewriteEntry(
        source=SOURCE, status="refused", sites=sites, reason=NEVER_CALLED, diff=full.diff(context=0)
    )
    return CellEntry(index=1, execution_count=1, source=SOURCE, rewrite=rewrite), full.source


def test_patched_applies_the_whole_diff_or_the_chosen_hunks():
    cell, full = _deferred_cell()
    assert patched(SOURCE, cell.rewrite.diff) == full + ("" if full.endswith("\n") else "\n")
    only_f = patched(SOURCE, cell.rewrite.diff, lambda line: line < 5)
    assert "xp.sum(x, axis=1)" in only_f and "return x.mean(0)" in only_f
    assert only_f.startswith("from array_api_compat import array_namespace\n")


def test_unexercised_definitions_are_those_nothing_in_the_cell_ran():
    assert set(unexercised_defs(SOURCE, [])) == {"f", "g"}
    called = SOURCE + "\ny = f(k)"
    assert set(unexercised_defs(called, [])) == {"g"}
    inside_g = CallRecord(
        line=6, col=11, name="ndarray.mean", library="numpy", kind="method", status="non_standard"
    )
    assert set(unexercised_defs(SOURCE, [inside_g])) == {"f"}


def test_definitions_only_keeps_the_imports_and_the_one_function():
    code = "import numpy as np\nx = np.ones(3)\ndef f(x):\n    return x\ndef g(x):\n    return x\n"
    # the other lines blank: the definition keeps its line numbers
    assert definitions_only(code, "g") == "import numpy as np\n\n\n\ndef g(x):\n    return x\n"
    assert definitions_only(code, "h") == ""


def _verdict(name: str, accepted: bool, detail: list[str] | str) -> DefinitionVerdict:
    return verdict(Deferred(1, name, ""), accepted, "line 1: `y = f(x)`", detail)


def _later(*verdicts: DefinitionVerdict) -> CellEntry:
    """The calling cell as porter's side reads it: from the JSON the kernel wrote."""
    entry = CellEntry(
        index=2,
        execution_count=2,
        source="y = f(x)",
        notes=[v.note() for v in verdicts],
        definition_verdicts=list(verdicts),
    )
    return cell_from_dict(json.loads(json.dumps(cell_to_dict(entry))))


def test_settle_applies_what_a_later_call_verified_and_says_why_not_for_the_rest():
    cell, _ = _deferred_cell()
    later = _later(_verdict("f", True, ["torch", "numpy"]))
    settled = settle([cell, later])[0].rewrite
    assert settled.status == "partial"
    assert settled.verified_on == ["torch", "numpy"]
    assert "xp.sum(x, axis=1)" in settled.source and "return x.mean(0)" in settled.source
    assert settled.reason == (
        "verified f at its call in cell 2 (line 1: `y = f(x)`); g: never called in this notebook"
    )
    assert [s.applied for s in settled.sites] == [True, False]
    assert "+    return xp.sum(x, axis=1)" in settled.diff


def test_settle_refuses_with_the_call_site_and_never_called_otherwise():
    cell, _ = _deferred_cell()
    later = _later(_verdict("f", False, "it changes the result on numpy (y: numeric)"))
    settled = settle([cell, later])[0].rewrite
    assert settled.status == "refused" and settled.source == SOURCE
    assert settled.reason.startswith(
        "refused f at its call in cell 2 (line 1: `y = f(x)`): it changes"
    )
    alone = settle([cell])[0].rewrite
    assert alone.status == "refused"
    assert alone.reason == "f: never called in this notebook; g: never called in this notebook"
    assert all(not s.applied and NEVER_CALLED in s.reason for s in alone.sites)


def test_the_verdict_travels_as_fields_not_as_note_text():
    cell, _ = _deferred_cell()
    # words a note parsed back with a pattern misreads: parentheses, " on " and ": "
    where = "line 1: `y = f(x) if on else (g(x): 1)`"
    given = verdict(Deferred(1, "f", ""), True, where, ["torch:cuda:0", "jax"])
    later = CellEntry(index=2, execution_count=2, source="y = f(x)", definition_verdicts=[given])
    data = cell_to_dict(later)
    assert data["definition_verdicts"] == [
        {
            "cell": 1,
            "name": "f",
            "accepted": True,
            "where": where,
            "verified_on": ["torch:cuda:0", "jax"],
            "reason": None,
        }
    ]
    settled = settle([cell, cell_from_dict(data)])[0].rewrite
    assert settled.verified_on == ["torch:cuda:0", "jax"]
    assert settled.reason.startswith(f"verified f at its call in cell 2 ({where})")
    assert "notes" not in data  # nothing is read back from words


def test_a_cell_with_definition_verdicts_is_valid_json() -> None:
    from porter_ext.model.report import Environment, Report

    cell, _ = _deferred_cell()
    later = _later(_verdict("f", False, "it changes the result"))
    report = Report.build([cell, later], Environment("3.11"), array_api_version="2024.12")
    validate(json.loads(report_to_json(report)))


def _recorded_in_cell_7(line: int) -> CallRecord:
    """A call a later cell's run recorded inside cell 7's code, at ``line`` of it."""
    return CallRecord(
        line=1,
        col=0,
        name="ndarray.mean",
        library="numpy",
        kind="method",
        status="non_standard",
        origin_cell=7,
        origin=CallOrigin(1, 7, line=line, col=11),
    )


def test_a_deferred_definition_ran_where_the_cell_names_it_or_recorded_a_call_inside_it():
    deferred = Deferred(1, "g", "", record_cell=7, span=(5, 6))
    inside = _recorded_in_cell_7(6)
    assert deferred.ran_in("h(x)", [inside])
    here = {**inside.__dict__, "origin_cell": None, "origin": None}
    assert not deferred.ran_in("h(x)", [CallRecord(**here)])
    elsewhere = {**inside.__dict__, "origin": CallOrigin(1, 7, line=2, col=11)}
    assert not deferred.ran_in("h(x)", [CallRecord(**elsewhere)])
    # named by the cell's own statements: called, whatever it was given
    assert deferred.ran_in("w = g(Bag())", [])
    assert not deferred.ran_in("def h(x):\n    return g(x)", [])


CLASS = (
    "class Norm:\n"
    "    def __init__(self, n):\n"
    "        self.n = n\n"
    "\n"
    "    def __call__(self, x):\n"
    "        return x.mean(1) * self.n\n"
)


def test_a_class_waits_like_a_function_and_its_methods_parameters_are_typed_past_self():
    assert def_spans(CLASS) == {"Norm": (1, 6)}
    assert set(unexercised_defs(CLASS, [])) == {"Norm"}
    assert set(unexercised_defs(CLASS + "norm = Norm(2)\n", [])) == set()
    code = "import torch\n" + CLASS + "k = 1\n"
    only = definitions_only(code, "Norm")
    assert only.startswith("import torch\nclass Norm:") and "k = 1" not in only
    # ``x.mean`` types x (a guess a later call verifies); ``self`` is never an array
    assert array_parameters(CLASS, {"Norm": (1, 6)}, "torch") == {"x": "torch"}


def test_a_deferred_class_ran_only_where_every_rewritten_site_of_it_ran():
    """Making an instance runs ``__init__`` only: a cell that names the class verifies
    nothing of ``__call__`` (a function named by the cell is called)."""
    deferred = Deferred(1, "Norm", "", record_cell=7, span=(1, 6), class_sites=(3, 6))
    call_at = _recorded_in_cell_7
    assert not deferred.ran_in("norm = Norm(2)", [])
    assert not deferred.ran_in("norm = Norm(2)", [call_at(3)])
    assert deferred.ran_in("y = model(x)", [call_at(3), call_at(6)])


def test_an_instance_made_before_is_found_and_adopts_the_rewritten_class():
    """In a replay, the instances the inputs hold (in lists, dicts, objects' attributes)
    of the class as written take the class the prefix just bound to its name."""
    old_code = "class Layer:\n    def __call__(self, x):\n        return x + 1\n"
    new_code = "class Layer:\n    def __call__(self, x):\n        return x + 2\n"
    person: dict = {"__name__": "__main__"}
    exec(old_code, person)

    class Model:
        def __init__(self, layers):
            self.layers = layers

    model = Model([object(), {"inner": (person["Layer"](),)}])
    inputs = {"n": 3, "x": [1.0], "model": model}
    assert made_before(inputs, person["Layer"]) == "model"
    assert made_before({"n": 3, "cls": person["Layer"]}, person["Layer"]) is None
    assert made_before(inputs, len) is None  # a function: no instances
    replay = {"__name__": "__main__", **inputs}
    exec(new_code, replay)  # the prefix: the rewritten class, then its adoption line
    exec(adopt_line("Layer"), replay)
    (layer,) = model.layers[1]["inner"]
    assert type(layer) is replay["Layer"] and layer(1) == 3

"""Schema validation: errors name the bad field; bad JSON says where; the fast path agrees
with jsonschema."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from porter_ext.report import (
    Report,
    ReportError,
    load_report,
    report_from_json,
    report_schema,
    report_to_dict,
    report_to_json,
    validate,
)
from porter_ext.report.validation import is_valid_fast, json_path
from tests.report.conftest import (
    make_call,
    make_cell,
    make_environment,
    make_output,
    make_replay,
    make_report,
    mismatched_entry,
)


def _data() -> dict[str, Any]:
    return report_to_dict(make_report(2))


def test_schema_ships_with_the_package_and_is_a_valid_2020_12_schema() -> None:
    schema = report_schema()
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["properties"]["schema"] == {"const": "porter.report/1"}


def test_a_valid_report_passes(report: Report) -> None:
    validate(report_to_dict(report))


def test_bad_enum_names_the_field_and_the_allowed_values() -> None:
    data = _data()
    data["cells"][0]["calls"][2]["status"] = "weird"
    with pytest.raises(ReportError) as info:
        validate(data)
    message = str(info.value)
    assert "cells[0].calls[2].status: 'weird' is not one of ['standard'" in message
    assert info.value.path == "cells[0].calls[2].status"


def test_missing_field_is_named_by_its_own_path() -> None:
    data = _data()
    del data["cells"][1]["replays"][0]["outputs"][1]["dtype"]
    with pytest.raises(
        ReportError,
        match=r"cells\[1\]\.replays\[0\]\.outputs\[1\]\.dtype: "
        r"required field is missing",
    ):
        validate(data)


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda d: d.update(schema="porter.report/2"), "schema"),
        (lambda d: d["summary"].update(calls=-1), "summary.calls"),
        (lambda d: d["cells"][0].update(index="0"), "cells[0].index"),
        (lambda d: d["cells"][0]["calls"][0].update(line=0), "cells[0].calls[0].line"),
        (
            lambda d: d["cells"][0]["replays"][0]["outputs"][0].update(max_abs_err="big"),
            "cells[0].replays[0].outputs[0].max_abs_err",
        ),
        (
            lambda d: d["environment"]["backends"][1].update(available="yes"),
            "environment.backends[1].available",
        ),
        (lambda d: d.pop("environment"), "environment"),
    ],
)
def test_errors_name_the_first_bad_field(mutate: Any, path: str) -> None:
    data = _data()
    mutate(data)
    with pytest.raises(ReportError) as info:
        validate(data)
    assert info.value.path == path
    assert f"{path}: " in str(info.value)


def test_first_error_in_document_order_is_reported() -> None:
    data = _data()
    data["cells"][1]["calls"][0]["kind"] = "lambda"
    data["cells"][0]["calls"][3]["count"] = 0
    with pytest.raises(ReportError) as info:
        validate(data)
    assert info.value.path == "cells[0].calls[3].count"
    assert "(and 1 more problems)" in str(info.value)


def test_non_object_document() -> None:
    with pytest.raises(ReportError, match=r"\(report\): \[\] is not of type 'object'"):
        validate([])


def test_json_path() -> None:
    assert json_path(["cells", 0, "calls", 2, "status"]) == "cells[0].calls[2].status"
    assert json_path([]) == ""


def test_load_report_round_trip(tmp_path: Path, report: Report) -> None:
    path = tmp_path / "r.json"
    path.write_text(report_to_json(report), encoding="utf-8")
    assert load_report(path) == report


def test_invalid_json_says_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "schema": "porter.report/1",\n    oops\n}\n', encoding="utf-8")
    with pytest.raises(ReportError) as info:
        load_report(path)
    assert "not valid JSON: line 3 column 5: " in str(info.value)
    assert str(path) in str(info.value)


def test_schema_violation_on_load_names_file_and_field(tmp_path: Path) -> None:
    data = _data()
    data["cells"][0]["replays"][0]["status"] = "crashed"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(
        ReportError,
        match=r"bad\.json: not a valid porter report: "
        r"cells\[0\]\.replays\[0\]\.status",
    ):
        load_report(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ReportError, match="cannot read the report"):
        load_report(tmp_path / "nope.json")


def test_from_json_validates() -> None:
    with pytest.raises(ReportError, match="not valid JSON: line 1 column 1"):
        report_from_json("")


_REPLACEMENTS = [None, "weird", -1, 0, 1.5, 2.0, True, [], {}, "inf", [1, "a"], "standard"]


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(node, dict):
        for key, value in node.items():
            out += _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            out += _paths(value, (*prefix, i))
    return out


def test_fast_path_agrees_with_jsonschema_on_mutated_reports() -> None:
    """The fast path may only ever say "valid" when jsonschema does."""
    validator = Draft202012Validator(report_schema())
    cell = make_cell(
        0,
        calls=3,
        replays=[
            make_replay(
                "numpy",
                outputs=[mismatched_entry(shape=(3, 2)), make_output("s")],
                calls=[make_call(1)],
            ),
            make_replay("jax", "error"),
            make_replay("cupy", "skipped"),
        ],
    )
    base = report_to_dict(Report.build([cell], make_environment(), array_api_version="2024.12"))
    paths = [p for p in _paths(base) if p]
    rng = random.Random(7)
    disagreements, verdicts = [], []
    for _ in range(1000):
        data = copy.deepcopy(base)
        path = rng.choice(paths)
        parent = data
        for part in path[:-1]:
            parent = parent[part]
        if isinstance(parent, dict) and rng.random() < 0.2:
            del parent[path[-1]]
        else:
            parent[path[-1]] = copy.deepcopy(rng.choice(_REPLACEMENTS))
        verdict = validator.is_valid(data)
        verdicts.append(verdict)
        if is_valid_fast(data) != verdict:
            disagreements.append(path)
    assert disagreements == []
    assert 100 < sum(verdicts) < 900  # both verdicts were exercised


def test_without_jsonschema_valid_reports_pass_and_invalid_ones_fail(monkeypatch) -> None:
    from porter_ext.report import validation

    def missing() -> None:
        raise ImportError("No module named 'jsonschema'")

    monkeypatch.setattr(validation, "_validator", missing)
    validate(_data())
    data = _data()
    data["cells"][0]["calls"][0]["status"] = "weird"
    with pytest.raises(ReportError, match="install jsonschema"):
        validate(data)

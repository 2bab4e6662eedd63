"""The JSON form of the records the stages make (CONTRACT.md's keys, one to one): errors,
calls, device findings and output comparisons, as the cell entries carry them.

Non-finite floats travel as the strings ``"inf"``, ``"-inf"``, ``"nan"`` (JSON has no
such numbers); keys a reader does not know (a newer writer) are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from porter_ext.model.calls import CallOrigin, CallRecord, ErrorInfo
from porter_ext.model.comparison import DeviceFinding, ErrorHistogram, OutputComparison
from porter_ext.model.diagnostics import Diagnostic

__all__ = [
    "call_from_dict",
    "call_to_dict",
    "diagnostic_from_dict",
    "diagnostic_to_dict",
    "error_from_dict",
    "error_to_dict",
    "finding_from_dict",
    "finding_to_dict",
    "float_in",
    "float_out",
    "known",
    "output_from_dict",
    "output_to_dict",
    "record_dict",
]

#: how the non-finite floats a record may hold (an output with an inf where the original
#: had a finite number) are spelled in JSON
_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}


def float_out(value: float | None) -> float | str | None:
    """A float as JSON can hold it: non-finite ones as their strings."""
    if value is None or math.isfinite(value):
        return value
    return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")


def float_in(value: float | int | str | None) -> float | None:
    """A float read back from `float_out`'s form."""
    if value is None:
        return None
    if isinstance(value, str):
        return _NONFINITE[value]
    return float(value)


def record_dict(obj: Any) -> dict[str, Any]:
    """All dataclass fields of a record, so fields added by an earlier stage travel too."""
    return {f.name: getattr(obj, f.name) for f in fields(obj)}


def known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The keys of `data` that are fields of `cls`: unknown keys (a newer writer) are ignored."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


def error_to_dict(error: ErrorInfo | None, first_line: int) -> dict[str, Any] | None:
    """The error's keys, with the model's ``text`` of it, lines counted from
    ``first_line`` (the cell's `CellEntry.first_line`) as the editor counts them."""
    if error is None:
        return None
    data = record_dict(error)
    if data["file"] is None:  # raised in the cell: the keys it always had
        del data["file"], data["file_line"]
    data["text"] = error.text_in(first_line)
    return data


def error_from_dict(data: Mapping[str, Any] | None) -> ErrorInfo | None:
    return None if data is None else ErrorInfo(**known(ErrorInfo, data))


def call_to_dict(call: CallRecord) -> dict[str, Any]:
    """The call's keys, with the model's ``finding`` and ``severity`` of it."""
    data = record_dict(call)
    data["devices_in"] = list(call.devices_in)
    data["origin"] = None if call.origin is None else origin_to_dict(call.origin)
    del data["origin_cell"]  # the recorder's label: `origin` says it for readers
    data["finding"] = call.finding
    data["severity"] = call.severity
    return data


def origin_to_dict(origin: CallOrigin) -> dict[str, Any]:
    """An origin's keys; ``file`` only for code written in a file (a cell's origin keeps
    the keys it always had)."""
    data = record_dict(origin)
    if data["file"] is None:
        del data["file"]
    data["editor_line"] = origin.editor_line
    data["label"] = origin.label
    return data


def _with_origin(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The known fields of ``cls`` in ``data``, its ``origin`` read as a `CallOrigin`."""
    values = known(cls, data)
    origin = values.get("origin")
    if origin is not None:
        values["origin"] = CallOrigin(**known(CallOrigin, origin))
    return values


def call_from_dict(data: Mapping[str, Any]) -> CallRecord:
    return CallRecord(**_with_origin(CallRecord, data))


def diagnostic_to_dict(row: Diagnostic) -> dict[str, Any]:
    data = record_dict(row)
    data["origin"] = None if row.origin is None else origin_to_dict(row.origin)
    data["kind_text"] = row.kind_text
    data["severity_text"] = row.severity_text
    data["place"] = row.place
    data["called_from_text"] = row.called_from_text
    data["hover"] = row.hover
    data["title"] = row.title
    return data


def diagnostic_from_dict(data: Mapping[str, Any]) -> Diagnostic:
    return Diagnostic(**_with_origin(Diagnostic, data))


def finding_to_dict(finding: DeviceFinding) -> dict[str, Any]:
    return record_dict(finding)


def finding_from_dict(data: Mapping[str, Any]) -> DeviceFinding:
    return DeviceFinding(**known(DeviceFinding, data))


#: the float fields of an output entry that may be infinite or NaN
_FLOAT_OUTPUT_FIELDS = (
    "max_abs_err",
    "max_rel_err",
    "rtol",
    "atol",
    "reference_err",
    "original_reference_err",
)


def output_to_dict(output: OutputComparison) -> dict[str, Any]:
    """The contract's keys, with the error summaries (null where the output matched)."""
    data = record_dict(output)
    for key in _FLOAT_OUTPUT_FIELDS:
        data[key] = float_out(data[key])
    if data["shape"] is not None:
        data["shape"] = list(data["shape"])
    hist = output.error_histogram
    data["error_histogram"] = None if hist is None else record_dict(hist)
    data["verdict"] = output.verdict
    data["verdict_text"] = output.verdict_text
    return data


def output_from_dict(data: Mapping[str, Any]) -> OutputComparison:
    values = known(OutputComparison, data)
    for key in _FLOAT_OUTPUT_FIELDS:
        if key in values:
            values[key] = float_in(values[key])
    hist = values.get("error_histogram")
    if isinstance(hist, Mapping):
        values["error_histogram"] = ErrorHistogram(**known(ErrorHistogram, hist))
    return OutputComparison(**values)

"""Checking report JSON against the shipped schema, with errors that point at the bad field.

A report travels between machines (CI artifact → `porter report` on a laptop → the
JupyterLab renderer), so a reader must say *where* a report is wrong, as a JSON path
such as `cells[0].calls[2].status`, not dump a validator's traceback.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from importlib import resources
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from jsonschema.exceptions import ValidationError
SCHEMA_RESOURCE = "report-1.schema.json"


class ReportError(ValueError):
    """A report that cannot be read or is not a valid porter report.

    `path` is the JSON path of the offending field ("" for the whole document) when the
    problem is a schema violation, else None.
    """

    def __init__(self, message: str, path: str | None = None) -> None:
        super().__init__(message)
        self.path = path


@functools.cache
def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `porter.report/1`, as shipped in the package."""
    text = (
        resources.files("porter_ext.report")
        .joinpath("schema", SCHEMA_RESOURCE)
        .read_text(encoding="utf-8")
    )
    return json.loads(text)


@functools.cache
def _validator() -> Any:
    # jsonschema is imported here, not at module level: importing the report package must
    # stay cheap for `%load_ext porter_ext`.
    from jsonschema import Draft202012Validator

    schema = report_schema()
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


# --- fast path ------------------------------------------------------------------------
# jsonschema spends ~5 µs per node, over a second for a 500-cell report, and every
# writer validates. A valid report is the common case, so a direct interpreter of the
# few keywords this schema uses answers "valid" quickly; any doubt (a violation, or a
# keyword it does not know) is settled by jsonschema, which also words the error.

_ANNOTATIONS = frozenset({"$schema", "$id", "$defs", "title", "description"})
_TYPES: dict[str, Any] = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "integer": lambda v: (
        (isinstance(v, int) and not isinstance(v, bool))
        or (isinstance(v, float) and v.is_integer())
    ),
}


class _Unsure(Exception):
    """The fast path met a keyword it does not interpret."""


def _inline(node: Any, defs: Mapping[str, Any]) -> Any:
    """The schema with every local `$ref` replaced by its target (the schema has no cycles)."""
    if isinstance(node, dict):
        if "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/$defs/") or set(node) - _ANNOTATIONS != {"$ref"}:
                raise _Unsure(ref)
            return _inline(defs[ref.removeprefix("#/$defs/")], defs)
        if "properties" in node:  # property names are data, even "title" (a plan item's)
            props = {k: _inline(v, defs) for k, v in node["properties"].items()}
            node = {**node, "properties": None}
            inlined = {k: _inline(v, defs) for k, v in node.items() if k not in _ANNOTATIONS}
            return {**inlined, "properties": props}
        return {k: _inline(v, defs) for k, v in node.items() if k not in _ANNOTATIONS}
    if isinstance(node, list):
        return [_inline(v, defs) for v in node]
    return node


@functools.cache
def _inlined_schema() -> dict[str, Any] | None:
    schema = report_schema()
    try:
        return _inline(schema, schema.get("$defs", {}))
    except _Unsure:
        return None


def _fast_valid(value: Any, schema: Mapping[str, Any]) -> bool:
    for key, arg in schema.items():
        if key == "type":
            kinds = [arg] if isinstance(arg, str) else arg
            if not any(_TYPES[k](value) for k in kinds):
                return False
        elif key == "properties":
            if isinstance(value, dict):
                for name, sub in arg.items():
                    if name in value and not _fast_valid(value[name], sub):
                        return False
        elif key == "required":
            if isinstance(value, dict) and any(name not in value for name in arg):
                return False
        elif key == "items":
            if isinstance(value, list) and not all(_fast_valid(v, arg) for v in value):
                return False
        elif key in ("enum", "const"):
            allowed = arg if key == "enum" else [arg]
            if not all(isinstance(a, str) for a in allowed):
                raise _Unsure(key)
            if not (isinstance(value, str) and value in allowed):
                return False
        elif key == "anyOf":
            if not any(_fast_valid(value, sub) for sub in arg):
                return False
        elif key == "minimum":
            if _TYPES["number"](value) and value < arg:
                return False
        elif key == "additionalProperties":
            if isinstance(value, dict):
                named = schema.get("properties") or {}
                if not all(_fast_valid(v, arg) for k, v in value.items() if k not in named):
                    return False
        elif key == "maxItems":
            if isinstance(value, list) and len(value) > arg:
                return False
        else:
            raise _Unsure(key)
    return True


def is_valid_fast(data: Any) -> bool:
    """True when the fast path is sure that `data` is valid; False means "ask jsonschema"."""
    schema = _inlined_schema()
    if schema is None:
        return False
    try:
        return _fast_valid(data, schema)
    except _Unsure:
        return False


def json_path(parts: Sequence[str | int]) -> str:
    """`["cells", 0, "calls", 2, "status"]` → `cells[0].calls[2].status`."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out


def _document_order(data: Any, path: Sequence[str | int]) -> tuple[int, ...]:
    """Sort key that puts errors in the order their fields appear in the document."""
    key: list[int] = []
    node = data
    for part in path:
        if isinstance(node, Mapping):
            keys = list(node)
            key.append(keys.index(part) if part in keys else len(keys))
            node = node.get(part)
        elif isinstance(node, list) and isinstance(part, int):
            key.append(part)
            node = node[part] if part < len(node) else None
        else:
            break
    return tuple(key)


def _describe(error: ValidationError) -> tuple[str, str]:
    """(JSON path, message) for one validation error, naming a missing key by its path."""
    parts = list(error.absolute_path)
    if error.validator == "required":
        # jsonschema reports a missing key at its parent; name the key itself.
        missing = next(
            (k for k in error.validator_value if k not in error.instance), error.validator_value[0]
        )
        path = json_path([*parts, missing])
        return path, f"{path}: required field is missing"
    path = json_path(parts)
    return path, f"{path or '(report)'}: {error.message}"


def validate(data: Any) -> None:
    """Raise `ReportError` naming the first bad field (in document order) if `data` is not
    a valid `porter.report/1` document."""
    if is_valid_fast(data):
        return
    try:
        validator = _validator()
    except ImportError:
        raise ReportError(
            "not a valid porter report (install jsonschema to be told which field is wrong)"
        ) from None
    errors = list(validator.iter_errors(data))
    if not errors:
        return
    first = min(
        errors,
        key=lambda e: (_document_order(data, list(e.absolute_path)), -len(e.absolute_path)),
    )
    path, message = _describe(first)
    more = f" (and {len(errors) - 1} more problems)" if len(errors) > 1 else ""
    raise ReportError(f"not a valid porter report: {message}{more}", path)


def parse_report_json(text: str, *, origin: str | None = None) -> dict[str, Any]:
    """Parse report JSON text and validate it; errors start with `origin` when given."""
    prefix = f"{origin}: " if origin else ""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(
            f"{prefix}not valid JSON: line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None
    try:
        validate(data)
    except ReportError as exc:
        raise ReportError(f"{prefix}{exc}", exc.path) from None
    return data

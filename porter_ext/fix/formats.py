"""``porter lint --format text|json|sarif|github``: one result, four audiences.

``text`` for people, ``json`` for scripts, ``sarif`` (2.1.0) for code-scanning services,
``github`` as GitHub Actions workflow commands (annotations on the pull request). A
finding that needs a run is a note everywhere (it does not fail the lint).
"""

from __future__ import annotations

import json

from porter_ext._version import __version__
from porter_ext.fix.checks import CODES
from porter_ext.fix.lint import LintFinding, LintResult

FORMATS = ("text", "json", "sarif", "github")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_RULE_TEXT = {
    "non_standard": "a name outside the array API standard",
    "non_standard_usage": "a standard name used outside the standard (positional axis, keywords)",
    "device_specific": "a vendor-specific runtime or placement call",
    "host_sync": "a call that copies data to the host and waits for the device",
    "default_device_creation": "a creation call without device= where the inputs are arrays",
    "needs_run": "a call whose verdict depends on values: run it with %%port or porter run",
}


def _level(finding: LintFinding) -> str:
    return "note" if finding.needs_run else "warning"


def _full_message(finding: LintFinding) -> str:
    text = f"{finding.name}: {finding.message}"
    if finding.suggestion:
        text += f" (use: {finding.suggestion})"
    return text


def summary(result: LintResult) -> str:
    notes = sum(f.needs_run for f in result.findings)
    found = len(result.findings) - notes
    files = f"{result.files} file{'s' if result.files != 1 else ''}"
    return f"porter lint: {found} finding{'s' if found != 1 else ''}, {notes} needing a run, in {files}"


def as_text(result: LintResult) -> str:
    lines = [f"{f.where}: {f.code} {f.kind}: {_full_message(f)}" for f in result.findings]
    lines += [f"error: {e}" for e in result.errors]
    lines.append(summary(result))
    return "\n".join(lines)


def as_json(result: LintResult) -> str:
    return json.dumps(
        {
            "schema": "porter.lint/1",
            "porter_version": __version__,
            "files": result.files,
            "findings": [f.to_json() for f in result.findings],
            "errors": list(result.errors),
        },
        indent=1,
    )


def as_sarif(result: LintResult) -> str:
    rules = [
        {
            "id": code,
            "name": kind,
            "shortDescription": {"text": _RULE_TEXT[kind]},
            "defaultConfiguration": {"level": "note" if kind == "needs_run" else "warning"},
        }
        for code, kind in CODES.items()
    ]
    index = {code: i for i, code in enumerate(CODES)}
    results = []
    for f in result.findings:
        location: dict = {
            "physicalLocation": {
                "artifactLocation": {"uri": f.path.replace("\\", "/")},
                "region": {
                    "startLine": f.line,
                    "startColumn": f.col + 1,
                    "endLine": f.end_line,
                    "endColumn": f.end_col + 1,
                },
            }
        }
        if f.cell is not None:  # lines count within the cell: say which
            location["logicalLocations"] = [{"name": f"cell {f.cell}", "kind": "module"}]
        entry = {
            "ruleId": f.code,
            "ruleIndex": index[f.code],
            "level": _level(f),
            "message": {"text": _full_message(f)},
            "locations": [location],
            "properties": {"cell": f.cell, "suggestion": f.suggestion, "needsRun": f.needs_run},
        }
        results.append(entry)
    run = {
        "tool": {
            "driver": {
                "name": "porter",
                "version": __version__,
                "informationUri": "https://data-apis.org/array-api/latest/",
                "rules": rules,
            }
        },
        "results": results,
        # columns count characters (code points), not SARIF's default UTF-16 code units
        "columnKind": "unicodeCodePoints",
    }
    if result.errors:
        run["invocations"] = [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [
                    {"level": "error", "message": {"text": e}} for e in result.errors
                ],
            }
        ]
    return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}, indent=1)


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def as_github(result: LintResult) -> str:
    """GitHub Actions workflow commands: ``::warning file=F,line=L,col=C,title=T::MESSAGE``."""
    lines = []
    for f in result.findings:
        title = f"porter {f.code} {f.kind}" + (f" (cell {f.cell})" if f.cell is not None else "")
        props = (
            f"file={_escape_property(f.path)},line={f.line},endLine={f.end_line},"
            f"col={f.col + 1},endColumn={f.end_col + 1},title={_escape_property(title)}"
        )
        command = "notice" if f.needs_run else "warning"
        lines.append(f"::{command} {props}::{_escape_data(_full_message(f))}")
    lines += [f"::error::{_escape_data(e)}" for e in result.errors]
    lines.append(summary(result))
    return "\n".join(lines)


RENDERERS = {"text": as_text, "json": as_json, "sarif": as_sarif, "github": as_github}


def render(result: LintResult, fmt: str) -> str:
    return RENDERERS[fmt](result)

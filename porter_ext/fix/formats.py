"""``porter lint --format text|json|sarif|github``: one result, four audiences.

``text`` for people, ``json`` for scripts, ``sarif`` (2.1.0) for code-scanning services,
``github`` as GitHub Actions workflow commands (annotations on the pull request). A
finding that needs a run is a note everywhere (it does not fail the lint).

Each form is written a finding at a time as the lint makes them (`write`): a big file's
findings are never held. Text and GitHub output show at most ``max_repeats`` findings of
one check on one name per file and count the rest in one line; JSON and SARIF hold every
finding.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from typing import TextIO

from porter_ext._version import __version__
from porter_ext.fix.checks import CODES
from porter_ext.fix.lint import LintFinding, LintResult, LintRun

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


def _summary(found: int, notes: int, files: int) -> str:
    shown = f"{files} file{'s' if files != 1 else ''}"
    return f"porter lint: {found} finding{'s' if found != 1 else ''}, {notes} needing a run, in {shown}"


#: what the writers read: a finished `LintResult` or a `LintRun` as it goes (its
#: ``findings`` iterated once; ``files`` known from the start, ``errors`` at the end)
Findings = LintResult | LintRun


class _Repeats:
    """Findings of one check on one name past ``limit`` in a file are counted, not shown;
    after the file, one line per such name says how many (0: no limit)."""

    def __init__(self, limit: int, out: TextIO, prefix: str = "") -> None:
        self.limit, self.out, self.prefix = limit, out, prefix
        self.path: str | None = None
        self.shown: dict[tuple[str, str], int] = {}
        self.hidden: dict[tuple[str, str], int] = {}

    def admit(self, finding: LintFinding) -> bool:
        if not self.limit:
            return True
        if finding.path != self.path:
            self.flush()
            self.path = finding.path
        key = (finding.code, finding.name)
        count = self.shown.get(key, 0)
        if count < self.limit:
            self.shown[key] = count + 1
            return True
        self.hidden[key] = self.hidden.get(key, 0) + 1
        return False

    def flush(self) -> None:
        for (code, name), count in self.hidden.items():
            self.out.write(
                f"{self.prefix}{self.path}: {code} {CODES[code]}: {name}: {count} more not "
                f"shown (--max-repeats {self.limit}; 0 shows every one)\n"
            )
        self.shown.clear()
        self.hidden.clear()


def write(result: Findings, fmt: str, out: TextIO, *, max_repeats: int = 0) -> None:
    """``result`` in format ``fmt`` to ``out``, each finding written as it comes (nothing
    but the current finding is held). ``max_repeats`` (text and GitHub output): findings
    of one check on one name shown per file (0: all); JSON and SARIF hold every one."""
    _WRITERS[fmt](result, out, max_repeats)


def render(result: LintResult, fmt: str) -> str:
    """``result`` in format ``fmt``, as one string (`write`), every finding shown."""
    buffer = io.StringIO()
    write(result, fmt, buffer)
    return buffer.getvalue().removesuffix("\n")


def as_text(result: LintResult) -> str:
    return render(result, "text")


def as_json(result: LintResult) -> str:
    return render(result, "json")


def as_sarif(result: LintResult) -> str:
    return render(result, "sarif")


def as_github(result: LintResult) -> str:
    return render(result, "github")


def _counted(result: Findings, counts: list[int]) -> Iterator[LintFinding]:
    """``result``'s findings, counting them into ``counts`` ([findings, notes])."""
    for finding in result.findings:
        counts[finding.needs_run] += 1
        yield finding


def _write_text(result: Findings, out: TextIO, max_repeats: int) -> None:
    counts = [0, 0]
    repeats = _Repeats(max_repeats, out)
    for f in _counted(result, counts):
        if repeats.admit(f):
            out.write(f"{f.where}: {f.code} {f.kind}: {_full_message(f)}\n")
    repeats.flush()
    for e in result.errors:
        out.write(f"error: {e}\n")
    out.write(_summary(*counts, result.files) + "\n")


#: stands for a list's items in a document written around them (`_write_json_items`)
_ITEMS = "\x00porter-items\x00"


def _write_json_items(out: TextIO, document: Callable[[list], dict], items: Iterator[dict]) -> None:
    """``document(items)`` written as ``json.dumps(..., indent=1)`` writes it, its items
    one at a time: what comes before the list is written before the first item is
    made, what comes after once the last one is (``document`` is called again)."""
    first = next(items, None)
    if first is None:
        out.write(json.dumps(document([]), indent=1) + "\n")
        return
    mark = json.dumps(_ITEMS)
    text = json.dumps(document([_ITEMS]), indent=1)
    at = text.index(mark)
    line = text.rfind("\n", 0, at) + 1
    indent = "\n" + " " * (at - line)
    out.write(text[:line])
    item: dict | None = first
    while item is not None:
        out.write(indent[1:] + json.dumps(item, indent=1).replace("\n", indent))
        item = next(items, None)
        if item is not None:
            out.write(",\n")
    text = json.dumps(document([_ITEMS]), indent=1)
    out.write(text[text.index(mark) + len(mark) :] + "\n")


def _write_json(result: Findings, out: TextIO, max_repeats: int) -> None:
    def document(findings: list) -> dict:
        return {
            "schema": "porter.lint/1",
            "porter_version": __version__,
            "files": result.files,
            "findings": findings,
            "errors": list(result.errors),
        }

    _write_json_items(out, document, (f.to_json() for f in result.findings))


def _sarif_result(f: LintFinding, index: dict[str, int]) -> dict:
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
    return {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": _level(f),
        "message": {"text": _full_message(f)},
        "locations": [location],
        "properties": {"cell": f.cell, "suggestion": f.suggestion, "needsRun": f.needs_run},
    }


def _write_sarif(result: Findings, out: TextIO, max_repeats: int) -> None:
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

    def document(results: list) -> dict:
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
        return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}

    _write_json_items(out, document, (_sarif_result(f, index) for f in result.findings))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _write_github(result: Findings, out: TextIO, max_repeats: int) -> None:
    """GitHub Actions workflow commands: ``::warning file=F,line=L,col=C,title=T::MESSAGE``."""
    counts = [0, 0]
    repeats = _Repeats(max_repeats, out)
    for f in _counted(result, counts):
        if not repeats.admit(f):
            continue
        title = f"porter {f.code} {f.kind}" + (f" (cell {f.cell})" if f.cell is not None else "")
        props = (
            f"file={_escape_property(f.path)},line={f.line},endLine={f.end_line},"
            f"col={f.col + 1},endColumn={f.end_col + 1},title={_escape_property(title)}"
        )
        command = "notice" if f.needs_run else "warning"
        out.write(f"::{command} {props}::{_escape_data(_full_message(f))}\n")
    repeats.flush()
    for e in result.errors:
        out.write(f"::error::{_escape_data(e)}\n")
    out.write(_summary(*counts, result.files) + "\n")


_WRITERS: dict[str, Callable[[Findings, TextIO, int], None]] = {
    "text": _write_text,
    "json": _write_json,
    "sarif": _write_sarif,
    "github": _write_github,
}

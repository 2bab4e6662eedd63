"""A cell's diagnostics: the rows the Porting panel lists and the editor marks show, and
what the headline counts, decided once here (CONTRACT.md, a cell entry's
``diagnostics``).

One row per thing the person may act on or should know: each call outside the standard
(or shown beside them as information: an acknowledged deviation, a host sync), each
device finding, the cell's own error, each target replay that failed, and each target
output whose values differ or whose dtype changed. A row carries its severity, whether it
is a finding, its one line of text, the group the panel files it under, and where it is
shown: the cell (lines as the editor counts them, the ``%%port`` line being line 1) or
the Python file of the person's where the code is written, with the calling cell named.
Views draw these rows; none builds or counts its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from porter_ext.model.calls import CallOrigin, CallRecord, ErrorInfo, Severity

if TYPE_CHECKING:
    from porter_ext.model.cells import CellEntry
    from porter_ext.model.comparison import DeviceFinding
    from porter_ext.model.entries import ReplayEntry

__all__ = ["ROW_KINDS", "Diagnostic", "diagnostics_of"]

#: a row's kind: a call's status, or one of the kinds of rows that are not calls
RowKind = Literal[
    "non_standard",
    "non_standard_usage",
    "acknowledged",
    "device_specific",
    "host_sync",
    "device",
    "cell_error",
    "replay_failure",
    "mismatch",
    "dtype_changed",
]
ROW_KINDS: tuple[str, ...] = get_args(RowKind)
#: the severity of the rows that are not calls (a call's is `CallRecord.severity`)
_SEVERITY: dict[str, Severity] = {
    "device": "warning",
    "cell_error": "error",
    "replay_failure": "error",
    "mismatch": "error",
    "dtype_changed": "info",
}
#: how the headline names a count of rows of a kind (singular, plural)
KIND_WORDS: dict[str, tuple[str, str]] = {
    "non_standard": ("call outside the standard", "calls outside the standard"),
    "non_standard_usage": ("usage outside the standard", "usages outside the standard"),
    "device_specific": ("device-specific call", "device-specific calls"),
    "device": ("device finding", "device findings"),
    "cell_error": ("error of the cell", "errors of the cell"),
    "replay_failure": ("replay failure", "replay failures"),
    "mismatch": ("mismatch", "mismatches"),
    "acknowledged": ("acknowledged call", "acknowledged calls"),
    "host_sync": ("host sync", "host syncs"),
    "dtype_changed": ("dtype change", "dtype changes"),
}


@dataclass(frozen=True)
class Diagnostic:
    """One row of a cell's diagnostics (see the module doc).

    ``line``/``col``/``end_line``/``end_col`` are where the row is shown, as the editor
    counts (lines 1-based with the cell's ``%%port`` line counted, columns 0-based in
    characters); ``source_line`` is the same line in the recorded source (the body below
    the ``%%port`` line; in a file, the file's line), which a view needs to place a mark
    in text that may have changed above it. ``origin`` is where the code is written when
    that is another cell or a file (``file``); ``called_from`` then names the calling
    cell and line."""

    kind: str
    finding: bool
    severity: Severity
    name: str
    message: str
    group: str
    line: int | None = None
    col: int = 0
    end_line: int | None = None
    end_col: int | None = None
    source_line: int | None = None
    origin: CallOrigin | None = None
    file: str | None = None
    called_from: str | None = None
    #: the full text (an exception's message) where the one line cut it short
    detail: str | None = None
    #: identical calls merged at the site (1 for rows that are not calls)
    count: int = 1
    backend: str | None = None
    #: for a row shown where another cell's (or a file's) code is: the line of the
    #: calling cell's recorded source that called into it
    calling_line: int | None = None
    #: for a call's row, the kind of call (`CallRecord.kind`: an operator or an index
    #: has no name on its line to find it by)
    call_kind: str | None = None
    #: for a call's row, the standard spelling to use instead, where there is one
    suggestion: str | None = None

    @property
    def kind_text(self) -> str:
        """The row's kind in words, as the headline names one row of it (the panel's
        severity glyph says it in its title): ``usage outside the standard``."""
        return KIND_WORDS[self.kind][0]

    @property
    def severity_text(self) -> str:
        """The row's severity with its kind in words, as the panel's severity glyph says
        it in its title: ``warning: usage outside the standard``."""
        return f"{self.severity}: {self.kind_text}"

    @property
    def called_from_text(self) -> str | None:
        """The calling cell and line in words, for a row shown where another cell's (or a
        file's) code is: ``called from cell 6 · In [9], line 2``; None for the others."""
        return None if self.called_from is None else f"called from {self.called_from}"

    @property
    def hover(self) -> str:
        """What a mark's hover says: the row's message, the spelling to use instead, its
        full detail, its caller."""
        parts = [self.message]
        if self.suggestion and f"→ {self.suggestion}" not in self.message:
            parts.append(f"use instead: {self.suggestion}")
        if self.detail and self.detail not in self.message:
            parts.append(self.detail)
        if self.called_from_text:
            parts.append(self.called_from_text)
        return "\n".join(parts)

    @property
    def title(self) -> str:
        """The row in one line, with its place (a panel row's full text)."""
        where = self.place or "the cell"
        called = f" ({self.called_from_text})" if self.called_from_text else ""
        return f"{where}: {self.name}{called} — {self.message}"

    @property
    def place(self) -> str:
        """Where the row is, in words: ``norms.py line 5`` in a file, ``cell 3 · In [2],
        line 5`` in another cell, ``line 3`` in the cell itself, or "" (the whole cell)."""
        line = "" if self.line is None else f"line {self.line}"
        if self.file is not None:
            return f"{self.file} {line}".strip()
        if self.origin is not None:
            return ", ".join(p for p in (self.origin.label, line) if p)
        return line


def _first_line(text: str) -> str:
    head, sep, _ = text.partition("\n")
    return f"{head} …" if sep else head


class _Rows:
    """The rows of one cell, made in the order views list them."""

    def __init__(self, cell: CellEntry) -> None:
        self.cell = cell
        self.rows: list[Diagnostic] = []

    def editor(self, line: int | None) -> int | None:
        return None if line is None else line + self.cell.first_line - 1

    def calling(self, line: int | None) -> str:
        at = self.editor(line)
        return self.cell.label if at is None else f"{self.cell.label}, line {at}"

    def add(self, kind: str, severity: Severity, **values: object) -> None:
        row = Diagnostic(kind=kind, finding=severity != "info", severity=severity, **values)
        self.rows.append(row)

    def call(self, call: CallRecord) -> None:
        why = f": {_first_line(call.message)}" if call.message else ""
        group = call.suggestion or call.standard_name or f"{call.status}, no standard replacement"
        origin = call.origin
        if origin is None:
            place: dict[str, object] = {
                "line": self.editor(call.line),
                "col": call.col,
                "end_line": self.editor(call.end_line),
                "end_col": call.end_col,
                "source_line": call.line,
            }
        else:  # shown where the code is written, the calling cell named
            shift = origin.first_line - 1
            place = {
                "line": origin.line + shift,
                "col": origin.col,
                "end_line": None if origin.end_line is None else origin.end_line + shift,
                "end_col": origin.end_col,
                "source_line": origin.line,
                "origin": origin,
                "file": origin.file,
                "called_from": self.calling(call.line),
                "calling_line": call.line,
            }
        # a row in a file is grouped by the file: it names the replacement itself
        use = f" → {call.suggestion}" if origin is not None and call.suggestion else ""
        self.add(
            call.status,
            call.severity,
            name=call.name,
            message=f"{call.name}{use}{why}",
            group=group,
            count=call.count,
            call_kind=call.kind,
            suggestion=call.suggestion,
            **place,
        )

    def _call_of(self, finding: DeviceFinding) -> CallRecord | None:
        """The call a device finding is about: the same line and name, in the cell's run
        or in the replay on the finding's backend."""
        runs = [self.cell.calls] + [
            r.calls for r in self.cell.replays if r.backend == finding.backend and r.calls
        ]
        for calls in runs:
            for call in calls:
                if call.line == finding.line and call.name == finding.name:
                    return call
        return None

    def device(self, finding: DeviceFinding) -> None:
        on = f" on {finding.backend}" if finding.backend else ""
        message = f"{finding.name} [{finding.kind.replace('_', ' ')}{on}] {finding.message}"
        call = self._call_of(finding) if finding.line is not None else None
        if call is not None and call.origin is not None:
            origin = call.origin
            place: dict[str, object] = {
                "line": origin.editor_line,
                "col": origin.col,
                "source_line": origin.line,
                "origin": origin,
                "file": origin.file,
                "called_from": self.calling(finding.line),
                "calling_line": finding.line,
            }
        else:
            place = {
                "line": self.editor(finding.line),
                "col": call.col if call is not None else 0,
                "end_line": self.editor(call.end_line) if call is not None else None,
                "end_col": call.end_col if call is not None else None,
                "source_line": finding.line,
            }
        self.add(
            "device",
            _SEVERITY["device"],
            name=finding.name,
            message=message.strip(),
            group=f"device: {finding.kind.replace('_', ' ')}",
            backend=finding.backend,
            **place,
        )

    def error_place(self, error: ErrorInfo | None) -> dict[str, object]:
        """Where an exception is shown: the person's file it was raised in, at its line
        there, the calling line named; else the cell's line."""
        if error is not None and error.file is not None and error.file_line:
            return {
                "line": error.file_line,
                "source_line": error.file_line,
                "file": error.file,
                "called_from": self.calling(error.line),
                "calling_line": error.line,
            }
        line = None if error is None else error.line
        return {"line": self.editor(line), "source_line": line}

    def cell_error(self, error: ErrorInfo) -> None:
        text = f"{error.type}: {error.message}"
        self.add(
            "cell_error",
            _SEVERITY["cell_error"],
            name=error.type,
            message=_first_line(error.text_in(self.cell.first_line)),
            group="errors of the cell",
            detail=text,
            **self.error_place(error),
        )

    def replay(self, replay: ReplayEntry) -> None:
        if replay.status in ("error", "timeout"):
            error = replay.error
            why = f"{error.type}: {error.message}" if error is not None else replay.reason or ""
            self.add(
                "replay_failure",
                _SEVERITY["replay_failure"],
                name=replay.backend,
                message=f"replay on {replay.backend}: {replay.status} {_first_line(why)}".strip(),
                group="replay failures",
                detail=why or None,
                backend=replay.backend,
                **self.error_place(error),
            )
        named = {f.name for f in self.cell.device_findings if f.backend == replay.backend}
        for out in replay.outputs:
            if out.device_ok is False and out.name not in named:
                self.add(
                    "device",
                    _SEVERITY["device"],
                    name=out.name,
                    message=(
                        f"{out.name} [wrong device on {replay.backend}] landed on "
                        f"{out.device}, expected {out.expected_device}"
                    ),
                    group="device: wrong device",
                    backend=replay.backend,
                )
            verdict = out.verdict
            if verdict not in ("mismatch", "dtype_changed"):
                continue
            self.add(
                verdict,
                _SEVERITY[verdict],
                name=out.name,
                message=f"{replay.backend}: {out.name} {out.verdict_text}",
                group="mismatches" if verdict == "mismatch" else "dtype changes",
                backend=replay.backend,
            )


def diagnostics_of(cell: CellEntry) -> list[Diagnostic]:
    """The cell's rows (see the module doc): its calls that are findings or noted, its
    device findings (a host sync once, as its call), its own error, then its target
    replays' failures and differing outputs."""
    rows = _Rows(cell)
    for call in cell.calls:
        if call.flagged:
            rows.call(call)
    for finding in cell.device_findings:
        if finding.kind != "host_sync":  # the call's own row says it
            rows.device(finding)
    if cell.error is not None:
        rows.cell_error(cell.error)
    for replay in cell.replays:
        if replay.role == "target":
            rows.replay(replay)
    return rows.rows

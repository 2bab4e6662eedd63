"""What a run recorded about the person's Python files, for ``porter lint --from-report``.

The source alone cannot tell that ``m`` in ``def norm_rows(m): return m.pow(2)`` is a
tensor: a module rarely imports the library its callers pass in. A report of ``porter
run`` (or ``%port report``) knows: the calls its recorded cells made inside the file carry
``origin.file``, with their library. Linting that file with the report gives the
functions' parameters the recorded library (the names the file's functions use as arrays,
`files.array_parameters_everywhere`), so the static checks flag ``m.pow(2)`` with their
own suggestion; a recorded finding the static checks still miss is reported as recorded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from porter_ext.fix.checks import CODE_OF, Site
from porter_ext.model.calls import CallRecord
from porter_ext.model.report import Report

__all__ = ["Recorded", "RecordedFile"]


@dataclass
class RecordedFile:
    """The recorded calls made inside one file of the person's."""

    file: str
    calls: list[CallRecord] = field(default_factory=list)

    @property
    def library(self) -> str | None:
        """The one array library its recorded findings were made with (None: several)."""
        found = {c.library for c in self.calls if c.flagged}
        return found.pop() if len(found) == 1 else None

    def arrays(self, source: str) -> dict[str, str]:
        """The names the file's functions use as arrays, of the recorded library."""
        from porter_ext.fix.files import array_parameters_everywhere

        library = self.library
        if library is None:
            return {}
        try:
            return array_parameters_everywhere(source, library)
        except SyntaxError:
            return {}

    def missed(self, found: Iterable[Site]) -> list[Site]:
        """Recorded findings that no finding of ``found`` names at their line."""
        seen = {(s.line, s.name) for s in found}
        out: dict[tuple[int, int, str], Site] = {}
        for call in self.calls:
            origin = call.origin
            if not call.flagged or origin is None or call.status not in CODE_OF:
                continue
            if (origin.line, call.name) in seen:
                continue
            out.setdefault(
                (origin.line, origin.col, call.name),
                Site(
                    line=origin.line,
                    col=origin.col,
                    end_line=origin.end_line or origin.line,
                    end_col=origin.end_col if origin.end_col is not None else origin.col,
                    code=CODE_OF[call.status],
                    name=call.name,
                    message=f"{call.message or call.status} (recorded by a run)".strip(),
                    suggestion=call.suggestion,
                ),
            )
        return list(out.values())


class Recorded:
    """The files of a report's recorded calls, found again by path: a file recorded as
    ``pkg/mod.py`` (relative to the notebook's folder) is the linted file whose path ends
    with it."""

    def __init__(self, report: Report):
        self.files: dict[str, RecordedFile] = {}
        for cell in report.cells:
            for call in cell.calls:
                if call.origin is not None and call.origin.file is not None:
                    shown = os.path.normpath(call.origin.file)
                    self.files.setdefault(shown, RecordedFile(shown)).calls.append(call)

    def for_path(self, path: Path) -> RecordedFile | None:
        resolved = str(path.resolve())
        for shown, recorded in self.files.items():
            if os.path.isabs(shown):
                if os.path.realpath(shown) == resolved:
                    return recorded
            else:  # the folders it names below the notebook's, whatever lies above
                parts = Path(shown).parts
                while parts and parts[0] == os.pardir:
                    parts = parts[1:]
                if parts and resolved.endswith(os.sep + os.path.join(*parts)):
                    return recorded
        return None

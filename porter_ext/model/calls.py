"""What the recorder keeps of a cell run: one `CallRecord` per distinct call at a site."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

CallKind = Literal["function", "method", "attribute", "operator", "index", "transformation"]
CallStatus = Literal[
    "standard",
    "non_standard",
    "non_standard_usage",
    "acknowledged",
    "device_specific",
    "host_sync",
    "outside_namespace",
]
KINDS: tuple[str, ...] = get_args(CallKind)
STATUSES: tuple[str, ...] = get_args(CallStatus)
Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[str, ...] = get_args(Severity)
#: the one mapping from a call's status to its severity (CONTRACT.md ``calls[].severity``):
#: a name outside the standard is an error; a usage outside it, or a vendor-specific
#: device call, a warning; a deliberate deviation through the escape hatch
#: (``acknowledged``), a forced host sync (a speed matter: ``float(x)`` is standard), a
#: call the standard does not judge (another library's, a transformation:
#: ``outside_namespace``) and a standard call are information
SEVERITY_OF_STATUS: dict[str, Severity] = {
    "standard": "info",
    "non_standard": "error",
    "non_standard_usage": "warning",
    "acknowledged": "info",
    "device_specific": "warning",
    "host_sync": "info",
    "outside_namespace": "info",
}
#: statuses that are findings: those whose severity is an error or a warning (the calls
#: that make code non-portable; the summary's ``non_standard`` counts these)
FINDING_STATUSES = frozenset(s for s, sev in SEVERITY_OF_STATUS.items() if sev != "info")
#: statuses shown beside the findings, as information (a diagnostic row of severity info)
NOTED_STATUSES = frozenset({"acknowledged", "host_sync"})


@dataclass(frozen=True)
class ErrorInfo:
    """An exception a cell (or a replay of it) raised, with the cell line it came from."""

    type: str
    message: str
    line: int | None = None
    #: where it was raised when that is a Python file of the person's (relative to the
    #: notebook's folder) the cell called into, and the line there
    file: str | None = None
    file_line: int | None = None

    def where_in(self, first_line: int) -> str:
        """Where it was raised, as every view says it, with the cell's lines as the
        editor counts them (``first_line``: the editor line of the recorded source's
        first line, `CellEntry.first_line`): ``line 3``, ``mymod.py line 2 (called
        from line 1)``, or "" where no line is known."""
        cell = f"line {self.line + first_line - 1}" if self.line else ""
        if self.file is None:
            return cell
        there = f"{self.file} line {self.file_line}" if self.file_line else self.file
        return f"{there} (called from {cell})" if cell else there

    def text_in(self, first_line: int) -> str:
        """The error in one line, as every view says it (CONTRACT.md, ``error.text``),
        lines counted from ``first_line`` as in `where_in`: ``Raised ValueError at line
        3: bad shape``; ``Raised ValueError: bad shape`` where no line is known."""
        at = self.where_in(first_line)
        return f"Raised {self.type}{f' at {at}' if at else ''}: {self.message}"


def cell_label(index: int | None, execution_count: int | None) -> str:
    """How every view names a cell, as JupyterLab does: its notebook position counted
    from 1 (``index`` is 0-based) where there is a notebook, its execution count beside
    it (``cell 4 · In [7]`` for index 3), else the execution count alone (``In [7]``)."""
    count = f"In [{execution_count}]" if execution_count is not None else ""
    if index is None:
        return count or "cell"
    return f"cell {index + 1} · {count}" if count else f"cell {index + 1}"


@dataclass(frozen=True)
class CallOrigin:
    """Where code written in another cell (a function an earlier cell defined) or in a
    Python file of the person's made a call: views show the finding there, and name the
    calling cell. ``index`` is that
    cell's notebook position where the run knows the notebook, ``cell_id`` the front
    end's id of it where the front end sent one; ``col`` counts characters."""

    index: int | None
    execution_count: int | None
    line: int
    col: int
    end_line: int | None = None
    end_col: int | None = None
    cell_id: str | None = None
    #: a Python file of the person's (relative to the notebook's folder) where the code is
    #: written, instead of a cell (then ``index`` and ``execution_count`` are None)
    file: str | None = None
    #: the editor line of that cell's recorded first line (2 below a ``%%port`` line;
    #: `CellEntry.first_line`); 1 in a file
    first_line: int = 1

    @property
    def editor_line(self) -> int:
        """``line`` as the editor of that cell (or file) counts it."""
        return self.line + self.first_line - 1

    @property
    def label(self) -> str:
        if self.file is not None:
            return self.file
        return cell_label(self.index, self.execution_count)


@dataclass
class CallRecord:
    """One array call site of a cell, merged over identical calls (same callee, status, devices)."""

    line: int
    col: int
    name: str
    library: str
    kind: CallKind
    status: CallStatus
    standard_name: str | None = None
    suggestion: str | None = None
    devices_in: list[str] = field(default_factory=list)
    device_out: str | None = None
    count: int = 1
    message: str = ""
    #: keyword names the call passed (``device`` tells a creation call that placed its output)
    keywords: list[str] = field(default_factory=list)
    #: what an operator's verdict on dtypes judged: the dtype of each operand, the array's
    #: first, a Python scalar as ``python int`` (``python float``, ``python bool``, ...);
    #: empty where the verdict is not about dtypes (the fix stage writes casts from it)
    operands: list[str] = field(default_factory=list)
    #: where the run's values chose how to rewrite the call (a list made an array, an
    #: integer array cast to the float64 a function takes), that rewrite as a template over
    #: the call's own source (``xp.log(xp.astype({arg0}, xp.float64))``: ``{x}`` the array,
    #: ``{arg0}`` the first argument as written, ``{axis}`` the axis): the fix stage fills
    #: it with the call as it rewrote it; None where the table's entry is the rewrite
    rewrite: str | None = None
    #: where the site's expression ends (``end_col`` in characters): the range a view marks
    end_line: int | None = None
    end_col: int | None = None
    #: where the call is written when that is another cell (``line``/``col`` are then
    #: where this cell called into that code)
    origin: CallOrigin | None = None
    #: the recorder's label of the cell whose code made the call, when it is not this
    #: cell (internal: the session resolves it into ``origin``; not in the JSON)
    origin_cell: int | str | None = None

    @property
    def flagged(self) -> bool:
        """A finding, or a call shown beside them as information (`NOTED_STATUSES`): the
        calls a view lists and the fix stage looks at."""
        return self.status in FINDING_STATUSES or self.status in NOTED_STATUSES

    @property
    def finding(self) -> bool:
        """Whether the call is a finding (CONTRACT.md ``calls[].finding``)."""
        return self.status in FINDING_STATUSES

    @property
    def severity(self) -> Severity:
        """The call's severity (`SEVERITY_OF_STATUS`, CONTRACT.md ``calls[].severity``)."""
        return SEVERITY_OF_STATUS.get(self.status, "info")

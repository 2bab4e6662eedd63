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
#: statuses that are findings (everything but a standard call, and but a call of another
#: library or a transformation, which the standard does not judge: ``outside_namespace``)
FINDING_STATUSES = frozenset(STATUSES) - {"standard", "outside_namespace"}


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

    @property
    def where(self) -> str:
        """Where it was raised, as every view says it: ``line 3``, ``mymod.py line 2
        (called from line 1)``, or "" where no line is known."""
        cell = f"line {self.line}" if self.line else ""
        if self.file is None:
            return cell
        there = f"{self.file} line {self.file_line}" if self.file_line else self.file
        return f"{there} (called from {cell})" if cell else there


def cell_label(index: int | None, execution_count: int | None) -> str:
    """How every view names a cell (the extension's ``cellLabel`` says the same): its
    notebook position where there is a notebook, its execution count beside it
    (``cell 3 · In [7]``), else the execution count alone (``In [7]``)."""
    count = f"In [{execution_count}]" if execution_count is not None else ""
    if index is None:
        return count or "cell"
    return f"cell {index} · {count}" if count else f"cell {index}"


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
    def is_finding(self) -> bool:
        return self.status in FINDING_STATUSES

    @property
    def where(self) -> str:
        """Where one cell's own output (which holds no other cell) puts the call:
        ``line 3``, or ``In [2] line 5`` for code another cell wrote."""
        if self.origin is None:
            return f"line {self.line}"
        return f"{self.origin.label} line {self.origin.line}"

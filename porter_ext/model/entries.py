"""The parts of a cell entry that porter adds to the stages' records: a replay of the
cell on one backend spec, the cell's rewrite into the standard, and the verdicts on
earlier cells' definitions that a cell's replay gave."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

from porter_ext.model.calls import CallRecord, ErrorInfo
from porter_ext.model.comparison import OutputComparison
from porter_ext.model.records import fields_of

ReplayStatus = Literal["ok", "error", "skipped", "timeout", "not_exercised"]
REPLAY_STATUSES: tuple[str, ...] = get_args(ReplayStatus)
#: why a replay ran: a backend to port to, the original backend again (the control, for
#: determinism), or the float64 reference
REPLAY_ROLES: tuple[str, ...] = ("target", "control", "reference")
#: what a view says after a person's file's name once its verified rewrite was written
#: over it (the front end knows when), until a cell that calls into it runs again
FILE_APPLIED = "rewrite applied; run a cell that calls it to check it again"


def _verified_text(specs: list[str], verified: bool) -> str | None:
    """On what replays verified a rewrite, in words (None: nothing was verified)."""
    if specs:
        return f"verified on {', '.join(specs)}"
    return "verified on its replays" if verified else None


#: an output comparison is the report's output entry as it is: the compare stage's one
#: pass already carries the error summaries the views plot (`error_histogram`, `error_map`)
OutputEntry = OutputComparison


@dataclass
class ReplayOutcome:
    """What became of a cell run again on one backend spec: the part of a replay that the
    live replay (`porter_ext.replay.run.ReplayResult`, whose outputs are values) and the
    report's `ReplayEntry` (whose outputs are comparisons) share, declared once here.
    Not frozen: the live replay is filled in as it runs, and a dataclass cannot extend a
    frozen one without being frozen too."""

    backend: str
    status: ReplayStatus
    seconds: float | None = None
    error: ErrorInfo | None = None
    reason: str | None = None
    #: where it ran: "local worker (pid N)", a remote kernel, "in-process"
    worker: str | None = None
    #: one of REPLAY_ROLES; "control" replays are not counted as replays to port to
    role: str = "target"
    #: what kept the replay off the person's files: "namespace", "audit-hook", "in-process"
    isolation: str | None = None
    #: the marked expressions the replay evaluated again on other libraries
    #: (`porter_ext.replay.probes.Probed`; None: none were marked); not in the report
    probes: list | None = field(default=None, compare=False, repr=False)


@dataclass
class ReplayEntry(ReplayOutcome):
    """A replay as the report holds it: its outcome, its outputs compared with the
    original run, and ``calls``, what was recorded on that backend when the replay
    recorded at all (None: not recorded, as opposed to [] no calls)."""

    outputs: list[OutputComparison] = field(default_factory=list, kw_only=True)
    calls: list[CallRecord] | None = field(default=None, kw_only=True)

    @classmethod
    def of(
        cls,
        outcome: ReplayOutcome,
        outputs: list[OutputComparison],
        calls: list[CallRecord] | None,
        reason: str | None,
    ) -> ReplayEntry:
        """The entry of a replay whose ``outcome`` is known (a live replay's, say), with its
        compared outputs and ``reason``, what the entry says of it (the live replay's own
        reason and notes)."""
        shared = fields_of(outcome, ReplayOutcome)
        return cls(**{**shared, "reason": reason}, outputs=outputs, calls=calls)


#: what became of a cell's proposed rewrite (``--fix``, ``porter fix``)
REWRITE_STATUSES: tuple[str, ...] = ("verified", "partial", "refused")


@dataclass(frozen=True)
class RewriteSiteEntry:
    """One site of a cell's rewrite (a call, an attribute read, an operator, a write into an
    array), one type from the fix stage's proposal to the report: its ``replacement`` (None:
    left as written, ``reason`` says why), ``applied`` once verification keeps it in the
    cell's rewrite."""

    line: int
    col: int
    name: str
    original: str
    replacement: str | None = None
    applied: bool = False
    reason: str | None = None
    #: the libraries its rewritten expression gave the original's values on at its calls,
    #: where the cell as a whole could not be replayed there (`porter_ext.fix.site_checks`)
    checked_on: list[str] = field(default_factory=list)
    #: what that check said (where it verified, and why not elsewhere); None: not checked
    check: str | None = None


@dataclass(frozen=True)
class RewriteEntry:
    """A cell's rewrite into the standard and what the replays said of it: ``verified``
    (every site, on every spec in ``verified_on``), ``partial`` (narrowed to the sites
    that verify) or ``refused`` (``source`` is then the cell as it was)."""

    source: str
    status: str
    verified_on: list[str] = field(default_factory=list)
    sites: list[RewriteSiteEntry] = field(default_factory=list)
    reason: str | None = None
    diff: str = ""
    #: ``porter fix`` put it into the ported notebook (the plan says its fixes applied)
    applied: bool = False

    @property
    def verified_text(self) -> str | None:
        """On what the replays verified it, in words every view shows: ``verified on
        numpy, jax:cpu``; None where nothing was verified."""
        return _verified_text(self.verified_on, self.status == "verified")


@dataclass(frozen=True)
class FileVerdict:
    """What a cell's replays said of the rewrite of a Python file of the person's that the
    cell called into (``porter fix``): ``file`` relative to the notebook's folder, the
    ``digest`` of its text when recorded (nothing is written to a file that changed
    since), the rewritten ``source``, and whether the cell's replays with it agreed with
    the cell's original run. Carried by the calling cell's entry; porter's side accepts
    the file's rewrite when every calling cell did."""

    file: str
    digest: str
    source: str
    accepted: bool
    verified_on: list[str] = field(default_factory=list)
    sites: list[RewriteSiteEntry] = field(default_factory=list)
    reason: str | None = None
    #: the calling cell, as views name it
    where: str | None = None

    @property
    def summary(self) -> str:
        """The verdict in the words every view shows after the file's name: ``verified on
        numpy (called from cell 2 · In [3])``, ``not verified by cell 3 · In [4]: the
        replays disagree``."""
        if self.accepted:
            by = f" (called from {self.where})" if self.where else ""
            return f"{_verified_text(self.verified_on, True)}{by}"
        by = f" by {self.where}" if self.where else ""
        why = f": {self.reason}" if self.reason else ""
        return f"not verified{by}{why}"

    @property
    def applied_text(self) -> str:
        """What a view says after the file's name once the rewrite was written over it."""
        return FILE_APPLIED


@dataclass(frozen=True)
class DefinitionVerdict:
    """What a cell's replay said of a function an earlier cell defined, whose rewrite
    waited for a call (``porter fix``: a cell that only defines functions runs none of
    them). Carried by the calling cell's entry; porter's side gives the defining cell
    its verdict from it once the notebook ran."""

    cell: int  # the defining cell's notebook index
    name: str
    accepted: bool
    where: str  # the call site in the calling cell: ``line L: `text```
    verified_on: list[str] = field(default_factory=list)
    reason: str | None = None  # why not, when refused

    def note(self) -> str:
        """The verdict in words, as the calling cell's notes show it."""
        kind = "verified" if self.accepted else "refused"
        text = f"porter fix: {kind} {self.name} of cell {self.cell} at its call here ({self.where})"
        return (
            f"{text} on {', '.join(self.verified_on)}"
            if self.accepted
            else f"{text}: {self.reason}"
        )

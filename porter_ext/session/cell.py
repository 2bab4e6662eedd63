"""One recorded cell, from its start to its entry in the session.

This is the one path of every recorded cell: ``%%port`` cells (and the headless runs,
``porter run`` and ``porter fix``, whose kernels run ``%%port`` cells) and the cells
``%port on`` records. `begin` makes the cell's `CellJob` once, when the cell starts (its
source as written and as it runs, the namespace, the settings, the replay plan and the
``--fix`` capture); the cell runs (`run_cell`, or IPython itself under ``%port on``);
`finish` turns the run into the cell's entry (its replays, device findings and
verified rewrite) and keeps it; `release` leaves what the cell defined as written.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from porter_ext.guard import guarded
from porter_ext.model.calls import ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.record import as_written, person_code
from porter_ext.record.cell import CellRun, RecordSettings, cell_filename, run_recorded
from porter_ext.record.syntax import CellSyntax
from porter_ext.session.options import PortOptions

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FunctionType

    from porter_ext.compare.pipeline import ReplayJob
    from porter_ext.fix.verify import FixRun
    from porter_ext.replay.plan import ReplayPlan
    from porter_ext.session.result import PortResult
    from porter_ext.session.session import Session


@dataclass
class CellJob:
    """What is fixed for one recorded cell, made once when it starts (`begin`)."""

    #: the cell as the person wrote it (what the report shows)
    source: str
    #: the cell as it runs: IPython's transformation of ``source``, its line numbers kept
    code: str
    #: the person's namespace the cell runs in
    namespace: dict
    options: PortOptions
    #: how the run records (its cell label, strictness, version, compiler flags)
    record: RecordSettings
    #: the cell's execution count (None without a shell)
    count: int | None
    #: the file name the cell's code compiles under (None: known only once IPython
    #: compiles it, ``%port on``)
    filename: str | None
    #: the cell's one syntax object, shared by the analysis and the recorder's rewrite
    syntax: CellSyntax | None
    #: the replays: their plan, settings and tolerance policy
    replay: ReplayJob
    #: ``--fix``: the rewrite's capture, made before the run (None without ``--fix``)
    fix: FixRun | None = None
    #: the functions of earlier recorded cells, armed to record their calls in this cell
    armed: list[FunctionType] = field(default_factory=list)
    #: the shell's other AST transformers (what the cell's definitions are compiled with)
    transformers: list[Callable[[ast.Module], ast.Module]] = field(default_factory=list)
    #: lines about the person's code porter could not record (a file changed since import)
    notes: list[str] = field(default_factory=list)
    #: the editor line of the source's first line: 2 below a ``%%port`` line, 1 for a
    #: cell recorded whole (``%port on``) or one whose ``%%port`` line ``porter run`` added
    first_line: int = 2
    #: the cell's notebook position (0-based; `Session.running_index`), or None
    index: int | None = None

    @property
    def plan(self) -> ReplayPlan | None:
        return self.replay.plan


def begin(
    session: Session,
    source: str,
    code: str,
    namespace: dict,
    options: PortOptions,
    compiled_by_ipython: bool = False,
) -> CellJob:
    """The cell's job, before it runs: its place noted, the functions of earlier cells
    armed, its replays planned (their inputs captured), ``--fix``'s capture made.

    A ``%%port`` cell's code is cached under a file name of its own (tracebacks show its
    lines); the cell ``%port on`` records is compiled by IPython (``compiled_by_ipython``),
    under a name known once it compiles."""
    count = session._execution_count()
    label = count if count is not None else len(session.cells)
    first_line = 1 if compiled_by_ipython else session.first_line
    index = session.running_index()
    session._note_place(label, count, first_line, index)
    shell = session.shell
    flags = shell.compile.flags if shell is not None else 0
    filename = None
    if not compiled_by_ipython:
        filename = (
            shell.compile.cache(code, label) if shell is not None else cell_filename(label, code)
        )
    specs = (
        []
        if options.no_replay
        else list(options.backends if options.backends is not None else session.config.backends)
    )
    # the person's functions of earlier recorded cells record their calls again (their
    # rewrite, in this run and in the inputs its replays get) until the cell is done
    notes: list[str] = []
    with guarded("finding the person's code written outside the cell", notes):
        person_code.reachable(namespace, notes)
    armed = as_written.arm()
    # parsed once, by the first that needs it: the analysis, then the rewrite
    syntax = CellSyntax(code, filename, flags) if filename is not None else None
    plan = session._plan(code, namespace, specs, options, syntax)
    fix = None
    if options.fix:
        from porter_ext.fix import verify_cell  # libcst and the table: only for --fix

        fix = verify_cell.start(
            source, code, namespace, specs, session.fixing(options, label, index)
        )
    record = RecordSettings(
        cell=label,
        strict=options.strict,
        version=options.version or session.config.version,
        compile_flags=flags,
        paths=(*person_code.added(), *options.paths),
        modules=person_code.loaded_modules(),
    )
    replay = session._job(plan, code, namespace, record, options)
    return CellJob(
        source,
        code,
        namespace,
        options,
        record,
        count,
        filename,
        syntax,
        replay,
        fix=fix,
        armed=armed,
        first_line=first_line,
        transformers=session._transformers(),
        notes=notes,
        index=index,
    )


#: the note of a cell the person interrupted (Ctrl-C) while porter recorded it
INTERRUPTED = "not replayed: you interrupted the cell (Ctrl-C) while porter recorded it"


def run_cell(session: Session, job: CellJob) -> tuple[PortResult, CellRun]:
    """Run the cell once in the person's namespace while recording it, and keep its entry
    (`finish`). The cell's exception is in ``run.exception``; a SyntaxError propagates
    before anything runs."""
    ran = False
    try:
        with session._magics_recorded(job):
            run = run_recorded(
                job.code,
                job.namespace,
                job.record,
                filename=job.filename,
                syntax=job.syntax,
                ast_transformers=job.transformers,
            )
        ran = True
        return finish(session, job, run), run
    finally:
        release(job, job.filename if ran else None)


def finish(session: Session, job: CellJob, run: CellRun) -> PortResult:
    """The cell's entry, once it ran: its calls and error, its replays and device
    findings, its verified rewrite (``--fix``), kept in the session."""
    entry = CellEntry(
        index=job.index,
        execution_count=job.count,
        source=job.source,
        error=run.error,
        calls=run.calls,
        first_line=job.first_line,
    )
    warnings = [*job.notes, *run.warnings]
    if isinstance(run.exception, KeyboardInterrupt):
        # the person stopped the cell: nothing of it is replayed or verified (a replay
        # would run what they stopped again, as long or forever)
        entry = replace(entry, notes=[*entry.notes, INTERRUPTED])
        return session.add(entry, warnings)
    replay = job.replay
    if job.fix is not None:
        from porter_ext.fix import verify_cell

        replay = verify_cell.replay_job(job.replay, run)
    entry, more = session._replay(entry, replay, run)
    warnings += more
    if job.fix is not None:
        entry, more = verify_cell.finish(job.fix, entry, job.namespace, run, job.replay)
        warnings += more
    return session.add(entry, warnings)


def release(job: CellJob, filename: str | None) -> None:
    """What the cell defined is left as written (compiled under ``filename``; None: the
    cell did not run), as a plain run leaves it; earlier cells' functions disarmed."""
    try:
        if filename is not None:
            with guarded("giving the cell's functions their code as written"):
                as_written.restore(
                    job.namespace, job.code, filename, job.record.compile_flags, job.transformers
                )
    finally:
        as_written.disarm(job.armed)


def unparsed(session: Session, source: str, exc: SyntaxError) -> None:
    """A cell that does not parse is still a cell of the report, with its error (and
    ``_port`` keeps the last cell that ran)."""
    error = ErrorInfo(type=type(exc).__name__, message=str(exc.msg), line=exc.lineno)
    count = session._execution_count()
    session.cells.append(
        CellEntry(index=session.running_index(), execution_count=count, source=source, error=error)
    )

"""The porter session: configuration, the history of cell results, report assembly.

A `Session` works with or without IPython. With a shell it uses IPython's own input
transformations (so ``%time`` and ``!cmd`` lines work inside ``%%port`` cells), its
compiler flags, its displayhook (so ``Out``/``_`` behave as usual) and its events
(``%port on``). The magics are a thin layer over this.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import linecache
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING

from porter_ext.guard import internal_error
from porter_ext.model.cells import CellEntry
from porter_ext.model.report import Report
from porter_ext.record import person_code
from porter_ext.record.cell import (
    NO_VALUE,
    CellRun,
    RecordSettings,
    keep_line_numbers,
    run_unrecorded,
)
from porter_ext.record.hooks_importlib_bootstrap import HOOK_NAMES
from porter_ext.record.magic_code import MagicRewriter
from porter_ext.record.recorder import install_hooks
from porter_ext.record.syntax import CellSyntax
from porter_ext.session import cell
from porter_ext.session.cell_order import CellOrder, order_of
from porter_ext.session.options import NETWORK_VARIABLE, PortOptions, SessionConfig
from porter_ext.session.places import CellPlace, CellPlaces, front_end_cell_id
from porter_ext.session.port_on import OnTransformer, PortOn
from porter_ext.session.result import PortResult, UnrecordedResult, environment
from porter_ext.session.turns import TURNS

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell

    from porter_ext.compare.pipeline import ReplayJob
    from porter_ext.fix.verify_cell import FixPlace
    from porter_ext.replay.plan import ReplayPlan
    from porter_ext.replay.workers import WorkerPool
    from porter_ext.session.cell import CellJob

_HIDDEN_NAMES = HOOK_NAMES


class Session:
    """Everything porter keeps between cells of one kernel."""

    def __init__(self, shell: InteractiveShell | None = None, config: SessionConfig | None = None):
        self.shell = shell
        self.config = config or SessionConfig()
        self.cells: list[CellEntry] = []
        self.last: PortResult | None = None
        self.recording = False
        self._port_on = PortOn(self)
        self.cell_index: int | None = None  # set by `porter run` for notebook cells
        #: where the front end says each cell is (a live kernel; `cell_order`)
        self.cell_order = order_of(shell) if shell is not None else CellOrder()
        #: the editor line of a ``%%port`` cell's body: 2, below its ``%%port`` line; 1
        #: where ``porter run`` added that line to a notebook cell (set before each cell)
        self.first_line = 2
        self._pool: WorkerPool | None = None
        #: set by `porter run`: the report must judge the whole notebook, so what would
        #: drop results (``%port clear``) is ignored and noted on the cell that asked
        self.headless = False
        self._notes: list[str] = []
        self._transformed: dict[tuple, str] = {}
        #: the recorder's label of each recorded cell → where the cell is (origins)
        self.places = CellPlaces()

    # -- recording one cell ------------------------------------------------------------
    def _execution_count(self) -> int | None:
        """The running cell's count: IPython counts the cell before running it (its own
        displayhook shows ``Out[execution_count - 1]``)."""
        count = getattr(self.shell, "execution_count", None) if self.shell is not None else None
        return count - 1 if isinstance(count, int) and count > 0 else count

    def running_index(self) -> int | None:
        """The running cell's notebook position (0-based): the one ``porter run`` set,
        else where the front end's cell order puts the cell's id, else None."""
        if self.cell_index is not None or self.shell is None:
            return self.cell_index
        return self.cell_order.position(front_end_cell_id(self.shell))

    def port_cell(
        self, source: str, options: PortOptions | None = None, namespace: dict | None = None
    ) -> tuple[PortResult, CellRun]:
        """Run a cell once in the person's namespace while recording it, and keep the result.

        The cell's exception (if any) is in ``run.exception``: the caller re-raises it.
        A SyntaxError propagates before anything runs, the cell kept with its error.
        A cell of another thread waits for its turn (`porter_ext.session.turns`), or runs
        unrecorded.
        """
        refused = TURNS.take()
        if refused is not None:
            return self._unrecorded(source, refused, namespace)
        try:
            if self.shell is not None:
                code, namespace = self._transform(source), self.shell.user_ns
            else:
                code = source
                namespace = namespace if namespace is not None else {}
            options = options or PortOptions()
            with person_code.more_paths(options.paths):
                job = cell.begin(self, source, code, namespace, options)
                return cell.run_cell(self, job)
        except SyntaxError as exc:
            cell.unparsed(self, source, exc)
            raise
        finally:
            TURNS.release()

    def _unrecorded(
        self, source: str, reason: str, namespace: dict | None
    ) -> tuple[PortResult, CellRun]:
        """The cell run as without porter, nothing of it recorded or kept."""
        if self.shell is not None:
            code, namespace = self._transform(source), self.shell.user_ns
            settings = RecordSettings(compile_flags=self.shell.compile.flags)
            filename = self.shell.compile.cache(code, self._execution_count() or 0)
        else:
            code, settings, filename = source, RecordSettings(), None
            namespace = namespace if namespace is not None else {}
        run = run_unrecorded(code, namespace, settings, filename=filename)
        count = self._execution_count()
        index = self.running_index()
        entry = CellEntry(index, count, source, run.error, calls=[], notes=[reason])
        return UnrecordedResult(entry, reason), run

    def _transformers(self) -> list:
        """The shell's AST transformers but ``%port on``'s (the cell's code is compiled
        with them, as IPython compiles it)."""
        if self.shell is None:
            return []
        return [t.visit for t in self.shell.ast_transformers if not isinstance(t, OnTransformer)]

    def cell_source(self, filename: str) -> tuple[int, str, int, list] | None:
        """The cell IPython compiled under ``filename``: (execution count, code as
        compiled, compiler flags, AST transformers), or None for another file (what
        `person_code` reads to record functions defined in plain cells)."""
        shell = self.shell
        names = getattr(getattr(shell, "compile", None), "_filename_map", None)
        if not isinstance(names, dict) or filename not in names:
            return None
        cached = linecache.cache.get(filename)
        if cached is None or not isinstance(names[filename], int):
            return None
        return names[filename], "".join(cached[2]), shell.compile.flags, self._transformers()

    def fixing(self, options: PortOptions, label: int | str, index: int | None) -> FixPlace:
        """Where ``--fix`` verifies the rewrite of the cell recorded under ``label``
        (notebook position ``index``)."""
        from porter_ext.fix.verify_cell import FixPlace  # libcst: only for --fix

        return FixPlace(
            pool=None if options.in_process else self.pool,
            shell=self.shell,
            in_process=options.in_process,
            in_effect=self.headless,
            owner=self,
            index=index,
            cell=label,
        )

    @contextlib.contextmanager
    def _magics_recorded(self, job: CellJob) -> Iterator[None]:
        """While the cell runs, the code of its ``%time``/``%timeit`` lines is recorded
        (IPython hands it to the shell's AST transformers, see `MagicRewriter`)."""
        if self.shell is None:
            yield
            return
        namespace = job.namespace
        range_is_builtin = namespace.get("range", builtins.range) is builtins.range
        rewriter = MagicRewriter(
            job.code, job.record.cell, job.filename, range_is_builtin=range_is_builtin
        )
        self.shell.ast_transformers.append(rewriter)
        try:
            yield
        finally:
            with contextlib.suppress(ValueError):  # IPython drops one that raised
                self.shell.ast_transformers.remove(rewriter)

    def _note_place(
        self, label: int | str | None, count: int | None, first_line: int, index: int | None
    ) -> None:
        """Remember where the cell about to be recorded under ``label`` is."""
        cell_id = front_end_cell_id(self.shell) if self.shell is not None else None
        self.places.note(label, CellPlace(index, count, cell_id, first_line))

    def _transform(self, source: str) -> str:
        """IPython's transformation of a cell (``%time``, ``!cmd``), with the raw cell's
        line numbers. A cell of several lines gets only IPython's static transformations,
        which depend on the source and the transformers alone: a cell run again (a loop of
        runs, a benchmark) is transformed once while the transformers stay the same."""
        shell = self.shell
        manager = shell.input_transformer_manager
        key = (
            source,
            tuple(map(id, manager.cleanup_transforms)),
            tuple(map(id, manager.line_transforms)),
            tuple(map(id, manager.token_transformers)),
            tuple(map(id, shell.input_transformers_post)),
        )
        cache = self._transformed
        code = cache.get(key)
        if code is None:
            transformed = shell.transform_cell(source)
            code = keep_line_numbers(source, transformed)
            if len(transformed.splitlines()) > 1:  # one line: prefilters read the session
                if len(cache) >= 64:
                    cache.clear()
                cache[key] = code
        return code

    @property
    def pool(self) -> WorkerPool:
        """The worker kernels replays run in: the kernel's, started on first use, kept
        for later cells and stopped when the kernel exits."""
        if self._pool is None:
            from porter_ext.replay.worker_kernel import use_program
            from porter_ext.replay.workers import shared_pool

            use_program(WORKER_PROGRAM)
            self._pool = shared_pool()
        return self._pool

    def _plan(
        self,
        code: str,
        namespace: dict,
        specs: list,
        options: PortOptions | None = None,
        syntax: CellSyntax | None = None,
    ):
        from porter_ext.replay.plan import plan

        options = options or PortOptions()
        try:
            return plan(
                code,
                namespace,
                specs,
                pool=self.pool if specs else None,
                control=not options.no_control,
                in_process=options.in_process,
                syntax=syntax,
            )
        except SyntaxError:  # the run reports it
            return None
        except Exception as exc:  # porter's failure: the person's run goes on unreplayed
            internal_error("planning the replays of this cell", exc)
            return None

    def _job(
        self,
        plan: ReplayPlan | None,
        code: str,
        namespace: dict,
        record: RecordSettings,
        options: PortOptions,
    ) -> ReplayJob:
        """What is fixed for the cell's replays, from its plan and options, made once."""
        from porter_ext.compare.pipeline import ReplayJob
        from porter_ext.replay.run import ReplaySettings

        network = options.allow_network or os.environ.get(NETWORK_VARIABLE) == "1"
        settings = ReplaySettings(record=record, timeout=options.timeout, network=network)
        return ReplayJob(plan, code, namespace, settings, self.policy(options))

    def _replay(
        self, entry: CellEntry, job: ReplayJob, run: CellRun
    ) -> tuple[CellEntry, list[str]]:
        """The entry with its replays and device findings (the original run's too), and
        porter's warnings about them."""
        from porter_ext.compare.pipeline import (
            IN_PROCESS_WARNING,
            compare_replays,
            original_findings,
        )

        findings: list = []
        replays: list = []
        warnings: list[str] = []
        try:
            findings = original_findings(entry, job.plan, job.namespace, run)
            replays, more = compare_replays(job, run)
            findings += more
            if job.plan is not None and job.plan.in_process and replays:
                warnings.append(IN_PROCESS_WARNING)
        except Exception as exc:
            internal_error("replaying the cell", exc, warnings)
        return dataclasses.replace(entry, replays=replays, device_findings=findings), warnings

    def policy(self, options: PortOptions):
        from porter_ext.compare.tolerance import get_policy

        policy = get_policy(options.policy or self.config.policy)
        if options.rtol is not None or options.atol is not None:
            policy = policy.override(rtol=options.rtol, atol=options.atol)
        return policy

    def note(self, text: str) -> None:
        """Note `text` on the next cell entry added (the cell running now)."""
        self._notes.append(text)

    def add(self, entry: CellEntry, warnings: list[str] | None = None) -> PortResult:
        resolved = self.places.resolve(entry.calls, self.cell_order)
        for replay in entry.replays:
            resolved |= self.places.resolve(replay.calls or (), self.cell_order)
        if self._notes or resolved:  # derived again: its rows name the origins' cells
            entry = dataclasses.replace(entry, notes=[*entry.notes, *self._notes])
            self._notes = []
        self.cells.append(entry)
        self.last = PortResult(entry, warnings)
        if self.shell is not None:
            self.shell.user_ns["_port"] = self.last
        return self.last

    def display_value(self, run: CellRun) -> None:
        """Show the cell's last value the way IPython would (``Out[n]``, ``_``)."""
        if run.value is NO_VALUE or self.shell is None:
            return
        sys.displayhook(run.value)

    # -- %port on / off ----------------------------------------------------------------
    def start_recording(self) -> None:
        if self.recording or self.shell is None:
            self.recording = True
            return
        self.recording = True
        self._port_on.start()

    def stop_recording(self) -> None:
        if not self.recording:
            return
        self.recording = False
        if self.shell is not None:
            self._port_on.stop()

    # -- history and reports -----------------------------------------------------------
    def clear(self) -> None:
        if self.headless:
            self.note("%port clear was ignored: a headless run keeps every cell in the report")
            return
        self.cells.clear()
        self.last = None
        if self.shell is not None:
            self.shell.user_ns.pop("_port", None)

    def status(self) -> str:
        state = "on" if self.recording else "off"
        backends = ", ".join(str(b) for b in self.config.backends) or "none"
        return (
            f"porter: recording every cell is {state}; {len(self.cells)} cell result(s) kept; "
            f"checking against the array API standard {self.config.version}; "
            f"replaying on: {backends}"
        )

    def report(self, notebook: str | None = None) -> Report:
        return Report.build(
            self.cells,
            environment(),
            array_api_version=self.config.version,
            notebook=notebook,
        )


#: what the session's workers run for each replay (`worker_kernel.use_program`)
WORKER_PROGRAM = "porter_ext.session.worker_program"


_sessions: dict[int, Session] = {}


def get_session(shell: InteractiveShell | None = None) -> Session:
    """The session of a shell (created on first use); ``None`` gives a shell-less one."""
    key = id(shell)
    session = _sessions.get(key)
    if session is None or session.shell is not shell:
        session = _sessions[key] = Session(shell)
        if shell is not None:
            person_code.configure(cell_sources=session.cell_source)
            install_hooks(shell.user_ns)
            for name in _HIDDEN_NAMES:
                shell.user_ns_hidden[name] = shell.user_ns[name]
            shell.events.register("post_run_cell", session.places.note_ran)
    return session


def drop_session(shell: InteractiveShell) -> None:
    session = _sessions.pop(id(shell), None)
    if session is not None:
        session.stop_recording()
        with contextlib.suppress(ValueError):
            shell.events.unregister("post_run_cell", session.places.note_ran)

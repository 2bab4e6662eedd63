"""``%port on``: every cell recorded as it runs, through IPython's events.

IPython runs these cells itself, so the cell's one path (`porter_ext.session.cell`) is
entered from its events: ``pre_run_cell`` begins the cell's job and starts a recorder,
the AST transformer gives the compiled cell the recorder's rewrite, and
``post_run_cell`` finishes the job from what the recorder saw and shows the result.
"""

from __future__ import annotations

import ast
import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING

from porter_ext.guard import internal_error
from porter_ext.record.cell import NO_VALUE, CellRun, error_info
from porter_ext.record.compilers import CellCode
from porter_ext.record.magic_code import MagicRewriter
from porter_ext.record.recorder import Recorder, install_hooks
from porter_ext.record.runners import register_cell_file
from porter_ext.record.transformer import transform
from porter_ext.session import cell
from porter_ext.session.options import PortOptions

if TYPE_CHECKING:
    from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult

    from porter_ext.session.result import PortResult
    from porter_ext.session.session import Session


@dataclass
class _Recorded:
    """The cell ``%port on`` is recording: its recorder, its job and the raw cell."""

    recorder: Recorder
    job: cell.CellJob
    raw: str


class PortOn:
    """``%port on`` of one session: its event handlers and AST transformer."""

    def __init__(self, session: Session):
        self.session = session
        self.current: _Recorded | None = None
        self.transformer = OnTransformer(self)

    def start(self) -> None:
        shell = self.session.shell
        install_hooks(shell.user_ns)
        shell.ast_transformers.append(self.transformer)
        shell.events.register("pre_run_cell", self.pre_run_cell)
        shell.events.register("post_run_cell", self.post_run_cell)

    def stop(self) -> None:
        shell = self.session.shell
        shell.ast_transformers[:] = [
            t for t in shell.ast_transformers if not isinstance(t, OnTransformer)
        ]
        for event, fn in (
            ("pre_run_cell", self.pre_run_cell),
            ("post_run_cell", self.post_run_cell),
        ):
            with contextlib.suppress(ValueError):
                shell.events.unregister(event, fn)

    @staticmethod
    def _is_port_cell(source: str) -> bool:
        return source.lstrip().startswith(("%%port", "%port"))

    def pre_run_cell(self, info: ExecutionInfo) -> None:
        raw = info.raw_cell or ""
        if self._is_port_cell(raw):  # a %%port cell records itself
            self.current = None
            return
        session = self.session
        shell = session.shell
        config = session.config
        options = PortOptions(strict=config.strict)
        code = shell.transform_cell(raw)
        job = cell.begin(session, raw, code, shell.user_ns, options, compiled_by_ipython=True)
        recorder = Recorder(strict=options.strict, version=config.version, cell=job.record.cell)
        recorder.namespace = shell.user_ns  # (the globals of its runners)
        # (the file name: the one IPython compiles it under, registered by the transformer)
        recorder.cell_code = CellCode(
            job.code, None, job.record.compile_flags, tuple(job.transformers)
        )
        self.current = _Recorded(recorder, job, raw)
        recorder.start()

    def filename(self) -> str | None:
        """The file name IPython compiles the recorded cell under (it cached the cell under
        its execution count, which it counts up before running it unless the run keeps no
        history)."""
        shell = self.session.shell
        compiler = getattr(shell, "compile", None)
        count = getattr(shell, "execution_count", None)
        current = self.current
        if current is None or compiler is None or not isinstance(count, int):
            return None
        known = getattr(compiler, "_filename_map", None)
        for number in (count - 1, count):
            name = compiler.get_code_name(current.raw, current.job.code, number)
            if not isinstance(known, dict) or name in known:
                return name
        return None

    def post_run_cell(self, result: ExecutionResult) -> None:
        current, self.current = self.current, None
        if current is None:
            return
        shell = self.session.shell
        filename = None
        if getattr(result, "error_before_exec", None) is None:
            filename = shell.compile.get_code_name(
                current.raw, current.job.code, result.execution_count
            )
        try:
            port = self._finish(current, result, filename)
        finally:
            cell.release(current.job, filename)
        if port is not None:
            from IPython.display import display

            display(port)

    def _finish(
        self, current: _Recorded, result: ExecutionResult, filename: str | None
    ) -> PortResult | None:
        current.recorder.stop()
        job = current.job
        error = None
        exc = getattr(result, "error_in_exec", None)
        if exc is not None:
            error = error_info(exc, filename or "")
        calls = current.recorder.records()
        if not calls and error is None:  # nothing to show: not replayed, inputs freed
            if job.plan is not None and job.plan.capture is not None:
                job.plan.capture.release()
            return None
        value = result.result if getattr(result, "result", None) is not None else NO_VALUE
        run = CellRun(
            source=job.code,
            calls=calls,
            error=error,
            exception=exc,
            value=value,
            warnings=list(current.recorder.warnings),
        )
        return cell.finish(self.session, job, run)


class OnTransformer(ast.NodeTransformer):
    """The AST transformer of ``%port on``. A failure of porter's leaves the cell
    unrecorded with porter's warning; it raises only under ``PORTER_DEBUG`` (IPython
    then unregisters the transformer, with a warning naming the failure)."""

    def __init__(self, port_on: PortOn):
        self.port_on = port_on
        #: the %time/%timeit lines of the cell being recorded
        self.magics: MagicRewriter | None = None

    def visit(self, node: ast.AST) -> ast.AST:
        if not isinstance(node, ast.Module):
            return node
        try:
            return self._visit(node)
        except Exception as exc:  # under PORTER_DEBUG it raises: IPython then drops it
            internal_error("rewriting the cell for recording (it runs unrecorded)", exc)
            return node

    def _visit(self, node: ast.Module) -> ast.AST:
        port_on = self.port_on
        current = port_on.current
        count = port_on.session._execution_count()
        label = count if count is not None else "on"
        filename = port_on.filename()
        if filename is not None:  # runners on its lines: warnings point at the cell
            register_cell_file(label, filename)
        magics = self.magics
        if magics is not None and magics.running_line() is not None:
            # the cell runs: this is the code of one of its %time/%timeit lines
            return magics.visit(node)
        if current is None:  # a %%port cell: it records itself (its %timeit lines too)
            return node
        if filename is not None:
            self.magics = MagicRewriter(current.job.code, label, filename)
        # the text IPython parsed (its columns: characters)
        return transform(node, label, source=current.job.code)

"""``porter run``'s notebook runner: every code cell recorded in a kernel, whatever it does.

The cells run through nbclient's async client on an async kernel manager, so that the
per-cell timer and the dead-kernel check (once a second) fire while a cell runs. After
each cell porter collects that cell's entries from the kernel (a silent request that
leaves no trace in the person's history), so nothing a later cell does (``%port clear``,
a kernel that dies) can take back what was recorded. A cell past its time limit is
interrupted; a kernel that does not stop is killed and the run goes on in a fresh one. A
kernel that dies ends the run: the report is still written, with the reason on the cell.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from queue import Empty
from typing import TYPE_CHECKING, Any

from porter_ext.guard import INTERNAL_MARK, PorterInternalError, debug
from porter_ext.model.calls import ErrorInfo
from porter_ext.model.cells import CellEntry
from porter_ext.model.report import Environment, Report
from porter_ext.report.codec import (
    cell_from_dict,
    cell_to_dict,
    environment_from_dict,
    environment_to_dict,
)

if TYPE_CHECKING:
    from IPython.core.interactiveshell import InteractiveShell
    from jupyter_client.asynchronous import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from nbformat import NotebookNode

    from porter_ext.fix.shown import Shown

KERNEL_NAME = "porter"
#: seconds an interrupted cell gets to stop before its kernel is killed
INTERRUPT_GRACE = 5.0
#: seconds a silent bookkeeping request may take
SILENT_TIMEOUT = 60.0


class RunError(Exception):
    """The run cannot go on (no kernel, or the kernel died); `report` holds what was
    recorded up to then, when there is anything to write."""

    def __init__(self, message: str, report: Report | None = None):
        super().__init__(message)
        self.report = report


def first_line_of(source: str) -> int:
    """The editor line of the first line porter records of a notebook cell: the line
    below the cell's own ``%%port`` line (blank lines above it counted), else 1 (the
    ``%%port`` line `port_source` adds is not the person's)."""
    body = source.lstrip()
    if not body.startswith("%%port"):
        return 1
    return source[: len(source) - len(body)].count("\n") + 2


def port_source(source: str, timeout: float | None = None) -> str:
    """The source a cell runs under ``porter run``: a ``%%port`` cell keeps its options."""
    if source.lstrip().startswith("%%port"):
        return source.lstrip()
    limit = f" --timeout {timeout:g}" if timeout is not None else ""
    return f"%%port --quiet{limit}\n{source}"


def kernel_manager() -> AsyncKernelManager:
    """An async manager for the kernel of a headless run: IPython with porter loaded under
    its own name (``--ext=porter_ext``, not the ``porter`` kernelspec's
    ``porter_ext.magics``), so that a notebook's ``%unload_ext porter_ext`` reaches porter,
    which ignores it with a note (a headless run records every cell)."""
    from jupyter_client.kernelspec import KernelSpec
    from jupyter_client.manager import AsyncKernelManager

    argv = ["python", "-m", "ipykernel_launcher", "-f", "{connection_file}", "--ext=porter_ext"]
    spec_dir = Path(__file__).resolve().parent.parent / "kernels" / KERNEL_NAME
    data = {"argv": argv, "display_name": "Python 3 (porter)", "language": "python"}
    km = AsyncKernelManager(kernel_name=KERNEL_NAME)
    km._kernel_spec = KernelSpec(resource_dir=str(spec_dir), **data)
    return km


# --- inside the kernel -----------------------------------------------------------------


def kernel_sync(
    shell: InteractiveShell, path: str, done: int | None, upcoming: int | None, **setup: Any
) -> None:
    """Run in the kernel between cells: write cell `done`'s entries to `path`, mark the
    session headless and label the next entries with cell index `upcoming`. With
    ``backends`` (first call) sets the session's replay specs and starts their workers
    (they boot while the first cells run); with ``final`` also writes the environment
    (``probed``: the file where `EnvironmentProbe` described the libraries the kernel
    has not imported) and the standard version."""
    from porter_ext.session import environment, get_session

    session = get_session(shell)
    session.headless = True
    session.first_line = int(setup.get("first_line", 2))
    if setup.get("backends"):
        from porter_ext.backends import parse_specs

        session.config.backends = parse_specs(setup["backends"])
        session.pool.warm(session.config.backends)
    if setup.get("paths"):
        from porter_ext.record import person_code

        person_code.configure(extra=[*person_code.added(), *setup["paths"]])
    if setup.get("ported_files"):  # porter fix's fresh run: the person's files as ported
        from porter_ext.fix.files import overlay

        overlay(setup["ported_files"])
    data: dict[str, Any] = {
        "entries": [cell_to_dict(c) for c in session.cells if done is not None and c.index == done]
    }
    if setup.get("final"):
        data["environment"] = environment_to_dict(environment(_probed(setup.get("probed"))))
        data["array_api_version"] = session.config.version
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    session.cell_index = upcoming


def _probed(path: str | None) -> dict[str, list] | None:
    """Each library's entries as `EnvironmentProbe` wrote them to ``path`` (None: none)."""
    if not path:
        return None
    with open(path, encoding="utf-8") as handle:
        entries = environment_from_dict(json.load(handle)).backends
    found: dict[str, list] = {}
    for entry in entries:
        found.setdefault(entry.library, []).append(entry)
    return found


def write_environment(path: str) -> None:
    """`EnvironmentProbe`'s program: the environment as this process sees it, to ``path``."""
    from porter_ext.session.result import environment

    data = json.dumps(environment_to_dict(environment()))
    with open(f"{path}.part", "w", encoding="utf-8") as handle:
        handle.write(data)
    os.replace(f"{path}.part", path)


# --- porter's side ---------------------------------------------------------------------


class EnvironmentProbe:
    """The report's environment lists every library porter knows, and describing one
    means importing it (torch and JAX take seconds each). A process of its own, started
    with the run (as the kernel is: same Python, environment and folder) at a low
    priority, describes them while the notebook runs; at the end the kernel describes
    the libraries it imported itself and takes the others from here."""

    def __init__(self, folder: Path, path: str):
        self.path = path
        code = (
            "import os\n"
            "if hasattr(os, 'nice'): os.nice(10)\n"
            f"from porter_ext.headless import write_environment\nwrite_environment({path!r})"
        )
        self.process = subprocess.Popen(
            [sys.executable, "-c", code],
            cwd=folder,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    async def result(self, timeout: float) -> str | None:
        """The file it wrote, once it has; None when it failed or took past ``timeout``
        (the kernel then describes every library itself, as without a probe)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        self.stop()
        ok = self.process.returncode == 0 and os.path.exists(self.path)
        return self.path if ok else None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@dataclass
class CellOutcome:
    """One code cell of the notebook: what porter collected for it and how it ended."""

    index: int
    source: str
    status: str = "not run"  # ok | raised | timeout | died | not run
    entries: list[CellEntry] = field(default_factory=list)
    error: ErrorInfo | None = None
    note: str | None = None

    def report_entries(self) -> list[CellEntry]:
        """Its entries in the report; a cell always has at least one."""
        entries = self.entries or [
            CellEntry(index=self.index, execution_count=None, source=self.source)
        ]
        if self.error is not None:
            entries = [replace(e, error=self.error) for e in entries[:1]] + entries[1:]
        if self.note is not None:
            entries = [replace(entries[0], notes=[*entries[0].notes, self.note]), *entries[1:]]
        return entries


class _Progress:
    def __init__(self, total: int, enabled: bool):
        self.total, self.enabled, self.done = total, enabled, 0

    def cell(self, index: int, seconds: float, status: str) -> None:
        self.done += 1
        if self.enabled:
            print(
                f"\r[{self.done}/{self.total}] cell {index}: {status} ({seconds:.1f}s)\x1b[K",
                end="",
                file=sys.stderr,
                flush=True,
            )

    def close(self) -> None:
        if self.enabled and self.done:
            print(file=sys.stderr)


class NotebookRun:
    """One ``porter run``: the kernel, the cells and what was collected from them."""

    def __init__(
        self,
        path: Path,
        nb: NotebookNode,
        *,
        timeout: float,
        backends: list[str],
        progress: bool,
        paths: list[str] | None = None,
        ported_files: dict[str, str] | None = None,
    ):
        self.path, self.nb, self.timeout, self.backends = path, nb, timeout, backends
        #: whether the report describes the environment (a fresh run's is not read)
        self.describe = True
        self.probe: EnvironmentProbe | None = None
        #: folders whose Python files are the person's code besides the notebook's (--paths)
        self.paths = list(paths or [])
        #: ``porter fix``'s fresh run: the person's files as ported (real path → source)
        self.ported_files = dict(ported_files or {})
        self.cells = [
            CellOutcome(i, c.source)
            for i, c in enumerate(nb.cells)
            if c.cell_type == "code" and c.source.strip()
        ]
        self.bar = _Progress(len(self.cells), progress)
        self.tmp = tempfile.TemporaryDirectory(prefix="porter-run-")
        self.log = open(os.path.join(self.tmp.name, "kernel.log"), "wb")  # noqa: SIM115
        self.client: AsyncKernelClient | None = None
        self.environment: Environment | None = None
        self.version: str | None = None
        self.interrupted = False
        #: what each cell raised, by notebook index, from the kernel's replies
        self.errors: dict[int, ErrorInfo] = {}
        #: porter's own failures in the kernel ("cell N: what failed"), as its cells
        #: printed them (or raised them, under PORTER_DEBUG=1), in order
        self.failures: list[str] = []

    # -- the kernel ---------------------------------------------------------------------
    async def start_kernel(self) -> None:
        from nbclient import NotebookClient

        self.client = NotebookClient(
            self.nb,
            km=kernel_manager(),
            timeout=None,
            timeout_func=self._cell_limit,
            interrupt_on_timeout=False,
            allow_errors=True,
            record_timing=False,
            resources={"metadata": {"path": str(self.path.resolve().parent)}},
            on_cell_error=self._cell_error,
        )
        try:
            await self.client.async_start_new_kernel(stdout=self.log, stderr=self.log)
            await self.client.async_start_new_kernel_client()
        except Exception as exc:
            await self.stop_kernel()
            reason = f"the kernel could not start: {_one_line(exc)}{self._kernel_said()}"
            raise RunError(reason) from None

    def _cell_error(self, cell: NotebookNode, cell_index: int, execute_reply: dict) -> None:
        """nbclient's hook: what the kernel's reply says a cell raised (a UsageError of the
        magics is printed, not an error output)."""
        content = execute_reply.get("content", {})
        message = " ".join(str(content.get("evalue", "")).split())
        self.errors[cell_index] = ErrorInfo(str(content.get("ename", "Error")), message)

    async def stop_kernel(self, *, now: bool = True) -> None:
        """Shut the kernel down: asked to (so that its own exit handlers, such as stopping
        its worker kernels, run) unless `now`, which kills it and its process group."""
        client, self.client = self.client, None
        if client is None:
            return
        if client.kc is not None:
            client.kc.stop_channels()
        if client.km is not None and client.km.has_kernel:
            await client.km.shutdown_kernel(now=now)
        _cancel_pollers()

    def _cell_limit(self, cell: NotebookNode) -> float:
        """The whole cell's limit: its original run and each replay (the control replay
        on the original backend included) get `timeout`, plus a little for porter."""
        specs = len(self.backends)
        first, _, _ = cell.source.partition("\n")
        words = first.split()
        for flag in ("-b", "--backends"):
            if flag in words[:-1]:
                specs = len([s for s in words[words.index(flag) + 1].split(",") if s.strip()])
        each = self.timeout
        if "--timeout" in words[:-1]:  # the cell's own limit on its replays
            with contextlib.suppress(ValueError):
                each = max(each, float(words[words.index("--timeout") + 1]))
        if "--no-replay" in words or not specs:
            return self.timeout
        return self.timeout + each * (specs + 1) + 5.0

    async def silent(self, code: str, timeout: float = SILENT_TIMEOUT) -> dict[str, Any]:
        """Run porter's own bookkeeping code: no history, no execution count, no events."""
        kc, km = self.client.kc, self.client.km
        msg_id = kc.execute(code, silent=True, store_history=False, allow_stdin=False)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                msg = await kc.get_shell_msg(timeout=1.0)
            except Empty:
                if not await km.is_alive():
                    raise RunError("the kernel died") from None
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg["content"]
        raise TimeoutError(f"the kernel did not answer within {timeout:g} s")

    async def sync(
        self, done: int | None, upcoming: int | None, timeout: float = SILENT_TIMEOUT, **setup: Any
    ) -> dict[str, Any]:
        path = os.path.join(self.tmp.name, "sync.json")
        if upcoming is not None:
            setup["first_line"] = first_line_of(
                next(c.source for c in self.cells if c.index == upcoming)
            )
        args = ", ".join(f"{k}={v!r}" for k, v in setup.items())
        code = (
            "__import__('porter_ext.headless').headless.kernel_sync("
            f"get_ipython(), {path!r}, {done!r}, {upcoming!r}{', ' + args if args else ''})"
        )
        reply = await self.silent(code, timeout)
        if reply.get("status") != "ok":
            raise RunError(f"porter could not talk to its kernel: {reply.get('evalue', '')}")
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        if done is not None:
            outcome = next(c for c in self.cells if c.index == done)
            outcome.entries = [cell_from_dict(e) for e in data["entries"]]
        return data

    # -- the cells ----------------------------------------------------------------------
    async def run(self) -> Report:
        from nbclient.exceptions import CellTimeoutError, DeadKernelError

        self._on_interrupt()
        if self.describe:
            where = os.path.join(self.tmp.name, "environment.json")
            self.probe = EnvironmentProbe(self.path.resolve().parent, where)
        await self.start_kernel()
        finished = False
        try:
            first = self.cells[0].index if self.cells else None
            await self.sync(None, first, **self._setup())
            for position, outcome in enumerate(self.cells):
                cell = self.nb.cells[outcome.index]
                cell.source = port_source(outcome.source, self.timeout)
                upcoming = (
                    self.cells[position + 1].index if position + 1 < len(self.cells) else None
                )
                start = time.perf_counter()
                try:
                    await self.client.async_execute_cell(cell, outcome.index)
                    self._porter_failures(cell, outcome.index)
                    failed = self.errors.pop(outcome.index, None)
                    outcome.status = "raised" if failed else "ok"
                    await self.sync(outcome.index, upcoming)
                    if failed and not outcome.entries:  # porter never saw it (a UsageError)
                        outcome.error = failed
                except CellTimeoutError:
                    outcome.status = "timeout"
                    await self._after_timeout(outcome, upcoming)
                except (DeadKernelError, RunError, asyncio.CancelledError) as exc:
                    if self.interrupted:  # Ctrl-C: nbclient reports it as a dead kernel
                        raise KeyboardInterrupt from None
                    outcome.status = "died"
                    why = str(exc) if isinstance(exc, RunError) else "the kernel died"
                    outcome.error = ErrorInfo("DeadKernelError", f"{why} in this cell")
                    self.bar.cell(outcome.index, time.perf_counter() - start, outcome.status)
                    for later in self.cells[position + 1 :]:
                        later.error = ErrorInfo("NotRun", f"not run: {why} in cell {outcome.index}")
                    raise RunError(
                        f"{why} in cell {outcome.index}{self._kernel_said()}", self.report()
                    ) from None
                self.bar.cell(outcome.index, time.perf_counter() - start, outcome.status)
            try:  # the kernel's view of the backends (a notebook may configure them)
                if self.describe:
                    probed = await self.probe.result(SILENT_TIMEOUT)
                    final = await self.sync(None, None, final=True, probed=probed)
                    self.environment = environment_from_dict(final["environment"])
                    self.version = final["array_api_version"]
            except (RunError, TimeoutError):
                pass  # the cells are all collected: porter's own view will do
            finished = True
            if self.failures and debug():
                raise RunError(f"porter failed in {self.failures[0]}", self.report())
            return self.report()
        finally:
            self.bar.close()
            await self.stop_kernel(now=not finished)

    def _porter_failures(self, cell: NotebookNode, index: int) -> None:
        """porter's own failures in the cell's outputs (`porter_ext.guard`: a warning on
        stderr, or `PorterInternalError` under PORTER_DEBUG=1), said on porter's stderr
        once each: a headless run shows no cell's output, and a command that exits 0 must
        not hide that porter failed inside the kernel."""
        for output in cell.get("outputs", []):
            if (
                output.get("output_type") == "error"
                and output.get("ename") == PorterInternalError.__name__
            ):
                texts = [str(output.get("evalue", ""))]
            elif output.get("output_type") == "stream" and output.get("name") == "stderr":
                texts = [
                    line
                    for line in str(output.get("text", "")).splitlines()
                    if line.startswith("porter: ") and INTERNAL_MARK in line
                ]
            else:
                continue
            for text in texts:
                failure = f"cell {index}: {text.removeprefix('porter: ')}"
                if failure not in self.failures:
                    self.failures.append(failure)
                    print(f"porter: {failure}", file=sys.stderr)

    def _on_interrupt(self) -> None:
        """Ctrl-C stops the run (and its kernel, in ``finally``) rather than being taken
        for a kernel that died."""
        task = asyncio.current_task()
        loop = asyncio.get_running_loop()

        def interrupt() -> None:
            self.interrupted = True
            if task is not None:
                task.cancel()

        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signal.SIGINT, interrupt)

    async def _after_timeout(self, outcome: CellOutcome, upcoming: int | None) -> None:
        """Interrupt the cell; a kernel that does not stop is replaced by a fresh one."""
        limit = self._cell_limit(self.nb.cells[outcome.index])
        outcome.error = ErrorInfo(
            "TimeoutError",
            f"the cell ran past the time limit of {limit:g} s (--timeout) and was stopped",
        )
        await self.client.km.interrupt_kernel()
        _cancel_pollers()
        try:  # a kernel that answers stopped the cell: the run goes on in it
            await self.sync(outcome.index, upcoming, timeout=INTERRUPT_GRACE)
            return
        except (RunError, TimeoutError):
            pass
        outcome.note = (
            "the kernel did not stop on interrupt and was replaced: later cells ran in a "
            "fresh kernel, without what earlier cells defined"
        )
        await self.stop_kernel()
        try:
            await self.start_kernel()
        except RunError as exc:
            raise RunError(
                f"cannot continue after cell {outcome.index} timed out: {exc}", self.report()
            ) from None
        await self.sync(None, upcoming, **self._setup())

    def _setup(self) -> dict[str, Any]:
        """What a fresh kernel is told before the first cell (`kernel_sync`)."""
        setup: dict[str, Any] = {"backends": ",".join(self.backends), "paths": self.paths}
        if self.ported_files:
            setup["ported_files"] = self.ported_files
        return setup

    def _kernel_said(self) -> str:
        """The kernel's last line on stderr, for the one-line reason."""
        self.log.flush()
        with open(self.log.name, "rb") as handle:
            lines = [ln.strip() for ln in handle.read().decode(errors="replace").splitlines()]
        lines = [ln for ln in lines if ln and "IPKernelApp" not in ln]
        return f" ({lines[-1][:200]})" if lines else ""

    def report(self) -> Report:
        from porter_ext.fix.notebook_input import shown_name
        from porter_ext.session import environment
        from porter_ext.spec.standard import DEFAULT_VERSION

        for outcome in self.cells:
            if outcome.status == "not run" and outcome.error is None:
                outcome.error = ErrorInfo("NotRun", "not run: the run stopped before this cell")
        entries = [e for c in self.cells for e in c.report_entries()]
        if self.environment is None and not self.describe:
            self.environment = Environment(python=platform.python_version())
        return Report.build(
            entries,
            self.environment or environment(),
            array_api_version=self.version or DEFAULT_VERSION,
            notebook=shown_name(self.path),
        )

    def close(self) -> None:
        from porter_ext.replay.shared_blocks import sweep
        from porter_ext.replay.workers import sweep_scratch

        if self.probe is not None:
            self.probe.stop()
        self.log.close()
        self.tmp.cleanup()
        # what the notebook's kernel left when it was killed (or died): its blocks of
        # shared memory and its workers' scratch
        sweep(force=True)
        sweep_scratch()


def _cancel_pollers() -> None:
    """Stop nbclient's pollers of a cell it gave up on, which would otherwise read the
    next cell's messages (or linger past the end of the run)."""
    for task in asyncio.all_tasks():
        if task is not asyncio.current_task():
            task.cancel()


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run_notebook(
    path: Path,
    nb: NotebookNode,
    *,
    timeout: float,
    backends: list[str],
    progress: bool,
    paths: list[str] | None = None,
) -> Report:
    """Run the notebook headless and return its report; `RunError` when it cannot.
    ``paths``: folders whose Python files are the person's code besides the notebook's."""
    return _to_the_end(
        NotebookRun(path, nb, timeout=timeout, backends=backends, progress=progress, paths=paths)
    )


def _to_the_end(run: NotebookRun) -> Report:
    """``run``'s report, its kernel stopped and what it left swept; Ctrl-C raises
    KeyboardInterrupt."""
    try:
        return asyncio.run(run.run())
    except asyncio.CancelledError:
        if run.interrupted:
            raise KeyboardInterrupt from None
        raise
    finally:
        run.close()


def run_fresh(
    path: Path,
    nb: NotebookNode,
    *,
    timeout: float,
    progress: bool,
    paths: list[str] | None = None,
    ported_files: dict[str, str] | None = None,
) -> dict[int, Shown]:
    """``porter fix``'s check (`porter_ext.fix.fresh_run`): the ported notebook ``nb``
    (its cells under ``%%port --quiet --no-replay``) top to bottom in a fresh kernel,
    with the person's files as ported; what each code cell showed, by notebook index (a
    cell stopped at its time limit, or not run after the kernel died, says so). Raises
    `RunError` when no kernel starts."""
    from porter_ext.fix.shown import shown

    run = NotebookRun(
        path,
        nb,
        timeout=timeout,
        backends=[],
        progress=progress,
        paths=paths,
        ported_files=ported_files,
    )
    run.describe = False  # only what the cells showed is read
    try:
        _to_the_end(run)
    except RunError as exc:  # the kernel died: the cells from there on say so
        if exc.report is None:
            raise
    run.report()  # marks the cells never run
    return {
        c.index: shown(
            nb.cells[c.index].get("outputs", []) if c.status != "not run" else [], c.error
        )
        for c in run.cells
    }

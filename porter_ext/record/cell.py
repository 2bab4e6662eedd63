"""Running one cell's code while recording it, without IPython.

`run_recorded` is what `%%port`, `%port on`, replays and tests all use: parse, rewrite
the calls, run the statements in the given namespace exactly once, and evaluate a last
expression so that its value can be displayed and compared. The exception a cell raises
is kept, with its line, for the caller to re-raise: the person sees it as without porter.
"""

from __future__ import annotations

import ast
import asyncio
import builtins
import contextlib
import inspect
import io
import linecache
import os
import sys
import time
import tokenize
import traceback
import types
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from porter_ext.guard import internal_error
from porter_ext.model.calls import CallRecord, ErrorInfo
from porter_ext.record import person_code
from porter_ext.record.compiled import (
    RewriteKey,
    cached,
    compile_plain,
    exported,
    imported,
    rewrite_and_compile,
)
from porter_ext.record.compilers import CellCode
from porter_ext.record.recorder import Recorder, install_hooks
from porter_ext.record.runners import register_cell_file
from porter_ext.record.sites import LoopSite
from porter_ext.record.syntax import CellSyntax, parse
from porter_ext.spec.standard import DEFAULT_VERSION

#: the value of a cell whose last statement is not an expression
NO_VALUE = object()


@dataclass
class CellRun:
    """What one recorded run of a cell gave."""

    source: str
    calls: list[CallRecord]
    error: ErrorInfo | None = None
    exception: BaseException | None = None
    value: Any = NO_VALUE
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    #: the loops that ran as written after their first iterations (`RecordSettings.loop_sample`):
    #: their sites ``(cell, line, slot)``
    sampled_loops: list[LoopSite] = field(default_factory=list)


def cell_filename(cell: int | str, source: str) -> str:
    """A file name for the cell's code objects, registered so tracebacks show its lines."""
    name = f"<porter-cell-{cell}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    return name


def error_info(exc: BaseException, filename: str) -> ErrorInfo:
    """The exception as the report shows it, with the deepest line of the cell it passed."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    if line is None and isinstance(exc, SyntaxError) and exc.filename == filename:
        line = exc.lineno
    if line is None:
        line = getattr(exc, "line", None) if isinstance(getattr(exc, "line", None), int) else None
    file = file_line = None
    for frame in traceback.extract_tb(exc.__traceback__):  # the innermost of the person's files
        real = person_code.person_file(frame.filename)
        if real is not None:
            file, file_line = person_code.shown_path(real), frame.lineno
    return ErrorInfo(
        type=type(exc).__name__, message=str(exc), line=line, file=file, file_line=file_line
    )


def _blank_head(text: str) -> int:
    count = 0
    for line in text.splitlines():
        if line.strip():
            break
        count += 1
    return count


def keep_line_numbers(raw: str, code: str) -> str:
    """``code`` (IPython's transform of the cell ``raw``) with the leading blank lines
    IPython dropped put back, so that every line number is the raw cell's."""
    missing = _blank_head(raw) - _blank_head(code)
    return "\n" * missing + code if missing > 0 else code


def ends_with_semicolon(source: str) -> bool:
    """Whether the cell's last token is ``;`` (IPython then shows no value)."""
    if ";" not in source:
        return False
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return False
    skip = (
        tokenize.ENDMARKER,
        tokenize.NL,
        tokenize.NEWLINE,
        tokenize.COMMENT,
        tokenize.DEDENT,
        tokenize.INDENT,
    )
    for token in reversed(tokens):
        if token.type in skip:
            continue
        return token.type == tokenize.OP and token.string == ";"
    return False


_RECORD_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _without_porter_frames(exc: BaseException, filename: str) -> None:
    """The traceback as without porter: from the cell's first frame on, with the
    recorder's own frames (hooks, strict checks) left out, so that an exception porter
    raises reads as raised by the person's line."""
    if type(exc).__name__ == "PorterInternalError":
        return  # porter's own bug (PORTER_DEBUG=1): its frames are the point
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != filename:
        tb = tb.tb_next
    if tb is None:
        return
    kept = []
    while tb is not None:
        code = tb.tb_frame.f_code
        if not code.co_filename.startswith(_RECORD_DIR) and code.co_name != "__porter_run__":
            kept.append(tb)
        tb = tb.tb_next
    for current, following in zip(kept, [*kept[1:], None], strict=True):
        current.tb_next = following
    exc.__traceback__ = kept[0]


def run_coroutine(coro: Any) -> Any:
    """Run a cell's top-level ``await`` code to its end, as IPython does: on IPython's
    own event loop where no loop runs in this thread (a terminal, a test's shell). Where
    one does (a Jupyter kernel's), the coroutine is stepped here, which suffices while
    what it awaits finishes without the loop; what needs the loop raises, naming why."""
    __tracebackhide__ = True  # noqa: F841
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        helpers = sys.modules.get("IPython.core.async_helpers")
        if helpers is None:
            return asyncio.run(coro)
        return helpers.get_asyncio_loop().run_until_complete(coro)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value
    coro.close()
    raise RuntimeError(
        "this %%port cell awaits something that needs the kernel's running event loop, "
        "which a recorded cell cannot hand back to; run it without %%port (porter records "
        "top-level await that completes without the loop)"
    )


@dataclass(frozen=True)
class RecordSettings:
    """How one cell is recorded: its label in file names and records, strictness, the
    standard version checked against, the compiler flags (IPython's ``__future__``), and
    ``loop_sample``: a loop runs as written once this many of its iterations in a row
    recorded nothing new (replays, whose records serve their sites and devices, not
    their counts); 0 records every iteration (the person's run: exact counts)."""

    cell: int | str = 0
    strict: bool = False
    version: str = DEFAULT_VERSION
    compile_flags: int = 0
    loop_sample: int = 0
    #: folders the person added whose Python files are their code (`person_code`)
    paths: tuple[str, ...] = ()
    #: the person's modules the recording process has loaded, (name, file): a replay's
    #: worker imports those names from the same files
    modules: tuple[tuple[str, str], ...] = ()


def exported_rewrite(source: str, settings: RecordSettings) -> bytes | None:
    """The rewrite `run_recorded` compiled for ``source`` under ``settings`` in this
    process, marshalled for a replay's worker (which then neither parses nor rewrites the
    cell: its `CellSyntax.compiled`), or None where none is kept."""
    flags = settings.compile_flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    return exported(source, flags, settings.cell)


def run_recorded(
    source: str,
    namespace: dict,
    settings: RecordSettings | None = None,
    *,
    filename: str | None = None,
    syntax: CellSyntax | None = None,
    ast_transformers: Iterable[Callable[[ast.Module], ast.Module]] = (),
    recorder: Recorder | None = None,
) -> CellRun:
    """Run ``source`` (plain Python: IPython syntax already transformed) in ``namespace``
    while recording its array calls. ``syntax``: the cell's syntax made when it started
    (its tree is parsed once for the analysis and the rewrite; a cell whose rewrite is
    kept is not parsed). A SyntaxError propagates before anything runs."""
    settings = settings or RecordSettings()
    cell = settings.cell
    # top-level ``await`` compiles to a coroutine, run below as IPython runs such a cell
    compile_flags = settings.compile_flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    filename = filename or cell_filename(cell, source)
    rec = recorder or Recorder(
        strict=settings.strict,
        version=settings.version,
        cell=cell,
        loop_sample=settings.loop_sample,
    )
    warnings: list[str] = []
    split_last = not ends_with_semicolon(source)
    transformers = list(ast_transformers)
    # ``for i in range(n)`` makes ints only where ``range`` is Python's own
    range_is_builtin = namespace.get("range", builtins.range) is builtins.range
    rewrite = RewriteKey(source, compile_flags, split_last, range_is_builtin)
    # a rewrite depends on the source and the flags (other transformers: not kept)
    keep = not transformers
    compiled = cached(rewrite, cell, filename) if keep else None
    if syntax is None or syntax.source != source:
        syntax = CellSyntax(source, filename, settings.compile_flags)
    if compiled is None and keep and syntax.compiled is not None:
        compiled = imported(syntax.compiled, rewrite, filename)  # a replay: the kernel's rewrite
    if compiled is None:
        tree = syntax.take()  # the rewrite changes it: the last to read it
        try:
            compiled = rewrite_and_compile(rewrite, tree, cell, filename, transformers, keep)
        except SyntaxError:
            raise
        except Exception as exc:  # porter's own failure: the cell runs unrecorded
            internal_error("rewriting the cell for recording (it ran unrecorded)", exc, warnings)
            compiled = compile_plain(
                parse(source, filename, settings.compile_flags), filename, compile_flags, split_last
            )
    install_hooks(namespace)
    rec.namespace = namespace
    rec.cell_code = CellCode(source, filename, settings.compile_flags, tuple(transformers))
    return _execute(source, compiled, namespace, filename, cell, rec, warnings)


def run_unrecorded(
    source: str,
    namespace: dict,
    settings: RecordSettings | None = None,
    *,
    filename: str | None = None,
) -> CellRun:
    """Run ``source`` in ``namespace`` as it is, recording nothing (a cell porter does not
    record): its value, error and traceback as `run_recorded` gives them."""
    settings = settings or RecordSettings()
    compile_flags = settings.compile_flags | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
    filename = filename or cell_filename(settings.cell, source)
    tree = parse(source, filename, settings.compile_flags)
    compiled = compile_plain(tree, filename, compile_flags, not ends_with_semicolon(source))
    return _execute(source, compiled, namespace, filename, settings.cell, None, [])


def _execute(
    source: str,
    compiled: tuple[types.CodeType, types.CodeType | None],
    namespace: dict,
    filename: str,
    cell: int | str,
    rec: Recorder | None,
    warnings: list[str],
) -> CellRun:
    """Run the cell's ``compiled`` code (and its last expression, the cell's value) in
    ``namespace`` while ``rec`` records (None: nothing records); the person's exception
    is kept in the run, for the caller to raise."""
    code, last_code = compiled
    register_cell_file(cell, filename)
    run = CellRun(source=source, calls=[])
    __tracebackhide__ = True  # noqa: F841 (read by IPython's traceback formatter)
    start = time.perf_counter()
    try:
        with rec.activate() if rec is not None else contextlib.nullcontext():
            if code.co_flags & inspect.CO_COROUTINE:
                run_coroutine(eval(code, namespace))
            else:
                exec(code, namespace)
            if last_code is not None:
                run.value = eval(last_code, namespace)
                if last_code.co_flags & inspect.CO_COROUTINE:
                    run.value = run_coroutine(run.value)
    except BaseException as exc:  # the person's exception: kept, re-raised by the caller
        _without_porter_frames(exc, filename)
        run.exception = exc
        run.error = error_info(exc, filename)
    run.seconds = time.perf_counter() - start
    if rec is not None:
        run.calls = rec.records()
        run.warnings = warnings + rec.warnings
        run.sampled_loops = list(rec.sampled_loops)
    else:
        run.warnings = warnings
    return run

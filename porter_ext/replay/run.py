"""Running a recorded cell again on another backend or device, in-process.

Each replay gets a fresh namespace (see `inputs`), runs the cell through the same
recorder as the original run, and keeps the values of the cell's outputs for comparison.
A backend or device that is not there is `skipped` with its reason; an exception in the
replay is an `error` with the cell line it came from (the porting blocker), and the next
backend goes on. A time limit interrupts a runaway replay with SIGALRM, which only the
main thread may use, and which only takes effect between Python bytecodes (a long call
into a library finishes first).
"""

from __future__ import annotations

import contextlib
import gc
import signal
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from porter_ext.backends import (
    BackendSpec,
    BackendUnavailable,
    ConversionError,
    SpecError,
    get_backend,
    parse_spec,
)
from porter_ext.guard import internal_error
from porter_ext.model.calls import CallRecord, ErrorInfo
from porter_ext.model.entries import ReplayOutcome
from porter_ext.record.cell import NO_VALUE, CellRun, RecordSettings, cell_filename, run_recorded
from porter_ext.replay.analysis import CellIO, analyse
from porter_ext.replay.inputs import build_namespace


class ReplayTimeout(BaseException):
    """Raised inside a replay that ran past its limit (a BaseException, so that the cell's
    own ``except Exception`` cannot swallow it)."""


#: a replay's loop runs as written once this many iterations in a row recorded nothing new
LOOP_SAMPLE = 64


@dataclass(frozen=True)
class ReplaySettings:
    """How every replay of one cell runs: recorded like the original (``record``), and
    interrupted after ``timeout`` seconds (None: no limit). A replay's records serve its
    sites and devices, not its counts: its loops are recorded until ``loop_sample``
    iterations in a row record nothing new, then run as written, at the backend's own
    speed (0: every iteration recorded)."""

    record: RecordSettings = field(default_factory=RecordSettings)
    timeout: float | None = None
    loop_sample: int = LOOP_SAMPLE
    #: whether a replay on another library takes the draws of the person's library's own
    #: generator moved there (`porter_ext.replay.draws`): the rounds of ``--fix`` only,
    #: which judge what depends on them by structure; a plain replay leaves them there
    moves_draws: bool = False
    #: local workers share the person's network (``--allow-network``)
    network: bool = False
    #: marked expressions of the code (mark, text) evaluated again on ``probe_specs``
    #: where the replay reaches them (`porter_ext.replay.probes`): the fix stage's check of
    #: rewritten sites at their calls
    probes: tuple[tuple[int, str], ...] = ()
    probe_specs: tuple[str, ...] = ()

    def recording(self) -> RecordSettings:
        """How the replay's run is recorded."""
        return replace(self.record, loop_sample=self.loop_sample)


def sampled_note(run: CellRun, cell: int | str) -> list[str]:
    """The replay's note on the loops that ran as written after their first iterations
    (``run``: its `CellRun`; ``cell``: the replayed cell's label)."""
    if not run.sampled_loops:
        return []
    places = ", ".join(
        f"line {line}" if label == cell else f"line {line} of cell {label}"
        for label, line, _ in run.sampled_loops
    )
    return [
        f"loops ran as written once their iterations recorded nothing new ({places}): "
        "this replay's counts of their calls cover the iterations recorded"
    ]


@dataclass
class ReplayResult(ReplayOutcome):
    """One replay of a cell on one backend spec (``backend``: "jax:cpu:1") as it runs: its
    outcome (`ReplayOutcome`: status, time, error with the cell line, why skipped, role,
    worker, isolation) and what the replay made, its outputs as values."""

    #: name -> value; "_" the last value
    outputs: dict[str, Any] = field(default_factory=dict)
    calls: list[CallRecord] = field(default_factory=list)
    conversions: dict[str, str] = field(default_factory=dict)  # path -> zero_copy | copy: …
    notes: list[str] = field(default_factory=list)
    default_device: str | None = None
    input_devices: list[str] = field(default_factory=list)
    #: time spent preparing the replay namespace (conversions, copies), in seconds
    prepare_seconds: float | None = None
    #: device findings of the replay, made where the replay's arrays were (the worker)
    findings: list = field(default_factory=list)
    #: output path -> (device, dtype) of the replay's own arrays, when ``outputs`` holds
    #: host copies of them (a replay in a worker)
    output_meta: dict[str, tuple[str | None, str | None]] = field(default_factory=dict)
    #: outputs that could not be sent back from the worker -> why
    unsent: dict[str, str] = field(default_factory=dict)


def collect_outputs(
    io: CellIO, namespace: Mapping[str, Any], value: Any = NO_VALUE
) -> dict[str, Any]:
    """The cell's outputs as found in ``namespace`` after a run; ``_`` for its last value."""
    outputs = {name: namespace[name] for name in io.outputs if name in namespace}
    if io.has_value and value is not NO_VALUE:
        outputs["_"] = value
    return outputs


@contextlib.contextmanager
def time_limit(seconds: float | None, notes: list[str]) -> Iterator[None]:
    """Raise `ReplayTimeout` in the body after ``seconds``; a previous timer is restored."""
    if not seconds:
        yield
        return
    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "setitimer"
    ):
        notes.append(
            f"time limit of {seconds:g} s not applied: in-process replays can only be "
            "interrupted from the main thread"
        )
        yield
        return

    # An exception raised from a signal handler is lost when it lands in a garbage
    # collector callback (JAX registers one) or a finaliser, and C code that clears errors
    # can swallow it too: such places are skipped, and the alarm repeats until the
    # replay has stopped
    armed = [True]

    def expire(signum: int, frame: Any) -> None:
        if armed[0] and not _in_finaliser(frame):
            raise ReplayTimeout(f"the replay ran past its time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    outer, _ = signal.setitimer(signal.ITIMER_REAL, seconds, min(seconds, 0.05))
    start = time.monotonic()
    try:
        yield
    finally:
        while armed[0]:  # one more alarm may land right here: retry until disarmed
            try:
                armed[0] = False
            except ReplayTimeout:
                continue
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if outer:  # someone else's timer was running: give it what is left of its time
            signal.setitimer(signal.ITIMER_REAL, max(outer - (time.monotonic() - start), 1e-3))


def _in_finaliser(frame: Any) -> bool:
    """Whether ``frame`` runs inside a gc callback or a ``__del__``, where an exception
    would only be printed as "ignored"."""
    callbacks = {getattr(cb, "__code__", None) for cb in gc.callbacks}
    while frame is not None:
        if frame.f_code in callbacks or frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def replay_cell(
    source: str,
    person_ns: Mapping[str, Any],
    spec: BackendSpec | str,
    settings: ReplaySettings | None = None,
    *,
    io: CellIO | None = None,
) -> ReplayResult:
    """Run ``source`` (plain Python) again on ``spec`` in a namespace built from
    ``person_ns``, which stays untouched. Never raises for a missing backend or device,
    nor for the replay's own exception: the result says what happened."""
    settings = settings or ReplaySettings()
    timeout = settings.timeout
    try:
        spec = parse_spec(spec) if isinstance(spec, str) else spec
        backend = get_backend(spec.library)
        io = io if io is not None else analyse(source)
    except (SpecError, SyntaxError) as error:
        return ReplayResult(str(spec), "skipped", reason=str(error))
    result = ReplayResult(str(spec), "ok", isolation="in-process")
    start = time.perf_counter()
    try:
        prepared = build_namespace(io, person_ns, spec, moves_draws=settings.moves_draws)
        result.default_device = backend.default_device()
    except BackendUnavailable as error:  # also DeviceUnavailable
        return _skipped(result, error.reason)
    except ConversionError as error:
        return _skipped(result, f"cannot move an input to {spec}: {error}")
    except Exception as error:  # porter's own failure: this backend only, the others go on
        internal_error(f"preparing the replay on {spec}", error)
        result.status = "error"
        result.error = ErrorInfo(
            type(error).__name__, f"porter could not prepare the replay: {error}"
        )
        return result
    result.prepare_seconds = time.perf_counter() - start
    result.conversions = prepared.labels()
    result.input_devices = list(prepared.devices)
    result.notes = list(prepared.notes)
    ns = prepared.namespace
    filename = cell_filename(f"{settings.record.cell}@{spec}", source)
    run = None
    # the backend's context (a lazy one counts its computes and computes the outputs
    # once, at the end) is entered outside the timer, and closed after the outputs
    with backend.replay_context(spec.where) as scope:
        # the timer may fire outside the cell, just as it ended: then `run` is what it gave
        with contextlib.suppress(ReplayTimeout), time_limit(timeout, result.notes):
            run = run_recorded(source, ns, settings.recording(), filename=filename)
        if run is not None and not isinstance(run.exception, ReplayTimeout):
            result.outputs = {
                k: scope.finish(v) for k, v in collect_outputs(io, ns, run.value).items()
            }
    result.notes += [n for n in scope.notes if n not in result.notes]
    if run is None or isinstance(run.exception, ReplayTimeout):
        result.status = "timeout"
        result.seconds = run.seconds if run is not None else timeout
        result.reason = f"ran past the time limit of {timeout:g} s"
        if run is not None:
            result.calls = run.calls
            result.error = run.error
        return result
    result.seconds = run.seconds
    result.calls = run.calls
    result.notes += [w for w in run.warnings if w not in result.notes]
    result.notes += sampled_note(run, settings.record.cell)
    if run.error is not None:
        result.status, result.error = "error", run.error
    return result


def _skipped(result: ReplayResult, reason: str) -> ReplayResult:
    result.status, result.reason = "skipped", reason
    return result


def replay_all(
    source: str,
    person_ns: Mapping[str, Any],
    specs: list[BackendSpec | str],
    settings: ReplaySettings | None = None,
    *,
    io: CellIO | None = None,
) -> list[ReplayResult]:
    """`replay_cell` on each spec in turn (the cell is analysed once)."""
    if io is None:
        with contextlib.suppress(SyntaxError):  # each replay reports it
            io = analyse(source)
    return [replay_cell(source, person_ns, spec, settings, io=io) for spec in specs]


def leaves(value: Any, path: str, out: dict[str, Any]) -> dict[str, Any]:
    """Path → leaf of an output (lists, tuples and mappings looked into), with the path
    spelling the comparison shows (``y[0]['w']``)."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            leaves(v, f"{path}[{k!r}]", out)
    elif isinstance(value, list | tuple):
        for i, v in enumerate(value):
            leaves(v, f"{path}[{i}]", out)
    else:
        out[path] = value
    return out

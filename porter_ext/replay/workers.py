"""Worker kernels: where replays run, so that nothing a replay does reaches the person.

A `WorkerPool` keeps one worker kernel per backend environment (the library, and the
variables it needs: a JAX with N CPU devices for ``jax:cpu:N-1``, x64, which GPUs it
sees), started from the ``porter-worker`` kernelspec through ``jupyter_client`` on first
use and reused by later cells. Replays on several workers run at the same time. A replay
that runs past its time limit is interrupted, and its worker killed when the interrupt
does not stop it; a worker that dies is reported and started again for the next cell.
A spec with ``@WHERE`` uses a kernel that is already running: a connection file, or a
Jupyter Kernel Gateway (see `gateway`). Workers end with the session, at exit, or when
the person's kernel goes (a worker kernel watches its parent).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import secrets
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field

from porter_ext.backends import LIBRARIES, BackendInfo, BackendSpec, get_backend
from porter_ext.model.calls import ErrorInfo
from porter_ext.replay import shared_blocks, transport
from porter_ext.replay.run import ReplayResult
from porter_ext.replay.worker_kernel import Died, LocalWorker, Worker, WorkerUnavailable
from porter_ext.replay.worker_side import ReplayReply, ReplayRequest


def kernel_place(spec: BackendSpec) -> str | None:
    """The running kernel a spec's WHERE names (a connection file or a gateway URL), or
    None: a local worker (a WHERE such as a Dask scheduler is the backend's business)."""
    where = spec.where
    if where and (where.endswith(".json") or where.startswith(("http://", "https://"))):
        return where
    return None


def worker_environment(spec: BackendSpec, *, x64: bool = False) -> dict[str, str]:
    """The variables a worker for ``spec`` needs beyond the person's own."""
    env = {
        "MPLBACKEND": "Agg",
        **get_backend(spec.library).worker_environment(spec.device, x64=x64),
    }
    if get_backend(spec.library).host_only or (spec.device or "").startswith("cpu"):
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


@dataclass
class Job:
    """One replay to run: the request, and the inputs captured before the original run."""

    spec: BackendSpec
    request: ReplayRequest
    parcel: transport.Parcel
    x64: bool = False
    apart: bool = False  # in a worker of its own (see `WorkerPool.worker_for`)
    network: bool = False  # in a worker that shares the person's network (--allow-network)


_SCRATCH_PREFIX = "porter-workers-"


def _new_scratch() -> str:
    """The session's scratch folder (its workers' own, each in a folder of it), named
    after the session so that the next one removes it if this one is killed."""
    sweep_scratch()
    owner = shared_blocks.session_owner()
    return tempfile.mkdtemp(prefix=f"{_SCRATCH_PREFIX}{owner}-")


def sweep_scratch() -> None:
    """Remove the scratch folders of porter sessions that ended without doing it."""
    top = tempfile.gettempdir()
    with contextlib.suppress(OSError):
        for name in os.listdir(top):
            pid, _, started = name[len(_SCRATCH_PREFIX) :].split("-")[0].partition("_")
            if name.startswith(_SCRATCH_PREFIX) and not shared_blocks.owner_alive(pid, started):
                shutil.rmtree(os.path.join(top, name), ignore_errors=True)


@dataclass
class WorkerPool:
    """The workers of one session, started on first use and reused."""

    scratch: str = field(default_factory=_new_scratch)
    workers: dict[tuple, Worker] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        atexit.register(self.shutdown)

    def worker_for(
        self, spec: BackendSpec, *, x64: bool = False, apart: bool = False, network: bool = False
    ) -> Worker:
        """The worker for ``spec``; ``apart``: one of its own (the float64 reference runs
        beside the replay on the same backend, not after it); ``network``: one that shares
        the person's network (a local worker otherwise has none)."""
        env = worker_environment(spec, x64=x64)
        network = network and kernel_place(spec) is None
        key = (spec.library, kernel_place(spec), tuple(sorted(env.items())), apart, network)
        with self._lock:
            worker = self.workers.get(key)
            if worker is None:
                worker = self.workers[key] = _make_worker(key, spec, env, self.scratch, network)
        return worker

    def _worker_of(self, job: Job) -> Worker:
        return self.worker_for(job.spec, x64=job.x64, apart=job.apart, network=job.network)

    def warm(self, specs: list[BackendSpec]) -> None:
        """Start the kernels these specs need (without waiting), e.g. while the cell runs."""
        for spec in specs:
            _launch(self.worker_for(spec))

    def run(
        self,
        jobs: list[Job],
        timeout: float | None = None,
        *,
        at_once: int | None = None,
        finished: Callable[[ReplayResult], None] | None = None,
    ) -> list[ReplayResult]:
        """Run ``jobs`` at the same time (one after another on a shared worker), or at
        most ``at_once`` of them at a time, in order; ``finished`` is handed each result
        in this thread as soon as it and those before it are done. With ``at_once``, a
        job starts only once ``finished`` is through with the one ``at_once`` before it:
        what it lets go of (a big replay's outputs) is gone before the next replay makes
        its own."""
        if not jobs:
            return []
        since = {}  # each job's worker's Ctrl-C count now: a later one cancels it
        for job in jobs:  # launching from this thread: the kernels boot in parallel
            worker = self._worker_of(job)
            since[id(job)] = worker.cancels
            _launch(worker)
        executor = ThreadPoolExecutor(max_workers=at_once or len(jobs))

        def one(job: Job) -> ReplayResult:
            return self._one(job, timeout, since[id(job)])

        futures = [executor.submit(one, job) for job in jobs[: at_once or None]]
        handed = 0
        try:
            while handed < len(jobs):  # waking often: Ctrl-C gets through
                # the next result in order: waiting on any of them would return at once
                # (without sleeping) while a later one is done and this one is not, and
                # spin a core the workers need
                wait(futures[handed : handed + 1], timeout=0.1, return_when=FIRST_COMPLETED)
                while handed < len(futures) and futures[handed].done():
                    if finished is not None:
                        finished(futures[handed].result())
                    handed += 1
                    if len(futures) < len(jobs):
                        futures.append(executor.submit(one, jobs[len(futures)]))
            return [f.result() for f in futures]
        except KeyboardInterrupt:  # the person stopped the cell: so do its replays
            for job in jobs:
                self._worker_of(job).cancel()
            raise
        finally:
            executor.shutdown(wait=False)

    def _one(self, job: Job, timeout: float | None, since: int) -> ReplayResult:
        worker = self._worker_of(job)
        request = job.request
        result = ReplayResult(request.label, "skipped", role=request.role)
        start = time.monotonic()
        with worker.lock:
            worker.running_since = since
            try:
                if worker.launch_error:
                    raise WorkerUnavailable(worker.launch_error)
                worker.connect(start + worker.start_timeout(timeout))
                result.worker = request.worker = worker.label
                if request.process is not None:
                    environ = worker.environment(request.process.environ or {})
                    request.process = dataclasses.replace(request.process, environ=environ)
                answer = worker.receive(request.id, worker.send(request, job.parcel), timeout)
                if isinstance(answer, ReplayReply) and answer.retire:
                    worker.stop()  # the next replay starts a fresh one
                    answer.result.notes.append(answer.retire)
            except WorkerUnavailable as error:
                worker.stop()
                result.reason = f"not replayed: {error}"
                return result
            except Died as died:
                worker.stop()
                result.status = "error"
                result.error = ErrorInfo("WorkerDied", _died_message(died.status))
                return result
        if isinstance(answer, ReplayReply):
            result = answer.result
            result.output_meta = answer.meta
        elif answer == "cancelled":
            result.status, result.reason = "skipped", "not replayed: the cell was interrupted"
        elif answer == "timeout":
            result.status, result.seconds = "timeout", timeout
            result.reason = f"ran past the time limit of {timeout:g} s"
        else:
            result.status, result.error = "error", ErrorInfo("WorkerError", answer)
        result.worker = worker.label if worker.ready else result.worker
        if result.isolation is None and result.status != "skipped":
            result.isolation = worker.isolation
        return result

    def shutdown(self) -> None:
        """Stop every worker (no process is left behind) and remove what they wrote."""
        with self._lock:
            workers, self.workers = list(self.workers.values()), {}
        for worker in workers:
            worker.stop()
        shutil.rmtree(self.scratch, ignore_errors=True)  # a later worker makes it again


def can_enable_x64(library: str) -> bool:
    """Whether a worker for ``library`` can be given float64 where this process has none."""
    return bool(get_backend(library).worker_environment(None, x64=True))


def worker_only_specs(infos: list[BackendInfo]) -> list[BackendInfo]:
    """Specs this process cannot serve that a worker provides (``jax:cpu:1`` when this
    process's JAX has one host device); ``reason`` says how."""
    have = {info.spec for info in infos if info.available}
    found = []
    for name in LIBRARIES:
        backend = get_backend(name)
        spec = f"{name}:cpu:1"
        env = backend.worker_environment("cpu:1")
        if env and spec not in have and backend.available()[0]:
            how = "from a worker with " + " ".join(f"{k}={v}" for k, v in env.items())
            found.append(BackendInfo(spec, name, backend.version(), True, ["cpu:1"], how))
    return found


_shared: WorkerPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> WorkerPool:
    """The process's workers: every session of a kernel shares them, for as long as the
    kernel lives (they stop at exit, or with `shutdown_workers`)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = WorkerPool()
        return _shared


def shutdown_workers() -> None:
    """Stop the process's workers now (a later replay starts fresh ones)."""
    with _shared_lock:
        pool = _shared
    if pool is not None:
        pool.shutdown()


def _died_message(status: int) -> str:
    how = f"killed by signal {-status}" if status < 0 else f"exit status {status}"
    return (
        f"the worker died during the replay ({how}): a crash, running out of memory or "
        "os._exit in the cell; a fresh worker starts for the next cell"
    )


def _launch(worker: Worker) -> None:
    worker.launch_error = None
    try:
        worker.launch()
    except Exception as error:  # the replay that needs it reports it when it connects
        worker.stop()
        worker.launch_error = str(error)


def _make_worker(
    key: tuple, spec: BackendSpec, env: dict[str, str], scratch: str, network: bool
) -> Worker:
    home = os.path.join(scratch, f"{key[0]}-{secrets.token_hex(3)}")
    if kernel_place(spec) is None:
        return LocalWorker(key, spec, env, home, network=network)
    from porter_ext.replay.remote import remote_worker

    return remote_worker(key, spec, env, home)

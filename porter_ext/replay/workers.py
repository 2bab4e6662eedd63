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
import json
import os
import pickle
import secrets
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from porter_ext.backends import BackendSpec
from porter_ext.record.model import ErrorInfo
from porter_ext.replay import transport
from porter_ext.replay.run import ReplayResult
from porter_ext.replay.worker_side import COMM_TARGET, ReplayReply, ReplayRequest

KERNEL_NAME = "porter-worker"
#: seconds a worker may take to start and answer its set-up
START_TIMEOUT = 60.0
#: seconds between interrupting a replay and killing its worker
KILL_GRACE = 1.0
#: spec data: the variable that gives a library N host devices, and its x64 switch
_HOST_DEVICE_COUNT = {"jax": ("XLA_FLAGS", "--xla_force_host_platform_device_count")}
_X64 = {"jax": "JAX_ENABLE_X64"}
#: libraries that only ever run on the host: their workers see no GPU
_HOST_ONLY = frozenset({"numpy", "strict"})


def kernel_place(spec: BackendSpec) -> str | None:
    """The running kernel a spec's WHERE names (a connection file or a gateway URL), or
    None: a local worker (a WHERE such as a Dask scheduler is the backend's business)."""
    where = spec.where
    if where and (where.endswith(".json") or where.startswith(("http://", "https://"))):
        return where
    return None


class WorkerUnavailable(RuntimeError):
    """A worker could not be started or reached; the message says why (a `skipped`)."""


def kernel_spec_file() -> Path:
    """The ``porter-worker`` kernelspec shipped in the source tree / package data."""
    return Path(__file__).resolve().parents[2] / "kernels" / KERNEL_NAME / "kernel.json"


def worker_environment(spec: BackendSpec, *, x64: bool = False) -> dict[str, str]:
    """The variables a worker for ``spec`` needs beyond the person's own."""
    env = {"MPLBACKEND": "Agg"}
    library, device = spec.library, spec.device or ""
    if library in _HOST_DEVICE_COUNT and device.startswith("cpu:"):
        index = device.partition(":")[2]
        if index.isdigit():
            var, flag = _HOST_DEVICE_COUNT[library]
            kept = [f for f in os.environ.get(var, "").split() if not f.startswith(flag)]
            env[var] = " ".join([*kept, f"{flag}={int(index) + 1}"])
    if library in _X64 and x64:
        env[_X64[library]] = "1"
    if library in _HOST_ONLY or device.startswith("cpu"):
        env["CUDA_VISIBLE_DEVICES"] = ""
    return env


@dataclass
class Job:
    """One replay to run: the request, and the inputs captured before the original run."""

    spec: BackendSpec
    request: ReplayRequest
    parcel: transport.Parcel
    x64: bool = False


class Worker:
    """One local worker kernel (subclasses reach kernels elsewhere)."""

    place = "local worker"

    def __init__(self, key: tuple, spec: BackendSpec, env: dict[str, str], scratch: str):
        self.key, self.spec, self.env, self.scratch = key, spec, env, scratch
        self.lock = threading.Lock()
        self.km: Any = None
        self.kc: Any = None
        self.comm_id = secrets.token_hex(8)
        self.ready = False
        self.dead_reason: str | None = None

    # -- life ----------------------------------------------------------------------------
    def launch(self) -> None:
        """Start the kernel process without waiting for it."""
        if self.km is not None:
            return
        from jupyter_client.kernelspec import KernelSpec, KernelSpecManager, NoSuchKernel
        from jupyter_client.manager import KernelManager

        os.makedirs(self.scratch, exist_ok=True)
        km = KernelManager(kernel_name=KERNEL_NAME)
        try:
            KernelSpecManager().get_kernel_spec(KERNEL_NAME)
        except NoSuchKernel:  # a source checkout: the spec shipped beside the package
            data = json.loads(kernel_spec_file().read_text())
            km._kernel_spec = KernelSpec(resource_dir=str(kernel_spec_file().parent), **data)
        # caches the person's libraries placed elsewhere: the worker's go to its scratch
        inherited = {k: v for k, v in os.environ.items() if not k.endswith("_CACHE_DIR")}
        env = {**inherited, **self.env, "TMPDIR": self.scratch, "PYTHONUNBUFFERED": "1"}
        log = open(os.path.join(self.scratch, "kernel.log"), "ab")  # noqa: SIM115
        try:
            km.start_kernel(env=env, cwd=self.scratch, stdout=log, stderr=log)
        finally:
            log.close()
        self.km = km

    def connect(self, deadline: float) -> None:
        """Wait for the kernel and set it up (sandbox, import path, library, comm)."""
        if self.ready:
            return
        self.launch()
        if self.kc is None:
            self.kc = self.km.client()
            self.kc.start_channels()
        self._handshake(deadline)
        preload = [self.spec.library]
        code = (
            "import porter_ext.replay.worker_side as __porter_worker__\n"
            f"__porter_worker__.start({self.scratch!r}, {_import_path()!r}, {preload!r})"
        )
        reply = self._execute(code, deadline)
        if reply["content"]["status"] != "ok":
            content = reply["content"]
            raise WorkerUnavailable(
                f"the worker could not set itself up ({content.get('ename')}: {content.get('evalue')})"
            )
        session = self.kc.session
        session.send(self.kc.shell_channel.socket,
                     session.msg("comm_open", {"comm_id": self.comm_id, "target_name": COMM_TARGET,
                                               "data": {}}))  # fmt: skip
        self.ready = True

    def _handshake(self, deadline: float) -> None:
        msg_id = self.kc.kernel_info()
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerUnavailable(
                    f"the {self.place} did not answer within {START_TIMEOUT:g} s"
                )
            self._check_alive()
            try:
                msg = self.kc.shell_channel.get_msg(timeout=min(left, 0.1))
            except Exception:  # queue.Empty
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return

    def _execute(self, code: str, deadline: float) -> dict:
        msg_id = self.kc.execute(code, silent=True, store_history=False)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerUnavailable(f"the {self.place} did not finish its set-up in time")
            self._check_alive()
            try:
                msg = self.kc.shell_channel.get_msg(timeout=min(left, 0.1))
            except Exception:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def exit_status(self) -> int | None:
        """The kernel process's exit status once it has ended; None while it runs."""
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        return process.poll() if process is not None else None

    def _check_alive(self) -> None:
        status = self.exit_status()
        if status is not None:
            raise _Died(status)

    def interrupt(self) -> None:
        if self.km is not None:
            self.km.interrupt_kernel()

    def stop(self) -> None:
        """End the kernel now and forget it (the next replay starts a fresh one)."""
        self.ready = False
        kc, km, self.kc, self.km = self.kc, self.km, None, None
        if kc is not None:
            kc.stop_channels()
        if km is not None:
            try:
                km.shutdown_kernel(now=True)
            except Exception:  # an already dead process: only its files are left
                km.cleanup_resources()

    @property
    def label(self) -> str:
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        return f"{self.place} (pid {process.pid})" if process is not None else self.place

    # -- one replay ----------------------------------------------------------------------
    def send(self, request: ReplayRequest, parcel: transport.Parcel) -> str:
        session = self.kc.session
        buffers = [pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL), parcel.payload,
                   *_remote_buffers(parcel, request.local)]  # fmt: skip
        data = {"comm_id": self.comm_id, "data": {"id": request.id}}
        session.send(self.kc.shell_channel.socket, session.msg("comm_msg", data), buffers=buffers)
        return self.kc.execute(f"__porter_worker__.run({request.id!r})", silent=True,
                               store_history=False)  # fmt: skip

    def receive(self, request_id: str, msg_id: str, timeout: float | None) -> ReplayReply | str:
        """The worker's reply, or why there is none (``"timeout"`` or an error text)."""
        start = time.monotonic()
        interrupted: float | None = None
        finished: float | None = None
        while True:
            now = time.monotonic()
            if timeout is not None and interrupted is None and now - start > timeout:
                self.interrupt()
                interrupted = now
            if interrupted is not None and now - interrupted > KILL_GRACE:
                self.stop()
                return "timeout"
            if finished is not None and now - finished > 2.0:
                return "the worker finished without answering"
            self._check_alive()
            msg = self._next(0.05)
            if msg is None:
                continue
            kind = msg["header"]["msg_type"]
            if kind == "comm_msg" and msg["content"]["data"].get("id") == request_id:
                reply = self._reply(msg)  # read even when late: it frees the answer's memory
                return "timeout" if interrupted is not None else reply
            if kind == "execute_reply" and msg["parent_header"].get("msg_id") == msg_id:
                content = msg["content"]
                if content["status"] != "ok":
                    if interrupted is not None or content.get("ename") == "KeyboardInterrupt":
                        return "timeout"
                    return f"the worker failed: {content.get('ename')}: {content.get('evalue')}"
                finished = now

    def _next(self, timeout: float) -> dict | None:
        import zmq

        channels = (self.kc.iopub_channel, self.kc.shell_channel)
        for channel in channels:
            if channel.msg_ready():
                return channel.get_msg(timeout=0)
        poller = zmq.Poller()
        for channel in channels:
            poller.register(channel.socket, zmq.POLLIN)
        ready = dict(poller.poll(int(timeout * 1000)))
        for channel in channels:
            if channel.socket in ready:
                return channel.get_msg(timeout=0)
        return None

    def _reply(self, msg: dict) -> ReplayReply:
        buffers = msg["buffers"]
        reply: ReplayReply = pickle.loads(buffers[0])
        header = msg["content"]["data"]["outputs"]
        parcel = transport.Parcel(bytes(buffers[1]), spans=[tuple(s) for s in header["spans"]],
                                  shm_name=header["shm"], buffers=list(buffers[2:]))  # fmt: skip
        try:
            reply.result.outputs = transport.unpack(parcel, transport.host_copy, take=True)
        except Exception as error:  # an output class this process cannot import
            reply.result.outputs = {}
            reply.result.notes.append(f"the replay's outputs could not be read back: {error}")
        return reply


class _Died(Exception):
    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def _import_path() -> list[str]:
    """Where the person's process finds modules (their cwd first), for the worker."""
    return [os.getcwd(), *[p for p in sys.path if p]]


def _remote_buffers(parcel: transport.Parcel, local: bool) -> list:
    """The arrays' bytes as message buffers, for a kernel that cannot map the shared block."""
    if local or parcel.shm_name is None:
        return list(parcel.buffers)
    block = transport.attach(parcel.shm_name)
    try:
        return [bytes(block.buf[start : start + nbytes]) for start, nbytes in parcel.spans]
    finally:
        block.close()


@dataclass
class WorkerPool:
    """The workers of one session, started on first use and reused."""

    scratch: str = field(default_factory=lambda: tempfile.mkdtemp(prefix="porter-workers-"))
    workers: dict[tuple, Worker] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        atexit.register(self.shutdown)

    def worker_for(self, spec: BackendSpec, *, x64: bool = False) -> Worker:
        env = worker_environment(spec, x64=x64)
        key = (spec.library, kernel_place(spec), tuple(sorted(env.items())))
        with self._lock:
            worker = self.workers.get(key)
            if worker is None:
                worker = self.workers[key] = _make_worker(key, spec, env, self.scratch)
        return worker

    def warm(self, specs: list[BackendSpec]) -> None:
        """Start the kernels these specs need (without waiting), e.g. while the cell runs."""
        for spec in specs:
            worker = self.worker_for(spec)
            if worker.km is None and kernel_place(worker.spec) is None:
                try:
                    worker.launch()
                except Exception as error:  # reported by the replay that needs it
                    worker.dead_reason = str(error)

    def run(self, jobs: list[Job], timeout: float | None = None) -> list[ReplayResult]:
        """Run ``jobs`` at the same time (one after another on a shared worker)."""
        if not jobs:
            return []
        for job in jobs:  # launching from this thread: the kernels boot in parallel
            worker = self.worker_for(job.spec, x64=job.x64)
            if kernel_place(worker.spec) is None and worker.km is None:
                try:
                    worker.launch()
                except Exception as error:
                    worker.dead_reason = str(error)
        with ThreadPoolExecutor(max_workers=len(jobs)) as executor:
            futures = [executor.submit(self._one, job, timeout) for job in jobs]
            return [f.result() for f in futures]

    def _one(self, job: Job, timeout: float | None) -> ReplayResult:
        worker = self.worker_for(job.spec, x64=job.x64)
        request = job.request
        result = ReplayResult(request.label, "skipped", role=request.role)
        start = time.monotonic()
        with worker.lock:
            try:
                worker.connect(
                    start + START_TIMEOUT
                    if timeout is None
                    else start + max(timeout, START_TIMEOUT)
                )
                result.worker = request.worker = worker.label
                sent = time.monotonic()
                answer = worker.receive(request.id, worker.send(request, job.parcel), timeout)
            except WorkerUnavailable as error:
                worker.stop()
                result.reason = str(error)
                return result
            except _Died as died:
                worker.stop()
                result.status = "error"
                result.error = ErrorInfo("WorkerDied", _died_message(died.status))
                return result
        if isinstance(answer, ReplayReply):
            result = answer.result
            result.output_meta = answer.meta
        elif answer == "timeout":
            result.status, result.seconds = "timeout", timeout
            result.reason = f"ran past the time limit of {timeout:g} s"
        else:
            result.status, result.error = "error", ErrorInfo("WorkerError", answer)
        result.worker = worker.label if worker.km is not None else result.worker
        result.wall_seconds = time.monotonic() - sent
        return result

    def shutdown(self) -> None:
        """Stop every worker (no process is left behind)."""
        with self._lock:
            workers, self.workers = list(self.workers.values()), {}
        for worker in workers:
            worker.stop()


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


def _make_worker(key: tuple, spec: BackendSpec, env: dict[str, str], scratch: str) -> Worker:
    home = os.path.join(scratch, "-".join(str(k) for k in key[:1]) + "-" + secrets.token_hex(3))
    if kernel_place(spec) is None:
        return Worker(key, spec, env, home)
    from porter_ext.replay.remote import remote_worker

    return remote_worker(key, spec, env, home)

"""One worker kernel, spoken to through the Jupyter kernel protocol.

`Worker` holds the protocol: wait for the kernel, set it up (``worker_side.start``), open
the ``porter.replay`` comm, send a replay (a comm message whose buffers carry the request
and the inputs, then ``run(id)`` of the worker's program, see `use_program`), and wait
for its answer, interrupting it past its time limit and killing it when the interrupt
does not stop it. A subclass says how messages travel: `LocalWorker` starts a kernel here with ``jupyter_client``
(ZeroMQ); `remote` reaches kernels that run elsewhere.
"""

from __future__ import annotations

import contextlib
import json
import os
import pickle
import secrets
import sys
import tempfile
import threading
import time
from abc import ABC, abstractmethod
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from porter_ext.backends import BackendSpec
from porter_ext.guard import PorterInternalError, debug
from porter_ext.replay import confine, shared_blocks, transport
from porter_ext.replay.worker_side import COMM_TARGET, ReplayReply, ReplayRequest

KERNEL_NAME = "porter-worker"
#: seconds a local worker may take to start and answer its set-up
START_TIMEOUT = 60.0
#: seconds between interrupting a replay and killing its worker
KILL_GRACE = 1.0
#: seconds to wait for a replay's answer once its execution has finished: the answer
#: (iopub) and the execute_reply (shell) come on two channels, in either order, and on a
#: loaded machine far apart
ANSWER_GRACE = 30.0


#: the module whose ``run(request_id)`` a worker executes for each replay: the replay
#: stage's own (`worker_side.run`: replay and answer) unless the stage that uses the
#: workers hands its own (`use_program`)
_program = "porter_ext.replay.worker_side"


def use_program(module: str) -> None:
    """Have workers run each replay with ``module.run(request_id)`` (a module the worker
    can import: the session's adds device findings to the replay's result)."""
    global _program
    _program = module


class WorkerUnavailable(RuntimeError):
    """A worker could not be started or reached; the message says why (a `skipped`)."""


class Died(Exception):
    """The worker's process ended (``status`` as `Popen.returncode` gives it)."""

    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def kernel_spec_file() -> Path:
    """The ``porter-worker`` kernelspec, inside the package: it is not installed where
    Jupyter lists kernels (a person never picks it in the Launcher), only porter starts it
    (`porter install-kernels --worker` installs it on a gateway's host)."""
    return Path(__file__).resolve().parent / "kernelspec" / "kernel.json"


def import_path() -> list[str]:
    """Where the person's process finds modules (their cwd first), for the worker."""
    return [os.getcwd(), *[p for p in sys.path if p]]


class Worker(ABC):
    """The protocol with one worker kernel; subclasses move the messages."""

    place = "worker"
    #: the worker can map this machine's shared memory
    local = True

    def __init__(self, key: tuple, spec: BackendSpec, env: dict[str, str], scratch: str):
        self.key, self.spec, self.env, self.scratch = key, spec, env, scratch
        self.lock = threading.Lock()
        self.comm_id = secrets.token_hex(8)
        self.ready = False
        #: why the kernel could not even be started (reported by the replay)
        self.launch_error: str | None = None
        #: how many times a cell was stopped (Ctrl-C) while this worker served it, and
        #: that count as it was when the replay it runs now was handed to it: the replay
        #: is cancelled once they differ (`cancelled`). A count, not a flag reset by the
        #: next cell: that cell could clear it before the stopped replay's thread saw it
        self.cancels = 0
        self.running_since = 0
        #: what keeps its replays off the person's files, when this side knows it
        self.isolation: str | None = None

    # -- what a subclass provides -------------------------------------------------------
    def launch(self) -> None:  # noqa: B027 (a running kernel has nothing to start)
        """Start the kernel without waiting for it (nothing for a running one)."""

    @abstractmethod
    def open(self, deadline: float) -> None:
        """Make the channels to the kernel."""

    @abstractmethod
    def post(self, msg_type: str, content: dict, buffers: list | None = None) -> str:
        """Send a shell message; its msg_id."""

    @abstractmethod
    def next_message(self, timeout: float) -> dict | None:
        """The next iopub or shell message within ``timeout`` seconds, or None."""

    def exit_status(self) -> int | None:
        """The kernel process's exit status once it has ended; None while it runs."""
        return None

    def environment(self, person: dict[str, str]) -> dict[str, str] | None:
        """The variables the worker is to have for the person's ``person``; None: the
        worker's own (a kernel on another machine)."""
        return None

    @abstractmethod
    def interrupt(self) -> None:
        """Interrupt the replay that runs now."""

    def stop(self) -> None:
        """Let go of the kernel (ending it when porter started it)."""
        self.ready = False

    @property
    def label(self) -> str:
        return self.place

    def start_timeout(self, timeout: float | None) -> float:
        """Seconds the worker may take to come up for a replay limited to ``timeout``."""
        return START_TIMEOUT if timeout is None else max(timeout, START_TIMEOUT)

    # -- the protocol -------------------------------------------------------------------
    def connect(self, deadline: float) -> None:
        """Wait for the kernel and set it up (sandbox, import path, library, comm)."""
        if self.ready:
            return
        self.launch()
        self.open(deadline)
        self._wait_reply(self.post("kernel_info_request", {}), deadline, "answer")
        code = (
            "import porter_ext.replay.worker_side as __porter_worker__\n"
            f"__porter_worker__.start({self.scratch!r}, {import_path()!r}, {[self.spec.library]!r})"
        )
        reply = self._wait_reply(self._execute(code), deadline, "set itself up")
        content = reply["content"]
        if content["status"] != "ok":
            raise WorkerUnavailable(
                f"the {self.place} could not set itself up ({content.get('ename')}: "
                f"{content.get('evalue')}); is porter-ext installed there?"
            )
        self.post("comm_open", {"comm_id": self.comm_id, "target_name": COMM_TARGET, "data": {}})
        self.ready = True

    def cancel(self) -> None:
        """Stop the replay this worker runs or starts for (from another thread): it ends
        the kernel. Every replay handed to it before is cancelled too (`WorkerPool.run`
        hands each the count it started under), so that a worker still starting when the
        cell was stopped does not run it after, and the next cell's replays run."""
        self.cancels += 1

    @property
    def cancelled(self) -> bool:
        """Whether the cell of the replay this worker runs was stopped."""
        return self.cancels != self.running_since

    def _execute(self, code: str) -> str:
        content = {
            "code": code,
            "silent": True,
            "store_history": False,
            "user_expressions": {},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        return self.post("execute_request", content)

    def _wait_reply(self, msg_id: str, deadline: float, what: str) -> dict:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerUnavailable(f"the {self.place} did not {what} in time")
            if self.cancelled:
                raise WorkerUnavailable("the cell was interrupted")
            self._check_alive()
            msg = self.next_message(min(left, 0.1))
            if (
                msg is not None
                and msg["parent_header"].get("msg_id") == msg_id
                and msg["header"]["msg_type"].endswith("_reply")
            ):
                return msg

    def _check_alive(self) -> None:
        status = self.exit_status()
        if status is not None:
            raise Died(status)

    def send(self, request: ReplayRequest, parcel: transport.Parcel) -> str:
        buffers = [
            pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL),
            parcel.payload,
            *_message_buffers(parcel, request.local),
        ]
        self.post("comm_msg", {"comm_id": self.comm_id, "data": {"id": request.id}}, buffers)
        return self._execute(f"__import__({_program!r}, fromlist=['run']).run({request.id!r})")

    def receive(self, request_id: str, msg_id: str, timeout: float | None) -> ReplayReply | str:
        """The worker's reply, or why there is none (``"timeout"`` or an error text)."""
        start = time.monotonic()
        interrupted: float | None = None
        finished: float | None = None
        while True:
            now = time.monotonic()
            if self.cancelled:
                with contextlib.suppress(Exception):  # a kernel elsewhere: stop its replay
                    self.interrupt()
                self.stop()
                return "cancelled"
            if timeout is not None and interrupted is None and now - start > timeout:
                self.interrupt()
                interrupted = now
            if interrupted is not None and now - interrupted > KILL_GRACE:
                self.stop()
                return "timeout"
            if finished is not None and now - finished > ANSWER_GRACE:
                return "the worker finished without answering"
            self._check_alive()
            msg = self.next_message(0.05)
            if msg is None:
                continue
            kind = msg["header"]["msg_type"]
            if _is_answer(msg):
                # read even when late (or an earlier request's): it frees the answer's
                # shared block, which only this side unlinks
                reply = self._reply(msg)
                if msg["content"]["data"].get("id") != request_id:
                    continue
                return "timeout" if interrupted is not None else reply
            if kind == "execute_reply" and msg["parent_header"].get("msg_id") == msg_id:
                content = msg["content"]
                if content["status"] != "ok":
                    if interrupted is not None or content.get("ename") == "KeyboardInterrupt":
                        return "timeout"
                    if content.get("ename") == PorterInternalError.__name__ and debug():
                        # porter's own failure in the worker (PORTER_DEBUG=1 there too):
                        # it fails here as it would have in this process
                        raise PorterInternalError(f"in the {self.place}: {content.get('evalue')}")
                    return f"the worker failed: {content.get('ename')}: {content.get('evalue')}"
                finished = now

    def _reply(self, msg: dict) -> ReplayReply:
        buffers = msg["buffers"]
        reply: ReplayReply = pickle.loads(buffers[0])
        header = msg["content"]["data"]["outputs"]
        parcel = transport.Parcel(
            bytes(buffers[1]),
            spans=[tuple(s) for s in header["spans"]],
            shm_name=header["shm"],
            buffers=list(buffers[2:]),
        )
        try:
            reply.result.outputs = transport.unpack(
                parcel, transport.host_kept, take=True, keep_classes=True
            )
        except Exception as error:  # an output class this process cannot import
            reply.result.outputs = {}
            reply.result.notes.append(f"the replay's outputs could not be read back: {error}")
        return reply


def _is_answer(msg: dict) -> bool:
    """Whether ``msg`` is a replay's answer (whose outputs may sit in a shared block)."""
    if msg["header"]["msg_type"] != "comm_msg":
        return False
    data = msg["content"].get("data")
    return isinstance(data, dict) and "outputs" in data


_launching: ThreadPoolExecutor | None = None
_launching_lock = threading.Lock()


def _launcher() -> ThreadPoolExecutor:
    """The thread every local worker is started from, alive as long as this process."""
    global _launching
    with _launching_lock:
        if _launching is None:
            _launching = ThreadPoolExecutor(max_workers=1, thread_name_prefix="porter-launch")
        return _launching


def _message_buffers(parcel: transport.Parcel, local: bool) -> list:
    """The arrays' bytes as message buffers, for a kernel that cannot map the shared block."""
    block = parcel._block
    if local or block is None:
        return list(parcel.buffers)
    return [block.buf[start : start + nbytes] for start, nbytes in parcel.spans]


class ZmqMessages:
    """Messages over a `jupyter_client` kernel client's ZeroMQ channels (``self.kc``)."""

    kc: Any

    def post(self, msg_type: str, content: dict, buffers: list | None = None) -> str:
        msg = self.kc.session.msg(msg_type, content)
        self.kc.session.send(self.kc.shell_channel.socket, msg, buffers=buffers)
        return msg["header"]["msg_id"]

    def next_message(self, timeout: float) -> dict | None:
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


def _end(km: Any) -> None:
    """End a kernel nobody is to use."""
    try:
        km.shutdown_kernel(now=True)
    except Exception:  # already gone: only its files are left
        km.cleanup_resources()


def _hidden_folders() -> tuple[str, ...]:
    """Folders a worker must not see: the person's Jupyter runtime folder, where the
    connection files of their kernels are (each a key to run code there). Made first
    where it is not yet (private to the person, as Jupyter makes it): a folder made after
    the worker started would be seen whole from inside."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir

        runtime = os.path.realpath(jupyter_runtime_dir())
    except Exception:  # no jupyter_core: no runtime folder of Jupyter's either
        return ()
    top = os.path.realpath(tempfile.gettempdir())
    if runtime == top or top.startswith(runtime.rstrip(os.sep) + os.sep):
        return ()
    try:
        os.makedirs(runtime, mode=0o700, exist_ok=True)
    except OSError:  # a home the person cannot write: no connection file can be made there
        return ()
    return (runtime,)


class LocalWorker(ZmqMessages, Worker):
    """A worker kernel started here from the ``porter-worker`` kernelspec; ``network``:
    it shares the person's network (``--allow-network``)."""

    place = "local worker"

    def __init__(self, *args: Any, network: bool = False):
        super().__init__(*args)
        self.km: Any = None
        self.kc: Any = None
        self.network = network

    def launch(self) -> None:
        if self.km is not None:
            return
        from jupyter_client.kernelspec import KernelSpec
        from jupyter_client.manager import KernelManager

        os.makedirs(self.scratch, exist_ok=True)
        # the channels are Unix sockets in the scratch folder (ZeroMQ ``ipc``): a worker
        # without the person's network needs none of its ports, and its connection file
        # is not among the person's; named for this start (one started before may linger)
        started = secrets.token_hex(3)
        km = KernelManager(
            kernel_name=KERNEL_NAME,
            transport="ipc",
            ip=os.path.join(self.scratch, f"channel-{started}"),
            connection_file=os.path.join(self.scratch, f"connection-{started}.json"),
        )
        # always the package's own spec: one installed elsewhere may be of another porter
        data = json.loads(kernel_spec_file().read_text())
        spec = KernelSpec(resource_dir=str(kernel_spec_file().parent), **data)
        # the kernel starts sealed off from the person's files (see `confine`)
        command = list(spec.argv)
        if command[0] in ("python", "python3"):  # as jupyter_client does for a bare python
            command[0] = sys.executable
        walls = confine.Walls(
            self.scratch,
            shared=shared_blocks.directory(create=True),
            hidden=_hidden_folders(),
            own_network=not self.network,
        )
        confined = confine.confinement().argv(command, walls)
        self.isolation = confine.confinement().isolation
        km._kernel_spec = KernelSpec(
            resource_dir=spec.resource_dir, **{**spec.to_dict(), "argv": confined}
        )
        env = self.environment(dict(os.environ))
        log = open(os.path.join(self.scratch, "kernel.log"), "ab")  # noqa: SIM115
        try:
            # from porter's one long-lived thread: a sealed worker ends with the thread
            # that started it (PR_SET_PDEATHSIG), and a cell's thread may end before the
            # session does
            start = _launcher().submit(
                km.start_kernel, env=env, cwd=self.scratch, stdout=log, stderr=log
            )
            try:
                start.result()
            except BaseException:  # Ctrl-C while it starts: it ends once it is up
                start.add_done_callback(lambda _: _end(km))
                raise
        finally:
            log.close()
        self.km = km

    def environment(self, person: dict[str, str]) -> dict[str, str]:
        """The variables of this worker, for the person's ``person``."""
        # caches the person's libraries placed elsewhere: the worker's go to its scratch
        inherited = {k: v for k, v in person.items() if not k.endswith("_CACHE_DIR")}
        env = {**inherited, **self.env, "TMPDIR": self.scratch, "PYTHONUNBUFFERED": "1"}
        env[shared_blocks.OWNER_VARIABLE] = shared_blocks.owner()
        env[shared_blocks.FOLDER_VARIABLE] = shared_blocks.directory()
        # the worker imports the very porter this process runs (a checkout, a wheel)
        home = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = os.pathsep.join([home, *filter(None, [env.get("PYTHONPATH")])])
        return env

    def open(self, deadline: float) -> None:
        if self.kc is None:
            self.kc = self.km.client()
            # no heartbeat: liveness is the process itself (`exit_status`), and the
            # heartbeat thread can block for good sending to a worker that died
            self.kc.start_channels(hb=False)

    def exit_status(self) -> int | None:
        process = getattr(getattr(self.km, "provisioner", None), "process", None)
        return process.poll() if process is not None else None

    def interrupt(self) -> None:
        if self.km is not None:
            self.km.interrupt_kernel()

    def stop(self) -> None:
        """End the kernel now and forget it (the next replay starts a fresh one)."""
        super().stop()
        if self.kc is not None:  # answers that came too late: their blocks go now
            while (msg := self.next_message(0)) is not None:
                if _is_answer(msg):
                    self._reply(msg)
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

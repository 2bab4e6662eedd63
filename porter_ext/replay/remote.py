"""Workers elsewhere: kernels that already run, named by a spec's ``@WHERE``.

- ``torch:cuda:0@/path/kernel-123.json``: a kernel's connection file (a kernel started by
  ``jupyter kernel``, by JupyterLab on a GPU host, reached through an SSH tunnel);
- ``torch:cuda@http://host:8888``: a Jupyter Kernel Gateway or Enterprise Gateway; porter
  starts a kernel there (the ``porter-worker`` kernelspec when the gateway has it, else
  its default one) and ends it when the session ends.

Such a kernel cannot map this machine's shared memory, so the inputs' bytes travel in the
kernel protocol's message buffers. porter-ext must be installed where the kernel runs.
A kernel that is not there or does not answer makes the replay ``skipped`` with the
reason, within the replay's time limit.
"""

from __future__ import annotations

import contextlib
import json
import os
import struct
import time
import uuid
from datetime import UTC
from typing import Any

from porter_ext.backends import BackendSpec
from porter_ext.replay.worker_kernel import KERNEL_NAME, Worker, WorkerUnavailable, ZmqMessages

#: seconds to reach a remote kernel when the replay has no time limit of its own
REACH_TIMEOUT = 30.0


def remote_worker(key: tuple, spec: BackendSpec, env: dict[str, str], scratch: str) -> Worker:
    where = spec.where or ""
    if where.startswith(("http://", "https://")):
        return GatewayWorker(key, spec, env, scratch)
    return ConnectionFileWorker(key, spec, env, scratch)


class _RemoteWorker(Worker):
    local = False

    def start_timeout(self, timeout: float | None) -> float:
        return REACH_TIMEOUT if timeout is None else max(timeout, 1.0)

    @property
    def label(self) -> str:
        return f"{self.place} {self.spec.where}"


class ConnectionFileWorker(ZmqMessages, _RemoteWorker):
    """A running kernel reached through its connection file."""

    place = "kernel"

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.kc: Any = None

    def open(self, deadline: float) -> None:
        if self.kc is not None:
            return
        path = self.spec.where or ""
        if not os.path.exists(path):
            raise WorkerUnavailable(f"no kernel connection file at {path}")
        _check_connection_file(path)
        from jupyter_client.blocking.client import BlockingKernelClient

        kc = BlockingKernelClient(connection_file=path)
        try:
            kc.load_connection_file()
        except (OSError, ValueError, KeyError) as error:
            raise WorkerUnavailable(f"cannot read the connection file {path}: {error}") from None
        kc.start_channels(hb=False)  # porter does not read heartbeats (see LocalWorker.open)
        self.kc = kc

    def interrupt(self) -> None:
        msg = self.kc.session.msg("interrupt_request", {})
        self.kc.control_channel.send(msg)

    def stop(self) -> None:
        """Let go of the kernel; it is someone else's, so it keeps running."""
        super().stop()
        kc, self.kc = self.kc, None
        if kc is not None:
            kc.stop_channels()


#: what every kernel connection file holds (jupyter_client reads the missing ones as
#: defaults, and then waits for a kernel on ports nobody listens on)
_CONNECTION_KEYS = ("shell_port", "iopub_port", "control_port", "key")


def _check_connection_file(path: str) -> None:
    """Refuse a file that is not a kernel's connection file (a typo that hits another
    file), before porter waits for a kernel that file cannot name."""
    try:
        with open(path, encoding="utf-8") as handle:
            info = json.loads(handle.read(1 << 20))
    except (OSError, ValueError, RecursionError) as error:
        raise WorkerUnavailable(
            f"{path} is not a kernel connection file ({type(error).__name__}: {error})"
        ) from None
    missing = [k for k in _CONNECTION_KEYS if not isinstance(info, dict) or k not in info]
    if missing:
        raise WorkerUnavailable(
            f"{path} is not a kernel connection file (it has no {', '.join(missing)}): name "
            "the .json file a running kernel wrote (`jupyter --runtime-dir` lists them)"
        )


class GatewayWorker(_RemoteWorker):
    """A kernel started through a Jupyter Kernel Gateway's REST API, spoken to over its
    websocket (binary frames carry the message buffers)."""

    place = "gateway kernel"

    def __init__(self, *args: Any):
        super().__init__(*args)
        self.kernel_id: str | None = None
        self.ws: Any = None
        self.session_id = uuid.uuid4().hex
        self.base = (self.spec.where or "").rstrip("/")

    def _request(self, method: str, path: str, body: dict | None, timeout: float) -> Any:
        import urllib.error
        import urllib.request

        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"{self.base}{path}",
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(req, timeout=max(timeout, 0.1)) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as error:
            raise WorkerUnavailable(f"the gateway at {self.base} refused: {error}") from None
        except (OSError, ValueError) as error:
            raise WorkerUnavailable(
                f"the gateway at {self.base} does not answer ({error})"
            ) from None
        return json.loads(text) if text else None

    def open(self, deadline: float) -> None:
        if self.ws is not None:
            return
        left = lambda: deadline - time.monotonic()  # noqa: E731
        if self.kernel_id is None:
            names = self._request("GET", "/api/kernelspecs", None, left()) or {}
            name = KERNEL_NAME if KERNEL_NAME in names.get("kernelspecs", {}) else None
            body = {"name": name} if name else {}
            self.kernel_id = self._request("POST", "/api/kernels", body, left())["id"]
        import websocket

        url = self.base.replace("http", "ws", 1) + f"/api/kernels/{self.kernel_id}/channels"
        try:
            self.ws = websocket.create_connection(url, timeout=max(left(), 0.1))
        except (OSError, websocket.WebSocketException) as error:
            raise WorkerUnavailable(f"cannot reach the gateway kernel at {url} ({error})") from None

    def post(self, msg_type: str, content: dict, buffers: list | None = None) -> str:
        msg_id = uuid.uuid4().hex
        header = {
            "msg_id": msg_id,
            "msg_type": msg_type,
            "username": "porter",
            "session": self.session_id,
            "date": _now(),
            "version": "5.3",
        }
        msg = {
            "header": header,
            "parent_header": {},
            "metadata": {},
            "content": content,
            "channel": "shell",
            "buffers": list(buffers or []),
        }
        if msg["buffers"]:
            self.ws.send_binary(_to_binary(msg))
        else:
            msg.pop("buffers")
            self.ws.send(json.dumps(msg))
        return msg_id

    def next_message(self, timeout: float) -> dict | None:
        import websocket

        self.ws.settimeout(timeout)
        try:
            frame = self.ws.recv()
        except websocket.WebSocketTimeoutException:
            return None
        except (OSError, websocket.WebSocketException) as error:
            raise WorkerUnavailable(f"lost the gateway kernel ({error})") from None
        msg = _from_binary(frame) if isinstance(frame, bytes) else json.loads(frame)
        msg.setdefault("buffers", [])
        return msg

    def interrupt(self) -> None:
        if self.kernel_id is not None:
            self._request("POST", f"/api/kernels/{self.kernel_id}/interrupt", {}, 5.0)

    def stop(self) -> None:
        """Close the websocket; the kernel porter started at the gateway is ended."""
        super().stop()
        ws, self.ws = self.ws, None
        if ws is not None:
            ws.close()
        kernel, self.kernel_id = self.kernel_id, None
        if kernel is not None:
            # the gateway may have gone first: then nothing is left to end
            with contextlib.suppress(WorkerUnavailable):
                self._request("DELETE", f"/api/kernels/{kernel}", None, 5.0)


def _now() -> str:
    from datetime import datetime

    return datetime.now(UTC).isoformat()


def _to_binary(msg: dict) -> bytes:
    """Jupyter's websocket framing of a message with buffers: the count, the offsets, the
    JSON message, then each buffer."""
    buffers = [bytes(b) for b in msg.pop("buffers")]
    parts = [json.dumps(msg).encode(), *buffers]
    offsets = [4 * (len(parts) + 1)]
    for part in parts[:-1]:
        offsets.append(offsets[-1] + len(part))
    return struct.pack(f"!{len(parts) + 1}I", len(parts), *offsets) + b"".join(parts)


def _from_binary(frame: bytes) -> dict:
    count = struct.unpack("!I", frame[:4])[0]
    offsets = [*struct.unpack(f"!{count}I", frame[4 : 4 * (count + 1)]), len(frame)]
    parts = [memoryview(frame)[offsets[i] : offsets[i + 1]] for i in range(count)]
    msg = json.loads(bytes(parts[0]).decode())
    msg["buffers"] = parts[1:]
    return msg

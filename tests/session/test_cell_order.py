"""A live session names a recorded cell as `porter run` does (``cell 3 · In [2]``) once
the front end has told the person's kernel the notebook's cell order: porter's
JupyterLab extension opens the ``porter.cells`` comm and sends the cells' ids in order;
JupyterLab puts the running cell's id (``cellId``) in each execute request's metadata.
A real ipykernel spoken to through jupyter_client, the messages built as JupyterLab
sends them; mirrors porter_ext/session/cell_order.py."""

from __future__ import annotations

import contextlib
import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from porter_ext.ui.mime import MIME_TYPE

ROOT = Path(__file__).resolve().parents[2]
#: the comm target porter's JupyterLab extension opens (labextension/src/cellorder.ts)
COMM_TARGET = "porter.cells"
TIMEOUT = 60.0
DEFINING = "%%port --no-replay\nimport numpy as np\ndef f(x):\n    return np.sum(x, 0)\n"
CALLING = "%%port --no-replay\ny = f(np.ones((2, 2)))\n"


class Kernel:
    """A person's kernel as JupyterLab speaks to it: execute requests carry the cell's
    id in their metadata; comm messages travel on the shell channel."""

    def __init__(self, client: Any):
        self.client = client

    def _send(self, msg_type: str, content: dict, metadata: dict | None = None) -> str:
        msg = self.client.session.msg(msg_type, content, metadata=metadata or {})
        self.client.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    def _reply(self, msg_id: str) -> dict:
        while True:
            reply = self.client.get_shell_msg(timeout=TIMEOUT)
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply

    def run(self, code: str, cell_id: str | None = None) -> list[dict]:
        """Run ``code`` as the cell ``cell_id``: the iopub messages it caused (until idle)."""
        content = {"code": code, "silent": False, "store_history": True, "allow_stdin": False}
        metadata = {"cellId": cell_id} if cell_id is not None else {}
        msg_id = self._send("execute_request", content, metadata)
        reply = self._reply(msg_id)
        seen = []
        while True:
            msg = self.client.get_iopub_msg(timeout=TIMEOUT)
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            seen.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                break
        assert reply["content"]["status"] == "ok", (reply["content"], seen)
        return seen

    def entry(self, code: str, cell_id: str | None) -> dict:
        """The porter entry the ``%%port`` cell ``code`` displayed, run as ``cell_id``."""
        seen = self.run(code, cell_id)
        entries = [
            m["content"]["data"][MIME_TYPE]
            for m in seen
            if m["msg_type"] == "display_data" and MIME_TYPE in m["content"]["data"]
        ]
        assert len(entries) == 1, seen
        return entries[0]

    def open_order(self, ids: list[str]) -> str:
        """Open porter's comm as the extension does, the order in its first message."""
        comm_id = uuid.uuid4().hex
        content = {"comm_id": comm_id, "target_name": COMM_TARGET, "data": {"cells": ids}}
        self._send("comm_open", content)
        return comm_id

    def send_order(self, comm_id: str, ids: list[str]) -> None:
        self._send("comm_msg", {"comm_id": comm_id, "data": {"cells": ids}})

    def comms(self) -> dict:
        msg_id = self._send("comm_info_request", {"target_name": COMM_TARGET})
        return self._reply(msg_id)["content"]["comms"]


@contextlib.contextmanager
def started() -> Iterator[Kernel]:
    """A fresh IPython kernel importing this tree's porter_ext (not loaded yet)."""
    from jupyter_client.manager import start_new_kernel

    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    manager, client = start_new_kernel(kernel_name="python3", env=env, startup_timeout=TIMEOUT)
    try:
        yield Kernel(client)
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def kernel() -> Iterator[Kernel]:
    with started() as kernel:
        kernel.run("%load_ext porter_ext", "load")
        yield kernel


def test_a_recorded_cell_is_named_by_its_notebook_position(kernel):
    comm_id = kernel.open_order(["load", "notes", "ported"])
    entry = kernel.entry("%%port --no-replay\nimport numpy as np\nx = np.ones(3)\n", "ported")
    count = entry["execution_count"]
    assert entry["index"] == 2
    assert entry["label"] == f"cell 3 · In [{count}]"
    # moved up and run again: its new position
    kernel.send_order(comm_id, ["load", "ported", "notes"])
    entry = kernel.entry("%%port --no-replay\nimport numpy as np\nx = np.ones(3)\n", "ported")
    assert (entry["index"], entry["label"]) == (1, f"cell 2 · In [{entry['execution_count']}]")


def test_a_cell_the_order_does_not_name_keeps_its_prompt(kernel):
    kernel.open_order(["load"])
    entry = kernel.entry("%%port --no-replay\nz = 1\n", "not-in-the-order")
    assert entry["index"] is None and entry["label"] == f"In [{entry['execution_count']}]"
    # nor a cell run without an id (a console, a front end that sends none)
    entry = kernel.entry("%%port --no-replay\nz = 2\n", None)
    assert entry["index"] is None and entry["label"] == f"In [{entry['execution_count']}]"


def test_origins_and_callers_name_cells_by_position(kernel):
    comm_id = kernel.open_order(["load", "md", "defining", "calling"])
    defining = kernel.entry(DEFINING, "defining")["execution_count"]
    calling = kernel.entry(CALLING, "calling")
    [row] = [r for r in calling["diagnostics"] if r["name"] == "numpy.sum"]
    assert row["origin"]["index"] == 2 and row["origin"]["cell_id"] == "defining"
    assert row["origin"]["label"] == f"cell 3 · In [{defining}]"
    assert row["called_from"] == f"cell 4 · In [{calling['execution_count']}], line 2"
    # the defining cell moved below: a later call names where it is now
    kernel.send_order(comm_id, ["load", "md", "calling", "defining"])
    again = kernel.entry(CALLING, "calling")
    [row] = [r for r in again["diagnostics"] if r["name"] == "numpy.sum"]
    assert row["origin"]["label"] == f"cell 4 · In [{defining}]"
    assert row["called_from"] == f"cell 3 · In [{again['execution_count']}], line 2"


def test_a_hostile_order_is_ignored(kernel):
    comm_id = kernel.open_order(["load", "kept"])
    kernel.send_order(comm_id, "not a list")  # type: ignore[arg-type]
    kernel.send_order(comm_id, [1, None, {"a": 1}])  # type: ignore[list-item]
    entry = kernel.entry("%%port --no-replay\nz = 3\n", "kept")
    assert entry["index"] == 1
    assert kernel.run("print('still fine')", "kept")


def test_without_porter_the_order_is_refused_quietly():
    """A kernel that has not loaded porter closes the comm (ipykernel's answer to an
    unknown target); the person's cells run as before."""
    with started() as kernel:
        kernel.open_order(["a"])
        assert kernel.comms() == {}
        seen = kernel.run("print(1)", "a")
        assert any(m["msg_type"] == "stream" for m in seen)


def test_load_ext_registers_the_target_only_in_a_kernel():
    """Plain IPython (no kernel, no comms): loading porter registers nothing and imports
    no comm machinery; a %%port cell is named by its prompt."""
    import subprocess

    code = (
        "import sys\nfrom IPython.core.interactiveshell import InteractiveShell\n"
        "ip = InteractiveShell.instance()\nip.run_line_magic('load_ext', 'porter_ext')\n"
        "ip.run_cell('%%port --no-replay\\nx = 1\\n', store_history=True)\n"
        "print('comm' in sys.modules, ip.user_ns['_port'].entry.label)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.strip().splitlines()[-1] == "False In [1]"


def test_a_function_of_a_plain_cell_names_that_cell_by_position(kernel):
    """A plain cell (not recorded) is remembered by its id: a finding in a function it
    defined is shown there, named as `porter run` names it."""
    kernel.open_order(["load", "imports", "helper", "caller"])
    kernel.run("import numpy as np", "imports")
    helper = kernel.run("def g(x):\n    return np.sum(x, 0)\n", "helper")
    [count] = {m["content"]["execution_count"] for m in helper if m["msg_type"] == "execute_input"}
    entry = kernel.entry("%%port --no-replay\nw = g(np.ones((2, 2)))\n", "caller")
    [row] = [r for r in entry["diagnostics"] if r["name"] == "numpy.sum"]
    assert row["origin"]["cell_id"] == "helper"
    assert row["origin"]["label"] == f"cell 3 · In [{count}]"
    assert row["called_from"] == f"cell 4 · In [{entry['execution_count']}], line 2"

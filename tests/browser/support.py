"""Helpers of the browser tests: the Chromium command line, a request guard, screenshots,
a private JupyterLab server."""

from __future__ import annotations

import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from porter_ext.model.cells import SOURCE_STATES
from porter_ext.report.codec import cell_from_dict, cell_to_dict
from porter_ext.ui.mime import MIME_TYPE

CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"
DOCS_IMAGES = ROOT / "docs" / "images"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class PageLog:
    """What a page did that a test may forbid: dialogs, requests, script errors."""

    def __init__(self) -> None:
        self.dialogs: list[str] = []
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.errors: list[str] = []


def offline(page: Any, page_log: PageLog) -> None:
    """Fail every request that is not file: or data:, and remember it."""

    def route(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file:", "data:")):
            route.continue_()
        else:
            page_log.blocked.append(url)
            route.abort()

    page.route("**/*", route)


def save_screenshot(image: bytes, name: str, docs_name: str | None = None) -> Path:
    """Keep a screenshot as a test artefact; with PORTER_UPDATE_DOCS_IMAGES=1 also copy it
    to docs/images/`docs_name` for the README."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    path.write_bytes(image)
    if docs_name and os.environ.get("PORTER_UPDATE_DOCS_IMAGES") == "1":
        DOCS_IMAGES.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, DOCS_IMAGES / docs_name)
    return path


# --- notebooks and a private JupyterLab server -----------------------------------------------------------

LAB_CONFIG = """\
c.LabApp.news_url = None
c.LabApp.check_for_updates_class = "jupyterlab.NeverCheckForUpdate"
c.LabApp.extension_manager = "readonly"
c.LabApp.expose_app_in_browser = True
c.ServerApp.open_browser = False
c.ServerApp.port_retries = 0
"""
#: `news_url = None` empties the feed, but JupyterLab 4.6 still asks whether to fetch news
#: until this setting says never; the toast would cover part of the screenshot.
NOTIFICATION_SETTINGS = {"fetchNews": "false", "checkForUpdates": False}


@dataclass
class LabServer:
    """A running `jupyter lab`: its address, token, notebook root and config directory
    (`labconfig/page_config.json` there is read at each page load)."""

    url: str
    token: str
    root: Path
    config: Path
    #: seconds from starting `jupyter lab` to its first answer (printed, never asserted)
    started_in: float = 0.0

    def lab_url(self, name: str | None = None) -> str:
        path = f"/lab/tree/{name}" if name else "/lab"
        return f"{self.url}{path}?reset&token={self.token}"  # reset: no restored tabs

    def notebook7_url(self, name: str) -> str:
        return f"{self.url}/notebooks/{name}?token={self.token}"

    def api(self, path: str, method: str = "GET") -> int:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status


def write_notebook(path: Path, *cells: str | Any, kernel: str = "python3") -> None:
    """A notebook of code cells (a string is a cell's source) for the kernelspec `kernel`
    (`porter`: the kernel with porter's magics loaded)."""
    nb = nbformat.v4.new_notebook()
    display = "Python 3 (porter)" if kernel == "porter" else "Python 3"
    nb.metadata["kernelspec"] = {"name": kernel, "display_name": display, "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(c) if isinstance(c, str) else c for c in cells]
    nbformat.write(nb, path)


def saved_port_cell(body: str, sum_at: tuple[int, int], **entry: Any) -> Any:
    """A `%%port` cell over `body`, saved as typed (no final newline), whose output holds
    a porter result (no kernel needed): one finding, `numpy.sum` with a positional axis
    at `sum_at` (line, column of the body), and the entry's other fields from `entry`."""
    line, col = sum_at
    call = {
        "line": line,
        "col": col,
        "name": "numpy.sum",
        "library": "numpy",
        "kind": "function",
        "status": "non_standard_usage",
        "standard_name": "sum",
        "suggestion": "xp.sum(a, axis=0)",
        "count": 1,
        "message": "the standard takes axis as a keyword",
    }
    written = {"index": 0, "execution_count": 1, "source": body, "calls": [call], **entry}
    # what porter's model derives for it (rows, headline, label, plan), as porter writes it
    derived = cell_to_dict(cell_from_dict({**written, "first_line": 2}))
    result = {**derived, **entry}
    cell = nbformat.v4.new_code_cell(f"%%port\n{body.rstrip()}", execution_count=1)
    data = {"text/plain": "porter", MIME_TYPE: result}
    cell.outputs = [nbformat.v4.new_output("display_data", data=data)]
    return cell


def save_settings(lab: LabServer, plugin: str, values: dict[str, Any]) -> None:
    """Write a JupyterLab plugin's settings through the server (read at the next page
    load)."""
    body = json.dumps({"raw": json.dumps(values)}).encode()
    request = urllib.request.Request(
        f"{lab.url}/lab/api/settings/{plugin}",
        data=body,
        method="PUT",
        headers={"Authorization": f"token {lab.token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status == 204


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def lab_server(base: Path) -> Iterator[LabServer]:
    """`jupyter lab` on a free local port with a random token, serving `base/root`, with
    its own config, workspace and settings directories (so neither a person's setup nor
    an earlier run changes what is seen) and the data directories left alone (so the
    prebuilt extensions in the environment's share/jupyter are found). Stopped on exit,
    kernels included."""
    root, config = base / "root", base / "config"
    root.mkdir(exist_ok=True)
    (config / "labconfig").mkdir(parents=True, exist_ok=True)
    (config / "jupyter_lab_config.py").write_text(LAB_CONFIG)
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True, exist_ok=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NOTIFICATION_SETTINGS))
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MPLBACKEND": "Agg",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    command = [
        sys.executable,
        "-m",
        "jupyterlab",
        "--no-browser",
        "--allow-root",
        "--ServerApp.ip=127.0.0.1",
        f"--port={port}",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={root}",
    ]
    log_path = base / "lab.log"
    log = log_path.open("wb")
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = LabServer(f"http://127.0.0.1:{port}", token, root, config)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {process.returncode}: see {log_path}")
            try:
                if server.api("/api/status") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"jupyter lab did not answer within 60 s: see {log_path}")
            time.sleep(0.1)
        server.started_in = time.perf_counter() - start
        yield server
    finally:
        try:  # a clean shutdown also shuts the kernels down
            server.api("/api/shutdown", method="POST")
            process.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


#: what porter's views say of a cell whose source is the applied rewrite or changed
#: otherwise: the words porter writes in each entry (`source_states`)
SOURCE_STATE_WORDS = SOURCE_STATES

#: the current widget is a notebook whose document is loaded and has a session
OPENED = """() => {
  const app = window.jupyterapp;
  const w = app && app.shell.currentWidget;
  return w && w.sessionContext && w.context && w.context.isReady;
}"""
#: run every cell of the current notebook, once its kernel is ready
RUN_ALL = """async () => {
  const panel = window.jupyterapp.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  await window.jupyterapp.commands.execute("notebook:run-all-cells");
}"""
#: open the file at `path` in an editor beside the current notebook, then make the
#: notebook current again (to run it)
OPEN_BESIDE = """async (path) => {
  const app = window.jupyterapp;
  const notebook = app.shell.currentWidget;
  await app.commands.execute('docmanager:open', {path, options: {mode: 'split-right'}});
  app.shell.activateById(notebook.id);
}"""
#: [active cell index, the cursor's {line, column} in its editor]
CURSOR = """() => { const nb = window.jupyterapp.shell.currentWidget.content;
  return [nb.activeCellIndex, nb.activeCell.editor.getCursorPosition()]; }"""


def panel_row(page: Any, cell: int, line: int | None, text: str) -> Any:
    """The Porting panel's row of a finding shown in `cell` at `line` whose text holds `text`."""
    at = f'[data-porter-cell="{cell}"][data-porter-line="{"" if line is None else line}"]'
    return page.locator(f"#porter-porting-panel .porter-diag-row{at}", has_text=text)


#: each porter mark inside an element (a cell, a file editor): its text and the text of
#: its line before it (`locator.evaluate(MARKS_IN)`)
MARKS_IN = """(root) => Array.from(root.querySelectorAll('.cm-lintRange.porter-mark'))
  .map(mark => {
    const before = document.createRange();
    before.setStart(mark.closest('.cm-line'), 0);
    before.setEndBefore(mark);
    return [before.toString(), mark.textContent];
  })"""


def hover_text(page: Any, mark: Any) -> str:
    """The text of the lint tooltip of an editor mark (the mouse moved away after, the
    tooltip gone, so that the next hover opens a fresh one)."""
    page.mouse.move(0, 0)
    mark.hover()
    tip = page.locator(".cm-tooltip-lint")
    tip.wait_for(timeout=10_000)
    text = tip.inner_text()
    page.mouse.move(0, 0)
    tip.wait_for(state="detached", timeout=10_000)
    return text


def open_notebook(page: Any, lab: LabServer, name: str) -> None:
    """Open `name` in JupyterLab (no restored tabs) and wait until it is loaded."""
    page.goto(lab.lab_url(name), timeout=60_000)
    page.wait_for_function(OPENED, timeout=60_000)


#: in a started JupyterLab: ms to ``app.restored``, porter's activation (its performance
#: mark; None when it did not activate) and the time its files took to load
STARTED = """async () => {
  await window.jupyterapp.restored;
  const activate = performance.getEntriesByName('porter-ext:activate')[0];
  const files = performance.getEntriesByType('resource')
    .filter(r => r.name.includes('/lab/extensions/porter-ext/'));
  return {
    restored: performance.now(),
    activate: activate ? activate.duration : null,
    fetch: files.reduce((t, r) => t + r.duration, 0),
  };
}"""


def lab_start(browser: Any, lab: LabServer, *, enabled: bool) -> dict[str, Any]:
    """One JupyterLab start in a fresh browser context, with porter-ext enabled or
    disabled by the page config: what `STARTED` reads of it."""
    disabled = {} if enabled else {"porter-ext": True}
    page_config = lab.config / "labconfig" / "page_config.json"
    page_config.write_text(json.dumps({"disabledExtensions": disabled}))
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(lab.lab_url(), timeout=60_000)
        page.wait_for_function("() => window.jupyterapp", timeout=60_000)
        return page.evaluate(STARTED)
    finally:
        context.close()

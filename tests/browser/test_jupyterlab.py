"""The comparison widget in a real JupyterLab: open a notebook, run it, read the widget.

Mirrors porter_ext/ui/widget.py. A private `jupyter lab` runs on a free local port with a
random token, its own config, workspace and settings directories (so neither a person's
setup nor an earlier run changes what is seen), and the data directories left alone, so
that ipywidgets' prebuilt extension in the environment's share/jupyter is found.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

from tests.browser.support import ROOT, save_screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

NOTEBOOK = "porter_demo.ipynb"
PORT_CELL = "%%port\nimport torch\nx = torch.ones(3, 4)\ny = x.sum(1)"
TABS_NOTEBOOK = "widget_tabs.ipynb"
#: a widget over a cell with replays (a mismatch with its histogram, a wrong device)
TABS_CELL = (
    "from porter_ext.ui import CellWidget\n"
    "from tests.ui.entries import demo_cell\n"
    "CellWidget(demo_cell())"
)
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
class Lab:
    url: str
    token: str
    process: subprocess.Popen
    started_in: float

    def notebook_url(self, name: str) -> str:
        return f"{self.url}/lab/tree/{name}?reset&token={self.token}"  # reset: no restored tabs

    def api(self, path: str, method: str = "GET") -> int:
        request = urllib.request.Request(
            f"{self.url}{path}", method=method, headers={"Authorization": f"token {self.token}"}
        )
        with urllib.request.urlopen(request, timeout=2) as response:
            return response.status


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _notebook(path: Path, *sources: str) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_code_cell(source) for source in sources]
    nbformat.write(nb, path)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    base = tmp_path_factory.mktemp("lab")
    root, config = base / "root", base / "config"
    root.mkdir()
    config.mkdir()
    (config / "jupyter_lab_config.py").write_text(LAB_CONFIG)
    settings = base / "settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text(json.dumps(NOTIFICATION_SETTINGS))
    _notebook(root / NOTEBOOK, "%load_ext porter_ext", PORT_CELL)
    _notebook(root / TABS_NOTEBOOK, TABS_CELL)
    port, token = _free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(config),  # data dirs untouched: labextensions stay visible
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "settings"),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "MPLBACKEND": "Agg",
        # the kernel imports tests.ui.entries for the tabs notebook
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
    log = (base / "lab.log").open("wb")
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, cwd=root)
    server = Lab(f"http://127.0.0.1:{port}", token, process, 0.0)
    try:
        deadline = time.monotonic() + 60
        while True:
            if process.poll() is not None:
                pytest.fail(f"jupyter lab exited with {process.returncode}: see {base / 'lab.log'}")
            try:
                if server.api("/api/status") == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"jupyter lab did not answer within 60 s: see {base / 'lab.log'}")
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


RUN_ALL = """async () => {
  const app = window.jupyterapp;
  const panel = app.shell.currentWidget;
  await panel.context.ready;
  await panel.sessionContext.ready;
  await app.commands.execute("notebook:run-all-cells");
}"""


def open_and_run(page, lab: Lab, notebook: str, text: str) -> tuple[float, float, Any]:
    """Open a notebook, run all its cells, wait for a widget showing `text`; returns the
    seconds to open, the seconds to run, and the widget."""
    start = time.perf_counter()
    page.goto(lab.notebook_url(notebook), timeout=60_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext",
        timeout=60_000,
    )
    opened = time.perf_counter() - start
    page.evaluate(RUN_ALL)
    widget = page.locator(".jp-OutputArea-output .jupyter-widgets", has_text=text).first
    fallback = page.locator(".jp-OutputArea-output .porter-cell").first
    widget.or_(fallback).wait_for(state="visible", timeout=30_000)
    if not widget.is_visible():
        pytest.fail(
            "the output shows porter's HTML fallback, not the widget: %%port must display "
            "porter_ext.ui.widget.show(result.entry) (or a bundle from ui.widget.mimebundle)"
        )
    return opened, time.perf_counter() - start - opened, widget


def test_the_port_cell_shows_the_widget(page, page_log, lab):
    start = time.perf_counter()
    opened, ran, widget = open_and_run(page, lab, NOTEBOOK, "Tensor.sum")

    # the widget, not the HTML fallback, is what the output shows
    output = page.locator(".jp-OutputArea", has=widget)
    assert output.locator(".porter-cell").count() == 0
    assert "porter: 2 findings in 2 array calls" in output.inner_text()
    tabs = output.locator(".lm-TabBar-tabLabel").all_inner_texts()
    assert tabs == ["Calls", "Numerics", "Devices", "Side by side"]
    # the cell's port plan opens the widget, above the tabs
    plan = output.locator(".porter-plan")
    assert plan.is_visible() and "Tensor.sum → xp.sum(x, axis=1)" in plan.inner_text()
    tab_bar = output.locator(".lm-TabBar").first
    assert plan.bounding_box()["y"] < tab_bar.bounding_box()["y"]
    save_screenshot(widget.screenshot(), "widget-plan.png")

    # click the Tensor.sum row: its suggestion and its source line appear
    select = output.locator("select").first
    labels = select.evaluate("s => [...s.options].map(o => o.text)")
    select.select_option(index=next(i for i, t in enumerate(labels) if "Tensor.sum" in t))
    detail = output.locator(".widget-html", has_text="Use instead")
    detail.get_by_text("xp.sum(x, axis=1)").wait_for(timeout=10_000)
    assert "3 | y = x.sum(1)" in detail.inner_text()
    assert page_log.errors == []
    assert all(url.startswith((lab.url, "data:", "blob:")) for url in page_log.requests)

    save_screenshot(page.screenshot(), "widget-lab.png")
    page.evaluate("window.jupyterapp.commands.execute('application:toggle-left-area')")
    page.wait_for_timeout(300)  # the side bar animates closed
    save_screenshot(page.screenshot(), "widget-lab-wide.png", docs_name="widget.png")
    print(
        f"\njupyter lab answered in {lab.started_in:.2f} s; notebook open in {opened:.2f} s; "
        f"run to widget in {ran:.2f} s; total {time.perf_counter() - start:.2f} s"
    )


def test_the_tabs_show_numerics_devices_and_side_by_side(page, page_log, lab):
    _, _, widget = open_and_run(page, lab, TABS_NOTEBOOK, "torch.cuda.synchronize")
    tab = widget.locator(".lm-TabBar-tab")
    # a tab's content is hidden until its tab is picked: waiting for visibility tests both

    tab.filter(has_text="Numerics").click()
    widget.get_by_text("12 mismatched").wait_for(timeout=10_000)
    save_screenshot(widget.screenshot(), "widget-numerics.png")
    tab.filter(has_text="Devices").click()
    widget.get_by_text("default_device_creation").wait_for(timeout=10_000)
    assert widget.get_by_text("(wrong)").is_visible()
    save_screenshot(widget.screenshot(), "widget-devices.png")

    tab.filter(has_text="Side by side").click()
    plot = widget.locator("img")
    plot.wait_for(timeout=10_000)
    assert plot.evaluate("img => img.naturalWidth") > 0  # the PNG decoded
    assert widget.get_by_text("max abs err").first.is_visible()
    save_screenshot(widget.screenshot(), "widget-side-by-side.png", "widget-side-by-side.png")
    widget.locator(".widget-dropdown select").select_option("z")
    widget.get_by_text("copy: not 64-byte aligned").wait_for(timeout=10_000)
    assert widget.locator("img").count() == 0  # no histogram for an output that matched
    assert page_log.errors == []

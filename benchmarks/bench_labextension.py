"""JupyterLab's start with porter-ext, against the same start with porter-ext disabled.

Prints the least disturbed (minimum) time to ``app.restored`` of each, over alternated
rounds in Debian's Chromium, and what porter's activation and its files took inside a
start. Target (issue 12): porter-ext adds < 300 ms to JupyterLab's start.

    python benchmarks/bench_labextension.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.browser.support import lab_server, lab_start  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def startup(rounds: int = 8) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp, lab_server(Path(tmp)) as lab, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM)
        times: dict[bool, list[float]] = {True: [], False: []}
        own: list[dict] = []
        try:
            for _ in range(rounds):
                for enabled in (False, True):
                    started = lab_start(browser, lab, enabled=enabled)
                    times[enabled].append(started["restored"])
                    if enabled:
                        own.append(started)
        finally:
            browser.close()
    with_it, without = min(times[True]), min(times[False])
    print(
        f"JupyterLab start ({rounds} rounds): {without:.0f} ms without porter-ext, "
        f"{with_it:.0f} ms with it: +{with_it - without:.0f} ms (target < 300 ms), "
        f"x{with_it / without:.2f}; porter's activation "
        f"{min(o['activate'] for o in own):.1f} ms, its files {min(o['fetch'] for o in own):.0f} ms"
    )


if __name__ == "__main__":
    startup()

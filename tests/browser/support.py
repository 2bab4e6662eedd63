"""Helpers of the browser tests: the Chromium command line, a request guard, screenshots."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

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

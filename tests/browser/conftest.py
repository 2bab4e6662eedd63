"""Browser tests: Python Playwright driving Debian's Chromium (never `playwright install`).

The whole directory is skipped, with what to install, when Chromium or Playwright is
missing. Screenshots are test artefacts under `test-artifacts/` at the repository root
(gitignored); with ``PORTER_UPDATE_DOCS_IMAGES=1`` the tests also refresh the README's
images under `docs/images/`, so that an ordinary run leaves the tracked files alone.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.browser.support import CHROMIUM, CHROMIUM_ARGS, PageLog

HERE = Path(__file__).resolve().parent


def _missing() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} not found: install Debian's chromium: apt-get install -y chromium"
    if importlib.util.find_spec("playwright") is None:
        return "playwright is not installed: pip install playwright (no browser download needed)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _missing()
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.browser)
            if reason:
                item.add_marker(pytest.mark.skip(reason=reason))


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page_log() -> PageLog:
    return PageLog()


@pytest.fixture
def page(browser: Any, page_log: PageLog) -> Iterator[Any]:
    """A fresh page at 1280 x 900 that records dialogs, requests and page errors."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()

    def on_dialog(dialog: Any) -> None:
        page_log.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.on("request", lambda request: page_log.requests.append(request.url))
    page.on("pageerror", lambda error: page_log.errors.append(str(error)))
    yield page
    context.close()

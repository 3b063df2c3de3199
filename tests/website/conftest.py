"""Fixtures for the site check: the built site served on 127.0.0.1, headless Chromium, and one browser context
per viewport width (shared by every page measured at that width)."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

SITE = Path(__file__).resolve().parents[2] / "_build" / "html"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-quic", "--disable-default-apps",
]
#: The viewport widths the layout checks run at: a desktop window and a phone.
WIDTHS = (1280, 390)
VIEWPORT_HEIGHT = 900


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:  # keep the test output clean
        pass


@pytest.fixture(scope="session")
def site_dir() -> Path:
    if not (SITE / "index.html").exists():
        pytest.fail(f"no built site at {SITE}: run `make book` first", pytrace=False)
    return SITE


@pytest.fixture(scope="session")
def site_url(site_dir: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    from playwright.sync_api import sync_playwright

    executable = shutil.which("chromium") or "/usr/bin/chromium"
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def context_at(browser) -> Iterator[Callable[[int], object]]:
    """``context_at(width)``: one browser context per viewport width, made on first use and shared by every
    page measured at that width (a page is opened and closed in it for each visit)."""
    made: dict[int, object] = {}

    def get(width: int) -> object:
        if width not in made:
            made[width] = browser.new_context(viewport={"width": width, "height": VIEWPORT_HEIGHT},
                                              device_scale_factor=1)
        return made[width]

    yield get
    for context in made.values():
        context.close()

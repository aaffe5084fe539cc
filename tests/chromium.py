"""Debian's Chromium under Playwright, as every browser test in the suite launches it.

No browser is ever downloaded: Playwright drives ``/usr/bin/chromium``, which
``make test`` installs as root.  The flags keep a headless root Chromium from
reaching for the network (this machine has none beyond the package registries).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
]

needs_chromium = pytest.mark.skipif(
    not CHROMIUM.is_file(),
    reason="no /usr/bin/chromium: apt-get install chromium chromium-driver",
)


@contextlib.contextmanager
def launched_chromium(sync_api: Any) -> Iterator[Any]:
    """A Chromium browser (each launch with a fresh temporary profile), closed after."""
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, timeout=120_000
        )
        try:
            yield browser
        finally:
            browser.close()


def screenshot(page: Any, artifacts: Path, name: str) -> None:
    """Save ``page`` whole as ``artifacts/name.png`` and print where, for a person to look at.

    The size check catches a blank capture (a page that never painted).
    """
    artifacts.mkdir(exist_ok=True)
    path = artifacts / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    print(f"screenshot: {path}")
    assert path.stat().st_size > 1000

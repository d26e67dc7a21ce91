"""Headless Chromium (Debian's, which `make test` installs) driven by Playwright, for the report and the UI tests.

The flags keep Chromium from calling out (this machine's network is closed, and a
report must not need one): no background networking, component updates, sync or
QUIC, and a fresh profile per browser.
"""

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from matplotlib.image import imread
from playwright.sync_api import sync_playwright

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]


@contextmanager
def browser_page(width=1300, height=900):
    """A fresh page in a headless Chromium; the browser and its profile are gone afterwards."""
    if not Path(CHROMIUM).exists():
        raise RuntimeError("Chromium is not installed: `make test` installs Debian's chromium package.")
    with tempfile.TemporaryDirectory() as profile, sync_playwright() as playwright:
        context = playwright.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=FLAGS,
            viewport={"width": width, "height": height})
        try:
            yield context.pages[0] if context.pages else context.new_page()
        finally:
            context.close()


def ink(png: bytes | Path) -> float:
    """The share of a screenshot's pixels that are not (near) the background colour of its corner."""
    path = png if isinstance(png, Path) else None
    if path is None:
        with tempfile.NamedTemporaryFile(suffix=".png") as handle:
            handle.write(png)
            handle.flush()
            pixels = imread(handle.name)
    else:
        pixels = imread(path)
    rgb = pixels[..., :3]
    background = rgb[2, 2]
    return float((np.abs(rgb - background).sum(axis=-1) > 0.1).mean())

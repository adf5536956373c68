"""The headless Chromium the browser tests drive through playwright: where it is, and the
flags it runs with on a machine without a network (the background services' requests are
refused there, many at a time)."""
import contextlib
import os
import shutil

import pytest

CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--no-first-run"]


def chromium_path():
    """Chromium's executable ($TENSORLITE_CHROMIUM, else on PATH), or a pytest skip saying
    how to get it."""
    for path in (os.environ.get("TENSORLITE_CHROMIUM"), shutil.which("chromium"),
                 shutil.which("chromium-browser"), shutil.which("google-chrome")):
        if path and os.path.exists(path):
            return path
    pytest.skip("no Chromium on this machine: install Debian's chromium (.ci/run does)")


@contextlib.contextmanager
def offline_page(path, viewport):
    """A headless-Chromium page showing the local file `path`, and the list it fills with
    every console error, page error and request that leaves the file (a self-contained
    report must make none); the browser is closed after the block."""
    executable = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    problems = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS[1:])
        try:
            page = browser.new_page(viewport=viewport)
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.on("request", lambda r: None if r.url.startswith("file:") else
                    problems.append(f"network request {r.url}"))
            page.goto("file://" + str(path))
            yield page, problems
        finally:
            browser.close()

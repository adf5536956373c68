"""The headless Chromium the browser tests drive through playwright: where it is, and the
flags it runs with on a machine without a network (the background services' requests are
refused there, many at a time)."""
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

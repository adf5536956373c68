"""Shared by the TF.js browser tests (test_tfjs_browser.py, test_tfjs_example.py): a static
HTTP server on 127.0.0.1 mapping URL prefixes to folders (TF.js's dist files from
js/node_modules, the models under test, the pages), and headless Chromium driven by
playwright, which refuses every request that is not to that server.

Without Chromium or playwright the tests skip, saying so; without js/node_modules they fail
with the command that installs it.
"""
import contextlib
import functools
import http.server
import threading
import urllib.parse
from pathlib import Path

import pytest

from tests.chromium import CHROMIUM_FLAGS, chromium_path  # noqa: F401 - used by the tests

ROOT = Path(__file__).resolve().parents[1]
NODE_MODULES = ROOT / "js" / "node_modules" / "@tensorflow"
TFJS_ROUTES = {"/tfjs/": NODE_MODULES / "tfjs" / "dist",
               "/tfjs-backend-wasm/": NODE_MODULES / "tfjs-backend-wasm" / "dist"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    routes = {}  # URL prefix -> folder; "/" is the fallback

    def translate_path(self, path):
        path = urllib.parse.unquote(urllib.parse.urlsplit(path).path)
        for prefix in sorted(self.routes, key=len, reverse=True):
            if path.startswith(prefix):
                base = Path(self.routes[prefix]).resolve()
                target = (base / path[len(prefix):]).resolve()
                # nothing outside the mapped folder, whatever the path says
                return str(target) if target.is_relative_to(base) else str(base / "_")
        return str(Path(self.routes["/"]) / "_not_found")

    def log_message(self, *args):  # the tests' output stays quiet
        pass


@contextlib.contextmanager
def serve(routes):
    """A ThreadingHTTPServer on 127.0.0.1 (a free port) serving `routes` ({URL prefix:
    folder}, TF.js's dist folders added); yields its base URL."""
    missing = [str(p) for p in TFJS_ROUTES.values() if not p.is_dir()]
    if missing:
        raise AssertionError(f"TF.js is not installed ({missing[0]}): run `cd js && npm ci` "
                             f"(the committed package-lock.json pins it)")
    handler = type("Handler", (_Handler,), {"routes": {**TFJS_ROUTES, **routes}})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


@contextlib.contextmanager
def browser_page(base_url, viewport=None):
    """A playwright page in headless Chromium; yields (page, problems): `problems` collects
    console errors, uncaught page errors and every refused request to another host."""
    path = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    problems = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=path, args=CHROMIUM_FLAGS)
        try:
            page = browser.new_page(viewport=viewport or {"width": 900, "height": 700})
            page.set_default_timeout(120_000)
            page.on("console", lambda m: problems.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: problems.append(str(e)))
            page.route("**/*", functools.partial(_local_only, base_url, problems))
            yield page, problems
        finally:
            browser.close()


def _local_only(base_url, problems, route):
    url = route.request.url
    if url.startswith(base_url + "/") or url.startswith("data:") or url.startswith("blob:"):
        route.continue_()
    else:
        problems.append(f"refused request to {url}")
        route.abort()

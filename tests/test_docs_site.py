"""The documentation site builds with warnings as errors, and its pages open in a headless
Chromium with no broken internal links.

The build is MkDocs's own (`mkdocs build --strict`: a broken link between pages, a missing
anchor, a page left out of the build or a docstring the API reference cannot render fails
it). The crawl starts at the index of the built site, served by a 127.0.0.1 http.server,
follows every link to another page of the site and checks that each page loads, that
every `#anchor` it is linked with exists on it, that the page makes no request outside
127.0.0.1 (the site works offline) and raises no JavaScript error.
"""
import functools
import http.server
import os
import subprocess
import sys
import threading
import urllib.parse

import pytest
from tests.chromium import chromium_path

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_PAGES = 500   # bounds the crawl; the site has about 50 pages


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    pytest.importorskip("mkdocs", reason="the docs extra: pip install '.[docs]'")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--site-dir", str(out)], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return out


def test_site_builds_strict_with_every_page(site):
    for page in ("index.html", "differences/index.html", "performance/index.html",
                 "api/tf/index.html", "api/keras_layers/index.html"):
        assert (site / page).is_file(), page
    api = (site / "api" / "math" / "index.html").read_text()
    # the generated reference holds the docstrings, and the table of every name
    assert "tf.math.segment_sum" in api and "Every name in" in api



@pytest.fixture
def served(site):
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_pages_open_in_chromium_without_broken_links(served):
    browser_path = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    problems, visited = _crawl(sync_api, browser_path, served)
    assert problems == []
    assert len(visited) >= 30, sorted(visited)   # every guide and API page was reached


def _crawl(sync_api, browser_path, base):
    problems, visited, queue = [], set(), [(base, "(start)")]
    anchors_wanted = []
    with sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=browser_path, args=[
            "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"])
        try:
            page = browser.new_page()
            page.on("pageerror", lambda e: problems.append(f"{page.url}: {e}"))
            page.on("request", lambda r: None if r.url.startswith(base) or
                    r.url.startswith("data:") else problems.append(
                        f"{page.url}: a request outside the site: {r.url}"))
            ids = {}
            while queue and len(visited) < MAX_PAGES:
                url, source = queue.pop()
                if url in visited:
                    continue
                visited.add(url)
                response = page.goto(url)
                if response is None or response.status != 200:
                    problems.append(f"{url} (linked from {source}): "
                                    f"{response.status if response else 'no response'}")
                    continue
                ids[url] = set(page.eval_on_selector_all("[id]", "els => els.map(e => e.id)"))
                for href in page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)"):
                    target, _, fragment = href.partition("#")
                    if not target.startswith(base):
                        continue   # links out of the site are not followed (no network)
                    if fragment:
                        anchors_wanted.append((target, urllib.parse.unquote(fragment), url))
                    if target not in visited:
                        queue.append((target, url))
        finally:
            browser.close()
    for target, fragment, source in anchors_wanted:
        if target in ids and fragment not in ids[target]:
            problems.append(f"{source} links to {target}#{fragment}, which has no such id")
    return problems, visited


def test_the_crawl_finds_a_broken_link_and_a_missing_anchor(tmp_path):
    browser_path = chromium_path()
    sync_api = pytest.importorskip("playwright.sync_api")
    (tmp_path / "index.html").write_text(
        '<a href="a.html#here">ok</a> <a href="a.html#gone">no anchor</a> '
        '<a href="missing.html">no page</a>')
    (tmp_path / "a.html").write_text('<h2 id="here">here</h2>')
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(tmp_path))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/"
        problems, visited = _crawl(sync_api, browser_path, base)
    finally:
        server.shutdown()
        server.server_close()
    assert len(problems) == 2, problems
    assert "missing.html" in problems[0] and "404" in problems[0]
    assert "a.html#gone" in problems[1]
    assert base + "a.html" in visited

"""examples/tfjs_digits end to end in headless Chromium: the script trains the README's
digits CNN and converts it to TF.js's Layers format; the page (TF.js from js/node_modules,
served on 127.0.0.1) gets digits drawn with the mouse, predicts what tensorlite predicts for
the same 8x8 pixels (read back from the page), fine-tunes on the digits labelled there with
the loss it shows falling, and saves a model that tensorlite loads and predicts with."""
import json
import os
import subprocess
import sys
import urllib.request

import numpy as np
import pytest

import tensorlite as tf
import tensorlite.js as tfjs

sys.path.insert(0, os.path.dirname(__file__))
from tfjs_browser_helpers import ROOT, browser_page, serve  # noqa: E402

SCRIPT = ROOT / "examples" / "tfjs_digits" / "train_and_convert.py"
PAGE = "/examples/tfjs_digits/index.html"
EPOCHS = 8  # held-out accuracy about 0.9: predictions with margins, in ~20 s on 2 cores


def _env():
    return {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("digits") / "web_model"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--epochs", str(EPOCHS),
                           "--out", str(out)], capture_output=True, text=True, timeout=600,
                          env=_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "held-out accuracy" in proc.stdout
    return out


# Strokes in the 160x160 canvas's pixels, one list of points per pen-down.
STROKES = {
    1: [[(80, 18), (80, 142)]],
    0: [[(80 + 34 * np.sin(t), 80 - 56 * np.cos(t)) for t in np.linspace(0, 2 * np.pi, 40)]],
    7: [[(42, 24), (118, 24), (66, 142)]],
}


def _draw(page, strokes):
    page.click("#clear")
    box = page.locator("#pad").bounding_box()
    for stroke in strokes:
        x, y = stroke[0]
        page.mouse.move(box["x"] + x, box["y"] + y)
        page.mouse.down()
        for x, y in stroke[1:]:
            page.mouse.move(box["x"] + x, box["y"] + y, steps=8)
        page.mouse.up()


def _page_state(page):
    return page.evaluate("""() => ({
        input: Array.from(window.digitsApp.lastInput),
        shown: Number(document.querySelector('#prediction').dataset.class),
        bars: Array.from(document.querySelectorAll('#bars .bar')).map(
            (b) => Number(b.dataset.prob))})""")


@pytest.mark.slow  # trains the CNN for EPOCHS epochs first; .ci/run runs it
def test_draw_predict_fine_tune_and_save(trained, tmp_path):
    model = tf.keras.models.load_model(str(trained / "digits_cnn.keras"))
    with serve({"/": str(ROOT), "/examples/tfjs_digits/web_model/": str(trained)}) as base, \
            browser_page(base) as (page, problems):
        page.goto(base + PAGE)
        page.wait_for_function("window.digitsApp && window.digitsApp.ready === true")
        inputs = []
        for digit, strokes in STROKES.items():
            _draw(page, strokes)
            state = _page_state(page)
            x = np.asarray(state["input"], np.float32).reshape(1, 8, 8, 1)
            assert 0.05 < x.mean() < 0.6 and x.max() > 0.3  # a digit, not a blank or a blot
            want = model.predict(x, verbose=0)[0]
            assert state["shown"] == int(want.argmax()), (digit, state["bars"], want)
            np.testing.assert_allclose(state["bars"], want, rtol=1e-4, atol=1e-5)
            page.select_option("#label", str(digit))
            page.click("#add")
            inputs.append(x[0])
        assert page.inner_text("#examples-count") == str(len(STROKES))

        page.click("#finetune")
        page.wait_for_function("document.querySelector('#loss').dataset.done === 'true'")
        losses = json.loads(page.get_attribute("#loss", "data-losses"))
        assert len(losses) == 30 and all(np.isfinite(losses))
        assert np.mean(losses[-5:]) < 0.5 * np.mean(losses[:5]), losses
        assert page.inner_text("#loss").startswith(f"loss: {losses[-1]:.4f}")

        downloads = []
        page.on("download", lambda d: downloads.append(d))
        page.click("#save")
        for _ in range(100):  # bounded: both files of model.save('downloads://...')
            if len(downloads) == 2:
                break
            page.wait_for_timeout(100)
        saved = tmp_path / "finetuned"
        saved.mkdir()
        for download in downloads:
            download.save_as(str(saved / download.suggested_filename))
        tuned = page.evaluate("xs => window.digitsApp.probabilitiesOf(xs)",
                              [x.ravel().tolist() for x in inputs])
    assert sorted(os.listdir(saved)) == ["digits-finetuned.json",
                                         "digits-finetuned.weights.bin"]
    reloaded = tfjs.converters.load_keras_model(str(saved / "digits-finetuned.json"))
    np.testing.assert_allclose(reloaded.predict(np.stack(inputs), verbose=0), tuned,
                               rtol=1e-4, atol=1e-5)
    assert problems == []


def test_serve_mode_serves_the_page_and_tfjs():
    """`--serve` (here without training) serves the repository on 127.0.0.1 and prints the
    page's address; the page and TF.js are there."""
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--serve", "--no-train",
                             "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=_env())
    try:
        lines = [proc.stdout.readline()]
        while not lines[-1].startswith("serving") and lines[-1] and len(lines) < 5:
            lines.append(proc.stdout.readline())  # a warning may come first
        line = lines[-1]
        assert line.startswith("serving http://127.0.0.1:"), "".join(lines)
        url = line.split()[1]
        with urllib.request.urlopen(url, timeout=30) as response:
            assert b"<canvas id=\"pad\"" in response.read()
        tfjs_url = url.rsplit("/examples/", 1)[0] + \
            "/js/node_modules/@tensorflow/tfjs/dist/tf.min.js"
        with urllib.request.urlopen(tfjs_url, timeout=30) as response:
            assert response.status == 200 and len(response.read()) > 100_000
    finally:
        proc.terminate()
        proc.wait(timeout=30)

"""tensorlite's TF.js files in a real browser: headless Chromium (playwright) opens a page
served on 127.0.0.1 that loads TensorFlow.js from js/node_modules (tf.min.js and the wasm
backend), loads our Graph and Layers models over HTTP, and predicts what tensorlite predicts,
with the `cpu` and `wasm` backends, and `webgl` where the browser provides it (skipped,
with the browser's reason, where it does not)."""
import os
import shutil
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.js import graph_model
from tensorlite.js.converters import save_keras_model

sys.path.insert(0, os.path.dirname(__file__))
from lite_helpers import fitted_cifar_cnn, images  # noqa: E402
from tfjs_models import batch_norm_dropout, lstm_classifier, mlp, mobilenet_v2  # noqa: E402
from tfjs_browser_helpers import browser_page, serve  # noqa: E402

PAGE_DIR = os.path.join(os.path.dirname(__file__), "js")
# webgl computes in float32 textures through the GPU's (or SwiftShader's) arithmetic, whose
# exp and accumulation order may differ more from NumPy's than the CPU's.
RTOL = {"cpu": 1e-5, "wasm": 1e-5, "webgl": 1e-4}


def _models():
    """(name, model, input, the tf.function a Graph model is made from or None for the
    model's SavedModel) of issue 34's models."""
    rng = np.random.default_rng(0)
    lstm = lstm_classifier()
    classify = tf.function(lambda inputs: lstm(inputs, training=False),
                           input_signature=[tf.TensorSpec([None, 10], tf.int32)])
    return [("mlp", mlp(7), rng.normal(size=(4, 8)).astype("float32"), None),
            ("cifar_cnn", fitted_cifar_cnn(), images(2, seed=3), None),
            # tensorlite's SavedModel of an LSTM fixes the batch size: the Graph model is
            # converted from a tf.function
            ("lstm", lstm, rng.integers(0, 50, size=(3, 10)).astype("int32"), classify),
            ("mobilenet_v2", mobilenet_v2(64),
             rng.uniform(-1, 1, size=(1, 64, 64, 3)).astype("float32"), None),
            ("batch_norm_dropout", batch_norm_dropout(conv=True),
             rng.normal(size=(2, 6, 6, 2)).astype("float32"), None)]


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, {kind: {name: (model URL, input, tensorlite's prediction)}}), the models
    written once in both formats for all backends."""
    root = tmp_path_factory.mktemp("served")
    shutil.copy(os.path.join(PAGE_DIR, "browser_page.html"), root / "index.html")
    cases = {"graph": {}, "layers": {}}
    for name, model, x, function in _models():
        want = model(x, training=False).numpy()
        if function is None:
            tf.saved_model.save(model, str(root / f"{name}_saved"))
            graph_model.convert_saved_model(str(root / f"{name}_saved"),
                                            str(root / f"{name}_graph"))
        else:
            graph_model.convert_function(function, str(root / f"{name}_graph"))
        cases["graph"][name] = (f"/{name}_graph/model.json", x, want)
        save_keras_model(model, str(root / f"{name}_layers"))
        cases["layers"][name] = (f"/{name}_layers/model.json", x, want)
    with serve({"/": str(root)}) as base:
        yield base, cases


@pytest.mark.parametrize("kind", ["graph", "layers"])
@pytest.mark.parametrize("backend", [
    "cpu",  # the other backends run under `-m slow` (.ci/run): a browser start and ten models
    pytest.param("wasm", marks=pytest.mark.slow), pytest.param("webgl", marks=pytest.mark.slow)])
def test_models_predict_in_chromium(served, kind, backend):
    base, cases = served
    with browser_page(base) as (page, problems):
        page.goto(base + "/index.html")
        page.wait_for_function("window.pageReady === true")
        for name, (url, x, want) in cases[kind].items():
            result = page.evaluate("args => runModel(args)", {
                "kind": kind, "url": base + url, "backend": backend,
                "inputs": {"inputs": {"shape": list(x.shape), "dtype": str(x.dtype),
                                      "values": x.ravel().tolist()}}})
            if "skipped" in result:
                assert backend == "webgl", result  # cpu and wasm must run everywhere
                pytest.skip(f"this Chromium provides no {backend} backend: "
                            f"{result['skipped']}")
            assert result["backend"] == backend
            (out,) = result["outputs"].values()
            got = np.asarray(out["values"], np.float32).reshape(out["shape"])
            np.testing.assert_allclose(got, want, rtol=RTOL[backend],
                                       atol=RTOL[backend] * np.abs(want).max(), err_msg=name)
            assert (got.argmax(-1) == want.argmax(-1)).all(), name
    assert problems == []

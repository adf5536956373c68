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
from tfjs_browser_helpers import browser_page, serve  # noqa: E402

PAGE_DIR = os.path.join(os.path.dirname(__file__), "js")
# webgl computes in float32 textures through the GPU's (or SwiftShader's) arithmetic, whose
# exp and accumulation order may differ more from NumPy's than the CPU's.
RTOL = {"cpu": 1e-5, "wasm": 1e-5, "webgl": 1e-4}


def _mlp():
    tf.random.set_seed(7)
    return tf.keras.Sequential([
        tf.keras.layers.Dense(16, activation="relu", input_shape=(8,),
                              bias_initializer="random_normal"),
        tf.keras.layers.Dense(3, activation="softmax", bias_initializer="random_normal")])


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    """(base URL, {kind: {name: (model URL, input, tensorlite's prediction)}}), the models
    written once in both formats for all backends."""
    root = tmp_path_factory.mktemp("served")
    shutil.copy(os.path.join(PAGE_DIR, "browser_page.html"), root / "index.html")
    cases = {"graph": {}, "layers": {}}
    for name, model, x in (("mlp", _mlp(),
                            np.random.default_rng(0).normal(size=(4, 8)).astype("float32")),
                           ("cifar_cnn", fitted_cifar_cnn(), images(2, seed=3))):
        want = model(x, training=False).numpy()
        tf.saved_model.save(model, str(root / f"{name}_saved"))
        graph_model.convert_saved_model(str(root / f"{name}_saved"), str(root / f"{name}_graph"))
        cases["graph"][name] = (f"/{name}_graph/model.json", x, want)
        save_keras_model(model, str(root / f"{name}_layers"))
        cases["layers"][name] = (f"/{name}_layers/model.json", x, want)
    with serve({"/": str(root)}) as base:
        yield base, cases


@pytest.mark.parametrize("kind", ["graph", "layers"])
@pytest.mark.parametrize("backend", ["cpu", "wasm", "webgl"])
def test_models_predict_in_chromium(served, kind, backend):
    base, cases = served
    with browser_page(base) as (page, problems):
        page.goto(base + "/index.html")
        page.wait_for_function("window.pageReady === true")
        for name, (url, x, want) in cases[kind].items():
            result = page.evaluate("args => runModel(args)", {
                "kind": kind, "url": base + url, "backend": backend,
                "inputs": {"inputs": {"shape": list(x.shape), "values": x.ravel().tolist()}}})
            if "skipped" in result:
                assert backend == "webgl", result  # cpu and wasm must run everywhere
                pytest.skip(f"this Chromium provides no {backend} backend: "
                            f"{result['skipped']}")
            assert result["backend"] == backend
            (out,) = result["outputs"].values()
            got = np.asarray(out["values"], np.float32).reshape(out["shape"])
            np.testing.assert_allclose(got, want, rtol=RTOL[backend],
                                       atol=RTOL[backend] * np.abs(want).max(), err_msg=name)
            assert (got.argmax(1) == want.argmax(1)).all(), name
    assert problems == []

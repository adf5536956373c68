"""SavedModels written by real TensorFlow load in tensorlite: Keras 3's exported MLP and CNN
(BatchNormalization included) and a tf.Module saved with tf.saved_model.save give TF's
outputs; gradients through a loaded function equal TensorFlow's (so fine-tuning works); an op
tensorlite lacks is an error naming op and node; `show` reports TF's signatures."""
import re
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.interop.shared_data import X, images

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("savedmodels")
    facts = run_tf("savedmodel_write", directory, legacy_keras=False)
    return directory, facts, np.load(directory / "savedmodel_expected.npz")


def test_keras_exported_mlp_and_cnn_give_tensorflows_outputs(written):
    directory, _, expected = written
    mlp = tf.saved_model.load(str(directory / "mlp"))
    np.testing.assert_allclose(mlp.serve(X).numpy(), expected["mlp_pred"], atol=1e-6)
    cnn = tf.saved_model.load(str(directory / "cnn"))
    out = cnn.signatures["serving_default"](image=images())
    assert list(out) == ["output_0"]
    np.testing.assert_allclose(out["output_0"].numpy(), expected["cnn_pred"], atol=1e-5)
    assert [v.shape.as_list() for v in cnn.trainable_variables][:2] == [[3, 3, 1, 4], [4]]


def test_module_signature_and_gradients_match_tensorflow(written):
    directory, _, expected = written
    scorer = tf.saved_model.load(str(directory / "scorer"))
    np.testing.assert_allclose(scorer(X)["score"].numpy(), expected["scorer"], atol=1e-6)
    np.testing.assert_allclose(
        scorer.signatures["serving_default"](x=X)["score"].numpy(), expected["scorer"],
        atol=1e-6)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(scorer(X)["score"] ** 2)
    grad_w, grad_b = tape.gradient(loss, [scorer.w, scorer.b])
    np.testing.assert_allclose(grad_w.numpy(), expected["grad_w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_b.numpy(), expected["grad_b"], rtol=1e-5, atol=1e-6)
    opt = tf.keras.optimizers.SGD(0.1)  # fine-tuning the restored variables
    for _ in range(3):
        with tf.GradientTape() as tape:
            step_loss = tf.reduce_sum(scorer(X)["score"] ** 2)
        opt.apply_gradients(zip(tape.gradient(step_loss, [scorer.w, scorer.b]),
                                [scorer.w, scorer.b]))
    assert float(tf.reduce_sum(scorer(X)["score"] ** 2)) < float(loss)


def test_unknown_op_is_an_error_naming_op_and_node(written):
    directory, _, _ = written
    model = tf.saved_model.load(str(directory / "unknown"))
    with pytest.raises(tf.errors.UnimplementedError, match=r"op BesselI1e \(node '[^']*Bessel"):
        model(np.ones(3, np.float32))


def test_show_lists_tensorflows_signatures(written):
    directory, facts, _ = written
    out = subprocess.run([sys.executable, "-m", "tensorlite.saved_model", "show", "--dir",
                          str(directory / "cnn"), "--all"], capture_output=True, text=True,
                         check=True).stdout
    assert "MetaGraphDef with tag-set: 'serve'" in out
    (name, (dtype, shape)), = facts["cnn_inputs"].items()
    assert dtype == "float32" and shape == [None, 8, 8, 1]
    assert re.search(rf"inputs\['{name}'\] tensor_info:\s+dtype: DT_FLOAT\s+"
                     rf"shape: \(-1, 8, 8, 1\)", out)
    (name, (_, shape)), = facts["cnn_outputs"].items()
    assert re.search(rf"outputs\['{name}'\] tensor_info:\s+dtype: DT_FLOAT\s+"
                     rf"shape: \(-1, 5\)", out)


# -- tensorlite writes, TensorFlow reads -------------------------------------------------------
class TwoFunctions(tf.Module):
    """A tf.Module with two tf.functions (one of them __call__, returning a dict)."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(5)
        self.w = tf.Variable(rng.normal(size=(3, 4)).astype(np.float32), name="w")
        self.b = tf.Variable(rng.normal(size=(4,)).astype(np.float32), name="b")
        self.scale = tf.Variable(np.float32(1.5), name="scale", trainable=False)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w) + self.b)
        return {"score": tf.reduce_sum(h, axis=1) * self.scale, "probs": tf.nn.softmax(h)}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def features(self, x):
        return tf.concat([tf.tanh(x), tf.reshape(tf.reduce_mean(x, axis=1), [-1, 1])], 1)


@pytest.fixture(scope="module")
def tensorlite_written(tmp_path_factory):
    from tests.lite_helpers import fitted_cifar_cnn, mlp as lite_mlp, template_images
    directory = tmp_path_factory.mktemp("tl_savedmodels")
    tf.random.set_seed(3)
    mlp = lite_mlp()
    mlp.compile("adam", "mse")
    cnn = fitted_cifar_cnn()
    module = TwoFunctions()
    x8 = np.random.default_rng(1).normal(size=(5, 8)).astype(np.float32)
    img = template_images(4, 7)[0]
    mlp.export(str(directory / "mlp"))
    cnn.save(str(directory / "cnn"))  # tf.keras 2's SavedModel directory
    tf.saved_model.save(module, str(directory / "module"), signatures=module.__call__)
    np.savez(directory / "inputs.npz", x8=x8, img=img, X=X)
    manifest = {
        "mlp": {"functions": {"serve": ["x8"]}, "signatures": {"serving_default":
                                                              {"inputs": "x8"}}},
        "cnn": {"functions": {"serve": ["img"]}, "signatures": {"serving_default":
                                                               {"inputs": "img"}}},
        "module": {"functions": {"__call__": ["X"], "features": ["X"]},
                   "signatures": {"serving_default": {"x": "X"}},
                   "variables": ["w", "b", "scale"]}}
    (directory / "manifest.json").write_text(__import__("json").dumps(manifest))
    facts = run_tf("savedmodel_read", directory, legacy_keras=False)
    expected = {"mlp": mlp.predict(x8, verbose=0), "cnn": cnn.predict(img, verbose=0),
                "call": module(X), "features": module.features(X).numpy(),
                "w": module.w.numpy(), "b": module.b.numpy(), "scale": module.scale.numpy()}
    return directory, facts, np.load(directory / "tf_read.npz"), expected


def test_tensorflow_runs_tensorlite_keras_exports(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for name in ("mlp", "cnn"):
        np.testing.assert_allclose(got[f"{name}.serve"], expected[name], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[f"{name}.sig.serving_default.output_0"], expected[name],
                                   rtol=1e-5, atol=1e-6)
    assert expected["cnn"].shape == (4, 10)


def test_tensorflow_runs_tensorlite_module_functions_and_variables(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for key in ("score", "probs"):
        want = expected["call"][key].numpy()
        np.testing.assert_allclose(got[f"module.__call__.{key}"], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[f"module.sig.serving_default.{key}"], want, rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_allclose(got["module.features"], expected["features"], rtol=1e-5,
                               atol=1e-6)
    for name in ("w", "b", "scale"):
        np.testing.assert_array_equal(got[f"module.var.{name}"], expected[name])


def test_tensorflow_inspects_tensorlite_signatures(tensorlite_written):
    _, facts, _, _ = tensorlite_written
    cnn = facts["cnn"]["serving_default"]
    assert cnn["method_name"] == "tensorflow/serving/predict"
    (name, dtype, shape), = cnn["inputs"].values()
    assert dtype == 1 and shape == [-1, 32, 32, 3] and name.endswith(":0")  # DT_FLOAT
    assert list(cnn["outputs"]) == ["output_0"] and cnn["outputs"]["output_0"][1:] == [1, [-1, 10]]
    module = facts["module"]["serving_default"]
    assert module["inputs"]["x"][1:] == [1, [-1, 3]]
    assert sorted(module["outputs"]) == ["probs", "score"]
    assert module["outputs"]["score"][2] == [-1] and module["outputs"]["probs"][2] == [-1, 4]

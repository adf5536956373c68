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

"""`tf.train.Checkpoint(model=...)` between tensorlite and real TensorFlow in both Keras
modes: TF 2.16+'s default Keras 3 (object graph `model/_operations/1/_kernel/...`,
`model/_functional/_operations/...` for a Sequential) and tf.keras 2
(`TF_USE_LEGACY_KERAS=1`, `model/layer_with_weights-0/kernel/...`). Checkpoints either
writes restore here, with Adam's state (training continues exactly where TensorFlow's
did); one checkpoint tensorlite writes restores in both. The models: a functional MLP, a
Sequential (Embedding, Conv1D, BatchNormalization), a subclassed model, a two-headed CNN and
a Transformer encoder block (MultiHeadAttention, LayerNormalization, residual branches)."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import TF_SIDE, run_tf
from tests.interop.keras3_models import (SEQUENCES, TOKENS, attention_block, functional_mlp,
                                         sequential_text, subclassed)
from tests.interop.shared_data import X, Y, images, keras_models

pytestmark = pytest.mark.interop
SIDE = TF_SIDE.with_name("tf_keras3_side.py")
MODES = {"keras3": False, "tf_keras2": True}  # mode -> TF_USE_LEGACY_KERAS


def models():
    return {"functional": functional_mlp(tf.keras), "sequential": sequential_text(tf.keras),
            "subclassed": subclassed(tf.keras), "cnn": keras_models(tf.keras)[1],
            "attention": attention_block(tf.keras)}


NAMES = ["functional", "sequential", "subclassed", "cnn", "attention"]


def inputs(name):
    return {"sequential": TOKENS, "cnn": images(), "attention": SEQUENCES}.get(name, X)


@pytest.fixture(scope="module", params=sorted(MODES))
def tf_written(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"tf_written_{request.param}")
    facts = run_tf("ckpt_write", directory, legacy_keras=MODES[request.param], script=SIDE)
    return request.param, directory, facts, np.load(directory / "expected.npz")


def test_the_tf_side_wrote_the_layout_of_its_keras(tf_written):
    mode, _, facts, _ = tf_written
    kernel = "model/_operations/1/_kernel/.ATTRIBUTES/VARIABLE_VALUE" if mode == "keras3" \
        else "model/layer_with_weights-0/kernel/.ATTRIBUTES/VARIABLE_VALUE"
    assert kernel in facts["functional"]
    assert ("model/_functional/_operations/1/_embeddings/.ATTRIBUTES/VARIABLE_VALUE"
            in facts["sequential"]) == (mode == "keras3")


@pytest.mark.parametrize("name", NAMES)
def test_tf_written_checkpoint_restores_every_value_here(tf_written, name):
    _, directory, _, expected = tf_written
    model = models()[name]
    if name == "functional":
        model.optimizer.build(model.trainable_variables)
    tf.train.Checkpoint(model=model).read(str(directory / name / "ckpt")).assert_consumed()
    np.testing.assert_allclose(model(inputs(name), training=False).numpy(),
                               expected[f"{name}_pred"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_keras3_weights_h5_loads_here(tf_written, name):
    mode, directory, _, expected = tf_written
    if mode != "keras3":
        pytest.skip("tf.keras 2 writes no .weights.h5 (a Keras 3 format)")
    model = models()[name]
    model.load_weights(str(directory / f"{name}.weights.h5"))
    np.testing.assert_allclose(model(inputs(name), training=False).numpy(),
                               expected[f"{name}_pred"], rtol=1e-5, atol=1e-6)


def test_adam_state_from_tf_continues_training_exactly(tf_written):
    _, directory, _, expected = tf_written
    model = functional_mlp(tf.keras)
    status = tf.train.Checkpoint(model=model).read(str(directory / "functional" / "ckpt"))
    model.train_on_batch(X, Y)  # the slots are made, then restored, at the first step
    status.assert_consumed()
    assert int(model.optimizer.iterations.numpy()) == int(expected["functional_iterations"]) + 1
    np.testing.assert_allclose(model.layers[1].kernel.numpy(),
                               expected["functional_next_kernel"], rtol=1e-4, atol=1e-6)


def test_a_mismatched_architecture_is_an_error_not_a_silent_partial_restore(tf_written):
    _, directory, _, _ = tf_written
    model = functional_mlp(tf.keras)
    model.build((None, 3))
    with pytest.raises((AssertionError, tf.errors.InvalidArgumentError,
                        tf.errors.NotFoundError),
                       match="Unresolved checkpoint values|has shape|none of its"):
        tf.train.Checkpoint(model=model).read(
            str(directory / "sequential" / "ckpt")).assert_consumed()


def test_nothing_matching_is_an_error_not_a_silent_non_restore(tf_written):
    """A built model whose layout shares nothing with the checkpoint's: TensorFlow would
    restore nothing (and warn at exit); here it is an error naming both sides."""
    _, directory, _, _ = tf_written
    model = functional_mlp(tf.keras)
    model.build((None, 3))
    with pytest.raises(tf.errors.NotFoundError, match="none of its 4 values matched"):
        tf.train.Checkpoint(model=model).read(str(directory / "subclassed" / "ckpt"))


@pytest.fixture(scope="module")
def tl_written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tl_written")
    tf.keras.utils.set_random_seed(11)
    out = {}
    built = models()
    built["functional"].fit(X, Y, epochs=2, batch_size=4, verbose=0)
    for name, model in built.items():
        tf.train.Checkpoint(model=model).write(str(directory / name / "ckpt"))
        model.save_weights(str(directory / f"{name}.weights.h5"))
        out[f"{name}_pred"] = model(inputs(name), training=False).numpy()
    mlp = built["functional"]
    out["functional_iterations"] = int(mlp.optimizer.iterations.numpy())
    mlp.train_on_batch(X, Y)
    out["functional_next_kernel"] = mlp.layers[1].kernel.numpy()
    return directory, out


@pytest.mark.parametrize("mode", sorted(MODES))
def test_both_kerases_restore_one_tensorlite_checkpoint(tl_written, mode):
    directory, ours = tl_written
    facts = run_tf("ckpt_read", directory, legacy_keras=MODES[mode], script=SIDE)
    got = np.load(directory / "tf_read.npz")
    for name in NAMES:
        assert facts[f"{name}_consumed"] == "yes", (name, facts[f"{name}_consumed"])
        np.testing.assert_allclose(got[f"{name}_pred"], ours[f"{name}_pred"],
                                   rtol=1e-5, atol=1e-6)
        if mode == "keras3":  # and our .weights.h5
            np.testing.assert_allclose(got[f"{name}_h5_pred"], ours[f"{name}_pred"],
                                       rtol=1e-5, atol=1e-6)
    assert int(got["functional_iterations"]) == ours["functional_iterations"]
    np.testing.assert_allclose(got["functional_next_kernel"], ours["functional_next_kernel"],
                               rtol=1e-4, atol=1e-6)

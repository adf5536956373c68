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
from tests.interop.keras3_models import (PAIR, SEQUENCES, TOKENS, attention_block,
                                         functional_mlp, sequential_text, subclassed,
                                         two_inputs)
from tests.interop.shared_data import X, Y, images, keras_models

pytestmark = pytest.mark.interop
SIDE = TF_SIDE.with_name("tf_keras3_side.py")
MODES = {"keras3": False, "tf_keras2": True}  # mode -> TF_USE_LEGACY_KERAS


def models():
    return {"functional": functional_mlp(tf.keras), "sequential": sequential_text(tf.keras),
            "subclassed": subclassed(tf.keras), "cnn": keras_models(tf.keras)[1],
            "attention": attention_block(tf.keras), "two_inputs": two_inputs(tf.keras)}


NAMES = ["functional", "sequential", "subclassed", "cnn", "attention", "two_inputs"]


def inputs(name):
    return {"sequential": TOKENS, "cnn": images(), "attention": SEQUENCES,
            "two_inputs": PAIR}.get(name, X)


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
def test_keras_weights_files_load_here(tf_written, name):
    # Keras 3's .weights.h5, or tf.keras 2's HDF5 weights (it has no .weights.h5)
    mode, directory, _, expected = tf_written
    model = models()[name]
    model.load_weights(str(directory / (f"{name}.weights.h5" if mode == "keras3" else
                                        f"{name}.h5")))
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


OPTIMIZERS = {"sgd": lambda: tf.keras.optimizers.SGD(0.1, momentum=0.9),
              "rmsprop": lambda: tf.keras.optimizers.RMSprop(0.01, momentum=0.5,
                                                             centered=True),
              "adagrad": lambda: tf.keras.optimizers.Adagrad(0.1)}


def slots(optimizer):
    """tf_keras3_side._slots here: the per-variable state arrays, ordered by value."""
    arrays = [v.numpy() for v in optimizer.weights if v.shape.rank >= 1]
    return sorted(arrays, key=lambda a: (a.shape, float(np.abs(a).sum())))


def compiled(make):
    model = functional_mlp(tf.keras)
    model.compile(optimizer=make(), loss="mse")
    model.optimizer.build(model.trainable_variables)
    return model


@pytest.mark.parametrize("mode", sorted(MODES))
def test_optimizer_slots_both_ways(tmp_path, mode):
    """SGD's momentums, RMSprop's velocities/momentums/average gradients and Adagrad's
    accumulators, by the per-slot lists both Kerases track: TensorFlow's restore here, and
    ours restore in TensorFlow (assert_consumed on both sides)."""
    run_tf("opt_write", tmp_path, legacy_keras=MODES[mode], script=SIDE)
    expected = np.load(tmp_path / "expected_opt.npz")
    ours = {}
    for name, make in OPTIMIZERS.items():
        model = compiled(make)
        tf.train.Checkpoint(model=model).read(
            str(tmp_path / "opt" / name / "ckpt")).assert_consumed()
        got = slots(model.optimizer)
        assert len(got) == len([k for k in expected.files if k.startswith(name + "_")])
        for i, a in enumerate(got):
            np.testing.assert_allclose(a, expected[f"{name}_{i}"], rtol=1e-6)
        model.fit(X, Y, epochs=1, batch_size=4, verbose=0)  # new values to write back
        tf.train.Checkpoint(model=model).write(str(tmp_path / "opt" / name / "ckpt"))
        ours[name] = slots(model.optimizer)
    run_tf("opt_read", tmp_path, legacy_keras=MODES[mode], script=SIDE)
    back = np.load(tmp_path / "tf_read_opt.npz")
    for name, arrays in ours.items():
        for i, a in enumerate(arrays):
            np.testing.assert_allclose(back[f"{name}_{i}"], a, rtol=1e-6)

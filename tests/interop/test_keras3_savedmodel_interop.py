"""SavedModels between tensorlite and real TensorFlow 2.21 in both Keras modes (Keras 3, the
default since TF 2.16, and tf.keras 2 under TF_USE_LEGACY_KERAS=1), as users call them:
a one-input signature called positionally (`loaded.signatures["serving_default"](x)`), a
Keras model saved with tf.saved_model.save called as `loaded(x)` (what hub.load(d)(x) and
hub.KerasLayer do), functions with None beyond the batch dimension (`[None, None]` strings,
`[None, None, 3]` floats) and the export pattern of three Core API tutorials."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite import hub
from tests.interop.conftest import TF_SIDE, run_tf
from tests.interop.core_api_tutorials import TUTORIALS
from tests.interop.keras3_models import (VIDEO, functional_mlp, sequence_model,
                                         signature_modules)
from tests.interop.shared_data import X

pytestmark = pytest.mark.interop
SIDE = TF_SIDE.with_name("tf_keras3_side.py")
MODES = {"keras3": False, "tf_keras2": True}  # mode -> TF_USE_LEGACY_KERAS


def modules():
    return signature_modules(tf, X)


def first(value):
    return np.asarray(tf.nest.flatten(value)[0])


@pytest.fixture(scope="module", params=sorted(MODES))
def tf_written(request, tmp_path_factory):
    directory = tmp_path_factory.mktemp(f"tf_sm_{request.param}")
    run_tf("sm_write", directory, legacy_keras=MODES[request.param], script=SIDE)
    return request.param, directory, np.load(directory / "expected_sm.npz")


@pytest.mark.parametrize("name", ["one_input", "strings", "frames"])
def test_tf_signature_called_positionally_here(tf_written, name):
    _, directory, expected = tf_written
    x = modules()[name][1]
    loaded = tf.saved_model.load(str(directory / name))
    got = loaded.signatures["serving_default"](tf.constant(x))
    np.testing.assert_allclose(first(got), expected[name], rtol=1e-6)
    np.testing.assert_allclose(first(loaded(x)), expected[name], rtol=1e-6)


def test_more_positional_arguments_than_inputs_is_a_type_error(tf_written):
    _, directory, _ = tf_written
    loaded = tf.saved_model.load(str(directory / "one_input"))
    with pytest.raises(TypeError, match="positional"):
        loaded.signatures["serving_default"](tf.constant(X), tf.constant(X))


def test_tf_strings_of_other_lengths_here(tf_written):
    _, directory, _ = tf_written
    loaded = tf.saved_model.load(str(directory / "strings"))
    got = loaded(tf.constant([[b"a", b"bb", b"ccc", b"dddd", b""]]))
    np.testing.assert_array_equal(got.numpy(), [10])


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_tf_core_api_tutorial_exports_run_here(tf_written, name):
    _, directory, expected = tf_written
    _, x = TUTORIALS[name](tf)
    got = tf.saved_model.load(str(directory / f"tutorial_{name}"))(x)
    np.testing.assert_allclose(got.numpy(), expected[f"tutorial_{name}"], rtol=1e-5, atol=1e-5)


def test_tf_saved_sequence_model_any_length_here(tf_written):
    """Keras's Input((None, 3)) saved by TensorFlow: one signature for every length."""
    _, directory, expected = tf_written
    loaded = tf.saved_model.load(str(directory / "keras_sequence"))
    for n in (5, 2):
        got = loaded.signatures["serving_default"](tf.constant(VIDEO[:, :n]))
        np.testing.assert_allclose(first(got), expected[f"keras_sequence_{n}"], rtol=1e-5,
                                   atol=1e-5)


def test_tf_saved_keras_model_reloaded_here(tf_written):
    """tf.keras 2's file is callable (its __call__); Keras 3's has only its signature, and
    calling the object is TensorFlow's TypeError, here as there."""
    mode, directory, expected = tf_written
    loaded = tf.saved_model.load(str(directory / "keras_model"))
    got = loaded.signatures["serving_default"](tf.constant(X))
    np.testing.assert_allclose(first(got), expected["keras_model"], rtol=1e-5, atol=1e-6)
    if mode == "tf_keras2":
        np.testing.assert_allclose(loaded(X).numpy(), expected["keras_model"], rtol=1e-5,
                                   atol=1e-6)
        layer = tf.keras.Sequential([hub.KerasLayer(str(directory / "keras_model"),
                                                    input_shape=(3,))])
        np.testing.assert_allclose(layer(X).numpy(), expected["keras_model"], rtol=1e-5,
                                   atol=1e-6)
    else:
        with pytest.raises(TypeError, match="not callable"):
            loaded(X)


@pytest.fixture(scope="module")
def tl_written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("tl_sm")
    out = {}
    for name, (module, x) in modules().items():
        tf.saved_model.save(module, str(directory / name),
                            signatures={"serving_default": module.__call__})
        out[name] = first(module(x))
    for name, make in TUTORIALS.items():
        module, x = make(tf)
        tf.saved_model.save(module, str(directory / f"tutorial_{name}"))
        out[f"tutorial_{name}"] = module(x).numpy()
    tf.keras.utils.set_random_seed(5)
    model = functional_mlp(tf.keras)
    tf.saved_model.save(model, str(directory / "keras_model"))
    out["keras_model"] = model(X, training=False).numpy()
    model = sequence_model(tf.keras)
    tf.saved_model.save(model, str(directory / "keras_sequence"))
    for n in (5, 2):
        out[f"keras_sequence_{n}"] = model(VIDEO[:, :n], training=False).numpy()
    return directory, out


def test_our_signatures_and_calls_run_here(tl_written):
    directory, ours = tl_written
    for name, (_, x) in modules().items():
        loaded = tf.saved_model.load(str(directory / name))
        np.testing.assert_allclose(first(loaded.signatures["serving_default"](x)), ours[name],
                                   rtol=1e-6)
        np.testing.assert_allclose(first(loaded(x)), ours[name], rtol=1e-6)


def test_our_keras_model_is_callable_and_a_hub_layer_here(tl_written):
    directory, ours = tl_written
    path = str(directory / "keras_model")
    np.testing.assert_allclose(hub.load(path)(X).numpy(), ours["keras_model"], rtol=1e-6)
    model = tf.keras.Sequential([hub.KerasLayer(path, input_shape=(3,))])
    np.testing.assert_allclose(model(X).numpy(), ours["keras_model"], rtol=1e-6)


@pytest.mark.parametrize("mode", sorted(MODES))
def test_tensorflow_calls_what_we_wrote_as_users_do(tl_written, mode):
    directory, ours = tl_written
    run_tf("sm_read", directory, legacy_keras=MODES[mode], script=SIDE)
    got = np.load(directory / "tf_read_sm.npz")
    for name in modules():
        for how in ("signature", "call"):
            np.testing.assert_allclose(got[f"{name}_{how}"], ours[name], rtol=1e-6,
                                       err_msg=f"{name} {how}")
    for name in TUTORIALS:
        np.testing.assert_allclose(got[f"tutorial_{name}"], ours[f"tutorial_{name}"],
                                   rtol=1e-5, atol=1e-5)
    for how in ("call", "signature", "wrapped"):
        np.testing.assert_allclose(got[f"keras_model_{how}"], ours["keras_model"],
                                   rtol=1e-5, atol=1e-6, err_msg=how)
    for n in (5, 2):
        np.testing.assert_allclose(got[f"keras_sequence_{n}"], ours[f"keras_sequence_{n}"],
                                   rtol=1e-5, atol=1e-5)

"""SavedModel behaviours issue 30 asks for, tensorlite's side (real TensorFlow checks them in
tests/interop/test_keras3_savedmodel_interop.py): a one-input signature called
positionally, a Keras model reloaded as a callable object, and export of functions whose
inputs have None beyond the batch dimension (three Core API tutorials' pattern)."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite import hub
from tests.interop.core_api_tutorials import TUTORIALS


class Scale(tf.Module):
    def __init__(self):
        super().__init__()
        self.v = tf.Variable(2.0)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(self, x):
        return {"y": x * self.v}

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="a"),
                                  tf.TensorSpec([None], tf.float32, name="b")])
    def g(self, a, b):
        return {"d": a - b}


def test_one_input_signature_called_positionally(tmp_path):
    m = Scale()
    tf.saved_model.save(m, str(tmp_path), signatures={"serving_default": m.f, "two": m.g})
    loaded = tf.saved_model.load(str(tmp_path))
    got = loaded.signatures["serving_default"](tf.ones([2, 3]))
    np.testing.assert_allclose(got["y"].numpy(), np.full((2, 3), 2.0))
    with pytest.raises(TypeError, match="multiple values"):
        loaded.signatures["serving_default"](tf.ones([2, 3]), x=tf.ones([2, 3]))
    two = loaded.signatures["two"]  # keyword-only, as TensorFlow writes two inputs
    np.testing.assert_allclose(two(a=tf.constant([3.0]), b=tf.constant([1.0]))["d"], [2.0])
    with pytest.raises(TypeError, match="positional"):
        two(tf.constant([3.0]), tf.constant([1.0]))


def test_keras_model_reloaded_is_callable(tmp_path):
    inputs = tf.keras.Input((3,))
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(2)(inputs))
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    tf.saved_model.save(model, str(tmp_path))
    want = model(x).numpy()
    np.testing.assert_allclose(tf.saved_model.load(str(tmp_path))(x).numpy(), want, rtol=1e-6)
    np.testing.assert_allclose(hub.load(str(tmp_path))(x).numpy(), want, rtol=1e-6)
    wrapped = tf.keras.Sequential([hub.KerasLayer(str(tmp_path), input_shape=(3,))])
    np.testing.assert_allclose(wrapped(x).numpy(), want, rtol=1e-6)


def test_string_input_with_none_beyond_the_batch_dimension(tmp_path):
    class Strings(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string)])
        def __call__(self, x):
            return tf.reduce_sum(tf.strings.length(x), axis=1)

    tf.saved_model.save(Strings(), str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    np.testing.assert_array_equal(loaded(tf.constant([[b"ab", b"c"], [b"", b"xyz"]])), [3, 3])
    np.testing.assert_array_equal(loaded(tf.constant([[b"a", b"bb", b"ccc"]])), [6])


@pytest.mark.parametrize("name", sorted(TUTORIALS))
def test_core_api_tutorial_export_round_trip(tmp_path, name):
    module, x = TUTORIALS[name](tf)
    want = module(x).numpy()
    tf.saved_model.save(module, str(tmp_path))
    got = tf.saved_model.load(str(tmp_path))(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_mlp_tutorial_trace_keeps_unknown_dims():
    """get_concrete_function on [None]*4 uint8: the Reshape to [-1, 784] fails at the
    made-up size 1 but its shape rule accepts the declared shape (as TF's symbolic trace)."""
    module, images = TUTORIALS["mlp"](tf)
    concrete = module.__call__.get_concrete_function()
    assert tf.TensorShape(concrete.output_shapes).as_list() == [None]
    np.testing.assert_array_equal(concrete(tf.constant(images)).numpy(),
                                  module(images).numpy())


def test_a_real_call_of_a_bad_shape_still_fails():
    @tf.function(input_signature=[tf.TensorSpec([None, None], tf.float32)])
    def f(x):
        return tf.reshape(x, [-1, 784])

    with pytest.raises(tf.errors.InvalidArgumentError, match="reshape"):
        f(tf.ones([2, 3]))


def test_keras_sequence_model_exports_for_every_length(tmp_path):
    """Input((None, 3)): the SavedModel's input is [None, None, 3] (a Dense on a sequence is
    one broadcasting matmul, so the graph holds for every length)."""
    from tests.interop.keras3_models import sequence_model  # noqa: PLC0415
    model = sequence_model(tf.keras)
    tf.saved_model.save(model, str(tmp_path))
    loaded = tf.saved_model.load(str(tmp_path))
    serving = loaded.signatures["serving_default"]
    assert [s.shape for s in serving.structured_input_signature[1].values()] == \
        [[None, None, 3]]
    x = np.linspace(-1, 1, 2 * 7 * 3, dtype=np.float32).reshape(2, 7, 3)
    for n in (7, 2):
        np.testing.assert_allclose(first(serving(tf.constant(x[:, :n]))),
                                   model(x[:, :n]).numpy(), rtol=1e-5, atol=1e-6)


def first(value):
    return np.asarray(tf.nest.flatten(value)[0])

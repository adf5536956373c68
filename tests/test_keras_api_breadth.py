"""Keras and core behaviours real TF 2 programs rely on (issue 10, part 1), written as the
programs write them."""
import numpy as np
import pytest

import tensorlite as tf


def test_dense_casts_uint8_images():
    images = np.random.default_rng(0).integers(0, 255, (4, 8, 8), dtype=np.uint8)
    model = tf.keras.Sequential([tf.keras.layers.Flatten(input_shape=(8, 8)),
                                 tf.keras.layers.Dense(3)])
    out = model(images)
    assert out.dtype == tf.float32
    kernel, bias = model.layers[1].get_weights()
    np.testing.assert_allclose(out.numpy(), images.reshape(4, -1).astype(np.float32) @ kernel
                               + bias, rtol=1e-5)
    assert tf.keras.layers.Embedding(5, 2)(np.array([1, 4])).shape == (2, 2)  # ints stay ints


def test_model_with_empty_name():
    model = tf.keras.Model(name="")
    assert model.name
    assert tf.keras.Sequential(name="").name.startswith("sequential")


def test_module_with_tf_function_method_lists_variables():
    class Scale(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(2.0)

        @tf.function
        def __call__(self, x):
            return x * self.w

    m = Scale()
    assert float(m(tf.constant(3.0))) == 6.0  # caches the traced method on the instance
    assert [v.numpy() for v in m.variables] == [2.0]
    assert len(m.trainable_variables) == 1


def test_dataset_map_returning_a_list_gives_a_tuple():
    ds = tf.data.Dataset.range(3).map(lambda x: [x, x * 2])
    assert isinstance(ds.element_spec, tuple)
    first = next(iter(ds.batch(3)))
    assert [t.numpy().tolist() for t in first] == [[0, 1, 2], [0, 2, 4]]


def test_gradient_of_watched_variable_wrt_itself_is_one():
    v = tf.Variable(3.0)
    with tf.GradientTape() as tape:
        tape.watch(v)
        r = v
    assert float(tape.gradient(r, v)) == 1.0
    x = tf.constant([1.0, 2.0])
    with tf.GradientTape() as tape:
        tape.watch(x)
        r = x
    assert tape.gradient(r, x).numpy().tolist() == [1.0, 1.0]
    with tf.GradientTape(persistent=True) as tape:
        r = v * 2.0
    assert float(tape.gradient([r, v], v)) == 3.0
    # the TF 2 autodiff guide: a variable never read inside the tape, watched or not,
    # trainable or not, is its own gradient's source (checked against TensorFlow)
    v1, frozen = tf.Variable(2.0), tf.Variable(2.0, trainable=False)
    with tf.GradientTape(persistent=True) as tape:
        result = v
    assert [None if g is None else float(g) for g in tape.gradient(result, [v, v1])] == \
        [1.0, None]
    for variable, watch in ((v, False), (frozen, True)):
        with tf.GradientTape(watch_accessed_variables=watch) as tape:
            result = variable
        assert float(tape.gradient(result, variable)) == 1.0


class _Recording(tf.keras.Model):
    """The Keras guide's custom train_step: `x, y = data`."""

    def __init__(self):
        super().__init__()
        self.dense = tf.keras.layers.Dense(1)
        self.seen = []

    def call(self, x):
        return self.dense(x)

    def train_step(self, data):
        self.seen.append(len(data))
        if len(data) == 3:
            x, y, sample_weight = data
        else:
            sample_weight = None
            x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, sample_weight=sample_weight)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y = data
        self.compiled_loss(y, self(x, training=False))
        return {m.name: m.result() for m in self.metrics}

    def predict_step(self, data):
        assert not isinstance(data, tuple)
        return self(data, training=False)


def test_custom_steps_receive_data_as_tf_passes_it():
    x = np.random.default_rng(0).random((16, 3)).astype("float32")
    y = x.sum(axis=1, keepdims=True)
    model = _Recording()
    model.compile(optimizer="sgd", loss="mse")
    model.fit(x, y, batch_size=8, epochs=1, verbose=0)
    model.fit(tf.data.Dataset.from_tensor_slices((x, y)).batch(8), epochs=1, verbose=0)
    assert model.seen == [2, 2, 2, 2]
    model.fit(x, y, sample_weight=np.ones(16), batch_size=8, verbose=0)
    assert model.seen[-2:] == [3, 3]
    model.evaluate(x, y, batch_size=8, verbose=0)
    assert model.predict(x, batch_size=8, verbose=0).shape == (16, 1)
    packed = tf.keras.utils.pack_x_y_sample_weight(x, y)
    assert len(packed) == 2 and tf.keras.utils.unpack_x_y_sample_weight(packed)[2] is None


def test_subclass_passing_itself_to_model_init_as_the_effective_tf2_guide():
    """`super().__init__(self)`: tf.keras 2 ignores a subclass's positional argument (only
    inputs and outputs make a functional model); the guide's DynamicRNN then runs its
    tf.function call with a TensorArray loop over an LSTMCell."""
    class DynamicRNN(tf.keras.Model):
        def __init__(self, rnn_cell):
            super(DynamicRNN, self).__init__(self)
            self.cell = rnn_cell

        @tf.function(input_signature=[tf.TensorSpec(dtype=tf.float32, shape=[None, None, 3])])
        def call(self, input_data):
            input_data = tf.transpose(input_data, [1, 0, 2])
            timesteps = tf.shape(input_data)[0]
            batch_size = tf.shape(input_data)[1]
            outputs = tf.TensorArray(tf.float32, timesteps)
            state = self.cell.get_initial_state(batch_size=batch_size, dtype=tf.float32)
            for i in tf.range(timesteps):
                output, state = self.cell(input_data[i], state)
                outputs = outputs.write(i, output)
            return tf.transpose(outputs.stack(), [1, 0, 2]), state
    rnn = DynamicRNN(tf.keras.layers.LSTMCell(units=13))
    x = tf.random.normal(shape=[10, 20, 3], seed=1)
    outputs, state = rnn(x)
    assert outputs.shape == (10, 20, 13) and len(state) == 2
    layer = tf.keras.layers.RNN(rnn.cell, return_sequences=True)
    np.testing.assert_allclose(outputs.numpy(), layer(x).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises((ValueError, TypeError)):
        tf.keras.Model(tf.keras.Input((3,)), outputs=None)

"""Models both sides of the Keras 3 interop tests build (tf_keras3_side.py under real
TensorFlow with Keras 3 or tf.keras 2; the tests under tensorlite). Imports neither
framework: the caller passes its `keras` namespace."""
import numpy as np

TOKENS = (np.arange(8 * 5).reshape(8, 5) * 7 % 10).astype(np.int32)


def functional_mlp(keras):
    """Input -> Dense(relu) -> Dense: Keras 3 keeps it as `_operations/1`, `_operations/2`."""
    inputs = keras.Input((3,))
    hidden = keras.layers.Dense(4, activation="relu")(inputs)
    model = keras.Model(inputs, keras.layers.Dense(2)(hidden))
    model.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return model


def sequential_text(keras):
    """Embedding, Conv1D, BatchNormalization and Dense in a Sequential (Keras 3:
    `_functional/_operations/N`, with `_embeddings` and `_kernel`)."""
    return keras.Sequential([
        keras.Input((5,), dtype="int32"),
        keras.layers.Embedding(10, 4),
        keras.layers.Conv1D(3, 2, padding="same", activation="relu"),
        keras.layers.BatchNormalization(),
        keras.layers.GlobalAveragePooling1D(),
        keras.layers.Dense(2)])


def subclassed(keras):
    """A subclassed model holding its layers as attributes `d1`, `d2`."""
    class Sub(keras.Model):
        def __init__(self):
            super().__init__()
            self.d1 = keras.layers.Dense(4, activation="tanh")
            self.d2 = keras.layers.Dense(2)

        def call(self, x):
            return self.d2(self.d1(x))

    model = Sub()
    model(np.zeros((1, 3), np.float32))
    return model


def attention_block(keras):
    """A Transformer encoder block (MultiHeadAttention, LayerNormalization, a Dense
    feed-forward, residual Adds) as a functional model over Input((6, 8)): branches, so
    Keras 3's `_operations` order is checked against tensorlite's layer order."""
    inputs = keras.Input((6, 8))
    attended = keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inputs, inputs)
    hidden = keras.layers.LayerNormalization()(keras.layers.Add()([inputs, attended]))
    ffn = keras.layers.Dense(8)(keras.layers.Dense(16, activation="relu")(hidden))
    outputs = keras.layers.LayerNormalization()(keras.layers.Add()([hidden, ffn]))
    return keras.Model(inputs, keras.layers.GlobalAveragePooling1D()(outputs))


SEQUENCES = np.sin(np.arange(2 * 6 * 8, dtype=np.float32)).reshape(2, 6, 8)


def sequence_model(keras):
    """Input((None, 3)) through two Dense layers and pooling: a SavedModel input of shape
    [None, None, 3], any batch and any length. (Not LayerNormalization: tf.keras 2 writes
    it with a `Fill` op that tensorlite's SavedModel runner does not implement yet.)"""
    inputs = keras.Input((None, 3))
    hidden = keras.layers.Dense(4, activation="relu")(inputs)
    hidden = keras.layers.Dense(2)(hidden)
    return keras.Model(inputs, keras.layers.GlobalAveragePooling1D()(hidden))


PAIR = [np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3),
        np.arange(4, dtype=np.float32).reshape(2, 2)]


def two_inputs(keras):
    """Two Inputs, a Concatenate taking them in the other order and a nested Sequential:
    Keras 3 numbers `_operations` (the nested model's own under `_functional`) in its graph
    order, which must be tensorlite's layer order."""
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    ha, hb = keras.layers.Dense(4)(a), keras.layers.Dense(4)(b)
    inner = keras.Sequential([keras.layers.Dense(3, activation="relu"), keras.layers.Dense(2)])
    return keras.Model([a, b], inner(keras.layers.Concatenate()([hb, ha])))


WORDS = np.array([[b"ab", b"c", b""], [b"", b"defg", b"xyz"]], dtype=object)
VIDEO = np.linspace(0, 1, 2 * 5 * 3, dtype=np.float32).reshape(2, 5, 3)


def signature_modules(tf, x):
    """{name: (tf.Module, input)}: a one-input signature called positionally
    (signatures["serving_default"](x)), a [None, None] string input and a [None, None, 3]
    float input (None beyond the batch dimension); `tf` is the caller's namespace."""
    class OneInput(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([[1.0, -1.0], [0.5, 2.0], [0.0, 1.0]])

        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def __call__(self, x):
            return {"y": tf.matmul(x, self.w)}

    class Strings(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, None], tf.string)])
        def __call__(self, x):
            return tf.reduce_sum(tf.strings.length(x), axis=1)

    class Frames(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable([1.0, 2.0, 3.0])

        @tf.function(input_signature=[tf.TensorSpec([None, None, 3], tf.float32)])
        def __call__(self, x):
            return tf.reduce_mean(x * self.w, axis=1)

    return {"one_input": (OneInput(), x), "strings": (Strings(), WORDS),
            "frames": (Frames(), VIDEO)}

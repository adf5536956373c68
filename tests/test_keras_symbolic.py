"""Functional Keras built symbolically (issue 30): layer calls on `tf.keras.Input` tensors are
inferred by shape rules on symbolic shapes (None where a size is unknown), not by running
the layers on made-up batches. The models are written as the users' code is (the Transformer
chapter of a widely used deep-learning textbook, the TF hub text tutorial)."""
import os

import numpy as np
import pytest

import tensorlite as tf
from tensorlite import keras
from tensorlite.keras import layers

MODULE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                      "hub_text_module")


class TransformerEncoder(layers.Layer):
    def __init__(self, embed_dim, dense_dim, num_heads, **kwargs):
        super().__init__(**kwargs)
        self.embed_dim = embed_dim
        self.dense_dim = dense_dim
        self.num_heads = num_heads
        self.attention = layers.MultiHeadAttention(
            num_heads=num_heads, key_dim=embed_dim)
        self.dense_proj = keras.Sequential(
            [layers.Dense(dense_dim, activation="relu"),
             layers.Dense(embed_dim), ]
        )
        self.layernorm_1 = layers.LayerNormalization()
        self.layernorm_2 = layers.LayerNormalization()

    def call(self, inputs, mask=None):
        if mask is not None:
            mask = mask[:, tf.newaxis, :]
        attention_output = self.attention(
            inputs, inputs, attention_mask=mask)
        proj_input = self.layernorm_1(inputs + attention_output)
        proj_output = self.dense_proj(proj_input)
        return self.layernorm_2(proj_input + proj_output)

    def get_config(self):
        config = super().get_config()
        config.update({
            "embed_dim": self.embed_dim,
            "num_heads": self.num_heads,
            "dense_dim": self.dense_dim,
        })
        return config


class PositionalEmbedding(layers.Layer):
    def __init__(self, sequence_length, input_dim, output_dim, **kwargs):
        super().__init__(**kwargs)
        self.token_embeddings = layers.Embedding(
            input_dim=input_dim, output_dim=output_dim)
        self.position_embeddings = layers.Embedding(
            input_dim=sequence_length, output_dim=output_dim)
        self.sequence_length = sequence_length
        self.input_dim = input_dim
        self.output_dim = output_dim

    def call(self, inputs):
        length = tf.shape(inputs)[-1]
        positions = tf.range(start=0, limit=length, delta=1)
        embedded_tokens = self.token_embeddings(inputs)
        embedded_positions = self.position_embeddings(positions)
        return embedded_tokens + embedded_positions

    def compute_mask(self, inputs, mask=None):
        return tf.math.not_equal(inputs, 0)

    def get_config(self):
        config = super().get_config()
        config.update({
            "output_dim": self.output_dim,
            "sequence_length": self.sequence_length,
            "input_dim": self.input_dim,
        })
        return config


def test_transformer_encoder_on_unknown_length_trains_saves_and_reloads(tmp_path):
    tf.random.set_seed(0)
    embed_dim, dense_dim, num_heads = 256, 32, 2
    inputs = keras.Input(shape=(None, embed_dim))
    encoded = TransformerEncoder(embed_dim, dense_dim, num_heads)(inputs)
    assert encoded.shape.as_list() == [None, None, embed_dim]
    x = layers.GlobalMaxPooling1D()(encoded)
    x = layers.Dropout(0.5)(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="binary_crossentropy", metrics=["accuracy"])
    rng = np.random.default_rng(0)
    data = rng.normal(size=(16, 7, embed_dim)).astype("float32")
    labels = rng.integers(0, 2, size=(16, 1)).astype("float32")
    history = model.fit(data, labels, epochs=2, batch_size=8, verbose=0)
    assert np.isfinite(history.history["loss"]).all()
    # another sequence length than the training one: the graph holds for any length
    other = rng.normal(size=(3, 11, embed_dim)).astype("float32")
    expected = model.predict(other, verbose=0)
    assert expected.shape == (3, 1)
    path = str(tmp_path / "transformer_encoder.keras")
    model.save(path)
    reloaded = keras.models.load_model(
        path, custom_objects={"TransformerEncoder": TransformerEncoder})
    np.testing.assert_allclose(reloaded.predict(other, verbose=0), expected, rtol=1e-5,
                               atol=1e-6)


def test_positional_embedding_longer_than_sequence_length_is_not_probed():
    vocab_size, sequence_length, embed_dim = 100, 20, 16
    inputs = keras.Input(shape=(None,), dtype="int64")
    x = PositionalEmbedding(sequence_length, vocab_size, embed_dim)(inputs)
    assert x.shape.as_list() == [None, None, embed_dim]
    x = TransformerEncoder(embed_dim, 8, 2)(x)
    x = layers.GlobalMaxPooling1D()(x)
    outputs = layers.Dense(1, activation="sigmoid")(x)
    model = keras.Model(inputs, outputs)
    model.compile(optimizer="rmsprop", loss="binary_crossentropy")
    rng = np.random.default_rng(1)
    tokens = rng.integers(1, vocab_size, size=(8, sequence_length))
    model.fit(tokens, rng.integers(0, 2, size=(8, 1)), epochs=1, verbose=0)
    assert model.predict(tokens[:2], verbose=0).shape == (2, 1)
    with pytest.raises(tf.errors.InvalidArgumentError, match="not in \\[0, 20\\)"):
        model(rng.integers(1, vocab_size, size=(1, sequence_length + 1)))  # a real overflow


def test_sequential_over_a_string_hub_layer_summarises():
    import tensorlite.hub as hub  # noqa: PLC0415
    hub_layer = hub.KerasLayer(MODULE, input_shape=[], dtype=tf.string, trainable=True)
    model = tf.keras.Sequential()
    model.add(hub_layer)
    model.add(tf.keras.layers.Dense(16, activation='relu'))
    model.add(tf.keras.layers.Dense(1))
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(None, 16)" in text and "(None, 1)" in text
    assert model.output.shape.as_list() == [None, 1]
    assert model(tf.constant(["a great movie", "awful"])).shape == (2, 1)


class CountingLayer(layers.Layer):
    """A layer with Python side effects in `call` that declares its output shape."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.calls = 0
        self.seen = []

    def call(self, inputs):
        self.calls += 1
        self.seen.append(inputs.shape[0])
        print("CountingLayer.call ran")
        return inputs * 2.0

    def compute_output_shape(self, input_shape):
        return input_shape


def test_side_effects_in_call_run_once_per_real_call_and_never_at_construction(capsys):
    counting = CountingLayer()
    inputs = keras.Input(shape=(3,))
    outputs = layers.Dense(2)(counting(inputs))
    model = keras.Model(inputs, outputs)
    assert counting.calls == 0 and counting.seen == []
    assert "CountingLayer.call ran" not in capsys.readouterr().out
    assert model.output_shape == (None, 2)
    model(np.ones((4, 3), "float32"))
    model(np.ones((5, 3), "float32"))
    assert counting.calls == 2 and counting.seen == [4, 5]
    model.compile(loss="mse", run_eagerly=True)
    model.predict(np.ones((6, 3), "float32"), batch_size=6, verbose=0)
    assert counting.calls == 3


def test_a_layer_without_declared_shapes_runs_call_once_symbolically_as_tf_keras():
    # tf.keras 2 (and Keras 3) run such a layer's call once on symbolic tensors to infer
    # its output: Python code runs once, tf.print never, and it sees the unknown batch
    seen = []

    class Traced(layers.Layer):
        def call(self, inputs):
            seen.append(inputs.shape.as_list())
            tf.print("never printed at construction")
            return inputs + 1.0

    inputs = keras.Input(shape=(None, 3))
    out = Traced()(inputs)
    assert seen == [[None, None, 3]]
    assert out.shape.as_list() == [None, None, 3]
    keras.Model(inputs, out)(np.zeros((2, 4, 3), "float32"))
    assert seen[1:] == [[2, 4, 3]]


def test_build_receives_the_symbolic_input_shape():
    got = []

    class Recorder(layers.Layer):
        def build(self, input_shape):
            got.append(input_shape)
            self.w = self.add_weight("w", shape=(input_shape[-1],))

        def call(self, inputs):
            return inputs * self.w

    out = Recorder()(keras.Input((None, 4)))
    assert [tuple(s.as_list()) for s in got] == [(None, None, 4)]
    assert isinstance(got[0], tf.TensorShape)
    assert out.shape.as_list() == [None, None, 4]


def test_keyword_only_multi_head_attention_call_replays():
    x = keras.Input(shape=(None, 8))
    m = keras.Input(shape=(None, None), dtype="bool")
    mha = layers.MultiHeadAttention(num_heads=2, key_dim=4)
    y = mha(query=x, value=x, key=x, attention_mask=m)
    assert y.shape.as_list() == [None, None, 8]
    model = keras.Model([x, m], y)
    rng = np.random.default_rng(2)
    data = rng.normal(size=(2, 5, 8)).astype("float32")
    mask = rng.random((2, 5, 5)) > 0.3
    np.testing.assert_allclose(model([data, mask]).numpy(),
                               mha(data, data, key=data, attention_mask=mask).numpy(),
                               rtol=1e-5, atol=1e-6)


def test_first_argument_named_anything_and_nested_structures():
    class Pair(layers.Layer):
        def call(self, features, extra=None):
            a, b = features["left"], features["right"]
            return {"sum": a + b + extra[0], "prod": a * b}

    left, right, bias = keras.Input((3,)), keras.Input((3,)), keras.Input((3,))
    out = Pair()(features={"left": left, "right": right}, extra=[bias])
    assert out["sum"].shape.as_list() == [None, 3]
    model = keras.Model({"left": left, "right": right, "bias": bias}, out)
    ones = np.ones((2, 3), "float32")
    got = model({"left": ones, "right": 2 * ones, "bias": 3 * ones})
    assert set(got) == {"sum", "prod"}
    np.testing.assert_allclose(got["sum"].numpy(), 6 * ones)
    np.testing.assert_allclose(got["prod"].numpy(), 2 * ones)


def test_dict_inputs_and_outputs_train():
    tf.random.set_seed(1)
    title = keras.Input(shape=(4,), name="title")
    body = keras.Input(shape=(6,), name="body")
    features = layers.Concatenate()([title, body])
    priority = layers.Dense(1, name="priority")(features)
    department = layers.Dense(3, activation="softmax", name="department")(features)
    model = keras.Model(inputs={"title": title, "body": body},
                        outputs={"priority": priority, "department": department})
    model.compile(optimizer="adam",
                  loss={"priority": "mse", "department": "categorical_crossentropy"})
    rng = np.random.default_rng(3)
    x = {"title": rng.random((32, 4)).astype("float32"),
         "body": rng.random((32, 6)).astype("float32")}
    y = {"priority": rng.random((32, 1)).astype("float32"),
         "department": np.eye(3, dtype="float32")[rng.integers(0, 3, 32)]}
    history = model.fit(x, y, epochs=3, batch_size=8, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    out = model.predict(x, verbose=0)
    assert out["priority"].shape == (32, 1) and out["department"].shape == (32, 3)


def test_a_shape_bug_in_a_layer_raises_at_construction_naming_layer_and_shapes():
    class Bad(layers.Layer):
        def call(self, x):
            return tf.matmul(x, tf.ones((5, 2)))

    with pytest.raises(ValueError, match='Exception encountered when calling layer '
                                         '"bad_layer" \\(type Bad\\)') as info:
        Bad(name="bad_layer")(keras.Input((3,)))
    assert "shape=(None, 3)" in str(info.value)
    assert "example sizes for the unknown dimensions" in str(info.value)


def test_ragged_string_input_is_traced_symbolically():
    class Lengths(layers.Layer):
        def call(self, inputs):
            return tf.cast(inputs.row_lengths(), tf.float32)[:, tf.newaxis]

    inputs = keras.Input(shape=(None,), dtype=tf.string, ragged=True)
    out = Lengths()(inputs)
    assert out.shape.as_list() == [None, 1]
    model = keras.Model(inputs, out)
    got = model(tf.ragged.constant([["a", "b"], ["c"]]))
    np.testing.assert_allclose(got.numpy(), [[2.0], [1.0]])


def test_dynamic_layers_and_output_signatures_are_asked_not_traced():
    ran = []

    class EagerOnly(layers.Layer):  # tf.keras 2's dynamic layer: its call never traced
        def __init__(self):
            super().__init__(dynamic=True)

        def call(self, inputs):
            ran.append(float(tf.reduce_sum(inputs)))  # a Python value: eager only
            return tf.concat([inputs, inputs], axis=-1)

        def compute_output_shape(self, input_shape):
            return tf.TensorShape(input_shape[:-1] + [2 * input_shape[-1]])

    class Signed(layers.Layer):
        def call(self, inputs):
            ran.append("signed")
            return tf.cast(inputs, tf.int32)

        def compute_output_signature(self, input_signature):
            return tf.TensorSpec(input_signature.shape, tf.int32)

    inputs = keras.Input((3,))
    doubled = EagerOnly()(inputs)
    signed = Signed()(doubled)
    assert ran == [] and EagerOnly().dynamic
    assert doubled.shape.as_list() == [None, 6]
    assert signed.shape.as_list() == [None, 6] and signed.dtype == tf.int32
    out = keras.Model(inputs, signed)(np.ones((2, 3), "float32"))
    assert ran == [6.0, "signed"] and out.dtype == tf.int32


def test_sparse_input_builds_symbolically_and_replays():
    class Densify(layers.Layer):
        def call(self, inputs):
            return tf.sparse.to_dense(inputs) * 2.0

    inputs = keras.Input(shape=(5,), sparse=True)
    dense = Densify()(inputs)
    assert dense.shape.as_list() == [None, 5]
    model = keras.Model(inputs, layers.Dense(3, kernel_initializer="ones")(dense))
    assert model.output_shape == (None, 3)
    sparse = tf.sparse.SparseTensor([[0, 1], [1, 3]], [1.0, 2.0], [2, 5])
    np.testing.assert_allclose(model(sparse).numpy(), [[2.0] * 3, [4.0] * 3])


def test_sequential_keeps_the_input_it_was_given_before_an_embedding():
    # Deep Learning with Python's IMDB model: an int Input fixes the shape; Embedding's own
    # default input shape (None, None) must not replace it, or Flatten + Dense cannot build
    model = keras.Sequential([layers.Input((50,), dtype="int32"), layers.Embedding(100, 8),
                              layers.Flatten(), layers.Dense(1)])
    assert [layer.output_shape for layer in model.layers] == [(None, 50, 8), (None, 400),
                                                              (None, 1)]
    assert model.inputs[0].dtype == tf.int32
    model.compile("adam", "mse")
    model.fit(np.zeros((4, 50), np.int32), np.zeros((4, 1), np.float32), verbose=0)


def test_construction_with_the_package_imported_through_a_dotted_path(tmp_path):
    # a bench or script that puts "<dir>/.." on sys.path: code objects then name the
    # package's files with the "..", and the tracer must still know them for its own
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    (tmp_path / "sub").mkdir()
    script = (f"import sys; sys.path.insert(0, {str(tmp_path / 'sub')!r} + '/../' + "
              f"{os.path.relpath(root, tmp_path)!r})\n"
              "import tensorlite as tf\nL = tf.keras.layers\n"
              "m = tf.keras.Sequential([L.Input((50,), dtype='int32'), L.Embedding(10000, 64),"
              " L.LSTM(8), L.Dense(2)])\nprint(m.output_shape)\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "(None, 2)"


def test_transfer_learning_tutorial_preprocesses_the_input_symbolically():
    # TF's transfer-learning tutorial: preprocess_input on keras.Input, a frozen base model
    base = keras.applications.MobileNetV2(input_shape=(32, 32, 3), include_top=False,
                                          weights=None)
    base.trainable = False
    inputs = keras.Input(shape=(32, 32, 3))
    x = keras.applications.mobilenet_v2.preprocess_input(inputs)
    x = base(x, training=False)
    outputs = layers.Dense(1)(layers.GlobalAveragePooling2D()(x))
    model = keras.Model(inputs, outputs)
    images = np.random.default_rng(0).uniform(0, 255, (2, 32, 32, 3)).astype(np.float32)
    want = model.layers[-1](layers.GlobalAveragePooling2D()(base(images / 127.5 - 1.0)))
    np.testing.assert_allclose(model(images).numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    caffe = keras.applications.resnet50.preprocess_input(keras.Input((4, 4, 3)))
    assert caffe.shape.as_list() == [None, 4, 4, 3]


def test_reshape_with_minus_one_keeps_the_batch_unknown():
    inputs = keras.Input((28, 28))
    assert layers.Reshape((-1, 14))(inputs).shape.as_list() == [None, 56, 14]
    assert layers.Reshape((-1, 3))(keras.Input((None, 6))).shape.as_list() == [None, None, 3]
    model = keras.Model(inputs, layers.Reshape((-1, 14))(inputs))
    assert model(np.zeros((3, 28, 28), np.float32)).shape == (3, 56, 14)


def test_known_sizes_that_are_multiples_of_the_example_size_stay_known():
    # the Sequential guide's add() + summary() workflow: 250x250 images through a 5x5
    # convolution of stride 2 give 123 = 3 * 41 rows (41: an example size for unknown
    # dimensions), which the trace must not take for a baked example size
    model = keras.Sequential()
    model.add(keras.Input(shape=(250, 250, 3)))
    model.add(layers.Conv2D(32, 5, strides=2, activation="relu"))
    model.add(layers.Conv2D(32, 3, activation="relu"))
    model.add(layers.MaxPooling2D(3))
    assert model.layers[0].output_shape == (None, 123, 123, 32)
    assert model.output_shape == (None, 40, 40, 32)
    assert model(np.zeros((1, 250, 250, 3), np.float32)).shape == (1, 40, 40, 32)
    # a reshape Python wrote from an unknown length still becomes unknown
    x = keras.Input(shape=(None, 82))
    assert layers.Reshape((-1, 2, 41))(x).shape.as_list() == [None, None, 2, 41]

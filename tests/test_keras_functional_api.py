"""The functional API as TF 2's guide uses it: layer.input / layer.output to cut a model
apart (feature extraction), model.input / model.output of functional and Sequential models,
Model.from_config with custom objects."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite import keras
from tensorlite.keras import layers

X = np.random.default_rng(0).standard_normal((3, 8)).astype(np.float32)


def test_feature_extraction_from_each_layers_output():
    inputs = keras.Input(shape=(8,))
    dense = layers.Dense(4, activation="relu")
    hidden = dense(inputs)
    model = keras.Model(inputs, layers.Dense(2)(hidden))
    assert dense.input is inputs and dense.output is hidden
    assert model.input is inputs and model.output is model.outputs[0]
    assert dense.input_shape == (None, 8) and dense.output_shape == (None, 4)
    assert [type(la).__name__ for la in model.layers] == ["InputLayer", "Dense", "Dense"]
    assert model.layers[0].output is inputs  # the InputLayer first, as tf.keras lists it
    features = keras.Model(inputs=model.input, outputs=[la.output for la in model.layers])
    got = features(X)
    np.testing.assert_allclose(got[0].numpy(), X)
    np.testing.assert_allclose(got[1].numpy(), dense(X).numpy(), rtol=1e-6)
    np.testing.assert_allclose(got[2].numpy(), model(X).numpy(), rtol=1e-6)


def test_a_sequential_model_has_a_graph_once_its_input_is_known():
    seq = keras.Sequential([keras.Input((8,)), layers.Dense(4, activation="relu"),
                            layers.Dense(2)])
    cut = keras.Model(inputs=seq.input, outputs=seq.layers[0].output)  # the input first
    np.testing.assert_allclose(cut(X).numpy(), seq.layers[0](X).numpy(), rtol=1e-6)
    assert seq.output.shape.as_list() == [None, 2] and seq.layers[1].input_shape == (None, 4)
    later = keras.Sequential([layers.Dense(4), layers.Dense(2)])
    with pytest.raises(AttributeError, match="has no input yet"):
        later.input  # noqa: B018
    later(X)  # the input shape comes from data
    first = later.layers[0].output  # a layer's output before the model's input
    np.testing.assert_allclose(keras.Model(later.input, first)(X).numpy(),
                               later.layers[0](X).numpy(), rtol=1e-6)
    later.add(layers.Dense(1))  # the graph grows with the model
    assert later.output.shape.as_list() == [None, 1]
    later.pop()
    assert later.output.shape.as_list() == [None, 2]


def test_input_and_output_errors_say_why():
    lone = layers.Dense(2)
    with pytest.raises(AttributeError, match="is not connected, no input to return"):
        lone.input  # noqa: B018
    shared = layers.Dense(2)
    a, b = keras.Input((3,)), keras.Input((3,))
    shared(a), shared(b)
    with pytest.raises(AttributeError, match="multiple inbound nodes"):
        shared.output  # noqa: B018
    assert shared.get_input_at(1) is b
    assert shared.get_output_at(0).shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="only 2 inbound nodes"):
        shared.get_output_at(2)


class CustomDense(layers.Layer):
    """The guide's custom layer with get_config."""

    def __init__(self, units=32):
        super().__init__()
        self.units = units

    def build(self, input_shape):
        self.w = self.add_weight(shape=(input_shape[-1], self.units),
                                 initializer="random_normal", trainable=True)
        self.b = self.add_weight(shape=(self.units,), initializer="random_normal",
                                 trainable=True)

    def call(self, inputs):
        return tf.matmul(inputs, self.w) + self.b

    def get_config(self):
        return {"units": self.units}


def test_model_from_config_with_custom_objects():
    inputs = keras.Input((4,))
    model = keras.Model(inputs, CustomDense(10)(inputs))
    config = model.get_config()
    new_model = keras.Model.from_config(config, custom_objects={"CustomDense": CustomDense})
    assert [type(la).__name__ for la in new_model.layers] == ["InputLayer", "CustomDense"]
    assert new_model.output.shape.as_list() == [None, 10]
    with pytest.raises(ValueError, match="Unknown layer: 'CustomDense'"):
        keras.Model.from_config(config)


class CustomModel(keras.Model):
    """The TF 2 guide's 'Customizing what happens in fit()': a custom train_step on a
    model built functionally, CustomModel(inputs, outputs)."""

    def train_step(self, data):
        x, y = data
        with tf.GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compiled_loss(y, y_pred, regularization_losses=self.losses)
        gradients = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        self.compiled_metrics.update_state(y, y_pred)
        return {m.name: m.result() for m in self.metrics}


def test_a_model_subclass_built_from_inputs_and_outputs_is_functional():
    inputs = keras.Input(shape=(8,))
    model = CustomModel(inputs, layers.Dense(1)(inputs))
    assert type(model) is CustomModel and isinstance(model, keras.Model)
    assert [type(la).__name__ for la in model.layers] == ["InputLayer", "Dense"]
    model.compile(optimizer=keras.optimizers.SGD(0.05), loss="mse", metrics=["mae"])
    rng = np.random.default_rng(1)
    x = rng.standard_normal((64, 8)).astype(np.float32)
    y = x @ rng.standard_normal((8, 1)).astype(np.float32)
    history = model.fit(x, y, batch_size=16, epochs=3, verbose=0).history
    assert set(history) == {"loss", "mae"} and history["loss"][-1] < history["loss"][0]
    np.testing.assert_allclose(model.predict(x, verbose=0), model.layers[1](x).numpy(),
                               rtol=1e-6)


class TemporalSoftmax(layers.Layer):
    """The TF 2 guide 'Masking and padding': a layer that needs the mask."""

    def call(self, inputs, mask=None):
        broadcast_float_mask = tf.expand_dims(tf.cast(mask, "float32"), -1)
        inputs_exp = tf.exp(inputs) * broadcast_float_mask
        inputs_sum = tf.reduce_sum(inputs_exp * broadcast_float_mask, axis=-1, keepdims=True)
        return inputs_exp / inputs_sum


def test_masks_show_on_tensors_and_pass_through_dense_while_building():
    ids = np.array([[3, 5, 0, 0], [7, 0, 0, 0]], np.int32)
    embedded = layers.Embedding(10, 4, mask_zero=True)(ids)
    np.testing.assert_array_equal(embedded._keras_mask.numpy(), ids != 0)
    inputs = keras.Input(shape=(None,), dtype="int32")
    x = layers.Embedding(input_dim=10, output_dim=8, mask_zero=True)(inputs)
    assert x._keras_mask.shape.as_list() == [None, None]
    x = layers.Dense(1)(x)  # a mask passes through Dense, as in Keras
    model = keras.Model(inputs, TemporalSoftmax()(x))  # its probe saw a mask too
    with np.errstate(invalid="ignore"):  # 0 / 0 where masked
        out = model(ids).numpy()
    np.testing.assert_allclose(out[ids != 0], 1.0, rtol=1e-6)  # softmax over one unit
    assert np.isnan(out[ids == 0]).all()  # 0 / 0 where masked, as the guide's layer computes


def test_training_passed_positionally_and_fine_tuning_after_recompile():
    inputs = keras.Input((4,))
    dropped = layers.Dropout(0.99)(inputs)
    model = keras.Model(inputs, dropped)
    x = np.ones((2, 4), np.float32)
    np.testing.assert_array_equal(model(x, False).numpy(), x)  # training=False, positional
    base = keras.Sequential([keras.Input((4,)), layers.Dense(3)])
    head = keras.Sequential([base, layers.Dense(1)])
    base.trainable = False
    head.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    y = np.ones((2, 1), np.float32)
    frozen = base.get_weights()
    head.fit(x, y, verbose=0)
    np.testing.assert_array_equal(base.get_weights()[0], frozen[0])
    base.trainable = True  # fine-tuning: takes effect at the next compile, as in Keras
    head.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    head.fit(x, y, verbose=0)
    assert not np.array_equal(base.get_weights()[0], frozen[0])


@keras.utils.register_keras_serializable(package="my_package", name="custom_fn")
def custom_fn(x):
    return x ** 2


def test_the_save_guides_architecture_round_trips(tmp_path):
    """The TF 2 guide 'Save and load Keras models': a registered activation, to_json /
    model_from_json, a name that is no identifier, layers reused in a Sequential."""
    inputs = keras.Input(shape=(4,))
    model = keras.Model(inputs, layers.Dense(2, activation=custom_fn)(inputs),
                        name="3_layer_mlp")
    model.save(str(tmp_path / "custom.keras"))
    x = np.random.default_rng(2).random((3, 4)).astype(np.float32)
    reloaded = keras.models.load_model(str(tmp_path / "custom.keras"))
    assert reloaded.layers[1].activation is custom_fn and reloaded.name == "3_layer_mlp"
    np.testing.assert_allclose(reloaded(x).numpy(), model(x).numpy(), rtol=1e-6)
    rebuilt = keras.models.model_from_json(model.to_json())
    assert [type(la).__name__ for la in rebuilt.layers] == ["InputLayer", "Dense"]
    assert rebuilt.output.shape.as_list() == [None, 2]
    with pytest.raises(ValueError, match="cannot contain character `/`"):
        layers.Dense(1, name="a/b")
    reused = keras.Sequential(model.layers + [layers.Dense(1)])  # the InputLayer first
    assert reused.built and reused.output.shape.as_list() == [None, 1]


def test_summary_lists_the_input_layer_first():
    inputs = keras.Input((784,), name="digits")
    model = keras.Model(inputs, layers.Dense(10)(inputs))
    lines = []
    model.summary(print_fn=lines.append)
    rows = [line for line in lines if "(" in line and "Layer (type)" not in line]
    assert rows[0].split() == ["digits", "(InputLayer)", "[(None,", "784)]", "0"]
    assert model.get_layer(index=0) is inputs.input_layer


def test_layers_are_listed_in_tf_keras_order_on_branching_graphs():
    """tf.keras 2 lists a functional model's layers by depth from the outputs (ties by
    first visit): the order of its .h5 weights and checkpoint keys, so weights land in
    the same layers both ways. TensorFlow lists [input, a, b, c, add] here."""
    x = tf.keras.Input((3,))
    a = tf.keras.layers.Dense(2, name="a")(x)
    c = tf.keras.layers.Dense(2, name="c")(a)
    b = tf.keras.layers.Dense(2, name="b")(x)
    model = tf.keras.Model(x, tf.keras.layers.add([b, c], name="add"))
    assert [layer.name for layer in model.layers][1:] == ["a", "b", "c", "add"]


def test_two_outputs_of_one_layer_get_unique_names_and_their_own_metrics():
    """The RNN guide's NestedCell: one RNN layer gives both outputs of the model; as in
    tf.keras 2 they are named `rnn`, `rnn_1`, and each has its loss and metric in fit's
    logs (they overwrote each other)."""
    class PairCell(tf.keras.layers.Layer):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.state_size = [tf.TensorShape([2]), tf.TensorShape([3])]
            self.output_size = [tf.TensorShape([2]), tf.TensorShape([3])]

        def call(self, inputs, states):
            a, b = tf.nest.flatten(inputs)
            return (a, b), (states[0] + a, states[1] + b)
    x1, x2 = tf.keras.Input((None, 2)), tf.keras.Input((None, 3))
    rnn = tf.keras.layers.RNN(PairCell(), name="rnn")
    model = tf.keras.Model([x1, x2], rnn((x1, x2)))
    assert model.output_names == ["rnn", "rnn_1"]
    model.compile(optimizer="sgd", loss="mse", metrics=["mae"])
    rng = np.random.RandomState(0)
    xs = [rng.rand(8, 4, 2).astype("float32"), rng.rand(8, 4, 3).astype("float32")]
    ys = [rng.rand(8, 2).astype("float32"), rng.rand(8, 3).astype("float32")]
    logs = model.evaluate(xs, ys, return_dict=True, verbose=0)
    assert sorted(logs) == ["loss", "rnn_1_loss", "rnn_1_mae", "rnn_loss", "rnn_mae"]
    np.testing.assert_allclose(logs["rnn_1_mae"], np.mean(np.abs(xs[1][:, -1] - ys[1])),
                               rtol=1e-5)


def test_the_csv_tutorials_preprocessing_head_takes_pandas_columns():
    """The CSV tutorial's titanic head: one float32 `tf.keras.Input(shape=(1,))` per numeric
    column fed 1-D int64 and float64 columns (cast to the input's dtype and given the size-1
    axis, as Keras does), string columns through StringLookup + CategoryEncoding."""
    titanic_features = {"age": np.array([22.0, 38.0, 26.0, 35.0]),
                        "n_siblings_spouses": np.array([1, 1, 0, 1]),
                        "sex": np.array(["male", "female", "female", "male"], dtype=object)}
    titanic_labels = np.array([0, 1, 1, 0])
    inputs = {}
    for name, column in titanic_features.items():
        dtype = tf.string if column.dtype == object else tf.float32
        inputs[name] = tf.keras.Input(shape=(1,), name=name, dtype=dtype)
    numeric_inputs = {name: input for name, input in inputs.items()
                      if input.dtype == tf.float32}
    x = layers.Concatenate()(list(numeric_inputs.values()))
    norm = layers.Normalization()
    numeric = np.stack([titanic_features[k] for k in numeric_inputs], 1)
    norm.adapt(numeric)
    preprocessed_inputs = [norm(x)]
    lookup = layers.StringLookup(vocabulary=np.unique(titanic_features["sex"]))
    one_hot = layers.CategoryEncoding(num_tokens=lookup.vocabulary_size())
    preprocessed_inputs.append(one_hot(lookup(inputs["sex"])))
    titanic_preprocessing = tf.keras.Model(inputs, layers.Concatenate()(preprocessed_inputs))
    out = titanic_preprocessing(titanic_features).numpy()
    expected = (numeric - numeric.mean(0)) / numeric.std(0)
    np.testing.assert_allclose(out[:, :2], expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(out[:, 2:], [[0, 0, 1], [0, 1, 0], [0, 1, 0], [0, 0, 1]])
    body = tf.keras.Sequential([layers.Dense(8, activation='relu'), layers.Dense(1)])
    model = tf.keras.Model(inputs, body(titanic_preprocessing(inputs)))
    model.compile(loss=tf.keras.losses.BinaryCrossentropy(from_logits=True),
                  optimizer=tf.keras.optimizers.Adam())
    history = model.fit(x=titanic_features, y=titanic_labels, epochs=2, verbose=0)
    assert np.isfinite(history.history["loss"]).all()

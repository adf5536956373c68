"""Keras files, tensorlite's side: `.keras`, `.h5` and `.weights.h5` round trips over many
layer kinds, training continuing exactly after load_model, and crafted files (path
traversal, Lambda, unknown or hostile classes, truncation, malformed configs) each a clear
error with no code run and nothing written. Real Keras reads and writes these files in
tests/interop/test_keras_files_interop.py."""
import io
import json
import os
import zipfile

import numpy as np
import pytest

import tensorlite as tf

h5py = pytest.importorskip("h5py")
keras = tf.keras
RNG = np.random.default_rng(0)


def mlp():
    return keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="relu"),
                             keras.layers.Dense(2)])


def cnn():
    x = keras.Input((6, 6, 2))
    h = keras.layers.Conv2D(3, 3, padding="same")(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Flatten()(h)
    return keras.Model(x, [keras.layers.Dense(2)(h), keras.layers.Dense(1)(h)])


def rnn():
    x = keras.Input((5,), dtype="int32")
    h = keras.layers.Embedding(10, 4)(x)
    h = keras.layers.LSTM(3, return_sequences=True)(h)
    h = keras.layers.GlobalAveragePooling1D()(h)
    return keras.Model(x, keras.layers.Dense(1)(h))


INPUTS = {mlp: lambda: RNG.normal(size=(4, 3)).astype(np.float32),
          cnn: lambda: RNG.normal(size=(2, 6, 6, 2)).astype(np.float32),
          rnn: lambda: RNG.integers(0, 10, size=(3, 5)).astype(np.int32)}


@pytest.mark.parametrize("make", [mlp, cnn, rnn], ids=lambda f: f.__name__)
@pytest.mark.parametrize("fmt", ["m.keras", "m.h5", "dir"])
def test_model_round_trips(tmp_path, make, fmt):
    model, x = make(), INPUTS[make]()
    for w in model.weights:  # non-trivial values everywhere, moving statistics included
        w.assign(RNG.uniform(0.5, 1.5, size=w.shape.as_list()).astype(w.dtype.as_numpy_dtype))
    model.save(str(tmp_path / fmt))
    loaded = keras.models.load_model(str(tmp_path / fmt))
    assert [type(a).__name__ for a in loaded.layers] == [type(a).__name__ for a in model.layers]
    for a, b in zip(tf.nest.flatten(model(x)), tf.nest.flatten(loaded(x))):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6, atol=1e-6)


def test_weights_h5_round_trip(tmp_path):
    model, other = mlp(), mlp()
    model.save_weights(str(tmp_path / "w.weights.h5"))
    other.load_weights(str(tmp_path / "w.weights.h5"))
    for a, b in zip(model.weights, other.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    with pytest.raises(ValueError, match=r"shape \(3, 4\) in the file but \(3, 5\)"):
        keras.Sequential([keras.Input((3,)), keras.layers.Dense(5)]).load_weights(
            str(tmp_path / "w.weights.h5"))


class Blocks(keras.layers.Layer):
    """A layer holding its sub-layers in a list, as custom blocks often do."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.blocks = [keras.layers.Dense(2), keras.layers.Dense(2)]

    def call(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def test_sub_layers_in_a_list_are_saved_under_keras3s_paths(tmp_path):
    """Keras 3 names the layers of a list attribute by class (`blocks/dense_1`): they were
    not saved at all before."""
    from tensorlite.keras.saving import weights_layout
    inputs = keras.Input((3,))
    model = keras.Model(inputs, Blocks()(inputs))
    assert sorted(weights_layout.keras3_arrays(model, False)) == [
        f"layers/blocks/blocks/{d}/vars/{i}" for d in ("dense", "dense_1") for i in (0, 1)]
    model.save_weights(str(tmp_path / "b.weights.h5"))
    other = keras.Model(inputs, Blocks()(inputs))
    other.load_weights(str(tmp_path / "b.weights.h5"))
    for a, b in zip(model.weights, other.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("optimizer", ["adam", "rmsprop", "sgd", "adamw", "adagrad", "adadelta",
                                       "adamax", "nadam", "ftrl", "lion"])
def test_training_continues_exactly_after_load_model(tmp_path, optimizer):
    x = RNG.normal(size=(16, 3)).astype(np.float32)
    y = x[:, :2] * 2.0
    model = mlp()
    model.compile(optimizer=keras.optimizers.get(optimizer), loss="mse")
    model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    model.save(str(tmp_path / "m.keras"))
    loaded = keras.models.load_model(str(tmp_path / "m.keras"))
    assert int(loaded.optimizer.iterations.numpy()) == 4
    model.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    loaded.fit(x, y, epochs=2, batch_size=8, verbose=0, shuffle=False)
    for a, b in zip(model.weights, loaded.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


# -- crafted files ---------------------------------------------------------------------------
def _archive(tmp_path, config, extra=(), weights=True):
    path = tmp_path / "crafted.keras"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("config.json", config if isinstance(config, str) else json.dumps(config))
        z.writestr("metadata.json", "{}")
        if weights:
            buf = io.BytesIO()
            with h5py.File(buf, "w") as f:
                f.create_group("vars")
            z.writestr("model.weights.h5", buf.getvalue())
        for name, data in extra:
            z.writestr(name, data)
    return str(path)


def _seq(*layers):
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": "s", "layers": [
                {"module": "keras.layers", "class_name": "InputLayer",
                 "config": {"batch_shape": [None, 3], "dtype": "float32", "name": "in"}},
                *layers]}}


def test_path_traversal_member_is_refused_and_nothing_written(tmp_path):
    target = tmp_path / "sub"
    target.mkdir()
    path = _archive(target, _seq(), extra=[("../../canary.txt", b"x")])
    with pytest.raises(ValueError, match="outside"):
        keras.models.load_model(path)
    assert not (tmp_path / "canary.txt").exists() and os.listdir(target) == ["crafted.keras"]


def test_lambda_is_refused_unless_safe_mode_is_off(tmp_path):
    layer = {"module": "keras.layers", "class_name": "Lambda",
             "config": {"name": "l", "function": {"class_name": "__lambda__", "config": {
                 "code": "ZGVmIGYoeCk6IHJldHVybiB4", "defaults": None, "closure": None}}}}
    with pytest.raises(ValueError, match="safe_mode=False"):
        keras.models.load_model(_archive(tmp_path, _seq(layer)))


@pytest.mark.parametrize("layer", [
    {"module": "os", "class_name": "system", "config": {"command": "touch CANARY"}},
    {"module": "subprocess", "class_name": "Popen", "registered_name": "Popen",
     "config": {"args": ["touch", "CANARY"]}},
    {"module": "my_pkg.layers", "class_name": "MyLayer", "config": {}}])
def test_unknown_classes_are_an_error_naming_them_and_nothing_runs(tmp_path, layer,
                                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=layer["class_name"]):
        keras.models.load_model(_archive(tmp_path, _seq(layer)))
    assert not (tmp_path / "CANARY").exists()


def test_unsupported_config_value_is_an_error_not_ignored(tmp_path):
    layer = {"module": "keras.layers", "class_name": "Dense",
             "config": {"name": "d", "units": 2, "lora_rank": 4}}
    with pytest.raises(ValueError, match="lora_rank"):
        keras.models.load_model(_archive(tmp_path, _seq(layer)))


@pytest.mark.parametrize("damage", ["truncated", "bad_json", "not_object", "no_weights",
                                    "bad_h5", "dangling_node"])
def test_damaged_archives_are_data_loss(tmp_path, damage):
    model = mlp()
    good = tmp_path / "good.keras"
    model.save(str(good))
    if damage == "truncated":
        data = good.read_bytes()
        path = tmp_path / "t.keras"
        path.write_bytes(data[:len(data) // 2])
        path = str(path)
    elif damage == "bad_json":
        path = _archive(tmp_path, "{not json")
    elif damage == "not_object":
        path = _archive(tmp_path, "[1, 2]")
    elif damage == "no_weights":
        path = _archive(tmp_path, _seq(), weights=False)
    elif damage == "bad_h5":
        path = tmp_path / "h.keras"
        with zipfile.ZipFile(path, "w") as z:
            z.writestr("config.json", json.dumps(_seq()))
            z.writestr("model.weights.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 40)
        path = str(path)
    else:
        config = {"class_name": "Functional", "config": {
            "name": "f", "layers": [{"class_name": "Dense", "name": "d",
                                     "config": {"name": "d", "units": 1},
                                     "inbound_nodes": [[["missing", 0, 0, {}]]]}],
            "input_layers": [["missing", 0, 0]], "output_layers": [["d", 0, 0]]}}
        path = _archive(tmp_path, config)
    with pytest.raises((tf.errors.DataLossError, ValueError)) as info:
        keras.models.load_model(path)
    if damage != "dangling_node":
        assert info.type is tf.errors.DataLossError


def test_h5_with_non_numeric_weights_is_refused(tmp_path):
    path = tmp_path / "w.weights.h5"
    with h5py.File(path, "w") as f:
        f.create_dataset("layers/dense/vars/0", data=np.array([b"x"], dtype=object),
                         dtype=h5py.string_dtype())
    with pytest.raises(tf.errors.DataLossError, match="not a weight array"):
        mlp().load_weights(str(path))


def test_sigkill_during_model_save_leaves_old_or_new_model(tmp_path):
    """20 writers killed at random moments while saving .keras and .h5 over a complete
    file: the file then loads, holding one whole save's weights."""
    import random
    from tests.kill_helpers import kill_while_saving
    rng = random.Random(2)
    for trial in range(20):
        path = str(tmp_path / ("m.keras" if trial % 2 else "m.h5"))
        model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256),
                                  keras.layers.Dense(64)])
        kill_while_saving(model.weights, lambda: model.save(path), rng, 0.05)
        loaded = keras.models.load_model(path)
        values = {float(v) for w in loaded.weights for v in np.unique(w.numpy())}
        assert len(values) == 1 and values.pop() >= 1, f"torn save in trial {trial}"
        model.save(path)  # the next save clears the dead writer's temporary file
        assert not [n for n in os.listdir(tmp_path) if ".tmp-" in n]


def test_registered_subclassed_model_round_trips_through_keras_archive(tmp_path):
    """The 'Save and load Keras models' guide's registered subclassed model: the archive
    names it "Custom>MySequentialModel" (registered_name) and load_model finds the class;
    {**super().get_config(), ...} in the subclass extends the base config."""
    @tf.keras.utils.register_keras_serializable()
    class MySequentialModel(tf.keras.Model):
        def __init__(self, units=4, **kwargs):
            super().__init__(**kwargs)
            self.units = units
            self.dense = tf.keras.layers.Dense(units)

        def call(self, x):
            return self.dense(x)

        def get_config(self):
            return {**super().get_config(), "units": self.units}

    model = MySequentialModel(3, name="mine")
    x = np.ones((2, 2), np.float32)
    model(x)
    path = str(tmp_path / "m.keras")
    model.save(path)
    with zipfile.ZipFile(path) as z:
        entry = json.loads(z.read("config.json"))
    assert entry["registered_name"] == "Custom>MySequentialModel"
    assert entry["config"]["units"] == 3 and entry["config"]["name"] == "mine"
    loaded = tf.keras.models.load_model(path)
    assert type(loaded) is MySequentialModel and loaded.name == "mine"
    np.testing.assert_allclose(loaded(x), model(x), rtol=1e-6)


def test_saving_into_a_folder_that_does_not_exist_yet_makes_it(tmp_path, monkeypatch):
    """The save-and-load tutorial saves `./checkpoints/my_checkpoint.weights.h5` and
    `saved/my_model.keras` without making the folders first; Keras makes them."""
    monkeypatch.chdir(tmp_path)
    model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
    model.save_weights("./checkpoints/my_checkpoint.weights.h5")
    model.save("saved/my_model.keras")
    model.save_weights("./tf_format/my_checkpoint")
    again = tf.keras.models.load_model("saved/my_model.keras")
    again.load_weights("./checkpoints/my_checkpoint.weights.h5")
    x = np.ones((1, 3), np.float32)
    np.testing.assert_allclose(again(x).numpy(), model(x).numpy())
    assert tf.train.latest_checkpoint("./tf_format").endswith("my_checkpoint")


def test_variables_a_layer_assigns_itself_are_saved_in_keras_files(tmp_path):
    """The "Introduction to modules, layers and models" guide: FlexibleDense creates
    `self.w = tf.Variable(...)` in build; the .keras file of a model of them must hold
    those weights, so the reloaded model computes what the saved one did."""
    class FlexibleDense(tf.keras.layers.Layer):
        def __init__(self, out_features, **kwargs):
            super().__init__(**kwargs)
            self.out_features = out_features

        def build(self, input_shape):
            self.w = tf.Variable(tf.random.normal([input_shape[-1], self.out_features]),
                                 name="w")
            self.b = tf.Variable(tf.zeros([self.out_features]), name="b")

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.b

    class MySequentialModel(tf.keras.Model):
        def __init__(self, name=None, **kwargs):
            super().__init__(**kwargs)
            self.dense_1 = FlexibleDense(out_features=3)
            self.dense_2 = FlexibleDense(out_features=2)

        def call(self, x):
            return self.dense_2(self.dense_1(x))
    model = MySequentialModel(name="the_model")
    x = tf.constant([[2.0, 2.0, 2.0]])
    expected = model(x).numpy()
    model.save(tmp_path / "exname_of_file.keras")
    reconstructed = tf.keras.models.load_model(
        tmp_path / "exname_of_file.keras",
        custom_objects={"FlexibleDense": FlexibleDense, "MySequentialModel": MySequentialModel})
    np.testing.assert_allclose(reconstructed(x).numpy(), expected)


def test_model_saved_to_a_directory_is_callable_after_tf_saved_model_load(tmp_path):
    # the serialization guide's cell: tf.keras 2's model.save(dir), then the TF graph called
    model = tf.keras.Sequential([tf.keras.Input((32,)), tf.keras.layers.Dense(1)])
    model.save(str(tmp_path / "my_model"))
    tensorflow_graph = tf.saved_model.load(str(tmp_path / "my_model"))
    x = np.random.uniform(size=(4, 32)).astype(np.float32)
    predicted = tensorflow_graph(x).numpy()
    np.testing.assert_allclose(predicted, model(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(tensorflow_graph.serve(x).numpy(), predicted)
    again = tf.keras.models.load_model(str(tmp_path / "my_model"))
    np.testing.assert_allclose(again(x).numpy(), predicted, rtol=1e-6)

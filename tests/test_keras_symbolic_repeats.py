"""Repeated layer calls at model construction (keras/symbolic_trace.py): a built-in layer's
first call whose class, config and input specs an earlier call had is answered from that
call's trace. These tests show the answers are the traces' own (whole models built with and
without it agree on every KerasTensor), and that the calls it must not answer are traced."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras import layers, symbolic_trace

SIZE = 64


def _transformer(blocks=3, length=None):
    inputs = tf.keras.Input(shape=(length,), dtype="int64")
    x = layers.Embedding(1000, 32, mask_zero=length is None)(inputs)
    for _ in range(blocks):
        attended = layers.MultiHeadAttention(num_heads=2, key_dim=16)(x, x)
        x = layers.LayerNormalization()(x + attended)
        hidden = layers.Dense(64, activation="relu")(x)
        x = layers.LayerNormalization()(x + layers.Dropout(0.1)(layers.Dense(32)(hidden)))
    x = layers.GlobalAveragePooling1D()(x)
    return tf.keras.Model(inputs, layers.Dense(2)(x))


def _small_cnn():
    inputs = tf.keras.Input(shape=(None, None, 3))
    x = inputs
    for filters in (8, 8, 16, 16):
        y = layers.Conv2D(filters, 3, padding="same", use_bias=False)(x)
        y = layers.BatchNormalization()(y)
        y = layers.ReLU(6.0)(y)
        y = layers.DepthwiseConv2D(3, padding="same")(y)
        x = layers.Add()([x, y]) if x.shape[-1] == filters else y
        x = layers.ZeroPadding2D(1)(x)
    x = layers.MaxPooling2D()(x)
    x = layers.Concatenate()([x, x])
    x = layers.GlobalAveragePooling2D()(x)
    return tf.keras.Model(inputs, layers.Dense(3, activation="softmax")(x))


MODELS = {
    "MobileNetV2": lambda: tf.keras.applications.MobileNetV2(
        weights=None, input_shape=(SIZE, SIZE, 3), classes=10),
    "ResNet50": lambda: tf.keras.applications.ResNet50(
        weights=None, input_shape=(SIZE, SIZE, 3), classes=10),
    "Transformer": lambda: _transformer(length=16),
    "Transformer, masked, any length": lambda: _transformer(),
    "CNN, any size": _small_cnn,
}


def _specs(model):
    """Every layer's output specs: shape, dtype and mask spec, in layer order."""
    out = []
    for layer in model.layers:
        for t in tf.nest.flatten(layer.output):
            mask = None if t.mask_spec is None else (list(t.mask_spec[0]), t.mask_spec[1])
            out.append((layer.name, t.shape.as_list(), t.dtype, mask))
    return out


def _names(specs):
    return [(i, *spec[1:]) for i, spec in enumerate(specs)]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_models_built_with_and_without_repeats_agree(name, monkeypatch):
    symbolic_trace._REPEATS.clear()
    with_repeats = MODELS[name]()
    assert symbolic_trace._REPEATS, "no call of the model was remembered"
    monkeypatch.setattr(symbolic_trace, "_REPEATS_ON", [False])
    traced = MODELS[name]()
    assert _names(_specs(with_repeats)) == _names(_specs(traced))
    assert [w.shape.as_list() for w in with_repeats.weights] == \
        [w.shape.as_list() for w in traced.weights]


def test_repeated_calls_run_no_trace(monkeypatch):
    symbolic_trace._REPEATS.clear()
    traces = []
    trace = symbolic_trace._traced_specs
    monkeypatch.setattr(symbolic_trace, "_traced_specs",
                        lambda layer, *a: traces.append(type(layer).__name__) or
                        trace(layer, *a))
    inputs = tf.keras.Input(shape=(10,))
    x = inputs
    for _ in range(4):
        x = layers.Dense(10, activation="relu")(x)
    assert traces == ["Dense"]
    model = tf.keras.Model(inputs, x)
    model.compile(optimizer="sgd", loss="mse")
    data = np.ones((4, 10), np.float32)
    model.fit(data, data, epochs=1, verbose=0)  # the layers were built: the weights exist
    assert len(model.trainable_weights) == 8
    assert model.predict(data, verbose=0).shape == (4, 10)


class CountingDense(layers.Dense):
    """A user's subclass: its `call` is the user's, so each of its calls is traced."""

    traced = 0

    def call(self, inputs):
        CountingDense.traced += 1
        return super().call(inputs)


def test_user_subclasses_are_always_traced():
    symbolic_trace._REPEATS.clear()
    CountingDense.traced = 0
    x = tf.keras.Input(shape=(4,))
    CountingDense(3)(x)
    CountingDense(3)(x)
    assert CountingDense.traced == 2


def test_a_user_activation_is_not_taken_for_another():
    # two Dense layers with equal configs (both activations serialise as '<lambda>'), whose
    # activations give different shapes
    symbolic_trace._REPEATS.clear()
    x = tf.keras.Input(shape=(4,))
    summed = layers.Dense(3, activation=lambda t: tf.reduce_sum(t, -1, keepdims=True))(x)
    kept = layers.Dense(3, activation=lambda t: t)(x)
    assert summed.shape.as_list() == [None, 1] and kept.shape.as_list() == [None, 3]


def test_a_built_layer_called_on_other_inputs_is_traced_and_fails():
    symbolic_trace._REPEATS.clear()
    layers.Dense(3)(tf.keras.Input(shape=(5,)))  # remembers Dense(3) on (None, 5)
    shared = layers.Dense(3)
    shared(tf.keras.Input(shape=(4,)))  # built for 4 features
    with pytest.raises(ValueError, match='layer "dense'):
        shared(tf.keras.Input(shape=(5,)))


def test_the_same_input_twice_is_not_two_inputs():
    symbolic_trace._REPEATS.clear()
    x, y = tf.keras.Input(shape=(4,)), tf.keras.Input(shape=(4,))
    key_xx = symbolic_trace._repeat_key(layers.Add(), [x, x], (), {})
    key_xy = symbolic_trace._repeat_key(layers.Add(), [x, y], (), {})
    assert key_xx is not None and key_xy is not None and key_xx != key_xy


def test_arguments_that_are_not_plain_values_are_traced():
    x = tf.keras.Input(shape=(4,))
    assert symbolic_trace._repeat_key(layers.Dense(3), x, (), {"training": True}) is not None
    assert symbolic_trace._repeat_key(layers.Dense(3), x, (), {"training": np.bool_(True)}) \
        is None
    # 1, 1.0 and True are equal Python keys, not equal arguments
    keys = {symbolic_trace._repeat_key(layers.Dropout(0.5), x, (), {"training": v})
            for v in (1, 1.0, True)}
    assert len(keys) == 3


def test_configs_are_told_apart_by_value_and_type():
    x = tf.keras.Input(shape=(4,))
    keys = {symbolic_trace._repeat_key(layers.Dropout(rate), x, (), {})
            for rate in (0.5, 0.25, 0.5)}
    assert len(keys) == 2
    assert symbolic_trace._plain_bytes({"rate": 1}) != symbolic_trace._plain_bytes(
        {"rate": 1.0}) != symbolic_trace._plain_bytes({"rate": True})
    # NumPy values (which marshal writes as their raw bytes) and other objects: no key
    for value in (np.float64(0.5), np.arange(3), object(), float("nan")):
        assert symbolic_trace._plain_bytes({"rate": value}) is None

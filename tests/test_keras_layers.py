"""Keras layers beyond the core ones: the shared layer check, and the tests every layer
takes (default names, config round trips, weights as variables, regularization losses,
the functional API).

`check_layer(layer, np_fn, x, weights)` is `check_op` applied to a layer: the layer is
built on `x`, the named weights are set to random values and then passed to the call as
plain tensors (so gradients with respect to them are checked like those of `x`), and the
output must match `np_fn(x, *weights)`, an independent NumPy reference.
The per-family tests live in tests/test_keras_layers_*.py.
"""
import contextlib

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.keras.layers.attention import (AdditiveAttention, Attention, EinsumDense,
                                               MultiHeadAttention)
from tensorlite.keras.layers.convolutional import (Conv1D, Conv1DTranspose, Conv2D,
                                                   Conv2DTranspose, DepthwiseConv2D,
                                                   SeparableConv2D)
from tensorlite.keras.layers.embedding import Embedding
from tensorlite.keras.layers.merging import (Add, Average, Concatenate, Dot, Maximum, Minimum,
                                             Multiply, Subtract)
from tensorlite.keras.layers.normalization import BatchNormalization, LayerNormalization
from tensorlite.keras.layers.pooling import (AveragePooling1D, AveragePooling2D,
                                             GlobalAveragePooling1D, GlobalAveragePooling2D,
                                             GlobalMaxPooling1D, GlobalMaxPooling2D,
                                             MaxPooling1D, MaxPooling2D)
from tensorlite.keras.layers.recurrent import GRU, LSTM, RNN, LSTMCell, SimpleRNN
from tensorlite.keras.layers.reshaping import (Cropping1D, Cropping2D, Permute, RepeatVector,
                                               UpSampling1D, UpSampling2D, ZeroPadding1D,
                                               ZeroPadding2D)
from tests.op_check import check_op, rand


# -- the shared layer check -------------------------------------------------------------------
def _resolve(layer, path):
    *owners, attr = path.split(".")
    obj = layer
    for o in owners:
        obj = getattr(obj, o)
    return obj, attr


@contextlib.contextmanager
def substituted(layer, names, values):
    """Temporarily replaces the layer's weights `names` (dotted paths) by tensors."""
    saved = []
    try:
        for name, value in zip(names, values):
            obj, attr = _resolve(layer, name)
            saved.append((obj, attr, obj.__dict__[attr]))
            object.__setattr__(obj, attr, value)
        yield
    finally:
        for obj, attr, old in reversed(saved):
            object.__setattr__(obj, attr, old)


def layer_fn(layer, names, **call_kwargs):
    """f(x, *weights) -> layer(x, **call_kwargs) with the weights substituted."""
    def f(x, *ws):
        with substituted(layer, names, ws):
            return layer(x, **call_kwargs)
    return f


def random_weights(layer, names, seed=1, scale=1.0):
    """Sets the named weights to random float64 values; returns them."""
    out = []
    for i, name in enumerate(names):
        obj, attr = _resolve(layer, name)
        var = getattr(obj, attr)
        value = rand(*var.shape.as_list(), seed=seed + i) * scale
        var.assign(value.astype(var.dtype.as_numpy_dtype))
        out.append(value)
    return out


def check_layer(layer, np_fn, x, weights=(), order=1, call_kwargs=None, rtol=1e-6, atol=1e-8,
                scale=1.0, extra_args=()):
    """check_op on a layer: outputs vs `np_fn(x, *weight_values)`, gradients w.r.t. x and
    the named weights, shape rules and the batched jacobian."""
    call_kwargs = call_kwargs or {}
    layer(tf.constant(x) if isinstance(x, np.ndarray) else x, **call_kwargs)  # builds
    names = list(weights)
    values = random_weights(layer, names, scale=scale)
    fn = layer_fn(layer, names, **call_kwargs)
    check_op(fn, np_fn, [x, *values], order=order, rtol=rtol, atol=atol)
    return values


# -- every layer: names, configs, variables ---------------------------------------------------
def _sample_layers():
    """(layer, input) pairs covering every layer class in these modules."""
    img, seq, vec = tf.ones([2, 6, 6, 3]), tf.ones([2, 5, 3]), tf.ones([2, 4])
    return [
        (Conv2D(4, 3, kernel_regularizer="l2", kernel_constraint="non_neg"), img),
        (Conv1D(4, 2, padding="causal", dilation_rate=2), seq),
        (DepthwiseConv2D(3, depth_multiplier=2), img),
        (SeparableConv2D(4, 3, padding="same"), img),
        (Conv2DTranspose(2, 3, strides=2, output_padding=1), img),
        (Conv1DTranspose(2, 3, strides=2), seq),
        (MaxPooling2D(), img), (AveragePooling2D(3, 1, "same"), img),
        (MaxPooling1D(), seq), (AveragePooling1D(), seq),
        (GlobalAveragePooling2D(), img), (GlobalMaxPooling2D(keepdims=True), img),
        (GlobalAveragePooling1D(), seq), (GlobalMaxPooling1D(), seq),
        (BatchNormalization(momentum=0.9), img), (LayerNormalization(axis=[1, 2]), img),
        (Embedding(10, 3, mask_zero=True), tf.constant([[1, 2, 0]])),
        (LSTM(3, return_sequences=True), seq), (GRU(3, reset_after=False), seq),
        (SimpleRNN(3, go_backwards=True), seq), (RNN(LSTMCell(3), return_state=True), seq),
        (ZeroPadding2D(((1, 2), (0, 1))), img), (ZeroPadding1D(2), seq),
        (Cropping2D(1), img), (Cropping1D((1, 2)), seq),
        (UpSampling2D(interpolation="bilinear"), img), (UpSampling1D(3), seq),
        (Permute((2, 1)), seq), (RepeatVector(3), vec),
        (EinsumDense("ab,bc->ac", 5, bias_axes="c"), vec),
    ]


def _config_equal(a, b):
    a, b = dict(a), dict(b)
    a.pop("name"), b.pop("name")
    return a == b


@pytest.mark.parametrize("layer,x", _sample_layers(), ids=lambda v: type(v).__name__)
def test_config_round_trip_and_output_shape(layer, x):
    y = layer(x)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert _config_equal(clone.get_config(), config)
    y2 = clone(x)
    first = y[0] if isinstance(y, list) else y
    first2 = y2[0] if isinstance(y2, list) else y2
    assert first.shape == first2.shape
    if not isinstance(layer, Embedding):
        predicted = layer.compute_output_shape(x.shape)
        predicted = predicted[0] if isinstance(predicted, list) else predicted
        assert predicted.as_list() == first.shape.as_list()
    # the clone holds the same number of weights with the same shapes
    assert [w.shape for w in clone.weights] == [w.shape for w in layer.weights]


def test_merge_and_attention_configs_round_trip():
    a, b = tf.ones([2, 3, 4]), tf.ones([2, 3, 4])
    for layer in [Add(), Subtract(), Multiply(), Average(), Maximum(), Minimum(),
                  Concatenate(axis=1), Dot((2, 2), normalize=True)]:
        y = layer([a, b])
        clone = type(layer).from_config(layer.get_config())
        np.testing.assert_allclose(clone([a, b]).numpy(), y.numpy())
        assert layer.compute_output_shape([a.shape, b.shape]).as_list() == y.shape.as_list()
    for layer in [Attention(use_scale=True, score_mode="concat", dropout=0.1),
                  AdditiveAttention(use_scale=False)]:
        layer([a, b])
        clone = type(layer).from_config(layer.get_config())
        assert _config_equal(clone.get_config(), layer.get_config())
    mha = MultiHeadAttention(2, 3, value_dim=5, output_shape=6, attention_axes=(1,),
                             dropout=0.2, use_bias=False)
    assert mha(a, b).shape == (2, 3, 6)
    clone = MultiHeadAttention.from_config(mha.get_config())
    assert _config_equal(clone.get_config(), mha.get_config())
    clone(a, b)
    assert [w.shape for w in clone.weights] == [w.shape for w in mha.weights]


def test_default_names_and_weight_names_follow_keras():
    tf.keras.backend.clear_session()
    conv = Conv2D(2, 3)
    conv(tf.ones([1, 5, 5, 3]))
    assert conv.name == "conv2d"
    assert [w.name for w in conv.weights] == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert [w.shape.as_list() for w in conv.weights] == [[3, 3, 3, 2], [2]]
    assert Conv2D(2, 3).name == "conv2d_1"
    names = [DepthwiseConv2D(3).name, Conv2DTranspose(1, 1).name, MaxPooling2D().name,
             GlobalAveragePooling2D().name, BatchNormalization().name, LSTM(2).name,
             MultiHeadAttention(1, 2).name, UpSampling2D().name, SimpleRNN(1).name]
    assert names == ["depthwise_conv2d", "conv2d_transpose", "max_pooling2d",
                     "global_average_pooling2d", "batch_normalization", "lstm",
                     "multi_head_attention", "up_sampling2d", "simple_rnn"]
    assert Conv2D(1, 1, name="mine").name == "mine"


def test_gradients_flow_to_variables_under_a_tape():
    """Layers read their weights as variables, so a tape sees them (no substitution)."""
    layers = [Conv2D(2, 3), LSTM(3), BatchNormalization(), MultiHeadAttention(2, 2),
              Embedding(5, 2), GRU(2), DepthwiseConv2D(2)]
    inputs = [rand(1, 4, 4, 2), rand(2, 3, 2), rand(3, 2), rand(1, 3, 4), np.array([[1, 4]]),
              rand(2, 3, 2), rand(1, 4, 4, 2)]
    for layer, x in zip(layers, inputs):
        x = tf.constant(x.astype(np.float32) if x.dtype == np.float64 else x)
        layer(x) if not isinstance(layer, MultiHeadAttention) else layer(x, x)
        with tf.GradientTape() as tape:
            y = layer(x, training=True) if not isinstance(layer, MultiHeadAttention) \
                else layer(x, x)
            loss = tf.reduce_sum(tf.square(y))
        grads = tape.gradient(loss, layer.trainable_variables)
        assert len(grads) == len(layer.trainable_variables) > 0
        assert all(g is not None for g in grads), type(layer).__name__
        # the key projection's bias shifts every logit of a query equally, so softmax
        # cancels it: its gradient is zero up to rounding (exactly 0 for some inits)
        assert all(float(tf.reduce_sum(tf.abs(g))) > 0 for g, v in
                   zip(grads, layer.trainable_variables) if "key/bias" not in v.name), \
            type(layer).__name__


def test_regularizers_add_losses():
    conv = Conv2D(2, 3, kernel_regularizer=tf.keras.regularizers.L2(0.5),
                  activity_regularizer="l1")
    y = conv(tf.ones([1, 4, 4, 1]))
    k = conv.kernel.numpy()
    activity, kernel = [float(v) for v in conv.losses]
    np.testing.assert_allclose(activity, 0.01 * np.sum(np.abs(y.numpy())), rtol=1e-5)
    np.testing.assert_allclose(kernel, 0.5 * np.sum(k ** 2), rtol=1e-5)
    lstm = LSTM(2, recurrent_regularizer="l2")
    lstm(tf.ones([1, 2, 3]))
    np.testing.assert_allclose(float(lstm.losses[0]),
                               0.01 * np.sum(lstm.cell.recurrent_kernel.numpy() ** 2),
                               rtol=1e-5)


def test_functional_api_infers_shapes():
    inp = tf.keras.Input((8, 8, 3))
    y = Conv2D(4, 3, padding="same")(inp)
    y = MaxPooling2D()(y)
    assert y.shape.as_list() == [None, 4, 4, 4]
    seq = tf.keras.Input((5,), dtype="int32")
    e = Embedding(10, 6)(seq)
    out, h, c = LSTM(7, return_sequences=True, return_state=True)(e)
    assert out.shape.as_list() == [None, 5, 7] and h.shape.as_list() == [None, 7]
    att = MultiHeadAttention(2, 3)(out, out)
    assert att.shape.as_list() == [None, 5, 7]
    merged = Concatenate()([att, out])
    assert merged.shape.as_list() == [None, 5, 14]


def test_float64_layers_keep_float64():
    for layer, x in [(Conv2D(2, 2, dtype="float64"), tf.ones([1, 3, 3, 1])),
                     (LSTM(2, dtype="float64"), tf.ones([1, 2, 2])),
                     (BatchNormalization(dtype="float64"), tf.ones([2, 2]))]:
        y = layer(x)
        assert y.dtype == tf.float64
        assert all(w.dtype == tf.float64 for w in layer.weights)


def test_sequential_starting_with_embedding_summarizes_before_first_call():
    """tf.keras 2's Embedding defaults to input_shape=(None,): summary() works at once and
    shows the unknown sequence length as None."""
    model = tf.keras.Sequential([tf.keras.layers.Embedding(100, 8),
                                 tf.keras.layers.GlobalAveragePooling1D(),
                                 tf.keras.layers.Dense(1)])
    lines = []
    model.summary(print_fn=lines.append)
    text = "\n".join(lines)
    assert "(None, None, 8)" in text and "Total params: 809" in text
    assert model(np.array([[1, 2, 3]])).shape == (1, 1)

"""Shape-polymorphic graphs: `input_signature` with None dimensions, `reduce_retracing=True`
and `get_concrete_function(tf.TensorSpec([None, ...]))` give ONE graph for every batch size;
inside it the varying dimensions are None (the registry's shape rules, not a stand-in
shape), its outputs' static shapes have None where TensorFlow's do, and a graph that would
bake a size into itself is caught by a second trace and specialised per shape."""
import numpy as np
import pytest

import tensorlite as tf

RNG = np.random.default_rng(0)
W1 = tf.constant(RNG.normal(size=(3, 4)).astype(np.float32))
B1 = tf.constant(RNG.normal(size=(4,)).astype(np.float32))
K = tf.constant(RNG.normal(size=(3, 3, 1, 2)).astype(np.float32))
W2 = tf.constant(RNG.normal(size=(8, 5)).astype(np.float32))


def mlp(x):
    return tf.nn.softmax(tf.nn.relu(tf.matmul(x, W1) + B1))


def cnn(x):
    h = tf.nn.max_pool2d(tf.nn.relu(tf.nn.conv2d(x, K, 1, "SAME")), 2, 2, "VALID")
    return tf.matmul(tf.reshape(h, [-1, 8]), W2)


def reduce(x):
    return tf.reduce_sum(x, axis=0) + tf.reduce_mean(x) * tf.reduce_max(x, axis=1)[:1]


# name: (function, input shape with None, its outputs' static shape)
MODELS = {"mlp": (mlp, [None, 3], [None, 4]), "cnn": (cnn, [None, 4, 4, 1], [None, 5]),
          "reduce": (reduce, [None, 3], [3])}


def _make(name, how):
    fn, spec, _ = MODELS[name]
    if how == "input_signature":
        return tf.function(fn, input_signature=[tf.TensorSpec(spec, tf.float32)])
    return tf.function(fn, reduce_retracing=True)


@pytest.mark.parametrize("how", ["input_signature", "reduce_retracing"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_one_trace_for_batch_sizes_1_7_32_and_eager_answers(name, how):
    fn, spec, out_shape = MODELS[name]
    f = _make(name, how)
    for n in (1, 7, 32):
        x = tf.constant(RNG.normal(size=[n] + spec[1:]).astype(np.float32))
        np.testing.assert_allclose(f(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)
    assert f.experimental_get_tracing_count() == 1
    assert len(f._cache) == 1 and f.shape_specialised is None
    cf = f.last_concrete_function
    assert cf.graph.unknown_shape_ops == set()  # every op's shape rule handled the None
    assert cf.output_shapes.as_list() == out_shape


@pytest.mark.parametrize("name", sorted(MODELS))
def test_concrete_function_from_a_tensor_spec_has_none_dims_and_runs_on_any_size(name):
    fn, spec, out_shape = MODELS[name]
    f = tf.function(fn)
    cf = f.get_concrete_function(tf.TensorSpec(spec, tf.float32))
    assert cf.output_shapes.as_list() == out_shape
    assert cf.output_dtypes == tf.float32
    for n in (1, 7, 32):
        x = tf.constant(RNG.normal(size=[n] + spec[1:]).astype(np.float32))
        np.testing.assert_allclose(cf(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(f(x).numpy(), fn(x).numpy(), rtol=1e-5, atol=1e-6)
    assert f.experimental_get_tracing_count() == 1  # calls reuse the general graph


def test_keras_cnn_with_flatten_is_one_graph():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(4, 3, activation="relu", input_shape=(8, 8, 1)),
        tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
    f = tf.function(lambda x: model(x),
                    input_signature=[tf.TensorSpec([None, 8, 8, 1], tf.float32)])
    for n in (1, 7, 32):
        x = RNG.normal(size=(n, 8, 8, 1)).astype(np.float32)
        np.testing.assert_allclose(f(tf.constant(x)).numpy(), model(x).numpy(), rtol=1e-5,
                                   atol=1e-6)
    assert f.experimental_get_tracing_count() == 1 and len(f._cache) == 1
    assert f.shape_specialised is None
    assert f.last_concrete_function.output_shapes.as_list() == [None, 5]


def test_traced_tensors_are_symbolic_inside_the_function(capsys):
    seen = {}

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        print("Tracing with", x)
        y = tf.matmul(x, W1)
        seen["x"], seen["y"] = x.shape.as_list(), y.shape.as_list()
        seen["names"] = x.name, y.name
        seen["rows"] = tf.shape(y)[0].shape.as_list()
        return y
    f(tf.ones([2, 3]))
    f(tf.ones([5, 3]))
    assert seen["x"] == [None, 3] and seen["y"] == [None, 4]
    assert seen["names"] == ("x:0", "BatchMatMulV2:0") and seen["rows"] == []
    out = capsys.readouterr().out
    assert out == 'Tracing with Tensor("x:0", shape=(None, 3), dtype=float32)\n'


def test_python_shape_arithmetic_on_a_none_dim_fails_as_in_tensorflow():
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def f(x):
        return tf.reshape(x, [x.shape[0] * 2, -1])
    with pytest.raises(TypeError):
        f(tf.ones([4]))


def test_pretty_printed_signature_shows_none_dims():
    f = tf.function(mlp, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    f(tf.ones([2, 3]))
    text = f.pretty_printed_concrete_signatures()
    assert "x: float32 Tensor, shape=(None, 3)" in text
    assert "float32 Tensor, shape=(None, 4)" in text


def test_concrete_function_called_with_another_batch_and_wrong_rank():
    cf = tf.function(mlp).get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    assert cf(tf.ones([9, 3])).shape == (9, 4)
    with pytest.raises(tf.errors.InvalidArgumentError, match="float32"):
        cf(tf.ones([2, 3], tf.int32))
    with pytest.raises(TypeError, match=r"incompatible .*\[None, 3\]"):
        cf(tf.ones([2, 3, 1]))
    with pytest.raises(TypeError, match="incompatible"):
        cf(tf.ones([2, 2]))


def test_branches_and_loops_see_none_dims_and_keep_one_graph():
    seen = []

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    def f(x):
        if tf.reduce_sum(x) > 0:
            seen.append(x.shape.as_list())
            y = x * 2.0
        else:
            y = -x
        i = tf.constant(0)
        while i < 3:
            seen.append(y.shape.as_list())
            y = y + 1.0
            i += 1
        return y
    for n in (1, 4, 9):
        x = RNG.uniform(size=(n, 3)).astype(np.float32)
        np.testing.assert_allclose(f(tf.constant(x)).numpy(), x * 2 + 3, rtol=1e-6)
    assert seen and all(s == [None, 3] for s in seen)
    assert f.experimental_get_tracing_count() == 1 and len(f._cache) == 1
    assert f.last_concrete_function.output_shapes.as_list() == [None, 3]


LOSSES = {
    "mean_square": lambda x, w, b: tf.reduce_mean(tf.square(tf.matmul(x, w) + b)),
    "relu_sum": lambda x, w, b: tf.reduce_sum(tf.nn.relu(tf.matmul(x, w) + b)),
    "sparse_xent": lambda x, w, b: tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(
        tf.cast(x[:, 0] > 0, tf.int32), tf.matmul(x, w) + b)),
    "pow_max_expand": lambda x, w, b: tf.reduce_max(
        tf.expand_dims(tf.nn.bias_add(tf.matmul(x, w), b) ** 2, -1), axis=[1, 2]),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_training_step_is_one_graph_for_every_batch_size(name):
    loss_fn = LOSSES[name]
    w = tf.Variable(RNG.normal(size=(3, 4)).astype(np.float32))
    b = tf.Variable(RNG.normal(size=(4,)).astype(np.float32))

    def grads(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(loss_fn(x, w, b))
        return tape.gradient(loss, [w, b])
    step = tf.function(grads, input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    for n in (1, 7, 32):
        x = tf.constant(RNG.normal(size=(n, 3)).astype(np.float32))
        for got, want in zip(step(x), grads(x)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-6)
    assert step.shape_specialised is None and len(step._cache) == 1


def test_keras_cnn_training_step_is_one_graph():
    model = tf.keras.Sequential([
        tf.keras.layers.Conv2D(2, 3, activation="relu", input_shape=(6, 6, 1)),
        tf.keras.layers.MaxPooling2D(), tf.keras.layers.Flatten(), tf.keras.layers.Dense(3)])
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def grads(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x))
        return tape.gradient(loss, model.trainable_variables)
    step = tf.function(grads, input_signature=[tf.TensorSpec([None, 6, 6, 1], tf.float32),
                                               tf.TensorSpec([None], tf.int32)])
    for n in (1, 7, 32):
        x = tf.constant(RNG.normal(size=(n, 6, 6, 1)).astype(np.float32))
        y = tf.constant(RNG.integers(0, 3, size=n).astype(np.int32))
        for got, want in zip(step(x, y), grads(x, y)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-4, atol=1e-5)
    assert step.shape_specialised is None and len(step._cache) == 1


def _layers():
    layers = tf.keras.layers
    return {"reshape": (layers.Reshape((2, 3)), [6], True),
            "lstm": (layers.LSTM(3), [5, 2], False),
            "time_distributed": (layers.TimeDistributed(layers.Dense(2)), [3, 4], False),
            "conv2d_transpose": (layers.Conv2DTranspose(2, 3, strides=2), [3, 3, 1], True),
            "batch_norm": (layers.BatchNormalization(), [3], True),
            "embedding": (layers.Embedding(10, 3), [4], True)}


@pytest.mark.parametrize("name", sorted(_layers()))
def test_keras_layers_under_a_none_batch_dimension(name):
    # Keras code reads sizes as it does eagerly; where that fixes a size in the graph (an
    # RNN's initial state), the size check gives each shape its own graph: right answers
    layer, shape, one_graph = _layers()[name]
    ints = name == "embedding"

    def make(n):
        if ints:
            return tf.constant(RNG.integers(0, 10, [n] + shape).astype(np.int32))
        return tf.constant(RNG.normal(size=[n] + shape).astype(np.float32))
    layer(make(2))
    f = tf.function(lambda x: layer(x), input_signature=[
        tf.TensorSpec([None] + shape, tf.int32 if ints else tf.float32)])
    for n in (1, 3, 6):
        x = make(n)
        np.testing.assert_allclose(f(x).numpy(), layer(x).numpy(), rtol=1e-4, atol=1e-5)
    assert f.experimental_get_tracing_count() == 1
    assert (f.shape_specialised is None) == one_graph


def test_reduce_retracing_generalises_other_varying_dims(capsys):
    @tf.function(reduce_retracing=True)
    def g(x):
        print("Tracing with", x)
        return tf.reduce_sum(x, axis=1)
    for shape in ([2, 3], [5, 3], [5, 4], [7, 9], [1, 2]):  # e.g. varying sequence lengths
        x = RNG.normal(size=shape).astype(np.float32)
        np.testing.assert_allclose(g(tf.constant(x)).numpy(), x.sum(1), rtol=1e-5)
    assert capsys.readouterr().out == (
        'Tracing with Tensor("x:0", shape=(None, 3), dtype=float32)\n'
        'Tracing with Tensor("x:0", shape=(None, None), dtype=float32)\n')
    assert g.experimental_get_tracing_count() == 2
    assert "float32[None, 3] -> float32[None, None]" in g.retrace_log[-1]


def test_structured_input_signature():
    cf = tf.function(mlp).get_concrete_function(tf.TensorSpec([None, 3], tf.float32))
    assert cf.structured_input_signature == (
        (tf.TensorSpec([None, 3], tf.float32, name="x"),), {})

    @tf.function
    def f(a, n, b):
        return a * n + b
    args, kwargs = f.get_concrete_function(tf.constant([1.0, 2.0]), 3,
                                           b=tf.constant(1.0)).structured_input_signature
    assert args == (tf.TensorSpec([2], tf.float32, name="a"), 3)
    assert kwargs == {"b": tf.TensorSpec([], tf.float32, name="b")}

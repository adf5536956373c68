"""Einsum and attention in TF Lite: TFLite has no EINSUM, so the converter writes each
contraction as BATCH_MATMUL / FULLY_CONNECTED with TRANSPOSE and RESHAPE around it
(tensorlite/lite/convert/einsum.py). LiteRT and tensorlite's interpreter run the files and
give tensorlite's outputs (1e-5), at batch 1 and, resized, at batch 3."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.lite.interpreter import Interpreter

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is in the test extra")
from tests.lite_helpers import (attention_model, builtin_ops, dequantize_output,  # noqa: E402
                                every_int8_tensor_matches, full_integer, litert,
                                quantize_input, spread)

RNG = np.random.default_rng(7)
SIZES = dict(zip("abcdeijkz", [2, 3, 4, 2, 3, 5, 4, 3, 2]))


def _shape(labels):
    return [SIZES[c] for c in labels]


def _run_all(interpreter, xs):
    """Runs inputs `xs` (one array per model input), resizing every input first."""
    details = interpreter.get_input_details()
    for d, x in zip(details, xs):
        interpreter.resize_tensor_input(d["index"], list(x.shape))
    interpreter.allocate_tensors()
    for d, x in zip(interpreter.get_input_details(), xs):
        interpreter.set_tensor(d["index"], x)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


def _model(equation, constant):
    """A Keras model computing `equation`: the batch label "z" leads each varying operand;
    the operand listed in `constant` is a fixed weight."""
    ins, _ = equation.split("->")
    ins = ins.split(",")
    weights = {i: RNG.normal(size=_shape(s)).astype("float32")
               for i, s in enumerate(ins) if i in constant}
    inputs = [tf.keras.Input(_shape(s)[1:]) for i, s in enumerate(ins) if i not in constant]

    def compute(xs):
        xs = list(xs) if isinstance(xs, (list, tuple)) else [xs]
        operands = [tf.constant(weights[i]) if i in weights else xs.pop(0)
                    for i in range(len(ins))]
        return tf.einsum(equation, *operands)

    out = tf.keras.layers.Lambda(compute)(inputs if len(inputs) > 1 else inputs[0])
    return tf.keras.Model(inputs, out), [s for i, s in enumerate(ins) if i not in constant]


@pytest.mark.parametrize("equation, constant", [
    ("zbc,cd->zbd", {1}),            # EinsumDense: FULLY_CONNECTED keeping leading dims
    ("zbc,cde->zbde", {1}),          # query/key/value projections
    ("zbcd,cde->zbe", {1}),          # the output projection: two contracted labels
    ("ze,ek->zk", {1}),              # a plain Dense
    ("ek,ze->zk", {0}),              # the weight first: swapped into FULLY_CONNECTED
    ("zecd,zbcd->zcbe", set()),      # attention scores: BATCH_MATMUL(adj_y), no reshape
    ("zcbe,zecd->zbcd", set()),      # attention-weighted values
    ("zij,zkj->zik", set()),
    ("zi,zi->z", set()),             # a dot product per example: empty free groups
    ("zi,zj->zij", set()),           # an outer product: nothing contracted
    ("zij,zik->jk", set()),          # the batch label contracted: -1 in the depth group
    ("zb,zb->zb", set()),            # all labels batched: an elementwise product
    ("zij,jk->zk", {1}),             # i summed inside the first operand only (SUM)
    ("zbij,bjk->zbik", {1}),         # a constant batched operand
    ("zabcdij,abcdjk->zabcdik", {1}),  # five batch labels: merged for BATCH_MATMUL
])
def test_einsum_in_litert_and_ours(equation, constant):
    model, varying = _model(equation, constant)
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    assert "EINSUM" not in builtin_ops(data)
    for batch in (1, 3):
        xs = [RNG.normal(size=[batch] + _shape(s)[1:]).astype("float32") for s in varying]
        want = model(xs if len(xs) > 1 else xs[0]).numpy()
        ours = Interpreter(model_content=data)
        for interpreter in (litert(data), ours):
            got = _run_all(interpreter, xs)
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_einsum_dense_fuses_bias_and_activation():
    inp = tf.keras.Input((4, 6))
    out = tf.keras.layers.EinsumDense("abc,cd->abd", output_shape=(4, 5), bias_axes="d",
                                      activation="relu")(inp)
    model = tf.keras.Model(inp, out)
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    assert builtin_ops(data) == ["FULLY_CONNECTED"]
    x = RNG.normal(size=(1, 4, 6)).astype("float32")
    np.testing.assert_allclose(_run_all(litert(data), [x]), model(x).numpy(), rtol=1e-5,
                               atol=1e-6)


def test_einsum_without_a_tflite_form_names_the_equation():
    @tf.function
    def f(x):
        return tf.einsum("ii->i", x)

    concrete = f.get_concrete_function(tf.TensorSpec([3, 3], tf.float32))
    with pytest.raises(errors.UnimplementedError, match=r"Einsum.*test_lite_einsum.*'ii->i'"):
        tf.lite.TFLiteConverter.from_concrete_functions([concrete]).convert()


def test_attention_model_in_litert_and_ours():
    tf.random.set_seed(3)
    model = attention_model()
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    assert {"BATCH_MATMUL", "FULLY_CONNECTED", "SOFTMAX"} <= set(builtin_ops(data))
    ours = Interpreter(model_content=data)
    for batch in (1, 4):
        x = RNG.normal(size=(batch, 6, 8)).astype("float32")
        want = model(x).numpy()
        for interpreter in (litert(data), litert(data, reference=False), ours):
            np.testing.assert_allclose(_run_all(interpreter, [x]), want, rtol=1e-5,
                                       atol=1e-6)


def test_multi_head_attention_dynamic_range():
    # projections of >= 1024 weights become int8 FULLY_CONNECTED (hybrid) weights
    tf.random.set_seed(1)
    inp = tf.keras.Input((10, 64))
    out = tf.keras.layers.MultiHeadAttention(num_heads=4, key_dim=16)(inp, inp)
    model = tf.keras.Model(inp, tf.keras.layers.GlobalAveragePooling1D()(out))
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    data = converter.convert()
    interpreter = litert(data)
    assert sum(d["dtype"] == np.int8 for d in interpreter.get_tensor_details()) >= 4
    x = RNG.normal(size=(2, 10, 64)).astype("float32")
    want = model(x).numpy()
    for got in (_run_all(interpreter, [x]), _run_all(Interpreter(model_content=data), [x])):
        assert np.max(np.abs(got - want)) < 0.01  # outputs up to about 0.2


def test_full_integer_attention_bit_identical_to_litert():
    # int8 BATCH_MATMUL, TRANSPOSE and SOFTMAX around the einsums (LayerNormalization's
    # int8 ops: test_lite_interpreter.py)
    tf.random.set_seed(3)
    inp = tf.keras.Input((6, 8))
    a = tf.keras.layers.Attention()([inp, inp])
    b = tf.keras.layers.MultiHeadAttention(num_heads=2, key_dim=4)(inp, inp)
    x = tf.keras.layers.GlobalAveragePooling1D()(tf.keras.layers.Concatenate()([a, b]))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(3)(x))
    data, xq = full_integer(model, (6, 8))
    assert builtin_ops(data).count("BATCH_MATMUL") == 4
    seen = every_int8_tensor_matches(data, xq)
    assert sum(k.startswith(("einsum", "batchmatmul")) and spread(v) > 100
               for k, v in seen.items()) >= 4
    interpreter = litert(data, reference=False)
    detail = interpreter.get_input_details()[0]
    x = np.random.default_rng(8).normal(size=(64, 6, 8)).astype("float32")
    got = dequantize_output(_run_all(interpreter, [quantize_input(x, detail)]),
                            interpreter.get_output_details()[0])
    want = model(x).numpy()
    # int8 activations at every step (softmax at 1/256); inputs beyond the calibrated
    # range clip, so a few outputs are off by more
    err = np.abs(got - want) / np.max(np.abs(want))
    assert np.mean(err) < 0.02 and np.percentile(err, 95) < 0.06

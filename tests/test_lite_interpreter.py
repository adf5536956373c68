"""tf.lite.Interpreter (NumPy) against LiteRT on the same files: float outputs equal
(1e-5), int8 outputs bit-identical (LiteRT's reference kernels), its static memory plan
sharing memory, custom ops from Python, and TF Lite's errors for bad input."""
import os
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.lite import flatbuf
from tensorlite.lite.interpreter import Interpreter

pytest.importorskip("ai_edge_litert", reason="ai-edge-litert is in the test extra")
from tests.lite_helpers import (builtin_ops, every_int8_tensor_matches,  # noqa: E402
                                fitted_cifar_cnn, full_integer, generate_model, litert, mlp,
                                quantize_input, run, spread, template_images)


def _ours(data):
    interpreter = Interpreter(model_content=data)
    interpreter.allocate_tensors()
    return interpreter


@pytest.fixture(scope="module")
def cnn():
    return fitted_cifar_cnn()


def _representative():
    for i in range(16):
        yield [template_images(1, 100 + i)[0]]


def test_float_mlp_and_cnn_match_tensorlite_and_litert():
    for model, x in ((mlp(), np.random.default_rng(0).normal(size=(3, 8)).astype("float32")),
                     (generate_model(), template_images(2, 3)[0])):
        data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
        got = run(_ours(data), x)
        np.testing.assert_allclose(got, model(x).numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got, run(litert(data), x), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("io", [tf.float32, tf.int8, tf.uint8])
def test_int8_cnn_bit_identical_to_litert(cnn, io):
    converter = tf.lite.TFLiteConverter.from_keras_model(cnn)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = _representative
    converter.inference_input_type = converter.inference_output_type = io
    data = converter.convert()
    ours = _ours(data)
    x = quantize_input(template_images(12, 7)[0], ours.get_input_details()[0])
    got, want = run(ours, x), run(litert(data), x)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("numba", ["on", "madd512", "madd256", "blas", "off"])
@pytest.mark.parametrize("batch, io", [(1, tf.int8), (3, tf.uint8), (6, tf.int8)])
def test_int8_cnn_few_rows_bit_identical_to_litert(cnn, batch, io, numba, monkeypatch):
    # the convolutions and the wide FULLY_CONNECTED are exact integer products on a
    # compiled GEMM (int_gemm: VNNI, else vpmaddwd on AVX-512BW or AVX2); on the float32
    # BLAS path ("blas"), batches of at most DOTS_MAX_ROWS run FULLY_CONNECTED as compiled
    # int8 dot products with the requantization fused, and each convolution's im2col is
    # compiled: every int8 tensor must be LiteRT's on each path, and on the NumPy one
    # (numba off) too
    from tensorlite.lite.kernels import int_gemm  # noqa: PLC0415
    from tensorlite.ops import numba_backend  # noqa: PLC0415
    if numba != "off" and not numba_backend.available():
        pytest.skip("numba (the jit extra) is not installed")
    if numba in int_gemm.KINDS and not int_gemm.available(numba):
        pytest.skip(f"this CPU lacks {int_gemm.KINDS[numba].needs}")
    if numba != "on":
        monkeypatch.setenv("TENSORLITE_INT8_GEMM", numba if numba != "off" else "blas")
    converter = tf.lite.TFLiteConverter.from_keras_model(cnn)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = _representative
    converter.inference_input_type = converter.inference_output_type = io
    data = converter.convert()
    if numba == "off":  # after the conversion, whose Keras convolutions chose numba's
        monkeypatch.setitem(numba_backend._STATE, "on", False)
        monkeypatch.setattr(numba_backend, "_KERNELS", {})
    ours = _ours(data)
    x = quantize_input(template_images(batch, 11)[0], ours.get_input_details()[0])
    got, want = run(ours, x), run(litert(data), x)
    np.testing.assert_array_equal(got, want)
    assert len(every_int8_tensor_matches(data, x)) >= 8  # the convolutions' and FCs' outputs


@pytest.mark.parametrize("gemm", ["vnni", "madd512", "madd256", "blas"])
def test_int8_strided_dilated_convolutions_bit_identical_to_litert(gemm, monkeypatch):
    # each GEMM kernel's im2col over strides, SAME padding (padded with the zero point),
    # dilation and depths not a multiple of 4, and a FULLY_CONNECTED of 16 units on it
    from tensorlite.lite.kernels import int_gemm  # noqa: PLC0415
    if gemm != "blas" and not int_gemm.available(gemm):
        pytest.skip(f"the {gemm} kernel needs llvmlite and {int_gemm.KINDS[gemm].needs}")
    monkeypatch.setenv("TENSORLITE_INT8_GEMM", gemm)
    layers = tf.keras.layers
    model = tf.keras.Sequential([
        layers.Conv2D(16, 3, strides=2, padding="same", activation="relu",
                      input_shape=(13, 11, 3)),
        layers.Conv2D(32, 3, dilation_rate=2, activation="relu6"),
        layers.Conv2D(16, (1, 2), strides=(1, 2)), layers.Flatten(), layers.Dense(16)])
    data, x = full_integer(model, (13, 11, 3))
    for batch in (1, 5):
        seen = every_int8_tensor_matches(data, x[:batch])
        assert len(seen) >= 5


# Hybrid kernels quantize float activations on every run: a one-ulp float difference
# upstream (summation order) can move a value across a rounding boundary, one int8 step, so
# they agree within a quantization step rather than to 1e-5; at batch 1 they agree to 1e-6.
@pytest.mark.parametrize("float16, batch, atol", [(False, 1, 1e-6), (False, 3, 1e-2),
                                                  (True, 3, 1e-6)],
                         ids=["dynamic_range", "dynamic_range_batch", "float16"])
def test_hybrid_and_float16_match_litert(cnn, float16, batch, atol):
    converter = tf.lite.TFLiteConverter.from_keras_model(cnn)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    if float16:
        converter.target_spec.supported_types = [tf.float16]
    data = converter.convert()
    x = template_images(batch, 8)[0]
    np.testing.assert_allclose(run(_ours(data), x), run(litert(data), x), rtol=1e-5,
                               atol=atol)


def test_static_memory_plan_shares_the_arena():
    data = tf.lite.TFLiteConverter.from_keras_model(generate_model()).convert()
    ours = _ours(data)
    sizes = {d["index"]: int(np.prod(d["shape"])) * np.dtype(d["dtype"]).itemsize
             for d in ours.get_tensor_details() if ours.const(d["index"]) is None}
    ops = ours._get_ops_details()
    inputs = [d["index"] for d in ours.get_input_details()]
    outputs = [d["index"] for d in ours.get_output_details()]
    life = {t: [0, len(ops) - 1] if t in inputs else None for t in sizes}
    for step, op in enumerate(ops):
        for t in list(op["inputs"]) + list(op["outputs"]):
            if t in sizes and t not in inputs:
                life[t] = [step, step] if life[t] is None else [life[t][0], step]
    for t in outputs:
        life[t][1] = len(ops) - 1
    peak = max(sum(n for t, n in sizes.items() if life[t][0] <= s <= life[t][1])
               for s in range(len(ops)))
    assert ours.arena_size < 0.7 * sum(sizes.values())  # dead activations' memory reused
    assert ours.arena_size <= peak + 64 * len(sizes)  # and close to the least possible
    for a in sizes:  # tensors alive together never share bytes
        for b in sizes:
            together = a < b and life[a][0] <= life[b][1] and life[b][0] <= life[a][1]
            if together:
                oa, ob = ours._offsets[a], ours._offsets[b]
                assert oa + sizes[a] <= ob or ob + sizes[b] <= oa
    preserved = Interpreter(model_content=data, experimental_preserve_all_tensors=True)
    preserved.allocate_tensors()
    assert preserved.arena_size >= sum(sizes.values())
    x = template_images(1, 9)[0]
    np.testing.assert_array_equal(run(ours, x), run(preserved, x))


def _pooled_cnn():
    layers = tf.keras.layers
    return tf.keras.Sequential([
        layers.Conv2D(6, 3, padding="same", activation="relu6", input_shape=(12, 12, 3)),
        layers.MaxPooling2D(3, strides=2, padding="same"),
        layers.Conv2D(8, 3, activation="relu"), layers.MaxPooling2D(2), layers.Flatten(),
        layers.Dense(16, activation="relu"), layers.Dense(5, activation="softmax")])


@pytest.mark.parametrize("batch", [1, 3])
def test_bound_execution_plan_matches_kernel_invokes_and_litert(batch):
    """The pre-bound steps (and the activations moved onto the max pools) compute what the
    kernels' plain invokes compute on the file as written, and what LiteRT computes."""
    tf.random.set_seed(3)
    data = tf.lite.TFLiteConverter.from_keras_model(_pooled_cnn()).convert()
    x = np.random.default_rng(batch).normal(size=(batch, 12, 12, 3)).astype("float32")
    ours = _ours(data)
    got = run(ours, x)
    pools = [n for n in ours._plan if n.name == "MAX_POOL_2D"]
    assert [p.options["fused_activation_function"] for p in pools] == [3, 1]  # RELU6, RELU
    assert all(n.options["fused_activation_function"] == 0 for n in ours._plan
               if n.name == "CONV_2D")
    plain = Interpreter(model_content=data, experimental_preserve_all_tensors=True)
    plain.allocate_tensors()
    run(plain, x)  # file's options unchanged; now every kernel's invoke, no bound step
    for node in plain._plan:
        node.kernel.invoke(plain, node)
    want = plain.get_tensor(plain.get_output_details()[0]["index"])
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, run(litert(data), x), rtol=1e-5, atol=1e-6)


def test_resize_and_signature_runner(tmp_path):
    model = mlp()
    data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    (tmp_path / "m.tflite").write_bytes(data)
    ours = Interpreter(model_path=str(tmp_path / "m.tflite"))
    name, name_in = model.output_names[0], model.layers[0].name + "_input"  # tf.keras 2's
    assert ours.get_signature_list() == {"serving_default": {"inputs": [name_in],
                                                             "outputs": [name]}}
    runner = ours.get_signature_runner()
    x = np.random.default_rng(1).normal(size=(4, 8)).astype("float32")
    out = runner(**{name_in: x})  # resized from batch 1 to 4
    np.testing.assert_allclose(out[name], model(x).numpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="signature_key"):
        ours.get_signature_runner("nope")


def _custom_op_model(name):
    tensor = {"shape": [1, 2], "type": "FLOAT32", "buffer": 0, "name": "x"}
    return flatbuf.encode({
        "version": 3, "buffers": [{}],
        "operator_codes": [{"deprecated_builtin_code": 32, "builtin_code": "CUSTOM",
                            "custom_code": name}],
        "subgraphs": [{"tensors": [tensor, dict(tensor, name="y")], "inputs": [0],
                       "outputs": [1], "operators": [{"opcode_index": 0, "inputs": [0],
                                                      "outputs": [1]}]}]})


def test_custom_op_registered_from_python():
    data = _custom_op_model("AddPi")
    from ai_edge_litert.interpreter import Interpreter as LiteRT  # noqa: PLC0415
    with pytest.raises((ValueError, RuntimeError), match="AddPi"):
        LiteRT(model_content=data).allocate_tensors()  # the real runtime reads our file
    with pytest.raises(ValueError, match="unresolved custom op: AddPi"):
        Interpreter(model_content=data)

    def add_pi(context, node):  # seed 004's custom op, in Python
        out = context.tensors[node.outputs[0]]
        out[...] = context.tensors[node.inputs[0]] + np.float32(np.pi)

    ours = Interpreter(model_content=data, custom_ops={"AddPi": add_pi})
    ours.allocate_tensors()
    x = np.array([[1.0, 2.0]], np.float32)
    np.testing.assert_allclose(run(ours, x), x + np.float32(np.pi))
    tf.lite.experimental.register_custom_op("AddPiGlobal", add_pi)
    np.testing.assert_allclose(run(_ours(_custom_op_model("AddPiGlobal")), x),
                               x + np.float32(np.pi))


# -- bad input ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def mlp_file():
    return tf.lite.TFLiteConverter.from_keras_model(mlp()).convert()


def test_truncated_and_foreign_files(mlp_file, tmp_path):
    with pytest.raises(ValueError, match="too short"):
        Interpreter(model_content=mlp_file[:6])
    with pytest.raises(ValueError, match="not a valid TensorFlow Lite"):
        Interpreter(model_content=mlp_file[:len(mlp_file) // 3])
    foreign = mlp_file[:4] + b"ONNX" + mlp_file[8:]
    with pytest.raises(ValueError, match="identifier b'ONNX'"):
        Interpreter(model_content=foreign)
    with pytest.raises(ValueError, match="exactly one"):
        Interpreter()


def test_crafted_file_runs_no_code(tmp_path):
    canary = tmp_path / "canary"
    name = f"__import__('os').system('touch {canary}')"
    with pytest.raises(ValueError, match="unresolved custom op"):
        Interpreter(model_content=_custom_op_model(name))
    corrupt = bytearray(_custom_op_model("X"))
    corrupt[0:4] = (len(corrupt) + 1000).to_bytes(4, "little")  # root offset past the end
    with pytest.raises(ValueError, match="not a valid"):
        Interpreter(model_content=bytes(corrupt))
    assert not canary.exists()


def test_tensor_errors(mlp_file):
    ours = Interpreter(model_content=mlp_file)
    index = ours.get_input_details()[0]["index"]
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        ours.invoke()
    with pytest.raises(ValueError, match=r"Run allocate_tensors\(\) first"):
        ours.get_tensor(index)
    ours.allocate_tensors()
    with pytest.raises(ValueError, match="Invalid tensor index 999"):
        ours.get_tensor(999)
    with pytest.raises(ValueError, match="Invalid tensor index -1"):
        ours.set_tensor(-1, np.zeros((1, 8), np.float32))
    with pytest.raises(ValueError, match="Got value of type FLOAT64 but expected type FLOAT32"):
        ours.set_tensor(index, np.zeros((1, 8)))
    with pytest.raises(ValueError, match=r"Dimension mismatch. Got \[2, 8\]"):
        ours.set_tensor(index, np.zeros((2, 8), np.float32))
    ours.resize_tensor_input(index, [2, 8])
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        ours.invoke()


def test_interpreter_imports_only_numpy_and_flatbuffers():
    """Seed 004's small interpreter: tensorlite/lite (not its converter) loads without the
    rest of tensorlite and without any third-party package but NumPy and flatbuffers."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    script = f"""
import sys, types
pkg = types.ModuleType("tensorlite"); pkg.__path__ = [{os.path.join(root, 'tensorlite')!r}]
sys.modules["tensorlite"] = pkg  # tensorlite/__init__.py is not run
before = set(sys.modules)
import tensorlite.lite.interpreter as interpreter
interpreter.Interpreter  # noqa
from tensorlite.lite import kernels; kernels.find("CONV_2D")
new = sorted(m.split(".")[0] if not m.startswith("tensorlite.") else m
             for m in set(sys.modules) - before)
print("\\n".join(new))
"""
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, check=True).stdout.split()
    ours = {m for m in out if m.startswith("tensorlite")}
    # the one module outside lite: the stdlib-only switch of the optional numba backend
    # (the `jit` extra), which the int8 kernels compile their requantization with
    ours -= {"tensorlite.ops", "tensorlite.ops.numba_backend"}
    assert all(m.startswith("tensorlite.lite") and ".convert" not in m for m in ours), ours
    third_party = {m for m in out if not m.startswith("tensorlite") and not m.startswith("_")
                   and m not in sys.stdlib_module_names}
    assert third_party <= {"numpy", "flatbuffers"}, third_party


def test_int8_concatenation_requantizes_its_inputs():
    # TFLite's int8 CONCATENATION reads every input at its output's scale: the converter
    # puts a QUANTIZE (int8 -> int8) before each branch quantized otherwise
    tf.random.set_seed(5)
    inp = tf.keras.Input((6,))
    a = tf.keras.layers.Dense(4, activation="relu")(inp)
    b = tf.keras.layers.Dense(3)(inp)
    model = tf.keras.Model(inp, tf.keras.layers.Dense(3, activation="softmax")(
        tf.keras.layers.Concatenate()([a, b])))
    rng = np.random.default_rng(6)

    def representative():
        for _ in range(32):
            yield [rng.normal(size=(1, 6)).astype("float32")]
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    data = converter.convert()
    interpreter = litert(data)
    ops = [d["op_name"] for d in interpreter._get_ops_details()]
    assert ops.count("QUANTIZE") >= 2 and "CONCATENATION" in ops
    x = rng.normal(size=(16, 6)).astype("float32")
    got = run(interpreter, x)
    np.testing.assert_array_equal(run(_ours(data), x), got)
    assert np.max(np.abs(got - model(x).numpy())) < 0.05


def test_int8_mean_bit_identical_to_litert():
    # GlobalAveragePooling2D/1D: integer MEAN with 1/count folded into the multiplier
    tf.random.set_seed(5)
    inp = tf.keras.Input((6, 6, 3))
    h = tf.keras.layers.Conv2D(8, 3, activation="relu")(inp)
    a = tf.keras.layers.GlobalAveragePooling2D()(h)
    b = tf.keras.layers.GlobalAveragePooling1D()(tf.keras.layers.Reshape((16, 8))(h))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(3)(tf.keras.layers.Concatenate()([a, b])))
    seen = every_int8_tensor_matches(*full_integer(model, (6, 6, 3)))
    means = [v for k, v in seen.items() if k.startswith("mean")]
    assert len(means) == 2 and all(spread(v) > 100 for v in means)


def test_int8_add_sub_mul_bit_identical_to_litert():
    # a residual ADD, an elementwise MUL and SUB of two branches, and a per-channel
    # scale and shift by constants (a BatchNormalization after its activation)
    tf.random.set_seed(5)
    inp = tf.keras.Input((6,))
    h = tf.keras.layers.Dense(8, activation="relu")(inp)
    g = tf.keras.layers.Dense(8)(inp)
    y = tf.keras.layers.Multiply()([tf.keras.layers.Add()([h, g]),
                                    tf.keras.layers.Dense(8)(inp)])
    y = tf.keras.layers.Subtract()([y, g])
    y = y * tf.constant(np.linspace(0.5, 2, 8).astype("float32")) + \
        tf.constant(np.linspace(-1, 1, 8).astype("float32"))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(3, activation="softmax")(y))
    data, x = full_integer(model, (6,))
    assert {"ADD", "SUB", "MUL"} <= set(builtin_ops(data))
    seen = every_int8_tensor_matches(data, x)
    assert sum(k.startswith(("addv2", "sub", "mul")) and spread(v) > 100
               for k, v in seen.items()) >= 4


@pytest.mark.parametrize("activations, builtins", [
    (("relu", "relu6"), {"RELU", "RELU6"}),  # requantized to their own output parameters
    (("tanh", "sigmoid"), {"TANH", "LOGISTIC"}),  # TFLite's 256-entry lookup tables
])
def test_int8_standalone_activations_bit_identical_to_litert(activations, builtins):
    # after a CONCATENATION nothing can absorb an activation: int8 activation ops
    tf.random.set_seed(5)
    inp = tf.keras.Input((6,))
    c = tf.keras.layers.Concatenate()([tf.keras.layers.Dense(8)(inp),
                                       tf.keras.layers.Dense(4)(inp)])
    r = tf.keras.layers.Concatenate()([tf.keras.layers.Activation(a)(c) for a in activations])
    data, x = full_integer(tf.keras.Model(inp, tf.keras.layers.Dense(3)(r)), (6,))
    assert builtins <= set(builtin_ops(data))
    seen = every_int8_tensor_matches(data, x)
    assert sum(k.startswith(activations) and spread(v) > 100 for k, v in seen.items()) >= 2


def test_int8_squared_difference_rsqrt_neg_bit_identical_to_litert():
    # a normalisation-like block: (h - g)^2 and (h - c)^2 against a constant (broadcast),
    # 1/sqrt(. + 1), a negated branch; every int8 tensor equal to LiteRT's
    tf.random.set_seed(5)
    lam = tf.keras.layers.Lambda
    inp = tf.keras.Input((6,))
    h, g = tf.keras.layers.Dense(8)(inp), tf.keras.layers.Dense(8)(inp)
    d = lam(lambda t: tf.math.squared_difference(t[0], t[1]))([h, g])
    c = lam(lambda t: tf.math.squared_difference(t, tf.constant(
        np.linspace(-1, 1, 8).astype("float32"))))(h)
    r = lam(lambda t: tf.math.rsqrt(t + 1.0))(d)
    n = lam(tf.math.negative)(h)
    out = tf.keras.layers.Dense(3)(tf.keras.layers.Concatenate()([r, n, d, c]))
    data, x = full_integer(tf.keras.Model(inp, out), (6,))
    assert {"SQUARED_DIFFERENCE", "RSQRT", "NEG"} <= set(builtin_ops(data))
    seen = every_int8_tensor_matches(data, x)
    assert sum(k.startswith(("squareddifference", "rsqrt", "neg")) and spread(v) > 100
               for k, v in seen.items()) >= 4


def test_full_integer_layer_normalization_bit_identical_to_litert():
    # LayerNormalization lowers to MEAN, SQUARED_DIFFERENCE, ADD, RSQRT, MUL and NEG: all
    # int8, every tensor equal to LiteRT's
    tf.random.set_seed(3)
    inp = tf.keras.Input((6, 8))
    h = tf.keras.layers.LayerNormalization()(tf.keras.layers.Dense(8)(inp))
    model = tf.keras.Model(inp, tf.keras.layers.Dense(3)(
        tf.keras.layers.GlobalAveragePooling1D()(h)))
    data, x = full_integer(model, (6, 8))
    assert {"SQUARED_DIFFERENCE", "RSQRT", "NEG"} <= set(builtin_ops(data))
    seen = every_int8_tensor_matches(data, x)
    assert sum(k.startswith(("squareddifference", "rsqrt", "neg")) and spread(v) > 100
               for k, v in seen.items()) == 3


@pytest.mark.parametrize("op, low", [("rsqrt", 0), ("negative", -2), ("abs", -2),
                                     ("sqrt", 0), ("log", 0)])
def test_int8_unary_bit_identical_on_every_int8_value(op, low):
    rng = np.random.default_rng(0)

    def representative():  # low 0: the input's zero point is -128, every value valid
        for _ in range(8):
            yield [rng.uniform(low, 4, size=(1, 8)).astype("float32")]
    inp = tf.keras.Input((8,))
    model = tf.keras.Model(inp, tf.keras.layers.Lambda(getattr(tf.math, op))(inp))
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.inference_input_type = converter.inference_output_type = tf.int8
    data = converter.convert()
    every = np.arange(-128, 128).astype(np.int8).reshape(32, 8)
    want = run(litert(data), every)
    np.testing.assert_array_equal(run(_ours(data), every), want)
    assert len(np.unique(want)) > 50  # rsqrt compresses most: 55 distinct outputs


def test_int8_rsqrt_refuses_inputs_below_its_zero_point():
    rng = np.random.default_rng(0)
    inp = tf.keras.Input((8,))
    model = tf.keras.Model(inp, tf.keras.layers.Lambda(tf.math.rsqrt)(inp))
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: ([rng.uniform(-1, 4, size=(1, 8)).astype(
        "float32")] for _ in range(8))
    converter.inference_input_type = converter.inference_output_type = tf.int8
    ours = _ours(converter.convert())
    assert ours.get_input_details()[0]["quantization"][1] > -128
    with pytest.raises(RuntimeError, match="only defined for positive values"):
        run(ours, np.full((1, 8), -128, np.int8))


def test_full_integer_lstm_text_classifier_bit_identical_to_litert():
    # token ids stay int32 into an int8 embedding GATHER; the unrolled LSTM's SPLIT_V,
    # LOGISTIC, TANH, MUL and ADD all int8
    tf.random.set_seed(2)
    tokens = tf.keras.Input((10,), dtype="int32")
    h = tf.keras.layers.LSTM(16)(tf.keras.layers.Embedding(100, 8)(tokens))
    model = tf.keras.Model(tokens, tf.keras.layers.Dense(2, activation="softmax")(h))
    rng = np.random.default_rng(0)
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = lambda: (
        [rng.integers(0, 100, size=(1, 10)).astype("int32")] for _ in range(16))
    data = converter.convert()
    assert {"GATHER", "SPLIT_V", "LOGISTIC", "TANH", "MUL"} <= set(builtin_ops(data))
    x = rng.integers(0, 100, size=(8, 10)).astype("int32")
    assert len(every_int8_tensor_matches(data, x)) > 100
    got = run(litert(data), x)
    assert np.max(np.abs(got - model(x).numpy())) < 0.02

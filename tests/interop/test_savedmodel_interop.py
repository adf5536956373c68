"""SavedModels between tensorlite and real TensorFlow, both ways.

TensorFlow writes, tensorlite reads: Keras 3's exported MLP and CNN (BatchNormalization
included) and a tf.Module saved with tf.saved_model.save give TF's outputs; gradients through
a loaded function equal TensorFlow's (so fine-tuning works); an op tensorlite lacks is an error
naming op and node; `show` reports TF's signatures.

tensorlite writes, TensorFlow reads (tf_side.py savedmodel_read): an MLP and seed 002's CIFAR
CNN exported, tf.Modules with two tf.functions, stateful functions, traced functions, many ops
and slices, a Keras model's default signature and a loaded-then-fine-tuned module saved
again: TensorFlow's tf.saved_model.load runs the functions and signatures (rtol 1e-5), reads
the variables, TF1's graph loader restores through the SaverDef and runs signatures by tensor
name (as TF Serving's C++ loader does), and the SignatureDefs read as saved_model_cli shows
them (names, dtypes, -1 batch)."""
import re
import subprocess
import sys

import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.interop.shared_data import X, images, keras_models
from tests.saved_model_helpers import Scorer

pytestmark = pytest.mark.interop


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    directory = tmp_path_factory.mktemp("savedmodels")
    facts = run_tf("savedmodel_write", directory, legacy_keras=False)
    return directory, facts, np.load(directory / "savedmodel_expected.npz")


def test_keras_exported_mlp_and_cnn_give_tensorflows_outputs(written):
    directory, _, expected = written
    mlp = tf.saved_model.load(str(directory / "mlp"))
    np.testing.assert_allclose(mlp.serve(X).numpy(), expected["mlp_pred"], atol=1e-6)
    cnn = tf.saved_model.load(str(directory / "cnn"))
    out = cnn.signatures["serving_default"](image=images())
    assert list(out) == ["output_0"]
    np.testing.assert_allclose(out["output_0"].numpy(), expected["cnn_pred"], atol=1e-5)
    assert [v.shape.as_list() for v in cnn.trainable_variables][:2] == [[3, 3, 1, 4], [4]]


def test_module_signature_and_gradients_match_tensorflow(written):
    directory, _, expected = written
    scorer = tf.saved_model.load(str(directory / "scorer"))
    np.testing.assert_allclose(scorer(X)["score"].numpy(), expected["scorer"], atol=1e-6)
    np.testing.assert_allclose(
        scorer.signatures["serving_default"](x=X)["score"].numpy(), expected["scorer"],
        atol=1e-6)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(scorer(X)["score"] ** 2)
    grad_w, grad_b = tape.gradient(loss, [scorer.w, scorer.b])
    np.testing.assert_allclose(grad_w.numpy(), expected["grad_w"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(grad_b.numpy(), expected["grad_b"], rtol=1e-5, atol=1e-6)
    opt = tf.keras.optimizers.SGD(0.1)  # fine-tuning the restored variables
    for _ in range(3):
        with tf.GradientTape() as tape:
            step_loss = tf.reduce_sum(scorer(X)["score"] ** 2)
        opt.apply_gradients(zip(tape.gradient(step_loss, [scorer.w, scorer.b]),
                                [scorer.w, scorer.b]))
    assert float(tf.reduce_sum(scorer(X)["score"] ** 2)) < float(loss)


def test_unknown_op_is_an_error_naming_op_and_node(written):
    directory, _, _ = written
    model = tf.saved_model.load(str(directory / "unknown"))
    with pytest.raises(tf.errors.UnimplementedError, match=r"op BesselI1e \(node '[^']*Bessel"):
        model(np.ones(3, np.float32))


def test_show_lists_tensorflows_signatures(written):
    directory, facts, _ = written
    out = subprocess.run([sys.executable, "-m", "tensorlite.saved_model", "show", "--dir",
                          str(directory / "cnn"), "--all"], capture_output=True, text=True,
                         check=True).stdout
    assert "MetaGraphDef with tag-set: 'serve'" in out
    (name, (dtype, shape)), = facts["cnn_inputs"].items()
    assert dtype == "float32" and shape == [None, 8, 8, 1]
    assert re.search(rf"inputs\['{name}'\] tensor_info:\s+dtype: DT_FLOAT\s+"
                     rf"shape: \(-1, 8, 8, 1\)", out)
    (name, (_, shape)), = facts["cnn_outputs"].items()
    assert re.search(rf"outputs\['{name}'\] tensor_info:\s+dtype: DT_FLOAT\s+"
                     rf"shape: \(-1, 5\)", out)


# -- tensorlite writes, TensorFlow reads -------------------------------------------------------


class Counter(tf.Module):
    """A tf.function that updates variables (assign_add, assign)."""

    def __init__(self):
        super().__init__()
        self.count = tf.Variable(0, dtype=tf.int64)
        self.total = tf.Variable(np.zeros(3, np.float32))

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)])
    def add(self, x):
        self.count.assign_add(1)
        self.total.assign(self.total + x)
        return self.total.read_value() * 2.0


class Traced(tf.Module):
    """A tf.function without an input signature: its traced graphs are what is saved."""

    def __init__(self):
        super().__init__()
        self.v = tf.Variable(3.0)

    @tf.function
    def f(self, x):
        return x * self.v


class Ops(tf.Module):
    """Many ops' tf rules at once: TensorFlow checks each node's attributes at load and
    computes with its own kernels."""

    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.dw = tf.Variable(rng.normal(size=(3, 3, 2, 2)).astype(np.float32))
        self.table = tf.Variable(rng.normal(size=(5, 3)).astype(np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 6, 6, 2], tf.float32),
                                  tf.TensorSpec([None], tf.int32)])
    def many(self, img, idx):
        h = tf.nn.depthwise_conv2d(img, self.dw, [1, 1, 1, 1], "SAME")
        h = tf.nn.avg_pool2d(h, 2, 2, "VALID")
        h = tf.nn.leaky_relu(h, 0.1) + tf.nn.elu(h) + tf.nn.selu(h) + tf.nn.softplus(h)
        flat = tf.reshape(h, [-1, 18])
        parts = tf.split(flat, [6, 12], axis=1)
        p = tf.pad(tf.gather(self.table, idx), [[0, 0], [1, 2]], constant_values=0.5)
        st = tf.stack(tf.unstack(p, axis=1)[:2], axis=0)
        e = tf.einsum("ij,jk->ik", tf.transpose(st), st)
        w = tf.where(flat > 0.0, flat, tf.zeros_like(flat) - 1.0)
        return {"t": tf.transpose(tf.tile(parts[0], [1, 2])),
                "e": e - tf.reduce_max(e, axis=1, keepdims=True),
                "a": tf.cast(tf.argmax(flat, axis=1), tf.float32),
                "w": tf.add_n([w, w, flat]), "ls": tf.nn.log_softmax(flat),
                "mean": tf.reduce_mean(flat, axis=[1]),
                "sq": tf.math.squared_difference(flat, 1.0) / 3.0 + tf.sqrt(tf.abs(flat)),
                "scatter": tf.tensor_scatter_nd_sub(tf.tensor_scatter_nd_max(
                    tf.tensor_scatter_nd_min(tf.tensor_scatter_nd_add(
                        tf.tensor_scatter_nd_update(flat, [[0, 1]], [9.0]),
                        [[0, 2], [0, 2]], [1.0, 2.0]), [[0]], -flat[:1]), [[0, 3]], [0.5]),
                    [[0, 4]], [4.0]),
                "segments": tf.math.unsorted_segment_max(
                    tf.transpose(flat), [k % 4 for k in range(18)], 4) +
                tf.math.unsorted_segment_sum(tf.transpose(flat), [k % 3 for k in range(18)], 4)[:1]
                * tf.math.unsorted_segment_prod(tf.transpose(flat[:, :3]), [0, 1, 1], 4)[1:2]}


class Slicer(tf.Module):
    """Python indexing (StridedSlice masks), and no variables at all."""

    @tf.function(input_signature=[tf.TensorSpec([None, 3, 5], tf.float32)])
    def f(self, x):
        return {"a": x[:, -1, ::2], "b": x[0, 1:3, None], "c": x[..., 2:],
                "d": x[:, ::-1, -2]}


class PythonArgument(tf.Module):
    """The TF 2 guide 'Introduction to modules': a tf.function called with a Python list,
    traced for that value (TensorFlow's loaded function matches the same value)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10)

    @tf.function
    def __call__(self, x):
        return tf.nn.relu(tf.matmul(x, self.w) + 1.0)


@pytest.fixture(scope="module")
def tensorlite_written(tmp_path_factory):
    from tests.lite_helpers import fitted_cifar_cnn, mlp as lite_mlp, template_images
    directory = tmp_path_factory.mktemp("tl_savedmodels")
    tf.random.set_seed(3)
    mlp = lite_mlp()
    mlp.compile("adam", "mse")
    cnn = fitted_cifar_cnn()
    module = Scorer()
    x8 = np.random.default_rng(1).normal(size=(5, 8)).astype(np.float32)
    img = template_images(4, 7)[0]
    mlp.export(str(directory / "mlp"))
    cnn.save(str(directory / "cnn"))  # tf.keras 2's SavedModel directory
    tf.saved_model.save(module, str(directory / "module"), signatures=module.__call__)
    _, bn_cnn = keras_models(tf.keras)  # BatchNormalization, Dropout, two heads concatenated
    tf.saved_model.save(bn_cnn, str(directory / "bn_cnn"))  # a Keras model: default signature
    tf.saved_model.save(Counter(), str(directory / "counter"))
    traced = Traced()
    traced.f(tf.ones((4, 2)))
    five = traced.f.get_concrete_function(tf.TensorSpec([5], tf.float32))
    tf.saved_model.save(traced, str(directory / "traced"), signatures={"five": five})
    ops = Ops()
    tf.saved_model.save(ops, str(directory / "ops"))
    reloaded = tf.saved_model.load(str(directory / "module"))  # fine-tuned, saved again
    reloaded.b.assign_add(tf.ones([4]))
    tf.saved_model.save(reloaded, str(directory / "resaved"))
    slicer = Slicer()
    tf.saved_model.save(slicer, str(directory / "slicer"))
    python_arg = PythonArgument()
    python_arg([[2.0, 2.0, 2.0]])  # traced for this Python value
    python_arg(tf.ones((2, 3)))  # and for a tensor
    tf.saved_model.save(python_arg, str(directory / "python_arg"))
    x235 = np.arange(30, dtype=np.float32).reshape(2, 3, 5)
    img6 = np.random.default_rng(1).normal(size=(3, 6, 6, 2)).astype(np.float32)
    idx = np.array([0, 4, 2], np.int32)
    np.savez(directory / "inputs.npz", x8=x8, img=img, X=X, images=images(),
             ones3=np.ones(3, np.float32), ones42=np.ones((4, 2), np.float32),
             ones5=np.ones(5, np.float32), img6=img6, idx=idx, x235=x235)
    manifest = {
        "mlp": {"functions": {"serve": ["x8"]}, "signatures": {"serving_default":
                                                              {"inputs": "x8"}}},
        "cnn": {"functions": {"serve": ["img"]}, "signatures": {"serving_default":
                                                               {"inputs": "img"}}},
        "module": {"functions": {"__call__": ["X"], "features": ["X"]},
                   "signatures": {"serving_default": {"x": "X"}},
                   "variables": ["w", "b", "scale"]},
        "bn_cnn": {"signatures": {"serving_default": {"inputs": "images"}}},
        "counter": {"functions": {"add": ["ones3"]}, "variables": ["count", "total"]},
        "traced": {"functions": {"f": ["ones42"]}, "signatures": {"five": {"x": "ones5"}}},
        "ops": {"functions": {"many": ["img6", "idx"]}},
        "slicer": {"functions": {"f": ["x235"]}},
        "python_arg": {"functions": {"__call__": [{"python": [[2.0, 2.0, 2.0]]}]}},
        "resaved": {"functions": {"__call__": ["X"]},
                    "signatures": {"serving_default": {"x": "X"}}}}
    (directory / "manifest.json").write_text(__import__("json").dumps(manifest))
    facts = run_tf("savedmodel_read", directory, legacy_keras=False)
    expected = {"mlp": mlp.predict(x8, verbose=0), "cnn": cnn.predict(img, verbose=0),
                "call": module(X), "features": module.features(X).numpy(),
                "w": module.w.numpy(), "b": module.b.numpy(), "scale": module.scale.numpy(),
                "bn_cnn": bn_cnn(images(), training=False).numpy(),
                "ops": {k: v.numpy() for k, v in ops.many(img6, idx).items()},
                "slicer": {k: v.numpy() for k, v in slicer.f(x235).items()},
                "resaved": reloaded(X)["score"].numpy(),
                "python_arg": python_arg([[2.0, 2.0, 2.0]]).numpy()}
    return directory, facts, np.load(directory / "tf_read.npz"), expected


def test_tensorflow_runs_tensorlite_keras_exports(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for name in ("mlp", "cnn"):
        np.testing.assert_allclose(got[f"{name}.serve"], expected[name], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[f"{name}.sig.serving_default.output_0"], expected[name],
                                   rtol=1e-5, atol=1e-6)
    assert expected["cnn"].shape == (4, 10)


def test_tensorflow_runs_tensorlite_module_functions_and_variables(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for key in ("score", "probs"):
        want = expected["call"][key].numpy()
        np.testing.assert_allclose(got[f"module.__call__.{key}"], want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(got[f"module.sig.serving_default.{key}"], want, rtol=1e-5,
                                   atol=1e-6)
    np.testing.assert_allclose(got["module.features"], expected["features"], rtol=1e-5,
                               atol=1e-6)
    for name in ("w", "b", "scale"):
        np.testing.assert_array_equal(got[f"module.var.{name}"], expected[name])


def test_tensorflow_calls_a_function_traced_for_a_python_value(tensorlite_written):
    _, _, got, expected = tensorlite_written
    np.testing.assert_allclose(got["python_arg.__call__"], expected["python_arg"], rtol=1e-6)
    assert expected["python_arg"].shape == (1, 2)


def test_tensorflow_inspects_tensorlite_signatures(tensorlite_written):
    _, facts, _, _ = tensorlite_written
    cnn = facts["cnn"]["serving_default"]
    assert cnn["method_name"] == "tensorflow/serving/predict"
    (name, dtype, shape), = cnn["inputs"].values()
    assert dtype == 1 and shape == [-1, 32, 32, 3] and name.endswith(":0")  # DT_FLOAT
    assert list(cnn["outputs"]) == ["output_0"] and cnn["outputs"]["output_0"][1:] == [1, [-1, 10]]
    module = facts["module"]["serving_default"]
    assert module["inputs"]["x"][1:] == [1, [-1, 3]]
    assert sorted(module["outputs"]) == ["probs", "score"]
    assert module["outputs"]["score"][2] == [-1] and module["outputs"]["probs"][2] == [-1, 4]


def test_tensorflow1_loader_restores_through_the_saver_and_runs_signatures(tensorlite_written):
    """What TensorFlow Serving's C++ loader does: restore variables through the SaverDef,
    then run the SignatureDef's tensors by name; saving through the SaverDef works too."""
    _, facts, got, expected = tensorlite_written
    for name in ("mlp", "cnn"):
        np.testing.assert_allclose(got[f"{name}.tf1.serving_default.output_0"], expected[name],
                                   rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got["module.tf1.serving_default.score"],
                               expected["call"]["score"].numpy(), rtol=1e-5, atol=1e-6)
    assert facts["module.resaved"] == ["b/.ATTRIBUTES/VARIABLE_VALUE",
                                       "scale/.ATTRIBUTES/VARIABLE_VALUE",
                                       "w/.ATTRIBUTES/VARIABLE_VALUE"]


def test_tensorflow_runs_keras_model_default_signature_and_stateful_functions(
        tensorlite_written):
    _, _, got, expected = tensorlite_written
    for prefix in ("bn_cnn.sig.serving_default.output_0",
                   "bn_cnn.tf1.serving_default.output_0"):
        np.testing.assert_allclose(got[prefix], expected["bn_cnn"], rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(got["counter.add"], [2.0, 2.0, 2.0])
    assert got["counter.var.count"] == 1  # TensorFlow ran the assign_add once
    np.testing.assert_array_equal(got["counter.var.total"], [1.0, 1.0, 1.0])


def test_tensorflow_runs_traced_functions_and_concrete_function_signatures(
        tensorlite_written):
    _, facts, got, _ = tensorlite_written
    np.testing.assert_array_equal(got["traced.f"], np.full((4, 2), 3.0))
    np.testing.assert_array_equal(got["traced.sig.five.output_0"], np.full(5, 3.0))
    assert facts["traced"]["five"]["inputs"]["x"][1:] == [1, [5]]


def test_tensorflow_runs_many_ops_tensorlite_wrote(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for key, want in expected["ops"].items():
        np.testing.assert_allclose(got[f"ops.many.{key}"], want, rtol=1e-5, atol=1e-5)


def test_tensorflow_runs_strided_slices_of_a_module_without_variables(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for key, want in expected["slicer"].items():
        np.testing.assert_array_equal(got[f"slicer.f.{key}"], want)


def test_tensorflow_runs_a_loaded_fine_tuned_and_resaved_module(tensorlite_written):
    _, _, got, expected = tensorlite_written
    for key in ("resaved.__call__.score", "resaved.sig.serving_default.score"):
        np.testing.assert_allclose(got[key], expected["resaved"], rtol=1e-5, atol=1e-6)
    assert not np.allclose(expected["resaved"], expected["call"]["score"].numpy())

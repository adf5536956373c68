"""tf.saved_model.save in TensorFlow's layout, checked from tensorlite's side: what it writes
loads back (functions, signatures, variables, trainability), a loaded model fine-tunes, the
FunctionDefs use TensorFlow's op names and attributes, a missing tf rule or an untracked
variable is a clear error, overwriting is atomic, and a writer killed with SIGKILL at random
moments leaves the old or the new complete SavedModel. Real TensorFlow loading these files is
tested in tests/interop/test_savedmodel_interop.py."""
import os
import random

import numpy as np
import pytest

import tensorlite as tf
from tensorlite.saved_model.protos import SavedModel
from tests.lite_helpers import generate_model, mlp
from tests.kill_helpers import kill_while_saving
from tests.saved_model_helpers import Scorer


X = np.random.default_rng(0).normal(size=(6, 3)).astype(np.float32)


def _meta(directory):
    model = SavedModel.FromString(open(os.path.join(directory, "saved_model.pb"), "rb").read())
    return model.meta_graphs[0]


def test_module_round_trip(tmp_path):
    module = Scorer()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures=module.__call__)
    assert sorted(os.listdir(tmp_path / "m")) == ["assets", "fingerprint.pb", "saved_model.pb",
                                                   "variables"]
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    want = module(X)
    for key in ("score", "probs"):
        np.testing.assert_allclose(loaded(X)[key].numpy(), want[key].numpy(), rtol=1e-6)
        np.testing.assert_allclose(loaded.signatures["serving_default"](x=X)[key].numpy(),
                                   want[key].numpy(), rtol=1e-6)
    np.testing.assert_allclose(loaded.features(X[:2]).numpy(), module.features(X[:2]).numpy(),
                               rtol=1e-6)
    np.testing.assert_array_equal(loaded.w.numpy(), module.w.numpy())
    assert loaded.w.trainable and not loaded.scale.trainable
    meta = _meta(tmp_path / "m")
    assert list(meta.meta_info_def.tags) == ["serve"]
    sig = meta.signature_def["serving_default"]
    assert [d.size for d in sig.inputs["x"].tensor_shape.dim] == [-1, 3]
    assert sorted(sig.outputs) == ["probs", "score"]


def test_function_defs_use_tensorflows_ops(tmp_path):
    model = generate_model()  # seed 002's CIFAR CNN
    model.export(str(tmp_path / "cnn"), verbose=False)
    meta = _meta(tmp_path / "cnn")
    serve = next(f for f in meta.graph_def.library.function
                 if "serve" in f.signature.name and "wrapper" not in f.signature.name)
    nodes = {n.op: n for n in serve.node_def}
    assert {"Conv2D", "MaxPool", "Relu", "Reshape", "MatMul", "Softmax", "ReadVariableOp",
            "AddV2"} <= set(nodes)
    assert not any(op.startswith("Graph") for op in nodes)
    convs = [n for n in serve.node_def if n.op == "Conv2D"]
    assert [c.attr["padding"].s for c in convs] == [b"SAME", b"VALID"] * 2
    assert all(list(c.attr["strides"].list.i) == [1] * 4 for c in convs)
    assert list(nodes["MaxPool"].attr["ksize"].list.i) == [1, 2, 2, 1]
    resources = [a for a in serve.signature.input_arg if a.type == 20]  # DT_RESOURCE
    assert len(resources) == len(model.variables)
    shape_const = next(n for n in serve.node_def
                       if n.name == nodes["Reshape"].input[1].split(":")[0])
    assert shape_const.op == "Const"
    loaded = tf.saved_model.load(str(tmp_path / "cnn"))
    x = np.random.default_rng(2).normal(size=(3, 32, 32, 3)).astype(np.float32)
    np.testing.assert_allclose(loaded.serve(x).numpy(), model.predict(x, verbose=0),
                               rtol=1e-5, atol=1e-7)


def test_loaded_model_fine_tunes(tmp_path):
    model = mlp()
    model.export(str(tmp_path / "mlp"), verbose=False)
    loaded = tf.saved_model.load(str(tmp_path / "mlp"))
    x = np.random.default_rng(3).normal(size=(16, 8)).astype(np.float32)
    y = np.zeros((16, 3), np.float32)
    opt = tf.keras.optimizers.SGD(0.05)
    variables = loaded.trainable_variables
    assert len(variables) == 4

    def loss():
        return tf.reduce_mean((loaded.serve(x) - y) ** 2)
    before = float(loss())
    for _ in range(5):
        with tf.GradientTape() as tape:
            value = loss()
        opt.apply_gradients(zip(tape.gradient(value, variables), variables))
    assert float(loss()) < 0.9 * before


def test_keras_save_to_directory_is_a_savedmodel_and_a_keras_model(tmp_path):
    model = mlp()
    model.save(str(tmp_path / "m"))
    x = np.random.default_rng(4).normal(size=(4, 8)).astype(np.float32)
    want = model.predict(x, verbose=0)
    np.testing.assert_allclose(tf.keras.models.load_model(str(tmp_path / "m")).predict(
        x, verbose=0), want, rtol=1e-6)
    served = tf.saved_model.load(str(tmp_path / "m")).signatures["serving_default"]
    np.testing.assert_allclose(served(inputs=x)["output_0"].numpy(), want, rtol=1e-6)


def test_lstm_exports(tmp_path):
    model = tf.keras.Sequential([tf.keras.layers.LSTM(4, input_shape=(5, 3)),
                                 tf.keras.layers.Dense(2)])
    model.export(str(tmp_path / "lstm"), verbose=False)
    x = np.random.default_rng(0).normal(size=(2, 5, 3)).astype(np.float32)
    np.testing.assert_allclose(tf.saved_model.load(str(tmp_path / "lstm")).serve(x).numpy(),
                               model.predict(x, verbose=0), rtol=1e-5, atol=1e-7)


def test_op_without_tf_rule_is_an_error_naming_op_and_node(tmp_path):
    class Cum(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        def f(self, x):
            return tf.math.cumprod(x, axis=1)
    with pytest.raises(tf.errors.UnimplementedError,
                       match=r"op Cumprod \(node created at .*test_saved_model_save.py"):
        tf.saved_model.save(Cum(), str(tmp_path / "c"))
    assert not os.path.exists(tmp_path / "c") and os.listdir(tmp_path) == []


def test_untracked_variable_is_an_error(tmp_path):
    hidden = tf.Variable(2.0)

    class Holder(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def f(self, x):
            return x * hidden
    with pytest.raises(tf.errors.InvalidArgumentError, match="not reachable"):
        tf.saved_model.save(Holder(), str(tmp_path / "h"))


def test_overwrite_replaces_the_directory_whole(tmp_path):
    module = Scorer()
    target = str(tmp_path / "m")
    tf.saved_model.save(module, target)
    (tmp_path / "m" / "stale.txt").write_text("old")
    module.w.assign(np.ones((3, 4), np.float32))
    tf.saved_model.save(module, target)
    assert not os.path.exists(tmp_path / "m" / "stale.txt")
    assert os.listdir(tmp_path) == ["m"]  # no temporary directories left
    np.testing.assert_array_equal(tf.saved_model.load(target).w.numpy(), np.ones((3, 4)))


def test_malformed_saved_model_pb_is_a_clear_error(tmp_path):
    tf.saved_model.save(Scorer(), str(tmp_path / "m"))
    pb = tmp_path / "m" / "saved_model.pb"
    pb.write_bytes(pb.read_bytes()[:-7])  # truncated
    with pytest.raises(tf.errors.DataLossError, match="not a valid SavedModel"):
        tf.saved_model.load(str(tmp_path / "m"))


# -- crash safety ---------------------------------------------------------------------------------
def test_sigkill_during_save_leaves_old_or_new_complete_savedmodel(tmp_path):
    rng = random.Random(13)
    target = str(tmp_path / "m")
    seen = set()
    module = Scorer()
    module.big = tf.Variable(np.zeros(200_000, np.float32))
    for trial in range(20):
        kill_while_saving([module.w, module.b, module.big],
                          lambda: tf.saved_model.save(module, target), rng, 0.25)
        loaded = tf.saved_model.load(target)  # never torn: a complete one is always there
        values = {float(x) for v in (loaded.w, loaded.b, loaded.big)
                  for x in np.unique(v.numpy())}
        assert len(values) == 1, f"trial {trial}: a torn SavedModel holds {values}"
        np.testing.assert_allclose(loaded(X[:1])["score"].numpy().shape, (1,))
        seen |= values
    tf.saved_model.save(Scorer(), target)  # a later save sweeps the dead writers' temporaries
    assert os.listdir(tmp_path) == ["m"]
    assert len(seen) > 1  # the kills landed at different saves


def test_stateful_function_and_keras_default_signature_round_trip(tmp_path):
    class Counter(tf.Module):
        def __init__(self):
            super().__init__()
            self.count = tf.Variable(0, dtype=tf.int64)

        @tf.function(input_signature=[])
        def bump(self):
            self.count.assign_add(2)
            return self.count.read_value()
    tf.saved_model.save(Counter(), str(tmp_path / "c"))
    counter = tf.saved_model.load(str(tmp_path / "c"))
    assert int(counter.bump()) == 2 and int(counter.bump()) == 4
    assert int(counter.count.numpy()) == 4
    model = mlp()
    tf.saved_model.save(model, str(tmp_path / "k"))  # a Keras model: serving_default from it
    x = np.ones((2, 8), np.float32)
    served = tf.saved_model.load(str(tmp_path / "k")).signatures["serving_default"]
    np.testing.assert_allclose(served(inputs=x)["output_0"].numpy(),
                               model.predict(x, verbose=0), rtol=1e-6)


def test_load_model_of_a_savedmodel_without_keras_model_says_what_to_do(tmp_path):
    tf.saved_model.save(Scorer(), str(tmp_path / "m"))
    with pytest.raises(ValueError, match=r"SavedModel format is not supported by `load_model"
                                         r"\(\)`.*tf.saved_model.load"):
        tf.keras.models.load_model(str(tmp_path / "m"))


def test_ops_without_a_tensorflow_form_are_errors(tmp_path):
    class Bad(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3, 4], tf.float32)])
        def softmax_first_axis(self, x):
            return tf.nn.softmax(x, axis=1)
    with pytest.raises(tf.errors.UnimplementedError, match="Softmax over axis"):
        tf.saved_model.save(Bad(), str(tmp_path / "b"))
    assert os.listdir(tmp_path) == []


def test_a_loaded_savedmodel_fine_tuned_and_saved_again(tmp_path):
    module = Scorer()
    tf.saved_model.save(module, str(tmp_path / "a"), signatures=module.__call__)
    loaded = tf.saved_model.load(str(tmp_path / "a"))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(loaded(X)["score"] ** 2)
    loaded.w.assign_sub(0.01 * tape.gradient(loss, loaded.w))
    want = loaded(X)["score"].numpy()
    tf.saved_model.save(loaded, str(tmp_path / "b"))  # functions and signatures kept
    again = tf.saved_model.load(str(tmp_path / "b"))
    np.testing.assert_array_equal(again(X)["score"].numpy(), want)
    np.testing.assert_array_equal(again.signatures["serving_default"](x=X)["score"].numpy(),
                                  want)
    np.testing.assert_array_equal(again.features(X).numpy(), module.features(X).numpy())
    assert not np.array_equal(again.w.numpy(), module.w.numpy())


def test_a_function_traced_for_a_python_value_is_saved_for_that_value(tmp_path):
    """`module([[2.0, 2.0, 2.0]])` traces for the list's value (TF's rule); the saved
    function keeps the value in its signature, so the loaded one matches that call."""
    class Module(tf.Module):
        def __init__(self):
            super().__init__()
            self.w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2))

        @tf.function
        def __call__(self, x):
            return tf.matmul(x, self.w)
    module = Module()
    want = module([[2.0, 2.0, 2.0]]).numpy()
    tf.saved_model.save(module, str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    np.testing.assert_array_equal(loaded([[2.0, 2.0, 2.0]]).numpy(), want)
    assert loaded.__call__.concrete_functions[0].structured_input_signature == \
        (([[2.0, 2.0, 2.0]],), {})
    with pytest.raises(ValueError, match="Could not find a matching function"):
        loaded([[1.0, 1.0, 1.0]])  # traced for another value only, as in TensorFlow


def test_save_options_extra_tags_and_refusals(tmp_path):
    module = Scorer()
    tf.saved_model.save(module, str(tmp_path / "m"),
                        options=tf.saved_model.SaveOptions(extra_tags=["gpu"],
                                                           experimental_custom_gradients=True))
    assert sorted(_meta(tmp_path / "m").meta_info_def.tags) == ["gpu", "serve"]
    assert tf.saved_model.load(str(tmp_path / "m"), tags=["serve", "gpu"],
                               options=tf.saved_model.LoadOptions()) is not None
    with pytest.raises(NotImplementedError, match="save_debug_info"):
        tf.saved_model.SaveOptions(save_debug_info=True)
    with pytest.raises(NotImplementedError, match="experimental_skip_checkpoint"):
        tf.saved_model.LoadOptions(experimental_skip_checkpoint=True)
    with pytest.raises(TypeError, match="SaveOptions"):
        tf.saved_model.save(module, str(tmp_path / "n"), options={"extra_tags": ["gpu"]})


def test_unknown_rank_signature_is_saved_as_the_scalar_it_traced(tmp_path, recwarn):
    """The advanced autodiff guide's `input_signature=[tf.TensorSpec(None)]` with a
    tf.custom_gradient inside: saved with its gradient (TensorFlow's default
    experimental_custom_gradients=True), and the loaded function takes scalars."""
    @tf.custom_gradient
    def clip_gradients(y):
        return tf.identity(y), lambda dy: tf.clip_by_norm(dy, 0.5)

    class Clip(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec(None)])
        def call_custom_grad(self, x):
            return clip_gradients(x)
    module = Clip()
    assert module.call_custom_grad(tf.constant([1.0, 2.0])).numpy().tolist() == [1.0, 2.0]
    tf.saved_model.save(module, str(tmp_path / "m"))
    assert not [w for w in recwarn if "custom gradient" in str(w.message)]
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    v = tf.Variable(2.0)
    with tf.GradientTape() as tape:
        out = loaded.call_custom_grad(v * v)
    assert float(out) == 4.0 and float(tape.gradient(out, v)) == 2.0  # the clipped one


def test_model_with_a_called_tf_function_method_saves(tmp_path):
    """The text-generation tutorial's OneStep: a keras.Model whose @tf.function method was
    called before tf.saved_model.save (the method's per-instance binding must not be taken
    for a tracked attribute); the reloaded method computes the same."""
    class OneStep(tf.keras.Model):
        def __init__(self, temperature=1.0):
            super().__init__()
            self.temperature = temperature
            self.dense = tf.keras.layers.Dense(3)

        @tf.function
        def generate_one_step(self, inputs):
            return self.dense(inputs) / self.temperature

    one_step_model = OneStep(2.0)
    x = tf.constant([[1.0, 2.0]])
    expected = one_step_model.generate_one_step(x).numpy()
    tf.saved_model.save(one_step_model, str(tmp_path / "one_step"))
    one_step_reloaded = tf.saved_model.load(str(tmp_path / "one_step"))
    np.testing.assert_allclose(one_step_reloaded.generate_one_step(x).numpy(), expected,
                               rtol=1e-6)

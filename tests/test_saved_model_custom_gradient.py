"""tf.custom_gradient in SavedModels (tensorlite both ends; real TensorFlow reads and
writes them in tests/interop/test_custom_gradient_savedmodel_interop.py): saved as
TensorFlow writes it, an IdentityN with `_gradient_op_type` and a registered gradient
function, and honoured on load."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.saved_model.protos import SavedModel
from tests.interop import custom_gradient_cases


def _library(path):
    model = SavedModel()
    with open(path / "saved_model.pb", "rb") as f:
        model.ParseFromString(f.read())
    return model.meta_graphs[0].graph_def.library


def _clip_module():
    return custom_gradient_cases.clip_module(tf)


def _loaded_gradient(loaded):
    return custom_gradient_cases.clip_gradient(tf, loaded)


def test_guide_clip_gradients_survive_save_and_load(tmp_path, recwarn):
    model = _clip_module()
    tf.saved_model.save(
        model,
        str(tmp_path / "saved_model"),
        options=tf.saved_model.SaveOptions(experimental_custom_gradients=True))
    assert not [w for w in recwarn if "custom gradient" in str(w.message)]
    # The loaded gradients will be the same as the above example.
    v = tf.Variable(2.0)
    loaded = tf.saved_model.load(str(tmp_path / "saved_model"))
    with tf.GradientTape() as t:
        output = loaded.call_custom_grad(v * v)
    assert t.gradient(output, v).numpy() == 2.0  # unclipped: 4.0


def test_written_as_tensorflows_identity_n_with_a_registered_gradient(tmp_path):
    tf.saved_model.save(_clip_module(), str(tmp_path / "m"))
    library = _library(tmp_path / "m")
    [registered] = library.registered_gradients
    functions = {f.signature.name: f for f in library.function}
    grad = functions[registered.gradient_func]
    assert [a.name for a in grad.signature.input_arg] == ["result_grads_0", "result_grads_1"]
    assert len(grad.signature.output_arg) == 1  # the argument's; the output's is dropped
    [node] = [n for f in library.function for n in f.node_def if n.op == "IdentityN"]
    assert node.attr["_gradient_op_type"].s.decode() == registered.registered_op_type
    assert len(node.input) == 2  # the output, then the argument


def test_save_option_off_writes_the_forward_only_silently(tmp_path, recwarn):
    tf.saved_model.save(_clip_module(), str(tmp_path / "m"), options=tf.saved_model.
                        SaveOptions(experimental_custom_gradients=False))
    assert not [w for w in recwarn if "custom gradient" in str(w.message)]
    library = _library(tmp_path / "m")
    assert not library.registered_gradients
    assert not [n for f in library.function for n in f.node_def if n.op == "IdentityN"]
    assert _loaded_gradient(tf.saved_model.load(str(tmp_path / "m"))) == 4.0


def test_gradient_that_uses_the_forward_values_is_left_out_loudly(tmp_path):
    """TensorFlow's format cannot hold a gradient function that captures the forward's
    `x`; saving warns and the loaded function differentiates the forward ops."""
    @tf.custom_gradient
    def square_scaled_gradient(x):
        def grad(dy):
            return dy * x * 10.0
        return x * x, grad

    class Module(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([], tf.float32)])
        def f(self, x):
            return square_scaled_gradient(x)
    module = Module()
    x = tf.constant(3.0)
    with tf.GradientTape() as t:
        t.watch(x)
        y = module.f(x)
    assert float(t.gradient(y, x)) == 30.0  # the custom gradient, before saving
    with pytest.warns(UserWarning, match="gradient of custom gradient square_scaled_gradient "
                                         "uses the forward's values") as caught:
        tf.saved_model.save(module, str(tmp_path / "m"))
    assert len([w for w in caught if "custom gradient" in str(w.message)]) == 1
    assert not _library(tmp_path / "m").registered_gradients
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    with tf.GradientTape() as t:
        t.watch(x)
        y = loaded.f(x)
    assert float(t.gradient(y, x)) == 6.0  # the forward's x * x


def test_two_arguments_and_a_variable_read_round_trip(tmp_path):
    from tests.interop import custom_gradient_cases as cases  # noqa: PLC0415
    tf.saved_model.save(cases.two_input_module(tf), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    assert cases.two_input_gradients(tf, loaded) == [2.0, 3.0, 5.0]  # forward: 6, 3, 2


@pytest.mark.parametrize("make, want", [("variable_gradient_module", [4.0, 4.0]),
                                        ("two_output_module", [9.0, 9.0])])
def test_gradient_reading_a_variable_and_two_outputs_round_trip(tmp_path, make, want):
    from tests.interop import custom_gradient_cases as cases  # noqa: PLC0415
    tf.saved_model.save(getattr(cases, make)(tf), str(tmp_path / "m"))
    assert cases.vector_gradient(tf, tf.saved_model.load(str(tmp_path / "m"))) == want


def test_gradient_function_follows_the_batch_size(tmp_path):
    """A None batch dimension: the gradient function serves every batch size, as the
    forward does (clip_by_norm over the whole batch: 0.5 / sqrt(3n), times 2)."""
    @tf.custom_gradient
    def clip_gradients(y):
        def backward(dy):
            return tf.clip_by_norm(dy, 0.5)
        return y, backward

    class Module(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None, 3])])
        def f(self, x):
            return clip_gradients(x * 2.0)
    tf.saved_model.save(Module(), str(tmp_path / "m"))
    loaded = tf.saved_model.load(str(tmp_path / "m"))
    for n in (1, 4):
        x = tf.ones([n, 3])
        with tf.GradientTape() as t:
            t.watch(x)
            y = loaded.f(x)
        assert t.gradient(y, x).numpy() == pytest.approx(np.full((n, 3), 1 / np.sqrt(3 * n)))

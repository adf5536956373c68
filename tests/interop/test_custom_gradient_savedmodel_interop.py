"""tf.custom_gradient in SavedModels against real TensorFlow, both ways: TensorFlow loads
the SavedModels tensorlite wrote (the advanced autodiff guide's clip_gradients; a gradient
of two arguments and a variable read) and its GradientTape gives the custom gradients, and
tensorlite loads the ones TensorFlow wrote and gives them too (and, where TensorFlow saved
with experimental_custom_gradients=False, raises LookupError, as TensorFlow does)."""
import pytest

import tensorlite as tf
from tests.interop import custom_gradient_cases as cases

pytestmark = pytest.mark.interop

SIDE = __file__.replace("test_custom_gradient_savedmodel_interop.py",
                        "tf_custom_gradient_side.py")


@pytest.fixture(scope="module")
def tf_written(tmp_path_factory):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    d = tmp_path_factory.mktemp("custom_gradient_tf")
    run_tf("write", d, script=SIDE)
    return d, run_tf("load_tf", d, script=SIDE)  # (a fresh process: see the side script)


def test_tensorflows_own_round_trip_gives_the_custom_gradients(tf_written):
    _, facts = tf_written  # what the other tests hold tensorlite to
    assert facts == {"clip": 2.0, "two": [2.0, 3.0, 5.0], "variable": [4.0, 4.0],
                     "two_outputs": [9.0, 9.0], "clip_off":
                     "LookupError: No gradient defined for operation'Identi"}


def test_tensorlite_loads_tensorflows_custom_gradients(tf_written):
    d, _ = tf_written
    assert cases.clip_gradient(tf, tf.saved_model.load(str(d / "tf_clip"))) == 2.0
    assert cases.two_input_gradients(tf, tf.saved_model.load(str(d / "tf_two"))) == \
        [2.0, 3.0, 5.0]
    assert cases.vector_gradient(tf, tf.saved_model.load(str(d / "tf_variable"))) == \
        [4.0, 4.0]  # its gradient function captures the variable (bound on load)
    assert cases.vector_gradient(tf, tf.saved_model.load(str(d / "tf_two_outputs"))) == \
        [9.0, 9.0]


def test_tensorflow_saved_without_custom_gradients_has_no_gradient(tf_written):
    """TensorFlow's IdentityN whose gradient type was not saved has no gradient: TensorFlow's
    GradientTape raises LookupError (the test above), and so does tensorlite's, naming it."""
    d, _ = tf_written
    loaded = tf.saved_model.load(str(d / "tf_clip_off"))
    assert float(loaded.call_custom_grad(tf.constant(3.0))) == 3.0  # the forward runs
    with pytest.raises(LookupError, match="CustomGradient-.*experimental_custom_gradients"):
        cases.clip_gradient(tf, loaded)


def test_tensorflow_loads_tensorlites_custom_gradients(tmp_path):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    tf.saved_model.save(cases.clip_module(tf), str(tmp_path / "tl_clip"), options=tf.
                        saved_model.SaveOptions(experimental_custom_gradients=True))
    tf.saved_model.save(cases.two_input_module(tf), str(tmp_path / "tl_two"))
    tf.saved_model.save(cases.variable_gradient_module(tf), str(tmp_path / "tl_variable"))
    tf.saved_model.save(cases.two_output_module(tf), str(tmp_path / "tl_two_outputs"))
    assert run_tf("load", tmp_path, script=SIDE) == {
        "clip": 2.0, "two": [2.0, 3.0, 5.0], "variable": [4.0, 4.0], "two_outputs": [9.0, 9.0]}

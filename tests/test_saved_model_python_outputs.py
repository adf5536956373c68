"""tf.functions that return Python values (the SavedModel guide's mutating method returns
None) are saved with the values in their output structure, not as tensors; the loaded
function returns them, and runs its state changes even without outputs."""
import numpy as np

import tensorlite as tf
from tests.interop import saved_model_guide_cases


def test_guide_module_with_a_mutating_method(tmp_path):
    module = saved_model_guide_cases.custom_module(tf)
    tf.saved_model.save(module, str(tmp_path))
    imported = tf.saved_model.load(str(tmp_path))
    assert imported(tf.constant(3.)).numpy() == 3
    assert imported.mutate(tf.constant(2.)) is None
    assert imported(tf.constant(3.)).numpy() == 6
    assert imported.v.numpy() == 2.0
    # its only input_signature function returns None: no default signature (as in TF)
    assert len(imported.signatures) == 0


class Mixed(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([2], tf.float32)])
    def f(self, x):
        return {"doubled": x * 2.0, "count": 3, "note": None}


def test_python_values_beside_tensors_come_back_as_traced(tmp_path):
    tf.saved_model.save(Mixed(), str(tmp_path))
    out = tf.saved_model.load(str(tmp_path)).f(tf.constant([1.0, 2.0]))
    np.testing.assert_allclose(out["doubled"].numpy(), [2.0, 4.0])
    assert out["count"] == 3
    assert out["note"] is None


class CustomModuleWithOutputName(tf.Module):
    """The guide's module whose signature names its output (a vector input here: tensorlite
    saves a spec of unknown rank as a scalar one, writer._ranked)."""

    def __init__(self):
        super().__init__()
        self.v = tf.Variable(1.)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return {'custom_output_name': x * self.v}


def test_signature_structured_outputs_show_as_tensor_specs(tmp_path):
    module_output = CustomModuleWithOutputName()
    call_output = module_output.__call__.get_concrete_function(
        tf.TensorSpec([None], tf.float32))
    tf.saved_model.save(module_output, str(tmp_path),
                        signatures={'serving_default': call_output})
    imported = tf.saved_model.load(str(tmp_path))
    outputs = imported.signatures['serving_default'].structured_outputs
    assert repr(outputs) == ("{'custom_output_name': TensorSpec(shape=(None,), "
                             "dtype=tf.float32, name='custom_output_name')}")

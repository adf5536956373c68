"""Ragged arguments and outputs in SavedModels against real TensorFlow, both ways: TensorFlow
loads tensorlite's SavedModel and calls its functions with tf.ragged.constant values
(nested ragged too), getting RaggedTensors back, its serving signature with the components
(x, x_1), and ragged and sparse outputs of functions and signatures; tensorlite loads
TensorFlow's and gets the same. tensorlite also reads TensorFlow's functions taking
SparseTensors; writing those is a loud NotImplementedError."""
import pytest

import tensorlite as tf
from tests.interop import ragged_savedmodel_cases as cases

pytestmark = pytest.mark.interop

SIDE = __file__.replace("test_ragged_savedmodel_interop.py", "tf_ragged_savedmodel_side.py")


@pytest.fixture(scope="module")
def tf_written(tmp_path_factory):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    d = tmp_path_factory.mktemp("ragged_savedmodel")
    return d, run_tf("write", d, script=SIDE)


def _save(d):
    m = cases.module(tf)
    tf.saved_model.save(m, str(d / "tl_ragged"), signatures=cases.signatures(m))


def test_tensorflows_values(tf_written):
    _, facts = tf_written  # what the other tests hold tensorlite to
    assert facts["ragged"]["double"] == [[2.0, 4.0], [], [6.0, 8.0, 10.0]]
    assert facts["ragged"]["double_type"] == "RaggedTensor"
    assert facts["ragged"]["nested"] == [[[2, 3], []], [[4]], []]
    for way in ("function", "signature"):
        tokens = facts["ragged"]["tokens"][way]
        assert tokens["types"] == ["RaggedTensor", "SparseTensor"]
        assert tokens["ragged"] == [["a", "bb", "a"], [], ["c"], ["d", "e"]]
        assert tokens["dense_shape"] == [4, 3]


def test_tensorflow_loads_tensorlites_ragged_functions(tf_written, tmp_path):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    _, facts = tf_written
    _save(tmp_path)
    assert run_tf("load", tmp_path, script=SIDE) == facts["ragged"]


def test_tensorlite_loads_tensorflows_ragged_and_sparse_functions(tf_written):
    d, facts = tf_written
    assert cases.run(tf, tf.saved_model.load(str(d / "tf_ragged"))) == facts["ragged"]
    assert cases.run_sparse(tf, tf.saved_model.load(str(d / "tf_sparse"))) == \
        facts["sparse"]


def test_tensorlite_reloads_its_own(tf_written, tmp_path):
    _, facts = tf_written
    _save(tmp_path)
    assert cases.run(tf, tf.saved_model.load(str(tmp_path / "tl_ragged"))) == facts["ragged"]


def test_sparse_arguments_fail_loudly(tmp_path):
    with pytest.raises(NotImplementedError, match="SparseTensorSpec"):
        tf.saved_model.save(cases.sparse_module(tf), str(tmp_path / "tl_sparse"))

"""The ops tf.Transform's text mappers trace to (RaggedTensorToSparse, the value row ids,
Unique, StringJoin, Where, UnsortedSegmentSum/Min over a number of segments that follows
the batch, SparseToDense, GatherNd, Range) against real
TensorFlow both ways: TensorFlow loads tensorlite's SavedModel and gets tensorlite's eager
values, and tensorlite loads TensorFlow's and gets TensorFlow's."""
import pytest

import tensorlite as tf
from tests.interop import text_graph_ops_cases as cases

pytestmark = pytest.mark.interop

SIDE = __file__.replace("test_text_graph_ops_interop.py", "tf_text_graph_ops_side.py")


@pytest.fixture(scope="module")
def tf_values(tmp_path_factory):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    d = tmp_path_factory.mktemp("text_graph_ops")
    return d, run_tf("write", d, script=SIDE)


def test_tensorlite_eager_values_are_tensorflows(tf_values):
    _, expected = tf_values
    assert cases.run(tf, cases.module(tf)) == expected


def test_tensorflow_loads_tensorlites_graph(tf_values):
    from tests.interop.conftest import run_tf  # noqa: PLC0415
    d, expected = tf_values
    tf.saved_model.save(cases.module(tf), str(d / "tl_ops"))
    assert run_tf("load", d, script=SIDE) == expected


def test_tensorlite_loads_tensorflows_graph(tf_values):
    d, expected = tf_values
    assert cases.run(tf, tf.saved_model.load(str(d / "tf_ops"))) == expected

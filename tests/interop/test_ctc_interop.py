"""CTC against real TensorFlow: tf.nn.ctc_loss (dense labels with blank 0, last and 1;
batch-major; SparseTensor labels) with its gradients, tf.nn.ctc_greedy_decoder, and
tf.keras.backend.ctc_batch_cost / ctc_decode (tf.keras 2) run the same code
(ctc_cases.py) under both, and every output must match."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import ctc_cases
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

TF_CTC_SIDE = __file__.replace("test_ctc_interop.py", "tf_ctc_side.py")


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    d = tmp_path_factory.mktemp("ctc")
    np.savez(d / "inputs.npz", **ctc_cases.make_inputs())
    facts = run_tf("values", d, script=TF_CTC_SIDE)
    theirs = dict(np.load(d / "tf_out.npz"))
    assert facts["names"] == sorted(theirs)
    return ctc_cases.run_all(tf, ctc_cases.make_inputs()), theirs


def test_every_ctc_output_matches_tensorflow(both):
    ours, theirs = both
    assert sorted(ours) == sorted(theirs)
    for name in sorted(theirs):
        assert ours[name].shape == theirs[name].shape, name
        if theirs[name].dtype.kind == "i":
            np.testing.assert_array_equal(ours[name], theirs[name], err_msg=name)
        else:
            np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-4, atol=1e-5,
                                       err_msg=name)

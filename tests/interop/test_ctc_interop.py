"""CTC against real TensorFlow: tf.nn.ctc_loss (dense labels with blank 0, last and 1;
batch-major; SparseTensor labels) with its gradients, tf.nn.ctc_greedy_decoder,
tf.nn.ctc_beam_search_decoder (narrow beams that drop prefixes, and a wide one) and
tf.keras.backend.ctc_batch_cost / ctc_decode (greedy and beam; tf.keras 2) run the same code
(ctc_cases.py) under both, and every output must match, a label sequence too long for
its frames included (TF's dense loss is large and finite there, its gradient defined)."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import ctc_cases
from tests.interop.conftest import TF_SIDE as TF_SIDE_SCRIPT
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

CASES_SIDE = TF_SIDE_SCRIPT.with_name("tf_cases_side.py")  # runs a *_cases module in TF


@pytest.fixture(scope="module")
def both(tmp_path_factory):
    d = tmp_path_factory.mktemp("ctc")
    np.savez(d / "inputs.npz", **ctc_cases.make_inputs())
    facts = run_tf("ctc_cases", d, script=CASES_SIDE)
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
            # TF works in float32 on the impossible row's log-weights of about -707
            # (a float32 step there is 6e-5): its gradient is that much less exact
            atol = 5e-5 if name.startswith("dense") else 1e-5
            np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-4, atol=atol,
                                       err_msg=name)

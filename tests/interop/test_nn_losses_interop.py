"""tf.nn's sampled losses (sampled_softmax_loss, nce_loss with fixed sampled_values, with
and without accidental-hit removal, and their gradients), compute_accidental_hits,
log_poisson_loss and the sparse embedding lookups against real TensorFlow: the same code
(nn_losses_cases.py) runs under both, and every output must match."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import nn_losses_cases
from tests.interop.conftest import TF_SIDE as TF_SIDE_SCRIPT
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

CASES_SIDE = TF_SIDE_SCRIPT.with_name("tf_cases_side.py")  # runs a *_cases module in TF


def test_every_output_matches_tensorflow(tmp_path):
    np.savez(tmp_path / "inputs.npz", **nn_losses_cases.make_inputs())
    facts = run_tf("nn_losses_cases", tmp_path, script=CASES_SIDE)
    theirs = dict(np.load(tmp_path / "tf_out.npz"))
    ours = nn_losses_cases.run_all(tf, nn_losses_cases.make_inputs())
    assert facts["names"] == sorted(theirs) == sorted(ours)
    for name in sorted(theirs):
        assert ours[name].shape == theirs[name].shape, name
        assert ours[name].dtype == theirs[name].dtype, name
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-6,
                                   err_msg=name)

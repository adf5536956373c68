"""tf.nn's sampled losses (sampled_softmax_loss, nce_loss with fixed sampled_values, with
and without accidental-hit removal, and their gradients), compute_accidental_hits,
log_poisson_loss and the sparse embedding lookups against real TensorFlow: the same code
(nn_losses_cases.py) runs under both, and every output must match."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import nn_losses_cases
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

TF_SIDE = __file__.replace("test_nn_losses_interop.py", "tf_nn_losses_side.py")


def test_every_output_matches_tensorflow(tmp_path):
    np.savez(tmp_path / "inputs.npz", **nn_losses_cases.make_inputs())
    facts = run_tf("values", tmp_path, script=TF_SIDE)
    theirs = dict(np.load(tmp_path / "tf_out.npz"))
    ours = nn_losses_cases.run_all(tf, nn_losses_cases.make_inputs())
    assert facts["names"] == sorted(theirs) == sorted(ours)
    for name in sorted(theirs):
        assert ours[name].shape == theirs[name].shape, name
        assert ours[name].dtype == theirs[name].dtype, name
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-5, atol=1e-6,
                                   err_msg=name)

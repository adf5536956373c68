"""The SavedModel guide's CustomModule against real TensorFlow (saved_model_guide_cases.py
under both): a method that only assigns (returns None) is saved, is no default signature,
and each library loads the other's file, mutates its variable through it and sees the new
value."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop import saved_model_guide_cases as cases
from tests.interop.conftest import TF_SIDE as TF_SIDE_SCRIPT
from tests.interop.conftest import run_tf

pytestmark = pytest.mark.interop

CASES_SIDE = TF_SIDE_SCRIPT.with_name("tf_cases_side.py")  # runs a *_cases module in TF


def test_each_library_loads_the_others_mutating_module(tmp_path):
    inputs = {"directory": np.array(str(tmp_path))}
    np.savez(tmp_path / "inputs.npz", **inputs)
    cases.run_all(tf, inputs)  # tensorlite writes its file first, for TF to read
    run_tf("saved_model_guide_cases", tmp_path, script=CASES_SIDE)
    theirs = dict(np.load(tmp_path / "tf_out.npz"))
    ours = cases.run_all(tf, inputs)  # now TF's file is there too
    assert sorted(ours) == sorted(theirs)
    for lib in ("tensorlite", "tensorflow"):
        for view in (ours, theirs):
            assert view[f"{lib}_file_signatures"] == 0
            assert view[f"{lib}_file_before"] == 3.0
            assert view[f"{lib}_file_mutate_returns_none"]
            assert view[f"{lib}_file_after"] == 6.0
            assert view[f"{lib}_file_v"] == 2.0

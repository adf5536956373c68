"""A parallel map's finished results (data/map_buffer.py): held by input index and counted
against the pipeline's RAM budget until taken."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.data.map_buffer import ResultBuffer
from tensorlite.data.stats import RamBudget


def test_results_are_counted_until_taken_and_failures_cost_nothing():
    ram = RamBudget(0)
    buf = ResultBuffer(ram, "ParallelMap")
    buf.put(3, tf.constant(np.zeros(4, np.float32)))
    buf.put(1, ValueError("bad element"))
    assert len(buf) == 2 and 3 in buf and 2 not in buf and buf.lowest() == 1
    assert ram.used == 16
    assert isinstance(buf.take(1), ValueError) and ram.used == 16
    assert buf.take(3).numpy().tolist() == [0.0] * 4 and ram.used == 0 and not buf


def test_clear_releases_everything_and_a_full_budget_names_the_stage():
    ram = RamBudget(20)
    buf = ResultBuffer(ram, "ParallelMap")
    buf.put(0, tf.constant(np.zeros(4, np.float32)))
    assert buf.results()[0].shape == (4,)
    with pytest.raises(tf.errors.ResourceExhaustedError, match="ParallelMap stage"):
        buf.put(1, tf.constant(np.zeros(4, np.float32)))
    buf.clear()
    assert ram.used == 0 and len(buf) == 0

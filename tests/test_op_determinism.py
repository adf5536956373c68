"""Reproducible runs: tf.config.experimental.enable_op_determinism() leaves no choice made by
measurement to change a result's bits (framework/determinism.py), and a seeded program's
fit shuffles alike."""
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import blas_threads, determinism, intra_op_pool
from tensorlite.ops import conv_select


@pytest.fixture
def deterministic():
    tf.config.experimental.enable_op_determinism()
    try:
        yield
    finally:
        determinism.disable()


def test_split_kernels_run_on_one_thread(deterministic):
    seen = []

    def kernel():
        seen.append(intra_op_pool.ways())
        return intra_op_pool.map_runs([(0, 4), (4, 8)], lambda pull: [r for r in pull])
    parts = blas_threads.run(1 << 30, kernel, split=True)
    assert seen == [1] and parts == [[(0, 4), (4, 8)]]


def test_convolutions_take_the_first_eligible_algorithm_unmeasured(deterministic):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 9, 11, 3)).astype(np.float32)   # a shape no test used
    w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)
    key = (x.shape, w.shape, (1, 1), (1, 1), (1, 1, 1, 1), "f")
    names = conv_select.eligible(*key)
    assert len(names) > 1   # the choice would otherwise be measured
    measured = conv_select.STATS["measured"]
    first = tf.nn.conv2d(x, w, 1, "SAME").numpy()
    again = tf.nn.conv2d(x, w, 1, "SAME").numpy()
    assert conv_select.STATS["measured"] == measured
    assert conv_select.choice(*key) == names[0]
    np.testing.assert_array_equal(first, again)
    with conv_select.forced(names[0]):   # the same algorithm's own answer
        np.testing.assert_array_equal(first, tf.nn.conv2d(x, w, 1, "SAME").numpy())


def test_a_training_step_gives_the_same_bits_every_time(deterministic):
    def train():
        # each run chooses its convolution algorithms afresh, as a new process would
        conv_select._CHOICE.clear()
        conv_select._FILTER_CHOICE.clear()
        tf.keras.utils.set_random_seed(3)
        model = tf.keras.Sequential([
            tf.keras.layers.Conv2D(8, 3, activation="relu", input_shape=(12, 12, 3)),
            tf.keras.layers.Flatten(), tf.keras.layers.Dense(4)])
        model.compile("adam", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True))
        rng = np.random.default_rng(0)
        x = rng.random((64, 12, 12, 3), dtype=np.float32)
        y = rng.integers(0, 4, 64)
        model.fit(x, y, batch_size=16, epochs=2, verbose=0)
        return [v.numpy() for v in model.weights]
    for a, b in zip(train(), train()):
        np.testing.assert_array_equal(a, b)


def test_a_seeded_fit_shuffles_alike_every_run():
    # fit's shuffle drew from OS entropy, so tf.keras.utils.set_random_seed did not make
    # a program's training repeat; it now draws from TF's global seed when one is set
    def fit():
        tf.keras.utils.set_random_seed(3)
        model = tf.keras.Sequential([tf.keras.layers.Dense(2, input_shape=(3,))])
        model.compile("sgd", "mse")
        x = np.arange(30, dtype=np.float32).reshape(10, 3) / 30
        model.fit(x, x[:, :2], batch_size=2, epochs=2, verbose=0)   # shuffle=True
        return model.weights[0].numpy()
    np.testing.assert_array_equal(fit(), fit())

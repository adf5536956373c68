"""tf.nn.embedding_lookup_sparse, tf.nn.safe_embedding_lookup_sparse and
tf.nn.log_poisson_loss against NumPy computations of TensorFlow's documented formulas
(real TensorFlow checks them too: tests/interop/test_nn_losses_interop.py)."""
import math

import numpy as np
import pytest

import tensorlite as tf

PARAMS = np.arange(24, dtype=np.float32).reshape(6, 4) / 10.0
# rows: 0 -> ids 1, 3 (weights 2, 1); 1 -> nothing; 2 -> id 5 (weight 0.5)
IDS = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 5], tf.int64), [3, 2])
WEIGHTS = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], [2.0, 1.0, 0.5], [3, 2])


@pytest.mark.parametrize("combiner", ["sum", "mean", "sqrtn"])
def test_embedding_lookup_sparse_combiners(combiner):
    w = np.array([2.0, 1.0, 0.5])
    rows = [(PARAMS[[1, 3]], w[:2]), (np.zeros((0, 4)), w[:0]), (PARAMS[[5]], w[2:])]
    scale = {"sum": lambda v: 1.0, "mean": np.sum, "sqrtn": lambda v: np.sqrt(np.sum(v ** 2))}
    expected = [(e * v[:, None]).sum(0) / scale[combiner](v) if len(v) else np.zeros(4)
                for e, v in rows]
    got = tf.nn.embedding_lookup_sparse(PARAMS, IDS, WEIGHTS, combiner=combiner)
    np.testing.assert_allclose(got.numpy(), expected, rtol=1e-6)
    unweighted = tf.nn.embedding_lookup_sparse(PARAMS, IDS, None, combiner=combiner)
    expected = [e.sum(0) / scale[combiner](np.ones(len(e))) if len(e) else np.zeros(4)
                for e, _ in rows]
    np.testing.assert_allclose(unweighted.numpy(), expected, rtol=1e-6)


def test_embedding_lookup_sparse_default_is_mean_and_trailing_empty_rows_drop():
    ids = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant([0, 2, 4], tf.int64), [4, 2])
    got = tf.nn.embedding_lookup_sparse(PARAMS, ids, None)
    assert got.shape == (2, 4)  # rows up to the last id's, as TF's segment sums
    np.testing.assert_allclose(got.numpy(), [PARAMS[0], (PARAMS[2] + PARAMS[4]) / 2])


def test_embedding_lookup_sparse_max_norm_sharded_params_and_gradient():
    shards = [tf.constant(PARAMS[:3]), tf.constant(PARAMS[3:])]
    got = tf.nn.embedding_lookup_sparse(shards, IDS, None, combiner="sum", max_norm=1.0)
    clipped = PARAMS / np.maximum(np.linalg.norm(PARAMS, axis=1, keepdims=True), 1.0)
    np.testing.assert_allclose(got.numpy()[0], clipped[1] + clipped[3], rtol=1e-6)
    params = tf.Variable(PARAMS)
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.nn.embedding_lookup_sparse(params, IDS, WEIGHTS, "mean"))
    grad = tf.convert_to_tensor(tape.gradient(loss, params)).numpy()
    expected = np.zeros_like(PARAMS)
    expected[1], expected[3], expected[5] = 2 / 3, 1 / 3, 1.0
    np.testing.assert_allclose(grad, expected, rtol=1e-6)


def test_embedding_lookup_sparse_errors():
    with pytest.raises(ValueError, match="combiner must be one of"):
        tf.nn.embedding_lookup_sparse(PARAMS, IDS, None, combiner="max")
    with pytest.raises(TypeError, match="sp_ids must be SparseTensor"):
        tf.nn.embedding_lookup_sparse(PARAMS, [[1, 2]], None)


def test_safe_embedding_lookup_sparse_prunes_fills_and_reshapes():
    # [2, 2, 3] ids: rank 3, flattened to 4 rows; -1 ids and weight <= 0 are dropped
    ids = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 0], [1, 1, 1]],
                          tf.constant([1, -1, 2, 4, 3], tf.int64), [2, 2, 3])
    weights = tf.SparseTensor(ids.indices, [1.0, 5.0, 0.0, 3.0, 1.0], [2, 2, 3])
    got = tf.nn.safe_embedding_lookup_sparse(PARAMS, ids, weights)
    assert got.shape == (2, 2, 4)
    expected = np.zeros((4, 4), np.float32)
    expected[0] = PARAMS[1]  # the -1 id dropped
    expected[3] = (3 * PARAMS[4] + PARAMS[3]) / 4  # row [0, 1]'s weight-0 id dropped: empty
    np.testing.assert_allclose(got.numpy().reshape(4, 4), expected, rtol=1e-6)
    filled = tf.nn.safe_embedding_lookup_sparse(PARAMS, ids, weights, default_id=5)
    expected[1] = expected[2] = PARAMS[5]
    np.testing.assert_allclose(filled.numpy().reshape(4, 4), expected, rtol=1e-6)
    # "sum" keeps the weight-0 id: row [0, 1] is not empty, so no default_id there
    summed = tf.nn.safe_embedding_lookup_sparse(PARAMS, ids, weights, combiner="sum",
                                                default_id=5)
    np.testing.assert_allclose(summed.numpy()[0, 1], np.zeros(4))
    np.testing.assert_allclose(summed.numpy()[1, 0], PARAMS[5])
    with pytest.raises(ValueError, match="Missing embedding_weights"):
        tf.nn.safe_embedding_lookup_sparse(None, ids)


def test_log_poisson_loss_and_its_stirling_term():
    targets = np.array([0.0, 0.5, 1.0, 3.0, 10.0], np.float32)
    log_input = np.array([0.1, -1.0, 2.0, 1.0, 2.3], np.float32)
    plain = np.exp(log_input) - log_input * targets
    np.testing.assert_allclose(tf.nn.log_poisson_loss(targets, log_input).numpy(), plain,
                               rtol=1e-6)
    stirling = np.where(targets > 1, targets * np.log(np.maximum(targets, 1)) - targets
                        + 0.5 * np.log(2 * math.pi * np.maximum(targets, 1)), 0.0)
    full = tf.nn.log_poisson_loss(targets, log_input, compute_full_loss=True)
    np.testing.assert_allclose(full.numpy(), plain + stirling, rtol=1e-6)
    x = tf.constant(log_input)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = tf.reduce_sum(tf.nn.log_poisson_loss(targets, x, compute_full_loss=True))
    np.testing.assert_allclose(tape.gradient(loss, x).numpy(), np.exp(log_input) - targets,
                               rtol=1e-6)
    with pytest.raises(ValueError, match="must have the same shape"):
        tf.nn.log_poisson_loss(targets[:2], log_input)

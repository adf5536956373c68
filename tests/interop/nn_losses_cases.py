"""tf.nn loss and lookup cases run by both sides of test_nn_losses_interop.py:
`run_all(tf, inputs)` with tensorlite or real TensorFlow as `tf` (the same user code)."""
import numpy as np

NUM_CLASSES, DIM, BATCH = 10, 4, 3


def make_inputs(seed=0):
    """Weights, inputs and labels; fixed sampled candidates with accidental hits."""
    rng = np.random.default_rng(seed)
    labels = np.array([[1, 4], [7, 7], [0, 2]], np.int64)
    return {"weights": rng.normal(size=(NUM_CLASSES, DIM)).astype(np.float32),
            "biases": rng.normal(size=NUM_CLASSES).astype(np.float32),
            "inputs": rng.normal(size=(BATCH, DIM)).astype(np.float32),
            "labels": labels,
            "sampled": np.array([4, 9, 7, 3, 5], np.int64),
            "true_count": rng.uniform(0.1, 1.5, labels.shape).astype(np.float32),
            "sampled_count": rng.uniform(0.1, 1.5, 5).astype(np.float32),
            "targets": np.array([0.0, 0.5, 1.0, 3.0, 10.0], np.float32),
            "log_input": rng.normal(size=5).astype(np.float32)}


def _sampled(tf, fn, inputs, **kwargs):
    args = [tf.constant(inputs[k]) for k in ("weights", "biases", "inputs")]
    values = (tf.constant(inputs["sampled"]), tf.constant(inputs["true_count"]),
              tf.constant(inputs["sampled_count"]))
    with tf.GradientTape() as tape:
        tape.watch(args)
        loss = fn(weights=args[0], biases=args[1], labels=inputs["labels"], inputs=args[2],
                  num_sampled=5, num_classes=NUM_CLASSES, num_true=2, sampled_values=values,
                  **kwargs)
        total = tf.reduce_sum(loss)
    grads = tape.gradient(total, args)
    return [loss.numpy()] + [tf.convert_to_tensor(g).numpy() for g in grads]


def run_all(tf, inputs):
    """Every case's outputs, by name."""
    out = {}
    for name, fn in (("softmax", tf.nn.sampled_softmax_loss), ("nce", tf.nn.nce_loss)):
        for remove in (True, False):
            key = f"{name}_{'removed' if remove else 'kept'}"
            for part, value in zip(("loss", "dw", "db", "dx"),
                                   _sampled(tf, fn, inputs, remove_accidental_hits=remove)):
                out[f"{key}_{part}"] = value
    hits = tf.nn.compute_accidental_hits(inputs["labels"], inputs["sampled"], num_true=2)
    out["hits_indices"], out["hits_ids"], out["hits_weights"] = (t.numpy() for t in hits)
    for full in (False, True):
        out[f"poisson_{full}"] = tf.nn.log_poisson_loss(
            inputs["targets"], inputs["log_input"], compute_full_loss=full).numpy()
    ids = tf.SparseTensor([[0, 0, 0], [0, 0, 1], [0, 1, 0], [1, 1, 0], [1, 1, 1]],
                          tf.constant([1, -1, 2, 4, 3], tf.int64), [2, 2, 3])
    weights = tf.SparseTensor(ids.indices, [1.0, 5.0, 0.0, 3.0, 1.0], [2, 2, 3])
    params = tf.constant(inputs["weights"])
    for combiner in ("sum", "mean", "sqrtn"):
        for default_id in (None, 6):
            out[f"safe_{combiner}_{default_id}"] = tf.nn.safe_embedding_lookup_sparse(
                params, ids, weights, combiner=combiner, default_id=default_id).numpy()
        flat = tf.SparseTensor([[0, 0], [0, 1], [2, 0]], tf.constant([1, 3, 5], tf.int64),
                               [4, 2])
        flat_w = tf.SparseTensor(flat.indices, [2.0, 1.0, 0.5], [4, 2])
        out[f"lookup_{combiner}"] = tf.nn.embedding_lookup_sparse(
            params, flat, flat_w, combiner=combiner, max_norm=1.5).numpy()
        out[f"lookup_{combiner}_unweighted"] = tf.nn.embedding_lookup_sparse(
            params, flat, None, combiner=combiner).numpy()
    return out

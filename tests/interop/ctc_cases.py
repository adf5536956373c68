"""CTC cases run by both sides of test_ctc_interop.py: `run_all(tf, inputs)` with
tensorlite or real TensorFlow as `tf` (the same user code), returning named arrays."""
import numpy as np

FRAMES, BATCH, CLASSES, MAX_LABEL = 7, 4, 5, 3


def make_inputs(seed=0):
    """Random logits and labels: lengths vary (one empty), one label sequence repeats a
    class and cannot fit its 3 frames in `logit_length` (dense CTC gives it TF's large
    finite loss; TF's sparse kernel would raise, so the sparse cases use
    `feasible_length`)."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(FRAMES, BATCH, CLASSES)).astype(np.float32) * 2
    labels = rng.integers(1, CLASSES - 1, size=(BATCH, MAX_LABEL)).astype(np.int32)
    labels[0] = [2, 2, 3]
    return {"logits": logits, "labels": labels,
            "label_length": np.array([3, 0, 2, 3], np.int32),
            "logit_length": np.array([3, 5, 6, 4], np.int32),
            "feasible_length": np.array([7, 5, 6, 6], np.int32),
            "nonempty_length": np.array([3, 1, 2, 3], np.int32)}


def _loss_and_grad(tf, fn, logits):
    x = tf.constant(logits)
    with tf.GradientTape() as tape:
        tape.watch(x)
        loss = fn(x)
        total = tf.reduce_sum(tf.where(tf.math.is_finite(loss), loss, tf.zeros_like(loss)))
    return loss.numpy(), tape.gradient(total, x).numpy()


def run_all(tf, inputs):
    """Every case's outputs, by name."""
    x, labels = inputs["logits"], inputs["labels"]
    label_len, logit_len = inputs["label_length"], inputs["logit_length"]
    feasible, nonempty = inputs["feasible_length"], inputs["nonempty_length"]
    out = {}
    for blank in (0, CLASSES - 1, 1):
        lab = np.where(labels >= blank, labels + 1, labels) % CLASSES if blank == 1 else labels
        out[f"dense_blank{blank}"], out[f"dense_blank{blank}_grad"] = _loss_and_grad(
            tf, lambda v, lab=lab, blank=blank: tf.nn.ctc_loss(
                lab, v, label_len, logit_len, blank_index=blank), x)
    unique = tf.nn.ctc_unique_labels(labels)
    out["unique_labels"], out["unique_index"] = (t.numpy() for t in unique)
    out["dense_with_unique"] = tf.nn.ctc_loss(labels, x, label_len, logit_len,
                                              unique=unique).numpy()
    out["batch_major"] = tf.nn.ctc_loss(labels, np.transpose(x, (1, 0, 2)), label_len,
                                        feasible, logits_time_major=False).numpy()
    # TF's sparse-label kernel refuses empty label sequences: every row has one here
    rows = [(b, j) for b in range(BATCH) for j in range(nonempty[b])]
    sparse = tf.SparseTensor(indices=np.array(rows, np.int64).reshape(-1, 2),
                             values=np.array([labels[b, j] for b, j in rows], np.int32),
                             dense_shape=[BATCH, MAX_LABEL])
    out["sparse_blank_last"], out["sparse_blank_last_grad"] = _loss_and_grad(
        tf, lambda v: tf.nn.ctc_loss(sparse, v, None, feasible, blank_index=-1), x)
    (decoded,), neg_sum = tf.nn.ctc_greedy_decoder(x, logit_len)
    out["greedy"] = tf.sparse.to_dense(decoded, default_value=-1).numpy()
    out["greedy_neg_sum"] = neg_sum.numpy()
    probs = tf.nn.softmax(np.transpose(x, (1, 0, 2)), axis=-1)
    out["keras_batch_cost"] = tf.keras.backend.ctc_batch_cost(
        labels, probs, feasible[:, None], nonempty[:, None]).numpy()
    (dense,), log_prob = tf.keras.backend.ctc_decode(probs, logit_len)
    out["keras_decode"], out["keras_decode_log_prob"] = dense.numpy(), log_prob.numpy()
    for width, paths in ((2, 2), (5, 3), (100, 1)):
        decoded, log_probs = tf.nn.ctc_beam_search_decoder(x, logit_len, beam_width=width,
                                                           top_paths=paths)
        for j, d in enumerate(decoded):
            out[f"beam{width}_{j}"] = tf.sparse.to_dense(d, default_value=-1).numpy()
        out[f"beam{width}_log_probs"] = log_probs.numpy()
    dense, log_prob = tf.keras.backend.ctc_decode(probs, logit_len, greedy=False,
                                                  beam_width=4, top_paths=2)
    for j, d in enumerate(dense):
        out[f"keras_beam_{j}"] = d.numpy()
    out["keras_beam_log_prob"] = log_prob.numpy()
    return out

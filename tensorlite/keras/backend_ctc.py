"""`tf.keras.backend.ctc_batch_cost` and `ctc_decode` (Keras 2's): CTC on softmax
probabilities, batch-major, the blank being the last class (the Keras OCR example's loss).

Example:
    >>> y_pred = tf.fill([1, 4, 3], 1 / 3)
    >>> tf.keras.backend.ctc_batch_cost([[0, 1]], y_pred, [[4]], [[2]]).shape
    TensorShape([1, 1])
"""
from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.keras.backend_config import epsilon
from tensorlite.ops.array_ops import expand_dims, squeeze
from tensorlite.ops.common import to_tensor
from tensorlite.ops.ctc_beam_search import beam_search
from tensorlite.ops.ctc_ops import CTC_LOSS, ctc_greedy_decoder
from tensorlite.ops.math_ops import add, cast, log
from tensorlite.ops.reshape_ops import transpose
from tensorlite.ops.sparse_ops import to_dense


def _lengths(t, what):
    t = to_tensor(t)
    if t.shape.rank == 2 and t.shape[1] == 1:
        t = squeeze(t, axis=-1)
    if t.shape.rank != 1:
        raise invalid("CTCLoss", f"ctc_batch_cost: {what} must be [batch_size, 1], got shape "
                      f"{t.shape.as_list()}")
    return cast(t, dtypes.int32)


def ctc_batch_cost(y_true, y_pred, input_length, label_length):
    """Keras 2's `ctc_batch_cost`: `y_true` [batch, max_label_length] labels, `y_pred`
    [batch, frames, classes] softmax probabilities (blank = the last class),
    `input_length` and `label_length` [batch, 1]. Returns the CTC loss, [batch, 1]."""
    y_pred = to_tensor(y_pred)
    if y_pred.shape.rank != 3:
        raise invalid("CTCLoss", f"ctc_batch_cost: y_pred must be [batch, frames, classes] "
                      f"probabilities, got shape {y_pred.shape.as_list()}")
    # as Keras: log(probabilities + epsilon), which the op's softmax renormalizes
    logits = log(add(y_pred, epsilon()))
    labels = cast(to_tensor(y_true), dtypes.int64)
    args = (logits, labels, _lengths(label_length, "label_length"),
            _lengths(input_length, "input_length"))
    # Keras hands its labels to TF's sparse-label kernel: its checks apply
    loss = execute(CTC_LOSS, args, {"blank": y_pred.shape[-1] - 1, "sparse_checks": True})[0]
    return expand_dims(loss, 1)


def ctc_decode(y_pred, input_length, greedy=True, beam_width=100, top_paths=1):
    """Keras 2's `ctc_decode`: the best path of `y_pred` ([batch, frames, classes]
    probabilities, blank last) for each sequence of `input_length` frames, as a list of one
    dense [batch, frames] tensor padded with -1, and the negative sum of the best frames'
    log-probabilities, [batch, 1]. With `greedy=False`, TF 1's beam search (repeats
    merged) keeps `beam_width` prefixes and returns the `top_paths` best, each a dense
    tensor, and their log-probabilities [batch, top_paths]."""
    y_pred = to_tensor(y_pred)
    batch, frames = y_pred.shape[0], y_pred.shape[1]
    inputs = log(add(transpose(y_pred, [1, 0, 2]), epsilon()))
    lengths = cast(to_tensor(input_length), dtypes.int32)
    if greedy:
        decoded, log_prob = ctc_greedy_decoder(inputs, lengths)
    else:
        decoded, log_prob = beam_search(inputs, lengths, beam_width, top_paths,
                                        merge_repeated=True)
    return [to_dense(SparseTensor(d.indices, d.values, [batch, frames]), default_value=-1)
            for d in decoded], log_prob

"""Connectionist temporal classification: `tf.nn.ctc_loss` (TF 2's signature) and
`tf.nn.ctc_greedy_decoder`.

The loss is -log p(labels | logits), summed over every alignment of the label sequence to
the frames (blanks between and around labels, repeats merged). The registered op "CTCLoss"
runs the forward-backward algorithm in log space in NumPy, vectorized over the batch, and
returns, as TensorFlow's CTCLoss op does, the loss and its gradient with respect to the
logits (softmax minus the posterior occupancy of each class, from the same alphas and
betas); the op's gradient rule scales that gradient by the incoming cotangent. Its second
output passes through "PreventGradient", so a second derivative is a loud error, as in
TensorFlow.

The numbers are those of TensorFlow's dense-label CTC (`ctc_loss_dense`, what TF 2's
`tf.nn.ctc_loss` runs on CPU), artifacts included: it gives a path that starts or ends in
the wrong state the weight 1e-307 instead of 0, so a label sequence too long for its frames
has a loss of about 707 rather than inf, and a gradient (from TF's frame-normalized
posteriors, which count wrong starts too) that is not the derivative of that loss. For
sequences that fit, both are exact to within 1e-307.

Example:
    >>> loss = tf.nn.ctc_loss(labels=[[1, 2]], logits=tf.zeros([4, 1, 3]),
    ...                       label_length=[2], logit_length=[4])
    >>> loss.shape
    TensorShape([1])
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.sparse_tensor import SparseTensor
from tensorlite.ops.array_ops import expand_dims
from tensorlite.ops.batching import per_batch
from tensorlite.ops.common import FLOAT, INTEGER, check_kind, to_tensor
from tensorlite.ops.math_ops import cast, multiply
from tensorlite.ops.reshape_ops import transpose

_NEG_INF = -np.inf


def _logsumexp3(a, b, c):
    m = np.maximum(np.maximum(a, b), c)
    safe = np.where(np.isfinite(m), m, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(a - safe) + np.exp(b - safe) + np.exp(c - safe))


def _shift(x, k):
    """x moved k states to the right (k > 0) or left (k < 0) along the last axis, -inf in."""
    out = np.full_like(x, _NEG_INF)
    if k > 0:
        out[:, k:] = x[:, :-k]
    else:
        out[:, :k] = x[:, -k:]
    return out


# TensorFlow's dense CTC puts a tiny probability, log(1e-307) in float32, where a path must
# not end (any state but the last label or the blank after it); a label sequence that
# cannot fit its frames so has a large finite loss (about 707 + the best path's), not inf.
_LOG_END_ELSEWHERE = float(np.float32(np.log(1e-307)))


def _lattice(lp, labels, label_length):
    """TF's dense CTC lattice, with the blank as class 0 (lp is [B, T, C] log-softmax in
    that order): states 2k are blanks, 2k + 1 label k, over every padded label (padding
    emits as its value does, an out-of-range value with probability 1, as TF's one-hot
    does). Returns the emissions [B, T, S], where skipping a blank is allowed (between two
    different labels), each state's class for the gradient (-1: none) and the log-weight
    of ending in each state."""
    b, n = labels.shape
    in_range = (labels >= 0) & (labels < lp.shape[2])
    label_lp = np.take_along_axis(lp, np.where(in_range, labels, 0)[:, None, :].repeat(
        lp.shape[1], axis=1), axis=2)
    emit = np.repeat(lp[:, :, :1], 2 * n + 1, axis=2)
    emit[:, :, 1::2] = np.where(in_range[:, None, :], label_lp, 0.0)
    skip = np.zeros((b, 2 * n + 1), bool)
    skip[:, 3::2] = labels[:, 1:] != labels[:, :-1]
    state_class = np.zeros((b, 2 * n + 1), np.int64)
    state_class[:, 1::2] = np.where(in_range & (labels > 0), labels, -1)
    states = np.arange(2 * n + 1)[None, :]
    last = 2 * label_length[:, None]
    ends = (states == last) | ((states == last - 1) & (label_length[:, None] > 0))
    return emit, skip, state_class, np.where(ends, 0.0, _LOG_END_ELSEWHERE)


def _step(prev, skip):
    """One frame of the lattice: from the same state, the one before, or (where allowed)
    two before."""
    return _logsumexp3(prev, _shift(prev, 1), np.where(skip, _shift(prev, 2), _NEG_INF))


def _alphas(emit, skip, frames, soft_start=False):
    """Forward log-probabilities [B, T, S]; after a sequence's last frame they stay frozen,
    so alpha[:, -1] holds each sequence's final column. Paths start before the first blank
    or label; with `soft_start`, also anywhere with TF's log(1e-307) weight (TF's dense
    forward pass does so; its loss comes from the exact start)."""
    b, t_max, s = emit.shape
    alpha = np.full((b, t_max, s), _NEG_INF)
    first = np.full((b, s), _NEG_INF)
    if soft_start:
        first = _step(np.full((b, s), _LOG_END_ELSEWHERE), skip)
    first[:, :2] = np.logaddexp(first[:, :2], 0.0)
    alpha[:, 0] = first + emit[:, 0]
    for t in range(1, t_max):
        prev = alpha[:, t - 1]
        alpha[:, t] = np.where((t < frames)[:, None], _step(prev, skip) + emit[:, t], prev)
    return alpha


def _betas(emit, skip, last, end_weight):
    """Backward log-probabilities [B, T, S] (each including the frame's own emission): the
    paths from state s at frame t to the end; -inf past a sequence's last frame."""
    b, t_max, s = emit.shape
    beta = np.full((b, t_max, s), _NEG_INF)
    nxt = np.full((b, s), _NEG_INF)
    skip_from = _shift(skip.astype(np.float64), -2) > 0  # s -> s + 2 allowed
    for t in range(t_max - 1, -1, -1):
        step = _logsumexp3(nxt, _shift(nxt, -1), np.where(skip_from, _shift(nxt, -2), _NEG_INF))
        init = emit[:, t] + end_weight
        cur = np.where((t < last)[:, None], step + emit[:, t], _NEG_INF)
        cur = np.where((t == last)[:, None], init, cur)
        beta[:, t] = cur
        nxt = cur
    return beta


def _ctc_fwd(logits, labels, label_length, logit_length, blank, sparse_checks):
    """Loss [...] and gradient [..., T, C] for batch-major logits [..., T, C], as TF's
    dense CTC computes them (its blank moved to class 0 and the labels shifted to match)."""
    lead, (t_max, classes) = logits.shape[:-2], logits.shape[-2:]
    order = np.array([blank] + [c for c in range(classes) if c != blank])
    x = logits.reshape((-1, t_max, classes)).astype(np.float64)[:, :, order]
    b = x.shape[0]
    labels = labels.reshape((b, -1)).astype(np.int64)
    label_length = label_length.reshape(b).astype(np.int64)
    frames = np.minimum(logit_length.reshape(b).astype(np.int64), t_max)
    _check_lengths(labels, label_length, frames, classes)
    if sparse_checks:
        _sparse_kernel_checks(labels, label_length, frames)
    if blank != 0:
        labels = np.where(labels < blank, labels + 1, labels)
    m = x.max(axis=-1, keepdims=True) if classes else x
    lp = x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))
    emit, skip, state_class, end_weight = _lattice(lp, labels, label_length)
    empty = np.where(label_length == 0, 0.0, _LOG_END_ELSEWHERE)  # no frames: TF's start
    if t_max == 0:
        return _outputs(-empty, np.zeros_like(x), lead, logits.dtype)
    alpha = _alphas(emit, skip, frames)
    log_z = np.logaddexp.reduce(alpha[:, -1] + end_weight, axis=1)
    log_z = np.where(frames == 0, empty, log_z)
    beta = _betas(emit, skip, frames - 1, end_weight)
    live = (np.arange(t_max)[None, :] < frames[:, None])[:, :, None]
    # TF's posteriors: its soft start, normalized frame by frame (for a sequence that fits
    # its frames, the same as dividing by the likelihood, to within 1e-307)
    joint = _alphas(emit, skip, frames, soft_start=True) + beta - emit
    top = joint.max(axis=2, keepdims=True)
    top = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(invalid="ignore", over="ignore", divide="ignore"):
        weights = np.exp(joint - top)
        post = np.where(live, weights / weights.sum(axis=2, keepdims=True), 0.0)
    onehot = np.eye(classes + 1)[state_class][..., :classes]  # class -1: no gradient
    occupancy = np.einsum("bts,bsc->btc", post, onehot)
    grad = np.exp(lp) * live - occupancy
    unshuffled = np.empty_like(grad)
    unshuffled[:, :, order] = grad
    return _outputs(-log_z, unshuffled, lead, logits.dtype)


def _outputs(loss, grad, lead, dtype):
    return [loss.reshape(lead).astype(dtype), grad.reshape(lead + grad.shape[1:]).astype(dtype)]


def _check_lengths(labels, label_length, frames, classes):
    if np.any(label_length < 0) or np.any(label_length > labels.shape[1]):
        raise invalid("CTCLoss", f"ctc_loss: label_length must be in [0, {labels.shape[1]}] "
                      f"(the labels' second dimension), got {label_length.tolist()}")
    if np.any(frames < 0):
        raise invalid("CTCLoss", f"ctc_loss: logit_length must be >= 0, got {frames.tolist()}")
    used = np.arange(labels.shape[1])[None, :] < label_length[:, None]
    bad = used & ((labels < 0) | (labels >= classes))
    if np.any(bad):
        raise invalid("CTCLoss", f"ctc_loss: label {labels[bad][0]} is outside the {classes} "
                      f"classes of logits [0, {classes})")


def _ctc_grad(g, ans, logits, labels, label_length, logit_length, blank, sparse_checks):
    # g[0]: [..., B] (extra leading dims for jacobians); the fused gradient is [B, T, C]
    scale = expand_dims(expand_dims(g[0], -1), -1)
    return multiply(scale, prevent_gradient(ans[1])), None, None, None


def _ctc_shape(logits, labels, label_length, logit_length, blank, sparse_checks):
    return [Spec(tuple(logits.shape[:-2]), logits.dtype), Spec(tuple(logits.shape), logits.dtype)]


CTC_LOSS = register("CTCLoss", _ctc_fwd, grad=_ctc_grad, shape=_ctc_shape, multi_output=True,
                    batch=per_batch(_ctc_fwd), unsupported="tf onnx tflite tf_import")


def _prevent_grad(g, ans, x, message):
    raise LookupError(f"Gradient explicitly disabled. Reason: {message}")


PREVENT_GRADIENT = register(
    "PreventGradient", lambda x, message: x, grad=_prevent_grad,
    shape=lambda x, message: Spec(x.shape, x.dtype),
    batch=per_batch(lambda x, message: x), unsupported="tf onnx tflite tf_import")


def prevent_gradient(x, message="Currently there is no way to take the second derivative "
                     "of ctc_loss due to the fused implementation's interaction with "
                     "tf.gradients()"):
    """Identity whose gradient is an error naming `message` (TF's PreventGradient)."""
    return execute(PREVENT_GRADIENT, (x,), {"message": message})


def _sparse_to_dense_labels(labels, batch):
    """A SparseTensor [batch, max_len] of labels as dense labels and their lengths."""
    idx = np.asarray(labels.indices)
    values = np.asarray(labels.values).astype(np.int64)
    length = np.zeros(batch, np.int64)
    np.add.at(length, idx[:, 0], 1)
    dense = np.zeros((batch, max(int(length.max(initial=0)), 1)), np.int64)
    order = np.lexsort((idx[:, 1], idx[:, 0]))
    rows = idx[order, 0]
    cols = np.arange(len(rows)) - np.searchsorted(rows, rows)  # position within each row
    dense[rows, cols] = values[order]
    return dense, length


def _sparse_kernel_checks(labels, label_length, frames):
    """The checks of TF's sparse-label CTCLoss kernel (tf.nn.ctc_loss with a SparseTensor,
    Keras's ctc_batch_cost), on NumPy arrays: an empty label sequence, or one that needs
    more frames than it has (a repeated class needs a blank between its copies), is an
    error there, where the dense-label loss is large and finite."""
    for b, n in enumerate(label_length.tolist()):
        if n == 0:
            raise invalid("CTCLoss", f"Labels length is zero in batch {b}")
        seq = labels[b, :n]
        required = n + int(np.sum(seq[1:] == seq[:-1]))
        if required > frames[b]:
            raise invalid("CTCLoss", f"Not enough time for target transition sequence "
                          f"(required: {required}, available: {frames[b]}) in batch {b}; "
                          f"give it more frames or a shorter label sequence")


def ctc_loss(labels, logits, label_length, logit_length, logits_time_major=True, unique=None,
             blank_index=None, name=None):
    """`tf.nn.ctc_loss` (TF 2): the per-example negative log-likelihood [batch_size] of
    `labels` under the unnormalized log-probabilities `logits` ([frames, batch, classes],
    or [batch, frames, classes] with `logits_time_major=False`). `labels` is dense
    [batch, max_label_length] with `label_length`, or a SparseTensor (then `blank_index`
    is required and `label_length` may be None). `blank_index` defaults to 0 for dense
    labels; a negative one counts from the number of classes (-1: the last class).
    `unique` (from ctc_unique_labels) only speeds TF's implementation up; the result is
    the same without it. A label sequence that cannot fit its frames gets TF's large
    finite loss (its log(1e-307) weight on ending elsewhere), not inf."""
    op = "CTCLoss"
    logits = check_kind(op, to_tensor(logits), FLOAT, "logits")
    if logits.shape.rank != 3:
        raise invalid(op, f"ctc_loss: logits must be 3-D [frames, batch, classes] (or "
                      f"[batch, frames, classes] with logits_time_major=False), got shape "
                      f"{logits.shape.as_list()}")
    classes = logits.shape[-1]
    if logits_time_major:
        logits = transpose(logits, [1, 0, 2])
    batch = logits.shape[0]
    sparse = isinstance(labels, SparseTensor)
    if sparse:
        if blank_index is None:
            raise ValueError("Argument `blank_index` must be provided when `labels` is a "
                             "`SparseTensor`.")
        labels, sparse_length = _sparse_to_dense_labels(labels, batch)
        label_length = sparse_length if label_length is None else label_length
    if blank_index is None:
        blank_index = 0
    blank = int(blank_index) + (classes if blank_index < 0 else 0)
    if not 0 <= blank < classes:
        raise invalid(op, f"ctc_loss: blank_index {blank_index} is outside the {classes} "
                      f"classes of logits")
    labels = check_kind(op, to_tensor(labels), INTEGER, "labels")
    if labels.shape.rank != 2 or labels.shape[0] != batch:
        raise invalid(op, f"ctc_loss: labels must be [batch_size={batch}, max_label_length], "
                      f"got shape {labels.shape.as_list()}")
    lengths = [check_kind(op, to_tensor(v), INTEGER, n)
               for v, n in ((label_length, "label_length"), (logit_length, "logit_length"))]
    for t, n in zip(lengths, ("label_length", "logit_length")):
        if t.shape.as_list() != [batch]:
            raise invalid(op, f"ctc_loss: {n} must be a vector of {batch} lengths, got shape "
                          f"{t.shape.as_list()}")
    return execute(CTC_LOSS, (logits, cast(labels, dtypes.int64), *lengths),
                   {"blank": blank, "sparse_checks": sparse})[0]


def _greedy_fwd(inputs, sequence_length, merge_repeated, blank):
    """Best class per frame; repeats merged (if asked) and blanks dropped, per sequence."""
    best = np.argmax(inputs, axis=-1)  # [T, B]
    score = -np.max(inputs, axis=-1)
    rows, cols, values = [], [], []
    neg_sum = np.zeros(inputs.shape[1], inputs.dtype)
    for b in range(inputs.shape[1]):
        prev, n = -1, 0
        for t in range(int(sequence_length[b])):
            c = int(best[t, b])
            neg_sum[b] += score[t, b]
            if c != blank and not (merge_repeated and c == prev):
                rows.append(b)
                cols.append(n)
                values.append(c)
                n += 1
            prev = c
    width = max([c + 1 for c in cols], default=0)
    return [np.asarray([rows, cols], np.int64).T.reshape(-1, 2), np.asarray(values, np.int64),
            np.asarray([inputs.shape[1], width], np.int64), neg_sum[:, None]]


CTC_GREEDY = register(
    "CTCGreedyDecoder", _greedy_fwd, grad=NOT_DIFFERENTIABLE, multi_output=True,
    shape=lambda x, s, merge_repeated, blank: [
        Spec((None, 2), dtypes.int64), Spec((None,), dtypes.int64), Spec((2,), dtypes.int64),
        Spec((x.shape[1], 1), x.dtype)],
    unsupported="tf onnx tflite batch tf_import")


def ctc_greedy_decoder(inputs, sequence_length, merge_repeated=True, blank_index=None):
    """`tf.nn.ctc_greedy_decoder`: the most likely class of each frame of `inputs`
    ([max_time, batch_size, num_classes] logits), repeats merged when `merge_repeated`,
    blanks (`blank_index`, default the last class; negative counts from the end)
    removed. Returns `([SparseTensor decoded], neg_sum_logits [batch_size, 1])`."""
    op = "CTCGreedyDecoder"
    x = check_kind(op, to_tensor(inputs), FLOAT, "inputs")
    if x.shape.rank != 3:
        raise invalid(op, f"ctc_greedy_decoder: inputs must be [max_time, batch_size, "
                      f"num_classes], got shape {x.shape.as_list()}")
    classes = x.shape[-1]
    blank = classes - 1 if blank_index is None else int(blank_index)
    blank += classes if blank < 0 else 0
    lengths = check_kind(op, to_tensor(sequence_length), INTEGER, "sequence_length")
    if lengths.shape.as_list() != [x.shape[1]]:
        raise invalid(op, f"ctc_greedy_decoder: sequence_length must be [batch_size="
                      f"{x.shape[1]}], got shape {lengths.shape.as_list()}")
    if np.any(np.asarray(lengths) > x.shape[0]):
        raise invalid(op, f"ctc_greedy_decoder: sequence_length must be <= max_time "
                      f"({x.shape[0]}), got {np.asarray(lengths).tolist()}")
    idx, values, shape, neg_sum = execute(
        CTC_GREEDY, (x, lengths), {"merge_repeated": bool(merge_repeated), "blank": blank})
    return [SparseTensor(idx, values, shape)], neg_sum


def _unique_labels_fwd(labels):
    """Per row: its distinct values in order of first appearance, padded with 0, and each
    value's position among them."""
    unique = np.zeros(labels.shape, np.int64)
    index = np.zeros(labels.shape, np.int32)
    for r, row in enumerate(labels):
        seen = {}
        for i, v in enumerate(row.tolist()):
            index[r, i] = seen.setdefault(v, len(seen))
        unique[r, :len(seen)] = list(seen)
    return [unique, index]


CTC_UNIQUE_LABELS = register(
    "CTCUniqueLabels", _unique_labels_fwd, grad=NOT_DIFFERENTIABLE, multi_output=True,
    shape=lambda x: [Spec(x.shape, dtypes.int64), Spec(x.shape, dtypes.int32)],
    unsupported="tf onnx tflite batch tf_import")


def ctc_unique_labels(labels, name=None):
    """`tf.nn.ctc_unique_labels`: for [batch_size, max_label_length] labels, each row's
    distinct labels (int64, padded with 0) and every label's index among them (int32),
    the `unique` argument of `ctc_loss` (which only speeds TF's TPU path up)."""
    labels = check_kind("CTCUniqueLabels", to_tensor(labels), INTEGER, "labels")
    if labels.shape.rank != 2:
        raise invalid("CTCUniqueLabels", f"ctc_unique_labels: labels must be [batch_size, "
                      f"max_label_length], got shape {labels.shape.as_list()}")
    return list(execute(CTC_UNIQUE_LABELS, (labels,), None))

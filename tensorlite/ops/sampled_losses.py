"""`tf.nn.sampled_softmax_loss` and `tf.nn.nce_loss`: losses over a few sampled classes of a
large output layer (the word2vec tutorial trains its embeddings with them).

Both follow TensorFlow's `_compute_sampled_logits`: draw `num_sampled` classes (by default
`tf.random.log_uniform_candidate_sampler(unique=True)`), take the logits `inputs . w + b`
of the true classes and of the sampled ones, subtract `log(expected_count)` from each (so
the estimate corrects for how often the sampler picks a class), and, with
`remove_accidental_hits`, push the logit of a sampled class that is also one of the row's
true classes to -FLT_MAX. The sampled-softmax loss is the softmax cross-entropy of those
logits against labels `1/num_true` on the true classes; NCE sums the sigmoid
cross-entropies, label 1 for the true classes and 0 for the sampled ones.

Everything is a composition of registered ops, so gradients (to weights, biases and
inputs), `tf.function` and `vectorized_map` come from theirs; the sampled classes and their
expected counts are constants to the gradient, as in TensorFlow.

Example:
    >>> loss = tf.nn.sampled_softmax_loss(weights, biases, labels, inputs,  # doctest: +SKIP
    ...                                   num_sampled=5, num_classes=1000)
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import invalid
from tensorlite.ops import candidate_sampling_ops
from tensorlite.ops.array_ops import concat, expand_dims, reshape
from tensorlite.ops.common import FLOAT, check_kind, to_tensor
from tensorlite.ops.creation_ops import ones_like, zeros_like
from tensorlite.ops.math_ops import (
    add,
    cast,
    divide,
    equal,
    log,
    matmul,
    multiply,
    reduce_any,
    reduce_sum,
    stop_gradient_t,
    subtract,
    where,
)
from tensorlite.ops.nn_ops import (
    embedding_lookup,
    sigmoid_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits,
)

_FLT_MAX = float(np.finfo(np.float32).max)


def _check_args(op, labels, inputs, num_sampled, num_classes, num_true):
    if inputs.shape.rank != 2:
        raise invalid(op, f"{op}: inputs must be a [batch_size, dim] matrix of activations, "
                      f"got shape {inputs.shape.as_list()}")
    shape = labels.shape.as_list()
    if labels.shape.rank != 2 or shape[1] != num_true:
        raise invalid(op, f"{op}: labels must be a [batch_size, num_true={num_true}] matrix of "
                      f"class ids, got shape {shape}; reshape a vector with "
                      f"tf.reshape(labels, [-1, 1])")
    if None not in (shape[0], inputs.shape[0]) and shape[0] != inputs.shape[0]:
        raise invalid(op, f"{op}: labels has {shape[0]} rows but inputs has "
                      f"{inputs.shape[0]}; each example needs its labels")
    if num_sampled < 1 or num_classes < 1:
        raise invalid(op, f"{op}: num_sampled and num_classes must be >= 1, got "
                      f"num_sampled={num_sampled}, num_classes={num_classes}")


def _accidental_hit_mask(labels, sampled):
    """[batch, num_sampled] bool: whether a sampled class is one of the row's true classes,
    the dense form of `compute_accidental_hits` (a dense mask keeps the shapes static for
    tf.function, and a class repeated among a row's labels still counts once, as TF's
    sparse_to_dense of the hits does)."""
    hit = reduce_any(equal(expand_dims(labels, 2), reshape(sampled, [1, 1, -1])), axis=1)
    return hit


def _sampled_logits(op, weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                    sampled_values, remove_accidental_hits, seed):
    """TF's `_compute_sampled_logits` with `subtract_log_q=True`: returns the
    [batch, num_true + num_sampled] logits and their labels."""
    inputs = check_kind(op, to_tensor(inputs), FLOAT, "inputs")
    labels = cast(to_tensor(labels), dtypes.int64)
    _check_args(op, labels, inputs, int(num_sampled), int(num_classes), int(num_true))
    if sampled_values is None:
        sampled_values = candidate_sampling_ops.log_uniform_candidate_sampler(
            true_classes=labels, num_true=num_true, num_sampled=num_sampled, unique=True,
            range_max=num_classes, seed=seed)
    if len(sampled_values) != 3:
        raise invalid(op, f"{op}: sampled_values must be the (sampled_candidates, "
                      f"true_expected_count, sampled_expected_count) of a candidate sampler")
    sampled, true_count, sampled_count = (stop_gradient_t(to_tensor(v)) for v in sampled_values)
    sampled = cast(sampled, dtypes.int64)
    labels_flat = reshape(labels, [-1])
    true_w = cast(embedding_lookup(weights, labels_flat), inputs.dtype)
    sampled_w = cast(embedding_lookup(weights, sampled), inputs.dtype)
    true_b = cast(embedding_lookup(biases, labels_flat), inputs.dtype)
    sampled_b = cast(embedding_lookup(biases, sampled), inputs.dtype)
    # [batch, num_true]: each row's input dotted with each of its true classes' weights
    dim = true_w.shape[-1]
    true_logits = reduce_sum(multiply(expand_dims(inputs, 1),
                                      reshape(true_w, [-1, int(num_true), dim])), axis=2)
    true_logits = add(true_logits, reshape(true_b, [-1, int(num_true)]))
    sampled_logits = add(matmul(inputs, sampled_w, transpose_b=True), sampled_b)
    if remove_accidental_hits:
        hits = _accidental_hit_mask(labels, sampled)
        sampled_logits = add(sampled_logits, cast(where(hits, -_FLT_MAX, 0.0), inputs.dtype))
    true_logits = subtract(true_logits, log(cast(true_count, inputs.dtype)))
    sampled_logits = subtract(sampled_logits, log(cast(sampled_count, inputs.dtype)))
    out_logits = concat([true_logits, sampled_logits], 1)
    out_labels = concat([divide(ones_like(true_logits), float(num_true)),
                         zeros_like(sampled_logits)], 1)
    return out_logits, out_labels


def sampled_softmax_loss(weights, biases, labels, inputs, num_sampled, num_classes,
                         num_true=1, sampled_values=None, remove_accidental_hits=True,
                         seed=None, name="sampled_softmax_loss"):
    """`tf.nn.sampled_softmax_loss`: the softmax cross-entropy over the true classes and
    `num_sampled` sampled ones (see the module docstring). `weights` is
    [num_classes, dim] (or a list of shards), `biases` [num_classes], `labels`
    [batch_size, num_true] int64, `inputs` [batch_size, dim]. Returns the per-example loss,
    [batch_size]. For training only: evaluate with the full softmax."""
    logits, targets = _sampled_logits(
        "sampled_softmax_loss", weights, biases, labels, inputs, num_sampled, num_classes,
        num_true, sampled_values, remove_accidental_hits, seed)
    return softmax_cross_entropy_with_logits(labels=stop_gradient_t(targets), logits=logits)


def nce_loss(weights, biases, labels, inputs, num_sampled, num_classes, num_true=1,
             sampled_values=None, remove_accidental_hits=False, name="nce_loss"):
    """`tf.nn.nce_loss`: noise-contrastive estimation, the sum over the true and sampled
    classes of the sigmoid cross-entropy (label 1/num_true on the true classes, 0 on the
    sampled ones) of the log-q-corrected logits. Arguments as `sampled_softmax_loss`;
    returns the per-example loss, [batch_size]."""
    logits, targets = _sampled_logits(
        "nce_loss", weights, biases, labels, inputs, num_sampled, num_classes, num_true,
        sampled_values, remove_accidental_hits, None)
    return reduce_sum(sigmoid_cross_entropy_with_logits(labels=targets, logits=logits), axis=1)

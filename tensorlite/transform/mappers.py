"""tf.Transform's public functions (`import tensorlite.transform as tft`): analyzers that
return a full-pass result (`mean`, `var`, `min`, `max`, `quantiles`, `vocabulary`) and mappers
that use them (`scale_to_z_score`, `scale_to_0_1`, `scale_by_min_max`, `bucketize`,
`compute_and_apply_vocabulary`) or need none (`apply_buckets`, `apply_vocabulary`,
`hash_strings`); the text mappers (`ngrams`, `bag_of_words`, `tfidf`) are in text.py. Inside the transform graph every analyzer result is a constant (a
vocabulary: a table over an asset file), so the graph repeats the transformation exactly.
"""
import numpy as np

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.transform import analyzers, context


def _float(x):
    return x if x.dtype in (tf.float32, tf.float64) else tf.cast(x, tf.float32)


def _const(value, dtype):
    return tf.constant(np.asarray(value), dtype=dtype)


def mean(x, reduce_instance_dims=True, name=None, output_dtype=None):
    """The mean of x over the whole dataset (float32 unless x is float64)."""
    _check_reduce(reduce_instance_dims, "mean")
    _, (m, _v) = analyzers.call("mean_var", x)
    return _const(m, output_dtype or _float(x).dtype)


def var(x, reduce_instance_dims=True, name=None, output_dtype=None):
    """The (population) variance of x over the whole dataset."""
    _check_reduce(reduce_instance_dims, "var")
    _, (_m, v) = analyzers.call("mean_var", x)
    return _const(v, output_dtype or _float(x).dtype)


def min(x, reduce_instance_dims=True, name=None):  # noqa: A001 - tft's name
    """The minimum of x over the whole dataset (x's dtype)."""
    _check_reduce(reduce_instance_dims, "min")
    _, (lo, _hi) = analyzers.call("min_max", x)
    return _const(lo, x.dtype)


def max(x, reduce_instance_dims=True, name=None):  # noqa: A001 - tft's name
    """The maximum of x over the whole dataset (x's dtype)."""
    _check_reduce(reduce_instance_dims, "max")
    _, (_lo, hi) = analyzers.call("min_max", x)
    return _const(hi, x.dtype)


def _check_reduce(reduce_instance_dims, what):
    if not reduce_instance_dims:
        raise NotImplementedError(f"tft.{what}(reduce_instance_dims=False) (per-element "
                                  "statistics) is not implemented in tensorlite")


def scale_to_z_score(x, elementwise=False, name=None, output_dtype=None):
    """(x - mean) / std over the dataset; x - mean where the std is 0."""
    _check_reduce(not elementwise, "scale_to_z_score")
    _, (m, v) = analyzers.call("mean_var", x)
    xf = _float(x) if output_dtype is None else tf.cast(x, output_dtype)
    std = float(np.sqrt(v))
    centred = xf - _const(m, xf.dtype)
    return centred / _const(std, xf.dtype) if std > 0 else centred


def scale_by_min_max(x, output_min=0.0, output_max=1.0, elementwise=False, name=None):
    """x scaled linearly from [min, max] of the dataset to [output_min, output_max]; a sigmoid
    when the dataset holds one distinct value (as tft)."""
    _check_reduce(not elementwise, "scale_by_min_max")
    if output_min >= output_max:
        raise errors.InvalidArgumentError(None, None, "scale_by_min_max: output_min "
                                          f"({output_min}) must be < output_max ({output_max})")
    _, (lo, hi) = analyzers.call("min_max", x)
    xf = _float(x)
    if hi > lo:
        unit = (xf - _const(lo, xf.dtype)) / _const(hi - lo, xf.dtype)
    else:
        unit = tf.sigmoid(xf)
    return unit * _const(output_max - output_min, xf.dtype) + _const(output_min, xf.dtype)


def scale_to_0_1(x, elementwise=False, name=None):
    """x scaled from [min, max] of the dataset to [0, 1]."""
    return scale_by_min_max(x, 0.0, 1.0, elementwise, name)


def quantiles(x, num_buckets, epsilon, weights=None, reduce_instance_dims=True, name=None):
    """The num_buckets - 1 boundaries splitting x into equal-count buckets ([1, k-1] float32);
    tensorlite's quantiles are exact (within any epsilon)."""
    _, bounds = _quantile_bounds(x, num_buckets, weights, reduce_instance_dims)
    return _const(np.asarray(bounds).reshape(1, -1), tf.float32)


def _quantile_bounds(x, num_buckets, weights=None, reduce_instance_dims=True):
    """(analyzer index, boundaries) of the quantiles analyzer on x."""
    _check_reduce(reduce_instance_dims, "quantiles")
    if weights is not None:
        raise NotImplementedError("tft.quantiles(weights=...) is not implemented in tensorlite")
    if int(num_buckets) < 2:
        raise errors.InvalidArgumentError(None, None,
                                          f"quantiles: num_buckets must be >= 2, got {num_buckets}")
    return analyzers.call("quantiles", x, num_buckets=int(num_buckets))


def apply_buckets(x, bucket_boundaries, name=None):
    """The bucket of each value: the number of boundaries <= x (int64)."""
    bounds = tf.reshape(tf.cast(bucket_boundaries, _float(x).dtype), [1, -1])
    above = tf.greater_equal(tf.expand_dims(_float(x), -1), bounds)
    return tf.reduce_sum(tf.cast(above, tf.int64), axis=-1)


def bucketize(x, num_buckets, epsilon=None, weights=None, elementwise=False, name=None):
    """x's bucket among num_buckets equal-count buckets of the dataset (int64)."""
    _check_reduce(not elementwise, "bucketize")
    index, bounds = _quantile_bounds(x, num_buckets, weights)
    run = context.current()
    if run.mode == "analyze" and index not in run.known:
        # the boundaries are still a placeholder, so no analyzer of this phase uses these
        # buckets (one that did would be in a later phase): a cheap stand-in, different by
        # variant as the placeholders are, so that the plan sees what depends on it
        return tf.fill(tf.shape(x), tf.constant(run.variant, tf.int64))
    return apply_buckets(x, _const(np.asarray(bounds).reshape(1, -1), tf.float32))


def vocabulary(x, top_k=None, frequency_threshold=None, vocab_filename=None,
               store_frequency=False, num_oov_buckets=0, name=None, **unused):
    """The dataset's vocabulary of x (most frequent first), as the path of its file (an asset
    of the transform graph); pass it to apply_vocabulary."""
    if store_frequency:
        raise NotImplementedError("tft.vocabulary(store_frequency=True) is not implemented "
                                  "in tensorlite")
    if top_k is not None and int(top_k) < 0:
        raise errors.InvalidArgumentError(None, None, f"vocabulary: top_k must be >= 0, got "
                                          f"{top_k}")
    index, tokens = analyzers.call("vocabulary", x, top_k=top_k,
                                   frequency_threshold=frequency_threshold,
                                   vocab_filename=vocab_filename)
    run = context.current()
    path = run.asset_paths.get(index)
    if path is None:
        path = tf.constant(f"vocabulary_{index}")
    run.vocab_of[id(path)] = (index, tokens)
    return path


def _lookup_keys(x):
    return x if x.dtype == tf.string else tf.strings.as_string(x)


def apply_vocabulary(x, deferred_vocab_filename_tensor, default_value=-1, num_oov_buckets=0,
                     lookup_fn=None, file_format="text", name=None):
    """The id of each value of x in a vocabulary from tft.vocabulary (int64): its rank, else
    an OOV bucket (num_oov_buckets > 0) or default_value. A SparseTensor's values are
    looked up (its indices kept)."""
    if isinstance(x, tf.SparseTensor):
        return x.with_values(apply_vocabulary(x.values, deferred_vocab_filename_tensor,
                                              default_value, num_oov_buckets))
    run = context.current()
    found = run.vocab_of.get(id(deferred_vocab_filename_tensor))
    if found is None:
        raise errors.InvalidArgumentError(
            None, None, "apply_vocabulary: deferred_vocab_filename_tensor must be what "
            "tft.vocabulary returned in this preprocessing_fn")
    index, tokens = found
    if run.mode == "analyze" and index not in run.known:  # a placeholder vocabulary
        n = int(np.prod(x.shape)) if x.shape.rank else 1
        ids = np.full(n, default_value) if run.variant == 0 else 1000 + np.arange(n)
        return tf.reshape(tf.constant(ids, tf.int64), tf.shape(x))
    table = run.tables.get(index) or _eager_table(tokens, default_value, num_oov_buckets)
    return table.lookup(_lookup_keys(x))


def _eager_table(tokens, default_value, num_oov_buckets):
    init = tf.lookup.KeyValueTensorInitializer(
        tf.constant(list(tokens) or [""], tf.string),
        tf.constant(np.arange(len(tokens) or 1), tf.int64))
    if num_oov_buckets:
        return tf.lookup.StaticVocabularyTable(init, num_oov_buckets)
    if not tokens:
        init = tf.lookup.KeyValueTensorInitializer(tf.constant(["\x00"], tf.string),
                                                   tf.constant([default_value], tf.int64))
    return tf.lookup.StaticHashTable(init, default_value)


def compute_and_apply_vocabulary(x, default_value=-1, top_k=None, frequency_threshold=None,
                                 num_oov_buckets=0, vocab_filename=None, name=None, **unused):
    """apply_vocabulary(x, vocabulary(x, ...)): x's id in the dataset's vocabulary."""
    path = vocabulary(x, top_k=top_k, frequency_threshold=frequency_threshold,
                      vocab_filename=vocab_filename, num_oov_buckets=num_oov_buckets)
    run = context.current()
    index, _ = run.vocab_of[id(path)]
    run.kinds[index][1]["num_oov_buckets"] = num_oov_buckets
    run.kinds[index][1]["default_value"] = default_value
    return apply_vocabulary(x, path, default_value=default_value,
                            num_oov_buckets=num_oov_buckets)


def hash_strings(strings, hash_buckets, key=None, name=None):
    """Each string's bucket in [0, hash_buckets) (FarmHash, as TensorFlow's
    to_hash_bucket_fast; keyed SipHash with `key`, as to_hash_bucket_strong)."""
    if key is not None:
        return tf.strings.to_hash_bucket_strong(strings, hash_buckets, key)
    return tf.strings.to_hash_bucket_fast(strings, hash_buckets)

"""`CategoryEncoding` and `Hashing`, and the one categorical encoder (one_hot, multi_hot,
count, tf_idf) that they and the lookup layers share.

Example:
    >>> tf.keras.layers.CategoryEncoding(4, output_mode="count")([[0, 1, 1]]).numpy()
    array([[1., 2., 0., 0.]], dtype=float32)
    >>> tf.keras.layers.Hashing(num_bins=3)(["Hello", "TensorFlow", "2.x"]).numpy().ravel()
    array([0, 2, 2])
"""
from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, gather_ops, math_ops, string_ops
from tensorlite.ops.bincount_ops import DENSE_BINCOUNT, RAGGED_BINCOUNT, WEIGHTED_BINCOUNT

MODES = ("int", "one_hot", "multi_hot", "count", "tf_idf")


def check_mode(mode, allowed=MODES, binary_alias=True):
    """The output_mode by its current name; TF 2.4's spellings (still in programs written
    then, as the load-text tutorial's `output_mode='binary'`) are accepted where Keras
    accepts them: every layer but Hashing."""
    if mode == "tf-idf":
        mode = "tf_idf"
    if mode == "binary" and binary_alias:
        mode = "multi_hot"
    if mode not in allowed:
        raise ValueError(f"output_mode must be one of {list(allowed)}, got {mode!r}")
    return mode


def _is_ragged(x):
    return hasattr(x, "row_splits") and hasattr(x, "flat_values")


def encode(ids, output_mode, depth, idf_weights=None, count_weights=None):
    """Encodes integer ids [batch, k] (or ragged) into [batch, depth]; one_hot encodes each
    id of [batch] ids. As tf.keras 2 and Keras 3, a vector of ids [k] is one sample for
    multi_hot, count and tf_idf (a scalar text's tokens: [depth])."""
    if output_mode == "int":
        return ids
    if output_mode == "one_hot":
        return gather_ops.one_hot(ids, depth, dtype=dtypes.float32)
    if not _is_ragged(ids) and ids.shape.rank in (0, 1):
        one = array_ops.reshape(ids, [1, -1])
        weights = None if count_weights is None else \
            array_ops.reshape(convert_to_tensor(count_weights), [1, -1])
        return array_ops.reshape(encode(one, output_mode, depth, idf_weights, weights), [-1])
    binary = output_mode == "multi_hot"
    if _is_ragged(ids):
        if ids.ragged_rank != 1:
            raise NotImplementedError(f"{output_mode} encoding of ragged ids with "
                                      f"ragged_rank > 1")
        counts = RAGGED_BINCOUNT(ids.row_splits, ids.values, size=depth, binary_output=binary)
    elif count_weights is not None:
        counts = WEIGHTED_BINCOUNT(ids, convert_to_tensor(count_weights), size=depth,
                                   binary_output=binary)
    else:
        counts = DENSE_BINCOUNT(ids, size=depth, binary_output=binary)
    if output_mode == "tf_idf":
        return math_ops.multiply(counts, idf_weights)
    return counts


class CategoryEncoding(Layer):
    """`tf.keras.layers.CategoryEncoding(num_tokens, output_mode='multi_hot')`: integer
    indices in [0, num_tokens) to one_hot, multi_hot or count vectors."""

    def __init__(self, num_tokens=None, output_mode="multi_hot", sparse=False, **kwargs):
        super().__init__(**kwargs)
        if num_tokens is None or num_tokens < 1:
            raise ValueError(f"num_tokens must be >= 1, got {num_tokens}")
        if sparse:
            raise NotImplementedError("CategoryEncoding(sparse=True) (SparseTensor output)")
        self.num_tokens = int(num_tokens)
        self.output_mode = check_mode(output_mode, ("one_hot", "multi_hot", "count"))
        self.sparse = sparse

    def _cast_inputs(self, inputs):
        return inputs if _is_ragged(inputs) else convert_to_tensor(inputs)

    def call(self, inputs, count_weights=None):
        ids = inputs
        if self.output_mode == "one_hot" and not _is_ragged(ids) and ids.shape.rank == 2 \
                and ids.shape[-1] == 1:
            ids = array_ops.squeeze(ids, -1)
        return encode(ids, self.output_mode, self.num_tokens, count_weights=count_weights)

    def get_config(self):
        return {**super().get_config(), "num_tokens": self.num_tokens,
                "output_mode": self.output_mode, "sparse": self.sparse}


class Hashing(Layer):
    """`tf.keras.layers.Hashing(num_bins, mask_value=None, salt=None)`: Fingerprint64 of the
    input (its decimal text for integers) modulo num_bins, as Keras; with `salt`, keyed
    SipHash (`to_hash_bucket_strong`); with `mask_value`, that value maps to 0 and the
    others to 1..num_bins-1."""

    def __init__(self, num_bins, mask_value=None, salt=None, output_mode="int", sparse=False,
                 **kwargs):
        if kwargs.get("dtype") is None and output_mode == "int":
            kwargs["dtype"] = "int64"  # as Keras: its config's dtype is the output's
        super().__init__(**kwargs)
        if num_bins is None or num_bins <= 0:
            raise ValueError(f"num_bins must be positive, got {num_bins}")
        self.num_bins = int(num_bins)
        self.mask_value = mask_value
        self.salt = [salt, salt] if isinstance(salt, int) else salt
        self.output_mode = check_mode(output_mode, ("int", "one_hot", "multi_hot", "count"),
                                      binary_alias=False)
        self.sparse = sparse

    def _cast_inputs(self, inputs):
        return inputs if _is_ragged(inputs) else convert_to_tensor(inputs)

    def _hash(self, x, bins):
        if not x.dtype.is_string:
            x = string_ops.AS_STRING(x, precision=-1, scientific=False, shortest=False,
                                     width=-1, fill="")
        if self.salt is not None:
            return string_ops.TO_HASH_BUCKET_STRONG(x, num_buckets=bins,
                                                    key=tuple(int(s) for s in self.salt))
        return string_ops.TO_HASH_BUCKET_FAST(x, num_buckets=bins)

    def call(self, inputs):
        if _is_ragged(inputs):
            return inputs.with_flat_values(self.call(inputs.flat_values))
        x = inputs if isinstance(inputs, Tensor) else convert_to_tensor(inputs)
        if x.shape.rank == 1 and self.output_mode in ("int", "one_hot"):
            x = array_ops.expand_dims(x, -1)  # multi_hot and count: a vector is one sample
        if self.mask_value is None:
            ids = self._hash(x, self.num_bins)
        else:
            ids = math_ops.add(self._hash(x, self.num_bins - 1), 1)
            is_mask = math_ops.equal(x, convert_to_tensor(self.mask_value, dtype=x.dtype))
            ids = math_ops.where(is_mask, array_ops.zeros_like(ids), ids)
        return encode(ids, self.output_mode, self.num_bins)

    def get_config(self):
        return {**super().get_config(), "num_bins": self.num_bins,
                "mask_value": self.mask_value, "salt": self.salt,
                "output_mode": self.output_mode, "sparse": self.sparse}

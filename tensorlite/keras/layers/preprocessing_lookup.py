"""`StringLookup` and `IntegerLookup`: tokens to indices (and back with `invert=True`), with
Keras's index layout: the mask token (when set) at 0, then `num_oov_indices` OOV indices,
then the vocabulary, most frequent first after `adapt`.

A token not in the vocabulary maps to the one OOV index, or with several OOV indices to
`Fingerprint64(token) % num_oov_indices` (strings) / `token % num_oov_indices` (integers)
past the mask, as Keras computes them.

Example:
    >>> layer = tf.keras.layers.StringLookup(vocabulary=["a", "b"])
    >>> layer(tf.constant([["a", "c", "b"]])).numpy()
    array([[1, 0, 2]])
    >>> layer.get_vocabulary()
    ['[UNK]', 'a', 'b']
"""
import collections
import math

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.keras.layers.base_layer_utils import record_adapt_input
from tensorlite.keras.layers.layer import Layer
from tensorlite.keras.layers.preprocessing_encoding import MODES, check_mode, encode
from tensorlite.lookup.initializers import KeyValueTensorInitializer
from tensorlite.lookup.tables import StaticHashTable
from tensorlite.ops import array_ops, math_ops, string_ops


def _is_ragged(x):
    return hasattr(x, "row_splits") and hasattr(x, "flat_values")


def iterate_batches(data, batch_size=None, steps=None):
    """What `adapt` reads: the batches of a Dataset, or one array/list/tensor."""
    if hasattr(data, "element_spec") and hasattr(data, "__iter__"):
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                return
            yield batch
        return
    yield convert_to_tensor(data)


class IndexLookup(Layer):
    """The shared engine of StringLookup and IntegerLookup."""

    _key_dtype = dtypes.string

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, invert=False, output_mode="int",
                 sparse=False, pad_to_max_tokens=False, **kwargs):
        kwargs.pop("vocabulary_dtype", None)
        super().__init__(**kwargs)
        if max_tokens is not None and max_tokens <= 1:
            raise ValueError(f"max_tokens must be > 1 (or None), got {max_tokens}")
        if num_oov_indices < 0:
            raise ValueError(f"num_oov_indices must be >= 0, got {num_oov_indices}")
        if sparse:
            raise NotImplementedError(f"{type(self).__name__}(sparse=True)")
        self.max_tokens = max_tokens
        self.num_oov_indices = int(num_oov_indices)
        self.mask_token = mask_token
        self.oov_token = oov_token
        self.invert = bool(invert)
        self.output_mode = check_mode(output_mode, MODES)
        if invert and output_mode != "int":
            raise ValueError("invert=True needs output_mode='int'")
        self.pad_to_max_tokens = pad_to_max_tokens
        self.sparse = sparse
        self._vocab = []
        self._idf = None
        self._tables = None
        self.supports_masking = mask_token is not None and output_mode == "int"
        if vocabulary is not None:
            self.set_vocabulary(vocabulary, idf_weights)

    # -- vocabulary ------------------------------------------------------------------------
    def _token_key(self, t):
        if self._key_dtype.is_string:
            return t.encode("utf-8") if isinstance(t, str) else bytes(t)
        return int(t)

    def _token_out(self, k):
        return k.decode("utf-8", "replace") if isinstance(k, bytes) else k

    def _special(self):
        head = [] if self.mask_token is None else [self.mask_token]
        return head + [self.oov_token] * self.num_oov_indices

    def get_vocabulary(self, include_special_tokens=True):
        """The tokens by index (mask and OOV tokens first unless excluded)."""
        words = [self._token_out(k) for k in self._vocab]
        return (self._special() + words) if include_special_tokens else words

    def vocabulary_size(self):
        return len(self._special()) + len(self._vocab)

    def set_vocabulary(self, vocabulary, idf_weights=None):
        """Sets the vocabulary (a list, array, tensor, or a file with one token per line)."""
        if isinstance(vocabulary, str) and not isinstance(self, IntegerLookup):
            with open(vocabulary, "rb") as f:
                vocabulary = [line.rstrip(b"\r\n") for line in f]
        if isinstance(vocabulary, Tensor):
            vocabulary = vocabulary.numpy().tolist()
        keys = [self._token_key(t) for t in np.asarray(vocabulary, dtype=object).reshape(-1)]
        special = {self._token_key(t) for t in self._special() if t is not None}
        keys = [k for k in keys if k not in special] if keys[:len(self._special())] == \
            [self._token_key(t) for t in self._special()] else keys
        if len(set(keys)) != len(keys):
            dup = [k for k, n in collections.Counter(keys).items() if n > 1][0]
            raise ValueError(f"The passed vocabulary has at least one repeated term: "
                             f"{self._token_out(dup)!r}")
        clash = special.intersection(keys)
        if clash:
            raise ValueError(f"The vocabulary may not contain the mask or OOV token "
                             f"{self._token_out(clash.pop())!r}")
        if self.max_tokens is not None and len(keys) + len(self._special()) > self.max_tokens:
            raise ValueError(f"Attempted to set a vocabulary larger than the maximum vocab "
                             f"size: {len(keys) + len(self._special())} > {self.max_tokens}")
        if self.output_mode == "tf_idf":
            if idf_weights is None:
                raise ValueError("output_mode='tf_idf' needs idf_weights with the vocabulary")
            self._set_idf(np.asarray(idf_weights, dtype=np.float32))
        self._vocab = keys
        self._tables = None

    def _set_idf(self, idf):
        oov = np.full(self.num_oov_indices, idf.mean() if idf.size else 0.0, np.float32)
        head = np.zeros(1 if self.mask_token is not None else 0, np.float32)
        self._idf = convert_to_tensor(np.concatenate([head, oov, idf]).astype(np.float32))

    def adapt(self, data, batch_size=None, steps=None):
        """Builds the vocabulary from `data` (`adapt_vocabulary`); a layer given no input
        shape takes the data's rank, as tf.keras 2's does."""
        record_adapt_input(self, data)
        self.adapt_vocabulary(data, batch_size, steps)

    def adapt_vocabulary(self, data, batch_size=None, steps=None):
        """The vocabulary from `data`: most frequent first, ties by token, descending, as
        Keras sorts; `max_tokens` caps it (mask and OOV tokens included)."""
        counts, docs, n_docs = collections.Counter(), collections.Counter(), 0
        for batch in iterate_batches(data, batch_size, steps):
            for row in self._adapt_rows(batch):
                keys = [self._token_key(t) for t in row]
                counts.update(keys)
                docs.update(set(keys))
                n_docs += 1
        special = {self._token_key(t) for t in self._special() if t is not None}
        for k in special:
            counts.pop(k, None)
        order = sorted(counts.items(), key=lambda kv: (kv[1], kv[0]), reverse=True)
        if self.max_tokens is not None:
            order = order[:max(self.max_tokens - len(self._special()), 0)]
        self._vocab = [k for k, _ in order]
        if self.output_mode == "tf_idf":
            idf = [math.log(1 + n_docs / (1 + docs[k])) for k in self._vocab]
            self._set_idf(np.asarray(idf, dtype=np.float32))
        self._tables = None

    def _adapt_rows(self, batch):
        """Rows of tokens (lists of Python values) of one adapt batch."""
        x = self._preprocess(batch if _is_ragged(batch) else convert_to_tensor(batch))
        if _is_ragged(x):
            return x.to_list() if x.ragged_rank == 1 else [
                [t for sub in r for t in sub] for r in x.to_list()]
        arr = np.asarray(x.numpy())
        return [arr.reshape(-1).tolist()] if arr.ndim < 2 else arr.reshape(
            arr.shape[0], -1).tolist()

    def _preprocess(self, x):
        return x

    # -- lookup ------------------------------------------------------------------------------
    def _oov_start(self):
        return 1 if self.mask_token is not None else 0

    def _build_tables(self):
        start = len(self._special())
        keys = self._vocab or [self._placeholder_key()]
        ids = np.arange(start, start + len(self._vocab), dtype=np.int64) if self._vocab else \
            np.array([-2], np.int64)
        key_t = convert_to_tensor(np.asarray(keys, dtype=object) if self._key_dtype.is_string
                                  else np.asarray(keys, dtype=np.int64))
        default = self._oov_start() if self.num_oov_indices == 1 else -1
        forward = StaticHashTable(KeyValueTensorInitializer(key_t, convert_to_tensor(ids)),
                                  default)
        inverse = None
        if self.invert:
            tokens = self.get_vocabulary()
            tok = np.empty(len(tokens), dtype=object) if self._key_dtype.is_string else \
                np.asarray(tokens, dtype=np.int64)
            if self._key_dtype.is_string:
                tok[:] = [self._token_key(t) if t is not None else b"" for t in tokens]
            inverse = StaticHashTable(KeyValueTensorInitializer(
                convert_to_tensor(np.arange(len(tokens), dtype=np.int64)),
                convert_to_tensor(tok)), self._token_key(self.oov_token) if
                self._key_dtype.is_string else int(self.oov_token))
        self._tables = (forward, inverse)

    def _placeholder_key(self):
        return b"\x00tensorlite-empty-vocabulary" if self._key_dtype.is_string else -(2 ** 62)

    def _lookup(self, x):
        if self._tables is None:
            self._build_tables()
        forward, inverse = self._tables
        if self.invert:
            return inverse.lookup(math_ops.cast(x, dtypes.int64))
        ids = forward.lookup(x if x.dtype is self._key_dtype else
                             math_ops.cast(x, self._key_dtype))
        if self.num_oov_indices > 1:
            ids = math_ops.where(math_ops.equal(ids, -1), math_ops.add(
                self._oov_hash(x), self._oov_start()), ids)
        elif self.num_oov_indices == 0:
            ids = _fail_on_oov(ids)
        if self.mask_token is not None:
            is_mask = math_ops.equal(x, convert_to_tensor(self._token_key(self.mask_token),
                                                          dtype=x.dtype))
            ids = math_ops.where(is_mask, array_ops.zeros_like(ids), ids)
        return ids

    def _oov_hash(self, x):
        if x.dtype.is_string:
            return string_ops.TO_HASH_BUCKET_FAST(x, num_buckets=self.num_oov_indices)
        return math_ops.floormod(math_ops.cast(x, dtypes.int64), self.num_oov_indices)

    def _cast_inputs(self, inputs):
        return inputs if _is_ragged(inputs) else convert_to_tensor(inputs)

    def call(self, inputs):
        x = inputs
        if _is_ragged(x):
            ids = x.with_flat_values(self._lookup(x.flat_values))
        else:
            ids = self._lookup(x)
        if self.output_mode == "int":
            return ids
        depth = self.max_tokens if self.pad_to_max_tokens and self.max_tokens else \
            self.vocabulary_size()
        return encode(ids, self.output_mode, depth, self._idf)  # a vector: one sample

    def compute_mask(self, inputs, mask=None):
        if not self.supports_masking or self.invert:
            return None
        return math_ops.not_equal(inputs, convert_to_tensor(self._token_key(self.mask_token),
                                                            dtype=self._key_dtype))

    def get_config(self):
        return {**super().get_config(), "max_tokens": self.max_tokens,
                "num_oov_indices": self.num_oov_indices, "mask_token": self.mask_token,
                "oov_token": self.oov_token, "invert": self.invert,
                "output_mode": self.output_mode, "sparse": self.sparse,
                "pad_to_max_tokens": self.pad_to_max_tokens,
                "vocabulary": self.get_vocabulary(include_special_tokens=False),
                "idf_weights": None if self._idf is None else
                self._idf.numpy()[len(self._special()):].tolist()}


def _fail_on_oov(ids):
    from tensorlite.ops.script_ops import numpy_function  # noqa: PLC0415

    def check(a):
        if np.any(a < 0):
            raise errors.InvalidArgumentError(
                None, None, "a token is out of vocabulary and num_oov_indices=0; add it to "
                "the vocabulary or use num_oov_indices >= 1")
        return a
    return numpy_function(check, [ids], dtypes.int64, stateful=False)


class StringLookup(IndexLookup):
    """`tf.keras.layers.StringLookup`: strings to indices."""

    _key_dtype = dtypes.string

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token="[UNK]",
                 vocabulary=None, idf_weights=None, encoding="utf-8", invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, **kwargs):
        self.encoding = encoding
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         idf_weights, invert, output_mode, sparse, pad_to_max_tokens, **kwargs)

    def get_config(self):
        return {**super().get_config(), "encoding": self.encoding}


class IntegerLookup(IndexLookup):
    """`tf.keras.layers.IntegerLookup`: integers to indices (oov_token -1 by default)."""

    _key_dtype = dtypes.int64

    def __init__(self, max_tokens=None, num_oov_indices=1, mask_token=None, oov_token=-1,
                 vocabulary=None, vocabulary_dtype="int64", idf_weights=None, invert=False,
                 output_mode="int", sparse=False, pad_to_max_tokens=False, **kwargs):
        # written back to the config as given (keys are looked up as int64 either way)
        self.vocabulary_dtype = str(dtypes.as_dtype(vocabulary_dtype).name)
        super().__init__(max_tokens, num_oov_indices, mask_token, oov_token, vocabulary,
                         idf_weights, invert, output_mode, sparse, pad_to_max_tokens, **kwargs)

    def get_config(self):
        return {**super().get_config(), "vocabulary_dtype": self.vocabulary_dtype}

    def _token_out(self, k):
        return int(k)

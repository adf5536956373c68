"""`tf.lookup` tables: StaticHashTable, StaticVocabularyTable (OOV ids by Fingerprint64, so
ids equal TensorFlow's), MutableHashTable, DenseHashTable, and their initializers.

A table keeps a Python dict from key (bytes or int) to value; lookups, inserts and removals
are registry ops (tensorlite/ops/lookup_ops.py), so they work eagerly, in `Dataset.map` and
inside `tf.function`. A RaggedTensor of keys is looked up through its flat values.

Example:
    >>> table = tf.lookup.StaticHashTable(
    ...     tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2]), default_value=-1)
    >>> table.lookup(tf.constant(["b", "z"])).numpy()
    array([ 2, -1], dtype=int32)
"""
import itertools

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.dispatch import OBSERVERS
from tensorlite.framework.registry import declare
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import lookup_ops, string_hash


def _key_list(arr):
    return arr.reshape(-1).tolist()


class _Table:
    """A dict-backed table of scalar keys and values of one shape."""

    def __init__(self, key_dtype, value_dtype, default_value, value_shape=()):
        self.key_dtype = dtypes.as_dtype(key_dtype)
        self.value_dtype = dtypes.as_dtype(value_dtype)
        self._value_shape = tuple(value_shape)
        self._default = convert_to_tensor(default_value, dtype=self.value_dtype)
        self._data = {}

    @property
    def default_value(self):
        return self._default

    @property
    def resource_handle(self):
        return self

    def _np_value_dtype(self):
        return object if self.value_dtype.is_string else self.value_dtype.as_numpy_dtype

    def _check_keys(self, keys, what="keys"):
        if isinstance(keys, Tensor) or getattr(keys, "_is_variable", False):
            t = convert_to_tensor(keys)
        else:
            try:
                t = convert_to_tensor(keys, dtype=self.key_dtype)
            except (TypeError, ValueError):
                t = convert_to_tensor(keys)
        if t.dtype is not self.key_dtype:
            raise TypeError(f"Signature mismatch. {what.capitalize()} must be dtype "
                            f"{self.key_dtype!r}, got {t.dtype!r}; tf.cast the {what} or "
                            f"build the table with key_dtype={t.dtype.name}")
        return t

    # -- called by the registry ops ------------------------------------------------------------
    def _find(self, keys, default):
        get = self._data.get
        d = default if self._value_shape else default.reshape(()).tolist()
        if not self._value_shape and not self.value_dtype.is_string:
            return np.fromiter(map(get, _key_list(keys), itertools.repeat(d)),
                               dtype=self._np_value_dtype(), count=keys.size).reshape(keys.shape)
        flat = list(map(get, _key_list(keys), itertools.repeat(d)))
        out = np.empty((len(flat),) + self._value_shape, dtype=self._np_value_dtype())
        if flat:
            if self._value_shape:
                out[...] = np.stack(flat)
            else:
                out[:] = flat
        return out.reshape(keys.shape + self._value_shape)

    def _insert(self, keys, values):
        vals = values.reshape((-1,) + self._value_shape)
        ks = _key_list(keys)
        if len(ks) != vals.shape[0]:
            raise errors.InvalidArgumentError(
                None, None, f"LookupTableInsert: {len(ks)} keys but {vals.shape[0]} values; "
                f"pass one value per key")
        self._data.update(zip(ks, vals if self._value_shape else vals.tolist()))

    def _remove(self, keys):
        for k in _key_list(keys):
            self._data.pop(k, None)

    def _import(self, keys, values):
        """Replaces the contents (TensorFlow's LookupTableImportV2)."""
        self._data.clear()
        self._insert(np.asarray(keys, dtype=object if self.key_dtype.is_string else None),
                     np.asarray(values, dtype=self._np_value_dtype()))

    def _size(self):
        return len(self._data)

    def _export(self):
        keys = list(self._data)
        kt = object if self.key_dtype.is_string else self.key_dtype.as_numpy_dtype
        k = np.empty(len(keys), dtype=kt)
        k[:] = keys
        v = np.empty((len(keys),) + self._value_shape, dtype=self._np_value_dtype())
        if keys:
            v[...] = [self._data[x] for x in keys]
        return k, v

    # -- public --------------------------------------------------------------------------------
    def lookup(self, keys, name=None):
        """Values for `keys` (the default value where a key is missing)."""
        from tensorlite.ragged import RaggedTensor  # noqa: PLC0415
        if isinstance(keys, RaggedTensor):
            return keys.with_flat_values(self.lookup(keys.flat_values))
        if hasattr(keys, "indices") and hasattr(keys, "dense_shape"):
            return keys.with_values(self.lookup(keys.values))
        return self._lookup(self._check_keys(keys))

    def _lookup(self, keys):
        return lookup_ops.LOOKUP_FIND(keys, self._default, table=self)

    def size(self, name=None):
        return lookup_ops.LOOKUP_SIZE(table=self)

    def export(self, name=None):
        return lookup_ops.LOOKUP_EXPORT(table=self)

    def __getitem__(self, keys):
        return self.lookup(keys)

    def __repr__(self):
        return (f"<{type(self).__name__} {self.key_dtype.name} -> {self.value_dtype.name}, "
                f"{len(self._data)} entries>")


class StaticHashTable(_Table):
    """`tf.lookup.StaticHashTable(initializer, default_value)`: immutable after init."""

    def __init__(self, initializer, default_value, name=None, experimental_is_anonymous=False):
        super().__init__(initializer.key_dtype, initializer.value_dtype, default_value)
        self._initializer = initializer
        keys, values = initializer._pairs()
        self._insert(keys, values)

    @property
    def initializer(self):
        return self._initializer


class StaticVocabularyTable(_Table):
    """`tf.lookup.StaticVocabularyTable(initializer, num_oov_buckets)`: int64 ids; a key
    not in the vocabulary gets `vocab_size + Fingerprint64(key) % num_oov_buckets`
    (integer keys are hashed as their decimal text), as TensorFlow computes it.

    >>> init = tf.lookup.KeyValueTensorInitializer(["a"], tf.constant([0], tf.int64))
    >>> tf.lookup.StaticVocabularyTable(init, 3).lookup(tf.constant(["a", "b"])).numpy()
    array([0, 2])"""

    def __init__(self, initializer, num_oov_buckets, lookup_key_dtype=None, name=None,
                 experimental_is_anonymous=False):
        if num_oov_buckets <= 0:
            raise ValueError(f"num_oov_buckets must be > 0, got {num_oov_buckets}; use "
                             f"StaticHashTable for a vocabulary without OOV buckets")
        if initializer.value_dtype is not dtypes.int64:
            raise TypeError(f"StaticVocabularyTable: the initializer's values must be int64, "
                            f"got {initializer.value_dtype.name}")
        if initializer.key_dtype not in (dtypes.string, dtypes.int64, dtypes.int32):
            raise TypeError("StaticVocabularyTable: keys must be string, int32 or int64")
        super().__init__(initializer.key_dtype, dtypes.int64, -1)
        self._initializer = initializer
        self._num_oov = int(num_oov_buckets)
        keys, values = initializer._pairs()
        self._insert(keys, values)
        self._vocab_size = len(self._data)

    def _lookup(self, keys):
        """TensorFlow's composition (so a saved graph holds ops TensorFlow has): the
        vocabulary table's id, else `vocab_size + StringToHashBucketFast(key)`. Eagerly
        (nothing traces or records) one pass hashes only the missing keys: 1.6x faster."""
        from tensorlite.ops import math_ops, string_ops  # noqa: PLC0415
        if not OBSERVERS and type(keys) is Tensor:
            return wrap(self._find_eager(keys._value))
        ids = lookup_ops.LOOKUP_FIND(keys, self._default, table=self)
        text = keys if self.key_dtype.is_string else string_ops.AS_STRING(
            keys, precision=-1, scientific=False, shortest=False, width=-1, fill="")
        buckets = math_ops.add(string_ops.TO_HASH_BUCKET_FAST(text, num_buckets=self._num_oov),
                               convert_to_tensor(self._vocab_size, dtype=dtypes.int64))
        return math_ops.where(math_ops.not_equal(ids, self._default), ids, buckets)

    def _find_eager(self, keys):
        get = self._data.get
        fp = string_hash.fingerprint64_fn()
        n, base = self._num_oov, self._vocab_size
        flat = _key_list(keys)
        if self.key_dtype.is_string:
            ids = [get(k) for k in flat]
            out = [v if v is not None else base + fp(k) % n for k, v in zip(flat, ids)]
        else:  # integer keys hash as their decimal text
            out = [v if v is not None else base + fp(str(k).encode()) % n
                   for k, v in zip(flat, map(get, flat))]
        return np.array(out, dtype=np.int64).reshape(keys.shape)

    def size(self, name=None):
        """The vocabulary's size plus the OOV buckets, as TensorFlow counts them."""
        from tensorlite.ops import math_ops  # noqa: PLC0415
        return math_ops.add(lookup_ops.LOOKUP_SIZE(table=self),
                            convert_to_tensor(self._num_oov, dtype=dtypes.int64))


class MutableHashTable(_Table):
    """`tf.lookup.MutableHashTable(key_dtype, value_dtype, default_value)`.

    >>> t = tf.lookup.MutableHashTable(tf.string, tf.int64, -1)
    >>> t.insert(["a"], tf.constant([7], tf.int64)); t.lookup(tf.constant(["a"])).numpy()
    array([7])"""

    def __init__(self, key_dtype, value_dtype, default_value, name="MutableHashTable",
                 checkpoint=True, experimental_is_anonymous=False):
        shape = np.shape(np.asarray(default_value, dtype=object if dtypes.as_dtype(
            value_dtype).is_string else None))
        super().__init__(key_dtype, value_dtype, default_value, shape)

    def insert(self, keys, values, name=None):
        keys = self._check_keys(keys)
        vals = convert_to_tensor(values, dtype=self.value_dtype)
        return lookup_ops.LOOKUP_INSERT(keys, vals, table=self)

    def remove(self, keys, name=None):
        return lookup_ops.LOOKUP_REMOVE(self._check_keys(keys), table=self)


class DenseHashTable(MutableHashTable):
    """`tf.lookup.experimental.DenseHashTable`: a MutableHashTable whose `empty_key` and
    `deleted_key` are reserved (inserting or looking them up is an error, as in TF)."""

    def __init__(self, key_dtype, value_dtype, default_value, empty_key, deleted_key,
                 initial_num_buckets=None, name="MutableDenseHashTable", checkpoint=True,
                 experimental_is_anonymous=False):
        super().__init__(key_dtype, value_dtype, default_value)
        # kept in order: a SavedModel's MutableDenseHashTableV2 takes them as its two inputs
        self._empty_key, self._deleted_key = (
            np.asarray(convert_to_tensor(k, dtype=self.key_dtype)._value).item()
            for k in (empty_key, deleted_key))
        self._reserved = {self._empty_key, self._deleted_key}
        if len(self._reserved) != 2:
            raise errors.InvalidArgumentError(None, None, "DenseHashTable: empty_key and "
                                              "deleted_key must differ")

    def _guard(self, keys):
        if self._reserved.intersection(_key_list(keys)):
            raise errors.InvalidArgumentError(
                None, None, f"DenseHashTable: keys may not be the empty_key or deleted_key "
                f"{sorted(self._reserved, key=repr)}")

    def _lookup(self, keys):
        # checked on real keys only: a trace and an export's capture run the graph on
        # made-up inputs ("" or 0), often the empty_key (a graph's lookup of it gives the
        # default value, where TensorFlow's fails)
        from tensorlite.graph.tracing import is_tracing  # noqa: PLC0415 - graph sits above
        if type(keys) is Tensor and not is_tracing():
            self._guard(keys._value)
        return super()._lookup(keys)

    def _insert(self, keys, values):
        self._guard(keys)
        super()._insert(keys, values)

    def _remove(self, keys):
        self._guard(keys)
        super()._remove(keys)

    def _import(self, keys, values):
        """TensorFlow's export of a DenseHashTable is every bucket ([buckets, 1] keys, the
        empty ones holding empty_key): only the real entries are kept."""
        keys = np.asarray(keys, dtype=object if self.key_dtype.is_string else None).reshape(-1)
        values = np.asarray(values).reshape((keys.shape[0],) + self._value_shape)
        keep = np.array([k not in self._reserved for k in keys.tolist()], dtype=bool)
        super()._import(keys[keep] if keys.size else keys, values[keep] if keys.size else values)


# -- the table ops of SavedModels written by TensorFlow ---------------------------------------
# A graph's table is a resource: a creator function makes it (HashTableV2, ...), an initializer
# fills it, and LookupTableFindV2 & co. take it as their first input. The rules live here, not
# in ops/lookup_ops.py, because creating a table needs this module's classes; they hang on the
# family's find op (registry.declare allows one tf_import dict per op).
def _zeros(dtype, shape):
    dtype = dtypes.as_dtype(dtype)
    if dtype.is_string:
        return np.full(tuple(shape or ()), b"", dtype=object)
    return np.zeros(tuple(shape or ()), dtype=dtype.as_numpy_dtype)


def _new_table(cls, attrs, value_shape=()):
    """An empty table of class `cls` (its initializer, if any, runs later as graph ops); the
    graph passes the default value to each LookupTableFindV2, so the stored one is unused."""
    table = _Table.__new__(cls)
    value_dtype = dtypes.as_dtype(attrs["value_dtype"])
    _Table.__init__(table, attrs["key_dtype"], value_dtype, _zeros(value_dtype, value_shape),
                    value_shape)
    table._initializer = None  # StaticHashTable.initializer: filled by the graph instead
    return table


def _table_arg(ins, op):
    table = ins[0]
    if not isinstance(table, _Table):
        raise errors.InvalidArgumentError(None, None, f"SavedModel: {op}'s first input is not a "
                                          f"lookup table (got {type(table).__name__})")
    return table


def _import_rule(op):
    def rule(ins, attrs):
        table = _table_arg(ins, op)
        table._import(ins[1]._value, ins[2]._value)
        return []
    return rule


def _from_text_file(ins, attrs):
    from tensorlite.lookup.initializers import TextFileInitializer  # noqa: PLC0415
    table = _table_arg(ins, "InitializeTableFromTextFileV2")
    size = attrs.get("vocab_size", -1)
    init = TextFileInitializer(ins[1].numpy().decode(), table.key_dtype, attrs["key_index"],
                               table.value_dtype, attrs["value_index"],
                               None if size == -1 else size, attrs.get("delimiter", "\t"),
                               value_index_offset=attrs.get("offset", 0))
    table._import(*init._pairs())
    return []


def _find_rule(ins, attrs):
    table = _table_arg(ins, "LookupTableFindV2")
    return lookup_ops.LOOKUP_FIND(table._check_keys(ins[1]), ins[2], table=table)


def tf_creator(table):
    """(TensorFlow's op that creates `table` in a SavedModel, whether that op takes a
    `value_shape` attribute): the export side of the creator rules below
    (saved_model/table_export.py writes it)."""
    if isinstance(table, DenseHashTable):
        return "MutableDenseHashTableV2", True
    if isinstance(table, MutableHashTable):
        if table._value_shape:
            return "MutableHashTableOfTensorsV2", True
        return "MutableHashTableV2", False
    return "HashTableV2", False


declare(lookup_ops.LOOKUP_FIND, tf_import={
    "HashTableV2": lambda ins, a: _new_table(StaticHashTable, a),
    "MutableHashTableV2": lambda ins, a: _new_table(MutableHashTable, a),
    "MutableHashTableOfTensorsV2": lambda ins, a: _new_table(MutableHashTable, a,
                                                              tuple(a.get("value_shape") or ())),
    "MutableDenseHashTableV2": lambda ins, a: DenseHashTable(
        a["key_dtype"], a["value_dtype"], _zeros(a["value_dtype"], a.get("value_shape")),
        empty_key=ins[0], deleted_key=ins[1]),
    "LookupTableImportV2": _import_rule("LookupTableImportV2"),
    "InitializeTableV2": _import_rule("InitializeTableV2"),
    "InitializeTableFromTextFileV2": _from_text_file,
    "LookupTableFindV2": _find_rule,
    "LookupTableSizeV2": lambda ins, a: lookup_ops.LOOKUP_SIZE(
        table=_table_arg(ins, "LookupTableSizeV2")),
    "LookupTableInsertV2": lambda ins, a: lookup_ops.LOOKUP_INSERT(
        ins[1], ins[2], table=_table_arg(ins, "LookupTableInsertV2")),
    "LookupTableRemoveV2": lambda ins, a: lookup_ops.LOOKUP_REMOVE(
        ins[1], table=_table_arg(ins, "LookupTableRemoveV2")),
    "LookupTableExportV2": lambda ins, a: lookup_ops.LOOKUP_EXPORT(
        table=_table_arg(ins, "LookupTableExportV2")),
})

"""`tf.lookup`: hash tables from keys to values, and their initializers.

Example:
    >>> init = tf.lookup.KeyValueTensorInitializer(["a", "b"], tf.constant([0, 1], tf.int64))
    >>> tf.lookup.StaticVocabularyTable(init, 1).lookup(tf.constant(["b", "?"])).numpy()
    array([1, 2])
"""
from types import SimpleNamespace as _Namespace

from tensorlite.lookup.initializers import (KeyValueTensorInitializer, TextFileIndex,
                                            TextFileInitializer)
from tensorlite.lookup.initializers import (TextFileIdTableInitializer,  # noqa: F401
                                            TextFileStringTableInitializer)
from tensorlite.lookup.tables import (DenseHashTable, MutableHashTable, StaticHashTable,
                                      StaticVocabularyTable)

experimental = _Namespace(DenseHashTable=DenseHashTable, MutableHashTable=MutableHashTable)

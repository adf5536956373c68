"""Registry ops of `tf.lookup` tables. The table object rides in the op's attributes (a
graph keeps calling the same table); ops on mutable tables are marked `stateful` so no graph
pass folds, merges or removes them.

Example:
    >>> LOOKUP_FIND(tf.constant(["a", "z"]), tf.constant(-1, tf.int64), table=t)  # doctest: +SKIP
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register


def _find_fwd(keys, default, table):
    return table._find(keys, default)


def _insert_fwd(keys, values, table):
    table._insert(keys, values)
    return np.array(table._size(), dtype=np.int64)


def _remove_fwd(keys, table):
    table._remove(keys)
    return np.array(table._size(), dtype=np.int64)


def _export_fwd(table):
    return table._export()


def _find_shape(keys, default, table):
    return Spec(tuple(keys.shape) + tuple(table._value_shape), table.value_dtype)


# Every table op acts on a mutable table, whose contents change between graph runs
# (effects="state"); Find, Size and Export change nothing, so export may run them on sample
# inputs (reads_state_only). SavedModel export: the table is the node's first input, a
# DT_RESOURCE argument of the function (saved_model/table_export.py writes the table
# itself); the import rules of the whole family are the find op's (lookup/tables.py).
LOOKUP_FIND = register(
    "LookupTableFindV2", _find_fwd, grad=NOT_DIFFERENTIABLE, shape=_find_shape,
    effects="state", reads_state_only=True, unsupported="onnx tflite batch",
    tf=lambda a, specs: ("LookupTableFindV2", {"Tin": a["table"].key_dtype,
                                               "Tout": a["table"].value_dtype, "T": None},
                         ["table", 0, 1]),
    tf_outputs="values")
LOOKUP_INSERT = register(
    "LookupTableInsertV2", _insert_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda k, v, table: Spec((), dtypes.int64), effects="state",
    unsupported="tf onnx tflite batch tf_import")
LOOKUP_REMOVE = register(
    "LookupTableRemoveV2", _remove_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda k, table: Spec((), dtypes.int64), effects="state",
    unsupported="tf onnx tflite batch tf_import")
LOOKUP_SIZE = register(
    "LookupTableSizeV2", lambda table: np.array(table._size(), dtype=np.int64),
    grad=NOT_DIFFERENTIABLE, shape=lambda table: Spec((), dtypes.int64), effects="state",
    reads_state_only=True, unsupported="onnx tflite batch tf_import",
    tf=lambda a, specs: ("LookupTableSizeV2", {"T": None}, ["table"]), tf_outputs="size")
LOOKUP_EXPORT = register(
    "LookupTableExportV2", _export_fwd, grad=NOT_DIFFERENTIABLE, multi_output=True,
    shape=lambda table: [Spec((None,), table.key_dtype), Spec((None,), table.value_dtype)],
    effects="state", reads_state_only=True, tf_outputs=("keys", "values"),
    unsupported="tf onnx tflite batch tf_import")

"""`tf.io.decode_csv`: CSV records (a string tensor of any shape) into one tensor per
column, typed by `record_defaults`.

Each default is a one-element list (its value fills empty fields and `na_value`), an empty
list or a DType (the field is required: an empty field is an InvalidArgumentError). Quoted
fields ("a, b" with "" for a quote) follow RFC 4180, as TensorFlow's kernel does. Parsing
is one registered op (`DecodeCSV`), so it is one node inside a tf.function or a Dataset.map.

Example:
    >>> a, b = tf.io.decode_csv(["1,x", "2,"], record_defaults=[[0], ["?"]])
    >>> a.numpy(), b.numpy()
    (array([1, 2], dtype=int32), array([b'x', b'?'], dtype=object))
"""
import csv

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.framework.tensor import to_bytes_array
from tensorlite.ops.common import to_tensor

__all__ = ["decode_csv", "parse_row", "column_spec"]


def column_spec(default):
    """(dtype, default value or None when required) of one record_defaults entry."""
    if isinstance(default, dtypes.DType):
        return default, None
    if hasattr(default, "dtype") and hasattr(default, "shape") and \
            int(np.prod(default.shape)) == 0:
        # an empty typed tensor marks a required column (Hands-On ML's
        # `tf.constant([], dtype=tf.float32)` for the target)
        return dtypes.as_dtype(default.dtype), None
    if hasattr(default, "numpy"):
        default = np.asarray(default.numpy(), dtype=object).tolist()
    if isinstance(default, (list, tuple)) or (isinstance(default, np.ndarray)):
        values = list(np.asarray(default, dtype=object).ravel()) if len(default) else []
        if not values:
            raise TypeError("record_defaults: an empty default needs a dtype; use a DType "
                            "(e.g. tf.float32) for a required column")
        default = values[0]
    if isinstance(default, bytes):
        return dtypes.string, default
    if isinstance(default, str):
        return dtypes.string, default.encode()
    if isinstance(default, (bool, np.bool_)):
        raise TypeError("record_defaults: CSV columns are int32, int64, float32, float64 or "
                        "string; got a bool default")
    if isinstance(default, (int, np.integer)):
        return (dtypes.int64 if isinstance(default, np.int64) else dtypes.int32), int(default)
    if isinstance(default, (float, np.floating)):
        return (dtypes.float64 if isinstance(default, np.float64) else dtypes.float32), \
            float(default)
    raise TypeError(f"record_defaults: unsupported default {default!r}; give [value] or a "
                    f"DType per column")


def _convert(field, dtype, default, na_value, where):
    if field == "" or field == na_value:
        if default is None:
            raise errors.InvalidArgumentError(
                None, None, f"Field {where} is required but missing in record; give the "
                f"column a default in record_defaults ([value] instead of [] or a dtype)")
        return default
    if dtype.is_string:
        return field.encode()
    try:
        return int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"Field {where} in record is not a valid {dtype.name}: "
            f"{field!r}") from None


def parse_row(line, specs, field_delim=",", use_quote_delim=True, na_value="",
              select_cols=None):
    """One CSV line (str or bytes) -> the list of Python values of its selected columns."""
    text = line.decode("utf-8") if isinstance(line, bytes) else line
    reader = csv.reader([text], delimiter=field_delim,
                        quoting=csv.QUOTE_MINIMAL if use_quote_delim else csv.QUOTE_NONE)
    fields = next(reader, [""])
    if select_cols is not None:
        if select_cols and max(select_cols) >= len(fields):
            raise errors.InvalidArgumentError(
                None, None, f"Expect {max(select_cols) + 1} fields or more but found "
                f"{len(fields)} in record {text!r}")
        fields = [fields[i] for i in select_cols]
    if len(fields) != len(specs):
        raise errors.InvalidArgumentError(
            None, None, f"Expect {len(specs)} fields but have {len(fields)} in record "
            f"{text!r}; check field_delim ({field_delim!r}) and record_defaults")
    return [_convert(f, d, v, na_value, i) for i, (f, (d, v)) in enumerate(zip(fields, specs))]


def _decode_fwd(records, specs, field_delim, use_quote_delim, na_value, select_cols):
    flat = np.asarray(records, dtype=object).ravel()
    rows = [parse_row(r, specs, field_delim, use_quote_delim, na_value, select_cols)
            for r in flat]
    outs = []
    for j, (dtype, _) in enumerate(specs):
        col = [row[j] for row in rows]
        if dtype.is_string:
            a = to_bytes_array(np.array(col, dtype=object).reshape(np.shape(records)))
        else:
            a = np.array(col, dtype=dtype.as_numpy_dtype).reshape(np.shape(records))
        outs.append(a)
    return tuple(outs)


def _decode_shape(records, specs, field_delim, use_quote_delim, na_value, select_cols):
    return [Spec(records.shape, d) for d, _ in specs]


DECODE_CSV = register("DecodeCSV", _decode_fwd, grad=NOT_DIFFERENTIABLE, shape=_decode_shape,
                      multi_output=True, unsupported="tf onnx tflite batch tf_import")


def decode_csv(records, record_defaults, field_delim=",", use_quote_delim=True, name=None,
               na_value="", select_cols=None):
    """`tf.io.decode_csv`: a list with one tensor per column, each of `records`' shape."""
    specs = tuple(column_spec(d) for d in record_defaults)
    if select_cols is not None:
        select_cols = tuple(int(c) for c in select_cols)
        if list(select_cols) != sorted(set(select_cols)):
            raise ValueError("select_cols is not strictly increasing.")
        if len(select_cols) != len(specs):
            raise ValueError(f"Length of select_cols ({len(select_cols)}) and record_defaults "
                             f"({len(specs)}) do not match.")
    if len(field_delim) != 1:
        raise ValueError(f"field_delim should be only 1 char, got {field_delim!r}")
    t = to_tensor(records)
    if not t.dtype.is_string:
        raise TypeError(f"tf.io.decode_csv: records must be strings, got {t.dtype.name}")
    return list(execute(DECODE_CSV, (t,), {"specs": specs, "field_delim": field_delim,
                                           "use_quote_delim": use_quote_delim,
                                           "na_value": na_value, "select_cols": select_cols}))

"""Table initializers: `KeyValueTensorInitializer` and `TextFileInitializer`.

A text file is read as data only: each line is split on `delimiter` and the chosen columns
(or the whole line, or the line number) become keys and values.

Example:
    >>> init = tf.lookup.KeyValueTensorInitializer(["a", "b"], [1, 2])
    >>> init.key_dtype, init.value_dtype
    (tf.string, tf.int32)
"""
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.convert import convert_to_tensor


class TextFileIndex:
    WHOLE_LINE = -2
    LINE_NUMBER = -1


class KeyValueTensorInitializer:
    """Keys and values given as tensors (or lists) of the same length."""

    def __init__(self, keys, values, key_dtype=None, value_dtype=None, name=None):
        self._keys = convert_to_tensor(keys, dtype=key_dtype)
        self._values = convert_to_tensor(values, dtype=value_dtype)
        if self._keys.shape.rank != 1 or self._values.shape[:1] != self._keys.shape[:1]:
            raise ValueError(f"KeyValueTensorInitializer: keys {self._keys.shape} and values "
                             f"{self._values.shape} must be vectors of the same length")
        self.key_dtype = self._keys.dtype
        self.value_dtype = self._values.dtype

    def _pairs(self):
        return self._keys._value, self._values._value


def _parse(field, dtype, where):
    if dtype.is_string:
        return field
    try:
        return int(field) if dtype.is_integer else float(field)
    except ValueError:
        raise errors.InvalidArgumentError(
            None, None, f"TextFileInitializer: {where}: field {field!r} is not a valid "
                        f"{dtype.name}") from None


class TextFileInitializer:
    """Keys and values from the columns of a text file (`key_index`/`value_index`: a column
    number, `TextFileIndex.WHOLE_LINE` or `TextFileIndex.LINE_NUMBER`)."""

    def __init__(self, filename, key_dtype, key_index, value_dtype, value_index,
                 vocab_size=None, delimiter="\t", name=None, value_index_offset=0):
        self._filename = filename if isinstance(filename, str) else \
            convert_to_tensor(filename).numpy().decode()
        self.key_dtype = dtypes.as_dtype(key_dtype)
        self.value_dtype = dtypes.as_dtype(value_dtype)
        self._key_index, self._value_index = key_index, value_index
        self._vocab_size = vocab_size
        self._delimiter = delimiter.encode() if isinstance(delimiter, str) else delimiter
        self._offset = value_index_offset
        for dt, idx, what in ((self.key_dtype, key_index, "key"),
                              (self.value_dtype, value_index, "value")):
            if idx == TextFileIndex.LINE_NUMBER and not dt.is_integer:
                raise ValueError(f"TextFileInitializer: a LINE_NUMBER {what} must be an "
                                 f"integer dtype, got {dt.name}")
            if idx == TextFileIndex.WHOLE_LINE and not (dt.is_string or dt.is_integer):
                raise ValueError(f"TextFileInitializer: a WHOLE_LINE {what} must be string or "
                                 f"integer, got {dt.name}")

    def _column(self, fields, line, number, index, dtype, where):
        if index == TextFileIndex.LINE_NUMBER:
            return number + (self._offset if where == "value" else 0)
        if index == TextFileIndex.WHOLE_LINE:
            return _parse(line, dtype, f"line {number + 1}")
        if index >= len(fields):
            raise errors.InvalidArgumentError(
                None, None, f"TextFileInitializer: line {number + 1} of {self._filename} has "
                f"{len(fields)} fields, fewer than the {where} column {index} needs")
        return _parse(fields[index], dtype, f"line {number + 1}")

    def _pairs(self):
        try:
            with open(self._filename, "rb") as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            raise errors.NotFoundError(None, None, f"TextFileInitializer: {self._filename} not "
                                       f"found") from None
        if self._vocab_size is not None:
            if len(lines) < self._vocab_size:
                raise errors.InvalidArgumentError(
                    None, None, f"TextFileInitializer: invalid vocab_size in "
                    f"{self._filename}: expected {self._vocab_size} lines, got {len(lines)}")
            lines = lines[:self._vocab_size]
        keys, values = [], []
        for i, line in enumerate(lines):
            fields = line.split(self._delimiter)
            keys.append(self._column(fields, line, i, self._key_index, self.key_dtype, "key"))
            values.append(self._column(fields, line, i, self._value_index, self.value_dtype,
                                       "value"))
        return _array(keys, self.key_dtype), _array(values, self.value_dtype)


def _array(items, dtype):
    if dtype.is_string:
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out
    return np.array(items, dtype=dtype.as_numpy_dtype)


class TextFileStringTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.LINE_NUMBER,
                 value_column_index=TextFileIndex.WHOLE_LINE, vocab_size=None, delimiter="\t",
                 name="text_file_string_table_init"):
        super().__init__(filename, dtypes.int64, key_column_index, dtypes.string,
                         value_column_index, vocab_size, delimiter)


class TextFileIdTableInitializer(TextFileInitializer):
    def __init__(self, filename, key_column_index=TextFileIndex.WHOLE_LINE,
                 value_column_index=TextFileIndex.LINE_NUMBER, vocab_size=None, delimiter="\t",
                 name="text_file_id_table_init", key_dtype=dtypes.string):
        super().__init__(filename, key_dtype, key_column_index, dtypes.int64,
                         value_column_index, vocab_size, delimiter)

"""`tf.strings` bytes and Unicode functions: bytes_split, unicode_decode/encode/split/
transcode with TensorFlow's error modes.

Example:
    >>> tf.strings.unicode_decode(["hé"], "UTF-8").to_list()
    [[104, 233]]
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.ops import array_ops
from tensorlite.ops import string_ops as so
from tensorlite.ops import unicode_ops as uo
from tensorlite.ragged import RaggedTensor
from tensorlite.strings.common import _ragged, _strings, elementwise


# -- bytes, unicode ---------------------------------------------------------------------------------
def bytes_split(input, name=None):  # noqa: A002
    """`tf.strings.bytes_split`: every string as a list of one-byte strings.

    >>> tf.strings.bytes_split("abc").numpy()
    array([b'a', b'b', b'c'], dtype=object)"""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(bytes_split(input.flat_values))
    x = _strings(input, "BytesSplit")
    values, splits = so.BYTES_SPLIT(x)
    return _ragged(values, splits, x.shape.as_list())


def _decode_attrs(input_encoding, errors, replacement_char, replace_control_characters):
    return dict(input_encoding=input_encoding, errors=errors,
                replacement_char=int(replacement_char),
                replace_control_characters=bool(replace_control_characters))


def unicode_decode(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   replace_control_characters=False, name=None):
    """`tf.strings.unicode_decode`: code points (int32) of each string, ragged.

    >>> tf.strings.unicode_decode(["hé"], "UTF-8").to_list()
    [[104, 233]]"""
    if isinstance(input, RaggedTensor):
        return input.with_flat_values(unicode_decode(
            input.flat_values, input_encoding, errors, replacement_char,
            replace_control_characters))
    x = _strings(input, "UnicodeDecode")
    values, splits = uo.UNICODE_DECODE(x, **_decode_attrs(
        input_encoding, errors, replacement_char, replace_control_characters))
    return _ragged(values, splits, x.shape.as_list())


def unicode_decode_with_offsets(input, input_encoding, errors="replace",  # noqa: A002
                                replacement_char=65533, replace_control_characters=False,
                                name=None):
    """`tf.strings.unicode_decode_with_offsets`: code points and their byte offsets."""
    x = _strings(input, "UnicodeDecodeWithOffsets")
    values, offsets, splits = uo.UNICODE_DECODE_WITH_OFFSETS(x, **_decode_attrs(
        input_encoding, errors, replacement_char, replace_control_characters))
    shape = x.shape.as_list()
    return _ragged(values, splits, shape), _ragged(offsets, splits, shape)


def unicode_split(input, input_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                  name=None):
    """`tf.strings.unicode_split`: each string as a list of its characters.

    >>> tf.strings.unicode_split("hé", "UTF-8").numpy()
    array([b'h', b'\\xc3\\xa9'], dtype=object)"""
    codes = unicode_decode(input, input_encoding, errors, replacement_char)
    if isinstance(codes, RaggedTensor):
        flat = codes.flat_values
        chars = unicode_encode(array_ops.expand_dims(flat, -1), input_encoding, errors,
                               replacement_char)
        return codes.with_flat_values(chars)
    return unicode_encode(array_ops.expand_dims(codes, -1), input_encoding, errors,
                          replacement_char)


def unicode_encode(input, output_encoding, errors="replace", replacement_char=65533,  # noqa: A002
                   name=None):
    """`tf.strings.unicode_encode`: code points (innermost dimension) to strings.

    >>> tf.strings.unicode_encode([[104, 105]], "UTF-8").numpy()
    array([b'hi'], dtype=object)"""
    attrs = dict(output_encoding=output_encoding, errors=errors,
                 replacement_char=int(replacement_char))
    if isinstance(input, RaggedTensor):
        if input.ragged_rank > 1:
            return input.with_values(unicode_encode(input.values, output_encoding, errors,
                                                    replacement_char))
        return uo.UNICODE_ENCODE(_points(input.values), input.row_splits, **attrs)
    x = _points(input)
    if x.shape.rank == 0:
        raise ValueError("unicode_encode: input must have rank >= 1 (code points in the "
                         "innermost dimension)")
    rows = array_ops.reshape(x, [-1, x.shape[-1]])
    n, m = rows.shape[0], rows.shape[1]
    uniform = convert_to_tensor(np.arange(n + 1, dtype=np.int64) * m)
    out = uo.UNICODE_ENCODE(array_ops.reshape(rows, [-1]), uniform, **attrs)
    return array_ops.reshape(out, x.shape.as_list()[:-1])


def _points(x):
    t = convert_to_tensor(x)
    if t.dtype is not dtypes.int32:
        if not t.dtype.is_integer:
            raise TypeError(f"unicode_encode: code points must be int32, got {t.dtype.name}")
    return t


@elementwise
def unicode_transcode(input, input_encoding, output_encoding, errors="replace",  # noqa: A002
                      replacement_char=65533, replace_control_characters=False, name=None):
    """`tf.strings.unicode_transcode`: text re-encoded (invalid input per `errors`)."""
    return uo.UNICODE_TRANSCODE(
        _strings(input, "UnicodeTranscode"), output_encoding=output_encoding,
        **_decode_attrs(input_encoding, errors, replacement_char, replace_control_characters))

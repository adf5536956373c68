"""`tf.strings`: string ops on tf.string tensors (and on ragged tensors of strings).

Every function runs registry ops (tensorlite/ops/string_ops.py, unicode_ops.py), so it works
eagerly, in `Dataset.map` and inside `tf.function`. Results TensorFlow gives as ragged
(`split`, `ngrams`, `unicode_decode`, ...) are `tf.RaggedTensor`s; an elementwise function
given a RaggedTensor applies to its flat values.

Example:
    >>> tf.strings.split(["hello world", "a b c"]).to_list()
    [[b'hello', b'world'], [b'a', b'b', b'c']]
    >>> tf.strings.regex_replace("a.b,c", r"[.,]", " ").numpy()
    b'a b c'
"""
import functools

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import array_ops
from tensorlite.ops import string_ops as so
from tensorlite.ops import unicode_ops as uo
from tensorlite.ragged import RaggedTensor

__all__ = ["as_string", "bytes_split", "format", "join", "length", "lower", "ngrams",
           "reduce_join", "regex_full_match", "regex_replace", "split", "strip", "substr",
           "to_hash_bucket", "to_hash_bucket_fast", "to_hash_bucket_strong", "to_number",
           "unicode_decode", "unicode_decode_with_offsets", "unicode_encode", "unicode_split",
           "unicode_transcode", "upper"]


def _strings(x, op_name, arg="input"):
    t = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=dtypes.string) \
        if not getattr(x, "_is_variable", False) else convert_to_tensor(x)
    if not t.dtype.is_string:
        raise invalid(op_name, f"{op_name}: `{arg}` must be a tf.string tensor, got "
                      f"{t.dtype.name}; convert numbers with tf.strings.as_string")
    return t


def _text(v):
    return v.encode("utf-8") if isinstance(v, str) else bytes(v)


def elementwise(fn):
    """A function of one string tensor that also maps over a RaggedTensor's flat values."""
    @functools.wraps(fn)
    def wrapper(input, *args, **kwargs):  # noqa: A002 - TF's argument name
        if isinstance(input, RaggedTensor):
            return input.with_flat_values(fn(input.flat_values, *args, **kwargs))
        return fn(input, *args, **kwargs)
    return wrapper


def _ragged(values, splits, shape):
    """Flat values + row splits of a flat input of `shape` as TensorFlow returns them: a
    scalar input gives a dense vector, a rank-N input a ragged tensor of ragged_rank N."""
    if not shape:
        return values
    rt = RaggedTensor.from_row_splits(values, splits, validate=False)
    for n in reversed(shape[1:]):
        rt = RaggedTensor.from_uniform_row_length(rt, n, validate=False)
    return rt


# -- split and join ----------------------------------------------------------------------------
@elementwise
def split(input, sep=None, maxsplit=-1, name=None):  # noqa: A002
    """`tf.strings.split`: tokens by `sep` (runs of whitespace when None); ragged for a
    vector input, a vector for a scalar.

    >>> tf.strings.split("a,b,,c", sep=",").numpy()
    array([b'a', b'b', b'', b'c'], dtype=object)"""
    x = _strings(input, "StringSplit")
    sep = b"" if sep is None else _text(sep)
    values, splits = so.STRING_SPLIT(x, sep=sep, maxsplit=int(maxsplit))
    return _ragged(values, splits, x.shape.as_list())


def join(inputs, separator="", name=None):
    """`tf.strings.join`: elementwise concatenation with broadcasting.

    >>> tf.strings.join(["a", ["b", "c"]], separator="-").numpy()
    array([b'a-b', b'a-c'], dtype=object)"""
    if isinstance(inputs, (Tensor, str, bytes)):
        raise TypeError("tf.strings.join: `inputs` must be a list of string tensors")
    items = [_strings(x, "StringJoin", "inputs") for x in inputs]
    return so.STRING_JOIN(*items, separator=_text(separator))


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """`tf.strings.reduce_join`: joins along `axis` (all axes when None).

    >>> tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=" ").numpy()
    array([b'a b', b'c d'], dtype=object)"""
    if isinstance(inputs, RaggedTensor):
        if axis in (1, -1) and inputs.ragged_rank == 1 and inputs.shape.rank == 2:
            return so.SEGMENT_JOIN(_strings(inputs.values, "ReduceJoin", "inputs"),
                                   inputs.row_splits, separator=_text(separator))
        raise NotImplementedError("tf.strings.reduce_join of a ragged tensor is implemented "
                                  "for axis=1 of a 2-D ragged tensor only")
    x = _strings(inputs, "ReduceJoin", "inputs")
    rank = x.shape.rank
    if axis is None:
        axes = None
    else:
        axes = tuple(sorted({int(a) % rank if rank else 0 for a in np.atleast_1d(axis)}))
        for a in np.atleast_1d(axis):
            if not -rank <= int(a) < max(rank, 1):
                raise invalid("ReduceJoin", f"Invalid reduction dimension {int(a)} for input "
                              f"with {rank} dimensions")
    return so.REDUCE_JOIN(x, axis=axes, keepdims=bool(keepdims), separator=_text(separator))


# -- regular expressions ---------------------------------------------------------------------------
@elementwise
def regex_replace(input, pattern, rewrite, replace_global=True, name=None):  # noqa: A002
    """`tf.strings.regex_replace` (RE2 syntax; `\\1` in `rewrite` is group 1).

    >>> tf.strings.regex_replace("aaa", "a", "b", replace_global=False).numpy()
    b'baa'"""
    return so.REGEX_REPLACE(_strings(input, "RegexReplace"), pattern=_pattern(pattern),
                            rewrite=_pattern(rewrite), replace_global=bool(replace_global))


@elementwise
def regex_full_match(input, pattern, name=None):  # noqa: A002
    """`tf.strings.regex_full_match`: whether each whole string matches.

    >>> tf.strings.regex_full_match(["ab", "abc"], "a.").numpy()
    array([ True, False])"""
    return so.REGEX_FULL_MATCH(_strings(input, "RegexFullMatch"), pattern=_pattern(pattern))


def _pattern(p):
    if isinstance(p, Tensor) or getattr(p, "_is_variable", False):
        p = convert_to_tensor(p)
        if p.shape.rank != 0 or not p.dtype.is_string:
            raise ValueError("a regex pattern/rewrite tensor must be a scalar tf.string")
        return p._value[()]
    return _text(p)


# -- per-string -------------------------------------------------------------------------------------
_UNITS = ("BYTE", "UTF8_CHAR")


def _unit(unit, op):
    if unit not in _UNITS:
        raise ValueError(f"{op}: unit must be 'BYTE' or 'UTF8_CHAR', got {unit!r}")
    return unit


@elementwise
def length(input, unit="BYTE", name=None):  # noqa: A002
    """`tf.strings.length` in bytes or UTF-8 characters.

    >>> tf.strings.length(["héllo"], unit="UTF8_CHAR").numpy()
    array([5], dtype=int32)"""
    return so.STRING_LENGTH(_strings(input, "StringLength"), unit=_unit(unit, "StringLength"))


@elementwise
def lower(input, encoding="", name=None):  # noqa: A002
    """`tf.strings.lower`: ASCII letters only unless `encoding='utf-8'`."""
    return so.STRING_LOWER(_strings(input, "StringLower"), encoding=encoding)


@elementwise
def upper(input, encoding="", name=None):  # noqa: A002
    """`tf.strings.upper`: ASCII letters only unless `encoding='utf-8'`."""
    return so.STRING_UPPER(_strings(input, "StringUpper"), encoding=encoding)


@elementwise
def strip(input, name=None):  # noqa: A002
    """`tf.strings.strip`: leading and trailing ASCII whitespace removed."""
    return so.STRING_STRIP(_strings(input, "StringStrip"))


@elementwise
def substr(input, pos, len, unit="BYTE", name=None):  # noqa: A002 - TF's argument names
    """`tf.strings.substr`: `len` bytes (or characters) from `pos` (negative: from the end).

    >>> tf.strings.substr("Hello", 1, 3).numpy()
    b'ell'"""
    x = _strings(input, "Substr")
    p = convert_to_tensor(pos)
    n = convert_to_tensor(len)
    if not (p.dtype.is_integer and n.dtype.is_integer):
        raise TypeError("tf.strings.substr: pos and len must be integers")
    return so.SUBSTR(x, p, n, unit=_unit(unit, "Substr"))


@elementwise
def to_number(input, out_type=dtypes.float32, name=None):  # noqa: A002
    """`tf.strings.to_number`: parses numbers; InvalidArgumentError for anything else.

    >>> tf.strings.to_number(["1.5", "-2"]).numpy()
    array([ 1.5, -2. ], dtype=float32)"""
    dt = dtypes.as_dtype(out_type)
    if dt not in (dtypes.float32, dtypes.float64, dtypes.int32, dtypes.int64):
        raise TypeError(f"tf.strings.to_number: out_type must be float32, float64, int32 or "
                        f"int64, got {dt.name}")
    return so.STRING_TO_NUMBER(_strings(input, "StringToNumber"), out_type=dt.name)


@elementwise
def as_string(input, precision=-1, scientific=False, shortest=False, width=-1,  # noqa: A002
              fill="", name=None):
    """`tf.strings.as_string`: numbers and bools as text (printf-style options).

    >>> tf.strings.as_string([3.1415926], precision=2).numpy()
    array([b'3.14'], dtype=object)"""
    x = convert_to_tensor(input)
    if scientific and shortest:
        raise ValueError("as_string: cannot select both scientific and shortest notation")
    if len(fill) > 1:
        raise ValueError(f"as_string: fill must be at most one character, got {fill!r}")
    if x.dtype.is_floating is False and x.dtype.is_complex is False and precision > -1:
        raise ValueError("as_string: precision is only for floating-point inputs")
    return so.AS_STRING(x, precision=int(precision), scientific=bool(scientific),
                        shortest=bool(shortest), width=int(width), fill=fill)


def format(template, inputs, placeholder="{}", summarize=3, name=None):  # noqa: A001
    """`tf.strings.format`: tensors formatted into a template as tf.print shows them.

    >>> tf.strings.format("x={}", [tf.constant([1, 2])]).numpy()
    b'x=[1 2]'"""
    if isinstance(inputs, (list, tuple)):
        items = [convert_to_tensor(t) for t in inputs]
    else:
        items = [convert_to_tensor(inputs)]
    return so.STRING_FORMAT(*items, template=template, placeholder=placeholder,
                            summarize=int(summarize))


def ngrams(data, ngram_width, separator=" ", pad_values=None, padding_width=None,
           preserve_short_sequences=False, name=None):
    """`tf.strings.ngrams`: n-grams of the innermost dimension, joined by `separator`.

    >>> tf.strings.ngrams(["A", "B", "C", "D"], 2).numpy()
    array([b'A B', b'B C', b'C D'], dtype=object)"""
    widths = (int(ngram_width),) if np.ndim(ngram_width) == 0 else tuple(
        int(w) for w in ngram_width)
    if any(w < 1 for w in widths):
        raise ValueError(f"ngrams: ngram_width must be >= 1, got {widths}")
    if pad_values is None:
        left = right = b""
        pad_width = 0
    else:
        left, right = (pad_values, pad_values) if isinstance(pad_values, (str, bytes)) else \
            tuple(pad_values)
        left, right = _text(left), _text(right)
        if padding_width is not None and padding_width < 1:
            raise ValueError(f"ngrams: padding_width must be > 0, got {padding_width}")
        pad_width = -1 if padding_width is None else int(padding_width)
    attrs = dict(widths=widths, separator=_text(separator), left_pad=left, right_pad=right,
                 pad_width=pad_width, preserve_short=bool(preserve_short_sequences))
    if isinstance(data, RaggedTensor):
        if data.ragged_rank > 1:
            return data.with_values(ngrams(data.values, ngram_width, separator, pad_values,
                                           padding_width, preserve_short_sequences))
        values, splits = so.STRING_NGRAMS(_strings(data.values, "StringNGrams", "data"),
                                          data.row_splits, **attrs)
        return RaggedTensor.from_row_splits(values, splits, validate=False)
    x = _strings(data, "StringNGrams", "data")
    if x.shape.rank == 0:
        raise ValueError("ngrams: data must have rank >= 1")
    rows = array_ops.reshape(x, [-1, x.shape[-1]])
    n, m = rows.shape[0], rows.shape[1]
    uniform = convert_to_tensor(np.arange(0, n * m + 1, max(m, 1), dtype=np.int64)[:n + 1]
                                if m else np.zeros(n + 1, np.int64))
    values, splits = so.STRING_NGRAMS(array_ops.reshape(rows, [-1]), uniform, **attrs)
    return array_ops.reshape(values, x.shape.as_list()[:-1] + [-1])


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


# -- hashing -------------------------------------------------------------------------------------------
@elementwise
def to_hash_bucket_fast(input, num_buckets, name=None):  # noqa: A002
    """`tf.strings.to_hash_bucket_fast`: Fingerprint64(s) % num_buckets, as TensorFlow.

    >>> tf.strings.to_hash_bucket_fast(["Hello", "TensorFlow", "2.x"], 3).numpy()
    array([0, 2, 2])"""
    return so.TO_HASH_BUCKET_FAST(_strings(input, "StringToHashBucketFast"),
                                  num_buckets=int(num_buckets))


@elementwise
def to_hash_bucket_strong(input, num_buckets, key, name=None):  # noqa: A002
    """`tf.strings.to_hash_bucket_strong`: SipHash-2-4 keyed by `key` (two ints).

    >>> tf.strings.to_hash_bucket_strong(["Hello", "TF"], 3, [1, 2]).numpy()
    array([2, 0])"""
    key = [int(k) for k in key]
    if len(key) != 2:
        raise ValueError(f"to_hash_bucket_strong: key must be two integers, got {key}")
    return so.TO_HASH_BUCKET_STRONG(_strings(input, "StringToHashBucketStrong"),
                                    num_buckets=int(num_buckets), key=tuple(key))


@elementwise
def to_hash_bucket(input, num_buckets, name=None):  # noqa: A002
    """`tf.strings.to_hash_bucket`: TensorFlow's legacy Hash64 % num_buckets.

    >>> tf.strings.to_hash_bucket(["Hello", "TensorFlow", "2.x"], 3).numpy()
    array([2, 0, 1])"""
    return so.TO_HASH_BUCKET(_strings(input, "StringToHashBucket"),
                             num_buckets=int(num_buckets))

"""`tf.strings`: split/join, regular expressions, per-string transformations, numbers,
formatting and n-grams.

Example:
    >>> tf.strings.split(["a b"]).to_list()
    [[b'a', b'b']]
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.dispatch import invalid
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import array_ops
from tensorlite.ops import string_ops as so
from tensorlite.ragged import RaggedTensor
from tensorlite.ragged.ragged_math import Reducer, reducer_fn
from tensorlite.strings.common import _ragged, _strings, _text, elementwise


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
    if any(isinstance(x, RaggedTensor) for x in inputs):  # rows of equal lengths, joined
        from tensorlite.ragged.ragged_math import elementwise  # noqa: PLC0415
        return elementwise(lambda *flat: join(list(flat), separator), list(inputs))
    items = [_strings(x, "StringJoin", "inputs") for x in inputs]
    return so.STRING_JOIN(*items, separator=_text(separator))


def reduce_join(inputs, axis=None, keepdims=False, separator="", name=None):
    """`tf.strings.reduce_join`: joins along `axis` (all axes when None).

    >>> tf.strings.reduce_join([["a", "b"], ["c", "d"]], axis=1, separator=" ").numpy()
    array([b'a b', b'c d'], dtype=object)"""
    if isinstance(inputs, RaggedTensor):  # any axis, as the ragged numeric reductions
        sep = _text(separator)
        _strings(inputs.flat_values, "ReduceJoin", "inputs")

        def dense(x, ax):
            axes = tuple(range(x.shape.rank)) if ax is None else (int(ax) % x.shape.rank,)
            return so.REDUCE_JOIN(x, axis=axes, keepdims=False, separator=sep)
        join = Reducer("join", dense, lambda v, s: so.SEGMENT_JOIN(v, s, separator=sep))
        return reducer_fn(join)(inputs, axis=axis, keepdims=keepdims)
    x = _strings(inputs, "ReduceJoin", "inputs")
    rank = x.shape.rank
    if axis is None:
        axes = None
    else:
        # in the order given: TF joins the first listed axis fastest
        axes = tuple(dict.fromkeys(int(a) % rank if rank else 0 for a in np.atleast_1d(axis)))
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

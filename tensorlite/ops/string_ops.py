"""String ops on tf.string tensors (NumPy object arrays of `bytes`), each a registry op.

Registry ops run the same way eagerly, inside `tf.function` graphs and in `Dataset.map`.
Ops whose TensorFlow result is ragged (`StringSplitV2`, `StringNGrams`, `UnicodeDecode`, ...)
return the flat values and int64 row splits; `tensorlite.strings` wraps them as a
`tf.RaggedTensor`. Why object arrays of bytes: TensorFlow strings are arbitrary byte strings
of any length; NumPy's fixed-width `S` dtype strips trailing NUL bytes and pads every element
to the longest one, and every op here runs Python's bytes methods per element anyway.

Example:
    >>> STRING_LENGTH(tf.constant(["héllo"]), unit="UTF8_CHAR").numpy()
    array([5], dtype=int32)
"""
import itertools
import re

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops import regex, string_hash

_OBJ = object


def emap(fn, x, otype=_OBJ):
    """Applies `fn` to every element of an object array; same shape, dtype `otype`."""
    flat = x.reshape(-1).tolist()
    return np.fromiter(map(fn, flat), dtype=otype, count=len(flat)).reshape(x.shape)


# Whole-batch kernels: a batch of strings with no newline joined by newlines is one bytes
# object that bytes.translate and bytes.split handle in one C call instead of one call per
# string (CPU per 1024 lines: punctuation stripping 375 -> ~95 us, whitespace split 500 ->
# ~330 us). Small batches are not worth the join; bytes.lower is cheaper per string.
_JOIN_MIN = 16


def joined(flat):
    """The strings joined by newlines (None for a small batch); the caller checks that it
    splits back into as many strings (no string held a newline)."""
    return b"\n".join(flat) if len(flat) >= _JOIN_MIN else None


def strings_array(items):
    """A 1-D object array of bytes from a list (never a 2-D array of characters)."""
    return np.fromiter(items, dtype=_OBJ, count=len(items))


def splits_from_lengths(lengths):
    out = np.zeros(len(lengths) + 1, dtype=np.int64)
    out[1:] = lengths  # then accumulate in place: np.cumsum(list) would wrap the list first
    np.add.accumulate(out[1:], out=out[1:])
    return out


def _same(spec, **_):
    return spec


def _like(dtype):
    return lambda x, *rest, **_: Spec(x.shape, dtype)


def _ragged_spec(dtype):
    return lambda *specs, **_: [Spec((None,), dtype), Spec((None,), dtypes.int64)]


def _register(name, fwd, shape, multi_output=False, **rules):
    return register(name, fwd, grad=NOT_DIFFERENTIABLE, shape=shape, multi_output=multi_output,
                    **rules)


def _bad(op, message):
    return errors.InvalidArgumentError(None, None, f"{op}: {message}")


# -- TensorFlow's string ops as SavedModel graphs spell them -------------------------------------
# (rule form: tensorlite/saved_model/function_runner.py). String attributes arrive decoded as
# text; the kernels here take bytes.
def _b(text):
    return text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text


def _scalar_bytes(t):
    # .numpy(): a trace refuses (rather than freezes) a value computed from its inputs
    return np.asarray(t.numpy()).reshape(()).item()


def _sparse_split_fwd(x, sep, maxsplit):
    """TensorFlow's StringSplitV2: a SparseTensor's (indices, values, dense_shape)."""
    values, b = _split_fwd(x, sep, maxsplit)
    lengths = np.diff(b)
    rowids = np.repeat(np.arange(lengths.size, dtype=np.int64), lengths)
    cols = np.arange(b[-1], dtype=np.int64) - b[:-1][rowids]
    shape = np.array([lengths.size, lengths.max(initial=0)], dtype=np.int64)
    return np.stack([rowids, cols], axis=1).reshape(-1, 2), values, shape


def _sparse_split(ins, attrs):
    return list(STRING_SPLIT_SPARSE(ins[0], sep=_scalar_bytes(ins[1]),
                                    maxsplit=int(attrs.get("maxsplit", -1))))


def _sparse_split_tf(attrs, specs):
    def write(add, x):
        node = add("StringSplitV2", [x[0], np.array(attrs["sep"], dtype=object)],
                   maxsplit=attrs["maxsplit"])
        return [f"{node}:indices:0", f"{node}:values:0", f"{node}:shape:0"]
    return write


# one op, so that a traced graph of a TensorFlow SavedModel computes the sparse outputs from
# its input each run (NumPy in an import rule would freeze them at the traced values)
STRING_SPLIT_SPARSE = _register("StringSplitV2Sparse", _sparse_split_fwd, lambda *s, **_: [
    Spec((None, 2), dtypes.int64), Spec((None,), dtypes.string), Spec((2,), dtypes.int64)],
    True, unsupported="onnx tflite batch tf_import",
    tf=_sparse_split_tf,
    tf_outputs={})


def _splits_dtype(splits, attrs):
    from tensorlite.ops.math_ops import cast  # noqa: PLC0415
    return cast(splits, attrs.get("Tsplits") or dtypes.int64)


def _import_ngrams(ins, a):
    values, splits = STRING_NGRAMS(
        ins[0], ins[1], widths=tuple(a["ngram_widths"]), separator=_b(a["separator"]),
        left_pad=_b(a["left_pad"]), right_pad=_b(a["right_pad"]), pad_width=a["pad_width"],
        preserve_short=a["preserve_short_sequences"])
    return [values, _splits_dtype(splits, a)]


def _import_reduce_join(ins, a):
    axes = tuple(dict.fromkeys(int(i) % max(ins[0].shape.rank, 1)
                               for i in np.ravel(ins[1].numpy())))  # TF's order kept
    return REDUCE_JOIN(ins[0], axis=axes, keepdims=a.get("keep_dims", False),
                       separator=_b(a.get("separator", "")))


def _regex_replace(pattern, rewrite):
    return lambda ins, a: REGEX_REPLACE(ins[0], pattern=pattern(ins, a), rewrite=rewrite(ins, a),
                                        replace_global=a.get("replace_global", True))


def _split_tf(attrs, specs):
    """StringSplitV2 gives sparse indices; the ragged row splits are [0] and the running
    sum of each row's count of tokens (DenseBincount of the indices' row ids), as
    TensorFlow's RaggedTensor.from_sparse builds them. TensorFlow's op takes a vector: any
    other input is flattened first, as this op's rows are its input's flattened elements
    (tf.strings.split partitions them again by the input's shape)."""
    i32 = np.int32
    rank = len(specs[0].shape)

    def first(add, tensor, begin, end, stride, shrink, mask):
        return add("StridedSlice", [tensor, np.array(begin, i32), np.array(end, i32),
                                    np.array(stride, i32)], T=dtypes.int64, Index=dtypes.int32,
                   begin_mask=mask, end_mask=mask, ellipsis_mask=0, new_axis_mask=0,
                   shrink_axis_mask=shrink) + ":output:0"

    def write(add, x):
        text = x[0] if rank == 1 else add("Reshape", [x[0], np.array([-1], i32)],
                                          T=dtypes.string, Tshape=dtypes.int32) + ":output:0"
        split = add("StringSplitV2", [text, np.array(attrs["sep"], dtype=object)],
                    maxsplit=attrs["maxsplit"])
        rows = first(add, f"{split}:indices:0", [0, 0], [0, 1], [1, 1], 2, 1)
        nrows = first(add, f"{split}:shape:0", [0], [1], [1], 1, 0)
        from tensorlite.ops.ragged_ops import write_splits_from_rowids  # noqa: PLC0415
        return [f"{split}:values:0", write_splits_from_rowids(add, rows, nrows)]
    return write


def _ngrams_tf(attrs, specs):
    """StringNGrams, whose two outputs have their own argument names."""
    def write(add, ins):
        node = add("StringNGrams", ins, separator=attrs["separator"],
                   ngram_widths=list(attrs["widths"]), left_pad=attrs["left_pad"],
                   right_pad=attrs["right_pad"], pad_width=attrs["pad_width"],
                   preserve_short_sequences=attrs["preserve_short"], Tsplits=specs[1].dtype)
        return [f"{node}:ngrams:0", f"{node}:ngrams_splits:0"]
    return write


# -- split and join ----------------------------------------------------------------------------
def _split_whitespace_joined(flat):
    """Whitespace split of a whole batch: one bytes.split of the strings joined by newlines
    gives the tokens; the row lengths are counted on the bytes with NumPy (a token starts
    where a non-space byte follows a space; its row is the number of newlines before it)."""
    text = joined(flat)
    if text is None:
        return None
    b = np.frombuffer(text, dtype=np.uint8)
    newlines = np.flatnonzero(b == 10)
    if newlines.size != len(flat) - 1:  # a string held a newline
        return None
    space = (b == 32) | ((b - 9) < 5)  # " \t\n\x0b\x0c\r": bytes.split's and TF's (absl)
    starts = ~space
    starts[1:] &= space[:-1]
    rows = np.searchsorted(newlines, np.flatnonzero(starts))
    lengths = np.bincount(rows, minlength=len(flat))
    return strings_array(text.split()), splits_from_lengths(lengths)


def _split_fwd(x, sep, maxsplit):
    flat = x.reshape(-1).tolist()
    if sep == b"" and maxsplit == -1:
        done = _split_whitespace_joined(flat)
        if done is not None:
            return done
    if sep == b"":  # runs of whitespace, no empty tokens
        parts = [s.split(None, maxsplit) for s in flat]
    else:  # an empty string has no token (Python would give one empty string)
        parts = [s.split(sep, maxsplit) if s else [] for s in flat]
    tokens = list(itertools.chain.from_iterable(parts))
    return strings_array(tokens), splits_from_lengths(list(map(len, parts)))


# tf_outputs: the export rule writes several nodes and names their outputs itself; TF's
# StringSplitV2's own three output arguments are for reading it (function_runner.py)
STRING_SPLIT = _register(
    "StringSplitV2", _split_fwd, _ragged_spec(dtypes.string), True,
    unsupported="onnx tflite batch", tf_import=_sparse_split, tf=_split_tf,
    tf_outputs={"StringSplitV2": ("indices", "values", "shape")})


def _join_fwd(*xs, separator):
    if not xs:
        return np.array(b"", dtype=_OBJ)
    arrays = np.broadcast_arrays(*xs)
    out = np.empty(arrays[0].shape, dtype=_OBJ)
    flat = out.reshape(-1)
    cols = [a.reshape(-1).tolist() for a in arrays]
    flat[:] = [separator.join(parts) for parts in zip(*cols)] if flat.size else []
    return out


def _join_shape(*xs, separator):
    shape = ()
    for x in xs:
        shape = x.shape if len(x.shape) > len(shape) else shape
    return Spec(shape, dtypes.string)


STRING_JOIN = _register(
    "StringJoin", _join_fwd, _join_shape, unsupported="onnx tflite batch",
    tf=lambda a, specs: lambda add, ins: [  # written: StringJoin has no T attribute
        add("StringJoin", ins, N=len(specs), separator=a["separator"]) + ":output:0"],
    tf_outputs="output",
    tf_import=lambda ins, a: STRING_JOIN(*ins, separator=_b(a["separator"])))


def _reduce_join_fwd(x, axis, keepdims, separator):
    axes = tuple(range(x.ndim)) if axis is None else axis
    rest = [d for d in range(x.ndim) if d not in axes]
    # TF reduces the listed axes in order, so the first varies fastest in the joined
    # string (axis=[0, 1] of [[a, b], [c, d]] is "a|c|b|d"); axis=None is row-major
    order = list(axes) if axis is None else list(reversed(axes))
    moved = np.transpose(x, rest + order)
    rows = moved.reshape(int(np.prod([x.shape[d] for d in rest], dtype=np.int64)), -1) \
        if x.size else np.empty((int(np.prod([x.shape[d] for d in rest])), 0), dtype=_OBJ)
    out = strings_array([separator.join(r) for r in rows.tolist()])
    shape = [1 if d in axes else n for d, n in enumerate(x.shape)] if keepdims else \
        [x.shape[d] for d in rest]
    return out.reshape(shape)


def _reduce_join_shape(x, axis, keepdims, separator):
    axes = tuple(range(len(x.shape))) if axis is None else axis
    shape = tuple(1 if d in axes else n for d, n in enumerate(x.shape)) if keepdims else \
        tuple(n for d, n in enumerate(x.shape) if d not in axes)
    return Spec(shape, dtypes.string)


REDUCE_JOIN = _register(
    "ReduceJoin", _reduce_join_fwd, _reduce_join_shape, unsupported="onnx tflite batch",
    tf_import=_import_reduce_join,
    tf=lambda a, specs: ("ReduceJoin", {
        "keep_dims": a["keepdims"], "separator": a["separator"], "T": None},
        # axis=None joins row-major: TF's wrapper reduces the last axis first
        [0, np.array(list(range(len(specs[0].shape)))[::-1] if a["axis"] is None else
                     list(a["axis"]), np.int32)]),
    tf_outputs="output")


def _segment_join_fwd(values, splits, separator):
    flat, b = values.tolist(), splits.tolist()
    return strings_array([separator.join(flat[i:j]) for i, j in zip(b[:-1], b[1:])])


SEGMENT_JOIN = _register(
    "RaggedReduceJoin", _segment_join_fwd, lambda v, s, separator: Spec((None,), dtypes.string),
    unsupported="tf onnx tflite batch tf_import")


# -- regular expressions -----------------------------------------------------------------------
def _regex_replace_fwd(x, pattern, rewrite, replace_global):
    compiled = regex.compile_pattern(pattern, "RegexReplace")
    template = regex.rewrite_template(rewrite, "RegexReplace")
    count = 0 if replace_global else 1
    deleted = compiled.deleted_bytes(template, count)
    if deleted is not None:
        text = joined(x.reshape(-1).tolist()) if b"\n" not in deleted else None
        if text is not None:
            parts = text.translate(None, deleted).split(b"\n")
            if len(parts) == x.size:  # no string held a newline
                return strings_array(parts).reshape(x.shape)
        return emap(lambda s: s.translate(None, deleted), x)
    return emap(compiled.subber(template, count), x)


def _regex_full_match_fwd(x, pattern):
    return emap(regex.compile_pattern(pattern, "RegexFullMatch").fullmatch, x, np.bool_)


REGEX_REPLACE = _register(
    "RegexReplace", _regex_replace_fwd, _like(dtypes.string), unsupported="onnx tflite batch",
    tf_import={
        "RegexReplace": _regex_replace(lambda ins, a: _scalar_bytes(ins[1]),
                                       lambda ins, a: _scalar_bytes(ins[2])),
        "StaticRegexReplace": _regex_replace(lambda ins, a: _b(a["pattern"]),
                                             lambda ins, a: _b(a["rewrite"]))},
    tf=lambda a, specs: ("StaticRegexReplace", {
        "pattern": a["pattern"], "rewrite": a["rewrite"], "replace_global": a["replace_global"],
        "T": None}),
    tf_outputs={"StaticRegexReplace": "output"})
REGEX_FULL_MATCH = _register(
    "RegexFullMatch", _regex_full_match_fwd, _like(dtypes.bool), unsupported="onnx tflite batch",
    tf=lambda a, specs: ("StaticRegexFullMatch", {
        "pattern": a["pattern"], "T": None}),
    tf_outputs={"StaticRegexFullMatch": "output"},
    tf_import={
        "RegexFullMatch": lambda ins, a: REGEX_FULL_MATCH(ins[0], pattern=_scalar_bytes(ins[1])),
        "StaticRegexFullMatch": lambda ins, a: REGEX_FULL_MATCH(ins[0], pattern=_b(a["pattern"]))})


# -- per-string transformations -----------------------------------------------------------------
_CONTINUATION = re.compile(rb"[\x80-\xbf]")


def utf8_char_count(b):
    """TensorFlow's UTF-8 character count: the bytes that do not continue a character."""
    return len(b) - len(_CONTINUATION.findall(b)) if not b.isascii() else len(b)


def _length_fwd(x, unit):
    count = len if unit == "BYTE" else utf8_char_count
    return emap(count, x, np.int32)


STRING_LENGTH = _register(
    "StringLength", _length_fwd, _like(dtypes.int32), unsupported="onnx tflite batch",
    tf_import=lambda ins, a: STRING_LENGTH(ins[0], unit=a.get("unit", "BYTE")),
    tf=lambda a, specs: ("StringLength", {"unit": a["unit"], "T": None}), tf_outputs="output")


def _case_fwd(x, encoding, upper):
    if encoding == "":
        return emap(bytes.upper if upper else bytes.lower, x)  # ASCII letters only, as TF
    change = str.upper if upper else str.lower
    return emap(lambda s: change(s.decode(encoding, "surrogateescape")).encode(
        encoding, "surrogateescape"), x)


STRING_LOWER = _register("StringLower", lambda x, encoding: _case_fwd(x, encoding, False),
                         _like(dtypes.string), unsupported="onnx tflite batch",
    tf_import=lambda ins, a: STRING_LOWER(ins[0], encoding=a.get("encoding", "")),
    tf=lambda a, specs: ("StringLower", {"encoding": a["encoding"], "T": None}),
    tf_outputs="output")
STRING_UPPER = _register("StringUpper", lambda x, encoding: _case_fwd(x, encoding, True),
                         _like(dtypes.string), unsupported="onnx tflite batch",
    tf_import=lambda ins, a: STRING_UPPER(ins[0], encoding=a.get("encoding", "")),
    tf=lambda a, specs: ("StringUpper", {"encoding": a["encoding"], "T": None}),
    tf_outputs="output")
STRING_STRIP = _register(
    "StringStrip", lambda x: emap(bytes.strip, x), _same, unsupported="onnx tflite batch",
    tf_import=lambda ins, a: STRING_STRIP(ins[0]),
    tf=lambda a, specs: ("StringStrip", {"T": None}), tf_outputs="output")


def _char_starts(s):
    return [i for i, c in enumerate(s) if c & 0xC0 != 0x80] + [len(s)]


def _substr_one(s, pos, length, unit, index):
    if unit == "BYTE":
        n, cut = len(s), None
    else:
        cut = _char_starts(s)
        n = len(cut) - 1
    if not -n <= pos <= n:
        raise _bad("Substr", f"pos {pos} out of range for string {s!r} at index {index}; "
                   f"use a position within [-{n}, {n}]")
    start = pos + n if pos < 0 else pos
    stop = min(n, start + max(length, 0))
    return s[start:stop] if cut is None else s[cut[start]:cut[stop]]


def _substr_fwd(x, pos, length, unit):
    xb, pb, lb = np.broadcast_arrays(x, pos, length)
    items = zip(xb.reshape(-1).tolist(), pb.reshape(-1).tolist(), lb.reshape(-1).tolist())
    out = strings_array([_substr_one(s, p, n, unit, i) for i, (s, p, n) in enumerate(items)])
    return out.reshape(xb.shape)


SUBSTR = _register(
    "Substr", _substr_fwd, lambda x, p, n, unit: Spec(x.shape, dtypes.string),
    unsupported="tf onnx tflite batch",
    tf_import=lambda ins, a: SUBSTR(*ins, unit=a.get("unit", "BYTE")))


# -- numbers <-> strings ------------------------------------------------------------------------
# on RE2: linear time (with `re`, `\d+\.?\d*` backtracks quadratically on long digit runs)
_NUMBER = {
    "f": regex.compile_pattern(rb"(?i)\s*[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?|"
                               rb"inf|infinity|nan)\s*", "StringToNumber"),
    "i": regex.compile_pattern(rb"\s*[-+]?\d+\s*", "StringToNumber"),
}


def _to_number_fwd(x, out_type):
    dt = dtypes.as_dtype(out_type)
    kind = "f" if dt.is_floating else "i"
    parse = float if kind == "f" else int
    info = None if kind == "f" else np.iinfo(dt.as_numpy_dtype)

    def one(s):
        if not _NUMBER[kind].fullmatch(s):
            raise _bad("StringToNumber", f"StringToNumberOp could not correctly convert "
                       f"string: {s.decode('utf-8', 'replace')}")
        v = parse(s)
        if info is not None and not info.min <= v <= info.max:
            raise _bad("StringToNumber", f"StringToNumberOp could not correctly convert "
                       f"string: {s.decode()} (out of range for {dt.name})")
        return v
    return emap(one, x, dt.as_numpy_dtype)


STRING_TO_NUMBER = _register(
    "StringToNumber", _to_number_fwd, lambda x, out_type: Spec(x.shape, dtypes.as_dtype(out_type)),
    unsupported="tf onnx tflite batch",
    tf_import=lambda ins, a: STRING_TO_NUMBER(
        ins[0], out_type=dtypes.as_dtype(a.get("out_type", dtypes.float32)).name))


def _as_string_format(kind, precision, scientific, shortest, width, fill):
    spec = "%" + fill + (str(width) if width > -1 else "")
    if kind in "iu":
        return spec + "d"
    if precision > -1:
        spec += f".{precision}"
    return spec + ("g" if shortest else "e" if scientific else "f")


def _as_string_fwd(x, precision, scientific, shortest, width, fill):
    kind = x.dtype.kind
    if kind == "b":
        return emap(lambda v: b"true" if v else b"false", x)
    if kind == "O":
        return x
    fmt = _as_string_format("f" if kind == "c" else kind, precision, scientific, shortest,
                            width, fill)
    if kind == "c":
        return emap(lambda v: f"({fmt % v.real},{fmt % v.imag})".encode(), x)
    return emap(lambda v: (fmt % v).encode(), x)


# tf: its attributes are TensorFlow's, by the same names
AS_STRING = _register(
    "AsString", _as_string_fwd, _like(dtypes.string), unsupported="onnx tflite batch",
    tf="AsString", tf_outputs="output",
    tf_import=lambda ins, a: AS_STRING(
        ins[0], precision=a.get("precision", -1), scientific=a.get("scientific", False),
        shortest=a.get("shortest", False), width=a.get("width", -1), fill=a.get("fill", "")))


def _format_fwd(*xs, template, placeholder, summarize):
    from tensorlite.ops.logging_ops import _format  # noqa: PLC0415 - tf.print's printer
    pieces = template.split(placeholder)
    if len(pieces) - 1 != len(xs):
        raise _bad("StringFormat", f"num placeholders in template ({len(pieces) - 1}) and "
                   f"num inputs ({len(xs)}) must match; template {template!r}")
    out = pieces[0]
    for x, piece in zip(xs, pieces[1:]):
        out += _format(x, summarize) + piece
    return np.array(out.encode("utf-8"), dtype=_OBJ)


STRING_FORMAT = _register(
    "StringFormat", _format_fwd, lambda *xs, **_: Spec((), dtypes.string),
    unsupported="tf onnx tflite batch tf_import")


# -- n-grams -------------------------------------------------------------------------------------
def _row_ngrams(row, widths, separator, left, right, pad_width, preserve_short):
    out = []
    for width in widths:
        pad = pad_width if pad_width >= 0 else width - 1
        padded = [left] * pad + row + [right] * pad
        out.extend(separator.join(padded[i:i + width])
                   for i in range(max(0, len(padded) - width + 1)))
    if preserve_short and not out and row:
        pad = max(pad_width, 0)
        out.append(separator.join([left] * pad + row + [right] * pad))
    return out


def _ngrams_fwd(values, splits, widths, separator, left_pad, right_pad, pad_width,
                preserve_short):
    flat = values.tolist()
    bounds = splits.tolist()
    grams, lengths = [], []
    for a, b in zip(bounds[:-1], bounds[1:]):
        row = _row_ngrams(flat[a:b], widths, separator, left_pad, right_pad, pad_width,
                          preserve_short)
        grams.extend(row)
        lengths.append(len(row))
    return strings_array(grams), splits_from_lengths(lengths)


STRING_NGRAMS = _register(
    "StringNGrams", _ngrams_fwd, _ragged_spec(dtypes.string), True,
    unsupported="onnx tflite batch", tf_import=_import_ngrams, tf=_ngrams_tf,
    tf_outputs={"StringNGrams": ("ngrams", "ngrams_splits")})


# -- bytes and unicode ---------------------------------------------------------------------------
def _bytes_split_fwd(x):
    flat = x.reshape(-1).tolist()
    return (strings_array([s[i:i + 1] for s in flat for i in range(len(s))]),
            splits_from_lengths([len(s) for s in flat]))


BYTES_SPLIT = _register(
    "BytesSplit", _bytes_split_fwd, _ragged_spec(dtypes.string), True,
    unsupported="tf onnx tflite batch tf_import")


def _buckets(x, num_buckets, hash_fn):
    if num_buckets < 1:
        raise _bad("StringToHashBucket", f"num_buckets must be >= 1, got {num_buckets}")
    return emap(lambda s: hash_fn(s) % num_buckets, x, np.int64)


def _fast_fwd(x, num_buckets):
    return _buckets(x, num_buckets, string_hash.fingerprint64_fn())


def _strong_fwd(x, num_buckets, key):
    k0, k1 = key
    return _buckets(x, num_buckets, lambda s: string_hash.siphash24(s, k0, k1))


def _hash_shape(x, num_buckets, **_):
    return Spec(x.shape, dtypes.int64)


TO_HASH_BUCKET_FAST = _register(
    "StringToHashBucketFast", _fast_fwd, _hash_shape, unsupported="onnx tflite batch",
    tf_import=lambda ins, a: TO_HASH_BUCKET_FAST(
        ins[0], num_buckets=a["num_buckets"]),
    tf=lambda a, specs: (
        "StringToHashBucketFast", {"num_buckets": a["num_buckets"], "T": None}),
    tf_outputs="output")
TO_HASH_BUCKET_STRONG = _register(
    "StringToHashBucketStrong", _strong_fwd, _hash_shape, unsupported="tf onnx tflite batch",
    tf_import=lambda ins, a: TO_HASH_BUCKET_STRONG(
        ins[0], num_buckets=a["num_buckets"], key=tuple(a["key"])))
TO_HASH_BUCKET = _register("StringToHashBucket",
                           lambda x, num_buckets: _buckets(x, num_buckets, string_hash.murmur64),
                           _hash_shape, unsupported="tf onnx tflite batch",
    tf_import=lambda ins, a: TO_HASH_BUCKET(ins[0],
                                            num_buckets=a["num_buckets"]))


def _unsorted_segment_join_fwd(x, ids, num_segments, separator):
    """Joins the strings of each segment in their order in `x` (TensorFlow's
    UnsortedSegmentJoin over the first `ids.ndim` dimensions)."""
    flat_ids = ids.reshape(-1).tolist()
    rows = x.reshape((len(flat_ids), -1)).tolist() if x.size else [[]] * len(flat_ids)
    inner = x.shape[ids.ndim:]
    groups = [[] for _ in range(num_segments)]
    for i, row in zip(flat_ids, rows):
        if 0 <= i < num_segments:
            groups[i].append(row)
    width = int(np.prod(inner, dtype=np.int64))
    out = strings_array([separator.join(g[c] for g in group) for group in groups
                         for c in range(width)])
    return out.reshape((num_segments,) + inner)


SEGMENT_JOIN_UNSORTED = _register(
    "UnsortedSegmentJoin", _unsorted_segment_join_fwd,
    lambda x, i, num_segments, separator: Spec((num_segments,) + tuple(x.shape[len(i.shape):]),
                                               dtypes.string),
    unsupported="tf onnx tflite batch", tf_import_opaque=True,
    tf_import=lambda ins, a: SEGMENT_JOIN_UNSORTED(
        ins[0], ins[1], num_segments=int(ins[2].numpy()), separator=_b(a.get("separator", ""))))

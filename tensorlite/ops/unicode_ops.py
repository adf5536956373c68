"""Unicode ops (decode, encode, transcode, split) with TensorFlow's error modes.

`errors='strict'` makes invalid input an InvalidArgumentError, `'replace'` puts
`replacement_char` (default U+FFFD) in place of each maximal invalid subsequence (Python's
codec rule, the Unicode standard's recommendation), `'ignore'` drops it.
`replace_control_characters=True` also replaces the C0 controls U+0000..U+001F.
Encodings: UTF-8, UTF-16-BE, UTF-32-BE, as TensorFlow.

Example:
    >>> UNICODE_DECODE(tf.constant([b"h\\xffi"]), input_encoding="UTF-8", errors="replace",
    ...                replacement_char=63, replace_control_characters=False)[0].numpy()
    array([104,  63, 105], dtype=int32)
"""
import codecs

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops.string_ops import emap, splits_from_lengths, strings_array

_ENCODINGS = {"UTF-8": "utf-8", "UTF-16-BE": "utf-16-be", "UTF-32-BE": "utf-32-be"}
_BAD = 0xDFFF  # a lone surrogate: never the result of a valid decode, so it marks errors


def _mark(exc):
    return "\udfff", exc.end


codecs.register_error("tensorlite_mark", _mark)


def _icu_key(name):
    """An encoding name as ICU compares them (TF decodes through ICU): case, '-', '_' and
    spaces ignored, so Hands-On ML's `tf.strings.unicode_decode(b, "UTF8")` is UTF-8."""
    return "".join(c for c in name.upper() if c not in "-_ ")


_BY_ICU_KEY = {_icu_key(k): v for k, v in _ENCODINGS.items()}


def codec(encoding, op):
    try:
        return _BY_ICU_KEY[_icu_key(encoding)]
    except KeyError:
        raise errors.InvalidArgumentError(
            None, None, f"{op}: unsupported encoding {encoding!r}; use one of "
            f"{', '.join(_ENCODINGS)}") from None


def _check_errors(mode, op):
    if mode not in ("strict", "replace", "ignore"):
        raise errors.InvalidArgumentError(
            None, None, f"{op}: errors must be 'strict', 'replace' or 'ignore', got {mode!r}")


def decode_one(s, encoding, mode, replacement, replace_control, op="UnicodeDecode"):
    """Code points of one string under TensorFlow's error rules."""
    text = s.decode(encoding, "tensorlite_mark")
    points = [ord(c) for c in text]
    if _BAD in points:
        if mode == "strict":
            raise errors.InvalidArgumentError(
                None, None, f"{op}: invalid formatting on input string {s!r} for encoding "
                f"{encoding}; pass errors='replace' or errors='ignore' to accept it")
        points = [p for p in points if p != _BAD] if mode == "ignore" else \
            [replacement if p == _BAD else p for p in points]
    if replace_control:
        points = [replacement if p < 0x20 else p for p in points]
    return points


def _decode_fwd(x, input_encoding, errors, replacement_char, replace_control_characters):
    enc = codec(input_encoding, "UnicodeDecode")
    _check_errors(errors, "UnicodeDecode")
    rows = [decode_one(s, enc, errors, replacement_char, replace_control_characters)
            for s in x.reshape(-1).tolist()]
    flat = [p for r in rows for p in r]
    return np.array(flat, dtype=np.int32), splits_from_lengths([len(r) for r in rows])


def _offsets(s, enc, points):
    """Byte offset of each decoded character (UTF-8 only needs the lead bytes)."""
    if enc == "utf-8":
        return [i for i, c in enumerate(s) if c & 0xC0 != 0x80][:len(points)]
    width = 4 if enc == "utf-32-be" else 2
    out, at = [], 0
    for p in points:
        out.append(at)
        at += width * (2 if width == 2 and p > 0xFFFF else 1)
    return out


def _decode_offsets_fwd(x, input_encoding, errors, replacement_char,
                        replace_control_characters):
    enc = codec(input_encoding, "UnicodeDecodeWithOffsets")
    _check_errors(errors, "UnicodeDecodeWithOffsets")
    pts, offs, lengths = [], [], []
    for s in x.reshape(-1).tolist():
        row = decode_one(s, enc, errors, replacement_char, replace_control_characters)
        pts.extend(row)
        offs.extend(_offsets(s, enc, row))
        lengths.append(len(row))
    return (np.array(pts, dtype=np.int32), np.array(offs, dtype=np.int64),
            splits_from_lengths(lengths))


def encode_points(points, enc, mode, replacement, op="UnicodeEncode"):
    chars = []
    for p in points:
        if 0 <= p <= 0x10FFFF and not 0xD800 <= p <= 0xDFFF:
            chars.append(chr(p))
        elif mode == "strict":
            raise errors.InvalidArgumentError(
                None, None, f"{op}: invalid code point {p}; pass errors='replace' or "
                f"errors='ignore' to accept it")
        elif mode == "replace":
            chars.append(chr(replacement))
    return "".join(chars).encode(enc)


def _encode_fwd(points, splits, output_encoding, errors, replacement_char):
    enc = codec(output_encoding, "UnicodeEncode")
    _check_errors(errors, "UnicodeEncode")
    flat, b = points.tolist(), splits.tolist()
    return strings_array([encode_points(flat[i:j], enc, errors, replacement_char)
                          for i, j in zip(b[:-1], b[1:])])


def _transcode_fwd(x, input_encoding, output_encoding, errors, replacement_char,
                   replace_control_characters):
    src = codec(input_encoding, "UnicodeTranscode")
    dst = codec(output_encoding, "UnicodeTranscode")
    _check_errors(errors, "UnicodeTranscode")
    return emap(lambda s: encode_points(
        decode_one(s, src, errors, replacement_char, replace_control_characters, "Transcode"),
        dst, errors, replacement_char, "UnicodeTranscode"), x)


def _ragged(dtype, n=2):
    return lambda *s, **_: [Spec((None,), dtype)] + [Spec((None,), dtypes.int64)] * (n - 1)


# -- TensorFlow's unicode ops as SavedModel graphs spell them (rule form:
# tensorlite/saved_model/function_runner.py): TensorFlow returns the row splits first
def _import_decode(op, ins, a):
    from tensorlite.ops.math_ops import cast  # noqa: PLC0415
    outs = op(
        ins[0], input_encoding=a["input_encoding"], errors=a.get("errors", "replace"),
        replacement_char=a.get("replacement_char", 65533),
        replace_control_characters=a.get("replace_control_characters", False))
    return [cast(outs[-1], a.get("Tsplits") or dtypes.int64)] + list(outs[:-1])


def _import_encode(ins, a):
    return UNICODE_ENCODE(
        ins[0], ins[1], output_encoding=a["output_encoding"], errors=a.get("errors", "replace"),
        replacement_char=a.get("replacement_char", 65533))


def _import_transcode(ins, a):
    return UNICODE_TRANSCODE(
        ins[0], input_encoding=a["input_encoding"], output_encoding=a["output_encoding"],
        errors=a.get("errors", "replace"), replacement_char=a.get("replacement_char", 65533),
        replace_control_characters=a.get("replace_control_characters", False))


# Only imported from SavedModels: no exporter writes them, no batching rule. The decoders'
# import rules compute with NumPy outside the registry (tf_import_opaque).
_NOT_EXPORTED = "tf onnx tflite batch"
UNICODE_DECODE = register(
    "UnicodeDecode", _decode_fwd, grad=NOT_DIFFERENTIABLE, shape=_ragged(dtypes.int32),
    multi_output=True, unsupported=_NOT_EXPORTED, tf_import_opaque=True,
    tf_import=lambda ins, a: _import_decode(UNICODE_DECODE, ins, a),
    tf_outputs=("row_splits", "char_values"))
UNICODE_DECODE_WITH_OFFSETS = register(
    "UnicodeDecodeWithOffsets", _decode_offsets_fwd, grad=NOT_DIFFERENTIABLE,
    shape=_ragged(dtypes.int32, 3), multi_output=True, unsupported=_NOT_EXPORTED,
    tf_import_opaque=True,
    tf_import=lambda ins, a: _import_decode(UNICODE_DECODE_WITH_OFFSETS, ins, a),
    tf_outputs=("row_splits", "char_values", "char_to_byte_starts"))
UNICODE_ENCODE = register(
    "UnicodeEncode", _encode_fwd, grad=NOT_DIFFERENTIABLE, unsupported=_NOT_EXPORTED,
    shape=lambda p, s, **_: Spec((None,), dtypes.string), tf_import=_import_encode)
UNICODE_TRANSCODE = register(
    "UnicodeTranscode", _transcode_fwd, grad=NOT_DIFFERENTIABLE, unsupported=_NOT_EXPORTED,
    shape=lambda x, **_: Spec(x.shape, dtypes.string), tf_import=_import_transcode)

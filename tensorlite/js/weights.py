"""TF.js weight files: named arrays as weight groups sharded into `group<G>-shard<i>of<N>.bin`.

TF.js (`tf.io.loadWeights`, `tf.loadLayersModel`, `tf.loadGraphModel`) reads a model's
weights from the `weightsManifest` of its `model.json`: a list of groups, each with the
`paths` of its shard files and the `weights` (`name`, `shape`, `dtype`, optional
`quantization`) whose little-endian bytes, concatenated in order, the shards hold. A group is
split into shards of `shard_size_bytes` (4 MB by default: what browsers cache per file), so
a large weight spans shards and small ones share one.

Quantization is tfjs-converter's: float16 (`{"dtype": "float16"}`) or affine uint8/uint16
(`{"dtype": "uint8", "scale": s, "min": m, "original_dtype": "float32"}`, read back as
`q * s + m`, with the range nudged so that 0.0 is exact), applied to float32 weights whose
names match wildcards. Reading dequantizes the way TF.js does (in double precision, then
float32), so tensorlite predicts exactly what TF.js computes from the same files.

Example:
    >>> manifest = write_weights([[("dense/kernel", np.ones((2, 3), "float32"))]], "/tmp/m")
    >>> manifest[0]["paths"]
    ['group1-shard1of1.bin']
    >>> read_weights(manifest, "/tmp/m")["dense/kernel"].shape
    (2, 3)
"""
import fnmatch
import math
import os

import numpy as np

from tensorlite.framework import errors, size_limits

DEFAULT_SHARD_SIZE_BYTES = 4 * 1024 * 1024

# TF.js weight dtypes and their NumPy storage; string weights are length-prefixed bytes.
_STORED = {"float32": np.dtype("<f4"), "int32": np.dtype("<i4"), "bool": np.dtype("bool"),
           "complex64": np.dtype("<c8")}
# Narrowed on write as tfjs-converter does (TF.js has no 64-bit types).
_NARROWED = {"float64": "float32", "int64": "int32", "complex128": "complex64",
             "float16": "float32", "int8": "int32", "int16": "int32", "uint8": "int32",
             "uint16": "int32", "bfloat16": "float32"}
QUANTIZATION_DTYPES = {"float16": np.dtype("<f2"), "uint8": np.dtype("uint8"),
                       "uint16": np.dtype("<u2")}
_STRING_LENGTH = np.dtype("<u4")


def quantization_map(names, float16=None, uint8=None, uint16=None):
    """Which weights get which quantization: {name: "float16"|"uint8"|"uint16"}.

    Each argument is None (off), True (every weight no pattern claims: tensorflowjs_converter's
    flag without a value; at most one may be True), or wildcard patterns (`fnmatch`, a list or
    a comma-separated string such as "conv*/kernel,dense/*"). A weight matched by two
    different dtypes is a ValueError naming it.
    """
    chosen, fallthrough = {}, []
    for dtype, patterns in (("float16", float16), ("uint8", uint8), ("uint16", uint16)):
        if patterns is None or patterns is False:
            continue
        if patterns is True:
            fallthrough.append(dtype)
            continue
        if isinstance(patterns, str):
            patterns = [p for p in patterns.split(",") if p]
        for pattern in patterns:
            for name in fnmatch.filter(names, pattern):
                if chosen.get(name, dtype) != dtype:
                    raise ValueError(f"weight {name!r} matches both --quantize_{chosen[name]} "
                                     f"and --quantize_{dtype}; give each weight one dtype")
                chosen[name] = dtype
    if len(fallthrough) > 1:
        raise ValueError(f"only one quantization may apply to all weights, got "
                         f"{', '.join(fallthrough)}; give the others wildcard patterns")
    for name in names:
        if fallthrough and name not in chosen:
            chosen[name] = fallthrough[0]
    return chosen


def affine_range(lo, hi, dtype):
    """(scale, min, max) for uint8/uint16 affine quantization of values in [lo, hi].

    As tfjs-converter (and TF Lite's NudgeQuantizationRange): when the range covers 0, min is
    nudged so that 0.0 is one of the representable values (zero padding stays exact).
    """
    qmax = float(np.iinfo(QUANTIZATION_DTYPES[dtype]).max)
    lo, hi = float(lo), float(hi)
    scale = (hi - lo) / qmax
    if lo <= 0.0 <= hi:
        lo = -float(np.round(-lo / scale)) * scale
    return scale, lo, qmax * scale + lo


def quantize(data, dtype):
    """(quantized array, manifest `quantization` entry) for a float32 array."""
    if dtype == "float16":
        return data.astype(QUANTIZATION_DTYPES[dtype]), {"dtype": "float16",
                                                         "original_dtype": "float32"}
    if dtype not in ("uint8", "uint16"):
        raise ValueError(f"quantization dtype must be float16, uint8 or uint16, not {dtype!r}")
    lo = float(data.min()) if data.size else 0.0
    hi = float(data.max()) if data.size else 0.0
    if lo == hi:  # one value: every entry is q=0 read back as `min`
        q, scale = np.zeros(data.shape, QUANTIZATION_DTYPES[dtype]), 1.0
    else:
        scale, lo, top = affine_range(lo, hi, dtype)
        q = np.round((np.clip(data.astype(np.float64), lo, top) - lo) / scale)
        q = q.astype(QUANTIZATION_DTYPES[dtype])
    return q, {"dtype": dtype, "scale": scale, "min": lo, "original_dtype": "float32"}


def dequantize(q, quantization, dtype="float32"):
    """What TF.js reads from quantized values: `q * scale + min` in double precision then
    float32 (rounded for int32 weights), or the float16 values widened."""
    qdtype = quantization.get("dtype")
    if qdtype == "float16":
        return np.asarray(q, QUANTIZATION_DTYPES["float16"]).astype(np.float32)
    if qdtype not in ("uint8", "uint16") or "scale" not in quantization \
            or "min" not in quantization:
        raise errors.DataLossError(None, None, f"quantization {quantization!r} is not one TF.js "
                                               f"reads (float16, or uint8/uint16 with scale "
                                               f"and min)")
    values = np.asarray(q, np.float64) * float(quantization["scale"]) + float(quantization["min"])
    return np.round(values).astype(np.int32) if dtype == "int32" else values.astype(np.float32)


def quantization_error_bound(spec, values):
    """Elementwise bound on |dequantized - values| for a manifest entry and the original
    float32 `values`: half a step (`scale / 2`) for uint8/uint16, float16's half ulp
    (2**-11 of |value|, 2**-25 below its normal range) for float16, 0 when not quantized.
    A model's output error follows from these through its layers (tests bound it so)."""
    values = np.abs(np.asarray(values, np.float64))
    quant = spec.get("quantization")
    if not quant:
        return np.zeros_like(values)
    if quant["dtype"] == "float16":
        return np.maximum(values * 2.0 ** -11, 2.0 ** -25)
    # Plus the float32 rounding of `q * scale + min` TF.js stores.
    return float(quant["scale"]) / 2.0 * (1 + 1e-9) + (values + abs(float(quant["min"]))) \
        * 2.0 ** -23


def _as_entries(group):
    """A group given as a dict, (name, array) pairs or {'name', 'data'} dicts, as pairs."""
    if isinstance(group, dict):
        return list(group.items())
    return [(e["name"], e["data"]) if isinstance(e, dict) else tuple(e) for e in group]


def _normalise(name, data):
    """(TF.js dtype, array stored) for one weight; TypeError naming a dtype TF.js lacks."""
    data = np.asarray(data.numpy() if hasattr(data, "numpy") else data)
    if data.dtype.kind in "SUO":
        return "string", data
    kind = _NARROWED.get(data.dtype.name, data.dtype.name)
    if kind not in _STORED:
        raise TypeError(f"weight {name!r} has dtype {data.dtype.name}, which TF.js weights "
                        f"cannot hold (float32, int32, bool, complex64 or string)")
    return kind, data.astype(_STORED[kind])


def _string_bytes(data):
    """TF.js string weights: each value as a uint32 byte length then its bytes."""
    out = []
    for value in data.reshape(-1).tolist():
        raw = value if isinstance(value, bytes) else str(value).encode("utf-8")
        out.append(np.array(len(raw), _STRING_LENGTH).tobytes() + raw)
    return b"".join(out)


def _encode(name, data, qdtype):
    """(manifest entry, bytes) for one weight, quantized when `qdtype` is set and it is
    float32 (tfjs-converter leaves other dtypes as they are)."""
    dtype, data = _normalise(name, data)
    spec = {"name": name, "shape": [int(d) for d in data.shape], "dtype": dtype}
    if dtype == "string":
        return spec, _string_bytes(data)
    if qdtype and dtype == "float32":
        data, spec["quantization"] = quantize(data, qdtype)
    return spec, np.ascontiguousarray(data).tobytes()


def write_weights(weight_groups, write_dir, shard_size_bytes=DEFAULT_SHARD_SIZE_BYTES,
                  quantization=None):
    """Writes weight groups as TF.js shard files in `write_dir`; returns `weightsManifest`.

    Args:
      weight_groups: a list of groups, each a list of (name, array) pairs (or a dict, or
        {'name', 'data'} dicts); names must be unique across groups.
      write_dir: the model's directory (created if missing).
      shard_size_bytes: the largest shard file; a group's bytes are cut into
        `group<G>-shard<i>of<N>.bin` files of this size (the last one shorter).
      quantization: {weight name: "float16"|"uint8"|"uint16"} (see `quantization_map`).
    """
    if isinstance(shard_size_bytes, bool) or not isinstance(shard_size_bytes, int) \
            or shard_size_bytes <= 0:
        raise ValueError(f"shard_size_bytes must be a positive whole number of bytes, not "
                         f"{shard_size_bytes!r}")
    os.makedirs(write_dir, exist_ok=True)
    quantization, seen, manifest = quantization or {}, set(), []
    for g, group in enumerate(weight_groups):
        specs, chunks = [], []
        for name, data in _as_entries(group):
            if name in seen:
                raise ValueError(f"weight name {name!r} appears twice; TF.js needs unique "
                                 f"names")
            seen.add(name)
            spec, raw = _encode(name, data, quantization.get(name))
            specs.append(spec)
            chunks.append(raw)
        paths = _write_shards(b"".join(chunks), write_dir, g + 1, shard_size_bytes)
        manifest.append({"paths": paths, "weights": specs})
    return manifest


def _write_shards(blob, write_dir, group, shard_size):
    """Cuts one group's bytes into shard files; returns their names (one empty shard for an
    empty group, as TF.js still fetches a path)."""
    count = max(1, math.ceil(len(blob) / shard_size))
    paths = []
    for i in range(count):
        name = f"group{group}-shard{i + 1}of{count}.bin"
        with open(os.path.join(write_dir, name), "wb") as f:
            f.write(blob[i * shard_size:(i + 1) * shard_size])
        paths.append(name)
    return paths


def _safe_path(model_dir, path, source):
    """The shard file `path` names, refused unless it is a plain relative path inside the
    model's directory (a manifest must not make the reader open other files)."""
    if not isinstance(path, str) or not path or os.path.isabs(path) or "\\" in path \
            or "://" in path or ".." in path.split("/"):
        raise errors.InvalidArgumentError(
            None, None, f"{source}: weight path {path!r} is not a relative file name inside "
                        f"the model's directory; only such paths are read")
    root = os.path.realpath(model_dir)
    full = os.path.realpath(os.path.join(root, path))
    if os.path.commonpath([root, full]) != root:
        raise errors.InvalidArgumentError(
            None, None, f"{source}: weight path {path!r} leads outside the model's "
                        f"directory {model_dir}")
    if not os.path.isfile(full):
        raise errors.NotFoundError(None, None, f"{source}: weight file {path!r} listed in the "
                                               f"weightsManifest is missing from {model_dir}")
    return full


def _check_spec(spec, source):
    """(name, shape, dtype, quantization) of a manifest entry; DataLossError if malformed."""
    try:
        name, dtype = spec["name"], spec["dtype"]
        shape = [int(d) for d in spec["shape"]]
    except (KeyError, TypeError, ValueError):
        raise errors.DataLossError(None, None, f"{source}: weightsManifest entry {spec!r} "
                                               f"lacks a name, shape or dtype") from None
    quant = spec.get("quantization")
    if dtype not in _STORED and dtype != "string":
        raise errors.DataLossError(None, None, f"{source}: weight {name!r} has dtype "
                                               f"{dtype!r}, not one TF.js writes")
    if quant is not None and (not isinstance(quant, dict)
                              or quant.get("dtype") not in QUANTIZATION_DTYPES):
        raise errors.DataLossError(None, None, f"{source}: weight {name!r} has quantization "
                                               f"{quant!r}; TF.js reads float16, uint8 or "
                                               f"uint16")
    return name, shape, dtype, quant


def _read_group(group, model_dir, source):
    """The concatenated bytes of one group's shards, checked against the cap."""
    if not isinstance(group, dict) or not isinstance(group.get("paths"), list) \
            or not isinstance(group.get("weights"), list):
        raise errors.DataLossError(None, None, f"{source}: a weightsManifest group needs "
                                               f"'paths' and 'weights' lists")
    files = [_safe_path(model_dir, p, source) for p in group["paths"]]
    total = sum(os.path.getsize(f) for f in files)
    size_limits.check_inflated(total, "weight group", files[0] if files else source)
    return b"".join(open(f, "rb").read() for f in files), files


def _suspect(files):
    """The shard to name when a group's bytes run short: the first one (bar the last) smaller
    than its siblings, since writers cut every shard but the last to one size, else the
    last."""
    sizes = [os.path.getsize(f) for f in files]
    for f, n in zip(files[:-1], sizes[:-1]):
        if n < max(sizes):
            return f
    return files[-1] if files else None


def _take_strings(blob, offset, count, name, source):
    """`count` length-prefixed strings from `blob` at `offset`; (array, new offset)."""
    values = []
    for _ in range(count):
        size_limits.check_claimed(offset + 4, len(blob), f"length of string weight {name!r}",
                                  source)
        n = int(np.frombuffer(blob, _STRING_LENGTH, 1, offset)[0])
        size_limits.check_claimed(offset + 4 + n, len(blob), f"string weight {name!r}", source)
        values.append(blob[offset + 4:offset + 4 + n])
        offset += 4 + n
    return np.array(values, dtype=object), offset


def _take(blob, offset, spec, source):
    """One weight decoded from the group's bytes at `offset`: (array, new offset)."""
    name, shape, dtype, quant = _check_spec(spec, source)
    if dtype == "string":
        count = size_limits.shape_bytes(shape, np.uint8)
        values, offset = _take_strings(blob, offset, count, name, source)
        return values.reshape(shape), offset
    stored = QUANTIZATION_DTYPES[quant["dtype"]] if quant else _STORED[dtype]
    need = size_limits.shape_bytes(shape, stored)
    size_limits.check_claimed(offset + need, len(blob), f"weightsManifest (through weight "
                                                        f"{name!r})", source)
    raw = np.frombuffer(blob, stored, need // stored.itemsize, offset).reshape(shape)
    values = dequantize(raw, quant, dtype) if quant else raw.copy()
    return values, offset + need


def read_weights(manifest, model_dir, source=None):
    """{name: NumPy array} in manifest order from a `weightsManifest` and its shard files.

    Sizes the manifest claims are checked against the bytes on disk (DataLossError naming
    the shard), a group larger than the decompression cap is a ResourceExhaustedError, and a
    path that leaves `model_dir` is refused. Quantized weights come back dequantized.
    """
    source = source or os.path.join(model_dir, "model.json")
    if not isinstance(manifest, list):
        raise errors.DataLossError(None, None, f"{source}: weightsManifest must be a list of "
                                               f"weight groups")
    out = {}
    for group in manifest:
        blob, files = _read_group(group, model_dir, source)
        where = _suspect(files) or source
        offset = 0
        for spec in group["weights"]:
            values, offset = _take(blob, offset, spec, where)
            out[spec["name"]] = values
    return out

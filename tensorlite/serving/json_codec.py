"""TensorFlow Serving's REST JSON <-> NumPy arrays, as its API document specifies.

Requests name inputs in the row format (`"instances"`: one entry per example, an object
per example when there are several named inputs) or the columnar format (`"inputs"`: one
value, or an object of named values), never both. Binary strings travel as
`{"b64": "..."}`; floats may be `NaN`, `Infinity` and `-Infinity`. Responses answer in the
request's format: `"predictions"` (rows) or `"outputs"` (columns); a single output drops
its name. Outputs whose name ends in `_bytes` are written as `{"b64": ...}`.

Bad input is a `RequestError` carrying the HTTP status TF Serving gives (400).

Example:
    >>> rows, inputs = parse_predict(b'{"instances": [[1.0, 2.0]]}', {"x": spec})
    >>> inputs["x"].shape
    (1, 2)
"""
import base64
import json
import math

import numpy as np

try:  # 10x faster parsing of the number arrays requests carry; NaN tokens fall back to json
    import orjson
except ImportError:  # pragma: no cover - orjson is in the serving extra
    orjson = None


# The most characters of a client's own value (a name, a key, a string) that an error
# message repeats: a 50 MB signature_name is not echoed back whole
ECHO_CHARS = 120


def echo(value):
    """A short repr of a client-supplied value for an error message: at most ECHO_CHARS
    characters of it, then how long it really was. Strings are cut before repr, so a huge
    one is never copied whole."""
    if isinstance(value, (str, bytes)):
        if len(value) <= ECHO_CHARS:
            return repr(value)
        return f"{value[:ECHO_CHARS]!r}... ({len(value)} characters)"
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    if isinstance(value, (list, tuple)) and len(value) > 8:
        return echo(list(value[:8]))[:-1] + f", ... ({len(value)} in all)]"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(echo(v) for v in value) + "]"
    text = repr(value)
    return text if len(text) <= ECHO_CHARS else text[:ECHO_CHARS] + "..."


class RequestError(Exception):
    """A client error; `status` is the HTTP status code of the reply."""

    def __init__(self, message, status=400):
        super().__init__(message)
        self.status = status


def loads(body):
    """The request's JSON object (NaN and Infinity accepted, as TF Serving does)."""
    doc = None
    if orjson is not None:
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError:
            doc = None  # NaN/Infinity tokens, or malformed: the standard parser decides
    if doc is None:
        try:
            doc = json.loads(body)
        except (ValueError, RecursionError) as e:
            raise RequestError(f"JSON Parse error: {e}") from None
    if not isinstance(doc, dict):
        raise RequestError("JSON Value: the request body must be a JSON object")
    return doc


def _decode_b64(v):
    if isinstance(v, dict):
        if set(v) != {"b64"} or not isinstance(v["b64"], str):
            raise RequestError(f"JSON object: {echo(json.dumps(v))} is not a valid tensor value; "
                               f"binary values are written as {{\"b64\": \"...\"}}")
        try:
            return base64.b64decode(v["b64"], validate=True)
        except ValueError:
            raise RequestError(f"Unable to base64 decode {echo(v['b64'])}") from None
    if isinstance(v, list):
        return [_decode_b64(x) for x in v]
    return v


def to_array(value, name, spec):
    """One input's JSON value as an array of the signature's dtype; wrong types, ragged
    lists and wrong shapes are RequestErrors naming the input."""
    dtype, shape = spec
    if dtype.is_string:
        value = _decode_b64(value)
        arr = np.array(value, dtype=object)
        flat = arr.reshape(-1)
        for i, x in enumerate(flat):
            if isinstance(x, str):
                flat[i] = x.encode()
            elif not isinstance(x, bytes):
                raise RequestError(f"Input '{name}' expects strings (DT_STRING), got "
                                   f"{type(x).__name__} {echo(x)}")
    else:
        try:
            arr = np.array(value)
        except ValueError:
            raise RequestError(f"Input '{name}': the nested lists are not rectangular") from None
        if arr.dtype == object and any(isinstance(v, dict) for v in arr.reshape(-1)):
            arr = np.array(_decode_b64(value), dtype=object)  # {"b64": ...} into bytes
        if arr.dtype == object or arr.dtype.kind in "SUV":
            raise RequestError(f"Input '{name}' expects numbers ({_dt_name(dtype)}), got "
                               f"{'strings' if arr.dtype.kind in 'SU' else 'ragged lists'}")
        if arr.dtype.kind == "f" and dtype.is_integer:
            if not np.all(np.isfinite(arr)) or np.any(arr != np.round(arr)):
                raise RequestError(f"Input '{name}' expects integers ({_dt_name(dtype)}), got "
                                   f"fractional numbers")
        if arr.dtype.kind == "b" and not dtype.is_bool:
            raise RequestError(f"Input '{name}' expects {_dt_name(dtype)}, got booleans")
        arr = arr.astype(dtype.as_numpy_dtype)
    check_shape(arr, name, shape)
    return arr


def _dt_name(dtype):
    return "DT_" + {"float32": "FLOAT", "float64": "DOUBLE", "float16": "HALF",
                    "bool": "BOOL", "string": "STRING"}.get(dtype.name, dtype.name.upper())


def check_shape(arr, name, shape):
    if shape is None:
        return
    if arr.ndim != len(shape) or any(d is not None and d != n for d, n in zip(shape, arr.shape)):
        want = "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"
        raise RequestError(f"Input '{name}' has shape {list(arr.shape)}, but the signature "
                           f"expects {want}")


def parse_predict(doc, specs):
    """(row_format, {input name: array}) of a predict request for the signature's input
    `specs` ({name: (dtype, shape)})."""
    if ("instances" in doc) == ("inputs" in doc):
        raise RequestError("Missing 'inputs' or 'instances' key" if "instances" not in doc else
                           "Request must have either 'instances' or 'inputs', not both")
    unknown = set(doc) - {"instances", "inputs", "signature_name"}
    if unknown:
        raise RequestError(f"Unknown keys in the request: {echo(unknown)}; expected "
                           f"'instances' or 'inputs' and optionally 'signature_name'")
    if "instances" in doc:
        return True, _rows(doc["instances"], specs)
    return False, _columns(doc["inputs"], specs)


def _rows(instances, specs):
    if not isinstance(instances, list) or not instances:
        raise RequestError("'instances' must be a non-empty list, one entry per example")
    names = list(specs)
    if all(isinstance(r, dict) and "b64" not in r for r in instances):
        values = {}
        for n in names:
            if any(n not in r for r in instances):
                raise RequestError(f"Missing named input '{n}' in an instance; the signature "
                                   f"takes {names}")
            values[n] = [r[n] for r in instances]
        extra = set().union(*instances) - set(names)
        if extra:
            raise RequestError(f"Instances have inputs {echo(extra)} that the signature "
                               f"does not take; it takes {names}")
    elif len(names) == 1:
        values = {names[0]: instances}
    else:
        raise RequestError(f"The signature takes {len(names)} named inputs {names}: write each "
                           f"instance as an object of them, or use the columnar 'inputs'")
    return {n: to_array(values[n], n, specs[n]) for n in names}


def _columns(inputs, specs):
    names = list(specs)
    if isinstance(inputs, dict) and "b64" not in inputs:
        missing = [n for n in names if n not in inputs]
        extra = sorted(set(inputs) - set(names))
        if missing or extra:
            raise RequestError(f"The signature takes inputs {names}; the request "
                               + (f"lacks {missing}" if missing else "")
                               + (" and " if missing and extra else "")
                               + (f"has unknown {echo(extra)}" if extra else ""))
        return {n: to_array(inputs[n], n, specs[n]) for n in names}
    if len(names) != 1:
        raise RequestError(f"The signature takes {len(names)} named inputs {names}: pass "
                           f"'inputs' as an object of them")
    return {names[0]: to_array(inputs, names[0], specs[names[0]])}


def _jsonable(arr, binary):
    """A numeric array stays an array (dumps writes it without Python floats in between);
    strings become text, or {"b64": ...} for binary outputs."""
    if arr.dtype == object:
        out = np.empty(arr.shape, dtype=object)
        flat, dst = arr.reshape(-1), out.reshape(-1)
        for i, x in enumerate(flat):
            b = x if isinstance(x, bytes) else str(x).encode()
            dst[i] = {"b64": base64.b64encode(b).decode()} if binary else \
                b.decode("utf-8", "replace")
        return out.tolist()
    return arr


def format_predict(outputs, row_format):
    """The response object for named output arrays (numeric values as arrays: `dumps`
    writes them)."""
    names = sorted(outputs)
    values = {n: _jsonable(np.asarray(outputs[n]), n.endswith("_bytes")) for n in names}
    if not row_format:
        return {"outputs": values[names[0]] if len(names) == 1 else values}
    if len(names) == 1:
        return {"predictions": values[names[0]]}
    lengths = {np.shape(outputs[n])[0] if np.ndim(outputs[n]) else None for n in names}
    if len(lengths) != 1 or None in lengths:
        raise RequestError("The outputs have different 0-th dimensions and cannot be written "
                           "as rows; use the columnar 'inputs' format", status=400)
    (n_rows,) = lengths
    return {"predictions": [{n: values[n][i] for n in names} for i in range(n_rows)]}


def _tolist(obj):
    if isinstance(obj, (np.ndarray, np.generic)):
        return obj.tolist()
    raise TypeError(f"{type(obj).__name__} is not JSON serializable")


def _finite(obj):
    """Whether `obj` holds no NaN or infinity (orjson would write them as null)."""
    if isinstance(obj, np.ndarray):
        return obj.dtype.kind not in "fc" or bool(np.isfinite(obj).all())
    if isinstance(obj, float):
        return math.isfinite(obj)
    if isinstance(obj, np.floating):
        return bool(np.isfinite(obj))
    if isinstance(obj, dict):
        return all(_finite(v) for v in obj.values())
    if isinstance(obj, list):
        return all(_finite(v) for v in obj)
    return True


def dumps(obj):
    """JSON of a response (arrays inside), with NaN/Infinity tokens as TF Serving writes
    them. orjson writes arrays straight from their buffers (float32 in its shortest
    round-trip form); the standard encoder takes what holds non-finite values."""
    if orjson is not None and _finite(obj):
        return orjson.dumps(obj, option=orjson.OPT_SERIALIZE_NUMPY, default=_tolist)
    return json.dumps(obj, allow_nan=True, separators=(",", ":"), default=_tolist).encode()


def example_features(doc):
    """Per example, {feature: list of ints, floats or bytes} for classify/regress requests
    (`context` features are merged into every example)."""
    examples = doc.get("examples")
    if not isinstance(examples, list) or not examples:
        raise RequestError("'examples' must be a non-empty list of objects")
    context = doc.get("context") or {}
    if not isinstance(context, dict):
        raise RequestError("'context' must be an object of features")
    out = []
    for ex in examples:
        if not isinstance(ex, dict):
            raise RequestError("each example must be an object of features")
        clash = set(ex) & set(context)
        if clash:
            raise RequestError(f"Features {echo(clash)} appear in both 'context' and an "
                               f"example; they must appear in only one")
        out.append({k: _feature(k, v) for k, v in {**context, **ex}.items()})
    return out


def _feature(name, value):
    values = _decode_b64(value if isinstance(value, list) else [value])
    if all(isinstance(v, bool) for v in values):
        raise RequestError(f"Feature {echo(name)}: booleans are not a tf.train.Example type")
    if all(isinstance(v, int) for v in values):
        return ("int64_list", values)
    if all(isinstance(v, (int, float)) for v in values):
        return ("float_list", [float(v) if not math.isnan(v) else v for v in values])
    if all(isinstance(v, (str, bytes)) for v in values):
        return ("bytes_list", [v.encode() if isinstance(v, str) else v for v in values])
    raise RequestError(f"Feature {echo(name)} mixes types; a feature holds numbers or strings")

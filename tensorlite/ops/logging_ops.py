"""`tf.print`: prints tensors the way TensorFlow does (values only, summarised to the first
and last `summarize` entries per dimension).

Inside a `tf.function` it becomes one `PrintV2` node (a Python callback, see script_ops.py)
that prints on every call with that call's values, not once while tracing.

Example:
    >>> tf.print("loss:", tf.constant([1.0, 2.0]))
    loss: [1 2]
"""
import sys

import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.tensor import Tensor
from tensorlite.ops import script_ops

__all__ = ["print"]

_STDERR = sys.stderr  # the default stream: resolved when printing (pytest swaps sys.stderr)


def _element(x, kind, dtype):
    """One element as TensorFlow's C++ printer writes it: floats with the fewer of 6 (15 for
    doubles) or 9 (17) significant digits that reads back to the same value, no padding."""
    if kind == "f":
        short, full = (15, 17) if dtype == np.float64 else (6, 9)
        text = f"{x:.{short}g}"
        return text if dtype.type(text) == x or x != x else f"{x:.{full}g}"
    if kind in "SUO" and isinstance(x, (bytes, str)):
        return '"' + (x.decode("utf-8", "replace") if isinstance(x, bytes) else x) + '"'
    return str(x)


def _format_array(arr, summarize, depth):
    n = arr.shape[0]
    cut = summarize is not None and 0 <= summarize and n > 2 * summarize
    index = list(range(summarize)) + [None] + list(range(n - summarize, n)) if cut \
        else range(n)
    if arr.ndim == 1:
        kind, dtype = arr.dtype.kind, arr.dtype
        parts = ["..." if i is None else _element(arr[i], kind, dtype) for i in index]
        return "[" + " ".join(parts) + "]"
    parts = ["..." if i is None else _format_array(arr[i], summarize, depth + 1)
             for i in index]
    return "[" + ("\n" + " " * (depth + 1)).join(parts) + "]"


def _format(v, summarize):
    arr = np.asarray(v)
    if arr.ndim == 0:
        item = arr[()]
        if isinstance(item, bytes):
            return item.decode("utf-8", "replace")
        return item if isinstance(item, str) else _element(item, arr.dtype.kind, arr.dtype)
    if arr.size == 0:
        return "[]"
    return _format_array(arr, summarize, 0)


class _Slot:
    """Where a tensor's value goes in the printed text."""
    __slots__ = ("index",)

    def __init__(self, index):
        self.index = index


def _template(x, tensors):
    """x with its tensors (and variables, read now) replaced by _Slots appended to
    `tensors`; lists, tuples and dicts are followed."""
    if getattr(x, "_is_variable", False):
        x = x.read_value()
    if isinstance(x, Tensor):
        tensors.append(x)
        return _Slot(len(tensors) - 1)
    if isinstance(x, (list, tuple)):
        return type(x)(_template(v, tensors) for v in x) if type(x) in (list, tuple) else \
            tuple(_template(v, tensors) for v in x)
    if isinstance(x, dict):
        return {k: _template(v, tensors) for k, v in x.items()}
    return x


def _render(x, arrays, summarize, top=True):
    if isinstance(x, _Slot):
        return _format(arrays[x.index], summarize)
    if isinstance(x, list):
        return "[" + ", ".join(_render(v, arrays, summarize, False) for v in x) + "]"
    if isinstance(x, tuple):
        inner = ", ".join(_render(v, arrays, summarize, False) for v in x)
        return f"({inner},)" if len(x) == 1 else f"({inner})"
    if isinstance(x, dict):
        try:
            keys = sorted(x)  # as TF: dicts print with sorted keys
        except TypeError:
            keys = list(x)
        return "{" + ", ".join(f"{k!r}: {_render(x[k], arrays, summarize, False)}"
                               for k in keys) + "}"
    return str(x) if top else repr(x)


def _write(text, output_stream, sep_text):
    if output_stream is _STDERR:
        output_stream = sys.stderr
    if isinstance(output_stream, str):
        if output_stream.startswith("file://"):
            with open(output_stream[len("file://"):], "a", encoding="utf-8") as f:
                f.write(text)
            return
        output_stream = {"stdout": sys.stdout, "stderr": sys.stderr}.get(output_stream,
                                                                        sys.stderr)
    if not hasattr(output_stream, "write") and callable(output_stream):
        output_stream(sep_text)  # a logging function (tf.compat.v1.logging.info, ...)
        return
    output_stream.write(text)


def _tracing():
    from tensorlite.ops.control_flow_ops import graph_tracing  # noqa: PLC0415
    return graph_tracing()


def print(*inputs, output_stream=_STDERR, summarize=3, sep=" ", end="\n", name=None):  # noqa: A001
    """`tf.print`: writes its inputs to `output_stream` (stderr by default, as TF); inside
    a tf.function, on every call."""
    tensors = []
    template = [_template(x, tensors) for x in inputs]

    def emit(*arrays):
        if script_ops.effects_on():
            body = sep.join(_render(t, arrays, summarize) for t in template)
            _write(body + end, output_stream, body)

    if _tracing():
        script_ops.callback("PrintV2", emit, tensors)
    else:
        emit(*[t._value for t in tensors])

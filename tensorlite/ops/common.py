"""Helpers shared by every op family: argument conversion with TF's dtype rules, the
public-function factories with the eager fast path, axis handling, and `unbroadcast`.
"""
import functools
import inspect

import numpy as np

from tensorlite.framework import convert
from tensorlite.framework.dispatch import OBSERVERS, execute, invalid
from tensorlite.framework.tensor import Tensor, wrap

FLOAT = "f"
FLOATC = "fc"
NUMERIC = "fciu"
INTEGER = "iu"
REAL = "fiu"
ANY = "fciubS"
_KIND_NAMES = {"f": "floating", "c": "complex", "i": "signed integer", "u": "unsigned integer",
               "b": "bool", "S": "string"}


def to_tensor(x, dtype=None):
    """Tensor for an op input (no check beyond conversion)."""
    if type(x) is Tensor and dtype is None:
        return x
    return convert.convert_to_tensor(x, dtype=dtype)


def check_kind(op_name, t, kinds, arg="x"):
    if t._dtype.kind not in kinds:
        allowed = ", ".join(_KIND_NAMES[k] for k in kinds)
        raise invalid(op_name, f"{op_name}: input `{arg}` has dtype {t._dtype.name}, but the op "
                      f"accepts only {allowed} dtypes; convert it with tf.cast")
    return t


def tensor_args(op_name, args, kinds=ANY, names=None):
    """Converts several inputs that must share one dtype, TF-style: the first Tensor or
    Variable sets the dtype, Python and NumPy values convert to it, and two tensors of
    different dtypes are an InvalidArgumentError."""
    anchor = None
    for a in args:
        if isinstance(a, Tensor) or getattr(a, "_is_variable", False):
            anchor = a.dtype
            break
    out = []
    for i, a in enumerate(args):
        is_t = isinstance(a, Tensor) or getattr(a, "_is_variable", False)
        if anchor is None:
            t = convert.convert_to_tensor(a)
            anchor = t._dtype
        elif is_t:
            t = convert.convert_to_tensor(a)
            if t._dtype is not anchor:
                raise invalid(op_name, f"cannot compute {op_name} as input #{i}(zero-based) was "
                              f"expected to be a {anchor.name} tensor but is a {t._dtype.name} "
                              f"tensor; tf.cast one of them so both have the same dtype")
        else:
            t = convert.convert_to_tensor(a, dtype=anchor)
        out.append(check_kind(op_name, t, kinds, names[i] if names else f"#{i}"))
    return out


def binary(op, kinds=ANY):
    """Public function for an elementwise binary op, with the no-observer fast path."""
    fwd = op.forward

    def fn(x, y, name=None):
        if type(x) is Tensor:
            ty = type(y)
            kind = x._dtype.kind
            if kind in kinds:
                if OBSERVERS:
                    if ty is Tensor and x._dtype is y._dtype:
                        return execute(op, (x, y), None)
                else:
                    try:
                        if ty is Tensor:
                            if x._dtype is y._dtype:
                                return wrap(fwd(x._value, y._value))
                        elif (ty is float and kind in "fc") or (ty is int and kind in "fciu"):
                            return wrap(fwd(x._value, y))
                    except Exception:  # noqa: BLE001 - the general path reports it properly
                        pass
        if COMPOSITES and (type(x) in COMPOSITES or type(y) in COMPOSITES):
            return COMPOSITES.get(type(x), COMPOSITES.get(type(y))).elementwise(fn, (x, y))
        x, y = tensor_args(op.name, (x, y), kinds, ("x", "y"))
        return execute(op, (x, y), None)
    fn.__name__ = op.name
    return fn


def unary(op, kinds=ANY, arg="x", name=None, doc=None, composites=True):
    """Public function `fn(x, name=None)` for an elementwise unary op (math functions and
    activations alike), with the no-observer fast path: the forward on the array, no
    dispatch. `arg` is the input's keyword name in TensorFlow's API ("features" for
    tf.nn's activations); `composites`: a RaggedTensor runs elementwise over its values."""
    fwd = op.forward

    def fn(x, name=None):
        if not OBSERVERS and type(x) is Tensor and x._dtype.kind in kinds:
            return wrap(fwd(x._value))
        if composites and type(x) in COMPOSITES:
            return COMPOSITES[type(x)].elementwise(fn, (x,))
        x = check_kind(op.name, to_tensor(x), kinds, arg)
        return execute(op, (x,), None)
    if arg != "x":  # TF's keyword name, at no cost per call: rename the code's argument
        fn.__code__ = fn.__code__.replace(co_varnames=(arg,) + fn.__code__.co_varnames[1:])
    fn.__name__ = name or op.name
    if doc is not None:
        fn.__doc__ = doc
    return fn


class _Declined:
    def __repr__(self):
        return "DECLINED"


DECLINED = _Declined()  # what a fast path returns to leave the call to the general path


def fast_path(fast):
    """Decorator: the public function it decorates (the general path: conversions, checks,
    `execute`, so that tapes and traces see the op) with `fast` tried first when nothing
    observes (no tape, trace or symbolic Keras): NumPy on the arrays, no dispatch. `fast`
    takes the same arguments and returns the result, or DECLINED when its shortcut does not
    apply. The wrapper has the general function's own signature (no *args packing)."""
    def deco(general):
        params = list(inspect.signature(general).parameters.values())
        env = {"OBSERVERS": OBSERVERS, "DECLINED": DECLINED, "fast": fast, "general": general}
        head, call = [], []
        for i, p in enumerate(params):
            if p.kind is p.VAR_POSITIONAL:
                head.append(f"*{p.name}")
                call.append(f"*{p.name}")
            elif p.kind is p.VAR_KEYWORD:
                head.append(f"**{p.name}")
                call.append(f"**{p.name}")
            else:
                if p.kind is p.KEYWORD_ONLY and not any(h.startswith("*") for h in head):
                    head.append("*")
                default = ""
                if p.default is not p.empty:
                    env[f"_d{i}"] = p.default
                    default = f"=_d{i}"
                head.append(p.name + default)
                call.append(p.name if p.kind is not p.KEYWORD_ONLY else f"{p.name}={p.name}")
        args = ", ".join(call)
        source = (f"def {general.__name__}({', '.join(head)}):\n"
                  f"    if not OBSERVERS:\n"
                  f"        out = fast({args})\n"
                  f"        if out is not DECLINED:\n"
                  f"            return out\n"
                  f"    return general({args})\n")
        # compiled as of the general function's file: error messages name the user's line,
        # skipping the package's frames (framework/user_frame.py)
        exec(compile(source, general.__code__.co_filename, "exec"), env)  # noqa: S102
        return functools.wraps(general)(env[general.__name__])
    return deco


# Composite tensors (tf.RaggedTensor) register a handler here, keyed by type, when their
# package loads: `handler.elementwise(fn, args)` runs an elementwise public function over
# their values (one dispatch for every elementwise op), and `handler.functions[name]`
# stands in for a public function marked `@composite_aware(name)`. Only the slow path of a
# public function looks here; an empty dict costs nothing.
COMPOSITES = {}


def composite_handler(args):
    """The handler of the first composite among `args` (or inside a list/tuple arg)."""
    for a in args:
        h = COMPOSITES.get(type(a))
        if h is not None:
            return h
        if type(a) in (list, tuple):
            for b in a:
                h = COMPOSITES.get(type(b))
                if h is not None:
                    return h
    return None


def composite_aware(name):
    """Marks a public function that composite tensors implement themselves, e.g.
    ``@composite_aware("gather")``: given a RaggedTensor among its first two arguments (or
    keyword arguments) it runs the ragged implementation instead."""
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            if COMPOSITES:
                h = composite_handler(args[:2] + tuple(kwargs.values()))
                if h is not None and name in h.functions:
                    return h.functions[name](*args, **kwargs)
            return fn(*args, **kwargs)
        return wrapper
    return deco


def batch_dims(g, ans):
    """Number of leading batch dimensions a cotangent carries (0 outside jacobians)."""
    return g._value.ndim - ans._value.ndim


def unbroadcast(g, x, ans):
    """Sums a cotangent of `ans`'s (broadcast) shape down to input `x`'s shape, keeping
    any leading batch dimensions of `g`."""
    from tensorlite.ops import math_ops, array_ops  # noqa: PLC0415 - avoid import cycle
    gshape = g._value.shape
    xshape = x._value.shape
    nb = len(gshape) - ans._value.ndim
    if gshape[nb:] == xshape:
        return g
    lead = ans._value.ndim - len(xshape)
    axes = list(range(nb, nb + lead))
    axes += [nb + lead + i for i, d in enumerate(xshape) if d == 1 and gshape[nb + lead + i] != 1]
    if axes:
        g = math_ops.reduce_sum(g, axis=axes)
    return array_ops.reshape(g, gshape[:nb] + xshape)


def norm_axis(axis, ndim, op_name="op"):
    """Axis argument (None, int, list, Tensor) -> sorted tuple of non-negative ints.
    Non-integer axes are TypeError and repeated axes InvalidArgumentError, as in TF."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, Tensor) or getattr(axis, "_is_variable", False):
        axis = np.asarray(axis).tolist()
    if isinstance(axis, (int, np.integer)):
        axis = [axis]
    elif not isinstance(axis, (list, tuple, np.ndarray)):
        axis = [axis]
    out = []
    for a in axis:
        if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
            raise TypeError(f"{op_name}: Value passed to parameter 'axis' has type "
                            f"{type(a).__name__} ({a!r}), not in the list of allowed types: "
                            f"int32, int64; pass an integer axis")
        a = int(a)
        if not -ndim <= a < max(ndim, 1):
            raise invalid(op_name, f"{op_name}: axis {a} is out of range for a tensor of rank "
                          f"{ndim}; use an axis in [{-ndim}, {ndim})")
        a = a % ndim if ndim else 0
        if a in out:
            raise invalid(op_name, f"Invalid reduction arguments: Axes contains duplicate "
                          f"dimension: {a}; list each axis once")
        out.append(a)
    return tuple(sorted(out))


def single_axis(axis, ndim, op_name="op"):
    """One axis argument (an int or a scalar integer tensor) -> a non-negative int; a list
    or non-scalar tensor is an InvalidArgumentError, as TensorFlow's single-axis ops say."""
    if isinstance(axis, Tensor) or getattr(axis, "_is_variable", False) or \
            isinstance(axis, (list, tuple, np.ndarray)):
        shape = np.shape(np.asarray(axis, dtype=object) if isinstance(axis, (list, tuple))
                         else np.asarray(axis))
        if shape != ():
            raise invalid(op_name, f"{op_name}: axis must be a scalar, got shape {list(shape)}")
    return norm_axis(axis, ndim, op_name)[0]


_AXES = {}


def cached_axes(axis, ndim, op_name="op"):
    """norm_axis for the common forms (None, an int, a tuple or list of ints), remembered
    per (axis, rank); anything else, and every error, goes through norm_axis each time.

    >>> cached_axes(-1, 3, "Sum")
    (2,)"""
    t = type(axis)
    if t is list:
        axis, t = tuple(axis), tuple
    if axis is None or t is int or (t is tuple and all(type(a) is int for a in axis)):
        key = (axis, ndim)  # type checks above keep True from hitting the cache as 1
        hit = _AXES.get(key)
        if hit is None:
            hit = norm_axis(axis, ndim, op_name)
            if len(_AXES) < 4096:
                _AXES[key] = hit
        return hit
    return norm_axis(axis, ndim, op_name)


def int_list(v, what="value"):
    """A Python list of ints from a list, tuple, TensorShape, ndarray or Tensor."""
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        return [int(x) for x in v.reshape(-1)]
    if isinstance(v, (int, np.integer)):
        return [int(v)]
    try:
        return [None if x is None else int(x) for x in v]
    except TypeError:
        raise TypeError(f"expected a list of ints for {what}, got {v!r}") from None

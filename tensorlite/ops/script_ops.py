"""`tf.py_function` and `tf.numpy_function`: Python code as ONE stateful node of a graph.

A call becomes a node of a callback op whose attributes hold the Python callable (`func`)
and the output dtypes (`Tout`). Eagerly the node simply runs; inside a `tf.function` it is
recorded like any op and runs `func` every time the graph runs (the compiled runner, the
interpreter used under a GradientTape, the jit compiler and compat.v1 Sessions all call an
op's forward). The graph passes never fold, merge, move or remove it (its `effects`), and
its outputs have unknown shapes (`Spec(None, dtype)`), as in TensorFlow: `func` may return
another shape on every call.

The same mechanism carries the other effects a graph must repeat on every call: `tf.print`
(`PrintV2`) and `tf.summary` (`WriteSummary`, `FlushSummaryWriter`), through `callback()`.

Ops: `EagerPyFunc` (py_function: func gets eager Tensors; differentiable: its gradient
re-runs func under a GradientTape, itself as an EagerPyFunc node, so it also works inside
graphs and to any order), `PyFunc` / `PyFuncStateless` (numpy_function: func gets ndarrays;
not differentiable; the stateless one may be folded, merged or removed as TF allows).

Exceptions raised by `func` become TensorFlow's classes, as TF's py_func kernel maps them:
ValueError/TypeError -> InvalidArgumentError, StopIteration/IndexError -> OutOfRangeError,
MemoryError -> ResourceExhaustedError, NotImplementedError -> UnimplementedError, an
OpError keeps its class, anything else -> UnknownError; the message names the function.

Example:
    >>> @tf.function
    ... def f(x):
    ...     return tf.numpy_function(np.sinh, [x], tf.float32) * 2
    >>> f(tf.constant(1.0)).numpy()
    2.3504024
"""
import contextlib
import functools
import threading

import numpy as np

from tensorlite.framework import convert, dtypes, errors
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, declare, register
from tensorlite.framework.tensor import Tensor, wrap

__all__ = ["py_function", "numpy_function"]


class _Local(threading.local):
    depth = 0  # callbacks running in this thread (traces ignore the ops they run)
    dry = 0  # >0: effects (printing, summaries) are off: a replay or a trace that is no call


_LOCAL = _Local()


def callback_depth():
    """How many callbacks this thread is inside: a trace started at depth d records only
    ops made at depth d (a callback's own ops are its business, not the graph's)."""
    return _LOCAL.depth


def effects_on():
    """False while a graph is traced without being called (get_concrete_function, a branch
    of tf.cond traced before its node runs) or replayed (gradients, error location)."""
    return _LOCAL.dry == 0


@contextlib.contextmanager
def effects_off():
    """Within: tf.print prints nothing and tf.summary writes nothing."""
    _LOCAL.dry += 1
    try:
        yield
    finally:
        _LOCAL.dry -= 1


# -- running a callback ------------------------------------------------------------------------
_ERROR_CLASSES = ((ValueError, errors.InvalidArgumentError),
                  (TypeError, errors.InvalidArgumentError),
                  (StopIteration, errors.OutOfRangeError),
                  (IndexError, errors.OutOfRangeError),
                  (MemoryError, errors.ResourceExhaustedError),
                  (NotImplementedError, errors.UnimplementedError))


def _error_class(exc):
    if isinstance(exc, errors.OpError):
        return type(exc)
    for py, tf_class in _ERROR_CLASSES:
        if isinstance(exc, py):
            return tf_class
    return errors.UnknownError


def describe_function(func):
    """'name' (defined in file.py:12), for messages."""
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None) or \
        type(func).__name__
    code = getattr(func, "__code__", None)
    where = f" (defined in {code.co_filename}:{code.co_firstlineno})" if code else ""
    return f"{name!r}{where}"


_PUBLIC = {"EagerPyFunc": "tf.py_function", "PyFunc": "tf.numpy_function",
           "PyFuncStateless": "tf.numpy_function", "PrintV2": "tf.print",
           "WriteSummary": "tf.summary", "FlushSummaryWriter": "tf.summary.flush",
           "KerasApplyGradients": "Optimizer.apply_gradients",
           "KerasMetric": "a Keras metric"}


def _run(op_name, eager, func, arrays, tout):
    """Calls func on the node's input values; returns the output arrays (a tuple)."""
    args = [wrap(np.asarray(a)) for a in arrays] if eager else \
        [np.asarray(a) for a in arrays]
    _LOCAL.depth += 1
    try:
        out = func(*args)
        return tuple(a._value for a in _output_tensors(op_name, func, out, tout, eager))
    except Exception as e:  # noqa: BLE001 - becomes a TF-class error naming the function
        if isinstance(e, errors.OpError) and getattr(e, "_from_callback", False):
            raise  # already explained (an output check of this callback)
        what = f"{_PUBLIC.get(op_name, op_name)} ({op_name}) of the Python function " \
               f"{describe_function(func)}"
        text = e.message if isinstance(e, errors.OpError) else str(e)
        err = _error_class(e)(None, None, f"{type(e).__name__}: {text}\n  raised by {what}")
        raise err from e
    finally:
        _LOCAL.depth -= 1


def _output_tensors(op_name, func, out, tout, eager):
    """func's result as Tensors of the dtypes `tout` (a Tensor of the right dtype is kept
    as it is, so a tape sees its ops). `tout` is one DType when Tout named one (the whole
    result is that value), else a tuple of them (the result lists one value each)."""
    if isinstance(tout, dtypes.DType):
        if isinstance(out, (list, tuple)) and len(out) == 1 and _is_array_like(out[0]):
            out = out[0]
        return [_convert_output(op_name, func, out, tout, 0, eager)]
    if not tout:
        if out is None or (isinstance(out, (list, tuple)) and not out):
            return []
        raise _output_error(op_name, func, f"returned {_kind(out)} but Tout is empty (no "
                            f"outputs); return None or give Tout the output dtypes")
    values = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(values) != len(tout):
        raise _output_error(op_name, func, f"returned {len(values)} values but Tout lists "
                            f"{len(tout)} dtypes ({[d.name for d in tout]})")
    return [_convert_output(op_name, func, v, d, i, eager) for i, (v, d) in
            enumerate(zip(values, tout))]


def _is_array_like(v):
    return isinstance(v, (Tensor, np.ndarray, np.generic)) or getattr(v, "_is_variable", False)


def _kind(v):
    return f"a {type(v).__name__}"


def _convert_output(op_name, func, value, dtype, i, eager):
    if getattr(value, "_is_variable", False):
        value = value.read_value()
    if value is None:
        raise _output_error(op_name, func, f"returned None for output {i} (Tout says "
                            f"{dtype.name}); return a value of that dtype")
    if isinstance(value, Tensor):
        if value._dtype is not dtype:
            raise _dtype_error(op_name, func, i, value._dtype.name, dtype)
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        got = _np_dtype_name(arr)
        # numpy_function checks dtypes exactly (as TF's PyFunc kernel); py_function converts
        # arrays like tf.convert_to_tensor (float64 -> float32 is fine, float -> int is not).
        if got == dtype.name or (dtype.is_string and got == "string"):
            return wrap(arr)
        if not eager or got == "string" or dtype.is_string:
            raise _dtype_error(op_name, func, i, got, dtype)
    try:
        return convert.convert_to_tensor(value, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise _output_error(op_name, func, f"output {i} ({_kind(value)}) cannot be converted "
                            f"to Tout's {dtype.name}: {e}") from None


def _np_dtype_name(arr):
    if arr.dtype.kind in "USO":
        return "string"
    try:
        return dtypes.as_dtype(arr.dtype).name
    except TypeError:
        return str(arr.dtype)


def _dtype_error(op_name, func, i, got, dtype):
    return _output_error(op_name, func, f"output {i} has dtype {got} but Tout says "
                         f"{dtype.name}; return {dtype.name} values (x.astype(np."
                         f"{dtype.name}) or tf.cast(x, tf.{dtype.name})) or change Tout")


def _output_error(op_name, func, text):
    err = errors.InvalidArgumentError(
        None, None, f"{_PUBLIC.get(op_name, op_name)} ({op_name}): the Python function "
        f"{describe_function(func)} {text}")
    err._from_callback = True
    return err


# -- the ops -----------------------------------------------------------------------------------
def _forward(op_name, eager):
    def forward(*arrays, func, Tout):  # noqa: N803 - TF's attribute name
        return _run(op_name, eager, func, arrays, Tout)
    forward.__name__ = f"{op_name}_forward"
    return forward


def _shape(*specs, func, Tout):  # noqa: N803
    """Unknown shapes, known dtypes: func may return other shapes on each call."""
    return [Spec(None, d) for d in as_tuple(Tout)]


def as_tuple(tout):
    """The output dtypes of a callback node's Tout attribute."""
    return (tout,) if isinstance(tout, dtypes.DType) else tuple(tout)


def _register(name, eager, grad=NOT_DIFFERENTIABLE, effects="callback"):
    # One registration per op; the jacobian loops over the rule (it re-runs func per row).
    # varying: Python runs on every call, so a trace never freezes its outputs
    # unsupported: Python code exports to no format, and runs once per example
    return declare(register(name, _forward(name, eager), grad=grad, shape=_shape,
                            multi_output=True, batchable=False, effects=effects),
                   varying=True, unsupported="tf onnx tflite batch tf_import")


class _Vjp:
    """The gradient of an EagerPyFunc node, itself an EagerPyFunc callable: re-runs func on
    the inputs under a GradientTape and pulls the cotangents back."""

    def __init__(self, func, tout, diff_in, diff_out, n_in):
        self.func, self.tout = func, tout
        self.diff_in, self.diff_out, self.n_in = diff_in, diff_out, n_in
        self.__name__ = self.__qualname__ = \
            f"gradient of {getattr(func, '__qualname__', getattr(func, '__name__', 'func'))}"

    def __call__(self, *tensors):
        from tensorlite.autodiff.tape import GradientTape  # noqa: PLC0415 - autodiff is above
        xs, cots = list(tensors[:self.n_in]), list(tensors[self.n_in:])
        sources = [xs[i] for i in self.diff_in]
        with GradientTape(watch_accessed_variables=False) as tape, effects_off():
            for x in sources:
                tape.watch(x)
            ys = _output_tensors("EagerPyFunc", self.func, self.func(*xs), self.tout, True)
        return tape.gradient([ys[j] for j in self.diff_out], sources, output_gradients=cots,
                             unconnected_gradients="zero")

    def __repr__(self):
        return f"<{self.__name__}>"


def _py_function_grad(gs, outs, *inputs, func, Tout):  # noqa: N803
    diff_in = [i for i, x in enumerate(inputs) if x._dtype.is_differentiable]
    diff_out = [j for j, d in enumerate(as_tuple(Tout)) if d.is_differentiable]
    if not diff_in or not diff_out:
        return (None,) * len(inputs)
    vjp = _Vjp(func, as_tuple(Tout), diff_in, diff_out, len(inputs))
    grads = execute(EAGER_PY_FUNC, tuple(inputs) + tuple(gs[j] for j in diff_out),
                    {"func": vjp, "Tout": tuple(inputs[i]._dtype for i in diff_in)})
    out = [None] * len(inputs)
    for i, g in zip(diff_in, grads):
        out[i] = g
    return tuple(out)


EAGER_PY_FUNC = _register("EagerPyFunc", True, grad=_py_function_grad)
PY_FUNC = _register("PyFunc", False)
# Python all the same, but declared free of effects: passes may fold it (as TF's)
PY_FUNC_STATELESS = _register("PyFuncStateless", False, effects="pure_callback")
# The effects of tf.print, tf.summary (streams and files: "io") and a Keras optimizer's
# update or metric (Python acting on host state: "callback"): numpy callbacks that act on
# every call.
EFFECTS = {name: _register(name, False, effects=kind) for name, kind in (
    ("PrintV2", "io"), ("WriteSummary", "io"), ("FlushSummaryWriter", "io"),
    ("KerasApplyGradients", "callback"), ("KerasMetric", "callback"))}


def callback(op_name, func, inputs, Tout=()):  # noqa: N803
    """Runs `func(*ndarrays)` as one node of the effect op `op_name` (PrintV2,
    WriteSummary, FlushSummaryWriter, KerasApplyGradients, KerasMetric): now when eager, on
    every call inside a graph.
    Returns the tuple of output Tensors."""
    tout = tuple(dtypes.as_dtype(d) for d in Tout)
    return execute(EFFECTS[op_name], tuple(inputs), {"func": func, "Tout": tout})


# -- the public functions ----------------------------------------------------------------------
def _tout(Tout, what):  # noqa: N803
    """The Tout attribute: one DType, or a tuple of them when Tout is a list."""
    if Tout is None:
        return ()
    if isinstance(Tout, (list, tuple)):
        return tuple(_one_dtype(d, what) for d in Tout)
    return _one_dtype(Tout, what)


def _one_dtype(d, what):
    dtype = getattr(d, "dtype", None) if not isinstance(d, dtypes.DType) else d
    try:
        return dtypes.as_dtype(d if dtype is None else dtype)
    except TypeError:
        raise TypeError(f"{what}: Tout must be a tf.DType or a list of tf.DTypes, got "
                        f"{d!r}") from None


def _inputs(inp, what):
    if inp is None:
        return []
    items = list(inp) if isinstance(inp, (list, tuple)) else [inp]
    out = []
    for i, x in enumerate(items):
        if getattr(x, "_is_variable", False):
            x = x.read_value()
        try:
            out.append(x if isinstance(x, Tensor) else convert.convert_to_tensor(x))
        except (TypeError, ValueError) as e:
            raise TypeError(f"{what}: input {i} ({type(x).__name__}) cannot be converted to "
                            f"a tensor: {e}") from None
    return out


def _wrapper(public, func, Tout, name, **kw):  # noqa: N803
    """The decorator form: `@tf.py_function(Tout=...)`; calls pass the tensors."""
    def decorate(f):
        @functools.wraps(f)
        def call(*args):
            return public(f, list(args), Tout, name=name, **kw)
        return call
    return decorate if func is None else decorate(func)


def _call(op, func, inp, Tout, what):  # noqa: N803
    if not callable(func):
        raise TypeError(f"{what}: func must be callable, got {type(func).__name__}")
    tout = _tout(Tout, what)
    outs = execute(op, tuple(_inputs(inp, what)), {"func": func, "Tout": tout})
    return outs[0] if isinstance(tout, dtypes.DType) else list(outs)


def py_function(func=None, inp=None, Tout=None, name=None):  # noqa: N803 - TF's names
    """`tf.py_function`: runs `func` on eager tensors, eagerly, even inside a tf.function
    (one stateful node that calls it on every run); differentiable.

    >>> tf.py_function(lambda x: x * 2, [tf.constant(1.5)], tf.float32).numpy()
    3.0
    """
    if inp is None and (func is None or Tout is not None):
        return _wrapper(py_function, func, Tout, name)
    return _call(EAGER_PY_FUNC, func, inp, Tout, "tf.py_function")


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):  # noqa: N803
    """`tf.numpy_function`: runs `func` on NumPy arrays, even inside a tf.function (one
    node that calls it on every run); not differentiable.

    >>> tf.numpy_function(np.sinh, [tf.constant(1.0)], tf.float32).numpy()
    1.1752012
    """
    if inp is None and (func is None or Tout is not None):
        return _wrapper(numpy_function, func, Tout, name, stateful=stateful)
    op = PY_FUNC if stateful else PY_FUNC_STATELESS
    return _call(op, func, inp, Tout, "tf.numpy_function")

"""`tf.keras.backend`'s ops, as Keras 2 (TF 2.x) has them: the functions custom losses,
metrics and layers are written with (`K.mean`, `K.square`, `K.clip`, `K.batch_dot`, ...).

tensorlite/keras/backend.py holds the backend's state (floatx, epsilon, learning phase) and
re-exports everything here. Signatures, defaults and results are Keras 2.15's, quirks
included: `sqrt` clips negatives to 0, `clip` raises `max_value` to `min_value`, `zeros`,
`ones` and `eye` return Variables, `mean`/`var`/`std` count bools as floatx, and the
`random_*` functions draw an op seed from NumPy's global RNG when `seed` is None. The ops
are tensorlite's public ones (`tf.*`, `tf.math.*`, `tf.nn.*`, taken from the op modules by
keras/tf_functions.py), so bad input raises their TensorFlow errors, and a call on
`tf.keras.Input` tensors becomes a layer of the functional model as the underlying TF
function's call would.

Example:
    >>> from tensorlite.keras import backend as K
    >>> float(K.sqrt(K.mean(K.square(tf.constant([3.0, 4.0])))))
    3.535533905029297
"""
import builtins
import string
import sys

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.variables import Variable
from tensorlite.graph.context import executing_eagerly
from tensorlite.keras import backend_config as _state
from tensorlite.keras.tf_functions import tf

__all__ = [
    # tensors, variables and their values
    "backend", "is_tensor", "is_keras_tensor", "shape", "int_shape", "ndim", "dtype", "cast",
    "cast_to_floatx", "constant", "variable", "placeholder", "zeros", "ones", "eye",
    "zeros_like", "ones_like", "random_uniform_variable", "random_normal_variable",
    "count_params", "get_value", "batch_get_value", "set_value", "batch_set_value", "eval",
    "update", "update_add", "update_sub", "stop_gradient", "print_tensor",
    # reductions
    "max", "min", "sum", "prod", "mean", "var", "std", "any", "all", "argmax", "argmin",
    "cumsum", "cumprod",
    # element-wise
    "square", "abs", "sqrt", "exp", "log", "round", "sign", "pow", "clip", "equal", "not_equal",
    "greater", "greater_equal", "less", "less_equal", "maximum", "minimum", "sin", "cos",
    # products
    "dot", "batch_dot",
    # shapes
    "transpose", "permute_dimensions", "reshape", "expand_dims", "squeeze", "flatten",
    "batch_flatten", "concatenate", "stack", "tile", "repeat_elements", "repeat", "gather",
    "one_hot", "reverse", "arange",
    # control flow
    "switch", "in_train_phase", "in_test_phase",
    # neural network
    "relu", "elu", "softmax", "softplus", "softsign", "sigmoid", "hard_sigmoid", "tanh",
    "dropout", "l2_normalize", "in_top_k", "bias_add", "conv2d", "binary_crossentropy",
    "categorical_crossentropy", "sparse_categorical_crossentropy",
    # random
    "random_normal", "random_uniform", "random_bernoulli", "truncated_normal",
]


# -- helpers ------------------------------------------------------------------------------------
def _dtype(dtype):
    """`dtype`, floatx() when None: Keras's default for what the backend creates."""
    return _state.floatx() if dtype is None else dtype


def _tensor(x):
    """`x` itself if it is a tensor (Variables and Keras symbolic tensors included), else
    `x` converted: what the backend's functions take."""
    return x if is_tensor(x) else convert_to_tensor(x)


def _bool_as_floatx(x):
    """`x` as a tensor, a bool one cast to floatx (Keras's mean, var and std)."""
    x = _tensor(x)
    return tf.cast(x, _state.floatx()) if x.dtype == tf.bool else x


def _called(value):
    """`value()` for a callable (a branch given lazily), else `value`."""
    return value() if callable(value) else value


def _as_callable(value):
    """`value` as a zero-argument callable (tf.cond's branches)."""
    return value if callable(value) else (lambda: value)


def _op_seed(seed):
    """Keras's op seed for random ops: NumPy's global RNG picks one when `seed` is None."""
    return np.random.randint(10e6) if seed is None else seed


def _data_format(data_format):
    """'channels_first' or 'channels_last', image_data_format() when None."""
    data_format = _state.image_data_format() if data_format is None else data_format
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError("Unknown data_format: " + str(data_format))
    return data_format


def _numpy_dtype(x):
    """The NumPy dtype of a tensor or Variable."""
    return dtypes.as_dtype(x.dtype).as_numpy_dtype


# -- tensors, variables and their values ------------------------------------------------------
def backend():
    """The name of the backend: "tensorflow" (multi-backend Keras's API)."""
    return "tensorflow"


def _is_symbolic(x):
    """True for a Keras symbolic tensor (KerasTensor)."""
    from tensorlite.keras.engine_symbolic import KerasTensor  # noqa: PLC0415 - loaded on use
    return isinstance(x, KerasTensor)


def is_tensor(x):
    """True for tensors, Variables and Keras symbolic tensors (as tf.is_tensor in TF 2)."""
    return tf.is_tensor(x) or _is_symbolic(x)


def is_keras_tensor(x):
    """True for a Keras symbolic tensor (`tf.keras.Input` and layers called on it), False for
    other tensors; ValueError for a non-tensor, as in Keras 2."""
    if not is_tensor(x):
        raise ValueError(f"Unexpectedly found an instance of type `{type(x)}`. Expected a "
                         f"symbolic tensor instance.")
    return _is_symbolic(x)


def shape(x):
    """The dynamic shape of `x`, an int32 tensor."""
    return tf.shape(x)


def int_shape(x):
    """The static shape of `x` as a tuple of ints (None for unknown dimensions); None when
    `x` has no shape (not a tensor) or its rank is unknown."""
    s = getattr(x, "shape", None)
    if s is None or isinstance(s, tuple):
        return s
    try:
        return tuple(s.as_list())
    except ValueError:
        return None


def ndim(x):
    """The rank of `x`, an int (None when unknown)."""
    s = int_shape(x)
    return None if s is None else len(s)


def dtype(x):
    """The dtype of `x` as a string: 'float32', ..."""
    return dtypes.as_dtype(x.dtype).name


def cast(x, dtype):
    """`x` cast to `dtype`."""
    return tf.cast(x, dtype)


def cast_to_floatx(x):
    """A tensor or Variable cast to floatx (a tensor); anything else as a floatx NumPy array."""
    if is_tensor(x):
        return tf.cast(x, _state.floatx())
    return np.asarray(x, dtype=_state.floatx())


def constant(value, dtype=None, shape=None, name=None):
    """`tf.constant`, of dtype floatx unless given."""
    return tf.constant(value, dtype=_dtype(dtype), shape=shape, name=name)


def variable(value, dtype=None, name=None, constraint=None):
    """A `tf.Variable` holding `value`, of dtype floatx unless given."""
    return Variable(value, dtype=dtypes.as_dtype(_dtype(dtype)), name=name,
                    constraint=constraint)


def placeholder(shape=None, ndim=None, dtype=None, sparse=False, name=None, ragged=False):
    """Not in TF 2 programs: Keras 2's placeholder is a TF 1 graph-mode input."""
    raise NotImplementedError(
        "tf.keras.backend.placeholder makes a TF 1 graph-mode input; use "
        "tf.keras.Input(shape=...) for a symbolic model input, or tf.compat.v1.placeholder "
        "after tf.compat.v1.disable_eager_execution()")


def _filled_variable(fill, shape, dtype, name):
    """Keras's zeros/ones: a Variable, or the plain tensor when `shape` has a 0 dimension."""
    value = fill(shape, dtype=_dtype(dtype))
    if builtins.all(value.shape.as_list()):
        return variable(value, dtype, name)
    return value


def zeros(shape, dtype=None, name=None):
    """A Variable of zeros (floatx unless `dtype`)."""
    return _filled_variable(tf.zeros, shape, dtype, name)


def ones(shape, dtype=None, name=None):
    """A Variable of ones (floatx unless `dtype`)."""
    return _filled_variable(tf.ones, shape, dtype, name)


def eye(size, dtype=None, name=None):
    """A Variable holding the `size` x `size` identity matrix."""
    return variable(tf.eye(size, dtype=_dtype(dtype)), dtype, name)


def zeros_like(x, dtype=None, name=None):
    """Zeros of the shape of `x` (and its dtype unless `dtype`)."""
    return tf.zeros_like(x, dtype=dtype, name=name)


def ones_like(x, dtype=None, name=None):
    """Ones of the shape of `x` (and its dtype unless `dtype`)."""
    return tf.ones_like(x, dtype=dtype, name=name)


def random_uniform_variable(shape, low, high, dtype=None, name=None, seed=None):
    """A Variable drawn uniformly from [low, high)."""
    return variable(random_uniform(shape, low, high, dtype, seed), dtype, name)


def random_normal_variable(shape, mean, scale, dtype=None, name=None, seed=None):
    """A Variable drawn from a normal distribution."""
    return variable(random_normal(shape, mean, scale, dtype, seed), dtype, name)


def count_params(x):
    """The number of scalars in `x`."""
    return int(np.prod(int_shape(x), dtype=np.int64))


def get_value(x):
    """The value of a tensor or Variable as a NumPy array (a non-tensor comes back as is)."""
    return x.numpy() if is_tensor(x) else x


def batch_get_value(tensors):
    """get_value of each tensor; RuntimeError inside a tf.function, as in Keras."""
    if not executing_eagerly():
        raise RuntimeError("Cannot get value inside Tensorflow graph function.")
    return [get_value(x) for x in tensors]


def set_value(x, value):
    """Assigns a NumPy value (cast to the Variable's dtype) to the Variable `x`."""
    x.assign(np.asarray(value, dtype=_numpy_dtype(x)))


def batch_set_value(tuples):
    """set_value for each (Variable, value) pair."""
    for x, value in tuples:
        set_value(x, value)


def eval(x):  # noqa: A001 - Keras's name
    """The value of `x` as a NumPy array."""
    return get_value(x)


def update(x, new_x):
    """Assigns `new_x` to the Variable `x`."""
    return x.assign(new_x)


def update_add(x, increment):
    """Adds `increment` to the Variable `x`."""
    return x.assign_add(increment)


def update_sub(x, decrement):
    """Subtracts `decrement` from the Variable `x`."""
    return x.assign_sub(decrement)


def stop_gradient(variables):
    """tf.stop_gradient of a tensor, or of each tensor of a list or tuple (a list)."""
    if isinstance(variables, (list, tuple)):
        return [tf.stop_gradient(v) for v in variables]
    return tf.stop_gradient(variables)


def print_tensor(x, message="", summarize=3):
    """Prints `message` and the value of `x` (also inside a tf.function) and returns `x`."""
    tf.print(message, x, output_stream=sys.stdout, summarize=summarize)
    return x


# -- reductions: `axis` None (every axis), an int or a list; `keepdims` keeps them as 1 ------
def max(x, axis=None, keepdims=False):  # noqa: A001 - Keras's name
    """Maximum over `axis`."""
    return tf.reduce_max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    """Minimum over `axis`."""
    return tf.reduce_min(x, axis, keepdims)


def sum(x, axis=None, keepdims=False):  # noqa: A001
    """Sum over `axis`."""
    return tf.reduce_sum(x, axis, keepdims)


def prod(x, axis=None, keepdims=False):
    """Product over `axis`."""
    return tf.reduce_prod(x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    """Mean over `axis`; a bool `x` counts as floatx."""
    return tf.reduce_mean(_bool_as_floatx(x), axis, keepdims)


def var(x, axis=None, keepdims=False):
    """Variance (population, ddof 0) over `axis`; a bool `x` counts as floatx."""
    return tf.math.reduce_variance(_bool_as_floatx(x), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    """Standard deviation (population, ddof 0) over `axis`; a bool `x` counts as floatx."""
    return tf.math.reduce_std(_bool_as_floatx(x), axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    """Logical OR over `axis` of `x` cast to bool (nonzero is True)."""
    return tf.reduce_any(tf.cast(x, tf.bool), axis, keepdims)


def all(x, axis=None, keepdims=False):  # noqa: A001
    """Logical AND over `axis` of `x` cast to bool (nonzero is True)."""
    return tf.reduce_all(tf.cast(x, tf.bool), axis, keepdims)


def argmax(x, axis=-1):
    """Index (int64) of the maximum along `axis`."""
    return tf.argmax(x, axis)


def argmin(x, axis=-1):
    """Index (int64) of the minimum along `axis`."""
    return tf.argmin(x, axis)


def cumsum(x, axis=0):
    """Cumulative sum along `axis`."""
    return tf.cumsum(x, axis=axis)


def cumprod(x, axis=0):
    """Cumulative product along `axis`."""
    return tf.math.cumprod(x, axis=axis)


# -- element-wise -------------------------------------------------------------------------------


def _forwarded(name, tf_name, arity, doc):
    """A Keras backend function that is TensorFlow's `tf_name` on the same arguments. The
    function is looked up when called, so a call on Keras symbolic tensors reaches the
    symbolic dispatch that wraps it (keras/tf_functions.py)."""
    path = tf_name.split(".")

    def target():
        obj = tf
        for part in path:
            obj = getattr(obj, part)
        return obj
    if arity == 1:
        def forwarded(x):
            return target()(x)
    else:
        def forwarded(x, y):
            return target()(x, y)
    forwarded.__name__ = forwarded.__qualname__ = name
    forwarded.__doc__ = doc
    return forwarded


# Element-wise functions that are TensorFlow's own
square = _forwarded("square", "square", 1, "Element-wise x ** 2.")
abs = _forwarded(  # noqa: A001
    "abs", "abs", 1, "Element-wise absolute value.")
exp = _forwarded("exp", "exp", 1, "Element-wise e ** x.")
log = _forwarded("log", "math.log", 1, "Element-wise natural logarithm.")
round = _forwarded(  # noqa: A001
    "round", "round", 1, "Rounds to the nearest integer, ties to even.")
sign = _forwarded("sign", "sign", 1, "Element-wise sign: -1, 0 or 1.")
sin = _forwarded("sin", "sin", 1, "Element-wise sine.")
cos = _forwarded("cos", "cos", 1, "Element-wise cosine.")
sigmoid = _forwarded("sigmoid", "sigmoid", 1, "1 / (1 + exp(-x)).")
equal = _forwarded("equal", "equal", 2, "Element-wise x == y (bool).")
not_equal = _forwarded("not_equal", "not_equal", 2, "Element-wise x != y (bool).")
greater = _forwarded("greater", "greater", 2, "Element-wise x > y (bool).")
greater_equal = _forwarded("greater_equal", "greater_equal", 2, "Element-wise x >= y (bool).")
less = _forwarded("less", "less", 2, "Element-wise x < y (bool).")
less_equal = _forwarded("less_equal", "less_equal", 2, "Element-wise x <= y (bool).")
maximum = _forwarded("maximum", "maximum", 2, "Element-wise maximum of `x` and `y`.")
minimum = _forwarded("minimum", "minimum", 2, "Element-wise minimum of `x` and `y`.")


def sqrt(x):
    """Square root, negative values clipped to 0 first (Keras's sqrt)."""
    return tf.sqrt(tf.maximum(_tensor(x), 0.0))






def pow(x, a):  # noqa: A001
    """Element-wise x ** a."""
    return tf.pow(x, a)


def clip(x, min_value, max_value):
    """`x` clipped to [min_value, max_value]; None means unbounded, and a Python max below
    the min becomes the min (Keras's rule)."""
    if isinstance(min_value, (int, float)) and isinstance(max_value, (int, float)):
        max_value = builtins.max(min_value, max_value)
    if min_value is None:
        min_value = -np.inf
    if max_value is None:
        max_value = np.inf
    return tf.clip_by_value(x, min_value, max_value)












# -- products -----------------------------------------------------------------------------------
def dot(x, y):
    """Matrix product; for n-D tensors x's last axis with y's second-to-last (np.dot's rule),
    giving shape x.shape[:-1] + y.shape[:-2] + y.shape[-1:]."""
    x, y = _tensor(x), _tensor(y)
    nx, ny = ndim(x), ndim(y)
    if nx <= 2 and ny <= 2:
        return tf.matmul(x, y)
    if ny < 2:
        raise ValueError(f"dot: y must have rank >= 2 when x has rank {nx} (it is contracted "
                         f"over its second-to-last axis); got shapes {int_shape(x)} and "
                         f"{int_shape(y)}")
    return tf.tensordot(x, y, [[nx - 1], [ny - 2]])


def _batch_dot_axes(x_shape, y_shape, axes):
    """Keras's defaults and checks for batch_dot's axes: (x's axis, y's axis), >= 1 each."""
    nx, ny = len(x_shape), len(y_shape)
    if nx < 2 or ny < 2:
        raise ValueError(f"Cannot do batch_dot on inputs with rank < 2. Received inputs with "
                         f"shapes {x_shape} and {y_shape}.")
    if x_shape[0] is not None and y_shape[0] is not None and x_shape[0] != y_shape[0]:
        raise ValueError(f"Cannot do batch_dot on inputs with different batch sizes. Received "
                         f"inputs with shapes {x_shape} and {y_shape}.")
    if isinstance(axes, int):
        axes = [axes, axes]
    if axes is None:
        axes = [nx - 1, ny - 1 if ny == 2 else ny - 2]
    if builtins.any(isinstance(a, (list, tuple)) for a in axes) or len(axes) != 2:
        raise ValueError(f"Multiple target dimensions are not supported. Expected: None, int, "
                         f"(int, int), Provided: {axes}")
    a0, a1 = (a + n if a < 0 else a for a, n in zip(axes, (nx, ny), strict=True))
    if not (0 <= a0 < nx and 0 <= a1 < ny):
        raise ValueError(f"batch_dot: axes {list(axes)} are out of range for inputs with shapes "
                         f"{x_shape} and {y_shape}")
    if 0 in (a0, a1):
        raise ValueError("Cannot perform batch_dot over axis 0. If your inputs are not batched, "
                         "add a dummy batch dimension to your inputs using K.expand_dims(x, 0)")
    d0, d1 = x_shape[a0], y_shape[a1]
    if d0 is not None and d1 is not None and d0 != d1:
        raise ValueError(f"Cannot do batch_dot on inputs with shapes {x_shape} and {y_shape} "
                         f"with axes={[a0, a1]}. x.shape[{a0}] != y.shape[{a1}] ({d0} != {d1}).")
    return a0, a1


def batch_dot(x, y, axes=None):
    """Per-sample dot product of `x` and `y` (batch axis 0), contracting x's axis axes[0]
    with y's axis axes[1]: shape x's (less that axis) + y's (less batch and that axis), or
    (batch, 1) for two 2-D inputs."""
    x, y = _tensor(x), _tensor(y)
    a0, a1 = _batch_dot_axes(int_shape(x), int_shape(y), axes)
    nx, ny = ndim(x), ndim(y)
    x_sub = list(string.ascii_letters[:nx])  # x_sub[0]: the batch axis
    y_sub = [x_sub[0]] + list(string.ascii_letters[nx:nx + ny - 1])
    y_sub[a1] = x_sub[a0]
    out = ([s for i, s in enumerate(x_sub) if i != a0]
           + [s for i, s in enumerate(y_sub) if i not in (0, a1)])
    result = tf.einsum(f"{''.join(x_sub)},{''.join(y_sub)}->{''.join(out)}", x, y)
    return tf.expand_dims(result, -1) if nx == ny == 2 else result


# -- shapes -------------------------------------------------------------------------------------
def transpose(x):
    """`x` with its axes reversed."""
    return tf.transpose(x)


def permute_dimensions(x, pattern):
    """`x` with its axes in the order `pattern`, e.g. (0, 2, 1)."""
    return tf.transpose(x, perm=pattern)


def reshape(x, shape):
    """`x` with shape `shape` (one -1 inferred)."""
    return tf.reshape(x, shape)


def expand_dims(x, axis=-1):
    """`x` with a size-1 axis inserted at `axis`."""
    return tf.expand_dims(x, axis)


def squeeze(x, axis):
    """`x` without its size-1 axis `axis`."""
    return tf.squeeze(x, [axis])


def flatten(x):
    """`x` as 1-D."""
    return tf.reshape(x, [-1])


def batch_flatten(x):
    """`x` as 2-D (batch, everything else)."""
    return tf.reshape(x, tf.stack([-1, tf.reduce_prod(tf.shape(x)[1:])]))


def concatenate(tensors, axis=-1):
    """`tensors` joined along `axis`."""
    rank = ndim(_tensor(tensors[0]))
    if axis < 0:
        axis = axis % rank if rank else 0
    return tf.concat(list(tensors), axis)


def stack(x, axis=0):
    """The tensors `x` stacked along a new axis `axis`."""
    return tf.stack(x, axis=axis)


def tile(x, n):
    """`x` repeated `n[i]` times along each axis i (an int `n` for 1-D `x`)."""
    return tf.tile(x, [n] if isinstance(n, int) else n)


def repeat_elements(x, rep, axis):
    """Each element repeated `rep` times along `axis`, like np.repeat."""
    return tf.repeat(x, rep, axis=axis)


def repeat(x, n):
    """A 2-D (samples, dim) tensor as (samples, n, dim): each row repeated `n` times."""
    x = _tensor(x)
    if ndim(x) != 2:
        raise ValueError(f"repeat: x must be 2-D (samples, dim), got shape {int_shape(x)}")
    return tf.tile(tf.expand_dims(x, 1), [1, n, 1])


def gather(reference, indices):
    """Rows `indices` of `reference` (along axis 0)."""
    return tf.gather(reference, indices)


def one_hot(indices, num_classes):
    """One-hot (float32) encoding of integer `indices`, classes on a new last axis."""
    return tf.one_hot(indices, depth=num_classes, axis=-1)


def reverse(x, axes):
    """`x` reversed along `axes` (an int or a list)."""
    return tf.reverse(x, [axes] if isinstance(axes, int) else axes)


def arange(start, stop=None, step=1, dtype="int32"):
    """A 1-D range as Theano's (one argument is `stop`; a negative one gives an empty range),
    int32 unless `dtype` (float bounds give float32)."""
    if stop is None and start < 0:
        start = 0
    result = tf.range(start, limit=stop, delta=step, name="arange")
    return result if dtype == "int32" else tf.cast(result, dtype)


# -- control flow -------------------------------------------------------------------------------
def switch(condition, then_expression, else_expression):
    """then_expression where `condition` (else else_expression): tf.cond for a scalar
    condition (branches may be callables), else tf.where with the condition's shape padded
    with trailing 1s to the expressions' rank."""
    condition = _tensor(condition)
    if condition.dtype != tf.bool:
        condition = tf.cast(condition, tf.bool)
    cond_ndim = ndim(condition)
    if not cond_ndim:
        return tf.cond(condition, _as_callable(then_expression), _as_callable(else_expression))
    then_expression = _tensor(_called(then_expression))
    else_expression = _called(else_expression)
    expr_ndim = ndim(then_expression)
    if cond_ndim > expr_ndim:
        raise ValueError(f"Rank of `condition` should be less than or equal to rank of "
                         f"`then_expression` and `else_expression`. ndim(condition)={cond_ndim}, "
                         f"ndim(then_expression)={expr_ndim}")
    if 1 < cond_ndim < expr_ndim:
        condition = tf.reshape(condition, tf.concat(
            [tf.shape(condition), [1] * (expr_ndim - cond_ndim)], 0))
    return tf.where(condition, then_expression, else_expression)


def in_train_phase(x, alt, training=None):
    """`x` in the training phase, `alt` otherwise (either may be a callable); `training`
    None means learning_phase()."""
    if training is None:
        training = _state.learning_phase()
    if not is_tensor(training):
        if training == 1 or training is True:
            return _called(x)
        if training == 0 or training is False:
            return _called(alt)
    return switch(training, x, alt)


def in_test_phase(x, alt, training=None):
    """`x` in the test phase, `alt` otherwise."""
    return in_train_phase(alt, x, training=training)


# -- neural network -----------------------------------------------------------------------------
def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """max(x, 0) by default; generally x above `threshold` (else 0), clipped to
    [0, max_value], plus alpha * (x - threshold) below `threshold`."""
    x = _tensor(x)
    if alpha != 0.0 and max_value is None and threshold == 0:
        return tf.nn.leaky_relu(x, alpha=alpha)
    if alpha == 0.0 and threshold == 0 and max_value == 6:  # TF's Keras: the Relu6 op,
        return tf.nn.relu6(x)  # one pass each way instead of Relu, Maximum and Minimum
    out = x * tf.cast(tf.greater(x, threshold), x.dtype) if threshold != 0 else tf.nn.relu(x)
    if max_value is not None:
        out = tf.clip_by_value(out, 0, max_value)
    if alpha != 0.0:
        out = out - alpha * tf.nn.relu(threshold - x)
    return out


def elu(x, alpha=1.0):
    """x for x > 0, alpha * (exp(x) - 1) otherwise."""
    res = tf.nn.elu(x)
    return res if alpha == 1 else tf.where(tf.greater(x, 0), res, alpha * res)


def softmax(x, axis=-1):
    """exp(x) / sum(exp(x)) along `axis`."""
    return tf.nn.softmax(x, axis=axis)


def softplus(x):
    """log(1 + exp(x))."""
    return tf.math.softplus(x)


def softsign(x):
    """x / (1 + |x|)."""
    return tf.math.softsign(x)



def hard_sigmoid(x):
    """clip(0.2 * x + 0.5, 0, 1)."""
    return tf.clip_by_value(_tensor(x) * 0.2 + 0.5, 0.0, 1.0)


def tanh(x):
    """Element-wise hyperbolic tangent."""
    return tf.tanh(x)


def dropout(x, level, noise_shape=None, seed=None):
    """Zeroes a fraction `level` of `x` at random, scaling the rest by 1 / (1 - level)."""
    return tf.nn.dropout(x, rate=level, noise_shape=noise_shape, seed=_op_seed(seed))


def l2_normalize(x, axis=None):
    """x / sqrt(max(sum(x ** 2, axis), 1e-12))."""
    return tf.nn.l2_normalize(x, axis=axis)


def in_top_k(predictions, targets, k):
    """Whether each target class is among the `k` largest predictions of its row."""
    return tf.nn.in_top_k(targets, predictions, k)


def bias_add(x, bias, data_format=None):
    """x + bias along the channels axis (`data_format`, image_data_format() by default); a
    bias of rank ndim(x) - 1 covers every non-batch axis."""
    data_format = _data_format(data_format)
    x = _tensor(x)
    bias_shape, rank = int_shape(_tensor(bias)), ndim(x)
    if len(bias_shape) not in (1, rank - 1):
        raise ValueError(f"Unexpected bias dimensions {len(bias_shape)}, expect to be 1 or "
                         f"{rank - 1} dimensions")
    if len(bias_shape) == 1:
        fmt = "NCHW" if data_format == "channels_first" else "NHWC"
        return tf.nn.bias_add(x, bias, data_format=fmt)
    if rank in (3, 4, 5):
        if data_format == "channels_first":
            return x + tf.reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
        return x + tf.reshape(bias, (1,) + bias_shape)
    return tf.nn.bias_add(x, bias)


_PADDINGS = {"same": "SAME", "valid": "VALID"}


def conv2d(x, kernel, strides=(1, 1), padding="valid", data_format=None, dilation_rate=(1, 1)):
    """2-D convolution of `x` (NHWC, or NCHW for channels_first) with an (h, w, in, out)
    `kernel`; padding 'valid' or 'same'."""
    data_format = _data_format(data_format)
    if padding not in _PADDINGS:
        raise ValueError("Invalid padding: " + str(padding))
    if data_format == "channels_first":
        x = tf.transpose(x, (0, 2, 3, 1))
    out = tf.nn.convolution(x, kernel, strides=strides, padding=_PADDINGS[padding],
                            dilations=dilation_rate)
    return tf.transpose(out, (0, 3, 1, 2)) if data_format == "channels_first" else out


def binary_crossentropy(target, output, from_logits=False):
    """Element-wise -(t log p + (1 - t) log(1 - p)), p clipped to [eps, 1 - eps] (Keras 2:
    no mean over the last axis, unlike tf.keras.losses.binary_crossentropy)."""
    from tensorlite.keras.losses import _use_cached_logits  # noqa: PLC0415 - circular
    target, output = convert_to_tensor(target), convert_to_tensor(output)
    output, from_logits = _use_cached_logits("binary_crossentropy", output, from_logits,
                                             "sigmoid")
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _state.epsilon()
    output = tf.clip_by_value(output, eps, 1.0 - eps)
    return -(target * tf.math.log(output + eps) + (1 - target) * tf.math.log(1 - output + eps))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """-sum(target * log(p), axis), p renormalised along `axis` and clipped to
    [eps, 1 - eps] unless `from_logits`."""
    from tensorlite.keras import losses  # noqa: PLC0415 - circular
    return losses.categorical_crossentropy(target, output, from_logits=from_logits, axis=axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1,
                                    ignore_class=None):
    """-log p[target] with integer targets, p clipped to [eps, 1 - eps] unless `from_logits`;
    0 where target == ignore_class."""
    from tensorlite.keras import losses  # noqa: PLC0415 - circular
    return losses.sparse_categorical_crossentropy(target, output, from_logits=from_logits,
                                                  axis=axis, ignore_class=ignore_class)


# -- random -------------------------------------------------------------------------------------
def random_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Samples of a normal distribution (floatx unless `dtype`)."""
    return tf.random.normal(shape, mean=mean, stddev=stddev, dtype=_dtype(dtype),
                            seed=_op_seed(seed))


def random_uniform(shape, minval=0.0, maxval=1.0, dtype=None, seed=None):
    """Samples uniform in [minval, maxval) (floatx unless `dtype`)."""
    return tf.random.uniform(shape, minval=minval, maxval=maxval, dtype=_dtype(dtype),
                             seed=_op_seed(seed))


def random_bernoulli(shape, p=0.0, dtype=None, seed=None):
    """1 with probability `p`, else 0 (floatx unless `dtype`)."""
    dtype = _dtype(dtype)
    return tf.where(random_uniform(shape, dtype=dtype, seed=seed) <= p,
                    tf.ones(shape, dtype=dtype), tf.zeros(shape, dtype=dtype))


def truncated_normal(shape, mean=0.0, stddev=1.0, dtype=None, seed=None):
    """Normal samples, those over 2 standard deviations from the mean redrawn."""
    return tf.random.truncated_normal(shape, mean, stddev, dtype=_dtype(dtype),
                                      seed=_op_seed(seed))

"""Neural-network ops (`tf.nn.*`): activations, softmax and cross-entropies, dropout,
normalisation helpers, top-k.

Fused ops (one NumPy pass forward, a short gradient) where speed matters: Relu, Softmax,
LogSoftmax, SparseSoftmaxCrossEntropyWithLogits, and the elementwise activations. The rest
are written with tensorlite ops, so their gradients follow.

Example:
    >>> tf.nn.relu(tf.constant([-1.0, 2.0])).numpy()
    array([0., 2.], dtype=float32)
"""
import collections
import numbers

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, declare, register
from tensorlite.ops.batching import axis_attr, elementwise, per_batch
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import numba_softmax
from tensorlite.ops.array_ops import concat, expand_dims, reshape
from tensorlite.ops.common import (FLOAT, INTEGER, NUMERIC, REAL, check_kind, int_list,
                                   norm_axis, single_axis, tensor_args, to_tensor, unary,
                                   DECLINED, fast_path, unbroadcast)
from tensorlite.ops import math_ops
from tensorlite.ops.random_ops import next_rng
from tensorlite.ops.math_ops import (abs, add, cast, divide, equal, erf, exp, greater,  # noqa: A004
                                     maximum, minimum, multiply, negative, reduce_mean, reduce_sum,
                                     rsqrt, sigmoid, square, squared_difference, subtract,
                                     tanh, top_k_internal, where)

__all__ = []  # TensorFlow exports these under tf.nn only


def _same(x, **_):
    return x


def _same_as_first(g, *_, **__):
    return g


# -- consumer rules shared by several ops (each op declares its rules at its registration;
# the forms: tf/tf_import saved_model/function_runner.py, onnx tensorlite/onnx/__init__.py,
# tflite tensorlite/lite/convert/converter.py) ---------------------------------------------
def _softmax_tf(name):
    """TensorFlow's Softmax/LogSoftmax act on the last axis only."""
    def rule(attrs, in_specs):
        rank = len(in_specs[0].shape)
        if attrs["axis"] not in (-1, rank - 1):
            raise errors.UnimplementedError(None, None, f"{name} over axis {attrs['axis']} "
                                            f"of a rank-{rank} tensor has no TensorFlow op "
                                            f"(it takes the last axis); transpose first")
        return name, {}
    return rule


def _onnx_axis(onnx_op):
    return lambda ctx, node: ctx.emit(onnx_op, ctx.inputs(node), axis=int(node.attrs["axis"]))


def _onnx_relu6(ctx, node):
    dtype = ctx.dtype(node.inputs[0])
    return ctx.emit("Clip", ctx.inputs(node) + [ctx.const(np.array(0, dtype)),
                                                ctx.const(np.array(6, dtype))])


def _tflite_activation(builtin, fused):
    def rule(ctx, node):
        if fused and ctx.fuse_activation(node, fused):
            return
        ctx.op(builtin, [ctx.tensor(node.inputs[0])], [ctx.output(node)])
    return rule


def _tflite_softmax(ctx, node):
    x = node.inputs[0]
    if node.attrs["axis"] not in (-1, len(ctx.shape(x)) - 1):
        ctx.unsupported(node, "over an axis other than the last has no TFLite builtin")
    ctx.op("SOFTMAX", [ctx.tensor(x)], [ctx.output(node)],
           options=("SoftmaxOptions", {"beta": 1.0}))


def _tflite_leaky_relu(ctx, node):
    ctx.op("LEAKY_RELU", [ctx.tensor(node.inputs[0])], [ctx.output(node)],
           options=("LeakyReluOptions", {"alpha": float(node.attrs["alpha"])}))


def _activation(op, kinds=FLOAT):
    """Public function `fn(features, name=None)`: common.unary's, named as tf.nn's."""
    name = op.name.lower()
    return unary(op, kinds, arg="features", name=name, doc=f"`tf.nn.{name}`.",
                 composites=False)


# -- piecewise-linear activations -------------------------------------------------------------
def _piecewise_linear(name, fwd, scaled, by_output=False, **rules):
    """An activation linear piece by piece. Its gradient op `<name>Grad(g, x)` scales g by
    the slope of x's piece: linear in g (so its own gradient is itself) and piecewise
    constant in x (no gradient flows into x). `by_output`: the output tells the piece as
    well as the input does (ReLU, ReLU6), so the gradient reads the output, as TF's: the
    input then dies at the activation, and graph passes may fuse the two (a bias add and
    ReLU into the convolution before them)."""
    grad_op = declare(register(
        name + "Grad", scaled, shape=_same_as_first,
        grad=lambda c, ans, g, x, **a: (execute(grad_op, (c, x), a or None), None)),
        batch=elementwise(scaled), unsupported="tf onnx tflite tf_import")  # training only
    return declare(register(
        name, fwd, shape=_same,
        grad=lambda c, ans, x, **a: execute(grad_op, (c, ans if by_output else x), a or None)),
        tf=name, tf_outputs="activations", batch=elementwise(fwd),
        **{"tf_import": "plain", **rules})


def _leaky_slope(x, alpha, dtype):
    a = np.asarray(alpha, dtype)
    return (x > 0) * (1 - a) + a


# Masks multiply rather than select: np.where branches per element and runs several times
# slower on data of mixed sign (and TF's kernels multiply too).
RELU = _piecewise_linear("Relu", lambda x: np.maximum(x, 0), lambda g, x: g * (x > 0),
                         by_output=True, onnx="Relu", tflite=_tflite_activation("RELU", "RELU"),
                         jit=("ufunc_with", "maximum", "0", "fill"),
                         numexpr="where({0} < 0, 0, {0})", fuse="maximum({0}, 0{out})",
                         exact_shape=True)
RELU6 = _piecewise_linear("Relu6", lambda x: np.clip(x, 0, 6),
                          lambda g, x: g * ((x > 0) & (x < 6)), by_output=True,
                          onnx=_onnx_relu6, tflite=_tflite_activation("RELU6", "RELU6"),
                          fuse="call", exact_shape=True)
LEAKY_RELU = _piecewise_linear(
    "LeakyRelu", lambda x, alpha: x * _leaky_slope(x, alpha, x.dtype),
    lambda g, x, alpha: g * _leaky_slope(x, alpha, g.dtype),
    tf_import=lambda ins, a: leaky_relu(ins[0], a.get("alpha", 0.2)),
    onnx=lambda ctx, node: ctx.emit("LeakyRelu", ctx.inputs(node),
                                    alpha=float(node.attrs["alpha"])),
    tflite=_tflite_leaky_relu)
relu = _activation(RELU, REAL)
relu6 = _activation(RELU6, REAL)


def leaky_relu(features, alpha=0.2, name=None):
    """`tf.nn.leaky_relu`: x where x > 0, else alpha * x."""
    x = check_kind("LeakyRelu", to_tensor(features), FLOAT, "features")
    return execute(LEAKY_RELU, (x,), {"alpha": float(alpha)})


def crelu(features, axis=-1, name=None):
    """`tf.nn.crelu`: concat([relu(x), relu(-x)], axis)."""
    x = to_tensor(features)
    return concat([relu(x), relu(negative(x))], axis=axis)


# -- smooth activations ---------------------------------------------------------------------
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _elu_fwd(x):
    return np.maximum(x, 0) + np.expm1(np.minimum(x, 0))


def _smooth_activation(name, fwd, grad, **rules):
    """A smooth activation: TensorFlow's op of the same name, with no attributes but T."""
    return register(name, fwd, grad=grad, shape=_same, tf=name, tf_outputs="activations",
                    tf_import="plain", onnx=name, fuse="call", **rules)


# d elu = 1 where x > 0 (there elu > 0), elu + 1 elsewhere: both are min(elu, 0) + 1.
ELU = _smooth_activation("Elu", _elu_fwd,
                         lambda g, ans, x: multiply(g, add(minimum(ans, 0), 1)),
                         tflite=_tflite_activation("ELU", None), unsupported="batch")
SELU = _smooth_activation(
    "Selu", lambda x: (_SELU_SCALE * (np.maximum(x, 0) + _SELU_ALPHA * np.expm1(
        np.minimum(x, 0)))).astype(x.dtype, copy=False),
    lambda g, ans, x: where(greater(x, 0), multiply(g, _SELU_SCALE),
                            multiply(g, add(ans, _SELU_SCALE * _SELU_ALPHA))),
    unsupported="tflite batch")
SOFTPLUS = _smooth_activation("Softplus", lambda x: np.logaddexp(x, 0),
                              lambda g, ans, x: multiply(g, sigmoid(x)),
                              jit=("ufunc_with", "logaddexp", "0", "floats"),
                              unsupported="tflite batch")
SOFTSIGN = _smooth_activation("Softsign", lambda x: x / (np.abs(x) + 1),
                              lambda g, ans, x: divide(g, square(add(abs(x), 1))),
                              unsupported="tflite batch")
elu = _activation(ELU)
selu = _activation(SELU)
softplus = _activation(SOFTPLUS)
softsign = _activation(SOFTSIGN)


def silu(features, beta=1.0, name=None):
    """`tf.nn.silu` (`tf.nn.swish`): x * sigmoid(beta * x)."""
    x = check_kind("Silu", to_tensor(features), FLOAT, "features")
    return multiply(x, sigmoid(x if beta == 1.0 else multiply(x, beta)))


swish = silu


def gelu(features, approximate=False, name=None):
    """`tf.nn.gelu`: x * Phi(x) with the exact erf form, or the tanh approximation."""
    x = check_kind("Gelu", to_tensor(features), FLOAT, "features")
    if approximate:
        inner = multiply(add(x, multiply(multiply(square(x), x), 0.044715)),
                         float(np.sqrt(2 / np.pi)))
        return multiply(multiply(x, 0.5), add(tanh(inner), 1))
    return multiply(multiply(x, 0.5), add(erf(multiply(x, float(np.sqrt(0.5)))), 1))


# -- softmax family ---------------------------------------------------------------------------
# The ufuncs' own reduce, in place where possible: np.max/np.sum's Python wrappers and the
# extra temporaries were most of a small softmax's time.
_max_reduce, _add_reduce = np.maximum.reduce, np.add.reduce


def _softmax_fwd(x, axis):
    if x.size == 0:  # as TensorFlow: an empty tensor in, the same empty tensor out
        return np.empty_like(x)
    if axis == -1:
        out = numba_softmax.rows(x) if x.size <= numba_softmax.MAX_SIZE else \
            numba_softmax.large_rows(x)
        if out is not None:
            return out
    e = np.subtract(x, _max_reduce(x, axis=axis, keepdims=True))
    np.exp(e, out=e)
    e /= _add_reduce(e, axis=axis, keepdims=True)
    return e


def _log_softmax_fwd(x, axis):
    if x.size == 0:  # as TensorFlow: an empty tensor in, the same empty tensor out
        return np.empty_like(x)
    s = np.subtract(x, _max_reduce(x, axis=axis, keepdims=True))
    s -= np.log(_add_reduce(np.exp(s), axis=axis, keepdims=True))
    return s


def _softmax_grad_fwd(y, g, axis):
    """y * (g - sum(g * y, axis)): Softmax's gradient from its output y, in one compiled
    pass per row where it applies. g may carry a jacobian's leading batch dimensions."""
    if axis == -1:
        out = numba_softmax.grad_rows(y, g)
        if out is not None:
            return out
    p = np.multiply(g, y)
    return np.multiply(y, np.subtract(g, _add_reduce(p, axis=axis, keepdims=True), out=p),
                       out=p)


def _softmax_grad_grad(h, ans, y, g, axis):
    """Of out = y * (g - s), s = sum(g * y): the map g -> out is the same projection
    (dg = SoftmaxGrad(y, h)); dy = h * (g - s) - g * sum(h * y)."""
    hy = reduce_sum(multiply(h, y), axis=axis, keepdims=True)
    s = reduce_sum(multiply(g, y), axis=axis, keepdims=True)
    dy = subtract(multiply(h, subtract(g, s)), multiply(g, hy))
    return unbroadcast(dy, y, ans), unbroadcast(softmax_grad(y, h, axis), g, ans)


def _softmax_grad_shape(y, g, axis):
    return Spec(tuple(g.shape) if len(g.shape) >= len(y.shape) else tuple(y.shape), g.dtype)


def _softmax_grad_batch(arrays, batched, axis):
    return _softmax_grad_fwd(*arrays, axis=axis)  # axis < 0; NumPy aligns the trailing axes


_softmax_grad_batch.kind = "leading"
def _softmax_grad_tf(attrs, specs):
    """TensorFlow writes Softmax's gradient as these nodes (its _SoftmaxGrad)."""
    t = specs[1].dtype

    def write(add, ins):
        y, g = ins
        total = add("Sum", [f"{add('Mul', [g, y], T=t)}:z:0",
                            np.array([attrs["axis"]], np.int32)],
                    T=t, Tidx=dtypes.int32, keep_dims=True)
        diff = add("Sub", [g, f"{total}:output:0"], T=t)
        return [f"{add('Mul', [y, f'{diff}:z:0'], T=t)}:z:0"]
    return write


# a gradient-only op, as ReductionGrad: a saved training step writes TF's nodes for it
SOFTMAX_GRAD = declare(
    register("SoftmaxGrad", _softmax_grad_fwd, grad=_softmax_grad_grad,
             shape=_softmax_grad_shape, unsupported="onnx tflite tf_import"),
    batch=_softmax_grad_batch, tf=_softmax_grad_tf, tf_outputs={})


def softmax_grad(y, g, axis=-1):
    """Softmax's vector-Jacobian product from its output y and cotangent g (axis < 0)."""
    return execute(SOFTMAX_GRAD, (y, g), {"axis": axis})


# `axis` is negative, so the rules hold for cotangents with leading batch dimensions.
SOFTMAX = register(
    "Softmax", _softmax_fwd, shape=_same,
    grad=lambda g, ans, x, axis: softmax_grad(ans, g, axis),
    batch=axis_attr(_softmax_fwd), tf=_softmax_tf("Softmax"), tf_outputs="softmax",
    tf_import=lambda ins, a: softmax(ins[0]), onnx=_onnx_axis("Softmax"),
    tflite=_tflite_softmax, exact_shape=True)
LOG_SOFTMAX = register(
    "LogSoftmax", _log_softmax_fwd, shape=_same,
    grad=lambda g, ans, x, axis: subtract(
        g, multiply(exp(ans), reduce_sum(g, axis=axis, keepdims=True))),
    batch=axis_attr(_log_softmax_fwd), tf=_softmax_tf("LogSoftmax"), tf_outputs="logsoftmax",
    tf_import=lambda ins, a: log_softmax(ins[0]), onnx=_onnx_axis("LogSoftmax"),
    unsupported="tflite")


def _softmax_entry(op):
    fwd = op.forward

    def fast(logits, axis=None, name=None):
        if type(logits) is Tensor and logits._dtype.kind == "f" and \
                (axis is None or axis == -1) and logits._value.ndim:
            return wrap(fwd(logits._value, -1))
        return DECLINED

    @fast_path(fast)
    def fn(logits, axis=None, name=None):
        if axis is None:
            axis = -1
        x = check_kind(op.name, to_tensor(logits), FLOAT, "logits")
        nd = x._value.ndim
        if nd == 0:
            raise invalid(op.name, f"{op.name}: logits must have >= 1 dimension, got shape []; "
                          f"give the classes an axis (tf.reshape(x, [1]))")
        ax = single_axis(axis, nd, op.name) - nd
        return execute(op, (x,), {"axis": ax})
    fn.__name__ = op.name.lower()
    fn.__doc__ = f"`tf.nn.{fn.__name__}`, stable (subtracts the max along `axis`)."
    return fn


softmax = _softmax_entry(SOFTMAX)
log_softmax = _softmax_entry(LOG_SOFTMAX)


def _sparse_xent_fwd(logits, labels):
    _check_labels(labels, logits.shape[-1])
    if logits.shape[-1] == 0:
        return np.zeros(labels.shape, logits.dtype)
    s = logits - np.max(logits, axis=-1, keepdims=True)
    lse = np.log(np.sum(np.exp(s), axis=-1))
    picked = np.take_along_axis(s, labels[..., None].astype(np.intp), axis=-1)[..., 0]
    return lse - picked


def _onehot(labels, n, dtype):
    out = np.zeros(labels.shape + (n,), dtype)
    np.put_along_axis(out, labels[..., None].astype(np.intp), 1, axis=-1)
    return out


def _sparse_xent_grad(g, ans, logits, labels):
    from tensorlite.ops.gather_ops import one_hot  # noqa: PLC0415
    # an op, not a NumPy constant: a traced graph must recompute it for new labels
    onehot = one_hot(labels, logits._value.shape[-1], dtype=logits.dtype)
    return multiply(expand_dims(g, -1), subtract(softmax(logits), onehot)), None


SPARSE_XENT = register("SparseSoftmaxCrossEntropyWithLogits", _sparse_xent_fwd,
                       grad=_sparse_xent_grad,
                       shape=lambda logits, labels: Spec(labels.shape, logits.dtype),
                       batch=per_batch(_sparse_xent_fwd), unsupported="tf onnx tflite tf_import")


def _check_labels(labels, n):
    bad = (labels < 0) | (labels >= n)
    if np.any(bad):
        first = labels[bad].reshape(-1)[0]
        values = " ".join(str(v) for v in labels.reshape(-1)[:20])
        more = " ..." if labels.size > 20 else ""
        raise invalid("SparseSoftmaxCrossEntropyWithLogits",
                      f"Received a label value of {first} which is outside the valid range of "
                      f"[0, {n}).  Label values: {values}{more}; labels are class indices "
                      f"into the last axis of logits")


def sparse_softmax_cross_entropy_with_logits(labels, logits, name=None):
    """`tf.nn.sparse_softmax_cross_entropy_with_logits`: -log softmax(logits)[label], with
    integer class labels of shape logits.shape[:-1]."""
    op = "SparseSoftmaxCrossEntropyWithLogits"
    logits = check_kind(op, to_tensor(logits), FLOAT, "logits")
    labels = check_kind(op, to_tensor(labels), INTEGER, "labels")
    lshape, xshape = labels._value.shape, logits._value.shape
    if not xshape:
        raise ValueError(f"Logits cannot be scalars - received shape {xshape}.")
    if lshape != xshape[:-1]:
        raise ValueError(f"Shape mismatch: The shape of labels (received {lshape}) should "
                         f"equal the shape of logits except for the last dimension (received "
                         f"{xshape}).")
    _check_labels(labels._value, xshape[-1])
    return execute(SPARSE_XENT, (logits, labels), None)


def softmax_cross_entropy_with_logits(labels, logits, axis=-1, name=None):
    """`tf.nn.softmax_cross_entropy_with_logits`: -sum(labels * log_softmax(logits)) along
    `axis`; labels are probabilities (differentiable too)."""
    op = "SoftmaxCrossEntropyWithLogits"
    logits, labels = tensor_args(op, (logits, labels), FLOAT, ("logits", "labels"))
    try:
        np.broadcast_shapes(logits._value.shape, labels._value.shape)
    except ValueError:
        raise invalid(op, f"logits and labels must be broadcastable: logits_size="
                      f"{list(logits._value.shape)} labels_size={list(labels._value.shape)}; "
                      f"labels are one probability per class, the same shape as logits") \
            from None
    return negative(reduce_sum(multiply(labels, log_softmax(logits, axis)), axis=axis))


def _same_shape(op, labels, logits):
    if labels._value.shape != logits._value.shape:
        raise ValueError(f"{op}: logits and labels must have the same shape "
                         f"({logits._value.shape} vs {labels._value.shape})")


def sigmoid_cross_entropy_with_logits(labels=None, logits=None, name=None):
    """`tf.nn.sigmoid_cross_entropy_with_logits`: softplus(x) - x*z, stable for any x."""
    if labels is None or logits is None:
        raise ValueError("sigmoid_cross_entropy_with_logits needs both labels and logits")
    logits, labels = tensor_args("SigmoidCrossEntropyWithLogits", (logits, labels), FLOAT,
                                 ("logits", "labels"))
    _same_shape("sigmoid_cross_entropy_with_logits", labels, logits)
    return subtract(softplus(logits), multiply(logits, labels))


def weighted_cross_entropy_with_logits(labels, logits, pos_weight, name=None):
    """`tf.nn.weighted_cross_entropy_with_logits`: positives weighted by `pos_weight`."""
    logits, labels = tensor_args("WeightedCrossEntropyWithLogits", (logits, labels), FLOAT,
                                 ("logits", "labels"))
    _same_shape("weighted_cross_entropy_with_logits", labels, logits)
    q = to_tensor(pos_weight, logits._dtype)
    log_weight = add(multiply(subtract(q, 1), labels), 1)
    return add(multiply(subtract(1, labels), logits),
               multiply(log_weight, softplus(negative(logits))))


# -- dropout ----------------------------------------------------------------------------------
def _dropout_mask_fwd(shape, rate, seed, dtype):
    """keep / (1 - rate) where a uniform 32-bit word is at least rate * 2^32: raw words
    from the bit generator, compared as integers (the CIFAR CNN's [32, 15, 15, 32] mask:
    0.67 ms by float draws, about 0.3 ms so)."""
    rng = next_rng(seed, "Dropout")   # TF's seed rules; the one place dropout draws
    size = int(np.prod(shape, dtype=np.int64))
    words = rng.bit_generator.random_raw((size + 1) // 2).view(np.uint32)[:size]
    keep = words.reshape(shape) >= np.uint32(min(int(np.ceil(rate * 2.0 ** 32)), 2 ** 32 - 1))
    return keep * np.asarray(1.0 / (1.0 - rate), dtype.as_numpy_dtype)


# A stateful draw: an op (not a captured constant) so a traced graph draws afresh each run.
DROPOUT_MASK = register("DropoutMask", _dropout_mask_fwd, grad=NOT_DIFFERENTIABLE,
                        shape=lambda shape, rate, seed, dtype: Spec(tuple(shape), dtype),
                        effects="state", unsupported="tf onnx tflite batch tf_import")


def _rate_value(rate):
    if isinstance(rate, Tensor) or getattr(rate, "_is_variable", False):
        r = np.asarray(rate)
        if r.ndim:
            raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), "
                             f"got a tensor of shape {list(r.shape)}")
        rate = r.item()
    if not isinstance(rate, numbers.Real) or isinstance(rate, bool) or not 0 <= rate < 1:
        raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got "
                         f"{rate}")
    return float(rate)


def _noise_shape(noise_shape, xshape):
    if noise_shape is None:
        return xshape
    ns = int_list(noise_shape, "noise_shape")
    ns = tuple(d if d is not None else xshape[i] for i, d in enumerate(ns))
    try:
        if np.broadcast_shapes(ns, xshape) != xshape:
            raise ValueError
    except ValueError:
        raise invalid("Dropout", f"dropout: noise_shape {list(ns)} must broadcast to the "
                      f"shape of x {list(xshape)} (use 1 where the mask is shared)") from None
    return ns


def dropout(x, rate, noise_shape=None, seed=None, name=None):
    """`tf.nn.dropout`: zeroes each element with probability `rate` and scales the kept
    ones by 1 / (1 - rate)."""
    x = to_tensor(x)
    if not x._dtype.is_floating:
        raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. "
                         f"Got a {x._dtype.name} tensor instead.")
    rate = _rate_value(rate)
    if rate == 0:
        return x
    shape = _noise_shape(noise_shape, x._value.shape)
    mask = execute(DROPOUT_MASK, (), {"shape": shape, "rate": rate,
                                      "seed": None if seed is None else int(seed),
                                      "dtype": x._dtype})
    return multiply(x, mask)


# -- losses and normalisation -----------------------------------------------------------------
L2_LOSS = register(
    "L2Loss", lambda x: np.asarray(np.vdot(x.ravel(), x.ravel()) * 0.5, dtype=x.dtype),
    shape=lambda x: Spec((), x.dtype),
    grad=lambda g, ans, x: multiply(reshape(g, g._value.shape + (1,) * x._value.ndim), x),
    unsupported="tf onnx tflite batch tf_import")


def l2_loss(t, name=None):
    """`tf.nn.l2_loss`: sum(t ** 2) / 2."""
    return execute(L2_LOSS, (check_kind("L2Loss", to_tensor(t), FLOAT, "t"),), None)


def bias_add(value, bias, data_format=None, name=None):
    """`tf.nn.bias_add`: adds a 1-D bias along the channel axis (last, or 1 for NC...)."""
    op = "BiasAdd"
    value, bias = tensor_args(op, (value, bias), NUMERIC, ("value", "bias"))
    vs, bs = value._value.shape, bias._value.shape
    if len(bs) != 1:
        raise invalid(op, f"Biases must be 1D: {list(bs)}")
    if len(vs) < 2:
        raise invalid(op, f"Input tensor must be at least 2D: {list(vs)}")
    channels_first = data_format is not None and data_format.startswith("NC")
    if data_format is not None and not (channels_first or data_format.startswith("N")):
        raise ValueError(f"bias_add: data_format must be None, 'N...C' or 'NC...', got "
                         f"{data_format!r}")
    c = vs[1] if channels_first else vs[-1]
    if c != bs[0]:
        where = "channel" if channels_first else "last"
        raise invalid(op, f"Must provide as many biases as the {where} dimension of the input "
                      f"tensor: {list(bs)} vs. {list(vs)}")
    if channels_first:
        bias = reshape(bias, (c,) + (1,) * (len(vs) - 2))
    return add(value, bias)


def moments(x, axes, shift=None, keepdims=False, name=None):
    """`tf.nn.moments`: (mean, variance) over `axes` (float16 is computed in float32).
    Unlike TF, the mean is not gradient-stopped inside the variance, so second derivatives
    are exact (first derivatives are identical)."""
    x = check_kind("Moments", to_tensor(x), FLOAT, "x")
    axes = norm_axis(axes, x._value.ndim, "Moments")
    y = cast(x, dtypes.float32) if x._dtype in (dtypes.float16, dtypes.bfloat16) else x
    mean = reduce_mean(y, axis=axes, keepdims=True)
    variance = reduce_mean(squared_difference(y, mean), axis=axes, keepdims=keepdims)
    if not keepdims:
        mean = reshape(mean, variance._value.shape)
    return cast(mean, x._dtype), cast(variance, x._dtype)


def batch_normalization(x, mean, variance, offset, scale, variance_epsilon, name=None):
    """`tf.nn.batch_normalization`: scale * (x - mean) / sqrt(variance + eps) + offset."""
    x = to_tensor(x)
    inv = rsqrt(add(to_tensor(variance, x._dtype), variance_epsilon))
    if scale is not None:
        inv = multiply(inv, to_tensor(scale, x._dtype))
    shift = negative(multiply(to_tensor(mean, x._dtype), inv))
    if offset is not None:
        shift = add(shift, to_tensor(offset, x._dtype))
    return add(multiply(x, inv), shift)


def l2_normalize(x, axis=None, epsilon=1e-12, name=None, dim=None):
    """`tf.math.l2_normalize`: x / sqrt(max(sum(x ** 2, axis), epsilon))."""
    x = check_kind("L2Normalize", to_tensor(x), FLOAT, "x")
    axis = dim if axis is None else axis
    sq = reduce_sum(square(x), axis=axis, keepdims=True)
    return multiply(x, rsqrt(maximum(sq, epsilon)))


def compute_average_loss(per_example_loss, sample_weight=None, global_batch_size=None):
    """`tf.nn.compute_average_loss`: sum of (weighted) losses / global batch size."""
    loss = to_tensor(per_example_loss)
    if sample_weight is not None:
        loss = multiply(loss, to_tensor(sample_weight, loss._dtype))
    if global_batch_size is None:
        global_batch_size = loss._value.shape[0] if loss._value.ndim else 1
    return divide(reduce_sum(loss), float(global_batch_size))


def scale_regularization_loss(regularization_loss):
    """`tf.nn.scale_regularization_loss`: the summed losses (one replica)."""
    if isinstance(regularization_loss, (list, tuple)):
        from tensorlite.ops.math_ops import add_n  # noqa: PLC0415
        return add_n(list(regularization_loss))
    return to_tensor(regularization_loss)


def zero_fraction(value, name=None):
    """`tf.math.zero_fraction`: the fraction of elements equal to zero (float32)."""
    v = to_tensor(value)
    return reduce_mean(cast(equal(v, 0), dtypes.float32))


def embedding_lookup(params, ids, max_norm=None, name=None):
    """`tf.nn.embedding_lookup`: rows of `params` (a tensor, or a list of shards split by
    TF's "div" strategy) at `ids`; rows longer than `max_norm` are scaled down to it."""
    from tensorlite.ops.gather_ops import gather  # noqa: PLC0415 - keeps imports light
    if isinstance(params, (list, tuple)):
        params = concat(list(params), axis=0) if len(params) > 1 else params[0]
    out = gather(params, ids)
    if max_norm is not None:
        norm = reduce_sum(square(out), axis=-1, keepdims=True)
        out = multiply(out, rsqrt(maximum(divide(norm, float(max_norm) ** 2), 1.0)))
    return out


# -- top-k ------------------------------------------------------------------------------------
TopKV2 = collections.namedtuple("TopKV2", ["values", "indices"])


def top_k(input, k=1, sorted=True, index_type=dtypes.int32, name=None):  # noqa: A002
    """`tf.math.top_k` (`tf.nn.top_k`): the k largest entries along the last axis and their
    indices (ties: the lower index first); values are differentiable."""
    x = check_kind("TopKV2", to_tensor(input), REAL, "input")
    if x._value.ndim == 0:
        raise invalid("TopKV2", "top_k: input must be >= 1-D, got shape []")
    if isinstance(k, Tensor):
        k = int(np.asarray(k))
    if not isinstance(k, (int, np.integer)) or k < 0:
        raise invalid("TopKV2", f"top_k: k must be a non-negative int, got {k!r}")
    values, indices = top_k_internal(x, int(k), sorted=sorted)
    if dtypes.as_dtype(index_type) is not dtypes.int32:
        indices = cast(indices, index_type)
    return TopKV2(values, indices)


def _in_top_k_fwd(predictions, targets, k):
    n = predictions.shape[-1]
    ok = (targets >= 0) & (targets < n)
    safe = np.where(ok, targets, 0).astype(np.intp)
    target_vals = np.take_along_axis(predictions, safe[:, None], axis=1)
    ok &= np.isfinite(target_vals[:, 0])
    # A tie at the boundary counts as inside, as TF's kernel does.
    above = np.sum(predictions > target_vals, axis=1)
    return ok & (above < k)


IN_TOP_K = register(
    "InTopKV2", _in_top_k_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda p, t, k: Spec(t.shape, dtypes.bool), unsupported="tf onnx tflite batch tf_import")


def in_top_k(targets, predictions, k, name=None):
    """`tf.math.in_top_k`: whether each target class is among the k highest predictions."""
    op = "InTopKV2"
    p = check_kind(op, to_tensor(predictions), FLOAT, "predictions")
    t = check_kind(op, to_tensor(targets), INTEGER, "targets")
    if p._value.ndim != 2 or t._value.shape != p._value.shape[:1]:
        raise invalid(op, f"in_top_k: predictions must be [batch, classes] and targets [batch];"
                      f" got {list(p._value.shape)} and {list(t._value.shape)}")
    return execute(IN_TOP_K, (p, t), {"k": int(np.asarray(k))})

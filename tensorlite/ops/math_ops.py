"""Math ops: elementwise arithmetic, comparisons and logic, reductions, matmul and friends.

Each op is registered once with its forward (NumPy), gradient (tensorlite ops, accepting
cotangents with leading batch dimensions) and shape rule.
"""
import numpy as np

from tensorlite.framework import blas_threads, dtypes, errors
from tensorlite.framework.dispatch import OBSERVERS, execute, invalid
from tensorlite.framework.registry import (NOT_DIFFERENTIABLE, Spec, declare, get as get_op,
                                           input_needs_grad, register)
from tensorlite.ops.batching import elementwise, leading, reduction
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import control_flow_ops, einsum_plan
from tensorlite.ops.array_ops import broadcast_to, reshape, transpose
from tensorlite.ops.common import (ANY, COMPOSITES, DECLINED, FLOAT, FLOATC, NUMERIC, REAL,
                                   batch_dims, binary, cached_axes, check_kind, composite_aware,
                                   fast_path, norm_axis, single_axis, tensor_args, to_tensor,
                                   unary, unbroadcast)

__all__ = [
    "add", "subtract", "multiply", "divide", "truediv", "floordiv", "pow", "maximum", "minimum",
    "squared_difference", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "negative",
    "abs", "sign", "square", "sqrt", "rsqrt", "exp", "log", "sin", "cos", "tan", "tanh",
    "sigmoid", "reciprocal", "floor", "ceil", "round", "reduce_sum", "reduce_mean",
    "reduce_max", "reduce_min", "reduce_prod", "reduce_any", "reduce_all",
    "reduce_logsumexp", "argmax", "argmin", "matmul", "tensordot", "einsum", "add_n", "cast",
    "clip_by_value", "clip_by_global_norm", "cumsum", "cumprod", "sort", "argsort", "where",
    "realdiv", "truncatediv", "floormod", "mod", "exp", "expm1", "log1p", "erf",
    "is_nan", "is_inf", "is_finite", "conj", "real", "imag", "global_norm", "atan2",
    "asin", "acos", "atan", "sinh", "cosh", "top_k_internal", "count_nonzero",
]


def _ub2(gx, gy, x, y, ans):
    return unbroadcast(gx, x, ans), unbroadcast(gy, y, ans)


def broadcast_spec(x, y):
    """The shape two specs broadcast to (None where unknown); ValueError for shapes that
    cannot broadcast (a shape rule's static check, shared by the binary ops' rules)."""
    a, b = x.shape, y.shape
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (p, q) in enumerate(zip(a, b)):
        if p == 1:
            out.append(q)
        elif q == 1 or q == p:
            out.append(p)
        elif p is None or q is None:
            out.append(p if q is None else q)
        else:
            raise ValueError(f"Incompatible shapes: {list(x.shape)} vs. {list(y.shape)}")
    return tuple(out)


def _bshape(x, y):
    return Spec(broadcast_spec(x, y), x.dtype)


def _bshape_bool(x, y):
    return Spec(broadcast_spec(x, y), dtypes.bool)


def _ushape(x):
    return x


def _ushape_bool(x):
    return Spec(x.shape, dtypes.bool)


def _conjugating(grad):
    """TensorFlow's gradient convention for complex inputs. The rules here are written as
    g * f'(z), which is right for real dtypes; for complex ones TF passes g * conj(f'(z))
    (so that for a real loss L of z = x + iy the gradient is dL/dx + i dL/dy), which for a
    holomorphic f is conj(rule(conj(g)))."""
    if not callable(grad):
        return grad

    def rule(g, ans, *xs, **attrs):
        if not ans._dtype.is_complex and not xs[0]._dtype.is_complex:
            return grad(g, ans, *xs, **attrs)
        out = grad(conj(g), ans, *xs, **attrs)
        if isinstance(out, (tuple, list)):
            return tuple(_conj_if_complex(o) for o in out)
        return _conj_if_complex(out)
    return rule


def _conj_if_complex(t):
    return conj(t) if t is not None and t._dtype.is_complex else t


def _defbinary(name, fwd, grad, kinds=NUMERIC, shape=_bshape, **rules):
    # tf/tf_import "plain": TensorFlow's op of the same name, with no attributes but T;
    # `rules`: the op's other rules and properties (registry.PROPERTIES)
    op = register(name, fwd, grad=_conjugating(grad), shape=shape, tf=name, tf_outputs="z",
                  batch=elementwise(fwd), **{"tf_import": "plain", **rules})
    return op, binary(op, kinds)


def _defunary(name, fwd, grad, kinds=FLOATC, shape=_ushape, **rules):
    op = register(name, fwd, grad=_conjugating(grad), shape=shape, tf=name, tf_outputs="y",
                  batch=elementwise(fwd), **{"tf_import": "plain", **rules})
    return op, unary(op, kinds)


# -- consumer rules, declared at each op's registration below ---------------------------------
# export rules: ONNX (the rule's form: tensorlite/onnx/__init__.py)
def _onnx_square(ctx, node):
    x, = ctx.inputs(node)
    return ctx.emit("Mul", [x, x])


def _onnx_sqdiff(ctx, node):
    d = ctx.emit("Sub", ctx.inputs(node))
    return ctx.emit("Mul", [d, d])


def _onnx_not_equal(ctx, node):
    return ctx.emit("Not", [ctx.emit("Equal", ctx.inputs(node))])


def _onnx_cast(ctx, node):
    return ctx.emit("Cast", ctx.inputs(node), to=ctx.onnx_dtype(node.attrs["dtype"]))


def _onnx_reduce(onnx_op):
    def rule(ctx, node):
        return ctx.reduce(onnx_op, ctx.inputs(node)[0], node.attrs["axis"],
                          node.attrs["keepdims"])
    return rule


def _onnx_arg(onnx_op):
    def rule(ctx, node):
        i = ctx.emit(onnx_op, ctx.inputs(node), axis=int(node.attrs["axis"]), keepdims=0)
        return ctx.emit("Cast", [i], to=ctx.onnx_dtype(node.attrs["output_type"]))
    return rule


def _onnx_matmul(ctx, node):
    a, b = ctx.inputs(node)
    for i, flag in ((0, "transpose_a"), (1, "transpose_b")):
        if node.attrs[flag]:
            rank = len(ctx.shape(node.inputs[i]))
            perm = list(range(rank - 2)) + [rank - 1, rank - 2]
            t = ctx.transpose([a, b][i], perm)
            a, b = (t, b) if i == 0 else (a, t)
    return ctx.emit("MatMul", [a, b])


# -- export rules: TFLite (the rule's form: tensorlite/lite/convert/converter.py) -------------
def _tflite_binary(builtin, options, fusable=True):
    def rule(ctx, node):
        if builtin == "ADD" and ctx.fuse_bias(node):
            return
        out = ctx.output(node)
        ctx.op(builtin, [ctx.tensor(s) for s in node.inputs], [out],
               options=(options, {}) if options else None,
               fuse=(None, "fused_activation_function") if fusable else None)
    return rule


def _tflite_unary(builtin):  # TFLite's kernels fuse only the ReLU family
    def rule(ctx, node):
        ctx.op(builtin, [ctx.tensor(node.inputs[0])], [ctx.output(node)])
    return rule


def _tflite_matmul(ctx, node):
    a, b = node.inputs
    w = ctx.value(b)
    if w is not None and w.ndim == 2 and len(ctx.shape(a)) == 2 and \
            not node.attrs["transpose_a"]:
        weights = w if node.attrs["transpose_b"] else w.T  # FULLY_CONNECTED: [out, in]
        ctx.op("FULLY_CONNECTED", [ctx.tensor(a), ctx.const(np.ascontiguousarray(weights),
                                                            "weights"), -1],
               [ctx.output(node)], options=("FullyConnectedOptions", {}),
               fuse=(2, "fused_activation_function"))
        return
    ctx.op("BATCH_MATMUL", [ctx.tensor(a), ctx.tensor(b)], [ctx.output(node)],
           options=("BatchMatMulOptions", {"adj_x": bool(node.attrs["transpose_a"]),
                                           "adj_y": bool(node.attrs["transpose_b"])}))


def _tflite_reduce(builtin):
    def rule(ctx, node):
        x = node.inputs[0]
        axes = node.attrs["axis"]
        axes = range(len(ctx.shape(x))) if axes is None else axes
        ctx.op(builtin, [ctx.tensor(x), ctx.const(np.asarray(list(axes), np.int32), "axes")],
               [ctx.output(node)],
               options=("ReducerOptions", {"keep_dims": bool(node.attrs["keepdims"])}))
    return rule


# -- import rules: TensorFlow's ops as SavedModel graphs spell them (rule form:
# saved_model/function_runner.py); the reduction axes and the cumulative axis arrive as input
# tensors
def _import_reduce(public):
    """The import rule calling public function `public` (a name: it is defined by the same
    statement that registers the op)."""
    return lambda ins, a: globals()[public](
        ins[0], axis=[int(i) for i in np.ravel(ins[1].numpy())],
        keepdims=a.get("keep_dims", False))


def _import_extreme(public, ufunc, lowest):
    """TensorFlow's Max/Min of an empty set is the dtype's lowest/highest value (its graphs
    for ragged row partitions rely on it), where reduce_max refuses."""
    reduce = _import_reduce(public)

    def rule(ins, a):
        x = ins[0]._value
        if x.size:
            return reduce(ins, a)
        info = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
        axes = tuple(int(i) % max(x.ndim, 1) for i in np.ravel(ins[1].numpy()))
        edge = -np.inf if x.dtype.kind == "f" and lowest else np.inf if x.dtype.kind == "f" \
            else info.min if lowest else info.max
        return wrap(ufunc.reduce(x, axis=axes, keepdims=a.get("keep_dims", False),
                                 initial=edge))
    return rule


def _import_cumulative(public):
    return lambda ins, a: globals()[public](ins[0], int(ins[1].numpy()),
                                            exclusive=a.get("exclusive", False),
                                            reverse=a.get("reverse", False))


def _import_select(ins, attrs):
    """TF1's Select: a vector condition picks whole rows of higher-rank operands."""
    c, x, y = ins
    if c.shape.rank == 1 and x.shape.rank > 1:
        c = reshape(c, [-1] + [1] * (x.shape.rank - 1))
    return where(c, x, y)


# -- arithmetic -------------------------------------------------------------------------------
def _import_bias_add(ins, attrs):
    """TensorFlow's BiasAdd is an AddV2 here (bias_add broadcasts over the channel axis)."""
    from tensorlite.ops.nn_ops import bias_add  # noqa: PLC0415 - nn_ops imports this module
    return bias_add(ins[0], ins[1], data_format=attrs.get("data_format"))


ADD, add = _defbinary(
    "AddV2", np.add, lambda g, ans, x, y: _ub2(g, g, x, y, ans), ANY,
    tf_import={"AddV2": lambda ins, a: add(ins[0], ins[1]),
               "Add": lambda ins, a: add(ins[0], ins[1]),  # TF1's Add (strings concatenate)
               "BiasAdd": _import_bias_add},
    jit=("ufunc", "add", "swap"), numexpr="({0} + {1})", fuse="add({0}, {1}{out})",
    commutative=True, simplify=("neutral", 0, (0, 1), "+"),
    tflite=_tflite_binary("ADD", "AddOptions"),
    onnx="Add", exact_shape=True)
SUB, subtract = _defbinary(
    "Sub", np.subtract, lambda g, ans, x, y: _ub2(g, negative(g), x, y, ans),
    jit=("ufunc", "subtract"), numexpr="({0} - {1})", fuse="subtract({0}, {1}{out})",
    simplify=("neutral", 0, (1,), "-"), tflite=_tflite_binary("SUB", "SubOptions"), onnx="Sub",
    exact_shape=True)
MUL, multiply = _defbinary(
    "Mul", np.multiply, lambda g, ans, x, y: _ub2(multiply(g, y), multiply(g, x), x, y, ans),
    jit=("ufunc", "multiply", "swap"), numexpr="({0} * {1})", fuse="multiply({0}, {1}{out})",
    commutative=True, simplify=("neutral", 1, (0, 1), "*"),
    tflite=_tflite_binary("MUL", "MulOptions"), onnx="Mul", exact_shape=True)


def _div_fwd(x, y):
    if x.dtype.kind in "iu":
        raise invalid("RealDiv", "RealDiv is for floating dtypes; use tf.math.truediv")
    return np.true_divide(x, y)


REALDIV, realdiv = _defbinary(
    "RealDiv", _div_fwd,
    lambda g, ans, x, y: _ub2(divide(g, y), negative(multiply(g, divide(ans, y))), x, y, ans),
    FLOATC, jit=("ufunc", "true_divide", "floats"), numexpr="({0} / {1})",
    fuse=("true_divide({0}, {1}{out})", "floats"), simplify=("neutral", 1, (1,), "/"),
    tflite=_tflite_binary("DIV", "DivOptions"), onnx="Div", exact_shape=True)


def _truediv_fast(x, y, name=None):
    return realdiv(x, y) if type(x) is Tensor and x._dtype.kind in "fc" else DECLINED


@fast_path(_truediv_fast)
def truediv(x, y, name=None):
    """`tf.math.truediv`: integers are cast to float (int8/16 -> float32, else float64)."""
    x, y = tensor_args("truediv", (x, y), NUMERIC)
    if x._dtype.is_integer:
        ft = dtypes.float32 if x._dtype.size <= 2 else dtypes.float64
        x, y = cast(x, ft), cast(y, ft)
    return realdiv(x, y)


divide = truediv


def _floordiv_fwd(x, y):
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise invalid("FloorDiv", "Integer division by zero")
    with np.errstate(divide="ignore", invalid="ignore"):  # floats: inf/nan as TF, silently
        return np.floor_divide(x, y)


FLOORDIV, floordiv = _defbinary(
    "FloorDiv", _floordiv_fwd, NOT_DIFFERENTIABLE, REAL, unsupported="onnx tflite")
floor_div = floordiv


def _mod_fwd(x, y):
    if x.dtype.kind in "iu" and np.any(y == 0):
        raise invalid("FloorMod", "Integer division by zero")
    return np.mod(x, y)


FLOORMOD, floormod = _defbinary(
    "FloorMod", _mod_fwd,
    lambda g, ans, x, y: _ub2(g, negative(multiply(g, floor(divide(x, y)))), x, y, ans), REAL,
    unsupported="onnx tflite")
mod = floormod
TRUNCDIV, truncatediv = _defbinary(
    "TruncateDiv", lambda x, y: np.trunc(np.true_divide(x, y)).astype(x.dtype),
    NOT_DIFFERENTIABLE, REAL, unsupported="onnx tflite")


def _pow_grad(g, ans, x, y):
    gx = multiply(g, multiply(y, pow(x, subtract(y, 1))))
    if not (y._dtype.is_floating or y._dtype.is_complex):
        return unbroadcast(gx, x, ans), None
    safe_log = where(greater(x, 0), log(where(greater(x, 0), x, ones_like_t(x))),
                     zeros_like_t(x))
    return _ub2(gx, multiply(g, multiply(ans, safe_log)), x, y, ans)


def _pow_fwd(x, y):
    if x.dtype.kind in "iu" and np.any(np.asarray(y) < 0):
        raise invalid("Pow", "Integers to negative integer powers are not allowed")
    return np.power(x, y)


POW, pow = _defbinary(
    "Pow", _pow_fwd, _pow_grad, jit=("ufunc", "power", "floats"), numexpr="({0} ** {1})",
    fuse="call", unsupported="tflite", onnx="Pow")  # noqa: A001 - TF's name


def _minmax_grad(pick_x):
    def grad(g, ans, x, y):
        mask = pick_x(x, y)
        zero = zeros_like_t(g)
        return _ub2(where(mask, g, zero), where(mask, zero, g), x, y, ans)
    return grad


MAXIMUM, maximum = _defbinary(
    "Maximum", np.maximum, _minmax_grad(lambda x, y: greater_equal(x, y)), REAL,
    jit=("ufunc", "maximum", "fill"), numexpr="where({1} != {1}, {1}, where({0} < {1}, {1}, {0}))",
    fuse="maximum({0}, {1}{out})", commutative=True,
    tflite=_tflite_binary("MAXIMUM", None, fusable=False), onnx="Max", exact_shape=True)
MINIMUM, minimum = _defbinary(
    "Minimum", np.minimum, _minmax_grad(lambda x, y: less_equal(x, y)), REAL,
    jit=("ufunc", "minimum", "fill"), numexpr="where({1} != {1}, {1}, where({1} < {0}, {1}, {0}))",
    fuse="minimum({0}, {1}{out})", commutative=True,
    tflite=_tflite_binary("MINIMUM", None, fusable=False), onnx="Min", exact_shape=True)
SQDIFF, squared_difference = _defbinary(
    "SquaredDifference", lambda x, y: np.square(x - y),
    lambda g, ans, x, y: (lambda d: _ub2(d, negative(d), x, y, ans))(
        multiply(g, multiply(subtract(x, y), 2))),
    jit=("chain", "subtract", ("{0}", "{1}"), ("np.square({t}{out})",)),
    numexpr="(({0} - {1}) * ({0} - {1}))", fuse="call", commutative=True,
    tflite=_tflite_binary("SQUARED_DIFFERENCE", None, fusable=False), onnx=_onnx_sqdiff,
    exact_shape=True)
ATAN2, atan2 = _defbinary(
    "Atan2", np.arctan2,
    lambda g, ans, x, y: (lambda den: _ub2(multiply(g, divide(y, den)),
                                           negative(multiply(g, divide(x, den))), x, y, ans))(
        add(square(x), square(y))), FLOAT, jit=("ufunc", "arctan2"), unsupported="onnx tflite")

# -- comparisons and logic --------------------------------------------------------------------
EQUAL, equal = _defbinary(
    "Equal", np.equal, NOT_DIFFERENTIABLE, ANY, _bshape_bool, jit=("ufunc", "equal"),
    numexpr="({0} == {1})", commutative=True, unsupported="tflite", onnx="Equal")
NOT_EQUAL, not_equal = _defbinary(
    "NotEqual", np.not_equal, NOT_DIFFERENTIABLE, ANY, _bshape_bool, jit=("ufunc", "not_equal"),
    numexpr="({0} != {1})", commutative=True, unsupported="tflite", onnx=_onnx_not_equal)
LESS, less = _defbinary(
    "Less", np.less, NOT_DIFFERENTIABLE, REAL, _bshape_bool, jit=("ufunc", "less"),
    numexpr="({0} < {1})", unsupported="tflite", onnx="Less")
LESS_EQUAL, less_equal = _defbinary(
    "LessEqual", np.less_equal, NOT_DIFFERENTIABLE, REAL, _bshape_bool,
    jit=("ufunc", "less_equal"), numexpr="({0} <= {1})", unsupported="tflite", onnx="LessOrEqual")
GREATER, greater = _defbinary(
    "Greater", np.greater, NOT_DIFFERENTIABLE, REAL, _bshape_bool, jit=("ufunc", "greater"),
    numexpr="({0} > {1})", unsupported="tflite", onnx="Greater")
GREATER_EQUAL, greater_equal = _defbinary(
    "GreaterEqual", np.greater_equal, NOT_DIFFERENTIABLE, REAL, _bshape_bool,
    jit=("ufunc", "greater_equal"), numexpr="({0} >= {1})", unsupported="tflite",
    onnx="GreaterOrEqual")
LAND, logical_and = _defbinary(
    "LogicalAnd", np.logical_and, NOT_DIFFERENTIABLE, "b", jit=("ufunc", "logical_and"),
    commutative=True, unsupported="tflite", onnx="And")
LOR, logical_or = _defbinary(
    "LogicalOr", np.logical_or, NOT_DIFFERENTIABLE, "b", jit=("ufunc", "logical_or"),
    commutative=True, unsupported="tflite", onnx="Or")
LXOR, logical_xor = _defbinary(
    "LogicalXor", np.logical_xor, NOT_DIFFERENTIABLE, "b", jit=("ufunc", "logical_xor"),
    commutative=True, unsupported="tflite", onnx="Xor")
LNOT, logical_not = _defunary(
    "LogicalNot", np.logical_not, NOT_DIFFERENTIABLE, "b", jit=("ufunc", "logical_not"),
    unsupported="tflite", onnx="Not")

BAND, bitwise_and = _defbinary(
    "BitwiseAnd", np.bitwise_and, NOT_DIFFERENTIABLE, "iu", jit=("ufunc", "bitwise_and"),
    commutative=True, unsupported="onnx tflite")
BOR, bitwise_or = _defbinary(
    "BitwiseOr", np.bitwise_or, NOT_DIFFERENTIABLE, "iu", jit=("ufunc", "bitwise_or"),
    commutative=True, unsupported="onnx tflite")
BXOR, bitwise_xor = _defbinary(
    "BitwiseXor", np.bitwise_xor, NOT_DIFFERENTIABLE, "iu", jit=("ufunc", "bitwise_xor"),
    commutative=True, unsupported="onnx tflite")
BINV, invert = _defunary(
    "Invert", np.invert, NOT_DIFFERENTIABLE, "iu", jit=("ufunc", "invert"),
    unsupported="onnx tflite")
LSHIFT, left_shift = _defbinary(
    "LeftShift", np.left_shift, NOT_DIFFERENTIABLE, "iu", unsupported="onnx tflite")
RSHIFT, right_shift = _defbinary(
    "RightShift", np.right_shift, NOT_DIFFERENTIABLE, "iu", unsupported="onnx tflite")


def _logical_or_bitwise(logical, bitwise):
    """Python's & | ^ on tensors: logical for bool, bitwise for integers (as TF)."""
    def fn(x, y):
        t = x if isinstance(x, Tensor) else y
        return bitwise(x, y) if getattr(t, "dtype", dtypes.bool).is_integer else logical(x, y)
    return fn


and_operator = _logical_or_bitwise(logical_and, bitwise_and)
or_operator = _logical_or_bitwise(logical_or, bitwise_or)
xor_operator = _logical_or_bitwise(logical_xor, bitwise_xor)


def invert_operator(x):
    return invert(x) if x.dtype.is_integer else logical_not(x)


# -- unary ------------------------------------------------------------------------------------
NEG, negative = _defunary(
    "Neg", np.negative, lambda g, ans, x: negative(g), NUMERIC, jit=("ufunc", "negative"),
    numexpr="(-{0})", fuse="negative({0}{out})", simplify="involution",
    tflite=_tflite_unary("NEG"), onnx="Neg", exact_shape=True, zero_preserving=True)
ABS, _real_abs = _defunary(
    "Abs", np.abs, lambda g, ans, x: multiply(g, sign(x)), REAL, jit=("ufunc", "absolute"),
    numexpr="abs({0})", fuse="abs({0}{out})", tflite=_tflite_unary("ABS"), onnx="Abs",
    zero_preserving=True)


def abs(x, name=None):  # noqa: A001 - TF's name
    """`tf.abs`: |x| elementwise; for complex x the (real) magnitude, TF's ComplexAbs."""
    if type(x) is Tensor and x._dtype.kind != "c":  # the common case, first
        return _real_abs(x)
    if _is_complex_value(x):
        from tensorlite.ops import complex_ops  # noqa: PLC0415 - complex_ops imports this module
        return complex_ops.complex_abs(x)
    return _real_abs(x)


def _is_complex_value(x):
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, dtypes.DType):
        return dtype.is_complex
    if isinstance(dtype, np.dtype):
        return dtype.kind == "c"
    if isinstance(x, (complex, list, tuple)):
        try:
            return np.array(x).dtype.kind == "c"
        except (TypeError, ValueError):  # ragged nests: the real path reports them
            return False
    return False


SIGN, sign = _defunary(
    "Sign", np.sign, lambda g, ans, x: zeros_like_t(g), REAL, jit=("ufunc", "sign"),
    fuse="sign({0}{out})", unsupported="tflite", onnx="Sign", zero_preserving=True)
SQUARE, square = _defunary(
    "Square", np.square, lambda g, ans, x: multiply(g, multiply(x, 2)), NUMERIC,
    jit=("ufunc", "square"), numexpr="({0} * {0})", fuse="square({0}{out})",
    tflite=_tflite_unary("SQUARE"), onnx=_onnx_square, exact_shape=True, zero_preserving=True)
SQRT, sqrt = _defunary(
    "Sqrt", np.sqrt, lambda g, ans, x: divide(g, multiply(ans, 2)), jit=("ufunc", "sqrt"),
    numexpr="sqrt({0})", fuse="sqrt({0}{out})", tflite=_tflite_unary("SQRT"), onnx="Sqrt",
    exact_shape=True, zero_preserving=True)
RSQRT, rsqrt = _defunary(
    "Rsqrt", lambda x: 1 / np.sqrt(x), lambda g, ans, x: multiply(g, multiply(pow(ans, 3), -0.5)),
    jit=("chain", "sqrt", ("{0}",), ("np.true_divide(1, {t}{out})",), "floats"), fuse="call",
    tflite=_tflite_unary("RSQRT"),
    onnx=lambda ctx, node: ctx.emit("Reciprocal", [ctx.emit("Sqrt",
                                                             ctx.inputs(node))]), exact_shape=True)
EXP, exp = _defunary(
    "Exp", np.exp, lambda g, ans, x: multiply(g, ans), jit=("ufunc", "exp"), numexpr="exp({0})",
    fuse="exp({0}{out})", tflite=_tflite_unary("EXP"), onnx="Exp", exact_shape=True)
EXPM1, expm1 = _defunary(
    "Expm1", np.expm1, lambda g, ans, x: multiply(g, add(ans, 1)), jit=("ufunc", "expm1"),
    numexpr="expm1({0})", fuse="expm1({0}{out})", unsupported="onnx tflite")
LOG, log = _defunary(
    "Log", np.log, lambda g, ans, x: divide(g, x), jit=("ufunc", "log"), numexpr="log({0})",
    fuse="log({0}{out})", tflite=_tflite_unary("LOG"), onnx="Log")
LOG1P, log1p = _defunary(
    "Log1p", np.log1p, lambda g, ans, x: divide(g, add(x, 1)), jit=("ufunc", "log1p"),
    numexpr="log1p({0})", fuse="log1p({0}{out})", unsupported="onnx tflite")
SIN, sin = _defunary(
    "Sin", np.sin, lambda g, ans, x: multiply(g, cos(x)), jit=("ufunc", "sin"), numexpr="sin({0})",
    fuse="sin({0}{out})", tflite=_tflite_unary("SIN"), onnx="Sin", zero_preserving=True)
COS, cos = _defunary(
    "Cos", np.cos, lambda g, ans, x: negative(multiply(g, sin(x))), jit=("ufunc", "cos"),
    numexpr="cos({0})", fuse="cos({0}{out})", tflite=_tflite_unary("COS"), onnx="Cos")
TAN, tan = _defunary(
    "Tan", np.tan, lambda g, ans, x: multiply(g, add(square(ans), 1)), jit=("ufunc", "tan"),
    numexpr="tan({0})", unsupported="tflite", onnx="Tan", zero_preserving=True)
ASIN, asin = _defunary(
    "Asin", np.arcsin, lambda g, ans, x: multiply(g, rsqrt(subtract(1, square(x)))), FLOAT,
    jit=("ufunc", "arcsin"), numexpr="arcsin({0})", unsupported="tflite", onnx="Asin",
    zero_preserving=True)
ACOS, acos = _defunary("Acos", np.arccos,
                       lambda g, ans, x: negative(multiply(g, rsqrt(subtract(1, square(x))))),
                       FLOAT, jit=("ufunc", "arccos"), numexpr="arccos({0})", unsupported="tflite",
    onnx="Acos")
ATAN, atan = _defunary(
    "Atan", np.arctan, lambda g, ans, x: divide(g, add(square(x), 1)), FLOAT,
    jit=("ufunc", "arctan"), numexpr="arctan({0})", unsupported="tflite", onnx="Atan",
    zero_preserving=True)
SINH, sinh = _defunary(
    "Sinh", np.sinh, lambda g, ans, x: multiply(g, cosh(x)), jit=("ufunc", "sinh"),
    numexpr="sinh({0})", unsupported="tflite", onnx="Sinh")
COSH, cosh = _defunary(
    "Cosh", np.cosh, lambda g, ans, x: multiply(g, sinh(x)), jit=("ufunc", "cosh"),
    numexpr="cosh({0})", unsupported="tflite", onnx="Cosh")
TANH, tanh = _defunary(
    "Tanh", np.tanh, lambda g, ans, x: multiply(g, subtract(1, square(ans))),
    jit=("ufunc", "tanh"), numexpr="tanh({0})", fuse="tanh({0}{out})",
    tflite=_tflite_unary("TANH"), onnx="Tanh", exact_shape=True, zero_preserving=True)


def _sigmoid_fwd(x):
    # 0.5 * (1 + tanh(x / 2)) never overflows (unlike 1 / (1 + exp(-x))) and is ~50x
    # faster than exp(-logaddexp(0, -x)).
    out = np.tanh(x * np.asarray(0.5, x.dtype))
    out += 1
    out *= np.asarray(0.5, x.dtype)
    return out


SIGMOID, sigmoid = _defunary(
    "Sigmoid", _sigmoid_fwd, lambda g, ans, x: multiply(g, multiply(ans, subtract(1, ans))),
    # jit: the forward's steps in one buffer, 0.5 * (1 + tanh(0.5 * x))
    jit=("chain", "multiply", ("{0}", "0.5"),
         ("np.tanh({t}{out})", "np.add({t}, 1{out})", "np.multiply({t}, 0.5{out})"), "floats"),
    fuse="call", tflite=_tflite_unary("LOGISTIC"), onnx="Sigmoid", exact_shape=True)
RECIP, reciprocal = _defunary(
    "Reciprocal", np.reciprocal, lambda g, ans, x: negative(multiply(g, square(ans))),
    jit=("ufunc", "reciprocal"), fuse="call", unsupported="tflite", onnx="Reciprocal")
FLOOR, floor = _defunary(
    "Floor", np.floor, lambda g, ans, x: zeros_like_t(g), FLOAT, jit=("ufunc", "floor"),
    fuse="floor({0}{out})", tflite=_tflite_unary("FLOOR"), onnx="Floor")
CEIL, ceil = _defunary(
    "Ceil", np.ceil, lambda g, ans, x: zeros_like_t(g), FLOAT, jit=("ufunc", "ceil"),
    fuse="ceil({0}{out})", tflite=_tflite_unary("CEIL"), onnx="Ceil")
ROUND, round = _defunary("Round", np.round, lambda g, ans, x: zeros_like_t(g),  # noqa: A001
                         REAL, unsupported="tflite",
    onnx="Round")  # banker's rounding, as TF


def _erf_fwd(x):
    from math import erf as _erf  # noqa: PLC0415 - NumPy has no erf
    return np.vectorize(_erf, otypes=[x.dtype])(x) if x.size else x.copy()


ERF, erf = _defunary(
    "Erf", _erf_fwd,
    lambda g, ans, x: multiply(g, multiply(exp(negative(square(x))), 2 / np.sqrt(np.pi))),
    FLOAT, unsupported="tflite",
    onnx="Erf", zero_preserving=True)
IS_NAN, is_nan = _defunary(
    "IsNan", np.isnan, NOT_DIFFERENTIABLE, FLOAT, _ushape_bool, jit=("ufunc", "isnan"),
    unsupported="tflite", onnx="IsNaN")
IS_INF, is_inf = _defunary(
    "IsInf", np.isinf, NOT_DIFFERENTIABLE, FLOAT, _ushape_bool, jit=("ufunc", "isinf"),
    unsupported="tflite", onnx="IsInf")
IS_FINITE, is_finite = _defunary(
    "IsFinite", np.isfinite, NOT_DIFFERENTIABLE, FLOAT, _ushape_bool, jit=("ufunc", "isfinite"),
    unsupported="onnx tflite")
def _real_part_spec(x):
    return Spec(x.shape, x.dtype.real_dtype)


def _part_grad(imaginary):
    # Real(z) and Imag(z) send g back to the part they read: complex(g, 0) / complex(0, g).
    def grad(g, ans, x):
        from tensorlite.ops import complex_ops  # noqa: PLC0415 - complex_ops imports this module
        zero = zeros_like_t(g)
        return complex_ops.complex(zero, g) if imaginary else complex_ops.complex(g, zero)
    return grad


def _part_tf(name):
    return lambda attrs, specs: (name, {"Tout": specs[0].dtype.real_dtype})


# TensorFlow's Conj, Real and Imag take complex inputs only; for real ones the public
# functions answer without an op, as TF's do (conj and real: the input, imag: zeros).
# Conj is anti-holomorphic: TF's gradient is conj(g), registered as is.
CONJ = declare(
    register("Conj", np.conj, grad=lambda g, ans, x: conj(g), unsupported="onnx tflite"),
    tf="Conj", tf_outputs="output", tf_import="plain", batch=elementwise(np.conj))
REAL_OP = declare(register("Real", lambda x: np.real(x).copy(), grad=_part_grad(False),
                           shape=_real_part_spec, unsupported="onnx tflite"),
                  tf=_part_tf("Real"), tf_import=lambda ins, a: real(ins[0]),
                  batch=elementwise(lambda x: np.real(x).copy()), tf_outputs="output")
IMAG = declare(register("Imag", lambda x: np.imag(x).copy(), grad=_part_grad(True),
                        shape=_real_part_spec, unsupported="onnx tflite"),
               tf=_part_tf("Imag"), tf_import=lambda ins, a: imag(ins[0]),
               batch=elementwise(lambda x: np.imag(x).copy()), tf_outputs="output")
_complex_part = {op.name: unary(op, "c") for op in (CONJ, REAL_OP, IMAG)}


def _part(op_name, x, when_real):
    if _is_complex_value(x):
        return _complex_part[op_name](x)
    if type(x) in COMPOSITES:  # a real RaggedTensor
        return x if when_real is None else COMPOSITES[type(x)].elementwise(when_real, (x,))
    x = check_kind(op_name, to_tensor(x), NUMERIC, "input")
    return x if when_real is None else when_real(x)


def conj(x, name=None):
    """`tf.math.conj`: the complex conjugate; a real tensor is returned unchanged."""
    return _part("Conj", x, None)


def real(input, name=None):  # noqa: A002 - TF's argument name
    """`tf.math.real`: the real part (float32 of complex64, float64 of complex128); a real
    tensor is returned unchanged."""
    return _part("Real", input, None)


def _imag_fast(input, name=None):  # noqa: A002
    if type(input) is Tensor and input._dtype.kind in NUMERIC and input._dtype.kind != "c":
        return wrap(np.zeros_like(input._value))
    return DECLINED


@fast_path(_imag_fast)
def imag(input, name=None):  # noqa: A002
    """`tf.math.imag`: the imaginary part; zeros for a real tensor."""
    return _part("Imag", input,
                 lambda t: execute(get_op("ZerosLike"), (t,), {"dtype": t._dtype}))


def zeros_like_t(x):
    """Zeros of x's shape for a gradient rule: a constant, or inside a trace an op unless
    x is a scalar (a constant would fix the size in a shape-polymorphic graph)."""
    if OBSERVERS and x._value.ndim and control_flow_ops.graph_tracing():
        return execute(get_op("ZerosLike"), (x,), {"dtype": x._dtype})
    return wrap(np.zeros_like(x._value))


def ones_like_t(x):
    if OBSERVERS and x._value.ndim and control_flow_ops.graph_tracing():
        return execute(get_op("OnesLike"), (x,), {"dtype": x._dtype})
    return wrap(np.ones_like(x._value))


# -- where (select) ---------------------------------------------------------------------------
def _select_grad(g, ans, cond, x, y):
    zero = zeros_like_t(g)
    return None, unbroadcast(where(cond, g, zero), x, ans), unbroadcast(where(cond, zero, g), y, ans)


def _select_shape(c, x, y):
    return Spec(broadcast_spec(c, Spec(broadcast_spec(x, y), x.dtype)), x.dtype)


SELECT = declare(
    register("SelectV2", np.where, grad=_select_grad, shape=_select_shape, unsupported="tflite"),
    tf=lambda attrs, specs: ("SelectV2", {"T": specs[1].dtype}), tf_outputs="output",
    jit=("expr", "np.where({0}, {1}, {2})"), numexpr="where({0}, {1}, {2})",
    batch=leading(np.where),  # np.where broadcasts: the batch axis lines up
    onnx="Where", tf_import={"SelectV2": lambda ins, a: where(*ins), "Select": _import_select})


def where(condition, x=None, y=None, name=None):
    """`tf.where`: elementwise select with broadcasting; with only `condition`, the int64
    coordinates of its true elements."""
    c = to_tensor(condition)
    if x is None and y is None:
        return execute(WHERE_INDICES, (c,), None)
    if x is None or y is None:
        raise ValueError("tf.where needs both x and y, or neither")
    if not c._dtype.is_bool:
        raise invalid("SelectV2", f"where: condition must be bool, got {c._dtype.name}")
    x, y = tensor_args("SelectV2", (x, y), ANY, ("x", "y"))
    return execute(SELECT, (c, x, y), None)


# -- cast -------------------------------------------------------------------------------------
def _cast_grad(g, ans, x, dtype):
    if x._dtype.is_differentiable and dtype.is_differentiable:
        return cast(g, x._dtype)
    return None


def _cast_fwd(x, dtype):
    if dtype.is_string or x.dtype == object:
        source = "string" if x.dtype == object else dtypes.as_dtype(x.dtype).name
        raise errors.UnimplementedError(
            None, None, f"Cast {source} to {dtype.name} is not supported; use "
            f"tf.strings.to_number / tf.strings.as_string")
    if x.dtype.kind == "c" and not dtype.is_complex:
        x = x.real  # TF keeps the real part (NumPy would warn)
    if dtype.is_integer and x.dtype.kind in "fc":
        x = np.trunc(x)  # TF truncates toward zero
    return x.astype(dtype.as_numpy_dtype)


CAST = declare(
    register("Cast", _cast_fwd, grad=_cast_grad,
             shape=lambda x, dtype: Spec(x.shape, dtype), unsupported="tflite"),
    batch=leading(_cast_fwd), jit=("cast",), simplify="cast",
    tf=lambda attrs, specs: ("Cast", {"SrcT": specs[0].dtype, "DstT": attrs["dtype"],
                                      "T": None}),
    tf_outputs="y", onnx=_onnx_cast, tf_import=lambda ins, a: cast(ins[0], a["DstT"]))


@composite_aware("cast")
def cast(x, dtype, name=None):
    """`tf.cast`: converts to `dtype` (floats truncate toward zero into integers)."""
    dtype = dtypes.as_dtype(dtype)
    x = to_tensor(x)
    if x._dtype is dtype:
        return x
    return execute(CAST, (x,), {"dtype": dtype})


# -- reductions -------------------------------------------------------------------------------
def _reduced_shape(shape, axes):
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def _expand_fwd(g, x, axis, keepdims, mean):
    """g (leading batch dims + the reduction's output shape) broadcast back to x's shape,
    read when it runs (so a graph of it serves every size); divided by the count of
    reduced elements for a mean."""
    nb = g.ndim - (x.ndim if keepdims else x.ndim - len(axis))
    if mean:  # divided before broadcasting: the same quotients, without a full-size pass
        g = g / np.asarray(max(int(np.prod([x.shape[a] for a in axis])), 1), g.dtype)
    return np.broadcast_to(g.reshape(g.shape[:nb] + _reduced_shape(x.shape, axis)),
                           g.shape[:nb] + x.shape)


def _expand_grad(c, ans, g, x, axis, keepdims, mean):
    nb = batch_dims(c, ans)  # a jacobian's leading dims, beyond g's own
    axes = [a + nb + ans._value.ndim - x._value.ndim for a in axis]
    return (reduce_mean if mean else reduce_sum)(c, axis=axes, keepdims=keepdims), None


def _expand_shape(g, x, axis, keepdims, mean):
    nb = len(g.shape) - (len(x.shape) if keepdims else len(x.shape) - len(axis))
    return Spec(tuple(g.shape[:nb]) + tuple(x.shape), g.dtype)


def _expand_batch(arrays, batched, axis, keepdims, mean):
    g, x = arrays
    if not batched[1]:  # the batch is one more leading dim of g
        return _expand_fwd(g, x, axis, keepdims, mean)
    g = g if batched[0] else np.broadcast_to(g, x.shape[:1] + g.shape)
    if g.ndim - 1 != (x.ndim - 1 if keepdims else x.ndim - 1 - len(axis)):
        return NotImplemented  # leading dims of g's own beside the batch: per example
    return _expand_fwd(g, x, tuple(a + 1 for a in axis), keepdims, mean)


_expand_batch.kind = "leading"
# A reduction's gradient (Sum, Mean, Max, Min, Prod): one op instead of a Reshape and a
# BroadcastTo whose shapes (and a Mean's count) would be constants in a graph.
EXPAND_TO_INPUT = declare(
    register("ReductionGrad", _expand_fwd, grad=_expand_grad,
             shape=_expand_shape, unsupported="tf onnx tflite tf_import"),
    batch=_expand_batch)


def _expand_to_input(g, ans, x, axes, mean=False):
    """Broadcasts a reduction's cotangent back to the input's shape (batch dims kept)."""
    return execute(EXPAND_TO_INPUT, (g, x), {"axis": tuple(axes),
                                             "keepdims": ans._value.ndim == x._value.ndim,
                                             "mean": mean})


def _reduce_shape(x, axis, keepdims):
    shape = tuple(1 if i in axis else d for i, d in enumerate(x.shape)) if keepdims else \
        tuple(d for i, d in enumerate(x.shape) if i not in axis)
    return Spec(shape, x.dtype)


_add_reduce = np.add.reduce  # np.sum less its Python wrapper


def _reduce_tf(attrs, in_specs, name):
    """TensorFlow's reductions take their axes as an input tensor."""
    return name, {"keep_dims": bool(attrs["keepdims"])}, \
        [0, np.asarray(attrs["axis"], np.int32)]


def _defreduce(name, fwd, grad, kinds, **rules):
    op = register(name, fwd, grad=_conjugating(grad), shape=_reduce_shape,
                  batch=reduction(fwd), tf_outputs="output",
                  tf=lambda attrs, in_specs: _reduce_tf(attrs, in_specs, name), **rules)
    fwd = op.forward

    def fast(input_tensor, axis=None, keepdims=False, name=None):
        x = input_tensor if type(input_tensor) is Tensor else to_tensor(input_tensor)
        if x._dtype.kind not in kinds:
            return DECLINED
        axes = cached_axes(axis, x._value.ndim, op.name)
        try:
            return wrap(fwd(x._value, axes, bool(keepdims)))
        except Exception:  # noqa: BLE001 - the general path reports it as TF does
            return DECLINED

    @composite_aware(name)
    @fast_path(fast)
    def fn(input_tensor, axis=None, keepdims=False, name=None):
        if type(input_tensor) is Tensor and input_tensor._dtype.kind in kinds:
            x = input_tensor
        else:
            x = check_kind(op.name, to_tensor(input_tensor), kinds, "input_tensor")
        axes = cached_axes(axis, x._value.ndim, op.name)
        return execute(op, (x,), {"axis": axes, "keepdims": bool(keepdims)})
    fn.__name__ = name
    return op, fn


SUM, reduce_sum = _defreduce(
    "Sum", lambda x, axis, keepdims: _add_reduce(x, axis=axis, keepdims=keepdims, dtype=x.dtype),
    lambda g, ans, x, axis, keepdims: _expand_to_input(g, ans, x, axis), NUMERIC,
    jit=("reduce", "add", "typed"), numexpr="sum", tflite=_tflite_reduce("SUM"),
    onnx=_onnx_reduce("ReduceSum"), tf_import=_import_reduce("reduce_sum"), exact_shape=True)


def _mean_fwd(x, axis, keepdims):
    if x.dtype.kind in "iu":  # TF's integer mean is an integer division
        n = max(int(np.prod([x.shape[a] for a in axis])), 1)
        return (np.sum(x, axis=axis, keepdims=keepdims) // n).astype(x.dtype)
    return np.mean(x, axis=axis, keepdims=keepdims, dtype=x.dtype)


def _mean_grad(g, ans, x, axis, keepdims):
    return _expand_to_input(g, ans, x, axis, mean=True)


MEAN, reduce_mean = _defreduce(
    "Mean", _mean_fwd, _mean_grad, NUMERIC, jit=("reduce", "add", "typed", "mean"),
    exact_shape=True,
    tflite=_tflite_reduce("MEAN"), onnx=_onnx_reduce("ReduceMean"),
    tf_import=_import_reduce("reduce_mean"))


def _extreme_grad(g, ans, x, axis, keepdims):
    full = _expand_to_input(ans, ans, x, axis)
    mask = cast(equal(x, full), g._dtype)
    count = reduce_sum(mask, axis=list(axis), keepdims=True)
    return multiply(_expand_to_input(g, ans, x, axis), divide(mask, count))


def _checked_extreme(fn, what):
    def fwd(x, axis, keepdims):
        if x.size == 0 and any(x.shape[a] == 0 for a in axis):
            raise invalid(what, f"{what} of an empty dimension is undefined (input shape "
                          f"{list(x.shape)}, axis {list(axis)})")
        return fn(x, axis=axis, keepdims=keepdims)
    return fwd


MAX, reduce_max = _defreduce(
    "Max", _checked_extreme(np.max, "Max"), _extreme_grad, REAL,
    jit=("reduce", "maximum", "nonempty"), tflite=_tflite_reduce("REDUCE_MAX"),
    onnx=_onnx_reduce("ReduceMax"), tf_import=_import_extreme("reduce_max", np.maximum, True))
MIN, reduce_min = _defreduce(
    "Min", _checked_extreme(np.min, "Min"), _extreme_grad, REAL,
    jit=("reduce", "minimum", "nonempty"), tflite=_tflite_reduce("REDUCE_MIN"),
    onnx=_onnx_reduce("ReduceMin"), tf_import=_import_extreme("reduce_min", np.minimum, False))


def _prod_grad(g, ans, x, axis, keepdims):
    # Product of all other elements without dividing by x (exact when x has zeros):
    # move reduced axes last, flatten them, multiply exclusive cumprods from both sides.
    nd = x._value.ndim
    keep = [i for i in range(nd) if i not in axis]
    perm = keep + list(axis)
    xt = transpose(x, perm)
    kept_shape = [x._value.shape[i] for i in keep]
    flat = reshape(xt, kept_shape + [-1])
    others = multiply(cumprod(flat, axis=-1, exclusive=True),
                      cumprod(flat, axis=-1, exclusive=True, reverse=True))
    others = transpose(reshape(others, [x._value.shape[i] for i in perm]),
                       list(np.argsort(perm)))
    return multiply(_expand_to_input(g, ans, x, axis), others)


PROD, reduce_prod = _defreduce(
    "Prod", lambda x, axis, keepdims: np.prod(x, axis=axis, keepdims=keepdims, dtype=x.dtype),
    _prod_grad, NUMERIC, jit=("reduce", "multiply", "typed"), numexpr="prod", unsupported="tflite",
    onnx=_onnx_reduce("ReduceProd"),
    tf_import=_import_reduce("reduce_prod"))


def _deflogical(name, np_reduce, ufunc, public):
    """A boolean reduction (Any, All): NumPy's `np_reduce`, compiled as `ufunc`'s reduce."""
    return _defreduce(
        name, lambda x, axis, keepdims: np_reduce(x, axis=axis, keepdims=keepdims),
        NOT_DIFFERENTIABLE, "b", jit=("reduce", ufunc), unsupported="onnx tflite",
        tf_import=_import_reduce(public))


ANY_OP, reduce_any = _deflogical("Any", np.any, "logical_or", "reduce_any")
ALL_OP, reduce_all = _deflogical("All", np.all, "logical_and", "reduce_all")


def reduce_logsumexp(input_tensor, axis=None, keepdims=False, name=None):
    """`tf.math.reduce_logsumexp`, stable: max + log(sum(exp(x - max)))."""
    x = to_tensor(input_tensor)
    m = stop_gradient_t(reduce_max(x, axis=axis, keepdims=True))
    m = where(is_finite(m), m, zeros_like_t(m))
    out = add(log(reduce_sum(exp(subtract(x, m)), axis=axis, keepdims=True)), m)
    if not keepdims:
        axes = norm_axis(axis, x._value.ndim)
        out = reshape(out, [d for i, d in enumerate(out._value.shape) if i not in axes])
    return out


def reduce_variance(input_tensor, axis=None, keepdims=False, name=None):
    """`tf.math.reduce_variance`."""
    x = to_tensor(input_tensor)
    mean = reduce_mean(x, axis=axis, keepdims=True)
    return reduce_mean(square(subtract(x, mean)), axis=axis, keepdims=keepdims)


def reduce_std(input_tensor, axis=None, keepdims=False, name=None):
    """`tf.math.reduce_std`."""
    return sqrt(reduce_variance(input_tensor, axis=axis, keepdims=keepdims))


def count_nonzero(input, axis=None, keepdims=None, dtype=dtypes.int64,  # noqa: A002
                  name=None):
    """`tf.math.count_nonzero`: how many elements are not zero (not empty, for strings)
    along `axis`, as `dtype` (int64). >>> int(tf.math.count_nonzero([[0, 1], [2, 0]]))
    2"""
    x = to_tensor(input)
    zero = b"" if x._dtype.is_string else 0
    nonzero = cast(not_equal(x, to_tensor(zero, x._dtype)), dtypes.int64)
    return cast(reduce_sum(nonzero, axis=axis, keepdims=bool(keepdims)), dtype)


STOP_GRADIENT = declare(
    register("StopGradient", lambda x: x, grad=NOT_DIFFERENTIABLE,
             shape=_ushape, jit=("alias",), numexpr="{0}", unsupported="tflite batch"),
    tf="StopGradient", tf_outputs="output", tf_import=lambda ins, a: stop_gradient_t(ins[0]),
    onnx="Identity")


def stop_gradient_t(x):
    return execute(STOP_GRADIENT, (to_tensor(x),), None)


def _arg_fn(name, npfn, **rules):
    # TensorFlow's ArgMax/ArgMin take the axis as a second input tensor
    op = register(name, lambda x, axis, output_type: npfn(x, axis=axis).astype(
        output_type.as_numpy_dtype), grad=NOT_DIFFERENTIABLE,
        shape=lambda x, axis, output_type: Spec(
            tuple(d for i, d in enumerate(x.shape) if i != axis), output_type),
        tf=lambda a, specs: (name, {"output_type": a["output_type"]},
                             [0, np.asarray(a["axis"], np.int32)]),
        tf_outputs="output", unsupported="tflite batch",
        tf_import=lambda ins, a: fn(ins[0], int(np.asarray(ins[1]._value)),
                                    a.get("output_type") or dtypes.int64), **rules)

    def fn(input, axis=None, output_type=dtypes.int64, name=None):  # noqa: A002
        x = check_kind(op.name, to_tensor(input), REAL, "input")
        if x._value.ndim == 0:
            raise invalid(op.name, f"{op.name} needs a tensor of rank >= 1, got a scalar")
        ax = single_axis(0 if axis is None else axis, x._value.ndim, op.name)
        if x._value.shape[ax] == 0:
            raise invalid(op.name, f"{op.name}: reduction dimension {ax} is empty")
        return execute(op, (x,), {"axis": ax, "output_type": dtypes.as_dtype(output_type)})
    fn.__name__ = name
    return fn


argmax = _arg_fn("ArgMax", np.argmax, onnx=_onnx_arg("ArgMax"))
argmin = _arg_fn("ArgMin", np.argmin, onnx=_onnx_arg("ArgMin"))


# -- cumulative -------------------------------------------------------------------------------
def _cum_fwd(npfn, identity_value):
    def fwd(x, axis, exclusive, reverse):
        if reverse:
            x = np.flip(x, axis)
        out = npfn(x, axis=axis, dtype=x.dtype)
        if exclusive:
            pad = np.full_like(np.take(out, [0], axis=axis), identity_value)
            out = np.concatenate([pad, np.take(out, range(out.shape[axis] - 1), axis=axis)],
                                 axis=axis)
        return np.flip(out, axis) if reverse else out
    return fwd


def _neg_axis(axis, ndim):
    return axis - ndim


CUMSUM = register(
    "Cumsum", _cum_fwd(np.cumsum, 0),
    grad=lambda g, ans, x, axis, exclusive, reverse: cumsum(
        g, axis=_neg_axis(axis, x._value.ndim), exclusive=exclusive, reverse=not reverse),
    shape=lambda x, **_: x, unsupported="onnx tflite batch",
    tf=lambda a, specs: ("Cumsum", {
        "Tidx": dtypes.int32, "exclusive": a["exclusive"], "reverse": a["reverse"]},
        [0, np.array(a["axis"], np.int32)]),
    tf_outputs="out",
    tf_import=_import_cumulative("cumsum"))


def _cumprod_grad(g, ans, x, axis, exclusive, reverse):
    # TF's rule (exact for nonzero x): reverse-cumsum of g * ans, divided by x.
    s = cumsum(multiply(g, ans), axis=_neg_axis(axis, x._value.ndim), exclusive=exclusive,
               reverse=not reverse)
    return divide(s, x)


CUMPROD = register("Cumprod", _cum_fwd(np.cumprod, 1), grad=_conjugating(_cumprod_grad),
                   shape=lambda x, **_: x, unsupported="tf onnx tflite batch",
    tf_import=_import_cumulative("cumprod"))


def _cum_entry(op):
    def fn(x, axis=0, exclusive=False, reverse=False, name=None):
        x = check_kind(op.name, to_tensor(x), NUMERIC)
        ax = single_axis(axis, x._value.ndim, op.name)
        return execute(op, (x,), {"axis": ax, "exclusive": bool(exclusive),
                                  "reverse": bool(reverse)})
    return fn


cumsum = _cum_entry(CUMSUM)
cumprod = _cum_entry(CUMPROD)


# -- matmul -----------------------------------------------------------------------------------
def _matmul_fwd(a, b, transpose_a, transpose_b):
    if transpose_a:
        a = np.swapaxes(a, -1, -2)
    if transpose_b:
        b = np.swapaxes(b, -1, -2)
    if a.shape[-1] != b.shape[-2]:
        raise invalid("MatMul", f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
                      f"{list(b.shape)}; the inner dimensions must match (check transpose_a/"
                      f"transpose_b)")
    if a.ndim > 2 and b.ndim == 2 and a.flags.c_contiguous:
        # a Dense layer on [batch, seq, features]: one GEMM over all rows, not one per batch
        # entry (blas_threads then sees its real size for the thread choice)
        out = blas_threads.matmul(a.reshape(-1, a.shape[-1]), b)
        out = out.reshape(a.shape[:-1] + (b.shape[-1],))
    elif a.ndim > 2 and a.shape[:-2] == b.shape[:-2] and a.dtype == b.dtype and \
            a.dtype.char in "fdFD":
        out = einsum_plan.batched_matmul(a, b)  # split over threads by the batch axis
    else:
        out = blas_threads.matmul(a, b)
    return out if out.dtype == a.dtype else out.astype(a.dtype)  # bfloat16 (see matmul)


def _matmul_grad(g, ans, a, b, transpose_a, transpose_b):
    ga = gb = None
    if input_needs_grad(0):  # skipped for a first layer's data batch
        ga = matmul(g, b, transpose_b=not transpose_b) if not transpose_a else \
            matmul(b, g, transpose_a=transpose_b, transpose_b=True)
        ga = unbroadcast(ga, a, ans)
    if input_needs_grad(1):
        if b._value.ndim == 2 and a._value.ndim > 2 and not (transpose_a or transpose_b):
            # weights shared by a's leading dims: fold those into the contraction rather
            # than make one [k, n] product per leading index and sum them (a jacobian's
            # rows would otherwise multiply that by the batch)
            lead = g._value.shape[:batch_dims(g, ans)]
            gb = matmul(reshape(a, (-1, a._value.shape[-1])),
                        reshape(g, lead + (-1, g._value.shape[-1])), transpose_a=True)
        else:
            gb = matmul(a, g, transpose_a=not transpose_a) if not transpose_b else \
                matmul(g, a, transpose_a=True, transpose_b=transpose_a)
            gb = unbroadcast(gb, b, ans)
    return ga, gb


def _matmul_shape(a, b, transpose_a, transpose_b):
    sa = list(a.shape)
    sb = list(b.shape)
    if transpose_a:
        sa[-1], sa[-2] = sa[-2], sa[-1]
    if transpose_b:
        sb[-1], sb[-2] = sb[-2], sb[-1]
    if sa[-1] is not None and sb[-2] is not None and sa[-1] != sb[-2]:
        raise invalid("MatMul", f"Matrix size-incompatible: In[0]: {list(a.shape)}, In[1]: "
                                f"{list(b.shape)}")
    batch = broadcast_spec(Spec(tuple(sa[:-2]), a.dtype), Spec(tuple(sb[:-2]), b.dtype))
    return Spec(tuple(batch) + (sa[-2], sb[-1]), a.dtype)


def _matmul_tf(attrs, in_specs):
    """TensorFlow writes a matrix product of two matrices as MatMul (transpose_a/b), of
    batches as BatchMatMulV2 (adj_x/adj_y)."""
    attrs = dict(attrs)
    ta, tb = bool(attrs.pop("transpose_a", False)), bool(attrs.pop("transpose_b", False))
    if all(s is not None and s.shape is not None and len(s.shape) == 2 for s in in_specs):
        return "MatMul", {"transpose_a": ta, "transpose_b": tb, **attrs}
    return "BatchMatMulV2", {"adj_x": ta, "adj_y": tb, **attrs}


MATMUL = declare(register("BatchMatMulV2", _matmul_fwd, grad=_conjugating(_matmul_grad),
                          shape=_matmul_shape), jit=("matmul",), cost="matmul",
                 linear_filter=lambda attrs: None if attrs.get("transpose_b") else (1, 1),
                 exact_shape=True, tf=_matmul_tf, tf_import={
    "MatMul": lambda ins, a: matmul(ins[0], ins[1], transpose_a=a.get("transpose_a", False),
                                    transpose_b=a.get("transpose_b", False)),
    "BatchMatMulV2": lambda ins, a: matmul(ins[0], ins[1], adjoint_a=a.get("adj_x", False),
                                           adjoint_b=a.get("adj_y", False))},
    batch=elementwise(_matmul_fwd), tf_outputs={"BatchMatMulV2": "output", "MatMul": "product"},
    tflite=_tflite_matmul,
    onnx=_onnx_matmul)
_matmul = blas_threads.matmul


def _matmul_fast(a, b, transpose_a=False, transpose_b=False, adjoint_a=False,
                 adjoint_b=False, a_is_sparse=False, b_is_sparse=False, output_type=None,
                 name=None):
    if (type(a) is Tensor and type(b) is Tensor and a._dtype is b._dtype
            and a._dtype.kind in NUMERIC  # strings and bools: the checked path's error
            and not (transpose_a or transpose_b or adjoint_a or adjoint_b)
            and a._value.ndim >= 2 and b._value.ndim >= 2):
        try:
            out = _matmul(a._value, b._value)
            # NumPy multiplies bfloat16 matrices in float32: the result keeps the inputs' dtype
            return wrap(out if out.dtype == a._value.dtype else out.astype(a._value.dtype))
        except ValueError:  # the general path words the error
            pass
    return DECLINED


@fast_path(_matmul_fast)
def matmul(a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
           a_is_sparse=False, b_is_sparse=False, output_type=None, name=None):
    """`tf.linalg.matmul` (`tf.matmul`, `@`): batched, with transpose/adjoint flags."""
    a, b = tensor_args("MatMul", (a, b), NUMERIC, ("a", "b"))
    if adjoint_a:
        a, transpose_a = conj(a) if a._dtype.is_complex else a, True
    if adjoint_b:
        b, transpose_b = conj(b) if b._dtype.is_complex else b, True
    if a._value.ndim < 2 or b._value.ndim < 2:
        raise invalid("MatMul", f"matmul needs tensors of rank >= 2; got shapes "
                      f"{list(a._value.shape)} and {list(b._value.shape)} (tf.expand_dims "
                      f"a vector first)")
    return execute(MATMUL, (a, b), {"transpose_a": bool(transpose_a),
                                    "transpose_b": bool(transpose_b)})


def _tensordot_axes(axes, sa, sb):
    """A pair of axis lists (each entry an int within its operand's rank), nonnegative."""
    pair = list(axes) if isinstance(axes, (list, tuple)) else \
        list(np.asarray(axes.numpy() if hasattr(axes, "numpy") else axes, dtype=object))
    if len(pair) != 2:
        raise ValueError(f"tensordot: 'axes' must be an integer or have length 2, got {axes!r}")
    out = []
    for axs, shape, which in zip(pair, (sa, sb), "ab"):
        axs = np.atleast_1d(np.asarray(axs.numpy() if hasattr(axs, "numpy") else axs)).tolist()
        for x in axs:
            if isinstance(x, bool) or not isinstance(x, int) or not -len(shape) <= x < len(shape):
                raise invalid("Tensordot", f"tensordot: axis {x!r} of `{which}` is not an "
                              f"integer within its rank {len(shape)}")
        out.append([x % len(shape) for x in axs])
    return out


def tensordot(a, b, axes, name=None):
    """`tf.tensordot`: contraction over `axes` (an int or a pair of axis lists), built from
    transpose, reshape and one matmul as TensorFlow does."""
    a, b = tensor_args("Tensordot", (a, b), NUMERIC, ("a", "b"))
    sa, sb = a._value.shape, b._value.shape
    if isinstance(axes, Tensor) and axes._value.ndim == 0:
        axes = axes._value.item()
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        if n < 0:
            raise ValueError(f"tensordot: 'axes' must be at least 0, got {n}")
        if n > min(len(sa), len(sb)):
            raise invalid("Tensordot", f"tensordot: axes={n} exceeds the rank of {list(sa)} or "
                          f"{list(sb)}")
        ax_a, ax_b = list(range(len(sa) - n, len(sa))), list(range(n))
    else:
        ax_a, ax_b = _tensordot_axes(axes, sa, sb)
    if [sa[i] for i in ax_a] != [sb[i] for i in ax_b]:
        raise invalid("Tensordot", f"tensordot: contracted dimensions differ: {list(sa)} axes "
                      f"{ax_a} vs {list(sb)} axes {ax_b}")
    if ax_a == [len(sa) - 1] and ax_b == [0] and len(sb) == 2 and len(sa) > 2:
        # a Dense layer on a sequence: one broadcasting matmul, no reshape to the sizes
        # traced, so the graph holds for every size of the leading dimensions
        return matmul(a, b)
    free_a = [i for i in range(len(sa)) if i not in ax_a]
    free_b = [i for i in range(len(sb)) if i not in ax_b]
    k = int(np.prod([sa[i] for i in ax_a]))
    at = reshape(transpose(a, free_a + ax_a), [-1, k])
    bt = reshape(transpose(b, ax_b + free_b), [k, -1])
    return reshape(matmul(at, bt), [sa[i] for i in free_a] + [sb[i] for i in free_b])


# -- einsum -----------------------------------------------------------------------------------
def _einsum_parse(equation, n):
    eq = equation.replace(" ", "")
    if "..." in eq:
        raise NotImplementedError("tensorlite's einsum does not support '...' yet; write the "
                                  "dimensions out explicitly")
    if "->" in eq:
        ins, out = eq.split("->")
    else:
        ins = eq
        letters = ins.replace(",", "")
        out = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    ins = ins.split(",")
    if len(ins) != n:
        raise ValueError(f"einsum equation {equation!r} names {len(ins)} operands, got {n}")
    return ins, out


def _einsum_grad(g, ans, *xs, equation):
    ins, out = _einsum_parse(equation, len(xs))
    nb = batch_dims(g, ans)
    used = set("".join(ins) + out)
    batch = "".join([c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if c not in used][:nb])
    grads = []
    for i, x in enumerate(xs):
        sub = ins[i]
        if len(set(sub)) != len(sub):
            raise NotImplementedError(f"einsum gradient for repeated indices in {sub!r}")
        others = [ins[j] for j in range(len(xs)) if j != i]
        avail = set(batch + out + "".join(others))
        target = "".join(c for c in sub if c in avail)
        spec = ",".join([batch + out] + others) + "->" + batch + target
        gi = einsum(spec, g, *[xs[j] for j in range(len(xs)) if j != i])
        if target != sub:  # letters summed only inside operand i: broadcast back
            shape = list(g._value.shape[:nb])
            for c in sub:
                shape.append(x._value.shape[sub.index(c)] if c not in target else 1)
            expanded = [x._value.shape[sub.index(c)] if c in target else 1 for c in sub]
            gi = reshape(gi, list(g._value.shape[:nb]) + expanded)
            gi = broadcast_to(gi, list(g._value.shape[:nb]) + list(x._value.shape))
        grads.append(gi)
    return tuple(grads)


def _einsum_shape(*xs, equation):
    """Each output letter's size from the operands that know it (None: no operand does).
    Known sizes of one letter must agree (NumPy's kernel broadcasts a size of 1; this rule
    refuses it too, and the kernel then decides)."""
    ins, out = _einsum_parse(equation, len(xs))
    size = {}
    for sub, x in zip(ins, xs):
        if len(sub) != len(x.shape):
            raise ValueError(f"einsum: operand {sub!r} has rank {len(x.shape)}")
        for c, d in zip(sub, x.shape):
            if d is not None and size.setdefault(c, d) != d:
                raise ValueError(f"einsum {equation!r}: the size of {c!r} is {size[c]} in "
                                 f"one place and {d} in another")
    letters = "".join(ins)
    if any(c not in letters for c in out):
        raise ValueError(f"einsum {equation!r}: an output letter names no input dimension")
    return Spec(tuple(size.get(c) for c in out), xs[0].dtype)


def _np_einsum(equation, *xs):
    return np.einsum(equation, *xs, optimize=True)


def _einsum_fwd(*xs, equation):
    """Two operands: one (batched) matmul over views where einsum_plan has a plan; else
    np.einsum on the BLAS thread count blas_threads measures best for its work (the product
    of its letters' sizes), as matmul runs: OpenBLAS's own default (every core) made a
    process's first einsums, before any matmul had set it, several times slower on a busy
    machine."""
    out = einsum_plan.run(equation, *xs) if len(xs) == 2 else None
    if out is None:
        ins, _ = _einsum_parse(equation, len(xs))
        size = {}
        for sub, x in zip(ins, xs):
            size.update(zip(sub, x.shape))
        macs = 1
        for d in size.values():
            macs *= d
        out = blas_threads.run(max(macs, 1), _np_einsum, equation, *xs)
    return out.astype(xs[0].dtype, copy=False)


EINSUM = declare(
    register("Einsum", cost="einsum", forward=_einsum_fwd,
             grad=_conjugating(_einsum_grad), shape=_einsum_shape, unsupported="batch",
             exact_shape=True),
    tf=lambda attrs, specs: ("Einsum", {"equation": attrs["equation"], "N": len(specs)}),
    tf_outputs="output", tf_import=lambda ins, a: einsum(a["equation"], *ins),
    tflite=lambda ctx, node: ctx.einsum(
        node, *_einsum_parse(node.attrs["equation"], len(node.inputs))),
    onnx=lambda ctx, node: ctx.emit("Einsum", ctx.inputs(node),
                                    equation=node.attrs["equation"]))


def einsum(equation, *inputs, **kwargs):
    """`tf.einsum`."""
    if isinstance(equation, bytes):
        equation = equation.decode("utf-8", "replace")
    if not isinstance(equation, str):
        raise TypeError(f"einsum: equation must be a string such as 'ij,jk->ik', got "
                        f"{type(equation).__name__}")
    xs = tensor_args("Einsum", list(inputs), NUMERIC)
    _einsum_parse(equation, len(xs))
    return execute(EINSUM, tuple(xs), {"equation": equation})


# -- n-ary ------------------------------------------------------------------------------------
ADD_N = declare(
    register("AddN", lambda *xs: np.sum(np.stack(xs), axis=0, dtype=xs[0].dtype)
     if len(xs) > 2 else np.add(*xs) if len(xs) == 2 else np.array(xs[0]),
     grad=lambda g, ans, *xs: tuple(g for _ in xs),
     shape=lambda *xs: Spec(merged_shape(xs), xs[0].dtype), unsupported="tflite batch"),
    tf=lambda attrs, specs: ("AddN", {"N": len(specs)}), tf_outputs="sum",
    tf_import=lambda ins, a: add_n(list(ins)), onnx="Sum")


def merged_shape(specs):
    """The one shape of several same-shaped inputs, known where any input knows it."""
    return tuple(next((d for d in dims if d is not None), None) for dims in zip(
        *[s.shape for s in specs]))


def add_n(inputs, name=None):
    """`tf.math.add_n`: elementwise sum of same-shaped tensors."""
    xs = tensor_args("AddN", list(inputs), NUMERIC)
    if not xs:
        raise ValueError("add_n needs at least one tensor")
    shapes = {x._value.shape for x in xs}
    if len(shapes) > 1:
        raise invalid("AddN", f"add_n: all inputs must have the same shape, got "
                      f"{sorted(list(s) for s in shapes)}")
    return execute(ADD_N, tuple(xs), None)


# -- clipping ---------------------------------------------------------------------------------
def clip_by_value(t, clip_value_min, clip_value_max, name=None):
    """`tf.clip_by_value`: gradient passes where the value is inside the range."""
    t = to_tensor(t)
    return minimum(maximum(t, clip_value_min), clip_value_max)


def global_norm(t_list, name=None):
    """`tf.linalg.global_norm`: sqrt of the sum of squares over all tensors."""
    ts = [to_tensor(t) for t in t_list if t is not None]
    return sqrt(add_n([reduce_sum(square(t)) for t in ts]))


def clip_by_global_norm(t_list, clip_norm, use_norm=None, name=None):
    """`tf.clip_by_global_norm`: returns (clipped list, global norm)."""
    if isinstance(t_list, (Tensor,)) or not hasattr(t_list, "__iter__"):
        raise TypeError("t_list should be a sequence of tensors")
    t_list = list(t_list)
    norm = global_norm(t_list) if use_norm is None else to_tensor(use_norm)
    clip = cast(to_tensor(clip_norm), norm._dtype)
    scale = divide(clip, maximum(norm, clip))
    out = [None if t is None else multiply(to_tensor(t), cast(scale, to_tensor(t)._dtype))
           for t in t_list]
    return out, norm


def clip_by_norm(t, clip_norm, axes=None, name=None):
    """`tf.clip_by_norm`."""
    t = to_tensor(t)
    n = sqrt(reduce_sum(square(t), axis=axes, keepdims=True))
    clip = cast(to_tensor(clip_norm), t._dtype)
    return multiply(t, divide(clip, maximum(n, clip)))


# -- sorting ----------------------------------------------------------------------------------
def _take_along_fwd(x, idx, axis):
    return np.take_along_axis(x, idx, axis=axis)


def _take_along_grad(g, ans, x, idx, axis):
    return put_along_axis_add(g, idx, x._value.shape, axis - x._value.ndim), None


def _put_along_fwd(g, idx, shape, axis):
    nb = g.ndim - idx.ndim
    out = np.zeros(g.shape[:nb] + tuple(shape), dtype=g.dtype)
    idx_b = np.broadcast_to(idx, g.shape)
    grids = np.indices(g.shape, sparse=True)
    ax = axis % g.ndim
    loc = tuple(idx_b if i == ax else grids[i] for i in range(g.ndim))
    np.add.at(out, loc, g)
    return out


def _put_along_grad(gg, ans, g, idx, shape, axis):
    nb = gg._value.ndim - ans._value.ndim
    return take_along_axis(gg, wrap(idx._value.reshape((1,) * nb + idx._value.shape)
                                    if nb else idx._value), axis), None


TAKE_ALONG = register(
    "TakeAlongAxis", _take_along_fwd, grad=_take_along_grad,
    unsupported="tf onnx tflite batch tf_import")
PUT_ALONG = register(
    "PutAlongAxisAdd", _put_along_fwd, grad=_put_along_grad,
    unsupported="tf onnx tflite batch tf_import")


def take_along_axis(x, indices, axis):
    x, indices = to_tensor(x), to_tensor(indices)
    return execute(TAKE_ALONG, (x, indices), {"axis": axis % x._value.ndim})


def put_along_axis_add(g, indices, shape, axis):
    """Scatter-adds `g` into zeros of `shape` at `indices` along `axis` (negative axis;
    leading batch dims of `g` are kept). The adjoint of take_along_axis."""
    return execute(PUT_ALONG, (g, indices), {"shape": tuple(shape), "axis": axis})


def argsort(values, axis=-1, direction="ASCENDING", stable=False, name=None):
    """`tf.argsort` (int32 indices)."""
    x = to_tensor(values)
    ax = single_axis(axis, x._value.ndim, "ArgSort")
    if direction not in ("ASCENDING", "DESCENDING"):
        raise ValueError(f"direction must be 'ASCENDING' or 'DESCENDING', got {direction!r}")
    return execute(ARGSORT, (x,), {"axis": ax, "descending": direction == "DESCENDING"})


def _argsort_fwd(x, axis, descending):
    return np.argsort(-x if descending else x, axis=axis, kind="stable").astype(np.int32)


# Index-producing computations are ops (not NumPy shortcuts) so graphs recompute them.
ARGSORT = register(
    "ArgSort", _argsort_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, axis, descending: Spec(x.shape, dtypes.int32),
    unsupported="tf onnx tflite batch tf_import")
WHERE_INDICES = register("Where", lambda c: np.argwhere(c).astype(np.int64),
                         grad=NOT_DIFFERENTIABLE,  # how many are true is known only at run time
                         shape=lambda c: Spec((None, len(c.shape)), dtypes.int64),
                         tf=lambda a, specs: ("Where", {"T": specs[0].dtype}, [0]),
                         tf_outputs="index",
                         tf_import=lambda ins, a: where(ins[0]),
                         unsupported="onnx tflite batch")


def sort(values, axis=-1, direction="ASCENDING", name=None):
    """`tf.sort`: differentiable (the gradient routes back through the permutation)."""
    x = to_tensor(values)
    idx = argsort(x, axis=axis, direction=direction, stable=True)
    return take_along_axis(x, idx, single_axis(axis, x._value.ndim))


def top_k_internal(x, k, sorted=True):  # noqa: A002
    """Values and int32 indices of the k largest entries along the last axis."""
    x = to_tensor(x)
    if x._value.ndim == 0:
        raise invalid("TopKV2", "top_k: input must be at least rank 1, got a scalar")
    n = x._value.shape[-1]
    if not 0 <= k <= n:
        raise invalid("TopKV2", f"top_k: input must have at least k={k} columns, had {n}")
    idx = argsort(x, axis=-1, direction="DESCENDING")[..., :k]
    return take_along_axis(x, idx, x._value.ndim - 1), idx

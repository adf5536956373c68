"""Array ops: shape manipulation, creation, joining and splitting.

Each op: forward on NumPy, gradient written with tensorlite ops (batch-polymorphic in the
cotangent's leading dimensions), and a shape rule where it needs one. Gather/scatter ops
take the rank of their logical input as an attribute so that they also run on cotangents
with extra leading dimensions (each is the other's gradient).
"""
import builtins
import os
from collections import namedtuple

import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, declare, register
from tensorlite.ops.batching import (along_axis, broadcast_to_rule,
                                     leading, reshape_rule, transpose_rule)
from tensorlite.framework.tensor import Tensor, _UNSTACK, wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.ops.common import (DECLINED, batch_dims, composite_aware, fast_path, int_list,
                                   norm_axis, single_axis, to_tensor)

__all__ = ["reshape", "transpose", "expand_dims", "squeeze", "identity", "broadcast_to",
           "zeros", "ones", "fill", "zeros_like", "ones_like", "concat", "stack", "unstack",
           "split", "shape", "size", "rank", "tile", "pad", "range", "reverse", "linspace",
           "roll", "meshgrid", "unique", "ensure_shape"]

_pyrange = builtins.range  # this module defines tf.range


def _lead(g, ans):
    return tuple(g._value.shape[:batch_dims(g, ans)])


# -- consumer rules, declared at each op's registration below. Import rules (TensorFlow's
# ops as SavedModel graphs spell them; tensorlite/saved_model/function_runner.py documents
# the form): inputs TensorFlow passes as tensors become our arguments.
# -- export rules: ONNX (the rule's form: tensorlite/onnx/__init__.py) ------------------------
def _export_reshape_target(ctx, node):
    """A Reshape's target in a file with a dynamic batch: -1 at the one dimension that
    follows the batch size (an attribute entry traced from tf.shape(x), or the output's),
    the output's fixed sizes elsewhere."""
    shape = list(node.attrs["shape"])
    out = node.outputs[0]
    dynamic = set(ctx.varying(node, "shape")) | ctx.capture.dynamic_dims(out)
    if len(dynamic) > 1:
        ctx.unsupported(node, f"reshapes to {shape} with dimensions {sorted(dynamic)} that "
                              f"follow the batch size; only one can be inferred")
    if not dynamic:
        return shape
    fixed = ctx.capture.value(out).shape
    return [-1 if i in dynamic else int(fixed[i]) for i, _ in enumerate(shape)]


def _onnx_reshape(ctx, node):
    return ctx.emit("Reshape", [ctx.inputs(node)[0], ctx.ints(_export_reshape_target(ctx,
                                                                                      node))])


def _onnx_pack(ctx, node):
    axis = int(node.attrs["axis"])
    return ctx.emit("Concat", [ctx.unsqueeze(x, [axis]) for x in ctx.inputs(node)], axis=axis)


def _onnx_unpack(ctx, node):
    axis = int(node.attrs["axis"])
    parts = ctx.split(ctx.inputs(node)[0], [1] * len(node.outputs), axis)
    parts = [parts] if isinstance(parts, str) else parts
    return [ctx.squeeze(p, [axis]) for p in parts]


def _onnx_split(ctx, node):
    sizes = node.attrs["sizes"]
    out = ctx.split(ctx.inputs(node)[0], sizes, node.attrs["axis"])
    return [out] if isinstance(out, str) else out


def _onnx_tile(ctx, node):
    x, = ctx.inputs(node)
    reps = tuple(node.attrs["multiples"])
    reps = (1,) * (len(ctx.shape(node.inputs[0])) - len(reps)) + reps
    return ctx.emit("Tile", [x, ctx.ints(reps)])


def _onnx_pad(ctx, node):
    x, c = ctx.inputs(node)
    pads = node.attrs["paddings"]
    lead = len(ctx.shape(node.inputs[0])) - len(pads)
    begins = [0] * lead + [int(lo) for lo, _ in pads]
    ends = [0] * lead + [int(hi) for _, hi in pads]
    return ctx.emit("Pad", [x, ctx.ints(begins + ends), c], mode="constant")


def _tflite_pad(ctx, node):
    """PAD for zeros (what TFLite's converter writes for ZeroPadding2D), else PADV2."""
    pads = [list(p) for p in node.attrs["paddings"]]
    rank = len(ctx.shape(node.inputs[0]))
    full = np.asarray([[0, 0]] * (rank - len(pads)) + pads, np.int32)
    inputs = [ctx.tensor(node.inputs[0]), ctx.const(full, "paddings")]
    c = ctx.value(node.inputs[1])
    if c is not None and not np.any(c):
        ctx.op("PAD", inputs, [ctx.output(node)])
    else:
        ctx.op("PADV2", inputs + [ctx.tensor(node.inputs[1])], [ctx.output(node)])


def _onnx_broadcast(ctx, node):
    if ctx.varying(node, "shape"):
        ctx.unsupported(node, "broadcasts to a shape that follows the batch size")
    return ctx.emit("Expand", [ctx.inputs(node)[0], ctx.ints(node.attrs["shape"])])


def _onnx_shape(ctx, node):
    return ctx.emit("Cast", [ctx.emit("Shape", ctx.inputs(node))],
                    to=ctx.onnx_dtype(node.attrs["dtype"]))


# -- export rules: TFLite (the rule's form: tensorlite/lite/convert/converter.py) -------------
def _tflite_reshape(ctx, node):
    new_shape = np.asarray(_export_reshape_target(ctx, node), np.int32)
    ctx.op("RESHAPE", [ctx.tensor(node.inputs[0]), ctx.const(new_shape, "shape")],
           [ctx.output(node)], options=("ReshapeOptions", {"new_shape": new_shape}))


def _tflite_identity(ctx, node):
    ctx.slots[node.outputs[0]] = ctx.tensor(node.inputs[0])


def _tflite_split(ctx, node):
    sizes = np.asarray(node.attrs["sizes"], np.int32)
    axis = np.asarray(node.attrs["axis"], np.int32)
    ctx.op("SPLIT_V", [ctx.tensor(node.inputs[0]), ctx.const(sizes, "sizes"),
                       ctx.const(axis, "axis")],
           [ctx.output(node, i) for i in range(len(node.outputs))],
           options=("SplitVOptions", {"num_splits": len(node.outputs)}))


# -- export rules: TensorFlow's ops (the rule's form: tensorlite/saved_model/function_def.py):
# attributes TensorFlow takes as input tensors become int32 constant inputs.
def _i32(values):
    return np.asarray(list(values), np.int32)


def _reshape_tf(attrs, in_specs):
    shape = list(attrs["shape"])
    if shape.count(None) + shape.count(-1) > 1:
        raise errors.UnimplementedError(None, None, f"Reshape to {shape} (None: sizes that "
                                        f"follow the batch size) has no TensorFlow form with "
                                        f"one inferred dimension")
    return "Reshape", {}, [0, _i32(-1 if d is None else d for d in shape)]


def _fill_like_tf(name):
    def rule(attrs, in_specs):
        if attrs["dtype"] != in_specs[0].dtype:
            raise errors.UnimplementedError(None, None, f"{name} to {attrs['dtype'].name} of a "
                                            f"{in_specs[0].dtype.name} tensor has no "
                                            f"TensorFlow op; cast first")
        return name, {}
    return rule


# -- reshape ---------------------------------------------------------------------------------
def _reshape_fwd(x, shape):
    try:
        return np.reshape(x, shape)
    except ValueError:
        raise invalid("Reshape", f"Input to reshape is a tensor with {x.size} values, but the "
                      f"requested shape {list(shape)} has "
                      f"{int(np.prod([d for d in shape if d != -1]))}; the element counts must "
                      f"match (use -1 for one inferred dimension)") from None


def _reshape_shape(x, shape):
    shape = list(shape)
    if -1 in shape and all(d is not None for d in x.shape):
        known = int(np.prod([d for d in shape if d != -1]))
        shape[shape.index(-1)] = int(np.prod(x.shape)) // max(known, 1)
    return Spec(tuple(None if d == -1 else d for d in shape), x.dtype)


def _reshape_polymorphic(specs, arrays, attrs):
    """In a shape-polymorphic trace: a target dimension equal to the input's one varying
    size, with the other target dimensions holding the known ones, becomes -1."""
    shape, static = tuple(attrs["shape"]), specs[0].shape
    unknown = [i for i, d in enumerate(static) if d is None]
    if len(unknown) != 1 or -1 in shape:
        return attrs
    size = arrays[0].shape[unknown[0]]
    known = int(np.prod([d for d in static if d is not None]))
    for i, d in enumerate(shape):
        if d == size and int(np.prod(shape[:i] + shape[i + 1:])) == known:
            return dict(attrs, shape=shape[:i] + (-1,) + shape[i + 1:])
    return attrs


RESHAPE = register(
    "Reshape", _reshape_fwd,
    grad=lambda g, ans, x, shape: reshape(g, _lead(g, ans) + x._value.shape),
    shape=_reshape_shape, jit=("reshape",), simplify="reshape",
    tf=_reshape_tf,
    tf_outputs="output",
    tflite=_tflite_reshape,
    onnx=_onnx_reshape,
    tf_import={
        "Reshape": lambda ins, a: reshape(ins[0], np.asarray(ins[1].numpy())),
        "Squeeze": lambda ins, a: squeeze(ins[0], axis=a.get("squeeze_dims") or None),
        "ExpandDims": lambda ins, a: expand_dims(ins[0], int(ins[1].numpy()))},
    batch=reshape_rule, polymorphic_attrs=_reshape_polymorphic, moves_values=True)


def _reshape_fast(tensor, shape, name=None):
    if type(tensor) is Tensor and type(shape) is tuple:
        try:
            return wrap(tensor._value.reshape(shape))
        except ValueError:  # the general path words the error
            pass
    return DECLINED


@fast_path(_reshape_fast)
def reshape(tensor, shape, name=None):
    """`tf.reshape`. >>> tf.reshape(tf.range(6), [2, -1]).shape
    TensorShape([2, 3])"""
    return execute(RESHAPE, (to_tensor(tensor),), {"shape": tuple(int_list(shape, "shape"))})


# -- transpose -------------------------------------------------------------------------------
def _transpose_grad(g, ans, x, perm):
    nb = batch_dims(g, ans)
    inv = np.argsort(perm)
    return transpose(g, list(_pyrange(nb)) + [nb + int(i) for i in inv])


TRANSPOSE = register(
    "Transpose", lambda x, perm: np.transpose(x, perm), grad=_transpose_grad,
    shape=lambda x, perm: Spec(tuple(x.shape[p] for p in perm), x.dtype),
    simplify="transpose", moves_values=True,
    tf=lambda a, specs: ("Transpose", {}, [0, _i32(a["perm"])]),
    tf_outputs="y",
    tflite=lambda ctx, node: ctx.op(
        "TRANSPOSE", [ctx.tensor(node.inputs[0]),
                      ctx.const(np.asarray(node.attrs["perm"], np.int32), "perm")],
        [ctx.output(node)]),
    onnx=lambda ctx, node: ctx.transpose(ctx.inputs(node)[0],
                                         node.attrs["perm"]),
    tf_import=lambda ins, a: transpose(ins[0], ins[1].numpy()), batch=transpose_rule)


def transpose(a, perm=None, conjugate=False, name="transpose"):
    """`tf.transpose`: permutes dimensions (reverses them by default)."""
    a = to_tensor(a)
    nd = a._value.ndim
    perm = list(_pyrange(nd))[::-1] if perm is None else int_list(perm, "perm")
    if sorted(p % nd if nd else p for p in perm) != list(_pyrange(nd)):
        raise invalid("Transpose", f"transpose expects a permutation of 0..{nd - 1} for a tensor "
                      f"of shape {list(a._value.shape)}; got perm={perm}")
    out = execute(TRANSPOSE, (a,), {"perm": tuple(p % nd for p in perm)})
    if conjugate and a._dtype.is_complex:
        from tensorlite.ops.math_ops import conj  # noqa: PLC0415
        out = conj(out)
    return out


# -- expand_dims / squeeze --------------------------------------------------------------------
@composite_aware("expand_dims")
def expand_dims(input, axis, name=None):  # noqa: A002 - TF's argument name
    """`tf.expand_dims`: inserts a dimension of size 1 at `axis`."""
    x = to_tensor(input)
    nd = x._value.ndim
    axis = int(np.asarray(axis))
    if not -nd - 1 <= axis <= nd:
        raise invalid("ExpandDims", f"expand_dims: axis {axis} is out of range for a tensor of "
                      f"rank {nd}; use an axis in [{-nd - 1}, {nd}]")
    axis = axis % (nd + 1)
    shape = x._value.shape[:axis] + (1,) + x._value.shape[axis:]
    return reshape(x, shape)


def squeeze(input, axis=None, name=None):  # noqa: A002
    """`tf.squeeze`: removes size-1 dimensions (only those in `axis` when given)."""
    x = to_tensor(input)
    shape = x._value.shape
    if axis is None:
        new = tuple(d for d in shape if d != 1)
    else:
        axes = norm_axis(axis, len(shape), "Squeeze")
        for a in axes:
            if shape[a] != 1:
                raise invalid("Squeeze", f"Can not squeeze dim[{a}], expected a dimension of 1, "
                              f"got {shape[a]} (input shape {list(shape)})")
        new = tuple(d for i, d in enumerate(shape) if i not in axes)
    return reshape(x, new)


# -- identity / broadcast ---------------------------------------------------------------------
IDENTITY = register(
    "Identity", lambda x: x, grad=lambda g, ans, x: g, shape=lambda x: x, jit=("alias",),
    moves_values=True,
    numexpr="{0}", simplify="identity", unsupported="batch tf_import", tf="Identity",
    tf_outputs="output", tflite=_tflite_identity, onnx="Identity")


def identity(input, name=None):  # noqa: A002
    """`tf.identity`: the same value as a new tensor (a node the tape records)."""
    return execute(IDENTITY, (to_tensor(input),), None)


# -- ensure_shape ------------------------------------------------------------------------------
def _debug_shape(dims):
    """A shape as TensorFlow's messages write it: [2,?,3], or <unknown> for unknown rank."""
    if dims is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


def _ensure_shape_fwd(x, shape):
    if shape is not None and (x.ndim != len(shape) or builtins.any(
            e is not None and e != a for a, e in zip(x.shape, shape))):
        raise invalid("EnsureShape", f"Shape of tensor x {_debug_shape(x.shape)} is not "
                      f"compatible with expected shape {_debug_shape(shape)}.")
    return x


def _ensure_shape_shape(x, shape):
    """The input's spec refined by the expected shape (a known size wins over None)."""
    if shape is None:
        return Spec(x.shape, x.dtype)
    if x.shape is None or len(x.shape) != len(shape):
        return Spec(tuple(shape), x.dtype)
    return Spec(tuple(a if a is not None else e for a, e in zip(x.shape, shape)), x.dtype)


ENSURE_SHAPE = register("EnsureShape", _ensure_shape_fwd, grad=lambda g, ans, x, shape: g,
                        shape=_ensure_shape_shape, unsupported="tf tflite batch tf_import",
    onnx=lambda ctx, node: ctx.emit("Identity", ctx.inputs(node)[:1]))


def _expected_dims(shape):
    """`shape` of ensure_shape as a tuple of ints and None (None: unknown rank)."""
    if shape is None:
        return None
    if isinstance(shape, Tensor):
        shape = shape._value.tolist()
    try:
        if isinstance(shape, (str, bytes)):
            raise TypeError(shape)
        dims = TensorShape(shape).dims
    except (TypeError, ValueError):
        raise TypeError(f"tf.ensure_shape: shape must be a TensorShape, a list or tuple of "
                        f"ints and None, or None, got {shape!r}") from None
    if dims is not None and builtins.any(d is not None and d < -1 for d in dims):
        raise ValueError(f"tf.ensure_shape: dimensions must be >= 0 or None, got {shape!r}")
    return None if dims is None else tuple(None if d == -1 else d for d in dims)


def _ensure_shape_fast(x, shape, name=None):
    # eager: an assertion that returns its input, as in TensorFlow
    x = to_tensor(x)
    _ensure_shape_fwd(x._value, _expected_dims(shape))
    return x


@fast_path(_ensure_shape_fast)
def ensure_shape(x, shape, name=None):
    """`tf.ensure_shape`: `x` after checking that its shape is compatible with `shape` (None
    dimensions match any size); inside tf.function the check runs on every call.
    >>> tf.ensure_shape(tf.zeros([2, 3]), [None, 3]).shape
    TensorShape([2, 3])"""
    return execute(ENSURE_SHAPE, (to_tensor(x),), {"shape": _expected_dims(shape)})


def _broadcast_grad(g, ans, x, shape):
    from tensorlite.ops.common import unbroadcast  # noqa: PLC0415
    return unbroadcast(g, x, ans)


def _broadcast_fwd(x, shape):
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise invalid("BroadcastTo", f"Unable to broadcast tensor of shape {list(x.shape)} to "
                      f"shape {list(shape)}; each dimension must match or be 1") from None


BROADCAST_TO = declare(
    register("BroadcastTo", _broadcast_fwd, grad=_broadcast_grad,
             shape=lambda x, shape: Spec(tuple(shape), x.dtype), unsupported="tf tflite"),
    batch=broadcast_to_rule, onnx=_onnx_broadcast,
    tf_import=lambda ins, a: broadcast_to(ins[0], ins[1].numpy()))


def broadcast_to(input, shape, name=None):  # noqa: A002
    """`tf.broadcast_to`."""
    return execute(BROADCAST_TO, (to_tensor(input),), {"shape": tuple(int_list(shape, "shape"))})


# -- creation ---------------------------------------------------------------------------------
def _physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 1 << 40


# Larger requests are refused up front with TF's error, rather than NumPy's MemoryError or
# an overcommitted array that fails later when touched.
MAX_ALLOC_BYTES = _physical_memory()


def _shape_arg(shape, op_name="Fill", dtype=None):
    """The dims of a new tensor: nonnegative, and not more memory than can exist."""
    dims = tuple(int_list(shape, "shape")) if not isinstance(shape, int) else (shape,)
    for i, d in enumerate(dims):
        if d is None or d < 0:
            raise invalid(op_name, f"dims[{i}] = {d} must be nonnegative; a new tensor needs a "
                          f"fully known shape")
    itemsize = np.dtype(dtype.as_numpy_dtype if dtype is not None and not dtype.is_string
                        else np.float32).itemsize
    nbytes = int(np.prod(dims, dtype=object)) * itemsize if dims else itemsize
    if nbytes > MAX_ALLOC_BYTES:
        raise errors.ResourceExhaustedError(
            None, None, f"OOM when allocating tensor with shape{list(dims)} and type "
            f"{dtype.name if dtype is not None else 'float32'}: {nbytes} bytes asked for "
            f"[Op:{op_name}]")
    return dims


checked_dims = _shape_arg  # the same check for the other op modules' new tensors (eye)


def zeros(shape, dtype=dtypes.float32, name=None):
    """`tf.zeros`."""
    dt = dtypes.as_dtype(dtype)
    dims = _shape_arg(shape, "Zeros", dt)
    return wrap(np.full(dims, b"", dtype=object) if dt.is_string
                else np.zeros(dims, dtype=dt.as_numpy_dtype))


def ones(shape, dtype=dtypes.float32, name=None):
    """`tf.ones`."""
    dt = dtypes.as_dtype(dtype)
    return wrap(np.ones(_shape_arg(shape, "Ones", dt), dtype=dt.as_numpy_dtype))


def fill(dims, value, name=None):
    """`tf.fill`: a tensor of shape `dims` filled with scalar `value` (its dtype)."""
    v = to_tensor(value)
    if v._value.ndim != 0:
        raise invalid("Fill", f"fill: value must be a scalar, got shape {list(v._value.shape)}")
    return wrap(np.full(_shape_arg(dims, "Fill", v._dtype), v._value, dtype=v._value.dtype))


def _fill_like_fwd(x, dtype, value):
    return np.full(x.shape, value, dtype=object if dtype.is_string else dtype.as_numpy_dtype)


# Ops, not Python shortcuts: inside a graph the shape is that of each run's input.
# The batch axis is one more dimension (batch=leading).
def _zeros_like_fwd(x, dtype):
    return _fill_like_fwd(x, dtype, b"" if dtype.is_string else 0)


def _ones_like_fwd(x, dtype):
    return _fill_like_fwd(x, dtype, 1)


ZEROS_LIKE = register(
    "ZerosLike", _zeros_like_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, dtype: Spec(x.shape, dtype), batch=leading(_zeros_like_fwd),
    tf=_fill_like_tf("ZerosLike"),
    # TensorFlow's Fill (written by the SavedModel exporter for a constant that follows the
    # batch size, and by tf.keras 2's LayerNormalization) has no op of its own here: tf.fill
    # makes a constant, so a loaded Fill runs it on each call's dims
    tf_import={"ZerosLike": lambda ins, a: zeros_like(ins[0]),
               "Fill": lambda ins, a: fill(ins[0], ins[1])},
    tf_outputs="y", unsupported="onnx tflite")
ONES_LIKE = register(
    "OnesLike", _ones_like_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, dtype: Spec(x.shape, dtype), batch=leading(_ones_like_fwd),
    tf=_fill_like_tf("OnesLike"), tf_import=lambda ins, a: ones_like(ins[0]),
    tf_outputs="y", unsupported="onnx tflite")


@composite_aware("zeros_like")
def zeros_like(input, dtype=None, name=None):  # noqa: A002
    """`tf.zeros_like`."""
    x = to_tensor(input)
    return execute(ZEROS_LIKE, (x,), {"dtype": x._dtype if dtype is None else
                                      dtypes.as_dtype(dtype)})


@composite_aware("ones_like")
def ones_like(input, dtype=None, name=None):  # noqa: A002
    """`tf.ones_like`."""
    x = to_tensor(input)
    return execute(ONES_LIKE, (x,), {"dtype": x._dtype if dtype is None else
                                     dtypes.as_dtype(dtype)})


def _per_example_meta(forward):
    """Rule for ops that describe their input (Shape, Size, Rank): each example's value."""
    def rule(arrays, batched, **attrs):
        one = forward(arrays[0][0] if batched[0] else arrays[0], **attrs)
        return np.broadcast_to(one, (len(arrays[0]),) + np.shape(one)).copy()
    rule.kind = "leading"
    return rule


def _shape_fwd(x, dtype):
    return np.array(x.shape, dtype=dtype.as_numpy_dtype)


def _size_fwd(x, dtype):
    return np.array(x.size, dtype=dtype.as_numpy_dtype)


def _rank_fwd(x):
    return np.array(x.ndim, dtype=np.int32)


# Registered ops (not Python shortcuts) so that graphs recompute them for new inputs.
# shape_only: their outputs follow the inputs' shapes, not their values (graph/tracing.py)
SHAPE = register(
    "Shape", _shape_fwd, grad=NOT_DIFFERENTIABLE, shape_only=True,
    shape=lambda x, dtype: Spec((len(x.shape),), dtype), batch=_per_example_meta(_shape_fwd),
    tf=lambda a, specs: ("Shape", {"out_type": a["dtype"]}), tf_outputs="output",
    tf_import=lambda ins, a: shape(ins[0], out_type=a.get("out_type", dtypes.int32)),
    onnx=_onnx_shape, unsupported="tflite")
SIZE = register(
    "Size", _size_fwd, grad=NOT_DIFFERENTIABLE, shape_only=True,
    shape=lambda x, dtype: Spec((), dtype), batch=_per_example_meta(_size_fwd),
    tf=lambda a, specs: ("Size", {"out_type": a["dtype"]}), tf_outputs="output",
    tf_import=lambda ins, a: size(ins[0], out_type=a.get("out_type", dtypes.int32)),
    unsupported="onnx tflite")
RANK = register(
    "Rank", _rank_fwd, grad=NOT_DIFFERENTIABLE, shape_only=True,
    shape=lambda x: Spec((), dtypes.int32), batch=_per_example_meta(_rank_fwd),
    tf="Rank", tf_outputs="output", unsupported="onnx tflite tf_import")


def shape(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """`tf.shape`: the dynamic shape as an int32 tensor."""
    return execute(SHAPE, (to_tensor(input),), {"dtype": dtypes.as_dtype(out_type)})


def size(input, out_type=dtypes.int32, name=None):  # noqa: A002
    """`tf.size`: number of elements."""
    return execute(SIZE, (to_tensor(input),), {"dtype": dtypes.as_dtype(out_type)})


def rank(input, name=None):  # noqa: A002
    """`tf.rank`."""
    return execute(RANK, (to_tensor(input),), None)


# -- concat / stack / unstack -----------------------------------------------------------------
_concatenate = np.concatenate


def _concat_fwd(*xs, axis):
    try:
        return np.concatenate(xs, axis=axis)
    except ValueError:
        raise invalid("ConcatV2", f"ConcatOp: dimensions of inputs should match except on axis "
                      f"{axis}: shapes {[list(x.shape) for x in xs]}") from None


def _concat_grad(g, ans, *xs, axis):
    nb = batch_dims(g, ans)
    sizes = [x._value.shape[axis] for x in xs]
    return split(g, sizes, axis=axis + nb)


def _concat_shape(*xs, axis):
    shape = list(xs[0].shape)
    total = [x.shape[axis] for x in xs]
    shape[axis] = None if None in total else sum(total)
    return Spec(tuple(shape), xs[0].dtype)


CONCAT = declare(register("ConcatV2", _concat_fwd, grad=_concat_grad, shape=_concat_shape),
                 batch=along_axis(_concat_fwd),
    tf=lambda a, specs: ("ConcatV2", {"N": len(specs)},
                         list(_pyrange(len(specs))) + [_i32([a["axis"]])[0]]),
    tf_outputs="output",
    tflite=lambda ctx, node: ctx.op(
        "CONCATENATION", [ctx.tensor(s) for s in node.inputs], [ctx.output(node)],
        options=("ConcatenationOptions", {"axis": int(node.attrs["axis"])})),
    onnx=lambda ctx, node: ctx.emit("Concat", ctx.inputs(node),
                                    axis=int(node.attrs["axis"])),
    tf_import=lambda ins, a: concat(list(ins[:-1]), int(ins[-1].numpy())))


def _same_dtype(op_name, values):
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    return tensor_args(op_name, list(values))


def _concat_fast(values, axis, name="concat"):
    if type(axis) is int and type(values) in (list, tuple) and len(values) > 1 and \
            type(values[0]) is Tensor:
        first = values[0]
        dt, nd = first._dtype, first._value.ndim
        if len(values) == 2:  # the commonest form, without a generator's frames
            second = values[1]
            same = type(second) is Tensor and second._dtype is dt and second._value.ndim == nd
        else:
            same = all(type(v) is Tensor and v._dtype is dt and v._value.ndim == nd
                       for v in values)
        if same and -nd <= axis < nd:
            try:
                return wrap(_concatenate([v._value for v in values], axis=axis))
            except ValueError:  # mismatched shapes: the general path words the error
                pass
    return DECLINED


@composite_aware("concat")
@fast_path(_concat_fast)
def concat(values, axis, name="concat"):
    """`tf.concat`: joins tensors along an existing axis."""
    xs = _same_dtype("ConcatV2", values)
    if not xs:
        raise ValueError("concat needs at least one tensor")
    nd = xs[0]._value.ndim
    if any(x._value.ndim != nd for x in xs):
        raise invalid("ConcatV2", f"ConcatOp: all inputs must have the same rank; got shapes "
                      f"{[list(x._value.shape) for x in xs]}")
    axis = single_axis(axis, nd, "ConcatV2")
    if len(xs) == 1:
        return identity(xs[0])
    return execute(CONCAT, tuple(xs), {"axis": axis})


def _split_grad(g, ans, x, sizes, axis):
    nb = batch_dims(g[0], ans[0])
    return concat(list(g), axis=axis + nb)


def _split_fwd(x, sizes, axis):
    # views by plain slicing: np.split's cumsum and array_split cost ~5 us on small inputs
    lead = (slice(None),) * (axis % x.ndim)
    out, start = [], 0
    for n in sizes:
        out.append(x[lead + (slice(start, start + n),)])
        start += n
    return out


SPLIT = register("SplitV", _split_fwd, grad=_split_grad, multi_output=True, unsupported="batch",
    tf_import=lambda ins, a: split(ins[0], [int(s) for s in ins[1].numpy()],
                                   axis=int(ins[2].numpy())),
    tf=lambda a, specs: ("SplitV", {"num_split": len(a["sizes"]),
                                    "Tlen": dtypes.int32},
                         [0, _i32(a["sizes"]), _i32([a["axis"]])[0]]),
    tf_outputs="output",
    tflite=_tflite_split,
    onnx=_onnx_split)


def split(value, num_or_size_splits, axis=0, num=None, name="split"):
    """`tf.split`: into `num_or_size_splits` equal parts, or parts of the given sizes."""
    x = to_tensor(value)
    nd = x._value.ndim
    if nd == 0:
        raise invalid("Split", "split: value must have rank >= 1, got a scalar")
    axis = single_axis(axis, nd, "Split")
    dim = x._value.shape[axis]
    if isinstance(num_or_size_splits, (int, np.integer)):
        n = int(num_or_size_splits)
        if n <= 0 or dim % n:
            raise invalid("Split", f"Number of ways to split should evenly divide the split "
                          f"dimension, but got split_dim {axis} (size = {dim}) and num_split {n}")
        sizes = [dim // n] * n
    else:
        sizes = int_list(num_or_size_splits, "num_or_size_splits")
        if sizes.count(-1) == 1:
            sizes[sizes.index(-1)] = dim - (sum(sizes) + 1)
        if sum(sizes) != dim or any(s < 0 for s in sizes):
            raise invalid("SplitV", f"Determined shape must either match input shape along "
                          f"split_dim exactly if fully specified, or be less than the size of "
                          f"the input along split_dim if not fully specified. Got sizes {sizes} "
                          f"for dimension {axis} of size {dim}")
    return list(execute(SPLIT, (x,), {"sizes": tuple(sizes), "axis": axis}))


def _stack_fwd(*xs, axis):
    try:
        return np.stack(xs, axis=axis)
    except ValueError:
        raise invalid("Pack", f"Shapes of all inputs must match: "
                      f"{[list(x.shape) for x in xs]}") from None


def _stack_grad(g, ans, *xs, axis):
    return unstack(g, axis=axis + batch_dims(g, ans))


def _stack_shape(*xs, axis):
    from tensorlite.ops.math_ops import _merged_shape  # noqa: PLC0415 - import cycle
    shape = list(_merged_shape(xs))
    shape.insert(axis if axis >= 0 else len(shape) + 1 + axis, len(xs))
    return Spec(tuple(shape), xs[0].dtype)


def _unstack_shape(x, axis):
    shape = list(x.shape)
    n = shape.pop(axis)
    return [Spec(tuple(shape), x.dtype)] * n


STACK = declare(register("Pack", _stack_fwd, grad=_stack_grad, shape=_stack_shape),
                batch=along_axis(_stack_fwd),
    tf=lambda a, specs: ("Pack", {"N": len(specs), "axis": a["axis"]}),
    tf_outputs="output",
    tflite=lambda ctx, node: ctx.op(
        "PACK", [ctx.tensor(s) for s in node.inputs], [ctx.output(node)],
        options=("PackOptions", {"values_count": len(node.inputs),
                                 "axis": int(node.attrs["axis"])})),
    onnx=_onnx_pack,
    tf_import=lambda ins, a: stack(list(ins), axis=a.get("axis", 0)))


@composite_aware("stack")
def stack(values, axis=0, name="stack"):
    """`tf.stack`: joins tensors along a new axis."""
    xs = _same_dtype("Pack", values)
    if not xs:
        raise ValueError("stack needs at least one tensor")
    nd = xs[0]._value.ndim
    if not -nd - 1 <= axis <= nd:
        raise invalid("Pack", f"stack: axis {axis} is out of range [{-nd - 1}, {nd}]")
    return execute(STACK, tuple(xs), {"axis": axis % (nd + 1)})


def _unstack_fwd(x, axis):
    return [np.take(x, i, axis=axis) for i in _pyrange(x.shape[axis])]


def _unstack_grad(g, ans, x, axis):
    nb = batch_dims(g[0], ans[0])
    return stack(list(g), axis=axis + nb)


UNSTACK = declare(register("Unpack", _unstack_fwd, grad=_unstack_grad, multi_output=True,
                           shape=_unstack_shape), batch=along_axis(_unstack_fwd),
    tf_import=lambda ins, a: unstack(ins[0], axis=a.get("axis", 0)),
    tf=lambda a, specs: ("Unpack", {"num": specs[0].shape[a["axis"]],
                                    "axis": a["axis"]}),
    tf_outputs="output",
    tflite=lambda ctx, node: ctx.op(
        "UNPACK", [ctx.tensor(node.inputs[0])],
        [ctx.output(node, i) for i in range(len(node.outputs))],
        options=("UnpackOptions", {"num": len(node.outputs), "axis": int(node.attrs["axis"])})),
    onnx=_onnx_unpack)


def unstack(value, num=None, axis=0, name="unstack"):
    """`tf.unstack`: splits along `axis` into a list of tensors of one rank less."""
    x = to_tensor(value)
    nd = x._value.ndim
    if nd == 0:
        raise ValueError("Cannot unstack a scalar tensor")
    axis = single_axis(axis, nd, "Unpack")
    if num is not None and num != x._value.shape[axis]:
        raise ValueError(f"unstack: num={num} does not match dimension {axis} of size "
                         f"{x._value.shape[axis]}")
    return list(execute(UNSTACK, (x,), {"axis": axis}))


_UNSTACK.append(unstack)


# -- tile -------------------------------------------------------------------------------------
def _tile_fwd(x, multiples):
    return np.tile(x, (1,) * (x.ndim - len(multiples)) + tuple(multiples))


def _tile_grad(g, ans, x, multiples):
    from tensorlite.ops.math_ops import reduce_sum  # noqa: PLC0415 - import cycle
    xs = x._value.shape
    reps = (1,) * (len(xs) - len(multiples)) + tuple(multiples)
    lead = _lead(g, ans)
    split_shape = lead + tuple(v for m, d in zip(reps, xs) for v in (m, d))
    copies = [len(lead) + 2 * i for i in _pyrange(len(xs))]
    return reduce_sum(reshape(g, split_shape), axis=copies)


TILE = register("Tile", _tile_fwd, grad=_tile_grad,
                shape=lambda x, multiples: Spec(
                    tuple(x.shape[:len(x.shape) - len(multiples)]) + tuple(
                        None if d is None else d * m
                        for d, m in zip(x.shape[len(x.shape) - len(multiples):], multiples)),
                    x.dtype), unsupported="tflite batch",
    tf=lambda a, specs: ("Tile", {}, [0, _i32(a["multiples"])]),
    tf_outputs="output",
    onnx=_onnx_tile,
    tf_import=lambda ins, a: tile(ins[0], ins[1].numpy()))


@composite_aware("tile")
def tile(input, multiples, name=None):  # noqa: A002
    """`tf.tile`: repeats the whole tensor `multiples[i]` times along dimension i.

    >>> tf.tile(tf.constant([[1, 2]]), [2, 2]).shape
    TensorShape([2, 4])"""
    x = to_tensor(input)
    m = tuple(int_list(multiples, "multiples"))
    nd = x._value.ndim
    if len(m) != nd:
        raise invalid("Tile", f"Expected multiples argument to be a vector of length {nd} but "
                      f"got length {len(m)} (input shape {list(x._value.shape)})")
    if any(v < 0 for v in m):
        raise invalid("Tile", f"Expected multiples to be non-negative, but got {list(m)}")
    return execute(TILE, (x,), {"multiples": m})


# -- pad --------------------------------------------------------------------------------------
def _np_pad(x, paddings, **kwargs):
    pads = ((0, 0),) * (x.ndim - len(paddings)) + tuple(paddings)
    return np.pad(x, pads, **kwargs) if pads else x.copy()  # NumPy rejects a scalar's ()


def _padded_shape(x, paddings):
    nb = len(x.shape) - len(paddings)
    return tuple(x.shape[:nb]) + tuple(None if d is None else d + lo + hi
                                       for d, (lo, hi) in zip(x.shape[nb:], paddings))


def _interior(paddings, shape):
    """The index that cuts the unpadded interior out of a padded tensor (leading dims kept)."""
    logical = shape[len(shape) - len(paddings):]
    return (Ellipsis,) + tuple(builtins.slice(lo, lo + d)
                               for (lo, _), d in zip(paddings, logical))


def _pad_grad(g, ans, x, c, paddings):
    from tensorlite.ops.math_ops import reduce_sum, subtract  # noqa: PLC0415
    from tensorlite.ops.slice_ops import getitem  # noqa: PLC0415
    gx = getitem(g, _interior(paddings, x._value.shape))
    axes = list(_pyrange(g._value.ndim - len(paddings), g._value.ndim))
    gc = subtract(reduce_sum(g, axis=axes), reduce_sum(gx, axis=axes)) if axes else None
    return gx, gc


PAD = register(
    "PadV2", lambda x, c, paddings: _np_pad(x, paddings, constant_values=c), grad=_pad_grad,
    shape=lambda x, c, paddings: Spec(_padded_shape(x, paddings), x.dtype),
    unsupported="batch", tflite=_tflite_pad,
    tf_import=lambda ins, a: pad(ins[0], ins[1].numpy().tolist(),
                                 constant_values=ins[2]),
    tf=lambda a, specs: ("PadV2", {}, [0, np.asarray(a["paddings"], np.int32), 1]),
    tf_outputs="output", onnx=_onnx_pad)


def _mirror_fold(g, paddings, mode):
    """Adjoint of a mirror pad: adds each reflected border back onto the cells it copies."""
    nb = g.ndim - len(paddings)
    off = 1 if mode == "REFLECT" else 0
    for i, (lo, hi) in enumerate(paddings):
        ax = nb + i
        n = g.shape[ax] - lo - hi

        def cut(a, b, ax=ax):
            return (builtins.slice(None),) * ax + (builtins.slice(a, b),)
        out = g[cut(lo, lo + n)].copy()
        if lo:
            out[cut(off, off + lo)] += np.flip(g[cut(0, lo)], ax)
        if hi:
            out[cut(n - off - hi, n - off)] += np.flip(g[cut(lo + n, lo + n + hi)], ax)
        g = out
    return g


def _mirror_unpadded_shape(g, paddings, mode):
    nb = len(g.shape) - len(paddings)
    return Spec(tuple(g.shape[:nb]) + tuple(None if d is None else d - lo - hi for d, (lo, hi)
                                            in zip(g.shape[nb:], paddings)), g.dtype)


MIRROR_PAD = register(
    "MirrorPad", lambda x, paddings, mode: _np_pad(x, paddings, mode=mode.lower()),
    grad=lambda g, ans, x, paddings, mode: execute(MIRROR_PAD_GRAD, (g,),
                                                   {"paddings": paddings, "mode": mode}),
    shape=lambda x, paddings, mode: Spec(_padded_shape(x, paddings), x.dtype),
    unsupported="tf onnx tflite batch tf_import")
MIRROR_PAD_GRAD = register(
    "MirrorPadGrad", _mirror_fold,
    grad=lambda gg, ans, g, paddings, mode: execute(MIRROR_PAD, (gg,),
                                                    {"paddings": paddings, "mode": mode}),
    shape=_mirror_unpadded_shape, unsupported="tf onnx tflite batch tf_import")


def _paddings_arg(paddings, x):
    p = np.asarray(paddings)
    nd = x._value.ndim
    if p.size == 0 and nd == 0:
        return ()
    if p.shape != (nd, 2) or p.dtype.kind not in "iu":
        raise invalid("Pad", f"paddings must be an integer matrix of shape [rank, 2] = [{nd}, 2] "
                      f"for an input of shape {list(x._value.shape)}; got shape "
                      f"{list(p.shape)} ({p.dtype})")
    if (p < 0).any():
        raise invalid("Pad", f"Paddings must be non-negative, got {p.tolist()}")
    return tuple((int(lo), int(hi)) for lo, hi in p)


def pad(tensor, paddings, mode="CONSTANT", constant_values=0, name=None):
    """`tf.pad`: pads with `constant_values` (CONSTANT) or a mirror image (REFLECT excludes
    the edge, SYMMETRIC repeats it).

    >>> tf.pad(tf.constant([1, 2, 3]), [[1, 2]], "REFLECT").numpy()
    array([2, 1, 2, 3, 2, 1], dtype=int32)"""
    x = to_tensor(tensor)
    pads = _paddings_arg(paddings, x)
    mode = str(mode).upper()
    if mode == "CONSTANT":
        from tensorlite.ops.common import tensor_args  # noqa: PLC0415
        x, c = tensor_args("PadV2", (x, constant_values), names=("tensor", "constant_values"))
        if c._value.ndim != 0:
            raise invalid("PadV2", f"constant_values must be a scalar, got shape "
                          f"{list(c._value.shape)}")
        return execute(PAD, (x, c), {"paddings": pads})
    if mode not in ("REFLECT", "SYMMETRIC"):
        raise ValueError(f'Value of argument `mode` expected to be one of "CONSTANT", '
                         f'"REFLECT", or "SYMMETRIC". Received `mode` = {mode}')
    for d, (lo, hi) in zip(x._value.shape, pads):
        if mode == "REFLECT" and max(lo, hi) >= max(d, 1):
            raise invalid("MirrorPad", f"paddings must be less than the dimension size: {lo}, "
                          f"{hi} not less than {d} (input shape {list(x._value.shape)})")
        if mode == "SYMMETRIC" and max(lo, hi) > d:
            raise invalid("MirrorPad", f"paddings must be no greater than the dimension size: "
                          f"{lo}, {hi} greater than {d} (input shape {list(x._value.shape)})")
    return execute(MIRROR_PAD, (x,), {"paddings": pads, "mode": mode})


# -- range / linspace -------------------------------------------------------------------------
# TF infers tf.range's dtype as the widest of its arguments' in this order.
_RANGE_ORDER = ["int8", "int16", "int32", "int64", "float16", "float32", "float64"]


def _range_dtype(values):
    ts = [to_tensor(v) for v in values]
    for t in ts:
        if t._dtype.name not in _RANGE_ORDER or t._value.ndim != 0:
            raise invalid("Range", f"range arguments must be real scalars; got a "
                          f"{t._dtype.name} tensor of shape {list(t._value.shape)}")
    return max((t._dtype for t in ts), key=lambda d: _RANGE_ORDER.index(d.name))


def range(start, limit=None, delta=1, dtype=None, name="range"):  # noqa: A001 - TF's name
    """`tf.range`: [start, start + delta, ...) up to `limit` (exclusive); the dtype is the
    widest of the arguments' (int32 for ints, float32 for floats) unless given.

    >>> tf.range(1, 10, 3).numpy()
    array([1, 4, 7], dtype=int32)"""
    if limit is None:
        start, limit = 0, start
    dt = _range_dtype((start, limit, delta)) if dtype is None else dtypes.as_dtype(dtype)
    if dt.kind not in "iuf":
        raise invalid("Range", f"range does not support dtype {dt.name}")
    args = [to_tensor(v) for v in (start, limit, delta)]
    if any(isinstance(v, Tensor) for v in (start, limit, delta)):
        return execute(RANGE, tuple(args), {"dtype": dt})  # a graph computes it per run
    return wrap(_range_fwd(*[a._value for a in args], dtype=dt))


def _range_fwd(start, limit, delta, dtype):
    np_dt = dtype.as_numpy_dtype
    vals = [np.asarray(v) for v in (start, limit, delta)]
    s, lim, d = (np.trunc(v).astype(np_dt) if dtype.is_integer and v.dtype.kind == "f"
                 else v.astype(np_dt) for v in vals)
    s, lim, d = s.item(), lim.item(), d.item()
    for arg, v in (("start", s), ("limit", lim), ("delta", d)):
        if not np.isfinite(v):
            raise invalid("Range", f"Requires {arg} to be finite, got {v}")
    if d == 0:
        raise invalid("Range", f"Requires delta != 0: {d}")
    if d > 0 and s > lim:
        raise invalid("Range", f"Requires start <= limit when delta > 0: {s}/{lim}")
    if d < 0 and s < lim:
        raise invalid("Range", f"Requires start >= limit when delta < 0: {s}/{lim}")
    if dtype.is_integer:
        n = (abs(lim - s) + abs(d) - 1) // abs(d)
    else:
        n = int(np.ceil(abs((lim - s) / d)))
    _shape_arg([n], "Range", dtype)
    return np.arange(n, dtype=np_dt) * np_dt(d) + np_dt(s)


RANGE = register(
    "Range", _range_fwd, grad=NOT_DIFFERENTIABLE, shape=lambda *specs, dtype: Spec((None,), dtype),
    unsupported="tf onnx tflite batch", tf_import=lambda ins, a: range(*ins, dtype=a.get("Tidx")))


def linspace(start, stop, num, name=None, axis=0):
    """`tf.linspace`: `num` evenly spaced values from `start` to exactly `stop` along a new
    `axis` (start and stop may be tensors of one shape); differentiable in both.

    >>> tf.linspace(10.0, 12.0, 3).numpy()
    array([10., 11., 12.], dtype=float32)"""
    from tensorlite.ops import math_ops as m  # noqa: PLC0415
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    a, b = tensor_args("LinSpace", (start, stop), "fiu", ("start", "stop"))
    if a._dtype.is_integer:  # TF divides integers with truediv: float64
        a, b = m.cast(a, dtypes.float64), m.cast(b, dtypes.float64)
    num = int(np.asarray(num))
    if num <= 0:
        raise ValueError(f"linspace: num must be positive, got {num}")
    a, b = m.multiply(a, m.ones_like_t(b)), m.multiply(b, m.ones_like_t(a))  # broadcast
    _shape_arg(a._value.shape + (num,), "LinSpace", a._dtype)  # before any allocation
    nd = a._value.ndim
    if not -nd - 1 <= axis <= nd:
        raise invalid("LinSpace", f"linspace: axis {axis} is out of range [{-nd - 1}, {nd}]")
    a, b = expand_dims(a, axis), expand_dims(b, axis)
    if num == 1:
        return a
    shape = [1] * (nd + 1)
    shape[axis % (nd + 1)] = num - 1
    steps = wrap(np.arange(num - 1, dtype=a._value.dtype).reshape(shape))
    delta = m.divide(m.subtract(b, a), wrap(np.array(num - 1, dtype=a._value.dtype)))
    return concat([m.add(a, m.multiply(steps, delta)), b], axis=axis)


# -- reverse / roll ---------------------------------------------------------------------------
REVERSE = register("ReverseV2", lambda x, axis: np.flip(x, axis),
                   grad=lambda g, ans, x, axis: execute(REVERSE, (g,), {"axis": axis}),
                   shape=lambda x, axis: x, unsupported="tf onnx tflite batch tf_import")


@composite_aware("reverse")
def reverse(tensor, axis, name=None):
    """`tf.reverse`: flips the tensor along each dimension in `axis`.

    >>> tf.reverse(tf.constant([[1, 2], [3, 4]]), [1]).numpy()
    array([[2, 1],
           [4, 3]], dtype=int32)"""
    x = to_tensor(tensor)
    nd = x._value.ndim
    axes = int_list(axis, "axis")
    for a in axes:
        if not -nd <= a < nd:
            raise invalid("ReverseV2", f"'axis'[{axes.index(a)}] = {a} is out of valid range "
                          f"[{-nd}, {nd}) for a tensor of shape {list(x._value.shape)}")
    norm = [a % nd for a in axes]
    if len(set(norm)) != len(norm):
        raise invalid("ReverseV2", f"axis {axes} names a dimension more than once")
    # Negative axes let the same op flip a cotangent that carries leading batch dims.
    return execute(REVERSE, (x,), {"axis": tuple(a - nd for a in norm)})


ROLL = register("Roll", lambda x, shift, axis: np.roll(x, shift, axis),
                grad=lambda g, ans, x, shift, axis: execute(
                    ROLL, (g,), {"shift": tuple(-s for s in shift), "axis": axis}),
                shape=lambda x, shift, axis: x, unsupported="tf onnx tflite batch tf_import")


def roll(input, shift, axis, name=None):  # noqa: A002
    """`tf.roll`: shifts elements cyclically by `shift[i]` along `axis[i]` (repeated axes
    add up).

    >>> tf.roll(tf.constant([0, 1, 2, 3]), 1, 0).numpy()
    array([3, 0, 1, 2], dtype=int32)"""
    x = to_tensor(input)
    nd = x._value.ndim
    shifts, axes = int_list(shift, "shift"), int_list(axis, "axis")
    if len(shifts) != len(axes):
        raise invalid("Roll", f"shift and axis must have the same size, got shift {shifts} and "
                      f"axis {axes}")
    for a in axes:
        if not -nd <= a < nd:
            raise invalid("Roll", f"axis {a} is out of range for a tensor of shape "
                          f"{list(x._value.shape)}; use an axis in [{-nd}, {nd})")
    return execute(ROLL, (x,), {"shift": tuple(shifts),
                                "axis": tuple(a % nd - nd for a in axes)})


def meshgrid(*args, **kwargs):
    """`tf.meshgrid`: coordinate grids from 1-D tensors; `indexing="xy"` (default) swaps the
    first two output dimensions, `"ij"` does not.

    Examples:
        >>> [t.shape for t in tf.meshgrid([1, 2, 3], [4, 5])]
        [TensorShape([2, 3]), TensorShape([2, 3])]"""
    indexing = kwargs.pop("indexing", "xy")
    kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keywords: {', '.join(repr(k) for k in kwargs)}")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got "
                         f"'{indexing}'")
    if not args:
        return []
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    xs = [reshape(x, (-1,)) for x in tensor_args("Meshgrid", list(args))]
    n = len(xs)
    pos = list(_pyrange(n))
    if indexing == "xy" and n > 1:
        pos[0], pos[1] = 1, 0
    out_shape = [0] * n
    for x, p in zip(xs, pos):
        out_shape[p] = x._value.shape[0]
    out = []
    for x, p in zip(xs, pos):
        shape = [1] * n
        shape[p] = -1
        out.append(broadcast_to(reshape(x, shape), out_shape))
    return out


Unique = namedtuple("Unique", ["y", "idx"])


def unique(x, out_idx=dtypes.int32, name=None):
    """`tf.unique`: the distinct values of a 1-D tensor in order of first appearance, and
    each element's position among them.

    >>> y, idx = tf.unique(tf.constant([1, 1, 2, 4, 4, 4, 7, 8, 8]))
    >>> y.numpy(), idx.numpy()
    (array([1, 2, 4, 7, 8], dtype=int32), array([0, 0, 1, 2, 2, 2, 3, 4, 4], dtype=int32))"""
    t = to_tensor(x)
    if t._value.ndim != 1:
        raise invalid("Unique", f"unique expects a 1D vector, got shape {list(t._value.shape)}")
    # Not a registered op: the output's length depends on the values (no static shape rule).
    vals, first, inv = np.unique(t._value, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank_of = np.empty_like(order)
    rank_of[order] = np.arange(order.size)
    idx = rank_of[inv.reshape(-1)].astype(dtypes.as_dtype(out_idx).as_numpy_dtype)
    return Unique(wrap(vals[order]), wrap(idx))

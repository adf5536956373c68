"""Joining and splitting tensors: concat, split, stack and unstack, each op's
registration with all its consumers' rules."""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, declare, register
from tensorlite.framework.tensor import Tensor, _UNSTACK, wrap
from tensorlite.ops.array_common import int32s
from tensorlite.ops.batching import along_axis
from tensorlite.ops.common import (DECLINED, batch_dims, composite_aware, fast_path, int_list,
                                   single_axis, to_tensor)
from tensorlite.ops.reshape_ops import identity


def _same_dtype(op_name, values):
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    return tensor_args(op_name, list(values))


# -- concat -----------------------------------------------------------------------------------
_concatenate = np.concatenate


def _joining(np_join, op_name, message):
    """A joining op's forward: NumPy's `np_join`, whose shape mismatch becomes the op's
    InvalidArgumentError with TF's `message(axis, shapes)`."""
    def fwd(*xs, axis):
        try:
            return np_join(xs, axis=axis)
        except ValueError:
            raise invalid(op_name, message(axis, [list(x.shape) for x in xs])) from None
    return fwd


_concat_fwd = _joining(np.concatenate, "ConcatV2", lambda axis, shapes: (
    f"ConcatOp: dimensions of inputs should match except on axis {axis}: shapes {shapes}"))


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
                         list(range(len(specs))) + [int32s([a["axis"]])[0]]),
    tf_outputs="output",
    tflite=lambda ctx, node: ctx.op(
        "CONCATENATION", [ctx.tensor(s) for s in node.inputs], [ctx.output(node)],
        options=("ConcatenationOptions", {"axis": int(node.attrs["axis"])})),
    onnx=lambda ctx, node: ctx.emit("Concat", ctx.inputs(node),
                                    axis=int(node.attrs["axis"])),
    tf_import=lambda ins, a: concat(list(ins[:-1]), int(ins[-1].numpy())))


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


# -- split ------------------------------------------------------------------------------------
def _onnx_split(ctx, node):
    sizes = node.attrs["sizes"]
    out = ctx.split(ctx.inputs(node)[0], sizes, node.attrs["axis"])
    return [out] if isinstance(out, str) else out


def _tflite_split(ctx, node):
    sizes = np.asarray(node.attrs["sizes"], np.int32)
    axis = np.asarray(node.attrs["axis"], np.int32)
    ctx.op("SPLIT_V", [ctx.tensor(node.inputs[0]), ctx.const(sizes, "sizes"),
                       ctx.const(axis, "axis")],
           [ctx.output(node, i) for i in range(len(node.outputs))],
           options=("SplitVOptions", {"num_splits": len(node.outputs)}))


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
                         [0, int32s(a["sizes"]), int32s([a["axis"]])[0]]),
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


# -- stack / unstack --------------------------------------------------------------------------
def _onnx_pack(ctx, node):
    axis = int(node.attrs["axis"])
    return ctx.emit("Concat", [ctx.unsqueeze(x, [axis]) for x in ctx.inputs(node)], axis=axis)


def _onnx_unpack(ctx, node):
    axis = int(node.attrs["axis"])
    parts = ctx.split(ctx.inputs(node)[0], [1] * len(node.outputs), axis)
    parts = [parts] if isinstance(parts, str) else parts
    return [ctx.squeeze(p, [axis]) for p in parts]


_stack_fwd = _joining(np.stack, "Pack",
                      lambda axis, shapes: f"Shapes of all inputs must match: {shapes}")


def _stack_grad(g, ans, *xs, axis):
    return unstack(g, axis=axis + batch_dims(g, ans))


def _stack_shape(*xs, axis):
    from tensorlite.ops.math_ops import merged_shape  # noqa: PLC0415 - import cycle
    shape = list(merged_shape(xs))
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
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


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

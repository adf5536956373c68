"""Shape-changing views of one tensor: reshape, transpose, expand_dims, squeeze,
identity and broadcast_to, each op's registration with all its consumers' rules."""
import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, declare, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops.array_common import int32s, lead_shape
from tensorlite.ops.batching import broadcast_to_rule, reshape_rule, transpose_rule
from tensorlite.ops.common import (DECLINED, batch_dims, composite_aware, fast_path, int_list,
                                   norm_axis, to_tensor)


# -- reshape ---------------------------------------------------------------------------------
# export rules: ONNX (the rule's form: tensorlite/onnx/__init__.py), TFLite
# (tensorlite/lite/convert/converter.py) and TensorFlow's ops
# (tensorlite/saved_model/function_def.py)
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


def _tflite_reshape(ctx, node):
    new_shape = np.asarray(_export_reshape_target(ctx, node), np.int32)
    ctx.op("RESHAPE", [ctx.tensor(node.inputs[0]), ctx.const(new_shape, "shape")],
           [ctx.output(node)], options=("ReshapeOptions", {"new_shape": new_shape}))


def _reshape_tf(attrs, in_specs):
    shape = list(attrs["shape"])
    if shape.count(None) + shape.count(-1) > 1:
        raise errors.UnimplementedError(None, None, f"Reshape to {shape} (None: sizes that "
                                        f"follow the batch size) has no TensorFlow form with "
                                        f"one inferred dimension")
    return "Reshape", {}, [0, int32s(-1 if d is None else d for d in shape)]


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
    grad=lambda g, ans, x, shape: reshape(g, lead_shape(g, ans) + x._value.shape),
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
@composite_aware("reshape")
def reshape(tensor, shape, name=None):
    """`tf.reshape`. >>> tf.reshape(tf.range(6), [2, -1]).shape
    TensorShape([2, 3])"""
    return execute(RESHAPE, (to_tensor(tensor),), {"shape": tuple(int_list(shape, "shape"))})


# -- transpose -------------------------------------------------------------------------------
def _transpose_grad(g, ans, x, perm):
    nb = batch_dims(g, ans)
    inv = np.argsort(perm)
    return transpose(g, list(range(nb)) + [nb + int(i) for i in inv])


TRANSPOSE = register(
    "Transpose", lambda x, perm: np.transpose(x, perm), grad=_transpose_grad,
    shape=lambda x, perm: Spec(tuple(x.shape[p] for p in perm), x.dtype),
    simplify="transpose", moves_values=True,
    tf=lambda a, specs: ("Transpose", {}, [0, int32s(a["perm"])]),
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
    perm = list(range(nd))[::-1] if perm is None else int_list(perm, "perm")
    if sorted(p % nd if nd else p for p in perm) != list(range(nd)):
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
def _tflite_identity(ctx, node):
    ctx.slots[node.outputs[0]] = ctx.tensor(node.inputs[0])


IDENTITY = register(
    "Identity", lambda x: x, grad=lambda g, ans, x: g, shape=lambda x: x, jit=("alias",),
    moves_values=True,
    numexpr="{0}", simplify="identity", unsupported="batch tf_import", tf="Identity",
    tf_outputs="output", tflite=_tflite_identity, onnx="Identity")


def identity(input, name=None):  # noqa: A002
    """`tf.identity`: the same value as a new tensor (a node the tape records)."""
    return execute(IDENTITY, (to_tensor(input),), None)


def _broadcast_grad(g, ans, x, shape):
    from tensorlite.ops.common import unbroadcast  # noqa: PLC0415
    return unbroadcast(g, x, ans)


def _broadcast_fwd(x, shape):
    try:
        return np.broadcast_to(x, shape)
    except ValueError:
        raise invalid("BroadcastTo", f"Unable to broadcast tensor of shape {list(x.shape)} to "
                      f"shape {list(shape)}; each dimension must match or be 1") from None


def _onnx_broadcast(ctx, node):
    if ctx.varying(node, "shape"):
        ctx.unsupported(node, "broadcasts to a shape that follows the batch size")
    return ctx.emit("Expand", [ctx.inputs(node)[0], ctx.ints(node.attrs["shape"])])


BROADCAST_TO = declare(
    register("BroadcastTo", _broadcast_fwd, grad=_broadcast_grad,
             shape=lambda x, shape: Spec(tuple(shape), x.dtype), unsupported="tf tflite"),
    batch=broadcast_to_rule, onnx=_onnx_broadcast,
    tf_import=lambda ins, a: broadcast_to(ins[0], ins[1].numpy()))


def broadcast_to(input, shape, name=None):  # noqa: A002
    """`tf.broadcast_to`."""
    return execute(BROADCAST_TO, (to_tensor(input),), {"shape": tuple(int_list(shape, "shape"))})

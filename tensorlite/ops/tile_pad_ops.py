"""Tiling and padding: tf.tile and tf.pad (constant and mirror), each op's registration
with all its consumers' rules."""
import builtins

import numpy as np

from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, register
from tensorlite.ops.array_common import int32s, lead_shape
from tensorlite.ops.common import composite_aware, int_list, to_tensor
from tensorlite.ops.reshape_ops import reshape


# -- tile -------------------------------------------------------------------------------------
def _onnx_tile(ctx, node):
    x, = ctx.inputs(node)
    reps = tuple(node.attrs["multiples"])
    reps = (1,) * (len(ctx.shape(node.inputs[0])) - len(reps)) + reps
    return ctx.emit("Tile", [x, ctx.ints(reps)])


def _tile_fwd(x, multiples):
    return np.tile(x, (1,) * (x.ndim - len(multiples)) + tuple(multiples))


def _tile_grad(g, ans, x, multiples):
    from tensorlite.ops.math_ops import reduce_sum  # noqa: PLC0415 - import cycle
    xs = x._value.shape
    reps = (1,) * (len(xs) - len(multiples)) + tuple(multiples)
    lead = lead_shape(g, ans)
    split_shape = lead + tuple(v for m, d in zip(reps, xs) for v in (m, d))
    copies = [len(lead) + 2 * i for i in range(len(xs))]
    return reduce_sum(reshape(g, split_shape), axis=copies)


TILE = register("Tile", _tile_fwd, grad=_tile_grad,
                shape=lambda x, multiples: Spec(
                    tuple(x.shape[:len(x.shape) - len(multiples)]) + tuple(
                        None if d is None else d * m
                        for d, m in zip(x.shape[len(x.shape) - len(multiples):], multiples)),
                    x.dtype), unsupported="tflite batch",
    tf=lambda a, specs: ("Tile", {}, [0, int32s(a["multiples"])]),
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
    axes = list(range(g._value.ndim - len(paddings), g._value.ndim))
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

"""What convolution (conv_ops) and pooling (pooling_ops) share: their argument checks
(data format, rank, strides/dilations/ksize, padding), the moves between NCHW and NHWC, a
1-D op as a 2-D one of height 1, and how explicit pads are written for TensorFlow, ONNX and
TFLite."""
import numpy as np

from tensorlite.framework.dispatch import invalid
from tensorlite.ops.common import int_list
from tensorlite.ops.conv_kernels import same_pads
from tensorlite.ops.reshape_ops import reshape, transpose


# -- argument handling ----------------------------------------------------------------------
def check_format(op, data_format, allowed):
    """ValueError unless `data_format` is one of `allowed`."""
    if data_format not in allowed:
        raise ValueError(f"{op}: data_format must be one of {list(allowed)}, got "
                         f"{data_format!r}")


def hw_arg(op, value, what, channels_last, default=1):
    """strides/dilations/ksize as TF takes them (int, or 1, 2 or 4 ints) -> (h, w)."""
    if value is None:
        value = default
    v = int_list(value, what)
    if len(v) == 1:
        v = v * 2
    elif len(v) == 4:
        outer = (v[0], v[3]) if channels_last else (v[0], v[1])
        if outer != (1, 1):
            raise invalid(op, f"{op}: {what}={v} has {what} in the batch or depth dimension; "
                          f"only height and width may differ from 1 (e.g. {what}=[1, 2, 2, 1] "
                          f"for NHWC)")
        v = v[1:3] if channels_last else v[2:4]
    elif len(v) != 2:
        raise ValueError(f"{op}: {what} must be an int or a list of 1, 2 or 4 ints, got "
                         f"{value!r}")
    if any(x is None or x < 1 for x in v):
        raise invalid(op, f"{op}: {what} must be positive, got {value!r}")
    return tuple(v)


def pads_arg(op, padding, in_hw, k_hw, strides, dilations, channels_last):
    """TF's padding argument -> (top, bottom, left, right), checking the output isn't empty."""
    if isinstance(padding, str):
        mode = padding
        if mode == "SAME":
            ph = same_pads(in_hw[0], k_hw[0], strides[0], dilations[0])
            pw = same_pads(in_hw[1], k_hw[1], strides[1], dilations[1])
            return ph + pw
        if mode != "VALID":
            raise ValueError(f"{op}: padding must be 'SAME', 'VALID' or a list of explicit "
                             f"paddings, got {padding!r} (TensorFlow's names are upper case)")
        pads = (0, 0, 0, 0)
    else:
        pairs = [int_list(p, "padding") for p in padding]
        if len(pairs) != 4 or any(len(p) != 2 for p in pairs) or \
                any(x < 0 for p in pairs for x in p):
            raise invalid(op, f"{op}: explicit padding must be 4 pairs of non-negative ints "
                          f"(one per dimension), got {padding!r}")
        outer = (pairs[0], pairs[3]) if channels_last else (pairs[0], pairs[1])
        if any(x for p in outer for x in p):
            raise invalid(op, f"{op}: explicit padding of the batch or channel dimension must "
                          f"be 0, got {padding!r}")
        hw = pairs[1:3] if channels_last else pairs[2:4]
        pads = (hw[0][0], hw[0][1], hw[1][0], hw[1][1])
    for a, name in ((0, "height"), (1, "width")):
        eff = (k_hw[a] - 1) * dilations[a] + 1
        size = in_hw[a] + pads[2 * a] + pads[2 * a + 1]
        if size < eff:
            raise invalid(op, f"{op}: Computed output size would be negative: the window of "
                          f"effective {name} {eff} (kernel {k_hw[a]}, dilation "
                          f"{dilations[a]}) is larger than the padded input {name} {size} "
                          f"(input {name} {in_hw[a]}); use padding='SAME', a smaller "
                          f"kernel or a larger input")
    return pads


def to_nhwc(x, data_format):
    """`x` in NHWC, transposed from NCHW when `data_format` is channels-first."""
    return x if data_format.endswith("C") else transpose(x, [0, 2, 3, 1])


def from_nhwc(y, data_format):
    """`y` (NHWC) back in `data_format`."""
    return y if data_format.endswith("C") else transpose(y, [0, 3, 1, 2])


def rank_check(op, t, rank, what, layout):
    """InvalidArgumentError unless `t` has `rank` dimensions (`layout` names them)."""
    if t._value.ndim != rank:
        raise invalid(op, f"{op}: {what} must be rank {rank} ({layout}), got shape "
                      f"{list(t._value.shape)}; add or remove dimensions with tf.reshape / "
                      f"tf.expand_dims")


# -- 1-D ops as 2-D ones of height 1 --------------------------------------------------------
def arg_1d(op, value, what, axis):
    """A 1-D stride/dilation/ksize (an int, or 1 or 3 ints) -> [1, v] for conv2d/pool2d."""
    v = int_list(1 if value is None else value, what)
    if len(v) == 3:
        v = [v[axis]]
    if len(v) != 1:
        raise ValueError(f"{op}: {what} must be an int or a list of 1 or 3 ints, got {value!r}")
    return [1, v[0]]


def as_2d(op, x, data_format):
    """A 1-D op's [N, W, C] (or [N, C, W]) input as a 2-D one of height 1: (the 4-D
    input, the axis of the unit height, the 2-D data format)."""
    check_format(op, data_format, ("NWC", "NCW"))
    rank_check(op, x, 3, "input", "[batch, width, channels]" if data_format == "NWC"
                else "[batch, channels, width]")
    axis = 1 if data_format == "NWC" else 2  # the unit height goes just before the width
    x4 = reshape(x, x._value.shape[:axis] + (1,) + x._value.shape[axis:])
    return x4, axis, "NHWC" if data_format == "NWC" else "NCHW"


def squeeze_2d(y, axis):
    """The 2-D result of a 1-D op without its unit height at `axis`."""
    return reshape(y, y._value.shape[:axis] + y._value.shape[axis + 1:])


# -- explicit pads in each export format ----------------------------------------------------
def tf_padding(pads, hw, ksize, strides, dilations):
    """TensorFlow's padding attributes of our explicit pads: "VALID", "SAME" where they are
    SAME's pads for this input size, else "EXPLICIT" with NHWC explicit_paddings."""
    if not any(pads):
        return {"padding": "VALID"}
    if None not in hw and all(
            (pads[2 * i], pads[2 * i + 1]) == same_pads(hw[i], ksize[i], strides[i],
                                                         dilations[i]) for i in (0, 1)):
        return {"padding": "SAME"}
    return {"padding": "EXPLICIT", "explicit_paddings": [0, 0, *pads, 0, 0]}


# ONNX convolves and pools NCHW: the rules transpose around the op (runtimes cancel adjacent
# transposes).
TO_NCHW, TO_NHWC = (0, 3, 1, 2), (0, 2, 3, 1)


def onnx_pads(pads):
    """Our (top, bottom, left, right) pads in ONNX's [top, left, bottom, right]."""
    top, bottom, left, right = (int(p) for p in pads)
    return [top, left, bottom, right]


def tflite_padding(ctx, node, ksize, dilations, pad_op=True):
    """'VALID' or 'SAME' when the node's explicit pads are TensorFlow's for that padding;
    otherwise (convolutions only: zeros are their padding) the input is padded by an
    explicit PAD op first. Returns (padding, input tensor)."""
    x = node.inputs[0]
    pads = tuple(int(p) for p in node.attrs["pads"])
    inp = ctx.tensor(x)
    if not any(pads):
        return "VALID", inp
    shape = ctx.shape(x)
    same = []
    for size, k, s, d in zip(shape[1:3], ksize, node.attrs["strides"], dilations):
        total = max((-(-size // s) - 1) * s + (k - 1) * d + 1 - size, 0)
        same += [total // 2, total - total // 2]
    if tuple(same) == pads:
        return "SAME", inp
    if not pad_op:
        ctx.unsupported(node, f"with pads {pads} (neither SAME nor VALID) has no TFLite "
                              f"builtin")
    padded_shape = (shape[0], shape[1] + pads[0] + pads[1], shape[2] + pads[2] + pads[3],
                    shape[3])
    out = ctx.new_tensor(padded_shape, ctx.dtype(x), "pad")
    paddings = np.asarray([[0, 0], pads[0:2], pads[2:4], [0, 0]], np.int32)
    ctx.op("PAD", [inp, ctx.const(paddings, "paddings")], [out])
    return "VALID", out

"""Convolution ops (`tf.nn.conv2d`, `depthwise_conv2d`, `conv2d_transpose`, ...), each with
its backprop ops and all their rules; the kernels are in conv_kernels.py, the argument
checks and padding forms shared with pooling in conv_args.py, pooling in pooling_ops.py.

Convolution is im2col: a strided view of the padded input gathers the patches into a
[rows, KH*KW*C] matrix that meets the filter in one matmul. The rows are built for a
cache-sized run of images at a time into one reused buffer, so the copy is still in cache
when the matmul reads it (measured 1.2-1.6x faster than one huge patch matrix). The
backward passes are ops of their own (`Conv2DBackpropInput`, `Conv2DBackpropFilter`,
`MaxPoolGrad`, ...), each with its own gradient, so gradients of any order work. A stride-1
input gradient is itself a convolution (cotangent with the flipped filter), so it reuses
the forward path; other strides scatter-add per kernel tap (col2im).

Batching: every op of a family accepts extra leading dimensions on either operand, and they
broadcast (as matmul's batch dimensions do). That is what lets gradient rules take
cotangents with leading batch dimensions, and lets second-order rules feed a batched filter
back in. Internally the leading dimensions are folded into N where the filter is unbatched.

Example:
    >>> x = tf.ones([1, 5, 5, 1]); k = tf.ones([3, 3, 1, 1])
    >>> tf.nn.conv2d(x, k, strides=1, padding="SAME")[0, :, :, 0].numpy()[0]
    array([4., 6., 6., 6., 4.], dtype=float32)
"""
import numpy as np

from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, input_needs_grad, register
from tensorlite.framework.tensor import Tensor
from tensorlite.ops.conv_args import (TO_NCHW, TO_NHWC, arg_1d, as_2d, check_format, from_nhwc,
                                      hw_arg, onnx_pads, pads_arg, rank_check, squeeze_2d,
                                      tf_padding, tflite_padding, to_nhwc)
from tensorlite.ops.batching import leading
from tensorlite.ops.common import FLOAT, batch_dims, int_list, tensor_args, to_tensor
from tensorlite.ops.conv_kernels import (bf_threaded, bi_threaded, conv_fwd, dw_bf_fwd,
                                         dw_bi_fwd, dw_fwd, out_len)
from tensorlite.ops.math_ops import reduce_sum
from tensorlite.ops.reshape_ops import reshape

__all__ = []


# -- shape rules ----------------------------------------------------------------------------
def _bcast(a, b):
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    return tuple(q if p == 1 else p if q in (1, p) else None for p, q in zip(a, b))


def _conv_out_shape(channels):
    def rule(x, w, strides, dilations, pads):
        h, wd = x.shape[-3:-1]
        kh, kw = w.shape[-4:-2]
        if None not in (x.shape[-1], w.shape[-2]) and x.shape[-1] != w.shape[-2]:
            raise ValueError(f"the input's depth {x.shape[-1]} differs from the filter's "
                             f"input depth {w.shape[-2]} (input {list(x.shape)}, filter "
                             f"{list(w.shape)})")
        oh = out_len(h, kh, strides[0], dilations[0], pads[0], pads[1])
        ow = out_len(wd, kw, strides[1], dilations[1], pads[2], pads[3])
        if any(d is not None and d <= 0 for d in (oh, ow)):  # as Keras refuses them
            raise ValueError(f"the output would have no rows or columns ({oh} x {ow}): the "
                             f"input {list(x.shape)} is smaller than the filter "
                             f"{list(w.shape)} spans")
        return Spec(_bcast(x.shape[:-4], w.shape[:-4]) + (x.shape[-4], oh, ow,
                                                          channels(w.shape)), x.dtype)
    return rule


def _bi_shape(g, w, input_hw, **_):
    return Spec(_bcast(g.shape[:-4], w.shape[:-4]) + (g.shape[-4],) + tuple(input_hw) +
                (w.shape[-2],), g.dtype)


def _bf_shape(tail):
    def rule(x, g, filter_hw, **_):
        return Spec(_bcast(x.shape[:-4], g.shape[:-4]) + tuple(filter_hw) +
                    tail(x.shape[-1], g.shape[-1]), g.dtype)
    return rule


# -- gradients ------------------------------------------------------------------------------
def _sum_to(t, nb, shape):
    """Sums `t` ([nb batch dims] + broadcast shape) down to [nb batch dims] + `shape`."""
    tshape = t._value.shape
    core = tshape[nb:]
    shape = tuple(shape)
    if core == shape:
        return t
    lead = len(core) - len(shape)
    axes = list(range(nb, nb + lead)) + [nb + lead + i for i, d in enumerate(shape)
                                         if d == 1 and core[lead + i] != 1]
    if axes:
        t = reduce_sum(t, axis=axes)
    return reshape(t, tshape[:nb] + shape)


class _ConvFamily:
    """A convolution op with its input- and filter-backprop ops: each is the others'
    gradient (all three are bilinear), so every order of derivative closes on the three."""

    def __init__(self, name, fwd, bi_fwd, bf_fwd, out_channels, filter_tail, **rules):
        # cost: the parallel pass's work estimate (graph/passes/parallel.py); `rules`: the
        # convolution's export and import rules; forwards take leading batch dims
        self.fwd = register(name, fwd, grad=self._fwd_grad, shape=_conv_out_shape(out_channels),
                            cost="conv", batch=leading(fwd), **rules)
        # the backprops run in training only: no inference format writes them
        self.bi_op = register(name + "BackpropInput", bi_fwd, grad=self._bi_grad,
                              shape=_bi_shape, cost="conv_backprop_input",
                              batch=leading(bi_fwd), unsupported="tf onnx tflite tf_import")
        self.bf_op = register(name + "BackpropFilter", bf_fwd, grad=self._bf_grad,
                              shape=_bf_shape(filter_tail), cost="conv_backprop_filter",
                              batch=leading(bf_fwd), unsupported="tf onnx tflite tf_import")

    def conv(self, x, w, geo):
        return execute(self.fwd, (x, w), geo)

    def bi(self, g, w, input_hw, geo):
        return execute(self.bi_op, (g, w), dict(geo, input_hw=tuple(input_hw)))

    def bf(self, x, g, filter_hw, geo):
        return execute(self.bf_op, (x, g), dict(geo, filter_hw=tuple(filter_hw)))

    def _fwd_grad(self, c, ans, x, w, **geo):
        nb = batch_dims(c, ans)
        xs, ws = x._value.shape, w._value.shape
        # a first layer's input gradient is a third of its backward pass: skip it unneeded
        return (_sum_to(self.bi(c, w, xs[-3:-1], geo), nb, xs) if input_needs_grad(0)
                else None,
                _sum_to(self.bf(x, c, ws[-4:-2], geo), nb, ws) if input_needs_grad(1)
                else None)

    def _bi_grad(self, c, ans, g, w, input_hw, **geo):
        nb = batch_dims(c, ans)
        gs, ws = g._value.shape, w._value.shape
        return (_sum_to(self.conv(c, w, geo), nb, gs),
                _sum_to(self.bf(c, g, ws[-4:-2], geo), nb, ws))

    def _bf_grad(self, c, ans, x, g, filter_hw, **geo):
        nb = batch_dims(c, ans)
        xs, gs = x._value.shape, g._value.shape
        return (_sum_to(self.bi(g, c, xs[-3:-1], geo), nb, xs),
                _sum_to(self.conv(x, c, geo), nb, gs))


# -- argument handling (the checks shared with pooling are in conv_args.py) -----------------
def _conv_prep(op, input, filters, strides, padding, data_format, dilations, depthwise):
    check_format(op, data_format, ("NHWC", "NCHW"))
    x, w = tensor_args(op, (input, filters), FLOAT, ("input", "filter"))
    rank_check(op, x, 4, "input", f"[batch, height, width, channels] for {data_format}"
                if data_format == "NHWC" else "[batch, channels, height, width]")
    rank_check(op, w, 4, "filter", "[filter_height, filter_width, in_channels, "
                f"{'channel_multiplier' if depthwise else 'out_channels'}]")
    last = data_format == "NHWC"
    x = to_nhwc(x, data_format)
    c = x._value.shape[-1]
    if c != w._value.shape[2]:
        grouped = "" if depthwise or c % max(w._value.shape[2], 1) else \
            " (grouped convolution is not supported)"
        raise invalid(op, f"{op}: input depth {c} does not match the filter's in_channels "
                      f"{w._value.shape[2]} (input shape {list(to_tensor(input).shape)} "
                      f"{data_format}, filter shape {list(w._value.shape)}); the filter must "
                      f"be [filter_height, filter_width, {c}, "
                      f"{'channel_multiplier' if depthwise else 'out_channels'}]{grouped}")
    s = hw_arg(op, strides, "strides", last)
    d = hw_arg(op, dilations, "dilations", last)
    pads = pads_arg(op, padding, x._value.shape[1:3], w._value.shape[:2], s, d, last)
    return x, w, {"strides": s, "dilations": d, "pads": pads}


# -- public functions -----------------------------------------------------------------------
def conv2d(input, filters, strides, padding, data_format="NHWC", dilations=None,  # noqa: A002
           name=None):
    """`tf.nn.conv2d`: 2-D cross-correlation of [N, H, W, C] input with [KH, KW, C, O]
    filters; padding 'SAME', 'VALID' or explicit [[0, 0], [t, b], [l, r], [0, 0]]."""
    key = _geo_key(input, filters, strides, padding, data_format, dilations)
    try:
        geo = _GEO.get(key) if key is not None else None
    except TypeError:  # explicit paddings as nested lists: unhashable, checked every call
        geo = key = None
    if geo is not None and data_format == "NHWC":
        return CONV2D.conv(input, filters, geo)
    x, w, geo = _conv_prep("Conv2D", input, filters, strides, padding, data_format, dilations,
                           False)
    if key is not None:
        if len(_GEO) >= 1024:
            _GEO.clear()
        _GEO[key] = geo
    return from_nhwc(CONV2D.conv(x, w, geo), data_format)


_GEO = {}  # checked geometry of conv2d calls on Tensors, by shapes, dtypes and arguments


def _geo_key(x, w, *args):
    """A key for _GEO when both operands are Tensors, else None: a hit means _conv_prep
    already accepted these exact shapes, dtypes and arguments. (Explicit paddings as nested
    lists make it unhashable: the lookup catches that.)"""
    if type(x) is not Tensor or type(w) is not Tensor:
        return None
    return (x._value.shape, w._value.shape, x._dtype, w._dtype) + tuple(
        tuple(a) if type(a) is list else a for a in args)


def convolution(input, filters, strides=None, padding="VALID", data_format=None,  # noqa: A002
                dilations=None, name=None):
    """`tf.nn.convolution` for 1-D and 2-D inputs."""
    rank = to_tensor(input)._value.ndim
    if rank == 3:
        return conv1d(input, filters, 1 if strides is None else strides, padding,
                      data_format or "NWC", dilations)
    if rank == 4:
        return conv2d(input, filters, 1 if strides is None else strides, padding,
                      data_format or "NHWC", dilations)
    raise invalid("Convolution", f"convolution supports rank-3 (1-D) and rank-4 (2-D) inputs "
                  f"here, got shape {list(to_tensor(input).shape)}")


def atrous_conv2d(value, filters, rate, padding, name=None):
    """`tf.nn.atrous_conv2d`: conv2d with dilation `rate`."""
    return conv2d(value, filters, 1, padding, dilations=rate)


def conv1d(input, filters, stride, padding, data_format="NWC", dilations=None,  # noqa: A002
           name=None):
    """`tf.nn.conv1d`: [N, W, C] input, [KW, C, O] filters (a conv2d with height 1)."""
    x, w = tensor_args("Conv1D", (input, filters), FLOAT, ("input", "filters"))
    rank_check("Conv1D", w, 3, "filters", "[filter_width, in_channels, out_channels]")
    if not isinstance(padding, str):
        raise ValueError(f"conv1d: padding must be 'SAME' or 'VALID', got {padding!r}")
    x4, axis, fmt = as_2d("Conv1D", x, data_format)
    y = conv2d(x4, reshape(w, (1,) + w._value.shape),
               arg_1d("Conv1D", stride, "stride", axis), padding, fmt,
               arg_1d("Conv1D", dilations, "dilations", axis))
    return squeeze_2d(y, axis)


def depthwise_conv2d(input, filter, strides, padding, data_format=None,  # noqa: A002
                     dilations=None, name=None):
    """`tf.nn.depthwise_conv2d`: each input channel convolved with its own
    [KH, KW, 1, M] filters; output channel c*M + m."""
    fmt = data_format or "NHWC"
    x, w, geo = _conv_prep("DepthwiseConv2dNative", input, filter, strides, padding, fmt,
                           dilations, True)
    return from_nhwc(DEPTHWISE.conv(x, w, geo), fmt)


def separable_conv2d(input, depthwise_filter, pointwise_filter, strides, padding,  # noqa: A002
                     data_format=None, dilations=None, name=None):
    """`tf.nn.separable_conv2d`: depthwise, then a 1x1 convolution."""
    fmt = data_format or "NHWC"
    y = depthwise_conv2d(input, depthwise_filter, strides, padding, fmt, dilations)
    return conv2d(y, pointwise_filter, 1, "VALID", fmt)


def conv2d_transpose(input, filters, output_shape, strides, padding="SAME",  # noqa: A002
                     data_format="NHWC", dilations=None, name=None):
    """`tf.nn.conv2d_transpose`: the gradient of conv2d with respect to its input;
    filters are [KH, KW, output_channels, input_channels]."""
    op = "Conv2DBackpropInput"
    check_format(op, data_format, ("NHWC", "NCHW"))
    g, w = tensor_args(op, (input, filters), FLOAT, ("input", "filters"))
    rank_check(op, g, 4, "input", data_format)
    rank_check(op, w, 4, "filters", "[filter_height, filter_width, output_channels, "
                "in_channels]")
    last = data_format == "NHWC"
    g = to_nhwc(g, data_format)
    out = int_list(output_shape, "output_shape")
    if len(out) != 4:
        raise invalid(op, f"conv2d_transpose: output_shape must have 4 entries, got {out}")
    out_hw = tuple(out[1:3]) if last else tuple(out[2:4])
    out_c = out[3] if last else out[1]
    if g._value.shape[-1] != w._value.shape[3] or out_c != w._value.shape[2] \
            or out[0] != g._value.shape[0]:
        raise invalid(op, f"conv2d_transpose: input {list(to_tensor(input).shape)}, filters "
                      f"{list(w._value.shape)} and output_shape {out} disagree: filters must be "
                      f"[kh, kw, output_channels={out_c}, input_channels="
                      f"{g._value.shape[-1]}] and output_shape[0] the batch size")
    s = hw_arg(op, strides, "strides", last)
    d = hw_arg(op, dilations, "dilations", last)
    pads = pads_arg(op, padding, out_hw, w._value.shape[:2], s, d, last)
    expect = tuple(out_len(out_hw[a], w._value.shape[a], s[a], d[a], pads[2 * a],
                            pads[2 * a + 1]) for a in range(2))
    if expect != g._value.shape[1:3]:
        raise invalid(op, f"conv2d_transpose: a conv2d of output_shape {out} with this filter, "
                      f"strides {list(s)} and padding {padding!r} gives spatial size "
                      f"{list(expect)}, but the input's is {list(g._value.shape[1:3])}; pick "
                      f"an output_shape consistent with the input")
    geo = {"strides": s, "dilations": d, "pads": pads}
    return from_nhwc(CONV2D.bi(g, w, out_hw, geo), data_format)


# TensorFlow's ops as SavedModel graphs spell them (rule form: saved_model/function_runner.py)
def _import_padding(a):
    """TensorFlow's padding attribute, EXPLICIT as its [[0, 0], [t, b], [l, r], [0, 0]]."""
    if a["padding"] != "EXPLICIT":
        return a["padding"]
    p = list(a["explicit_paddings"])
    return [p[i:i + 2] for i in range(0, 8, 2)]


# -- export rules: TensorFlow's ops (the rule's form: tensorlite/saved_model/function_def.py)


def _conv_tf(op_name):
    def rule(attrs, in_specs):
        x, w = in_specs
        s, d, pads = attrs["strides"], attrs["dilations"], attrs["pads"]
        return op_name, {"strides": [1, *s, 1], "dilations": [1, *d, 1], "data_format": "NHWC",
                         **tf_padding(pads, x.shape[-3:-1], w.shape[:2], s, d)}
    return rule


# -- export rules: ONNX (the rule's form: tensorlite/onnx/__init__.py) ------------------------
# ONNX convolves NCHW: the rules transpose around the op (conv_args.TO_NCHW) and write
# weights pre-transposed when they are constants.
def _onnx_weights(ctx, node, perm, shape=None):
    """The filter in ONNX's [out, in/group, kh, kw] layout: folded when constant."""
    w = ctx.value(node.inputs[1])
    if w is not None:
        w = np.transpose(w, perm)
        return ctx.const(w if shape is None else w.reshape(shape), "weights")
    t = ctx.transpose(ctx.name(node.inputs[1]), perm)
    return t if shape is None else ctx.emit("Reshape", [t, ctx.ints(shape)])


def _onnx_conv(depthwise):
    def rule(ctx, node):
        if len(ctx.shape(node.inputs[0])) != 4:
            ctx.unsupported(node, "on inputs of rank other than 4 has no ONNX mapping")
        kh, kw, cin, cm = ctx.shape(node.inputs[1])
        if depthwise:  # [kh, kw, C, M] -> [C*M, 1, kh, kw], one group per input channel
            w, group = _onnx_weights(ctx, node, (2, 3, 0, 1), (cin * cm, 1, kh, kw)), cin
        else:
            w, group = _onnx_weights(ctx, node, (3, 2, 0, 1)), 1
        x = ctx.transpose(ctx.name(node.inputs[0]), TO_NCHW)
        y = ctx.emit("Conv", [x, w], strides=list(node.attrs["strides"]),
                     dilations=list(node.attrs["dilations"]), group=group,
                     pads=onnx_pads(node.attrs["pads"]), kernel_shape=[kh, kw])
        return ctx.transpose(y, TO_NHWC)
    return rule


# -- export rules: TFLite (the rule's form: tensorlite/lite/convert/converter.py) -------------


def _tflite_conv(depthwise):
    def rule(ctx, node):
        w = ctx.value(node.inputs[1])
        if w is None or len(ctx.shape(node.inputs[0])) != 4:
            ctx.unsupported(node, "needs constant filters and a rank-4 input for TFLite")
        kh, kw, cin, cm = w.shape
        sh, sw = node.attrs["strides"]
        dh, dw = node.attrs["dilations"]
        padding, inp = tflite_padding(ctx, node, (kh, kw), (dh, dw))
        options = {"padding": padding, "stride_h": int(sh), "stride_w": int(sw),
                   "dilation_h_factor": int(dh), "dilation_w_factor": int(dw)}
        if depthwise:  # [kh, kw, C, M] -> [1, kh, kw, C*M]
            filt = w.reshape(1, kh, kw, cin * cm)
            builtin, options = "DEPTHWISE_CONV_2D", ("DepthwiseConv2DOptions",
                                                     dict(options, depth_multiplier=int(cm)))
        else:  # [kh, kw, in, out] -> [out, kh, kw, in]
            filt = np.transpose(w, (3, 0, 1, 2))
            builtin, options = "CONV_2D", ("Conv2DOptions", options)
        ctx.op(builtin, [inp, ctx.const(np.ascontiguousarray(filt), "filter"), -1],
               [ctx.output(node)], options=options, fuse=(2, "fused_activation_function"))
    return rule


# -- the ops, each with all its rules (the helpers above) ---------------------------------------
def _import_conv(ins, a):
    return conv2d(ins[0], ins[1], a["strides"], _import_padding(a),
                  a.get("data_format") or "NHWC", a.get("dilations"))


def _import_depthwise(ins, a):
    return depthwise_conv2d(ins[0], ins[1], a["strides"], _import_padding(a),
                            a.get("data_format") or "NHWC",
                            a.get("dilations")[1:3] if a.get("dilations") else None)


CONV2D = _ConvFamily("Conv2D", conv_fwd, bi_threaded, bf_threaded,
                     lambda ws: ws[-1], lambda c, o: (c, o), exact_shape=True,
                     tf=_conv_tf("Conv2D"), tf_outputs="output", tf_import=_import_conv,
                     linear_filter=(1, 1),
                     onnx=_onnx_conv(depthwise=False), tflite=_tflite_conv(depthwise=False))
DEPTHWISE = _ConvFamily("DepthwiseConv2dNative", dw_fwd, dw_bi_fwd, dw_bf_fwd,
                        lambda ws: None if None in ws[-2:] else ws[-2] * ws[-1],
                        lambda c, o: (c, None if None in (c, o) else o // c),
                        tf=_conv_tf("DepthwiseConv2dNative"), tf_outputs="output",
                        exact_shape=True,
                        tf_import=_import_depthwise, onnx=_onnx_conv(depthwise=True),
                        linear_filter=(1, 2),
                        tflite=_tflite_conv(depthwise=True))

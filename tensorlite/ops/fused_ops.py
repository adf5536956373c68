"""Fused ops of optimised graphs: what graph/passes/kernel_fusion.py rewrites a layer's
ops into, as Grappler's remapper makes `_FusedConv2D` and `_FusedMatMul`.

  * `_FusedConv2D(x, w, bias[, scale][, residual])` and `_FusedMatMul(a, b, bias)`: the
    contraction with (the convolution, attribute scaled=True) its filter's per-output-
    channel scale moved onto the output, the bias add, (the convolution) a residual
    block's sum of the output's shape, and
    (activation="Relu" or "Relu6") the activation after them applied in place to its output; a
    convolution applies them to each run of images right after computing it, on the
    thread that made it (conv_select's epilogue), so no [N, H, W, C] temporary is made
    and the pass over it is in cache and split over the intra-op threads.
  * `_FusedDepthwiseConv2dNative(x, w, bias)`: likewise for a depthwise convolution (an
    inference BatchNormalization's shift after folding, and MobileNetV2's ReLU6), the
    epilogue run on each run of images the compiled kernel has just made.
  * `_FusedPadMaxPool(x)`: a max pool of a constant spatial padding of x (ResNet's
    ZeroPadding2D then MaxPooling2D), the padding taken as the pool's own with its value
    as `fill`: no padded copy of the activation.
  * `_FusedReluGradBiasAddGrad(g, y) -> (g * (y > 0), its sum over all axes but the
    last)`: a ReLU layer's gradient and its bias's, in one pass.
  * `_FusedMaxPoolGradReluGrad(x, y, g) -> (dx, bias gradient)`: a non-overlapping max
    pool's gradient times the ReLU mask of its input x (a ReLU's output), and its sum.

Each does the arithmetic of the ops it replaces (masks multiply; a bias gradient is summed
in float64, then cast). With numba (the `jit` extra) each is one compiled pass
(ops/numba_fused.py) split over runs of images; without it, NumPy in place. They exist only
in optimised graphs, run by the executor: no gradients (a GradientTape interprets the
original graph), no TF or ONNX names (exporters read the original graph).

Example:
    >>> y = execute(FUSED_CONV2D, (x, w, b), dict(strides=(1, 1), dilations=(1, 1),
    ...             pads=(1, 1, 1, 1), activation="Relu"))   # relu(conv2d(x, w) + b)
"""
import numpy as np

from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.framework.registry import Spec, register
from tensorlite.ops import (
    conv_ops,
    conv_select,
    math_ops,
    numba_depthwise,
    numba_fused,
    pooling_ops,
)

ACTIVATIONS = (None, "Relu", "Relu6")
# A fused elementwise pass of this many elements is timed against splitting it over the
# intra-op threads (blas_threads counts cost in multiply-adds: ~4 per element here).
_COST_PER_ELEMENT = 4
# Rows per run of the row-split kernels (~1 MB of float32 at 64 channels).
_RUN_ROWS = 4096


class Epilogue:
    """`epilogue(view, start=0)`: multiplies `view` by the per-channel `scale` (when given: a
    folded BatchNormalization's), adds the bias along its last axis, then (given) the
    matching elements of the residual, then the activation (`act`: 0 none, 1 ReLU, 2 ReLU6),
    in place. conv_select applies it to each run of a convolution's output; `start` is the
    index of the view's first element in the whole (row-major) output, which is where its
    residual elements are."""
    __slots__ = ("act", "bias", "residual", "scale")

    def __init__(self, bias, act, residual=None, scale=None):
        self.bias, self.act, self.scale = bias, act, scale
        self.residual = None if residual is None else np.ascontiguousarray(residual).reshape(-1)

    def __call__(self, view, start=0):
        r = None
        if self.residual is not None:
            r = self.residual[start:start + view.size].reshape(view.shape)
        extra = tuple(a for a in (r, self.scale) if a is not None)
        k = numba_fused.kernels_for(view, self.bias, *extra)
        if k is not None:
            rows = view.reshape(-1, view.shape[-1])
            if self.scale is not None:
                k.scale_bias_act(rows, self.scale, self.bias,
                                 rows if r is None else r.reshape(rows.shape), self.act,
                                 r is not None)
            elif r is None:
                k.bias_act(rows, self.bias, self.act)
            else:
                k.bias_add_act(rows, self.bias, r.reshape(rows.shape), self.act)
            return
        if self.scale is not None:
            np.multiply(view, self.scale, out=view)
        np.add(view, self.bias, out=view)
        if r is not None:  # after the bias, as the unfused (x + b) + r
            np.add(view, r, out=view)
        if self.act == 1:
            np.maximum(view, 0, out=view)
        elif self.act == 2:
            np.clip(view, 0, 6, out=view)


def _check_activation(activation):
    """The Epilogue's activation code of a fused op's `activation` attribute."""
    if activation not in ACTIVATIONS:
        raise NotImplementedError(f"fused activation {activation!r}: only "
                                  f"{ACTIVATIONS} are fused")
    return ACTIVATIONS.index(activation)


def _fused_conv_fwd(x, w, bias, *rest, strides, dilations, pads, activation=None,
                    scaled=False):
    """relu(conv2d(x, w) [* scale] + bias [+ residual]), `rest` being (scale, residual)
    as present: `scaled` says a per-output-channel scale comes first (a folded
    BatchNormalization's on variable weights: one multiply in the epilogue instead of a
    filter-sized product on every call); a residual block's sum (ResNet's `Add`, an
    [N, OH, OW, O] addend) follows when the graph gives one."""
    scale = rest[0].astype(x.dtype, copy=False) if scaled else None
    residual = rest[1:] if scaled else rest
    return conv_select.conv(x, w, strides, dilations, pads,
                            Epilogue(bias.astype(x.dtype, copy=False),
                                     _check_activation(activation), *residual, scale=scale))


def _fused_depthwise_fwd(x, w, bias, strides, dilations, pads, activation=None):
    epilogue = Epilogue(bias.astype(x.dtype, copy=False), _check_activation(activation))
    out = numba_depthwise.forward(x, w, strides, dilations, pads, epilogue)
    if out is None:  # the NumPy form returns a fresh array: the epilogue runs on it whole
        out = conv_ops.DEPTHWISE.fwd.forward(x, w, strides=strides, dilations=dilations,
                                             pads=pads)
        epilogue(out, 0)
    return out


def _fused_matmul_fwd(a, b, bias, transpose_a, transpose_b, activation=None):
    out = math_ops.MATMUL.forward(a, b, transpose_a, transpose_b)  # a fresh array
    Epilogue(bias.astype(out.dtype, copy=False), _check_activation(activation))(out)
    return out


def _pad_max_pool_fwd(x, ksize, strides, pads, fill):
    return pooling_ops.max_pool_padded(x, ksize, strides, pads, fill)


def _rows(a):
    return a.reshape(-1, a.shape[-1])


def _relu_grad_bias_fwd(g, y):
    k = numba_fused.kernels_for(g, y)
    if k is None:
        r = g * (y > 0)
        return r, _rows(r).sum(0)
    return blas_threads.run(g.size * _COST_PER_ELEMENT, _relu_grad_bias_split, g, y,
                            split=True)


def _column_sums_over_runs(n, per, channels, dtype, run_part, in_order=False):
    """run_part(start, end, acc) over runs of n items (at most `per` each) on the intra-op
    threads, each thread adding its column sums into a float64 [channels] of its own; their
    total, cast to `dtype`.

    `in_order`: run_part adds rows in row-major order. On one thread the sums then
    accumulate in `dtype`, row after row, which is exactly what NumPy's sum over the leading
    axes does: the fused op gives the unfused ops' bits, so a tf.function's first call
    (traced, run op by op) and its later ones (the optimised graph) agree, and a model
    reloaded from a file trains on exactly as the original (float64 sums there differed
    in the last bit now and then)."""
    if in_order and intra_op_pool.ways() <= 1:
        acc = np.zeros(channels, dtype)
        for s, e in intra_op_pool.split_runs(n, per):
            run_part(s, e, acc)
        return acc

    def worker(pull):
        acc = np.zeros(channels, np.float64)
        for s, e in pull:
            run_part(s, e, acc)
        return acc
    return intra_op_pool.sum_partials(
        intra_op_pool.map_runs(intra_op_pool.split_runs(n, per), worker),
        lambda: np.zeros(channels, np.float64)).astype(dtype)


def _relu_grad_bias_split(g, y):
    k = numba_fused.kernels()
    g2, y2 = _rows(g), _rows(y)
    out = np.empty_like(g)
    o2 = _rows(out)
    return out, _column_sums_over_runs(
        len(g2), _RUN_ROWS, g2.shape[1], g.dtype,
        lambda s, e, acc: k.relu_grad_bias(g2[s:e], y2[s:e], o2[s:e], acc), in_order=True)


def _max_pool_grad_relu_fwd(x, y, g, ksize, strides, pads):
    k = numba_fused.kernels_for(x, y, g)
    if k is None or not pooling_ops.non_overlapping(ksize, strides, pads) or x.ndim != 4:
        dx = pooling_ops.MAX_POOL_GRAD.forward(x, y, g, ksize=ksize, strides=strides, pads=pads)
        np.multiply(dx, x > 0, out=dx)
        return dx, _rows(dx).sum(0)
    return blas_threads.run(x.size * _COST_PER_ELEMENT, _max_pool_grad_relu_split, x, y, g,
                            tuple(ksize), split=True)


def _max_pool_grad_relu_split(x, y, g, ksize):
    k = numba_fused.kernels()
    dx = np.empty_like(x)
    per = max(1, _RUN_ROWS // max(1, x.shape[1] * x.shape[2]))   # images per run
    return dx, _column_sums_over_runs(
        x.shape[0], per, x.shape[-1], g.dtype,
        lambda s, e, acc: k.max_pool_grad_relu(x, y, g, ksize[0], ksize[1], s, e, dx, acc))


def _bias_grad_spec(g):
    return Spec((g.shape[-1],), g.dtype)


# The optimised graph's kernels (graph/passes/kernel_fusion.py): none is written to a file
# or vectorized; `fuses`: the contraction whose bias add and ReLU the kernel takes in place.
_INTERNAL = "tf onnx tflite batch tf_import"
FUSED_CONV2D = register(
    "_FusedConv2D", _fused_conv_fwd, cost="conv", fuses=conv_ops.CONV2D.fwd,
    fuses_residual=True, fuses_scale=True, unsupported=_INTERNAL,
    shape=lambda x, w, b, *r, activation=None, scaled=False, **geo:
    conv_ops.CONV2D.fwd.infer(x, w, **geo))
FUSED_DEPTHWISE = register(
    "_FusedDepthwiseConv2dNative", _fused_depthwise_fwd, cost="conv",
    fuses=conv_ops.DEPTHWISE.fwd, unsupported=_INTERNAL,
    shape=lambda x, w, b, activation=None, **geo: conv_ops.DEPTHWISE.fwd.infer(x, w, **geo))
FUSED_MATMUL = register(
    "_FusedMatMul", _fused_matmul_fwd, cost="matmul", fuses=math_ops.MATMUL,
    shape=lambda a, b, bias, activation=None, **t: math_ops.MATMUL.infer(a, b, **t),
    unsupported=_INTERNAL)
FUSED_PAD_MAX_POOL = register(
    "_FusedPadMaxPool", _pad_max_pool_fwd, fuses_pad=pooling_ops.MAX_POOL,
    shape=lambda x, ksize, strides, pads, fill: pooling_ops.MAX_POOL.infer(
        x, ksize=ksize, strides=strides, pads=pads), unsupported=_INTERNAL)
FUSED_RELU_GRAD_BIAS_GRAD = register(
    "_FusedReluGradBiasAddGrad", _relu_grad_bias_fwd, multi_output=True,
    shape=lambda g, y: (Spec(tuple(g.shape), g.dtype), _bias_grad_spec(g)),
    unsupported=_INTERNAL)
FUSED_MAX_POOL_GRAD_RELU_GRAD = register(
    "_FusedMaxPoolGradReluGrad", _max_pool_grad_relu_fwd, multi_output=True,
    shape=lambda x, y, g, **pool: (Spec(tuple(x.shape), g.dtype), _bias_grad_spec(g)),
    unsupported=_INTERNAL)

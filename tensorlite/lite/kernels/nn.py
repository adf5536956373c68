"""Convolution, pooling, fully-connected and softmax kernels: float32, int8 (TFLite's
reference arithmetic, bit-exact) and hybrid (int8 weights, float activations).

Integer accumulations run as float matrix products: every product of an int8 weight and
an offset int8 activation is below 2**15, so sums of up to 2**38 terms stay exact in
float64's 53-bit significand, and BLAS does the work. Convolutions and fully-connected
layers with constant int8 weights are bound to a compiled exact integer GEMM (`int_gemm`:
VNNI, else vpmaddwd) or, without one, to float32 products in exact blocks, and a one-pass
requantization (`int8_steps`).
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorlite.lite.kernels import kernel
from tensorlite.lite.kernels import int_gemm
from tensorlite.ops.numba_backend import compiled
from tensorlite.lite.kernels.int8_steps import (DotsRequantizer, IntegerProduct, Requantizer,
                                                im2col_step)
from tensorlite.lite.kernels.fixed_point import (activation_range,
                                                 multiply_by_quantized_multiplier,
                                                 multiply_by_quantized_multiplier_double_rounding,
                                                 quantize_multipliers, round_half_away)

_ACT_FLOAT = {0: None, 1: (0.0, None), 2: (-1.0, 1.0), 3: (0.0, 6.0)}


def apply_activation(y, activation):
    """A fused float activation, in place."""
    if activation == 4:
        np.tanh(y, out=y)
        return y
    bounds = _ACT_FLOAT.get(activation)
    if activation not in _ACT_FLOAT:
        raise ValueError(f"fused activation {activation} is not supported")
    if bounds is not None:
        np.clip(y, bounds[0], bounds[1], out=y)
    return y


def activation_step(y, activation):
    """A no-argument function applying a fused float activation to `y` in place (None for
    no activation): np.maximum is the cheapest ReLU NumPy has."""
    if activation == 0:
        return None
    if activation == 1:
        return lambda: np.maximum(y, 0, out=y)
    if activation not in _ACT_FLOAT and activation != 4:
        raise ValueError(f"fused activation {activation} is not supported")
    return lambda: apply_activation(y, activation)


def _padded_input(x, geo, pad_value):
    """(array the windows are cut from, its interior view x must be copied into or None):
    a padded buffer allocated once, its border written once."""
    _, _, (pt, pb, pl, pr) = geo
    if not (pt or pb or pl or pr):
        return x, None
    buf = np.full((x.shape[0], x.shape[1] + pt + pb, x.shape[2] + pl + pr, x.shape[3]),
                  pad_value, x.dtype)
    return buf, buf[:, pt:pt + x.shape[1], pl:pl + x.shape[2]]


def _windows(x, kh, kw, options, geo):
    """[N, OH, OW, KH, KW, C] strided windows of an already padded NHWC array."""
    oh, ow, _ = geo
    n, _, _, c = x.shape
    sh, sw = options["stride_h"], options["stride_w"]
    dh, dw = options.get("dilation_h_factor", 1), options.get("dilation_w_factor", 1)
    s = x.strides
    return as_strided(x, (n, oh, ow, kh, kw, c),
                      (s[0], s[1] * sh, s[2] * sw, s[1] * dh, s[2] * dw, s[3]), writeable=False)


def _steps(*steps):
    """One function running the given no-argument functions (None skipped) in order."""
    steps = [s for s in steps if s is not None]
    if len(steps) == 1:
        return steps[0]

    def run():
        for step in steps:
            step()
    return run


# -- geometry -------------------------------------------------------------------------------
def _out_and_pads(size, k, stride, dilation, padding):
    eff = (k - 1) * dilation + 1
    if padding == 0:  # SAME
        out = -(-size // stride)
        total = max((out - 1) * stride + eff - size, 0)
        return out, total // 2, total - total // 2
    return (size - eff) // stride + 1, 0, 0


def geometry(in_shape, kh, kw, options):
    """(out_h, out_w, (top, bottom, left, right)) of a window op."""
    n, h, w, _ = in_shape
    oh, pt, pb = _out_and_pads(h, kh, options["stride_h"],
                               options.get("dilation_h_factor", 1), options["padding"])
    ow, pl, pr = _out_and_pads(w, kw, options["stride_w"],
                               options.get("dilation_w_factor", 1), options["padding"])
    if oh <= 0 or ow <= 0:
        raise ValueError(f"window {kh}x{kw} does not fit input {list(in_shape)}")
    return oh, ow, (pt, pb, pl, pr)


def patches(x, kh, kw, options, geo, pad_value, cache=None):
    """[N, OH, OW, KH, KW, C] windows of NHWC `x` (a strided view of a padded copy; with a
    `cache` dict the padded buffer is kept and only its interior rewritten next time)."""
    key = ("pad", x.shape, x.dtype.str, pad_value)
    padded = None if cache is None else cache.get(key)
    if padded is None:
        padded = _padded_input(x, geo, pad_value)
        if cache is not None:
            cache[key] = padded
    if padded[1] is not None:
        padded[1][...] = x
        x = padded[0]
    return _windows(x, kh, kw, options, geo)


def _im2col(cols, cache, ones=False):
    """The [N*OH*OW, KH*KW*C] matrix of `patches`, written into a buffer kept in `cache`
    (the node's data): a fresh megabyte-sized temporary per call costs page faults. With
    `ones`, one more column of ones, so that a bias row under the weights is added by the
    matrix product itself rather than by another pass over the output."""
    n, oh, ow, kh, kw, c = cols.shape
    if not ones and kh == kw == 1 and \
            cols.strides[1:3] == (cols.strides[2] * ow, c * cols.itemsize):
        return cols.reshape(n * oh * ow, c)  # a 1x1 stride-1 convolution: already a matrix
    buf, rows = _im2col_buffer(cols, cache, ones)
    np.copyto(rows, cols)
    return buf


def _im2col_buffer(cols, cache, ones, dtype=None):
    """(the im2col matrix buffer kept in `cache`, its view shaped like `cols`); `dtype`
    (default cols') is the matrix's."""
    n, oh, ow, kh, kw, c = cols.shape
    dtype = cols.dtype if dtype is None else np.dtype(dtype)
    key = ("im2col", cols.shape, dtype.str, ones)
    buf = cache.get(key)
    if buf is None:
        buf = cache[key] = np.empty((n * oh * ow, kh * kw * c + ones), dtype)
        buf[:, kh * kw * c:] = 1
    row, item = buf.strides
    return buf, as_strided(buf, cols.shape, (oh * ow * row, ow * row, row, kw * c * item,
                                             c * item, item))


def _quantized(ctx, node, i):
    """True for int8/uint8 activations; float32 is the other kind the kernels know."""
    dtype = ctx.dtype(i)
    if dtype not in (np.int8, np.uint8, np.float32):
        raise NotImplementedError(f"{node.name} on {np.dtype(dtype).name} activations is not "
                                  f"implemented in tensorlite's interpreter (float32, int8 and "
                                  f"uint8 are)")
    return dtype in (np.int8, np.uint8)


def _requant_data(ctx, node, in_i, w_i, out_i):
    """Per-channel significands/shifts and the activation clamp of an int8 conv/FC."""
    in_scale = np.float64(ctx.quant(in_i)[0][0])
    w_scales = ctx.quant(w_i)[0].astype(np.float64)
    out_scale, out_zp = ctx.quant(out_i)[0][0], int(ctx.quant(out_i)[1][0])
    mult, shift = quantize_multipliers(in_scale * w_scales / np.float64(out_scale))
    node.data.update(mult=mult, shift=shift, in_zp=int(ctx.quant(in_i)[1][0]), out_zp=out_zp,
                     clamp=activation_range(node.options.get("fused_activation_function", 0),
                                            out_scale, out_zp, ctx.dtype(out_i)))


def _requantize(acc, node, dtype, rounding=multiply_by_quantized_multiplier_double_rounding):
    d = node.data
    out = rounding(acc, d["mult"], d["shift"]) + d["out_zp"]
    return np.clip(out, *d["clamp"]).astype(dtype)


def _bias(ctx, node, channels, dtype):
    b = ctx.array(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] >= 0 else None
    return np.zeros(channels, dtype) if b is None else b.astype(dtype)


def _hybrid_quantize(x2d):
    """Per-row symmetric int8 quantization of float activations (TFLite's hybrid kernels
    quantize their input on the fly the same way)."""
    peak = np.max(np.abs(x2d), axis=1, keepdims=True).astype(np.float32)
    safe = np.where(peak > 0, peak, np.float32(1))
    q = np.clip(round_half_away(x2d * (np.float32(127) / safe)), -127, 127)
    return q, np.where(peak > 0, peak / np.float32(127), np.float32(0))


def _asymmetric_quantize(rows):
    """Per-row asymmetric int8 quantization (scale, zero offset) as TFLite's hybrid
    convolutions quantize their input."""
    lo = np.minimum(rows.min(axis=1), 0).astype(np.float64)
    hi = np.maximum(rows.max(axis=1), 0).astype(np.float64)
    same = hi == lo
    scale = np.where(same, 1.0, (hi - lo) / 255.0)
    from_min, from_max = -128 - lo / scale, 127 - hi / scale
    use_min = 128 + np.abs(lo / scale) < 127 + np.abs(hi / scale)
    zp = np.where(use_min, from_min, from_max)
    offset = np.where(zp <= -128, -128, np.where(zp >= 127, 127, round_half_away(zp)))
    offset = np.where(same, 0, offset).astype(np.int64)
    inv = (np.float32(1) / scale.astype(np.float32))[:, None]
    q = np.clip(round_half_away(offset[:, None] + rows * inv), -128, 127)
    q = np.where(same[:, None], 0, q)
    return q, scale.astype(np.float32), offset


# -- convolutions ---------------------------------------------------------------------------
class _Conv:
    depthwise = False

    @classmethod
    def prepare(cls, ctx, node):
        x, w = node.inputs[0], node.inputs[1]
        if len(ctx.shape(x)) != 4:
            raise ValueError(f"{node.name} needs a rank-4 NHWC input, got {ctx.shape(x)}")
        _, kh, kw, ch = ctx.shape(w)
        geo = geometry(ctx.shape(x), kh, kw, node.options)
        channels = ch if cls.depthwise else ctx.shape(w)[0]
        node.data.update(geo=geo, kh=kh, kw=kw)
        weights = ctx.const(w)
        if weights is not None and not cls.depthwise:  # [K, O], laid out once for BLAS
            dtype = np.float32 if weights.dtype == np.float32 else np.float64
            node.data["wmat"] = np.ascontiguousarray(weights.reshape(len(weights), -1).T,
                                                     dtype=dtype)
            bias = ctx.const(node.inputs[2]) if len(node.inputs) > 2 and \
                node.inputs[2] >= 0 else np.zeros(channels, np.float32)
            if dtype == np.float32 and ctx.dtype(x) == np.float32 and bias is not None and \
                    bias.dtype == np.float32:  # the bias as the product's last weight row
                node.data["wmat_bias"] = np.concatenate([node.data["wmat"], bias[None]])
        if _quantized(ctx, node, x):
            _requant_data(ctx, node, x, w, node.outputs[0])
        return [(ctx.shape(x)[0], geo[0], geo[1], channels)]

    @classmethod
    def bind(cls, ctx, node):
        """The float convolution with constant weights as four bound steps: the input into
        the padded buffer's interior, the windows into the im2col matrix (both views built
        here), one matrix product whose last weight row is the bias, the activation."""
        d = node.data
        if "in_zp" in d:
            return cls._bind_int8(ctx, node)
        if cls.depthwise or "wmat_bias" not in d:
            return None
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        source, interior = _padded_input(x, d["geo"], 0.0)
        cols = _windows(source, d["kh"], d["kw"], node.options, d["geo"])
        matrix, rows = _im2col_buffer(cols, d, ones=True)
        weights, out2d = d["wmat_bias"], out.reshape(-1, out.shape[-1])
        return _steps(None if interior is None else lambda: np.copyto(interior, x),
                      lambda: np.copyto(rows, cols),
                      lambda: np.matmul(matrix, weights, out=out2d),
                      activation_step(out2d, node.options.get("fused_activation_function", 0)))

    @classmethod
    def _bind_int8(cls, ctx, node):
        """The int8 convolution with constant int8 weights and bias as bound steps: the
        input into the padded buffer (padded with its zero point), the windows converted
        into a float32 im2col matrix, exact float32 products, one-pass requantization."""
        d, w = node.data, ctx.const(node.inputs[1])
        has_bias = len(node.inputs) > 2 and node.inputs[2] >= 0
        if cls.depthwise or w is None or w.dtype != np.int8 or \
                (has_bias and ctx.const(node.inputs[2]) is None):
            return None
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        source, interior = _padded_input(x, d["geo"], d["in_zp"])
        cols = _windows(source, d["kh"], d["kw"], node.options, d["geo"])
        kind = int_gemm.choice()
        if int_gemm.fits(len(w), w[0].size, kind) and source.flags.c_contiguous:
            return cls._bind_gemm(ctx, node, (w, x, out, source, interior, cols), kind)
        matrix, rows = _im2col_buffer(cols, d, ones=False, dtype=np.float32)
        product = IntegerProduct(w.reshape(len(w), -1).T, len(matrix), x.dtype)
        bias = _bias(ctx, node, len(w), np.int64) - d["in_zp"] * product.weight_sums
        requant = Requantizer(d["mult"], d["shift"], bias, d["out_zp"], d["clamp"],
                              len(matrix), double_rounding=True)
        return _steps(None if interior is None else lambda: np.copyto(interior, x),
                      im2col_step(source, cols, matrix, rows, node.options),
                      lambda: requant(product(matrix), out))

    @classmethod
    def _bind_gemm(cls, ctx, node, arrays, kind):
        """`_bind_int8` on a compiled integer GEMM (int_gemm's `kind`): the windows in a
        zero-padded im2col matrix of the kernel's type (uint8 for VNNI, int8 x as x + 128;
        int16 for vpmaddwd), one exact product into int32, the requantization; the +128 and
        the zero point fold into the bias."""
        (w, x, out, source, interior, cols), d = arrays, node.data
        w_nk = w.reshape(len(w), -1)
        matrix = np.zeros((cols.shape[0] * cols.shape[1] * cols.shape[2],
                           int_gemm.padded_depth(w_nk.shape[1], kind)),
                          int_gemm.KINDS[kind].dtype)
        flip = 128 if kind == "vnni" and x.dtype == np.int8 else 0
        gemm, acc = int_gemm.Gemm(w_nk, kind), np.empty((len(matrix), len(w)), np.int32)
        bias = _bias(ctx, node, len(w), np.int64) - \
            (d["in_zp"] + flip) * w_nk.astype(np.int64).sum(axis=1)
        requant = Requantizer(d["mult"], d["shift"], bias, d["out_zp"], d["clamp"],
                              len(matrix), double_rounding=True)
        return _steps(None if interior is None else lambda: np.copyto(interior, x),
                      im2col_step(source, cols, matrix, None, node.options, flip),
                      lambda: gemm(matrix, acc), lambda: requant(acc, out))

    @classmethod
    def invoke(cls, ctx, node):
        x, w = ctx.array(node.inputs[0]), ctx.array(node.inputs[1])
        out = ctx.array(node.outputs[0])
        d = node.data
        if x.dtype == np.float32:
            if w.dtype == np.int8:
                out[...] = cls._hybrid(ctx, node, x, w)
            else:
                cols = patches(x, d["kh"], d["kw"], node.options, d["geo"], 0.0, d)
                if "wmat_bias" in d:
                    np.matmul(_im2col(cols, d, ones=True), d["wmat_bias"],
                              out=out.reshape(-1, out.shape[-1]))
                else:
                    out[...] = cls._product(cols, w.astype(np.float32), np.float32)
                    out += _bias(ctx, node, out.shape[-1], np.float32)
            apply_activation(out, node.options.get("fused_activation_function", 0))
            return
        cols = patches(x, d["kh"], d["kw"], node.options, d["geo"], d["in_zp"], d)
        if "wmat" in d:
            flat = cols.reshape(-1, d["wmat"].shape[0]).astype(np.float64)
            flat -= d["in_zp"]
            acc = (flat @ d["wmat"]).reshape(out.shape)
        else:
            acc = cls._product(cols.astype(np.float64) - d["in_zp"], w.astype(np.float64),
                               np.float64)
        acc = acc.astype(np.int64) + _bias(ctx, node, out.shape[-1], np.int64)
        out[...] = _requantize(acc, node, out.dtype)

    @classmethod
    def _hybrid(cls, ctx, node, x, w):
        """TFLite's hybrid convolution: each image's activations quantized asymmetrically
        to int8 on the fly, an integer product, and float rescaling."""
        d = node.data
        n = x.shape[0]
        q, scale, offset = _asymmetric_quantize(x.reshape(n, -1))
        ys = []
        for b in range(n):
            cols = patches(q[b].reshape((1,) + x.shape[1:]), d["kh"], d["kw"], node.options,
                           d["geo"], offset[b])
            ys.append(cls._product(cols.astype(np.float64) - offset[b], w.astype(np.float64),
                                   np.float64))
        acc = np.concatenate(ys).astype(np.float32)
        w_scale = ctx.quant(node.inputs[1])[0].astype(np.float32)
        y = acc * (scale.reshape(n, 1, 1, 1) * w_scale)
        return y + _bias(ctx, node, y.shape[-1], np.float32)

    @staticmethod
    def _product(cols, w, dtype):
        n, oh, ow, kh, kw, c = cols.shape
        flat = np.ascontiguousarray(cols, dtype=dtype).reshape(n * oh * ow, kh * kw * c)
        return (flat @ w.reshape(w.shape[0], -1).T.astype(dtype, copy=False)).reshape(
            n, oh, ow, w.shape[0])


@kernel("CONV_2D")
class Conv2D(_Conv):
    pass


@kernel("DEPTHWISE_CONV_2D")
class DepthwiseConv2D(_Conv):
    depthwise = True

    @staticmethod
    def _product(cols, w, dtype):
        n, oh, ow, kh, kw, c = cols.shape
        m = w.shape[-1] // c
        flat = np.ascontiguousarray(cols, dtype=dtype).reshape(n * oh * ow, kh * kw, c)
        y = np.einsum("pkc,kcm->pcm", flat, w.reshape(kh * kw, c, m).astype(dtype),
                      optimize=True)
        return y.reshape(n, oh, ow, c * m)


# -- pooling --------------------------------------------------------------------------------
class _Pool:
    @staticmethod
    def prepare(ctx, node):
        x = node.inputs[0]
        o = node.options
        geo = geometry(ctx.shape(x), o["filter_height"], o["filter_width"], o)
        node.data["geo"] = geo
        if _quantized(ctx, node, x):
            scale, zp = ctx.quant(node.outputs[0])[0][0], int(ctx.quant(node.outputs[0])[1][0])
            node.data["clamp"] = activation_range(o.get("fused_activation_function", 0), scale,
                                                  zp, ctx.dtype(node.outputs[0]))
        n, _, _, c = ctx.shape(x)
        return [(n, geo[0], geo[1], c)]


@kernel("MAX_POOL_2D")
class MaxPool(_Pool):
    @staticmethod
    def bind(ctx, node):
        """Max pooling as one np.maximum per window tap over views built here; int8 pads
        with the type's minimum and clamps to the fused activation's range."""
        x, out, o = ctx.array(node.inputs[0]), ctx.array(node.outputs[0]), node.options
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        source, interior = _padded_input(x, node.data["geo"], low)
        cols = _windows(source, o["filter_height"], o["filter_width"], o, node.data["geo"])
        taps = [cols[:, :, :, i, j] for i in range(cols.shape[3]) for j in range(cols.shape[4])]

        def pool():
            if len(taps) == 1:
                np.copyto(out, taps[0])
                return
            np.maximum(taps[0], taps[1], out=out)
            for tap in taps[2:]:
                np.maximum(out, tap, out=out)
        if x.dtype.kind == "f":
            finish = activation_step(out, o.get("fused_activation_function", 0))
        else:
            lo, hi = node.data["clamp"]
            info = np.iinfo(x.dtype)
            finish = None if (lo, hi) == (info.min, info.max) else \
                (lambda: np.clip(out, lo, hi, out=out))
        return _steps(None if interior is None else lambda: np.copyto(interior, x), pool,
                      finish)

    @staticmethod
    def invoke(ctx, node):
        x, out, o = ctx.array(node.inputs[0]), ctx.array(node.outputs[0]), node.options
        low = -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min
        cols = patches(x, o["filter_height"], o["filter_width"], o, node.data["geo"], low)
        if x.dtype.kind == "f":  # one maximum per window tap: NumPy's max over the
            out[...] = cols[:, :, :, 0, 0]  # strided window axes walks memory far slower
            for i in range(cols.shape[3]):
                for j in range(cols.shape[4]):
                    if i or j:
                        np.maximum(out, cols[:, :, :, i, j], out=out)
            apply_activation(out, o.get("fused_activation_function", 0))
        else:
            y = cols.max(axis=(3, 4))
            out[...] = np.clip(y, *node.data["clamp"])


@kernel("AVERAGE_POOL_2D")
class AvgPool(_Pool):
    @staticmethod
    def invoke(ctx, node):
        x, out, o = ctx.array(node.inputs[0]), ctx.array(node.outputs[0]), node.options
        kh, kw, geo = o["filter_height"], o["filter_width"], node.data["geo"]
        ones = np.ones((1,) + x.shape[1:3] + (1,), np.float64)
        count = patches(ones, kh, kw, o, geo, 0.0).sum(axis=(3, 4))  # real pixels only
        total = patches(x.astype(np.float64), kh, kw, o, geo, 0.0).sum(axis=(3, 4))
        if x.dtype.kind == "f":
            y = (total / count).astype(np.float32)
            out[...] = apply_activation(y, o.get("fused_activation_function", 0))
            return
        acc, cnt = total.astype(np.int64), count.astype(np.int64)
        half = cnt // 2
        num = np.where(acc > 0, acc + half, acc - half)
        q = np.sign(num) * (np.abs(num) // cnt)  # C's truncating division
        out[...] = np.clip(q, *node.data["clamp"])


# -- fully connected ------------------------------------------------------------------------
@kernel("FULLY_CONNECTED")
class FullyConnected:
    @staticmethod
    def prepare(ctx, node):
        x, w = node.inputs[0], node.inputs[1]
        units, depth = ctx.shape(w)
        size = int(np.prod(ctx.shape(x)))
        if size % depth:
            raise ValueError(f"{node.name}: input of shape {ctx.shape(x)} does not split "
                             f"into rows of {depth}")
        weights = ctx.const(w)
        if weights is not None:  # [in, out], laid out once for BLAS
            dtype = np.float32 if weights.dtype == np.float32 else np.float64
            node.data["wmat"] = np.ascontiguousarray(weights.T, dtype=dtype)
        if _quantized(ctx, node, x):
            _requant_data(ctx, node, x, w, node.outputs[0])
        if node.options.get("keep_num_dims"):
            return [tuple(ctx.shape(x)[:-1]) + (units,)]
        return [(size // depth, units)]

    @staticmethod
    def bind(ctx, node):
        """Float FULLY_CONNECTED with constant float weights as bound steps; one row is a
        matrix-vector product on the file's [out, in] layout (faster than a [1, in] x
        [in, out] product in OpenBLAS)."""
        x, w = ctx.array(node.inputs[0]), ctx.array(node.inputs[1])
        wmat, out = node.data.get("wmat"), ctx.array(node.outputs[0])
        if "in_zp" in node.data:
            return FullyConnected._bind_int8(ctx, node)
        if x.dtype != np.float32 or w.dtype != np.float32 or wmat is None:
            return None
        rows, y = x.reshape(-1, w.shape[1]), out.reshape(-1, w.shape[0])
        if len(rows) == 1:
            weights = w if w.flags.c_contiguous and w.flags.aligned else np.array(w)
            vector, result = rows[0], y[0]
            product = lambda: np.matmul(weights, vector, out=result)  # noqa: E731
        else:
            product = lambda: np.matmul(rows, wmat, out=y)  # noqa: E731
        b = ctx.array(node.inputs[2]) if len(node.inputs) > 2 and node.inputs[2] >= 0 else None
        return _steps(product, None if b is None else lambda: np.add(y, b, out=y),
                      activation_step(y, node.options.get("fused_activation_function", 0)))

    @staticmethod
    def _bind_int8(ctx, node):
        """int8 FULLY_CONNECTED with constant int8 weights and bias: the rows converted to
        float32, exact float32 products, one-pass requantization (single rounding)."""
        d, w = node.data, ctx.const(node.inputs[1])
        has_bias = len(node.inputs) > 2 and node.inputs[2] >= 0
        if w is None or w.dtype != np.int8 or (has_bias and ctx.const(node.inputs[2]) is None):
            return None
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        rows = x.reshape(-1, w.shape[1])
        kind = int_gemm.choice()
        if int_gemm.fits(w.shape[0], w.shape[1], kind):
            return FullyConnected._bind_gemm(ctx, node, w, rows, out, kind)
        bias = _bias(ctx, node, w.shape[0], np.int64) - \
            d["in_zp"] * w.astype(np.int64).sum(axis=1)
        dots = DotsRequantizer.make(w, len(rows), d["mult"], d["shift"], bias, d["out_zp"],
                                    d["clamp"], double_rounding=False)
        if dots is not None:  # few rows: int8 dot products, a quarter of float32's bytes
            out2d = out.reshape(len(rows), w.shape[0])
            return lambda: dots(rows, out2d)
        matrix = np.empty(rows.shape, np.float32)
        product = IntegerProduct(w.T, len(rows), x.dtype)
        requant = Requantizer(d["mult"], d["shift"], bias, d["out_zp"], d["clamp"], len(rows),
                              double_rounding=False)
        return _steps(lambda: np.copyto(matrix, rows), lambda: requant(product(matrix), out))

    @staticmethod
    def _bind_gemm(ctx, node, w, rows, out, kind):
        """`_bind_int8` on a compiled integer GEMM (int_gemm's `kind`): the rows in a
        zero-padded buffer of the kernel's type (one pass: for VNNI int8 x as the unsigned
        byte x + 128, for vpmaddwd widened to int16), one exact product into int32, the
        requantization (single rounding); the +128 and the zero point fold into the bias."""
        d = node.data
        matrix = np.zeros((len(rows), int_gemm.padded_depth(w.shape[1], kind)),
                          int_gemm.KINDS[kind].dtype)
        unsigned = 128 if kind == "vnni" and rows.dtype == np.int8 else 0
        gemm = int_gemm.Gemm(w, kind, rows=len(rows))
        acc = np.empty((len(rows), w.shape[0]), np.int32)
        bias = _bias(ctx, node, w.shape[0], np.int64) - \
            (d["in_zp"] + unsigned) * w.astype(np.int64).sum(axis=1)
        requant = Requantizer(d["mult"], d["shift"], bias, d["out_zp"], d["clamp"], len(rows),
                              double_rounding=False)
        dest = matrix[:, :w.shape[1]]
        if kind == "vnni":
            source = rows.view(np.uint8)
            fill = lambda: np.bitwise_xor(source, unsigned, out=dest)  # noqa: E731
        else:
            fill = lambda: np.copyto(dest, rows)  # noqa: E731 - widened, exactly
        return _steps(fill,
                      lambda: gemm(matrix, acc), lambda: requant(acc, out))

    @staticmethod
    def invoke(ctx, node):
        x, w = ctx.array(node.inputs[0]), ctx.array(node.inputs[1])
        out = ctx.array(node.outputs[0])
        rows = x.reshape(-1, w.shape[1])
        wmat = node.data.get("wmat")
        if wmat is None:
            wmat = w.T.astype(np.float32 if w.dtype == np.float32 else np.float64)
        if x.dtype == np.float32:
            y = out.reshape(-1, w.shape[0])
            if w.dtype == np.int8:
                q, row_scale = _hybrid_quantize(rows)
                y[...] = q @ wmat
                y *= row_scale * ctx.quant(node.inputs[1])[0].astype(np.float32)
            else:
                np.matmul(rows, wmat, out=y)
            y += _bias(ctx, node, w.shape[0], np.float32)
            apply_activation(y, node.options.get("fused_activation_function", 0))
            return
        d = node.data
        acc = (rows.astype(np.float64) - d["in_zp"]) @ wmat
        acc = acc.astype(np.int64) + _bias(ctx, node, w.shape[0], np.int64)
        out[...] = _requantize(acc, node, out.dtype, multiply_by_quantized_multiplier).reshape(
            out.shape)


# -- softmax --------------------------------------------------------------------------------
def _build_softmax(numba):
    @numba.njit(cache=True, nogil=True, error_model="numpy")
    def softmax_int8(x, table, scale, zp, lo, hi, wide, e, out):
        """Softmax._bind_quantized's arithmetic per row: table[max - x] in float32, summed
        left to right in float32, times float32(1) / (sum * scale) in float32, rounded
        half up (in float64 for int8 outputs, as the NumPy steps), plus the zero point,
        clamped."""
        for r in range(x.shape[0]):
            peak = x[r, 0]
            for j in range(1, x.shape[1]):
                peak = x[r, j] if x[r, j] > peak else peak
            total = np.float32(0)
            for j in range(x.shape[1]):
                e[j] = table[np.int64(peak) - np.int64(x[r, j])]
                total += e[j]
            inv = np.float32(1) / (total * scale)
            for j in range(x.shape[1]):
                p = e[j] * inv
                if wide:
                    q = np.floor(np.float64(p) + 0.5) + zp
                else:
                    q = np.float64(np.floor(p + np.float32(0.5)) + np.float32(zp))
                q = lo if q < lo else (hi if q > hi else q)
                out[r, j] = q
    return softmax_int8



@kernel("SOFTMAX")
class Softmax:
    @staticmethod
    def prepare(ctx, node):
        x = node.inputs[0]
        beta = np.float32(node.options.get("beta", 1.0))
        if _quantized(ctx, node, x):
            # TFLite's int8 softmax: a 256-entry float table of exp(-scale*beta*d) for the
            # distance d to the row's maximum, then float normalization and rounding.
            scale = -np.float32(ctx.quant(x)[0][0]) * beta
            steps = (scale * np.arange(256, dtype=np.float32)).astype(np.float64)
            node.data["table"] = np.exp(steps).astype(np.float32)
            node.data["out"] = (np.float32(ctx.quant(node.outputs[0])[0][0]),
                                int(ctx.quant(node.outputs[0])[1][0]))
        node.data["beta"] = beta
        return [ctx.shape(x)]

    @staticmethod
    def bind(ctx, node):
        """Float softmax in the output array and two bound row buffers."""
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        if x.dtype != np.float32:
            return Softmax._bind_quantized(x, out, node.data)
        beta = node.data["beta"]
        peak, total = np.empty(x.shape[:-1] + (1,), np.float32), \
            np.empty(x.shape[:-1] + (1,), np.float32)

        def softmax():  # ufunc.reduce: np.max/np.sum's Python wrappers cost more here
            np.maximum.reduce(x, axis=-1, keepdims=True, out=peak)
            np.subtract(x, peak, out=out)
            if beta != 1:
                np.multiply(out, beta, out=out)
            np.exp(out, out=out)
            np.add.reduce(out, axis=-1, keepdims=True, out=total)
            np.divide(out, total, out=out)
        return softmax

    @staticmethod
    def _bind_quantized(x, out, data):
        """invoke's int8/uint8 arithmetic on bound buffers: the row sums as a float32
        cumulative sum, which adds left to right as TFLite's loop does."""
        table, (scale, zp) = data["table"], data["out"]
        kernel = compiled("lite_softmax_int8", _build_softmax)
        if kernel is not None:  # the same arithmetic in one compiled pass per row
            info = np.iinfo(out.dtype)
            x2d, out2d = x.reshape(-1, x.shape[-1]), out.reshape(-1, x.shape[-1])
            e = np.empty(x.shape[-1], np.float32)
            wide = out.dtype == np.int8
            return lambda: kernel(x2d, table, np.float32(scale), zp, info.min, info.max,
                                  wide, e, out2d)
        rows = x.shape[:-1] + (1,)
        peak, distance = np.empty(rows, x.dtype), np.empty(x.shape, np.int16)
        e, running = np.empty(x.shape, np.float32), np.empty(x.shape, np.float32)
        prob = np.empty(x.shape, np.float32 if out.dtype == np.uint8 else np.float64)
        info = np.iinfo(out.dtype)

        def softmax():
            np.maximum.reduce(x, axis=-1, keepdims=True, out=peak)
            np.subtract(peak, x, out=distance, dtype=np.int16)
            np.take(table, distance, out=e)
            np.cumsum(e, axis=-1, out=running)
            inv = np.float32(1) / (running[..., -1:] * scale)
            np.multiply(e, inv, out=prob)  # the float32 product, widened for int8
            np.add(prob, 0.5, out=prob)  # probabilities are >= 0: rounding half away
            np.floor(prob, out=prob)  # is floor(p + 0.5), in float64 for int8 as invoke
            np.add(prob, zp, out=prob)
            np.clip(prob, info.min, info.max, out=out, casting="unsafe")
        return softmax

    @staticmethod
    def invoke(ctx, node):
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        if x.dtype == np.float32:
            z = (x - x.max(axis=-1, keepdims=True)) * node.data["beta"]
            e = np.exp(z)
            out[...] = e / e.sum(axis=-1, keepdims=True)
            return
        xi = x.astype(np.int64)
        distance = xi.max(axis=-1, keepdims=True) - xi
        e = node.data["table"][distance]
        total = np.zeros(e.shape[:-1], np.float32)
        for j in range(e.shape[-1]):  # float32, left to right, as the kernel sums
            total += e[..., j]
        scale, zp = node.data["out"]
        inv = np.float32(1) / (total * scale)
        prob = e * inv[..., None]
        info = np.iinfo(out.dtype)
        q = round_half_away(prob) + zp if out.dtype == np.int8 else \
            np.floor(prob.astype(np.float32) + np.float32(0.5))
        out[...] = np.clip(q, info.min, info.max)

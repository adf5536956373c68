"""Elementwise, reduction, shape and (de)quantization kernels."""
import numpy as np

from tensorlite.lite.kernels import kernel
from tensorlite.lite.kernels.fixed_point import (
    activation_range, inv_sqrt_quantized_multiplier,
    multiply_by_quantized_multiplier_double_rounding, quantize_multiplier, round_half_away)
from tensorlite.lite.kernels.nn import apply_activation


def _float_only(ctx, node, inputs=None):
    for i in node.inputs if inputs is None else inputs:
        if i >= 0 and ctx.dtype(i) != np.float32:
            raise NotImplementedError(f"{node.name} on {np.dtype(ctx.dtype(i)).name} tensors "
                                      f"is not implemented in tensorlite's interpreter (float32 "
                                      f"only)")


def _broadcast_shape(ctx, node):
    _float_only(ctx, node)
    return [np.broadcast_shapes(*[ctx.shape(i) for i in node.inputs])]


def _binary(name, fn, fused):
    @kernel(name)
    class Binary:
        @staticmethod
        def prepare(ctx, node):
            if name in _INTEGER_BINARY and ctx.dtype(node.outputs[0]) in (np.int8, np.uint8):
                _integer_binary_data(ctx, node, name)
                return [np.broadcast_shapes(*[ctx.shape(i) for i in node.inputs])]
            return _broadcast_shape(ctx, node)

        @staticmethod
        def invoke(ctx, node):
            a, b = (ctx.array(i) for i in node.inputs)
            out = ctx.array(node.outputs[0])
            if "integer" in node.data:
                out[...] = _integer_binary(a, b, name, node.data)
                return
            out[...] = fn(a, b)
            if fused:
                apply_activation(out, node.options.get("fused_activation_function", 0))
    return Binary


# -- int8 ADD / SUB / MUL: TFLite's reference arithmetic (add.cc, sub.cc, mul.cc) -----------
_INTEGER_BINARY = {"ADD", "SUB", "MUL", "SQUARED_DIFFERENCE"}
_ADD_LEFT_SHIFT = 20  # int8 inputs are widened by 2**20 before rescaling to a common scale
_SQDIFF_LEFT_SHIFT = 7  # squared_difference.cc widens by 2**7 (the square then fits int32)


def _integer_binary_data(ctx, node, name):
    ends = []
    for i in (*node.inputs[:2], node.outputs[0]):
        if ctx.dtype(i) != ctx.dtype(node.outputs[0]) or ctx.quant(i) is None:
            raise NotImplementedError(f"{node.name}: integer {name} needs both inputs "
                                      f"quantized as {np.dtype(ctx.dtype(node.outputs[0]))}")
        scale, zero = ctx.quant(i)[:2]
        ends.append((np.float32(scale[0]), int(zero[0])))
    (sa, za), (sb, zb), (sy, zy) = ends
    if name == "MUL":  # the scales multiply in float, as TFLite's Prepare does
        multipliers = [quantize_multiplier(np.float64(sa * sb / sy))]
    elif name == "SQUARED_DIFFERENCE":  # squared_difference.cc's Prepare
        twice = 2 * np.float64(max(sa, sb))
        multipliers = [quantize_multiplier(np.float64(sa) / twice),
                       quantize_multiplier(np.float64(sb) / twice),
                       quantize_multiplier(twice * twice / np.float64(
                           np.float32(1 << (2 * _SQDIFF_LEFT_SHIFT)) * sy))]
    else:
        twice = np.float64(np.float32(2) * max(sa, sb))
        multipliers = [quantize_multiplier(np.float64(sa) / twice),
                       quantize_multiplier(np.float64(sb) / twice),
                       quantize_multiplier(twice / np.float64(
                           np.float32(1 << _ADD_LEFT_SHIFT) * sy))]
    node.data.update(integer=multipliers, zeros=(za, zb, zy), clamp=activation_range(
        node.options.get("fused_activation_function", 0), sy, zy, ctx.dtype(node.outputs[0])))


def _integer_binary(a, b, name, d):
    za, zb, zy = d["zeros"]
    xa, xb = a.astype(np.int64) - za, b.astype(np.int64) - zb
    rescale = multiply_by_quantized_multiplier_double_rounding
    if name == "MUL":
        acc = rescale(xa * xb, *d["integer"][0])
    elif name == "SQUARED_DIFFERENCE":
        (ma, sa), (mb, sb), (my, sy) = d["integer"]
        diff = rescale(xa << _SQDIFF_LEFT_SHIFT, ma, sa) - rescale(xb << _SQDIFF_LEFT_SHIFT,
                                                                   mb, sb)
        acc = rescale(diff * diff, my, sy)
    else:
        (ma, sa), (mb, sb), (my, sy) = d["integer"]
        ya = rescale(xa << _ADD_LEFT_SHIFT, ma, sa)
        yb = rescale(xb << _ADD_LEFT_SHIFT, mb, sb)
        acc = rescale(ya + yb if name == "ADD" else ya - yb, my, sy)
    return np.clip(acc + zy, *d["clamp"])


_binary("ADD", np.add, True)
_binary("SUB", np.subtract, True)
_binary("MUL", np.multiply, True)
_binary("DIV", np.divide, True)
_binary("MAXIMUM", np.maximum, False)
_binary("MINIMUM", np.minimum, False)
_binary("SQUARED_DIFFERENCE", lambda a, b: np.square(a - b), False)
_binary("POW", np.power, False)


def _unary(name, fn):
    @kernel(name)
    class Unary:
        @staticmethod
        def prepare(ctx, node):
            integer = ctx.dtype(node.inputs[0]) in (np.int8, np.uint8)
            if integer and name in _RELU_BOUNDS:
                _integer_relu_data(ctx, node, *_RELU_BOUNDS[name])
            elif integer and name in _TABLES:
                node.data["table"] = _lookup_table(ctx, node, _TABLES[name])
            elif integer and name in _INTEGER_TABLES:
                node.data["table"] = _integer_table(ctx, node, _INTEGER_TABLES[name])
            else:
                _float_only(ctx, node)
            return [ctx.shape(node.inputs[0])]

        @staticmethod
        def invoke(ctx, node):
            x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
            if "table" in node.data:  # indexed by the input's bits as uint8
                if "lowest" in node.data and x.size and x.min() < node.data["lowest"]:
                    raise RuntimeError(f"{node.name}: {node.data['domain']} (an int8 input "
                                       f"below {node.data['lowest']})")
                out[...] = node.data["table"][x.view(np.uint8)]
                return
            if "relu" in node.data:
                (z_in, z_out, mult, shift), clamp = node.data["relu"], node.data["clamp"]
                q = multiply_by_quantized_multiplier_double_rounding(
                    x.astype(np.int64) - z_in, mult, shift)
                out[...] = np.clip(q + z_out, *clamp)
                return
            out[...] = fn(x, node.options)
    return Unary


_RELU_BOUNDS = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}
def _log(v, s_out, z_out):
    """LogLUTPrepare's function: log, and the output's lowest value for inputs <= 0."""
    lowest = np.float32(-128 - z_out) * s_out
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(v <= 0, lowest, np.log(np.where(v > 0, v, np.float32(1))))


_TABLES = {"TANH": lambda v, *_: np.tanh(v),
           "LOGISTIC": lambda v, *_: np.float32(1) / (np.float32(1) + np.exp(-v)),
           "LOG": _log}


def _lookup_table(ctx, node, transform):
    """TFLite's 8-bit TANH / LOGISTIC: a 256-entry table of the float function at every
    input value, rounded to the output's parameters in float32 (LUTPopulate)."""
    dtype = np.dtype(ctx.dtype(node.inputs[0]))
    (s_in, z_in), (s_out, z_out) = [(np.float32(q[0][0]), int(q[1][0])) for q in
                                    (ctx.quant(node.inputs[0]), ctx.quant(node.outputs[0]))]
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1)
    dequantized = s_in * (values - z_in).astype(np.float32)
    rescaled = round_half_away(transform(dequantized, s_out, z_out).astype(np.float32) *
                               (np.float32(1) / s_out)).astype(np.float32)
    table = np.clip(rescaled.astype(np.int64) + z_out, info.min, info.max).astype(dtype)
    return table[(values.astype(dtype).view(np.uint8)).argsort()]  # by the bits as uint8


def _integer_table(ctx, node, element):
    """A 256-entry table of an int8 unary kernel whose reference computes each element
    from its value alone with integer arithmetic: `element(q, (s_in, z_in), (s_out,
    z_out), node)` for every q of the input type, clamped to the output type; indexed by
    the input's bits as uint8, as _lookup_table's."""
    dtype = np.dtype(ctx.dtype(node.inputs[0]))
    if ctx.dtype(node.outputs[0]) != dtype or ctx.quant(node.inputs[0]) is None or \
            ctx.quant(node.outputs[0]) is None:
        raise NotImplementedError(f"{node.name}: the integer kernel needs a quantized "
                                  f"{dtype.name} input and output")
    ends = [(np.float32(q[0][0]), int(q[1][0])) for q in
            (ctx.quant(node.inputs[0]), ctx.quant(node.outputs[0]))]
    info = np.iinfo(dtype)
    values = np.arange(info.min, info.max + 1)
    table = np.clip([element(int(q), *ends, node) for q in values], info.min,
                    info.max).astype(dtype)
    return table[(values.astype(dtype).view(np.uint8)).argsort()]


def _negate(q, into, out, node):
    """int8 NEG as LiteRT runs it: the raw value negated in int8 (-(-128) wraps to -128),
    zero points unread; right when the output's zero point is the input's negated, as the
    converter sets it."""
    return (-q + 128) % 256 - 128


def _rsqrt(q, into, out, node):
    """int8 RSQRT (elementwise.cc RsqrtEvalQuantizedInt8): 1/sqrt of the offset value in
    fixed point, shifted up by 2**20, rescaled by 1 / (sqrt(s_in) * s_out)."""
    rescale = multiply_by_quantized_multiplier_double_rounding
    node.data.update(lowest=into[1], domain="Rsqrt is only defined for positive values")
    value = q - into[1]
    if value < 0:
        return 0  # never read: invoke refuses inputs below the zero point
    if value == 0:  # TFLite: a value near 0 gives the largest output
        return np.iinfo(np.int8).max
    mult, shift = quantize_multiplier(1.0 / np.float64(np.sqrt(into[0]) * out[0]))
    inv, inv_shift = inv_sqrt_quantized_multiplier(value)
    data = rescale(np.int64(1), inv, inv_shift + 20)
    return int(rescale(data, mult, shift - 20)) + out[1]


def _abs(q, into, out, node):
    """int8 ABS (AbsEvalQuantized): |q - z_in|, rescaled by s_in / s_out (a float32
    quotient) when the scales differ."""
    value = abs(q - into[1])
    if into[0] != out[0]:
        mult, shift = quantize_multiplier(np.float64(into[0] / out[0]))
        value = int(multiply_by_quantized_multiplier_double_rounding(value, mult, shift))
    return value + out[1]


def _sqrt(q, into, out, node):
    """int8 SQRT (SqrtEvalQuantized): the float32 square root of the dequantized value,
    divided by s_out and truncated toward zero (a C cast, not a rounding)."""
    node.data.update(lowest=into[1], domain="Sqrt is only defined for non-negative values")
    value = into[0] * np.float32(q - into[1])
    if value < 0:
        return 0  # never read: invoke refuses inputs below the zero point
    return int(np.sqrt(value) / out[0]) + out[1]


_INTEGER_TABLES = {"NEG": _negate, "RSQRT": _rsqrt, "ABS": _abs, "SQRT": _sqrt}


def _integer_relu_data(ctx, node, low, high):
    """TFLite's int8 ReLU family (activations.cc QuantizedReluX): requantize from the
    input's parameters to the output's, then clamp at the bounds in the output's terms."""
    (s_in, z_in), (s_out, z_out) = [(q[0][0], int(q[1][0])) for q in
                                    (ctx.quant(node.inputs[0]), ctx.quant(node.outputs[0]))]
    info = np.iinfo(ctx.dtype(node.outputs[0]))

    def bound(v):  # roundf(v / scale) in float32, as the kernel computes it
        return z_out + int(round_half_away(np.float32(v) / np.float32(s_out)))
    clamp = (max(info.min, bound(low)), info.max if high is None else min(info.max, bound(high)))
    node.data.update(relu=(z_in, z_out) + quantize_multiplier(np.float64(s_in) /
                                                              np.float64(s_out)), clamp=clamp)


for _name, _fn in {
        "RELU": lambda x, o: np.maximum(x, 0), "RELU6": lambda x, o: np.clip(x, 0, 6),
        "RELU_N1_TO_1": lambda x, o: np.clip(x, -1, 1),
        "LOGISTIC": lambda x, o: 1 / (1 + np.exp(-x)), "TANH": lambda x, o: np.tanh(x),
        "EXP": lambda x, o: np.exp(x), "LOG": lambda x, o: np.log(x),
        "SQRT": lambda x, o: np.sqrt(x), "RSQRT": lambda x, o: 1 / np.sqrt(x),
        "NEG": lambda x, o: -x, "ABS": lambda x, o: np.abs(x),
        "SQUARE": lambda x, o: x * x, "SIN": lambda x, o: np.sin(x),
        "COS": lambda x, o: np.cos(x), "FLOOR": lambda x, o: np.floor(x),
        "CEIL": lambda x, o: np.ceil(x), "ELU": lambda x, o: np.where(x > 0, x, np.expm1(x)),
        "LEAKY_RELU": lambda x, o: np.where(x > 0, x, x * np.float32(o.get("alpha", 0.2))),
}.items():
    _unary(_name, _fn)


def _axes(ctx, node):
    axes = ctx.const(node.inputs[1])
    if axes is None:
        raise NotImplementedError(f"{node.name} with computed axes is not implemented")
    rank = len(ctx.shape(node.inputs[0]))
    return tuple(sorted({int(a) % rank for a in np.atleast_1d(axes)}))


def _reduce(name, fn):
    @kernel(name)
    class Reduce:
        @staticmethod
        def prepare(ctx, node):
            axes = node.data["axes"] = _axes(ctx, node)
            keep = bool(node.options.get("keep_dims", False))
            if name == "MEAN" and ctx.dtype(node.inputs[0]) in (np.int8, np.uint8):
                _integer_mean_data(ctx, node, axes, keep)
            else:
                _float_only(ctx, node, node.inputs[:1])  # the second input: int32 axes
            shape = ctx.shape(node.inputs[0])
            return [tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else
                    tuple(d for i, d in enumerate(shape) if i not in axes)]

        @staticmethod
        def invoke(ctx, node):
            out, x = ctx.array(node.outputs[0]), ctx.array(node.inputs[0])
            if "mean" in node.data:
                out[...] = _integer_mean(x, node.data).reshape(out.shape)
                return
            out[...] = fn(x, axis=node.data["axes"]).reshape(out.shape)
    return Reduce


def _integer_mean_data(ctx, node, axes, keep):
    """TFLite's reference int8 MEAN (reduce.cc, reference/reduce.h): the integer sum less
    the zero points, rescaled by in_scale / out_scale with 1/count folded into the
    multiplier; at equal scales and zero points, the sum divided by the count."""
    if keep and len(ctx.shape(node.inputs[0])) == 4 and set(axes) == {1, 2}:
        raise NotImplementedError(f"{node.name}: integer MEAN over the spatial axes with "
                                  f"keep_dims (TFLite's specialised kernel) is not implemented "
                                  f"in tensorlite's interpreter")
    (s_in, z_in), (s_out, z_out) = [(q[0][0], int(q[1][0])) for q in
                                    (ctx.quant(node.inputs[0]), ctx.quant(node.outputs[0]))]
    count = int(np.prod([ctx.shape(node.inputs[0])[a] for a in axes], dtype=np.int64))
    info = np.iinfo(ctx.dtype(node.outputs[0]))
    node.data.update(mean=(count, z_in, z_out), clamp=(info.min, info.max), same=bool(
        s_in == s_out and z_in == z_out))
    mult, shift = quantize_multiplier(np.float64(s_in) / np.float64(s_out))
    fold = min(count.bit_length() - 1, 32, 31 + shift)
    node.data["multiplier"] = (((mult << fold) // count), shift - fold)


def _integer_mean(x, d):
    count, z_in, z_out = d["mean"]
    total = x.astype(np.int64).sum(axis=d["axes"])
    if d["same"]:  # C's integer division truncates toward zero
        return np.sign(total) * (np.abs(total) // count)
    q = multiply_by_quantized_multiplier_double_rounding(total - z_in * count,
                                                         *d["multiplier"])
    return np.clip(q + z_out, *d["clamp"])


_reduce("MEAN", np.mean)
_reduce("SUM", np.sum)
_reduce("REDUCE_MAX", np.max)
_reduce("REDUCE_MIN", np.min)
_reduce("REDUCE_PROD", np.prod)


@kernel("RESHAPE")
class Reshape:
    @staticmethod
    def prepare(ctx, node):
        shape = ctx.const(node.inputs[1]) if len(node.inputs) > 1 else None
        shape = list(node.options.get("new_shape", [])) if shape is None else list(shape)
        size = int(np.prod(ctx.shape(node.inputs[0])))
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1])) or 1
            shape[shape.index(-1)] = size // known
        if int(np.prod(shape)) != size:
            raise ValueError(f"{node.name}: cannot reshape {ctx.shape(node.inputs[0])} to "
                             f"{shape}")
        return [tuple(int(d) for d in shape)]

    @staticmethod
    def invoke(ctx, node):
        out = ctx.array(node.outputs[0])
        out[...] = ctx.array(node.inputs[0]).reshape(out.shape)


@kernel("TRANSPOSE")
class Transpose:
    @staticmethod
    def prepare(ctx, node):
        perm = node.data["perm"] = tuple(int(p) for p in ctx.const(node.inputs[1]))
        return [tuple(ctx.shape(node.inputs[0])[p] for p in perm)]

    @staticmethod
    def invoke(ctx, node):
        ctx.array(node.outputs[0])[...] = np.transpose(ctx.array(node.inputs[0]),
                                                       node.data["perm"])


def _same_quantization(ctx, node):
    """An integer CONCATENATION copies values: TFLite requires every input at the
    output's scale and zero point (the converter requantizes the others first)."""
    out = ctx.quant(node.outputs[0])
    for i in node.inputs:
        q = ctx.quant(i)
        if ctx.dtype(i) != ctx.dtype(node.outputs[0]) or q is None or \
                not (np.array_equal(q[0], out[0]) and np.array_equal(q[1], out[1])):
            raise ValueError(f"{node.name}: input tensor {i} is not quantized as the output "
                             f"(scale {out[0]}, zero point {out[1]}); TFLite's integer "
                             f"CONCATENATION needs the same parameters on every input")


@kernel("CONCATENATION")
class Concatenation:
    @staticmethod
    def prepare(ctx, node):
        if ctx.dtype(node.outputs[0]) != np.float32:
            _same_quantization(ctx, node)
        shapes = [ctx.shape(i) for i in node.inputs]
        axis = node.data["axis"] = node.options.get("axis", 0) % len(shapes[0])
        out = list(shapes[0])
        out[axis] = sum(s[axis] for s in shapes)
        return [tuple(out)]

    @staticmethod
    def invoke(ctx, node):
        out = ctx.array(node.outputs[0])
        out[...] = np.concatenate([ctx.array(i) for i in node.inputs], axis=node.data["axis"])
        apply_activation(out, node.options.get("fused_activation_function", 0))


@kernel("PAD", "PADV2")
class Pad:
    @staticmethod
    def prepare(ctx, node):
        pads = node.data["pads"] = [tuple(int(v) for v in p)
                                    for p in ctx.const(node.inputs[1])]
        q = ctx.quant(node.inputs[0])
        node.data["value"] = int(q[1][0]) if q is not None and \
            ctx.dtype(node.inputs[0]) != np.float32 else 0
        return [tuple(d + lo + hi for d, (lo, hi) in zip(ctx.shape(node.inputs[0]), pads))]

    @staticmethod
    def invoke(ctx, node):
        ctx.array(node.outputs[0])[...] = np.pad(ctx.array(node.inputs[0]), node.data["pads"],
                                                 constant_values=node.data["value"])


@kernel("BATCH_MATMUL")
class BatchMatMul:
    @staticmethod
    def prepare(ctx, node):
        if ctx.dtype(node.outputs[0]) in (np.int8, np.uint8):
            # TFLite's reference: the exact integer sum of (a - za) * (b - zb), rescaled by
            # scale_a * scale_b / scale_out (batch_matmul.cc)
            (sa, za), (sb, zb), (so, zo) = [(np.float64(q[0][0]), int(q[1][0])) for q in (
                ctx.quant(i) for i in (*node.inputs, node.outputs[0]))]
            info = np.iinfo(ctx.dtype(node.outputs[0]))
            node.data.update(integer=quantize_multiplier(sa * sb / so), zeros=(za, zb, zo),
                             clamp=(info.min, info.max))
        else:
            _float_only(ctx, node)
        a, b = (list(ctx.shape(i)) for i in node.inputs)
        if node.options.get("adj_x"):
            a[-1], a[-2] = a[-2], a[-1]
        if node.options.get("adj_y"):
            b[-1], b[-2] = b[-2], b[-1]
        return [tuple(np.broadcast_shapes(tuple(a[:-2]), tuple(b[:-2]))) + (a[-2], b[-1])]

    @staticmethod
    def invoke(ctx, node):
        a, b = (ctx.array(i) for i in node.inputs)
        if node.options.get("adj_x"):
            a = np.swapaxes(a, -1, -2)
        if node.options.get("adj_y"):
            b = np.swapaxes(b, -1, -2)
        if "integer" in node.data:  # float64 products of int8 offsets: exact sums
            za, zb, zo = node.data["zeros"]
            acc = (a.astype(np.float64) - za) @ (b.astype(np.float64) - zb)
            q = multiply_by_quantized_multiplier_double_rounding(acc.astype(np.int64),
                                                                 *node.data["integer"])
            ctx.array(node.outputs[0])[...] = np.clip(q + zo, *node.data["clamp"])
            return
        ctx.array(node.outputs[0])[...] = a @ b


@kernel("QUANTIZE")
class Quantize:
    @staticmethod
    def prepare(ctx, node):
        x, y = node.inputs[0], node.outputs[0]
        out_scale, out_zp = ctx.quant(y)[0][0], int(ctx.quant(y)[1][0])
        node.data["out"] = (np.float32(out_scale), out_zp)
        if ctx.dtype(x) != np.float32:  # requantize between int8 and uint8
            in_scale, in_zp = ctx.quant(x)[0][0], int(ctx.quant(x)[1][0])
            node.data["requant"] = quantize_multiplier(np.float64(in_scale) /
                                                       np.float64(out_scale)) + (in_zp,)
        return [ctx.shape(x)]

    @staticmethod
    def invoke(ctx, node):
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        scale, zp = node.data["out"]
        info = np.iinfo(out.dtype)
        if "requant" in node.data:
            mult, shift, in_zp = node.data["requant"]  # reference_ops::Requantize
            q = multiply_by_quantized_multiplier_double_rounding(x.astype(np.int64) - in_zp,
                                                                 mult, shift) + zp
        else:
            q = round_half_away(x / scale) + zp
        out[...] = np.clip(q, info.min, info.max)


@kernel("DEQUANTIZE")
class Dequantize:
    @staticmethod
    def prepare(ctx, node):
        return [ctx.shape(node.inputs[0])]

    @staticmethod
    def invoke(ctx, node):
        x, out = ctx.array(node.inputs[0]), ctx.array(node.outputs[0])
        if x.dtype == np.float16:
            out[...] = x
            return
        scale, zp = ctx.quant(node.inputs[0])[0][0], int(ctx.quant(node.inputs[0])[1][0])
        out[...] = (np.float64(scale) * (x.astype(np.int64) - zp)).astype(np.float32)


@kernel("GATHER")
class Gather:
    @staticmethod
    def prepare(ctx, node):
        params, indices = (ctx.shape(i) for i in node.inputs)
        axis = node.data["axis"] = node.options.get("axis", 0) % len(params)
        if node.options.get("batch_dims", 0):
            raise NotImplementedError("GATHER with batch_dims is not implemented")
        return [tuple(params[:axis]) + tuple(indices) + tuple(params[axis + 1:])]

    @staticmethod
    def invoke(ctx, node):
        params, indices = (ctx.array(i) for i in node.inputs)
        if np.any(indices < 0) or np.any(indices >= params.shape[node.data["axis"]]):
            raise RuntimeError(f"GATHER: index out of range 0..{params.shape[node.data['axis']]}"
                               f" - 1")
        ctx.array(node.outputs[0])[...] = np.take(params, indices, axis=node.data["axis"])


@kernel("SPLIT_V")
class SplitV:
    @staticmethod
    def prepare(ctx, node):
        shape = list(ctx.shape(node.inputs[0]))
        sizes = [int(s) for s in ctx.const(node.inputs[1])]
        axis = node.data["axis"] = int(ctx.const(node.inputs[2])) % len(shape)
        if -1 in sizes:
            sizes[sizes.index(-1)] = shape[axis] - (sum(sizes) + 1)
        node.data["cuts"] = np.cumsum(sizes)[:-1]
        return [tuple(shape[:axis]) + (s,) + tuple(shape[axis + 1:]) for s in sizes]

    @staticmethod
    def invoke(ctx, node):
        parts = np.split(ctx.array(node.inputs[0]), node.data["cuts"], axis=node.data["axis"])
        for index, part in zip(node.outputs, parts):
            ctx.array(index)[...] = part


@kernel("UNPACK")
class Unpack:
    @staticmethod
    def prepare(ctx, node):
        shape = ctx.shape(node.inputs[0])
        axis = node.data["axis"] = node.options.get("axis", 0) % len(shape)
        return [tuple(d for i, d in enumerate(shape) if i != axis)] * len(node.outputs)

    @staticmethod
    def invoke(ctx, node):
        x = ctx.array(node.inputs[0])
        for k, index in enumerate(node.outputs):
            ctx.array(index)[...] = np.take(x, k, axis=node.data["axis"])


@kernel("PACK")
class Pack:
    @staticmethod
    def prepare(ctx, node):
        shape = list(ctx.shape(node.inputs[0]))
        axis = node.data["axis"] = node.options.get("axis", 0) % (len(shape) + 1)
        return [tuple(shape[:axis]) + (len(node.inputs),) + tuple(shape[axis:])]

    @staticmethod
    def invoke(ctx, node):
        ctx.array(node.outputs[0])[...] = np.stack([ctx.array(i) for i in node.inputs],
                                                   axis=node.data["axis"])

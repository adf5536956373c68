"""Post-training quantization passes over a converted subgraph (TensorFlow Lite's schemes).

- dynamic range (`optimizations=[DEFAULT]`): the weights of FULLY_CONNECTED, CONV_2D and
  DEPTHWISE_CONV_2D (per output channel) with at least `MIN_WEIGHTS` elements
  become symmetric int8; TFLite's hybrid kernels quantize activations on the fly.
- float16 (`target_spec.supported_types = [tf.float16]` with DEFAULT): float constants are
  stored as float16 and widened by DEQUANTIZE ops at the start of the graph.
- full integer (`representative_dataset`): activations int8 (asymmetric, ranges calibrated
  by running the graph on the dataset), weights int8 symmetric (per output channel for
  convolutions), biases int32 at scale input_scale * weight_scale; SOFTMAX and LOGISTIC
  outputs at 1/256 and TANH at 1/128 as TFLite's kernels require; pooling, RESHAPE, PAD,
  TRANSPOSE, SPLIT_V and UNPACK keep their input's scale, a GATHER its table's, a NEG its
  input's scale with the zero point negated (LiteRT's int8 NEG negates raw values);
  CONCATENATION and PACK inputs are requantized to the output's. Integer model inputs
  (token ids) stay as they are. `inference_input_type` / `inference_output_type` float32
  (a QUANTIZE / DEQUANTIZE op at the ends), int8, or uint8 (zero point +128).

Error: each weight rounds to within half its step (scale/2), each int8 activation to within
half of its own step. On the CIFAR CNN of the notes "Structure of Deep Learning
Frameworks" made a classifier (softmax outputs; the int8
output step is 1/256) the tests bound the largest probability error over 200 held-out
images at 0.1 for full integer and dynamic range (measured about 0.05) and 3e-3 for float16,
and require the float model's argmax on at least 99% of them.
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.graph.capture import run_graph

MIN_WEIGHTS = 1024  # smaller weight tensors stay float, as TensorFlow's converter does
_WEIGHT_AXIS = {"FULLY_CONNECTED": 0, "CONV_2D": 0, "DEPTHWISE_CONV_2D": 3}
_SAME_SCALE = {"MAX_POOL_2D", "AVERAGE_POOL_2D", "RESHAPE", "PAD", "TRANSPOSE", "SPLIT_V",
               "UNPACK"}
_JOINS = {"CONCATENATION", "PACK"}  # copy their inputs: each requantized to the output's
_FIXED_OUTPUT = {"SOFTMAX": (1 / 256, -128), "LOGISTIC": (1 / 256, -128),
                 "TANH": (1 / 128, 0)}
_NEGATED = {"NEG"}  # LiteRT's int8 NEG negates raw values: same scale, zero point negated
_INT8_OPS = {"FULLY_CONNECTED", "CONV_2D", "DEPTHWISE_CONV_2D", "ADD", "SUB", "MUL",
             "MEAN", "BATCH_MATMUL", "GATHER", "RSQRT", "SQUARED_DIFFERENCE", "ABS", "SQRT", "LOG"} | _JOINS | \
    _SAME_SCALE | set(_FIXED_OUTPUT) | {"RELU", "RELU6"} | _NEGATED


def passes_for(converter):
    """The passes the converter's settings ask for, in TensorFlow's precedence."""
    io_types = {dtypes.as_dtype(converter.inference_input_type),
                dtypes.as_dtype(converter.inference_output_type)}
    if not converter.optimizations:
        if converter.representative_dataset is not None or io_types != {dtypes.float32}:
            raise ValueError("representative_dataset and integer inference types need "
                             "converter.optimizations = [tf.lite.Optimize.DEFAULT]")
        return []
    types = {dtypes.as_dtype(t) for t in converter.target_spec.supported_types}
    if dtypes.float16 in types and converter.representative_dataset is None:
        return [float16_weights]
    if converter.representative_dataset is None:
        if io_types != {dtypes.float32}:
            raise ValueError("int8/uint8 inference_input_type or inference_output_type needs "
                             "a representative_dataset (full-integer quantization)")
        return [dynamic_range]
    return [lambda ctx: full_integer(ctx, converter)]


# -- constant tensors ----------------------------------------------------------------------
_NP = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "INT8": np.int8,
       "UINT8": np.uint8, "INT64": np.int64, "BOOL": np.bool_}


def constant(ctx, index):
    """A constant tensor's value (None for a computed tensor)."""
    tensor = ctx.tensors[index]
    if not tensor["buffer"]:
        return None
    data = ctx.buffers[tensor["buffer"]]["data"]
    return data.view(_NP[tensor["type"]]).reshape(tensor["shape"])


def set_constant(ctx, index, array, quantization=None):
    array = np.ascontiguousarray(array)
    tensor = ctx.tensors[index]
    ctx.buffers[tensor["buffer"]] = {"data": array.view(np.uint8).reshape(-1)}
    tensor["type"] = {v: k for k, v in _NP.items()}[array.dtype.type]
    if quantization is not None:
        tensor["quantization"] = quantization


def _symmetric(w, axis):
    """int8 weights and their scales, per channel along `axis` (None: one scale)."""
    reduce = tuple(a for a in range(w.ndim) if a != axis) if axis is not None else None
    peak = np.max(np.abs(w), axis=reduce) if w.size else np.float32(0)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    shape = [1] * w.ndim
    if axis is not None:
        shape[axis] = -1
    q = np.clip(np.round(w / scale.reshape(shape)), -127, 127).astype(np.int8)
    return q, np.atleast_1d(scale)


def _params(scale, zero_point, axis=0):
    return {"scale": np.atleast_1d(np.asarray(scale, np.float32)),
            "zero_point": np.atleast_1d(np.asarray(zero_point, np.int64)),
            "quantized_dimension": int(axis or 0)}


def _code(ctx, operator):
    return ctx.opcodes[operator["opcode_index"]][0]


def dynamic_range(ctx):
    """int8 weights for TFLite's hybrid FULLY_CONNECTED / CONV_2D / DEPTHWISE_CONV_2D."""
    for operator in ctx.operators:
        code = _code(ctx, operator)
        if code not in _WEIGHT_AXIS:
            continue
        w = constant(ctx, operator["inputs"][1])
        if w is None or w.dtype != np.float32 or w.size < MIN_WEIGHTS:
            continue
        axis = _WEIGHT_AXIS[code]
        q, scale = _symmetric(w, axis)
        set_constant(ctx, operator["inputs"][1], q, _params(scale, np.zeros_like(scale,
                                                                                  np.int64),
                                                            axis))


def float16_weights(ctx):
    """float16 constants, widened to float32 by DEQUANTIZE ops run first."""
    first = []
    for index, tensor in enumerate(list(ctx.tensors)):
        w = constant(ctx, index)
        if w is None or w.dtype != np.float32:
            continue
        half = ctx.const(w.astype(np.float16), "float16")
        ctx.buffers[tensor["buffer"]] = {}  # the float32 copy is gone: file size halves
        tensor["buffer"] = 0  # now computed: the DEQUANTIZE's output
        first.append(_detached(ctx, "DEQUANTIZE", [half], [index]))
    ctx.operators[:0] = first


# -- full integer --------------------------------------------------------------------------
def _calibrate(cap, dataset):
    """min/max of every slot over the representative dataset."""
    graph = cap.graph
    batch = graph.specs[graph.placeholders[0]][0][0]
    ranges, pending = {}, []

    def run(group):
        inputs = [np.concatenate([s[i] for s in group])[:batch] for i in range(len(group[0]))]
        values, _ = run_graph(graph, inputs)
        for slot, v in values.items():
            if v.dtype.kind == "f":  # inf/NaN (an rsqrt at 0) would make the scale NaN
                v = v[np.isfinite(v)]
            if v.dtype.kind == "f" and v.size:
                lo, hi = float(np.min(v)), float(np.max(v))
                old = ranges.get(slot, (lo, hi))
                ranges[slot] = (min(lo, old[0]), max(hi, old[1]))

    count = 0
    for sample in dataset():
        sample = [np.asarray(getattr(s, "numpy", lambda s=s: s)()) for s in
                  (sample if isinstance(sample, (list, tuple)) else [sample])]
        count += 1
        pending.append(sample)
        if sum(len(s[0]) for s in pending) >= batch:
            run(pending)
            pending = []
    if pending:
        while sum(len(s[0]) for s in pending) < batch:
            pending.append(pending[-1])
        run(pending)
    if not count:
        raise ValueError("representative_dataset yielded no samples")
    return ranges


def _asymmetric(lo, hi):
    """TFLite's int8 (scale, zero point) for a float range, widened to hold 0."""
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    if hi == lo:
        hi = lo + 1e-6
    scale = (hi - lo) / 255.0
    zero_point = int(np.clip(np.round(-128 - lo / scale), -128, 127))
    return np.float32(scale), zero_point


def _tensor_ranges(ctx, ranges):
    """Each computed float tensor's range: of its last slot (a fused op's tensor holds the
    activation's output, the later slot)."""
    out = {}
    for slot, index in sorted(ctx.slots.items()):
        if slot in ranges:
            out[index] = ranges[slot]
    for index, slot in ctx.range_slots.items():
        if slot in ranges:
            out.setdefault(index, ranges[slot])
    return out


def _float_inputs(ctx):
    """The model inputs quantization applies to (integer inputs, token ids, stay as they
    are)."""
    return [i for i in ctx.input_tensors if ctx.tensors[i]["type"] == "FLOAT32"]


def _quant_of(tensor):
    q = tensor.get("quantization")
    return None if q is None else (float(q["scale"][0]), int(q["zero_point"][0]))


def _activation_params(ctx, ranges):
    """Sets int8 quantization on every computed float tensor, op by op."""
    tensor_ranges = _tensor_ranges(ctx, ranges)
    for index in _float_inputs(ctx):
        ctx.tensors[index]["quantization"] = _params(*_asymmetric(*tensor_ranges[index]))
    for operator in ctx.operators:
        code = _code(ctx, operator)
        if code not in _INT8_OPS:
            raise NotImplementedError(f"full-integer quantization of {code} is not built; "
                                      f"convert without a representative_dataset")
        table = constant(ctx, operator["inputs"][0]) if code == "GATHER" else None
        for index in operator["outputs"]:
            if code in _FIXED_OUTPUT:
                params = _FIXED_OUTPUT[code]
            elif code in _SAME_SCALE:
                params = _quant_of(ctx.tensors[operator["inputs"][0]])
            elif code in _NEGATED:
                scale, zero = _quant_of(ctx.tensors[operator["inputs"][0]])
                params = scale, min(-zero, 127)
            elif table is not None:  # rows of a table quantized as _quantize_constants does
                params = _asymmetric(float(table.min()), float(table.max()))
            else:
                params = _asymmetric(*tensor_ranges[index])
            ctx.tensors[index]["quantization"] = _params(*params)
            ctx.tensors[index]["type"] = "INT8"


def _quantize_constants(ctx, ranges):
    for operator in ctx.operators:
        code = _code(ctx, operator)
        ins = operator["inputs"]
        if code in _WEIGHT_AXIS:
            axis = _WEIGHT_AXIS[code]
            q, w_scale = _symmetric(constant(ctx, ins[1]), axis)
            set_constant(ctx, ins[1], q, _params(w_scale, np.zeros(len(w_scale)), axis))
            in_scale = _quant_of(ctx.tensors[ins[0]])[0]
            if len(ins) > 2 and ins[2] >= 0:
                b_scale = (np.float64(in_scale) * w_scale.astype(np.float64))
                b = constant(ctx, ins[2]).astype(np.float64)
                qb = np.round(b / b_scale).astype(np.int32)
                set_constant(ctx, ins[2], qb, _params(b_scale.astype(np.float32),
                                                      np.zeros(len(b_scale)), 0))
            continue
        for index in ins:
            c = constant(ctx, index) if index >= 0 else None
            if c is not None and c.dtype == np.float32:
                scale, zp = _asymmetric(float(c.min()), float(c.max()))
                q = np.clip(np.round(c / scale) + zp, -128, 127).astype(np.int8)
                set_constant(ctx, index, q, _params(scale, zp))


def _io_boundaries(ctx, input_type, output_type):
    """QUANTIZE / DEQUANTIZE ops (or retyped tensors) at the model's inputs and outputs."""
    def shifted(tensor):
        q = dict(tensor["quantization"])
        q["zero_point"] = q["zero_point"] + 128
        return q

    head, tail = [], []
    for index in _float_inputs(ctx):
        tensor = ctx.tensors[index]
        if input_type == dtypes.int8:
            tensor["type"] = "INT8"
            continue
        inner = dict(tensor, name=tensor["name"] + "_int8", type="INT8")
        ctx.tensors.append(inner)
        inner_index = len(ctx.tensors) - 1
        for operator in ctx.operators:
            operator["inputs"] = [inner_index if i == index else i for i in operator["inputs"]]
        if input_type == dtypes.uint8:
            tensor["type"], tensor["quantization"] = "UINT8", shifted(tensor)
        else:
            tensor["type"] = "FLOAT32"
            del tensor["quantization"]
        head.append(_detached(ctx, "QUANTIZE", [index], [inner_index]))
    for index in ctx.output_tensors:
        tensor = ctx.tensors[index]
        if output_type == dtypes.int8:
            continue
        inner = dict(tensor, name=tensor["name"] + "_int8")
        ctx.tensors.append(inner)
        inner_index = len(ctx.tensors) - 1
        for operator in ctx.operators:
            operator["outputs"] = [inner_index if i == index else i
                                   for i in operator["outputs"]]
        if output_type == dtypes.uint8:
            tensor["type"], tensor["quantization"] = "UINT8", shifted(tensor)
            tail.append(_detached(ctx, "QUANTIZE", [inner_index], [index]))
        else:
            tensor["type"] = "FLOAT32"
            del tensor["quantization"]
            tail.append(_detached(ctx, "DEQUANTIZE", [inner_index], [index]))
    ctx.operators[:0] = head
    ctx.operators.extend(tail)


def _same_params(a, b):
    return all(np.array_equal(a[k], b[k]) for k in ("scale", "zero_point"))


def _concat_requantize(ctx):
    """TFLite's int8 CONCATENATION and PACK read their inputs at the output's scale and zero
    point:
    an input quantized otherwise (a TANH's fixed 1/128, a branch of narrower range) goes
    through a QUANTIZE op (int8 -> int8) to the output's parameters first."""
    ops = []
    for operator in ctx.operators:
        if _code(ctx, operator) in _JOINS:
            wanted = ctx.tensors[operator["outputs"][0]]["quantization"]
            for k, index in enumerate(operator["inputs"]):
                tensor = ctx.tensors[index]
                if _same_params(tensor["quantization"], wanted):
                    continue
                # int8 even when the input is still a float model input here (its QUANTIZE
                # at the model's start comes later, in _io_boundaries)
                ctx.tensors.append(dict(tensor, name=tensor["name"] + "_requantized",
                                        buffer=0, quantization=dict(wanted), type="INT8"))
                operator["inputs"][k] = len(ctx.tensors) - 1
                ops.append(_detached(ctx, "QUANTIZE", [index], [operator["inputs"][k]]))
        ops.append(operator)
    ctx.operators[:] = ops


def _detached(ctx, builtin, inputs, outputs):
    ctx.op(builtin, inputs, outputs)
    return ctx.operators.pop()


def full_integer(ctx, converter):
    """int8 activations and weights (TFLite's full-integer post-training quantization)."""
    input_type = dtypes.as_dtype(converter.inference_input_type)
    output_type = dtypes.as_dtype(converter.inference_output_type)
    for t in (input_type, output_type):
        if t not in (dtypes.float32, dtypes.int8, dtypes.uint8):
            raise ValueError(f"inference_input_type/inference_output_type must be tf.float32, "
                             f"tf.int8 or tf.uint8, got {t.name}")
    ranges = _calibrate(ctx.capture, converter.representative_dataset)
    _activation_params(ctx, ranges)
    _quantize_constants(ctx, ranges)
    _concat_requantize(ctx)
    _io_boundaries(ctx, input_type, output_type)

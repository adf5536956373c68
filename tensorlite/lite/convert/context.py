"""The context an op's TFLite rule writes into: tensors and their buffers, operators, operator
codes, and the peephole fusions of a bias and an activation into the op before them."""
import numpy as np

from tensorlite.framework import errors
from tensorlite.graph.capture import ExportContext
from tensorlite.lite import schema
from tensorlite.lite.convert.einsum import lower_einsum

# NumPy dtype name -> TFLite TensorType
TENSOR_TYPES = {"float32": "FLOAT32", "float16": "FLOAT16", "int32": "INT32",
                "uint8": "UINT8", "int64": "INT64", "bool": "BOOL", "int16": "INT16",
                "int8": "INT8", "float64": "FLOAT64"}


class LiteContext(ExportContext):
    """Collects one subgraph's tensors and operators and the model's buffers.

    Example (an op's rule):
        >>> def exp(ctx, node):
        ...     ctx.op("EXP", [ctx.tensor(node.inputs[0])], [ctx.output(node)])
    """

    consumer = "TFLite conversion"

    def __init__(self, capture, batch=1):
        super().__init__(capture)
        self.batch = batch
        self.tensors = []
        self.buffers = [{}]  # buffer 0: the empty sentinel every intermediate points to
        self.operators = []
        self.opcodes = []  # [(builtin name, custom name or None, version)]
        self.slots = {}  # IR slot -> tensor index
        self.consumers = {}  # slot -> how many emitted nodes and outputs read it
        self.fusable = {}  # tensor index -> the operator dict that can absorb bias/act
        # tensor index -> the IR slot whose values it holds rearranged (an einsum's product
        # before its final TRANSPOSE/RESHAPE): calibration gives it the slot's range
        self.range_slots = {}

    # -- what the trace knows -------------------------------------------------------------
    def shape(self, slot):
        """The slot's shape at the converted batch size."""
        return self.capture.shape_at(slot, self.batch)

    # -- tensors --------------------------------------------------------------------------
    def new_tensor(self, shape, dtype, name, data=None, signature=None, quantization=None):
        """Appends a tensor (with a buffer holding `data` when given); returns its index."""
        buffer = 0
        if data is not None:
            self.buffers.append({"data": np.ascontiguousarray(data).view(np.uint8)
                                 .reshape(-1)})
            buffer = len(self.buffers) - 1
        entry = {"shape": [int(d) for d in shape],
                 "type": TENSOR_TYPES[np.dtype(dtype).name], "buffer": buffer,
                 "name": f"{name}_{len(self.tensors)}", "has_rank": True}
        if signature is not None:
            entry["shape_signature"] = [int(d) for d in signature]
        if quantization is not None:
            entry["quantization"] = quantization
        self.tensors.append(entry)
        return len(self.tensors) - 1

    def const(self, array, name="const", quantization=None):
        """A constant tensor holding `array`."""
        array = np.asarray(array)
        return self.new_tensor(array.shape, array.dtype, name, array,
                               quantization=quantization)

    def tensor(self, slot):
        """The tensor of an IR slot; a constant slot becomes a tensor with a buffer."""
        index = self.slots.get(slot)
        if index is None:
            value = self.value(slot)
            if value is None:
                raise errors.InternalError(None, None, f"slot {slot} read before written")
            if self.capture.dynamic_dims(slot):
                value = self._batch_broadcast(slot, value)
            index = self.slots[slot] = self.const(value)
        return index

    def _batch_broadcast(self, slot, value):
        """A constant whose shape follows the batch size (an RNN's zero state): uniform
        fills are written at batch 1, which elementwise ops broadcast to any batch."""
        if not (value.size and np.all(value == value.flat[0])):
            raise errors.UnimplementedError(
                None, None, f"TFLite conversion: a constant of shape {value.shape} changes "
                f"with the batch size and is not a uniform fill; convert with a fixed batch "
                f"size in the input signature")
        return np.full(self.shape(slot), value.flat[0], value.dtype)

    def output(self, node, i=0):
        """The tensor for the node's output `i` (created on first use)."""
        slot = node.outputs[i]
        if slot not in self.slots:
            value = self.capture.value(slot)
            dynamic = self.capture.dynamic_dims(slot)
            shape = self.shape(slot)
            self.slots[slot] = self.new_tensor(
                shape, value.dtype, node.op.name.lower(),
                signature=[-1 if a in dynamic else d for a, d in enumerate(shape)])
        return self.slots[slot]

    # -- operators ------------------------------------------------------------------------
    def opcode(self, builtin, custom=None, version=1):
        key = (builtin, custom, version)
        if key not in self.opcodes:
            self.opcodes.append(key)
        return self.opcodes.index(key)

    def op(self, builtin, inputs, outputs, options=None, version=1, fuse=None, custom=None,
           custom_options=None):
        """Appends an operator; returns it. `options` is (options table name, dict).
        `fuse=(bias input index or None, options key of the activation)` lets a following
        bias add and activation merge into it."""
        operator = {"opcode_index": self.opcode(builtin, custom, version),
                    "inputs": list(inputs), "outputs": list(outputs)}
        if options is not None:
            union = "builtin_options" if options[0] in schema.UNIONS["BuiltinOptions"] else \
                "builtin_options_2"
            operator[union] = options
        if custom_options is not None:
            operator["custom_options"] = np.frombuffer(custom_options, np.uint8)
        self.operators.append(operator)
        if fuse is not None:
            self.fusable[operator["outputs"][0]] = (operator, fuse)
        return operator

    def _fusable_producer(self, slot):
        tensor = self.slots.get(slot)
        if tensor is None or self.consumers.get(slot, 0) != 1:
            return None
        return self.fusable.get(tensor)

    def fuse_bias(self, node):
        """Merges `x + bias` into the op that made x (FULLY_CONNECTED, CONV_2D, ...) when
        it is x's only reader and bias is a constant vector along the last axis."""
        x, b = node.inputs
        found = self._fusable_producer(x)
        bias = self.value(b)
        if found is None or bias is None or found[1][0] is None:
            return False
        operator, (bias_index, act_key) = found
        channels = self.shape(x)[-1]
        if bias.size != channels or bias.shape[-1:] != (channels,) or \
                operator["inputs"][bias_index] >= 0:
            return False
        operator["inputs"][bias_index] = self.const(bias.reshape(channels), "bias")
        self.slots[node.outputs[0]] = self.slots[x]
        return True

    def fuse_activation(self, node, activation):
        """Merges an activation (an ActivationFunctionType name) into the op before it."""
        x = node.inputs[0]
        found = self._fusable_producer(x)
        if found is None:
            return False
        operator, (_, act_key) = found
        del self.fusable[self.slots[x]]  # nothing fuses after the activation
        self.options_of(operator)[act_key] = activation
        self.slots[node.outputs[0]] = self.slots[x]
        return True

    def einsum(self, node, ins, out):
        """Writes a two-operand einsum (operand labels `ins`, output labels `out`) as
        BATCH_MATMUL or FULLY_CONNECTED with TRANSPOSE and RESHAPE around (einsum.py)."""
        lower_einsum(self, node, ins, out)

    @staticmethod
    def options_of(operator):
        return (operator.get("builtin_options") or operator.get("builtin_options_2"))[1]

"""The context an op's ONNX rule writes into: names of values, constants, node emission and
the opset-dependent spellings of common patterns (reductions, squeeze, split)."""
import numpy as np

try:
    import onnx
    from onnx import helper, numpy_helper
except ImportError as e:  # an optional extra
    raise ImportError("tensorlite.onnx needs the onnx package: pip install "
                      "'.[onnx]' in a clone of tensorlite") from e

from tensorlite.graph.capture import ExportContext


class OnnxContext(ExportContext):
    """Collects the ONNX nodes and initializers of one export.

    Example (an op's rule):
        >>> def relu6(ctx, node):
        ...     return ctx.emit("Clip", ctx.inputs(node) + [ctx.const(np.float32(0)),
        ...                                              ctx.const(np.float32(6))])
    """

    consumer = "ONNX export"

    def __init__(self, capture, opset):
        super().__init__(capture)
        self.opset = opset
        self.nodes = []
        self.initializers = []
        self.names = {}  # slot -> ONNX value name
        self._taken = set()
        self._batch = None

    # -- names ----------------------------------------------------------------------------
    def fresh(self, hint):
        """A value name not used yet, from a hint."""
        base = "".join(c if c.isalnum() or c in "_./" else "_" for c in hint) or "v"
        name, i = base, 0
        while name in self._taken:
            i += 1
            name = f"{base}_{i}"
        self._taken.add(name)
        return name

    def name(self, slot):
        """The ONNX name of a slot's value; a constant one becomes an initializer (or an
        Expand, see `constant`) when first asked for."""
        if slot not in self.names:
            self.names[slot] = self.constant(slot)
        return self.names[slot]

    def inputs(self, node):
        """The ONNX names of the node's inputs."""
        return [self.name(s) for s in node.inputs]

    # -- what the trace knows -------------------------------------------------------------
    def shape(self, slot):
        """The slot's static shape (at the traced batch size; see `dynamic_dims`)."""
        return tuple(self.capture.value(slot).shape)

    def dynamic_dims(self, slot):
        return self.capture.dynamic_dims(slot)

    # -- emitting -------------------------------------------------------------------------
    def const(self, array, hint="const"):
        """An initializer holding `array`; returns its name."""
        name = self.fresh(hint)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def ints(self, values):
        """A 1-D int64 initializer (shapes, axes, split sizes)."""
        return self.const(np.asarray(list(values), np.int64), "ints")

    def emit(self, op_type, inputs, outputs=1, **attrs):
        """Appends one ONNX node; returns its output name (a list when outputs > 1)."""
        names = [self.fresh(op_type) for _ in range(outputs)]
        attrs = {k: v for k, v in attrs.items() if v is not None}
        self.nodes.append(helper.make_node(op_type, list(inputs), names,
                                           name=self.fresh(op_type + "_node"), **attrs))
        return names[0] if outputs == 1 else names

    def transpose(self, x, perm):
        return self.emit("Transpose", [x], perm=list(perm))

    def reduce(self, op_type, x, axes, keepdims):
        """ReduceSum/Mean/Max/...: axes are an input from opset 18 (13 for ReduceSum)."""
        keep = int(bool(keepdims))
        if axes is None:
            return self.emit(op_type, [x], keepdims=keep)
        axes = [int(a) for a in axes]
        if self.opset >= 18 or (op_type == "ReduceSum" and self.opset >= 13):
            return self.emit(op_type, [x, self.ints(axes)], keepdims=keep)
        return self.emit(op_type, [x], axes=axes, keepdims=keep)

    def squeeze(self, x, axes):
        return self.emit("Squeeze", [x, self.ints(axes)])

    def unsqueeze(self, x, axes):
        return self.emit("Unsqueeze", [x, self.ints(axes)])

    def split(self, x, sizes, axis):
        return self.emit("Split", [x, self.ints(sizes)], outputs=len(sizes), axis=int(axis))

    def onnx_dtype(self, dtype):
        """ONNX's TensorProto element type of a tensorlite dtype or NumPy dtype."""
        np_dtype = np.dtype(getattr(dtype, "as_numpy_dtype", dtype))
        return helper.np_dtype_to_tensor_dtype(np_dtype)

    # -- values the trace fixed but the batch size changes --------------------------------
    def batch_size(self):
        """A 1-D int64 [batch] value read from the first input with a batch dimension."""
        if self._batch is None:
            for slot, name in zip(self.capture.graph.placeholders, self.input_names):
                if 0 in self.capture.dynamic_dims(slot):
                    shape = self.emit("Shape", [name])
                    self._batch = self.emit("Gather", [shape, self.ints([0])], axis=0)
                    break
            else:
                raise ValueError("no input has a batch dimension")
        return self._batch

    def constant(self, slot):
        """The ONNX name of a constant slot: an initializer, or for a uniform value whose
        shape follows the batch size (an RNN's zero state) an Expand to the run's batch."""
        array = self.capture.value(slot)
        dynamic = self.capture.dynamic_dims(slot)
        if not dynamic:
            return self.const(array, "const")
        if not (array.size and np.all(array == array.flat[0]) and
                all(self.capture.is_batch_sized(slot, a) for a in dynamic)):
            raise ValueError(f"a constant of shape {array.shape} changes with the batch size "
                             f"and is not a uniform batch-sized fill; export cannot make "
                             f"it dynamic")
        pieces = [self.batch_size() if i in dynamic else self.ints([d])
                  for i, d in enumerate(array.shape)]
        shape = self.emit("Concat", pieces, axis=0)
        return self.emit("Expand", [self.const(array.reshape(-1)[:1].reshape(()), "fill"),
                                    shape])


def value_info(name, dtype, shape, dynamic):
    """A graph input/output declaration, with symbolic names for the batch dimensions."""
    dims = ["batch" if i in dynamic else int(d) for i, d in enumerate(shape)]
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(dtype), dims)


def ir_version(opset):
    """The oldest IR version that carries `opset` (what runtimes of that era read)."""
    for _, ir, op_version, *_ in onnx.helper.VERSION_TABLE:
        if op_version >= opset:
            return ir
    return onnx.IR_VERSION

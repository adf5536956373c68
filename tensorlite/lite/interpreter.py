"""`tf.lite.Interpreter` in NumPy: runs `.tflite` files with a static execution plan (the
file's operator order, each op's kernel resolved once and, at allocate_tensors, bound to
its arrays as a no-argument step) and a static memory plan (one arena;
tensor offsets from first and last use, tensorlite/lite/memory_plan.py). int8 kernels use
TFLite's fixed-point arithmetic (tensorlite/lite/kernels/fixed_point.py). Custom ops are
Python functions: `register_custom_op(name, invoke, prepare=None)` or
`Interpreter(..., custom_ops={name: invoke})`.

This module and everything it imports use only NumPy and flatbuffers.

Example:
    >>> interpreter = Interpreter(model_content=tflite_model)
    >>> interpreter.allocate_tensors()
    >>> interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    >>> interpreter.invoke()
    >>> y = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
"""
import numpy as np

from tensorlite.lite import flatbuf, kernels, memory_plan, schema
from tensorlite.lite.model_errors import data_loss, exhausted, invoke_failed, memory_cap

_NUMPY = {"FLOAT32": np.float32, "FLOAT16": np.float16, "INT32": np.int32, "UINT8": np.uint8,
          "INT64": np.int64, "BOOL": np.bool_, "INT16": np.int16, "INT8": np.int8,
          "FLOAT64": np.float64, "UINT32": np.uint32, "UINT16": np.uint16}
_TYPE_NAMES = {v: k for k, v in schema.ENUMS["TensorType"].items()}
_BUILTIN_NAMES = {v: k for k, v in schema.ENUMS["BuiltinOperator"].items()}
CUSTOM_OPS = {}  # name -> (prepare or None, invoke)
# What a builtin kernel raises when a (mutated) model's tensors do not fit the operator.
_KERNEL_FAULTS = (IndexError, KeyError, TypeError, ValueError, AttributeError,
                  ZeroDivisionError, OverflowError)
_MONOTONIC = (1, 2, 3, 4)  # RELU, RELU_N1_TO_1, RELU6, TANH: non-decreasing activations


def register_custom_op(name, invoke, prepare=None):
    """Makes custom op `name` runnable by every Interpreter: `invoke(context, node)` reads
    `context.tensors[node.inputs[i]]` and writes `context.tensors[node.outputs[j]]`
    (NumPy arrays); `prepare(context, node)` may return the output shapes.

    Example (a custom op, as in the Google I/O 2018 talk "TensorFlow Lite for mobile
    developers", in Python):
        >>> def pi(context, node):
        ...     context.tensors[node.outputs[0]].flat[0] = math.pi
        >>> register_custom_op("Pi", pi)
    """
    CUSTOM_OPS[name] = (prepare, invoke)


class Node:
    """One operator of the execution plan."""
    __slots__ = ("name", "inputs", "outputs", "options", "kernel", "data", "custom_options")

    def __init__(self, name, inputs, outputs, options, kernel, custom_options=None):
        self.name, self.inputs, self.outputs = name, inputs, outputs
        self.options, self.kernel, self.data = options, kernel, {}
        self.custom_options = custom_options


class _CustomKernel:
    """A Python custom op seen as a kernel; `context.tensors` is the interpreter's arrays."""

    def __init__(self, prepare, invoke):
        self._prepare, self._invoke = prepare, invoke

    def prepare(self, ctx, node):
        shapes = self._prepare(_TensorView(ctx), node) if self._prepare else None
        return shapes if shapes is not None else [ctx._file_shape(i) for i in node.outputs]

    def invoke(self, ctx, node):
        self._invoke(_TensorView(ctx), node)


class _TensorView:
    def __init__(self, interpreter):
        self.tensors = _Arrays(interpreter)


class _Arrays:
    def __init__(self, interpreter):
        self._i = interpreter

    def __getitem__(self, index):
        return self._i.array(index)


def _options(op):
    for key in ("builtin_options", "builtin_options_2"):
        if op.get(key) is not None:
            return dict(op[key][1])
    return {}


class Interpreter:
    """`tf.lite.Interpreter(model_path=None, model_content=None, ...)`."""

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None,
                 num_threads=None, experimental_preserve_all_tensors=False, custom_ops=None,
                 **_ignored):
        if (model_path is None) == (model_content is None):
            raise ValueError("pass exactly one of model_path and model_content")
        if model_path is not None:
            with open(model_path, "rb") as f:
                model_content = f.read()
        self._source = str(model_path) if model_path is not None else \
            f"model_content ({len(model_content)} bytes)"
        self._model = flatbuf.decode(bytes(model_content), self._source)
        self._preserve = experimental_preserve_all_tensors
        subgraphs = self._model.get("subgraphs") or []
        if not subgraphs:
            raise data_loss(self._source, "Model provided has no subgraphs")
        self._graph = subgraphs[0]
        self._graph_io = self._checked_io()
        self._custom = dict(CUSTOM_OPS)
        for name, fn in (custom_ops or {}).items():
            self._custom[name] = fn if isinstance(fn, tuple) else (None, fn)
        self._read_tensors()
        self._plan = [self._node(op, k) for k, op in enumerate(self._graph["operators"] or [])]
        if not self._preserve:
            self._activations_after_pools()
        self._shapes = [tuple(t["shape"]) for t in self._tensors]
        self._arrays = None
        self.arena_size = 0

    # -- loading --------------------------------------------------------------------------
    def _read_tensors(self):
        buffers = self._model.get("buffers") or []
        self._tensors = []
        self._consts = []
        for k, t in enumerate(self._graph.get("tensors") or []):
            type_name = _TYPE_NAMES.get(t["type"], str(t["type"]))
            if type_name not in _NUMPY:
                raise ValueError(f"tensor {k} has type {type_name}, which tensorlite's "
                                 f"interpreter does not support")
            shape = [int(d) for d in (t["shape"] if t["shape"] is not None else [])]
            if any(d < 0 for d in shape):
                raise data_loss(self._source, f"tensor {k} has a negative dimension in its "
                                              f"shape {shape}")
            dtype = np.dtype(_NUMPY[type_name])
            const = None
            if not 0 <= t["buffer"] < len(buffers):
                raise data_loss(self._source, f"tensor {k} refers to buffer {t['buffer']} of "
                                              f"{len(buffers)}")
            data = buffers[t["buffer"]].get("data") if t["buffer"] else None
            if data is not None and len(data):
                if len(data) != _nbytes(shape, dtype):  # checked before any view is made
                    raise data_loss(self._source, f"tensor {k} ({t['name']}) has {len(data)} "
                                                  f"bytes of data for shape {shape} of "
                                                  f"{type_name} ({_nbytes(shape, dtype)} "
                                                  f"bytes)")
                const = data.view(dtype).reshape(shape)
            self._tensors.append(dict(t, shape=shape, dtype=dtype, type_name=type_name))
            self._consts.append(const)

    def _checked_io(self):
        """(inputs, outputs) of the subgraph as int lists, every index a tensor's."""
        n = len(self._graph.get("tensors") or [])
        out = []
        for key in ("inputs", "outputs"):
            indices = [int(i) for i in (self._graph.get(key) if self._graph.get(key) is not
                                        None else [])]
            if any(not 0 <= i < n for i in indices):
                raise data_loss(self._source, f"the subgraph's {key} {indices} are not all "
                                              f"tensors of 0..{n - 1}")
            out.append(indices)
        return tuple(out)

    def _node(self, op, k):
        codes = self._model.get("operator_codes") or []
        if not 0 <= op["opcode_index"] < len(codes):
            raise data_loss(self._source, f"operator {k} has opcode index "
                                          f"{op['opcode_index']} of {len(codes)} operator "
                                          f"codes")
        code = codes[op["opcode_index"]]
        builtin = max(code["builtin_code"], code["deprecated_builtin_code"])
        name = _BUILTIN_NAMES.get(builtin, f"builtin {builtin}")
        n = len(self._tensors)
        ins = [int(i) for i in (op["inputs"] if op["inputs"] is not None else [])]
        outs = [int(i) for i in (op["outputs"] if op["outputs"] is not None else [])]
        if any(not -1 <= i < n for i in ins) or any(not 0 <= i < n for i in outs):
            raise data_loss(self._source, f"operator {k} ({name}) refers to tensors outside "
                                          f"0..{n - 1}")
        custom_options = None if op.get("custom_options") is None else \
            bytes(op["custom_options"])
        if name == "CUSTOM":
            custom = code.get("custom_code")
            if custom not in self._custom:
                raise ValueError(f"Encountered unresolved custom op: {custom}. Register it "
                                 f"with tf.lite.experimental.register_custom_op or "
                                 f"Interpreter(custom_ops={{{custom!r}: fn}})")
            kernel = _CustomKernel(*self._custom[custom])
            name = custom
        else:
            kernel = kernels.find(name)
            if kernel is None:
                raise ValueError(f"Didn't find op for builtin opcode '{name}' (operator {k}): "
                                 f"tensorlite's interpreter has no kernel for it")
        return Node(name, ins, outs, _options(op), kernel, custom_options)

    def _activations_after_pools(self):
        """Moves a float convolution's fused activation onto the MAX_POOL_2D that alone
        reads its output: a non-decreasing activation commutes with max, so the result is
        the same and the activation runs on a quarter of the values (plan-time rewrite of
        the nodes' options; the file is unchanged)."""
        readers = {}
        for node in self._plan:
            for i in node.inputs:
                readers.setdefault(i, []).append(node)
        outputs = set(self._graph_io[1])
        for node in self._plan:
            act = node.options.get("fused_activation_function", 0)
            if node.name not in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED") or \
                    act not in _MONOTONIC or len(node.outputs) != 1:
                continue
            out = node.outputs[0]
            users = readers.get(out, [])
            if out in outputs or len(users) != 1 or users[0].name != "MAX_POOL_2D" or \
                    users[0].options.get("fused_activation_function", 0) != 0 or \
                    self._tensors[out]["dtype"] != np.float32:
                continue
            node.options = dict(node.options, fused_activation_function=0)
            users[0].options = dict(users[0].options, fused_activation_function=act)

    # -- what kernels ask --------------------------------------------------------------------
    def shape(self, index):
        return self._shapes[index]

    def _file_shape(self, index):
        return tuple(self._tensors[index]["shape"])

    def dtype(self, index):
        return self._tensors[index]["dtype"].type

    def quant(self, index):
        q = self._tensors[index].get("quantization")
        if q is None or q.get("scale") is None or not len(q["scale"]):
            return None
        zp = q.get("zero_point")
        zp = np.zeros(len(q["scale"]), np.int64) if zp is None or not len(zp) else zp
        return np.asarray(q["scale"], np.float32), np.asarray(zp, np.int64), \
            q.get("quantized_dimension", 0)

    def const(self, index):
        return self._consts[index]

    def array(self, index):
        if self._arrays is None:
            raise ValueError("Tensor data is null. Run allocate_tensors() first")  # TF's
        return self._arrays[index]

    # -- planning -------------------------------------------------------------------------
    def allocate_tensors(self):
        """Runs every kernel's prepare (output shapes) and the memory plan."""
        for k, node in enumerate(self._plan):
            node.data = {}
            for index, shape in zip(node.outputs, self._prepare(k, node)):
                self._shapes[index] = tuple(int(d) for d in shape)
        computed = {i for i in range(len(self._tensors)) if self._consts[i] is None}
        life = memory_plan.lifetimes(
            len(self._plan), [n.inputs for n in self._plan], [n.outputs for n in self._plan],
            self._graph_io[0], self._graph_io[1],
            preserve=computed if self._preserve else ())
        sizes = {t: _nbytes(self._shapes[t], self._tensors[t]["dtype"])
                 for t in life if t in computed}
        self._check_sizes(sizes)
        offsets, self.arena_size = memory_plan.plan(sizes, {t: life[t] for t in sizes})
        self._check_sizes({"the arena": self.arena_size})
        self._arena = np.zeros(self.arena_size, np.uint8)
        arrays = list(self._consts)
        for t, off in offsets.items():
            dtype = self._tensors[t]["dtype"]
            arrays[t] = self._arena[off:off + sizes[t]].view(dtype).reshape(self._shapes[t])
        self._arrays = arrays
        self._offsets = offsets
        self._steps = [self._bind(k, node) for k, node in enumerate(self._plan)]

    def _prepare(self, k, node):
        """A builtin kernel's output shapes; a kernel tripping over tensors that do not fit
        it (a mutated operator: wrong rank, missing input, bad options) is the file's
        DataLossError, never a raw IndexError. Custom ops' errors are the user's own."""
        if isinstance(node.kernel, _CustomKernel):
            return node.kernel.prepare(self, node)
        try:
            shapes = [tuple(int(d) for d in shape) for shape in node.kernel.prepare(self, node)]
        except _KERNEL_FAULTS as e:
            raise data_loss(self._source, f"operator {k} ({node.name}) failed to prepare: "
                                          f"{type(e).__name__}: {e}") from None
        if any(d < 0 for shape in shapes for d in shape):
            raise data_loss(self._source, f"operator {k} ({node.name}) computes output shapes "
                                          f"{shapes} with a negative dimension")
        return shapes

    def _check_sizes(self, sizes):
        """ResourceExhaustedError, before the arena is allocated, if a tensor (or the
        arena) would take more than the cap (TENSORLITE_MAX_DECOMPRESSED_BYTES)."""
        cap = memory_cap()
        for t, nbytes in sizes.items():
            if nbytes > cap:
                what = t if isinstance(t, str) else \
                    f"tensor {t} ({self._tensors[t]['name']}) of shape {list(self._shapes[t])}"
                raise exhausted(self._source, f"{what} needs {nbytes} bytes, more than the cap "
                                              f"of {cap}; raise TENSORLITE_MAX_DECOMPRESSED_BYTES "
                                              f"if the model is trusted")

    def _bind(self, k, node):
        """The node's step of the static execution plan: the kernel's pre-bound function
        when it has one, else a call of its invoke."""
        bind = getattr(node.kernel, "bind", None)
        try:
            step = bind(self, node) if bind is not None else None
        except _KERNEL_FAULTS as e:  # as in _prepare: a mutated operator's options
            raise data_loss(self._source, f"operator {k} ({node.name}) failed to prepare: "
                                          f"{type(e).__name__}: {e}") from None
        if step is None:
            invoke = node.kernel.invoke
            return lambda: invoke(self, node)
        return step

    def invoke(self):
        """Runs the execution plan once."""
        if self._arrays is None:
            raise RuntimeError("Invoke called before allocate_tensors(): call "
                               "interpreter.allocate_tensors() first (and after every "
                               "resize_tensor_input)")
        k = 0
        try:
            for k, step in enumerate(self._steps):
                step()
        except _KERNEL_FAULTS as e:
            if isinstance(self._plan[k].kernel, _CustomKernel):
                raise  # a custom op's errors are its author's own
            raise invoke_failed(self._source, f"operator {k} ({self._plan[k].name}) failed to "
                                              f"invoke: {type(e).__name__}: {e}; its tensors "
                                              f"do not fit it (a corrupt model)") from None

    # -- tensors --------------------------------------------------------------------------
    def _check_index(self, index):
        if not isinstance(index, (int, np.integer)) or not 0 <= index < len(self._tensors):
            raise ValueError(f"Invalid tensor index {index} exceeds max tensor index "
                             f"{len(self._tensors) - 1}")

    def set_tensor(self, tensor_index, value):
        """Copies `value` into an input tensor; its dtype and shape must be the tensor's."""
        self._check_index(tensor_index)
        value = np.asarray(value)
        t = self._tensors[tensor_index]
        if value.dtype != t["dtype"]:
            raise ValueError(f"Cannot set tensor: Got value of type "
                             f"{value.dtype.name.upper()} but expected type "
                             f"{t['type_name']} for {self._input_position(tensor_index)}, "
                             f"name: {t['name']}")
        expected = self._shapes[tensor_index]
        if value.shape != tuple(expected):
            raise ValueError(f"Cannot set tensor: Dimension mismatch. Got {list(value.shape)} "
                             f"but expected {list(expected)} for "
                             f"{self._input_position(tensor_index)} (resize it with "
                             f"resize_tensor_input and allocate_tensors again)")
        self.array(tensor_index)[...] = value

    def _input_position(self, index):
        ins = self._graph_io[0]
        return f"input {ins.index(index)}" if index in ins else f"tensor {index}"

    def get_tensor(self, tensor_index):
        """A copy of a tensor's value."""
        self._check_index(tensor_index)
        return np.array(self.array(tensor_index))

    def tensor(self, tensor_index):
        """A function returning a live view of the tensor (TF's zero-copy accessor)."""
        self._check_index(tensor_index)
        return lambda: self.array(tensor_index)

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        """Changes an input's shape; call allocate_tensors() before the next invoke."""
        self._check_index(input_index)
        if input_index not in self._graph_io[0]:
            raise ValueError(f"tensor {input_index} is not an input of the model")
        size = tuple(int(d) for d in tensor_size)
        signature = self._tensors[input_index].get("shape_signature")
        signature = list(signature) if signature is not None and len(signature) else \
            self._tensors[input_index]["shape"]
        if len(size) != len(signature) or (strict and any(
                s != -1 and s != d for s, d in zip(signature, size))):
            raise ValueError(f"Cannot resize input {input_index} of shape signature "
                             f"{list(signature)} to {list(size)}")
        self._shapes[input_index] = size
        self._arrays = None

    # -- details --------------------------------------------------------------------------
    def _detail(self, index):
        t = self._tensors[index]
        q = self.quant(index)
        scales = np.zeros(0, np.float32) if q is None else q[0]
        zeros = np.zeros(0, np.int32) if q is None else q[1].astype(np.int32)
        signature = t.get("shape_signature")
        signature = np.array(signature if signature is not None and len(signature) else
                             self._shapes[index], np.int32)
        return {"name": t["name"], "index": index,
                "shape": np.array(self._shapes[index], np.int32),
                "shape_signature": signature, "dtype": t["dtype"].type,
                "quantization": (float(scales[0]), int(zeros[0])) if len(scales) == 1 else
                (0.0, 0),
                "quantization_parameters": {"scales": scales, "zero_points": zeros,
                                            "quantized_dimension": 0 if q is None else q[2]},
                "sparsity_parameters": {}}

    def get_input_details(self):
        return [self._detail(i) for i in self._graph_io[0]]

    def get_output_details(self):
        return [self._detail(i) for i in self._graph_io[1]]

    def get_tensor_details(self):
        return [self._detail(i) for i in range(len(self._tensors))]

    def _get_ops_details(self):
        return [{"index": k, "op_name": n.name, "inputs": np.array(n.inputs),
                 "outputs": np.array(n.outputs)} for k, n in enumerate(self._plan)]

    # -- signatures -----------------------------------------------------------------------
    def _signatures(self):
        out, n = {}, len(self._tensors)
        for sig in self._model.get("signature_defs") or []:
            for m in (sig["inputs"] or []) + (sig["outputs"] or []):
                if not 0 <= m["tensor_index"] < n:
                    raise data_loss(self._source, f"signature {sig['signature_key']!r} names "
                                                  f"tensor {m['tensor_index']} of 0..{n - 1}")
            out[sig["signature_key"]] = sig
        return out

    def get_signature_list(self):
        return {k: {"inputs": [m["name"] for m in s["inputs"] or []],
                    "outputs": [m["name"] for m in s["outputs"] or []]}
                for k, s in self._signatures().items()}

    def get_signature_runner(self, signature_key=None):
        """A callable taking the signature's inputs by name and returning its outputs by
        name (resizing inputs to the arrays given)."""
        sigs = self._signatures()
        if not sigs:
            raise ValueError("the model has no signatures")
        if signature_key is None:
            if len(sigs) > 1:
                raise ValueError(f"the model has signatures {sorted(sigs)}: pass one")
            signature_key = next(iter(sigs))
        if signature_key not in sigs:
            raise ValueError(f"Invalid signature_key {signature_key!r}; the model has "
                             f"{sorted(sigs)}")
        return SignatureRunner(self, sigs[signature_key])


def _nbytes(shape, dtype):
    """Bytes of a dense `shape` of `dtype`, in Python ints (a crafted shape cannot
    overflow into a small size)."""
    n = dtype.itemsize
    for d in shape:
        n *= int(d)
    return n


class SignatureRunner:
    """What `get_signature_runner` returns: `runner(**inputs) -> {output name: array}`."""

    def __init__(self, interpreter, signature):
        self._i = interpreter
        self._inputs = {m["name"]: m["tensor_index"] for m in signature["inputs"] or []}
        self._outputs = {m["name"]: m["tensor_index"] for m in signature["outputs"] or []}

    def get_input_details(self):
        return {k: self._i._detail(v) for k, v in self._inputs.items()}

    def get_output_details(self):
        return {k: self._i._detail(v) for k, v in self._outputs.items()}

    def __call__(self, **inputs):
        missing = set(self._inputs) - set(inputs)
        unknown = set(inputs) - set(self._inputs)
        if missing or unknown:
            raise ValueError(f"signature inputs are {sorted(self._inputs)}; missing "
                             f"{sorted(missing)}, unknown {sorted(unknown)}")
        resized = False
        for name, value in inputs.items():
            index = self._inputs[name]
            if tuple(np.shape(value)) != self._i.shape(index):
                self._i.resize_tensor_input(index, np.shape(value))
                resized = True
        if resized or self._i._arrays is None:
            self._i.allocate_tensors()
        for name, value in inputs.items():
            self._i.set_tensor(self._inputs[name], np.asarray(value))
        self._i.invoke()
        return {name: self._i.get_tensor(index) for name, index in self._outputs.items()}

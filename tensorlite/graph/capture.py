"""Capturing a model or function as graph IR for export (ONNX, TF Lite), with the batch
dimension found rather than guessed.

A model is traced twice, at two batch sizes (`BATCH_SIZES`), and both graphs are run once on
zeros. Comparing the two runs slot by slot says which dimensions of every value follow the
batch size, which attribute entries do (a `Reshape` to `(2, 2304)` in one trace and
`(3, 2304)` in the other) and which values are computed from the inputs at all (the rest are
constants an exporter may fold). An exporter writes the first trace; `Capture` answers its
questions about it.

Example:
    >>> cap = capture(tf.keras.Sequential([tf.keras.layers.Dense(3, input_shape=(4,))]))
    >>> cap.graph.op_counts()["BatchMatMulV2"], cap.dynamic_dims(cap.graph.placeholders[0])
    (1, {0})
"""
import warnings

import numpy as np

from tensorlite.framework import errors, nest
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.graph import options
from tensorlite.graph.function import Function, function
from tensorlite.graph.ir import READ_VARIABLE, is_stateful
from tensorlite.graph.passes import MAX_ROUNDS, fold_batch_norm

BATCH_SIZES = (2, 3)


def input_signature(model_or_function, signature=None):
    """The input TensorSpecs: given, a tf.function's own, or a Keras model's inputs."""
    if signature is not None:
        return list(signature)
    own = getattr(model_or_function, "_signature", None)
    if own is not None:
        return list(own)
    inputs = getattr(model_or_function, "inputs", None)
    if isinstance(inputs, list) and inputs:  # a functional model's KerasTensors
        return [TensorSpec(t.shape, t.dtype, getattr(t, "name", None)) for t in inputs]
    shape = getattr(model_or_function, "_input_batch_shape", None) or \
        getattr(model_or_function, "_build_input_shape", None)
    try:
        dims = None if shape is None else TensorShape(shape).as_list()
    except (TypeError, ValueError):  # several inputs: the caller must say
        dims = None
    if dims:
        return [TensorSpec([None] + dims[1:])]
    raise ValueError(f"cannot tell the inputs of {type(model_or_function).__name__}: pass "
                     f"input_signature=[tf.TensorSpec([None, ...], tf.float32), ...]")


def _python_callable(model_or_function, n_inputs):
    if isinstance(model_or_function, Function):
        return model_or_function.python_function
    if hasattr(model_or_function, "call") and hasattr(model_or_function, "trainable_variables"):
        model = model_or_function  # a Keras model or layer: inference mode

        def call(*xs):
            return model(xs[0] if n_inputs == 1 else list(xs), training=False)
        return call
    if callable(model_or_function):
        return model_or_function
    raise TypeError(f"expected a Keras model, a tf.function or a callable, got "
                    f"{type(model_or_function).__name__}")


def _concrete_specs(signature, batch):
    out = []
    for i, spec in enumerate(signature):
        dims = list(spec.shape.as_list())
        if any(d is None for d in dims[1:]):
            raise ValueError(f"input {i} has shape {dims}: only the batch dimension (the "
                             f"first) may be None for this export (ONNX, TF Lite); give the "
                             f"others fixed sizes in input_signature (tf.saved_model.save "
                             f"takes None in any dimension)")
        out.append(TensorSpec([batch if d is None else d for d in dims], spec.dtype))
    return out


def run_graph(graph, inputs):
    """Every slot's value, running the graph on `inputs` (arrays, one per placeholder)
    with the ops' NumPy forwards; the set of slots computed from the placeholders."""
    values, dependent = dict(graph.constants), set(graph.placeholders)
    for s, value in zip(graph.placeholders, inputs):
        values[s] = np.asarray(value, graph.specs[s][1].as_numpy_dtype)
    for node in graph.nodes:
        if is_stateful(node.op) and node.op is not READ_VARIABLE and \
                not getattr(node.op, "reads_state_only", False):
            raise errors.UnimplementedError(
                None, None, f"node {node.op.name} (created at {node.where}) is stateful (it "
                f"changes state or draws random numbers); exporting such a node is not built yet, "
                f"so an exported inference graph cannot hold it")
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            out = node.op.forward(*[values[s] for s in node.inputs], **node.attrs)
        outs = out if node.op.multi_output else (out,)
        for s, v in zip(node.outputs, outs):
            values[s] = np.asarray(v)
        if any(s in dependent for s in node.inputs):
            dependent.update(node.outputs)
    return values, dependent


def fold_batch_norms(graph):
    """`graph` with inference BatchNormalization scales folded into the filters before them
    (graph/passes/fold_batch_norm.py), as TensorFlow's converters do: the exported file
    holds the scaled filters and no per-activation multiplication. Off with Grappler's
    `constant_folding` switch."""
    if not options.enabled("constant_folding"):
        return graph
    for _ in range(MAX_ROUNDS):  # a chain of scales folds one per round
        graph, lines = fold_batch_norm.run(graph)
        if not lines:
            return graph
    return graph


def _sample(shape, dtype):
    """Zeros of a placeholder (empty strings for a string one: string ops read bytes)."""
    if dtype.is_string:
        return np.full(shape, b"", dtype=object)
    return np.zeros(shape, dtype.as_numpy_dtype)


def _run(graph):
    """run_graph on zeros."""
    return run_graph(graph, [_sample(*graph.specs[s][:2]) for s in graph.placeholders])


class Capture:
    """A traced graph (`graph`, at batch `BATCH_SIZES[0]`) and what the second trace says
    about it. `signature` holds the input TensorSpecs, `output_names` one name per flat
    output."""

    def __init__(self, graphs, signature, output_names=None):
        self.graph, other = (fold_batch_norms(g) for g in graphs)
        self.signature = signature
        self.values, self.dependent = _run(self.graph)
        other_values, _ = _run(other)
        if [n.op.name for n in self.graph.nodes] != [n.op.name for n in other.nodes]:
            raise ValueError("the traced graph changes with the batch size (Python code "
                             "branches on it); export needs one graph for every batch size")
        self._other = dict(zip(self._slot_order(self.graph), self._slot_order(other)))
        self._other_values = other_values
        self._other_nodes = dict(zip(map(id, self.graph.nodes), other.nodes))
        n_out = len(self.graph.output_slots())
        self.output_names = list(output_names or [])[:n_out]
        if len(self.output_names) != n_out or len(set(self.output_names)) != n_out:
            self.output_names = [f"output_{i}" for i in range(n_out)]

    @staticmethod
    def _slot_order(graph):
        order = list(graph.placeholders) + list(graph.constants)
        for node in graph.nodes:
            order.extend(node.outputs)
        return order

    def value(self, slot):
        """The slot's value (at the first batch size)."""
        return self.values[slot]

    def is_constant(self, slot):
        """True when the slot does not depend on any input (weights, folded expressions)."""
        return slot not in self.dependent

    def dynamic_dims(self, slot):
        """The axes of the slot's value that follow the batch size."""
        a, b = self.values[slot], self._other_values[self._other[slot]]
        if a.ndim != b.ndim:
            raise ValueError(f"a value's rank changes with the batch size ({a.shape} vs "
                             f"{b.shape}); export needs a graph independent of batch size")
        return {i for i, (p, q) in enumerate(zip(a.shape, b.shape)) if p != q}

    def is_batch_sized(self, slot, axis):
        """True when the slot's `axis` is exactly the batch size in both traces."""
        a, b = self.values[slot], self._other_values[self._other[slot]]
        return a.shape[axis] == BATCH_SIZES[0] and b.shape[axis] == BATCH_SIZES[1]

    def shape_at(self, slot, batch):
        """The slot's shape at another batch size: each dimension that follows the batch
        size is taken as linear in it (a reshape's B*T rows, a concat's B+B)."""
        a, b = self.values[slot].shape, self._other_values[self._other[slot]].shape
        b0, b1 = BATCH_SIZES
        out = []
        for p, q in zip(a, b):
            slope = (q - p) // (b1 - b0)
            out.append(p + slope * (batch - b0))
        return tuple(out)

    def varying_attrs(self, node):
        """{attr name: positions} of the node's attributes that change with the batch size
        (positions index into tuple attributes; () for a whole scalar attribute)."""
        other = self._other_nodes[id(node)]
        out = {}
        for key, v in node.attrs.items():
            w = other.attrs.get(key)
            if isinstance(v, tuple) and isinstance(w, tuple) and len(v) == len(w):
                diff = {i for i, (p, q) in enumerate(zip(v, w)) if _differs(p, q)}
                if diff:
                    out[key] = diff
            elif _differs(v, w):
                out[key] = ()
        return out

    def output_slots(self):
        return self.graph.output_slots()

    def exported_nodes(self):
        """The nodes an exporter writes: those computed from the inputs that some output
        needs (a shape read only to fix a Reshape's target, traced into an attribute, is
        dead and dropped: a SavedModel's Flatten)."""
        needed = set(self.output_slots())
        live = []
        for node in reversed(self.graph.nodes):
            if any(o in needed for o in node.outputs):
                needed.update(node.inputs)
                live.append(node)
        return [n for n in reversed(live) if not all(self.is_constant(s) for s in n.outputs)]


def _differs(a, b):
    try:
        return bool(np.any(np.asarray(a != b)))
    except (TypeError, ValueError):
        return a is not b


def capture(model_or_function, input_signature_=None):
    """Traces a Keras model, a tf.function or a Python function over tensors at two batch
    sizes; returns a Capture."""
    signature = input_signature(model_or_function, input_signature_)
    fn = _python_callable(model_or_function, len(signature))
    graphs = []
    for batch in BATCH_SIZES:
        concrete = function(fn).get_concrete_function(*_concrete_specs(signature, batch))
        graphs.append(concrete.graph)
    names = getattr(model_or_function, "output_names", None)
    if len(nest.flatten(graphs[0].outputs)) != len(graphs[0].output_slots()):
        raise ValueError("the function returns values that are not tensors; export needs "
                         "tensor outputs only")
    return Capture(graphs, signature, names if isinstance(names, list) else None)


class ExportContext:
    """What every exporter's context (ONNX, TF Lite) asks of a Capture; `consumer` names
    the format in errors."""

    consumer = "export"

    def __init__(self, capture):
        self.capture = capture
        self._acknowledged = set()

    def dtype(self, slot):
        return self.capture.value(slot).dtype

    def value(self, slot):
        """The slot's value when it does not depend on the inputs (weights), else None."""
        return self.capture.value(slot) if self.capture.is_constant(slot) else None

    def varying(self, node, attr):
        """Positions of the tuple attribute `attr` that follow the batch size. A rule that
        reads this handles them; a node whose varying attributes no rule read is an error."""
        self._acknowledged.add((id(node), attr))
        return self.capture.varying_attrs(node).get(attr, set())

    def unsupported(self, node, why):
        """Raises the export error for a node this rule cannot map."""
        raise errors.UnimplementedError(
            None, None, f"{self.consumer}: op {node.op.name} (node created at {node.where}) "
            f"{why}")

    def rule(self, node, key):
        """The node's op's rule for this format (`key`: "onnx", "tflite"), or the error
        naming the op and the node."""
        rule = getattr(node.op, key)
        if rule is None:
            raise errors.UnimplementedError(
                None, None, f"{self.consumer}: op {node.op.name} has no {key} mapping (node "
                f"{node.op.name} created at {node.where}); declare one beside its "
                f"registration with registry.declare({node.op.name}, {key}=rule)")
        return rule

    def check_attrs(self, node):
        """After a rule ran: every attribute that follows the batch size was handled."""
        missed = [a for a in self.capture.varying_attrs(node)
                  if (id(node), a) not in self._acknowledged]
        if missed:
            self.unsupported(node, f"has attributes {missed} that change with the batch size "
                                   f"and its rule cannot make them dynamic")

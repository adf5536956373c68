"""Symbolic tensors for the functional API: `tf.keras.Input` and layer calls on them.

A KerasTensor carries a shape (None where a size is unknown), a dtype and the node that made
it. Calling a layer on KerasTensors builds the layer on their symbolic shapes, as Keras does,
then infers the outputs' specs symbolically (keras/symbolic_trace.py): a user layer's own
`compute_output_signature` / `compute_output_shape` first, otherwise the layer's `call` traced
by tf.function's graph tracer with each op's shape rule; then it records (layer, inputs,
args, kwargs) so `tf.keras.Model(inputs, outputs)` can replay the graph on real tensors.
"""
import contextlib
import threading

from tensorlite.framework import dtypes, nest, symbolic_dispatch
from tensorlite.framework.tensor_shape import TensorShape


class KerasTensor:
    """A symbolic stand-in for a batch of tensors."""

    def __init__(self, shape, dtype, node=None, index=0, name=None, ragged=False):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.ragged = ragged  # stands for a tf.RaggedTensor (Input(ragged=True))
        self.sparse = False  # stands for a tf.sparse.SparseTensor (Input(sparse=True))
        self.node = node  # the Node that produced it; None for a model input
        self.index = index  # which of the node's flattened outputs this is
        self.name = name
        self.mask_spec = None  # (shape, dtype) of the mask the layer attached, if any
        self.input_layer = None  # a model input's InputLayer (tf.keras.Input makes it)

    @property
    def _keras_mask(self):
        """The spec of the mask the layer attaches to this output (an unconnected
        KerasTensor: what it shows, not a tensor of the graph), or None."""
        if self.mask_spec is None:
            return None
        return KerasTensor(*self.mask_spec)

    def __repr__(self):
        return (f"<KerasTensor: shape={tuple(self.shape.as_list())} dtype={self.dtype.name}"
                f"{'' if self.name is None else ' name=' + self.name}>")

    # Operators on KerasTensors become TFOpLambda layers of the TF functions TF 2's Keras
    # records for them (x + 1, x[:, 0], -x, x @ w, ...), each saved by that function's name
    def __getitem__(self, key):
        from tensorlite.keras.layers.op_lambda import encode_slice_spec  # noqa: PLC0415
        return _op("__operators__.getitem", self, slice_spec=encode_slice_spec(key))


def _op(symbol, *args, **kwargs):
    from tensorlite.keras.layers.op_lambda import layer_for  # noqa: PLC0415
    return layer_for(symbol)(*args, **kwargs)


def _binary(symbol, reflected=False):
    if reflected:
        return lambda self, other: _op(symbol, other, self)
    return lambda self, other: _op(symbol, self, other)


for _name, _symbol in (("add", "__operators__.add"), ("sub", "math.subtract"),
                       ("mul", "math.multiply"), ("truediv", "math.truediv"),
                       ("floordiv", "math.floordiv"), ("mod", "math.floormod"),
                       ("pow", "math.pow"), ("matmul", "linalg.matmul"),
                       ("and", "math.logical_and"), ("or", "math.logical_or")):
    setattr(KerasTensor, f"__{_name}__", _binary(_symbol))
    setattr(KerasTensor, f"__r{_name}__", _binary(_symbol, reflected=True))
for _name, _symbol in (("lt", "math.less"), ("le", "math.less_equal"),
                       ("gt", "math.greater"), ("ge", "math.greater_equal")):
    setattr(KerasTensor, f"__{_name}__", _binary(_symbol))
for _name, _symbol in (("neg", "math.negative"), ("abs", "math.abs"),
                       ("invert", "math.logical_not")):
    setattr(KerasTensor, f"__{_name}__", lambda self, _s=_symbol: _op(_s, self))
del _name, _symbol


def Input(shape=None, batch_size=None, name=None, dtype=None, sparse=None, tensor=None,  # noqa: N802
          ragged=None, type_spec=None, batch_shape=None, **kwargs):
    """`tf.keras.Input`: the symbolic input of a functional model."""
    if batch_shape is None:
        if shape is None:
            raise ValueError("Please provide to Input a `shape` or a `batch_shape` argument.")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        batch_shape = (batch_size,) + shape
    from tensorlite.keras import backend  # noqa: PLC0415
    # from now on TF functions called on symbolic tensors become layers
    symbolic_dispatch.install(_SymbolicCalls)
    tensor = KerasTensor(batch_shape, dtype or backend.floatx(),
                         name=name or backend.unique_object_name("input"),
                         ragged=bool(ragged))
    tensor.sparse = bool(sparse)  # stands for a tf.sparse.SparseTensor
    # its InputLayer: listed first in a functional model's layers, as tf.keras lists it
    from tensorlite.keras.layers.core import InputLayer  # noqa: PLC0415
    layer = tensor.input_layer = InputLayer(batch_input_shape=tuple(tensor.shape.as_list()),
                                            dtype=tensor.dtype.name, name=tensor.name)
    node = Node(layer, tensor, (), {})
    node.outputs, node.output = [tensor], tensor
    layer.__dict__["_inbound_nodes"] = [node]  # its input and output: the tensor itself
    return tensor


class Node:
    """One call of a layer on symbolic inputs: replayed by functional models."""

    def __init__(self, layer, inputs, args, kwargs):
        self.layer, self.inputs, self.args, self.kwargs = layer, inputs, args, kwargs
        self.outputs = []  # the call's KerasTensors, flat
        self.output = None  # ... in the structure the call returned

    def parents(self):
        return [t.node for t in nest.flatten([self.inputs, list(self.args),
                                              list(self.kwargs.values())])
                if isinstance(t, KerasTensor) and t.node is not None]


def is_symbolic(x):
    return any(isinstance(v, KerasTensor) for v in nest.flatten(x))


class _Constructing(threading.local):
    depth = 0


_CONSTRUCTING = _Constructing()


@contextlib.contextmanager
def constructing():
    """Marks the trace of a layer's `call` that infers its symbolic outputs."""
    _CONSTRUCTING.depth += 1
    try:
        yield
    finally:
        _CONSTRUCTING.depth -= 1


def is_constructing():
    """True while a layer's `call` is traced to infer its symbolic output specs (at model
    construction): what it records then (metrics) is not data."""
    return _CONSTRUCTING.depth > 0


class _SymbolicCalls:
    """framework/symbolic_dispatch's handler: a TF function called on KerasTensors becomes
    a TFOpLambda layer (keras/layers/op_lambda.py)."""

    @staticmethod
    def symbolic(args, kwargs):
        return is_symbolic([list(args), kwargs])

    @staticmethod
    def call(symbol, fn, args, kwargs):
        from tensorlite.keras.layers.op_lambda import call_on_symbols  # noqa: PLC0415
        return call_on_symbols(symbol, fn, args, kwargs)


def maybe_symbolic_call(layer, inputs, args, kwargs):
    """If any argument is a KerasTensor: builds the layer on the symbolic shapes, infers
    the output specs symbolically and returns KerasTensors (None otherwise)."""
    if not is_symbolic([inputs, list(args), kwargs]):
        return None
    from tensorlite.keras import symbolic_trace  # noqa: PLC0415
    specs, structure = symbolic_trace.output_specs(layer, inputs, args, kwargs)
    node = Node(layer, inputs, args, kwargs)
    keras_out = []
    for i, spec in enumerate(specs):
        kt = KerasTensor(spec.shape, spec.dtype, node=node, index=i, ragged=spec.ragged)
        kt.mask_spec = spec.mask
        keras_out.append(kt)
    node.outputs = keras_out
    node.output = nest.pack_like(structure, keras_out)
    layer.__dict__.setdefault("_inbound_nodes", []).append(node)  # layer.input / .output
    return node.output

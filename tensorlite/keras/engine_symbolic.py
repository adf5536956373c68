"""Symbolic tensors for the functional API: `tf.keras.Input` and layer calls on them.

A KerasTensor carries a shape (batch dimension None), a dtype and the node that made it.
Calling a layer on KerasTensors builds the layer and infers the output shape by running it
once on a small concrete batch (training=False), then records (layer, inputs, kwargs) so
`tf.keras.Model(inputs, outputs)` can replay the graph on real tensors.
"""
import contextlib
import threading

import numpy as np

from tensorlite.framework import dtypes, nest, symbolic_dispatch
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.tensor_shape import TensorShape

_PROBE_BATCH = 2
# Other unknown dimensions (a sequence's length, an image's size) are probed at this size,
# large enough for the windows of 'valid' convolutions and poolings; then again one larger
# (and the batch one larger), and the dimensions that change are unknown in the output
_PROBE_FREE = 32


class KerasTensor:
    """A symbolic stand-in for a batch of tensors."""

    def __init__(self, shape, dtype, node=None, index=0, name=None, ragged=False):
        self.shape = TensorShape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.ragged = ragged  # stands for a tf.RaggedTensor (Input(ragged=True))
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

    def _probe(self, bigger=0):
        """A concrete zero batch of this spec: an unknown batch dimension becomes
        _PROBE_BATCH, other unknown ones _PROBE_FREE (each + `bigger`)."""
        if self.ragged:
            return _ragged_probe(self.shape.as_list(), self.dtype)
        shape = [d if d is not None else bigger + (_PROBE_BATCH if i == 0 else _PROBE_FREE)
                 for i, d in enumerate(self.shape.as_list())]
        if self.dtype.is_string:
            return wrap(np.full(shape, b"", dtype=object))
        return wrap(np.zeros(shape, dtype=self.dtype.as_numpy_dtype))

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
    if sparse:
        raise NotImplementedError("tf.keras.Input(sparse=True)")
    tensor = KerasTensor(batch_shape, dtype or backend.floatx(),
                         name=name or backend.unique_object_name("input"),
                         ragged=bool(ragged))
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


class _Probing(threading.local):
    depth = 0


_PROBING = _Probing()


@contextlib.contextmanager
def _probing():
    _PROBING.depth += 1
    try:
        yield
    finally:
        _PROBING.depth -= 1


def probing():
    """True while a layer runs on the zero batch that infers its symbolic output spec:
    what it records then (metrics) is not data."""
    return _PROBING.depth > 0


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


def _ragged_probe(shape, dtype):
    """A small RaggedTensor whose None dimensions (after the batch) are ragged."""
    from tensorlite.ragged import RaggedTensor  # noqa: PLC0415
    ragged_dims = 0
    for d in shape[1:]:
        if d is not None:
            break
        ragged_dims += 1
    if not ragged_dims:
        raise ValueError(f"Input(ragged=True) needs a None dimension after the batch "
                         f"dimension, got shape {shape}")
    n, lengths = _PROBE_BATCH, []
    for _ in range(ragged_dims):
        level = [(i % 2) + 1 for i in range(n)]
        lengths.append(level)
        n = sum(level)
    inner = [d for d in shape[1 + ragged_dims:]]
    np_dtype = object if dtype.is_string else dtype.as_numpy_dtype
    flat = wrap(np.full([n] + inner, b"" if dtype.is_string else 0, dtype=np_dtype))
    return RaggedTensor.from_nested_row_lengths(
        flat, [wrap(np.array(x, dtype=np.int64)) for x in lengths])


def _concrete(x, bigger=0):
    return nest.map_structure(
        lambda v: _probe_with_mask(v, bigger) if isinstance(v, KerasTensor) else v, x)


def _probe_with_mask(kt, bigger):
    """The probe of a KerasTensor, carrying an all-true mask when the layer that made it
    attaches one, so the next layer's probe sees a mask as its real calls will."""
    probe = kt._probe(bigger)
    if kt.mask_spec is not None:
        from tensorlite.keras.layers.mask_propagation import set_keras_mask  # noqa: PLC0415
        spec = KerasTensor(*kt.mask_spec)._probe(bigger)
        set_keras_mask(probe, wrap(np.ones(spec.shape.as_list(), dtype=bool)))
    return probe


def _output_shapes(layer, symbolic, call, flat):
    """Each output's shape: unknown where a second probe, one larger in every unknown
    input dimension, changes it (when an input has unknown dimensions beyond the batch, or
    the layer is a TF function, which may move the batch dimension); otherwise the batch
    dimension unknown and the rest as probed."""
    shapes = [t.shape.as_list() if t.shape.rank is not None else None for t in flat]
    free = any(None in t.shape.as_list()[1:] for t in symbolic if not t.ragged)
    if (free or getattr(layer, "_infers_batch", False)) and \
            not any(t.ragged for t in symbolic):
        again = [t.shape.as_list() for t in nest.flatten(call(1))]
        return [[a if a == b else None for a, b in zip(s, s2)] if s is not None and
                len(s) == len(s2) else None for s, s2 in zip(shapes, again)]
    return [[None] + s[1:] if s else s for s in shapes]


def maybe_symbolic_call(layer, inputs, args, kwargs):
    """If any input is a KerasTensor: build, infer output specs, return KerasTensors."""
    if not is_symbolic([inputs, list(args), kwargs]):
        return None
    probe_kwargs = dict(kwargs)
    if "training" in probe_kwargs and probe_kwargs["training"] is None:
        probe_kwargs.pop("training")
    if "training" in getattr(layer, "_call_params", ()):
        probe_kwargs.setdefault("training", False)

    def call(bigger):
        with _probing():
            return layer.__call__(_concrete(inputs, bigger),
                                  *_concrete(list(args), bigger),
                                  **_concrete(probe_kwargs, bigger))
    out = call(0)
    flat = nest.flatten(out)
    for t in flat:
        if not isinstance(t, Tensor) and not (hasattr(t, "flat_values") and
                                              hasattr(t, "row_splits")):
            raise TypeError(f"layer {layer.name} returned {type(t).__name__} on symbolic "
                            f"inputs; layers must return tensors")
    symbolic = [v for v in nest.flatten([inputs, list(args), kwargs])
                if isinstance(v, KerasTensor)]
    shapes = _output_shapes(layer, symbolic, call, flat)
    node = Node(layer, inputs, args, kwargs)
    keras_out = [KerasTensor(shape if shape is not None else [], t.dtype, node=node, index=i,
                             ragged=hasattr(t, "flat_values") and hasattr(t, "row_splits"))
                 for i, (t, shape) in enumerate(zip(flat, shapes))]
    from tensorlite.keras.layers.mask_propagation import keras_mask  # noqa: PLC0415
    for t, kt in zip(flat, keras_out):
        mask = keras_mask(t)
        if mask is not None and hasattr(mask, "shape"):  # the output's leading dimensions
            kt.mask_spec = (kt.shape.as_list()[:mask.shape.rank], mask.dtype)
    node.outputs = keras_out
    node.output = nest.pack_like(out, keras_out)
    layer.__dict__.setdefault("_inbound_nodes", []).append(node)  # layer.input / .output
    return node.output

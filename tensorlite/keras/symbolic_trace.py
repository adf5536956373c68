"""The output specs of a layer called on KerasTensors, inferred symbolically as Keras does.

The layer is built on the symbolic input shapes (None where a size is unknown), as Keras
builds it. A user layer that defines `compute_output_signature` or `compute_output_shape` is
asked for its outputs (Keras 3's rule; its `call` then never runs at construction). Any
other layer's `call` is traced once with tf.function's graph tracer (graph/tracing.py) in a
shape-polymorphic trace: every tensor computed from the inputs carries the static shape the
ops' shape rules give from the symbolic shapes, and the outputs' KerasTensors get those
shapes (None where a rule cannot tell) and dtypes. The trace is not a call (tf.print stays
silent, variable assignments are undone), as tf.keras 2 runs `call` once in a scratch graph.

The tracer runs the Python code on example values, as tf.function's get_concrete_function
does for TensorSpecs, but the layers' math does not run on them: an op on values computed
from the inputs with floating results is recorded with zeros of the shapes its rule gives
(graph/tracing.py's Tracer.stand_in); only shape computations, integer results (indices,
partitions) and ops without a rule run. No output shape is read off the example sizes:
where Python code baked them into the graph, the tracer takes them for the varying sizes
they stand for. An op whose failure depends on the example values (a gather of positions
beyond a table's rows) leaves stand-ins the later ops may use, since only shapes are
wanted; a failure the symbolic shapes imply (a matmul of mismatched sizes) is raised at
construction, naming the layer and the call's shapes.
"""
import inspect
import marshal
import threading

import numpy as np

from tensorlite.framework import errors, nest
from tensorlite.framework.tensor import GRAPH_TENSOR_INFO, Tensor, _graph_tensor_info, wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.graph import tracing
from tensorlite.keras.engine_symbolic import KerasTensor, constructing

# The example values' sizes for unknown dimensions: a small prime for the batch, a larger
# one for other sizes (a sequence's length, an image's side; large enough for the windows of
# 'valid' convolutions and poolings), each the first that divides no known dimension of the
# call's inputs. Python code may read these sizes and bake them into the graph (a reshape to
# them, zeros((batch, units))); primes that divide nothing else let the tracer tell them
# from real sizes (graph/tracing.py's EXAMPLE_SIZES).
_BATCH_SIZES = (5, 7, 11, 13, 17, 19, 23)
_OTHER_SIZES = (41, 43, 47, 53, 59, 61)


def _example_sizes(symbols):
    """(batch size, other size) for the unknown dimensions of this call's examples."""
    known = {d for t in symbols for d in nest.flatten([t.shape.as_list(), list(
        t.mask_spec[0]) if t.mask_spec is not None else []]) if d}

    def first(candidates):
        return next((p for p in candidates if all(d % p for d in known)), candidates[-1])
    return first(_BATCH_SIZES), first(_OTHER_SIZES)


class OutputSpec:
    """One output of a symbolic layer call: shape, dtype, ragged, and the mask's
    (shape, dtype) when the layer attaches one."""

    __slots__ = ("shape", "dtype", "ragged", "mask")

    def __init__(self, shape, dtype, ragged=False, mask=None):
        self.shape, self.dtype, self.ragged, self.mask = shape, dtype, ragged, mask


def _construction_tracer(sizes):
    """The tracer of a symbolic call whose examples have `sizes` (batch, other) for
    unknown dimensions: later ops may use the stand-ins of an op that failed on the example
    values (the failure is the example's, not the model's: see the module's docstring), and
    static shapes take sizes Python code baked in for the varying sizes they stand for."""
    return type("ConstructionTracer", (tracing.Tracer,),
                {"USES_DEFERRED": True, "EXAMPLE_SIZES": tuple(sizes)})


def output_specs(layer, inputs, args, kwargs):
    """([OutputSpec], the output structure) of `layer(inputs, *args, **kwargs)` on
    KerasTensors; an error the call raises names the layer and the call's shapes."""
    _LAST_SIZES.sizes = None
    key = _repeat_key(layer, inputs, args, kwargs)
    try:
        layer._maybe_build(inputs)  # on the symbolic shapes, None included
        if key is not None and key in _REPEATS:
            return _REPEATS[key]
        declared = _declared_specs(layer, inputs, args, kwargs)
        if declared is not None:
            return declared
        attributes = set(layer.__dict__)
        specs, out = _traced_specs(layer, inputs, args, kwargs)
    except Exception as e:  # noqa: BLE001 - re-raised with the layer's name and shapes
        raise _call_error(layer, e, inputs, args, kwargs) from e
    if key is not None and set(layer.__dict__) == attributes:  # the trace changed nothing
        if len(_REPEATS) > 4096:
            _REPEATS.clear()
        _REPEATS[key] = specs, nest.map_structure(lambda _: None, out)
    return specs, out


# -- layer calls that repeat ------------------------------------------------------------------
# Models repeat identical blocks (a Transformer's, a ResNet stage's): calls of the same layer
# class with the same config on inputs of the same specs. For the Keras layers named here,
# the output specs of a layer's first call depend on exactly those: the call builds the layer
# on those specs from its config (which holds every __init__ argument, as
# tests/test_keras_layer_contract.py checks for each public layer), and their `call` reads
# nothing else. So such a call whose key was seen is answered from the earlier trace and
# runs nothing (tests/test_keras_symbolic_repeats.py compares whole models built with and
# without this). Never for a subclass (its `call` is the user's), a layer built before the
# call (by hand, or by an earlier call; a TF function's layer, which builds nothing, aside),
# one holding a callable from outside tensorlite (a user's activation), one with an
# activity regularizer, or arguments other than KerasTensors and plain Python values; a
# trace that changes the layer's attributes is not remembered.
_REPEATABLE_NAMES = (
    "Dense", "Flatten", "Reshape", "Dropout", "Activation", "ReLU", "Softmax", "LeakyReLU",
    "Conv1D", "Conv2D", "DepthwiseConv2D", "SeparableConv2D", "BatchNormalization",
    "LayerNormalization", "Add", "Subtract", "Multiply", "Average", "Maximum", "Minimum",
    "Concatenate", "ZeroPadding1D", "ZeroPadding2D", "Cropping1D", "Cropping2D",
    "MaxPooling1D", "MaxPooling2D", "AveragePooling1D", "AveragePooling2D",
    "GlobalAveragePooling1D", "GlobalAveragePooling2D", "GlobalMaxPooling1D",
    "GlobalMaxPooling2D", "Embedding", "EinsumDense", "UpSampling2D", "Permute",
    "RepeatVector")
_REPEATABLE = []  # the classes, found on first use (the layers import this package)
_REPEATS = {}  # key (_repeat_key) -> ([OutputSpec], the output structure)
_REPEATS_ON = [True]  # (tests compare models built with and without)


def _repeatable():
    """(the classes whose calls may repeat, those of them that build nothing: a TF function
    called on KerasTensors, whose layer is made built)."""
    if not _REPEATABLE:
        from tensorlite.keras import layers  # noqa: PLC0415
        from tensorlite.keras.layers.op_lambda import TFOpLambda  # noqa: PLC0415
        _REPEATABLE[:] = (frozenset([getattr(layers, n) for n in _REPEATABLE_NAMES] +
                                    [TFOpLambda]), frozenset([TFOpLambda]))
    return _REPEATABLE


class _NotPlain(Exception):
    pass


def _repeat_key(layer, inputs, args, kwargs):
    """What the output specs of this call depend on, or None when the call may not be
    answered from an earlier one (see above)."""
    repeatable = _repeatable()
    if not _REPEATS_ON[0] or type(layer) not in repeatable[0] or (
            layer.built and type(layer) not in repeatable[1]) or \
            getattr(layer, "activity_regularizer", None) is not None:
        return None
    for value in layer.__dict__.values():
        if callable(value) and not (getattr(value, "__module__", None) or
                                    type(value).__module__ or "").startswith("tensorlite."):
            return None
    config = layer.get_config()
    config.pop("name", None)
    config = _plain_bytes(config)
    if config is None:
        return None
    symbols = {}
    try:
        payload = _frozen([inputs, list(args), kwargs], symbols)
    except _NotPlain:
        return None
    specs = tuple((None if t.shape.rank is None else tuple(t.shape.as_list()), t.dtype.name,
                   bool(t.ragged), bool(getattr(t, "sparse", False)),
                   None if t.mask_spec is None else
                   (tuple(t.mask_spec[0]), str(t.mask_spec[1])))
                  for t in symbols.values())
    return type(layer), config, payload, specs


_PLAIN = frozenset((type(None), bool, int, float, str))


def _plain_bytes(config):
    """The config's values and their types as bytes (marshal's format 2, which writes no
    back-references, so equal configs give equal bytes; 1, 1.0 and True differ), or None
    when it holds anything but None, bool, int, float, str, bytes and containers of them:
    marshal refuses most objects, and what it writes as bytes (NumPy values) does not read
    back equal."""
    try:
        blob = marshal.dumps(config, 2)
        return blob if marshal.loads(blob) == config else None
    except Exception:  # noqa: BLE001 - unmarshallable, or an array's ambiguous equality
        return None


def _frozen(x, symbols):
    """A hashable copy of a structure of plain Python values (each tagged with its type:
    1, 1.0 and True are equal keys otherwise) and KerasTensors (numbered in order of first
    use, so `f(x, x)` and `f(x, y)` differ)."""
    if type(x) in _PLAIN:
        return type(x).__name__, x
    if isinstance(x, KerasTensor):
        symbols.setdefault(id(x), x)
        return "KerasTensor", list(symbols).index(id(x))
    if type(x) in (list, tuple):
        return type(x).__name__, tuple(_frozen(v, symbols) for v in x)
    if type(x) is dict and all(type(k) is str for k in x):
        return "dict", tuple((k, _frozen(x[k], symbols)) for k in sorted(x))
    raise _NotPlain


# -- a user layer's own compute_output_signature / compute_output_shape -----------------------
def _defined_by_user(layer, method):
    """Whether `method` comes from a class outside tensorlite (a user's subclass)."""
    for cls in type(layer).__mro__:
        if method in cls.__dict__:
            return not cls.__module__.startswith("tensorlite.")
    return False


def _declared_specs(layer, inputs, args, kwargs):
    """The specs the layer declares (a user layer's own compute_output_signature or
    compute_output_shape, as Keras 3 asks them; any dynamic layer's compute_output_shape,
    as tf.keras 2 does), or None when it declares none (or the call has other symbolic
    arguments, or masks, which only its `call` relates)."""
    from tensorlite.keras.layers.mask_propagation import _base_compute_mask  # noqa: PLC0415
    if is_symbolic_any([list(args), kwargs]) or \
            any(isinstance(t, KerasTensor) and t.mask_spec is not None
                for t in nest.flatten(inputs)) or \
            type(layer).compute_mask is not _base_compute_mask():
        return None
    if _defined_by_user(layer, "compute_output_signature"):
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        out = layer.compute_output_signature(nest.map_structure(
            lambda t: TensorSpec(t.shape, t.dtype), inputs))
        flat = nest.flatten(out)
        return [OutputSpec(TensorShape(s.shape), s.dtype) for s in flat], out
    if _defined_by_user(layer, "compute_output_shape") or getattr(layer, "dynamic", False):
        try:
            shapes = layer.compute_output_shape(nest.map_structure(
                lambda t: TensorShape(t.shape), inputs))
        except NotImplementedError:
            return None
        out = _shape_structure(shapes)
        from tensorlite.framework import dtypes  # noqa: PLC0415
        dtype = dtypes.as_dtype(layer.compute_dtype)
        return [OutputSpec(shape, dtype) for shape in nest.flatten(out)], out
    return None


def _shape_structure(shapes):
    """compute_output_shape's answer as a structure of TensorShape leaves: one shape (a
    TensorShape, or a tuple or list of sizes) or a list / dict of them."""
    if isinstance(shapes, TensorShape) or shapes is None:
        return TensorShape(shapes)
    if isinstance(shapes, dict):
        return {k: _shape_structure(v) for k, v in shapes.items()}
    if all(d is None or isinstance(d, (int, np.integer)) for d in shapes):
        return TensorShape(list(shapes))
    return type(shapes)(_shape_structure(s) for s in shapes) if isinstance(shapes, tuple) \
        else [_shape_structure(s) for s in shapes]


def is_symbolic_any(x):
    return any(isinstance(v, KerasTensor) for v in nest.flatten(x))


# -- the traced call --------------------------------------------------------------------------
def _traced_specs(layer, inputs, args, kwargs):
    kwargs = dict(kwargs)
    if "training" in kwargs and kwargs["training"] is None:
        kwargs.pop("training")
    if "training" in getattr(layer, "_call_params", ()):
        kwargs.setdefault("training", False)
    payload = [inputs, list(args), kwargs]
    symbols = list({id(t): t for t in nest.flatten(payload)
                    if isinstance(t, KerasTensor)}.values())
    sizes = _example_sizes(symbols)
    if any(None in t.shape.as_list() for t in symbols if t.shape.rank is not None):
        _LAST_SIZES.sizes = sizes  # for an error's note (see _call_error)
    examples = [_example(t, sizes) for t in symbols]
    masks = [None if t.mask_spec is None else _example(KerasTensor(*t.mask_spec), sizes)
             for t in symbols]
    shapes = [shape for t, v in zip(symbols, examples) for shape in _leaf_shapes(t, v)] + \
        [tuple(t.mask_spec[0]) for t in symbols if t.mask_spec is not None]
    found = {}

    def call(values, value_masks):
        from tensorlite.keras.layers.mask_propagation import set_keras_mask  # noqa: PLC0415
        by_id = {id(t): v for t, v in zip(symbols, values)}
        for v, m in zip(values, value_masks):
            set_keras_mask(v, m)
        given = nest.map_structure(
            lambda x: by_id[id(x)] if isinstance(x, KerasTensor) else x, payload)
        with constructing():
            out = layer.__call__(given[0], *given[1], **given[2])
        found["specs"] = [_spec_of(layer, t, sizes) for t in nest.flatten(out)]
        return out
    _, out = tracing.trace(call, (examples, masks), {}, layer.name, call=False,
                           shapes=shapes, tracer_class=_construction_tracer(sizes))
    return found["specs"], out


def _example(kt, sizes):
    """Example values of a KerasTensor's spec for the tracer (see the module's docstring),
    `sizes` (batch, other) for its unknown dimensions."""
    if kt.ragged:
        return _ragged_example(kt.shape.as_list(), kt.dtype, sizes)
    if kt.sparse:
        return _sparse_example(kt, sizes)
    if kt.shape.rank is None:
        raise NotImplementedError(f"a layer call on a KerasTensor of unknown rank ({kt!r})")
    shape = [d if d is not None else sizes[0] if i == 0 else sizes[1]
             for i, d in enumerate(kt.shape.as_list())]
    # read-only zeros of no memory: kernels never write into their inputs
    zero = np.array(b"", dtype=object) if kt.dtype.is_string else \
        np.zeros((), dtype=kt.dtype.as_numpy_dtype)
    return wrap(np.broadcast_to(zero, shape))


def _sparse_example(kt, sizes):
    """An empty SparseTensor of the spec's dense shape. Not a composite of the tracer: its
    parts enter as constants, and what the layer computes from it has the example's sizes,
    which _spec_of takes back to None."""
    from tensorlite.framework.sparse_tensor import SparseTensor  # noqa: PLC0415
    dims = [d if d is not None else sizes[0] if i == 0 else sizes[1]
            for i, d in enumerate(kt.shape.as_list())]
    np_dtype = object if kt.dtype.is_string else kt.dtype.as_numpy_dtype
    return SparseTensor(wrap(np.zeros((0, len(dims)), np.int64)),
                        wrap(np.zeros((0,), np_dtype)), wrap(np.array(dims, np.int64)))


def _leaf_shapes(kt, example):
    """The symbolic shape of each tensor the example flattens into: the KerasTensor's for a
    dense one; for a ragged one, its components with their leading (row) sizes unknown."""
    if kt.sparse:
        return []
    if not kt.ragged:
        return [tuple(kt.shape.as_list())]
    return [(None,) + tuple(leaf._value.shape[1:])
            for leaf in nest.flatten(example, expand_composites=True)]


def _ragged_example(shape, dtype, sizes):
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
    n, lengths = shape[0] or sizes[0], []
    for _ in range(ragged_dims):
        level = [(i % 2) + 1 for i in range(n)]
        lengths.append(level)
        n = sum(level)
    inner = [d if d is not None else sizes[1] for d in shape[1 + ragged_dims:]]
    np_dtype = object if dtype.is_string else dtype.as_numpy_dtype
    flat = wrap(np.full([n] + inner, b"" if dtype.is_string else 0, dtype=np_dtype))
    return RaggedTensor.from_nested_row_lengths(
        flat, [wrap(np.array(x, dtype=np.int64)) for x in lengths])


def _static_shape(t, sizes):
    """A traced tensor's static shape. One not computed from the traced inputs (from a
    sparse input's parts, or zeros((batch, units))) has the example's sizes where Python
    code read them: those become None (graph/tracing.py's _unbake)."""
    info = _graph_tensor_info(t) if GRAPH_TENSOR_INFO else None
    if getattr(info, "static_shape", None) is not None:
        return TensorShape(info.static_shape)
    return TensorShape(tracing._unbake(t._value.shape, sizes, constant=True))


def _spec_of(layer, t, sizes):
    from tensorlite.keras.layers.mask_propagation import keras_mask  # noqa: PLC0415
    if isinstance(t, Tensor):
        shape = _static_shape(t, sizes)
        spec = OutputSpec(shape, t.dtype)
    elif hasattr(t, "flat_values") and hasattr(t, "row_splits"):
        inner = _static_shape(t.flat_values, sizes).as_list()[1:]
        spec = OutputSpec(TensorShape([None] * (t.ragged_rank + 1) + inner), t.dtype,
                          ragged=True)
    else:
        raise TypeError(f"layer {layer.name} returned {type(t).__name__} on symbolic inputs; "
                        f"layers must return tensors")
    mask = keras_mask(t)
    if mask is not None and isinstance(mask, Tensor):  # the output's leading dimensions
        spec.mask = (spec.shape.as_list()[:mask.shape.rank], mask.dtype)
    return spec


# -- errors -----------------------------------------------------------------------------------
class _Sizes(threading.local):
    sizes = None


_LAST_SIZES = _Sizes()


def _call_error(layer, err, inputs, args, kwargs):
    """Keras's construction error: the layer, the error, and the call's arguments (with a
    note naming the example sizes the error's shapes show for unknown dimensions)."""
    kind = type(layer).__name__
    sizes, _LAST_SIZES.sizes = _LAST_SIZES.sizes, None
    if sizes is not None:
        err_text = (f"{err}\n(traced with example sizes for the unknown dimensions: "
                    f"{sizes[0]} for the batch, {sizes[1]} for others)")
    else:
        err_text = str(err)
    lines = "\n".join(f"  \u2022 {name}={_describe(value)}"
                      for name, value in _named_arguments(layer, inputs, args, kwargs))
    message = (f'Exception encountered when calling layer "{layer.name}" (type {kind}).\n\n'
               f"{err_text}\n\nCall arguments received by layer \"{layer.name}\" (type {kind}):\n"
               f"{lines}")
    # TF's graph construction raises shape errors as ValueError; Python's own exception
    # classes keep their class (Keras re-raises them so)
    if isinstance(err, errors.OpError) or type(err).__module__ != "builtins":
        return ValueError(message)
    try:
        return type(err)(message)
    except Exception:  # noqa: BLE001 - an exception class with other arguments
        return ValueError(message)


def _named_arguments(layer, inputs, args, kwargs):
    try:
        params = list(inspect.signature(layer.call).parameters)
    except (TypeError, ValueError):
        params = []
    names = params[:1 + len(args)] if len(params) >= 1 + len(args) else \
        ["inputs"] + [f"args[{i}]" for i in range(len(args))]
    return list(zip(names, [inputs, *args])) + sorted(kwargs.items())


def _describe(value):
    def one(v):
        if isinstance(v, KerasTensor):
            return f"tf.Tensor(shape={tuple(v.shape.as_list())}, dtype={v.dtype.name})"
        return repr(v)
    if isinstance(value, (list, tuple, dict)):
        return repr(nest.map_structure(lambda v: _Raw(one(v)), value))
    return one(value)


class _Raw:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

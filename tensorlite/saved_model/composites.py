"""Ragged (and sparse) tensors at a SavedModel function's boundary, as TensorFlow writes them.

A FunctionDef takes and returns plain tensors: a composite argument or output is its
components, in TensorFlow's order (a RaggedTensor: flat_values, then the row splits from the
outermost; a SparseTensor: indices, values, dense_shape), and the SavedObjectGraph's
signatures describe it with a TypeSpecProto (`type_spec_class` RAGGED_TENSOR_SPEC or
SPARSE_TENSOR_SPEC, `type_state` its constructor arguments, `num_flat_components`).

Example:
    >>> component_specs(tf.RaggedTensorSpec([None, None], tf.float32))
    [TensorSpec(shape=(None,), dtype=tf.float32, ...), TensorSpec(shape=(None,), dtype=tf.int64, ...)]
"""
from tensorlite.framework import dtypes, errors
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.summary.graph_def import datatype, shape_proto

RAGGED, SPARSE = 3, 1  # TypeSpecProto.TypeSpecClass


def is_composite_spec(spec):
    return type(spec).__name__ in ("RaggedTensorSpec", "SparseTensorSpec")


def is_composite(value):
    return type(value).__name__ in ("RaggedTensor", "SparseTensor", "SparseParts")


class SparseParts:
    """A SparseTensor output of a function being traced for export, as a composite the
    tracer expands into its three component tensors (a SparseTensor itself is returned
    whole by a trace)."""

    def __init__(self, indices, values, dense_shape):
        self.parts = [indices, values, dense_shape]

    def _tl_components(self):
        return list(self.parts)

    def _tl_rebuild(self, components):
        return SparseParts(*components)


def sparse_outputs_as_parts(fn):
    """fn, its SparseTensor outputs as SparseParts (see there)."""
    import functools  # noqa: PLC0415
    from tensorlite.framework import nest  # noqa: PLC0415

    @functools.wraps(fn)
    def traced(*args, **kwargs):
        return nest.map_structure(
            lambda v: SparseParts(v.indices, v.values, v.dense_shape)
            if type(v).__name__ == "SparseTensor" else v, fn(*args, **kwargs))
    return traced


def component_specs(spec):
    """The component TensorSpecs of a composite spec (a TensorSpec: itself)."""
    kind = type(spec).__name__
    if kind == "RaggedTensorSpec":
        dims = spec.shape.as_list()
        k = spec.ragged_rank
        return [TensorSpec([None] + dims[k + 1:], spec.dtype)] + \
            [TensorSpec([None], spec.row_splits_dtype) for _ in range(k)]
    if kind == "SparseTensorSpec":
        rank = spec.shape.rank
        if rank is None:
            raise errors.UnimplementedError(None, None, "SavedModel: a SparseTensorSpec of "
                                            "unknown rank; give its shape")
        return [TensorSpec([None, rank], dtypes.int64), TensorSpec([None], spec.dtype),
                TensorSpec([rank], dtypes.int64)]
    return [spec]


def ragged_components(rt):
    """flat_values, then the row splits from the outermost (TensorFlow's order)."""
    splits, values = [], rt
    while type(values).__name__ == "RaggedTensor":
        splits.append(values._row_splits)
        values = values._values
    return [values] + splits


def components(value):
    """A value's component tensors, in TensorFlow's order."""
    kind = type(value).__name__
    if kind == "RaggedTensor":
        return ragged_components(value)
    if kind == "SparseTensor":
        return [value.indices, value.values, value.dense_shape]
    if kind == "SparseParts":
        return list(value.parts)
    return [value]


def flatten(structure):
    """Leaves of a structure, composites expanded into their components (TF's order)."""
    from tensorlite.framework import nest  # noqa: PLC0415
    out = []
    for leaf in nest.flatten(structure):
        out.extend(components(leaf))
    return out


def write_type_spec(value, spec):
    """Fills StructuredValue `value` with the TypeSpecProto of a composite spec."""
    t = value.type_spec_value
    state = t.type_state.tuple_value
    state.values.add().tensor_shape_value.CopyFrom(shape_proto(spec.shape.as_list()))
    state.values.add().tensor_dtype_value = datatype(spec.dtype)
    if type(spec).__name__ == "RaggedTensorSpec":
        t.type_spec_class, t.type_spec_class_name = RAGGED, "RaggedTensorSpec"
        state.values.add().int64_value = spec.ragged_rank
        state.values.add().tensor_dtype_value = datatype(spec.row_splits_dtype)
    else:
        t.type_spec_class, t.type_spec_class_name = SPARSE, "SparseTensorSpec"
    t.num_flat_components = len(component_specs(spec))
    return value


def output_spec(value, specs):
    """The spec of a traced composite output whose component Specs are `specs`."""
    if type(value).__name__ == "RaggedTensor":
        from tensorlite.ragged.spec import RaggedTensorSpec  # noqa: PLC0415
        k = len(specs) - 1
        shape = [None] * (k + 1) + list(specs[0].shape[1:])
        return RaggedTensorSpec(shape, specs[0].dtype, ragged_rank=k,
                                row_splits_dtype=specs[1].dtype)
    from tensorlite.framework.sparse_tensor import SparseTensorSpec  # noqa: PLC0415
    rank = specs[0].shape[1] if len(specs[0].shape) == 2 else None
    if rank is None:
        rank = specs[2].shape[0] if specs[2].shape and specs[2].shape[0] is not None else None
    return SparseTensorSpec([None] * rank if rank is not None else None, specs[1].dtype)


# -- reading ------------------------------------------------------------------------------------
def _state_value(value):
    """One entry of a TypeSpecProto's type_state: a shape (list, None dims; None when of
    unknown rank), a dtype, an int."""
    kind = value.WhichOneof("kind")
    if kind == "tensor_shape_value":
        shape = value.tensor_shape_value
        return None if shape.unknown_rank else [None if d.size < 0 else d.size
                                                for d in shape.dim]
    if kind == "tensor_dtype_value":
        from tensorlite.summary.graph_def import dtype_from_datatype  # noqa: PLC0415
        return dtype_from_datatype(value.tensor_dtype_value)
    return None if kind in (None, "none_value") else getattr(value, kind)


class TypeSpec:
    """A composite's spec decoded from a TypeSpecProto: `spec` (a tf.RaggedTensorSpec or
    tf.SparseTensorSpec) and its number of components."""

    def __init__(self, proto):
        state = [_state_value(v) for v in proto.type_state.tuple_value.values]
        self.num_components = proto.num_flat_components
        if proto.type_spec_class == RAGGED:
            from tensorlite.ragged.spec import RaggedTensorSpec  # noqa: PLC0415
            shape, dtype, ragged_rank, splits_dtype = state[:4]
            self.spec = RaggedTensorSpec(shape, dtype, ragged_rank=ragged_rank,
                                         row_splits_dtype=splits_dtype)
        elif proto.type_spec_class == SPARSE:
            from tensorlite.framework.sparse_tensor import SparseTensorSpec  # noqa: PLC0415
            self.spec = SparseTensorSpec(state[0], state[1])
        else:
            raise errors.UnimplementedError(
                None, None, f"SavedModel: a function signature holds a "
                f"{proto.type_spec_class_name or proto.type_spec_class} value; tensorlite "
                f"reads RaggedTensorSpec and SparseTensorSpec composites only")
        self.name = self.spec.__class__.__name__
        self.dtype = self.spec.dtype
        self.shape = TensorShape(self.spec.shape).as_list() if \
            TensorShape(self.spec.shape).rank is not None else None

    def components(self, value):
        """The component tensors of an argument for this spec (a RaggedTensor, or a list
        TensorFlow would convert: tf.ragged.constant's input; a SparseTensor)."""
        from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
        if type(self.spec).__name__ == "RaggedTensorSpec":
            if type(value).__name__ != "RaggedTensor":
                from tensorlite import ragged  # noqa: PLC0415
                value = ragged.constant(value, dtype=self.dtype,
                                        ragged_rank=self.spec.ragged_rank)
            parts = ragged_components(value)
            if len(parts) - 1 != self.spec.ragged_rank:
                raise TypeError(f"expected a RaggedTensor of ragged_rank "
                                f"{self.spec.ragged_rank}, got {len(parts) - 1}")
            from tensorlite.ops.math_ops import cast  # noqa: PLC0415
            return [convert_to_tensor(parts[0], dtype=self.dtype)] + \
                [cast(s, self.spec.row_splits_dtype) for s in parts[1:]]
        if type(value).__name__ != "SparseTensor":
            raise TypeError(f"expected a SparseTensor for {self.spec}, got "
                            f"{type(value).__name__}")
        return [value.indices, convert_to_tensor(value.values, dtype=self.dtype),
                value.dense_shape]

    def rebuild(self, tensors):
        """The composite of its component tensors."""
        if type(self.spec).__name__ == "RaggedTensorSpec":
            from tensorlite.ragged.ragged_tensor import RaggedTensor  # noqa: PLC0415
            return RaggedTensor.from_nested_row_splits(tensors[0], list(tensors[1:]),
                                                       validate=False)
        from tensorlite.framework.sparse_tensor import SparseTensor  # noqa: PLC0415
        return SparseTensor(tensors[0], tensors[1], tensors[2])


def pack(structure, flat):
    """`structure` (decoded: leaves TensorSpec placeholders or TypeSpecs) rebuilt with the
    tensors of `flat`, each TypeSpec taking its components; Python values the function
    returned at trace time (None, numbers, strings) stay as they are."""
    from tensorlite.framework import nest  # noqa: PLC0415
    leaves, it = [], iter(flat)
    for leaf in nest.flatten(structure):
        if isinstance(leaf, TypeSpec):
            leaves.append(leaf.rebuild([next(it) for _ in range(leaf.num_components)]))
        elif leaf is None or isinstance(leaf, (bool, int, float, str, bytes)):
            leaves.append(leaf)
        else:
            leaves.append(next(it))
    return nest.pack_like(structure, leaves)


__all__ = ["TypeSpec", "component_specs", "components", "flatten", "is_composite",
           "is_composite_spec", "output_spec", "pack", "write_type_spec"]

"""`tf.saved_model.save`: a tensorlite object as a SavedModel directory in TensorFlow's
layout, which TensorFlow's `tf.saved_model.load` restores.

- `saved_model.pb`: one MetaGraphDef (tags {"serve"}) holding
  - the function library: one FunctionDef per traced concrete function (function_def.py),
    and one `signature_wrapper` per signature that calls it and returns a dict;
  - the outer graph as TensorFlow writes it: a `VarHandleOp` per variable, per signature
    its input `Placeholder`s and a `StatefulPartitionedCall` of its wrapper, and the saver
    (saver_functions.py: `saver_filename`, save and restore calls, the SaverDef) through
    which TensorFlow 1 loaders and TensorFlow Serving's C++ loader restore the variables;
  - the SignatureDefs (`serving_default` and any given), whose tensor names are those nodes;
  - the SavedObjectGraph: the object tree as the checkpoint sees it (user objects, lists,
    dicts, variables, by the same child names), plus each `tf.function` (its concrete
    functions, FunctionSpec, input and output signatures) and the `signatures` map;
- `variables/variables.{index,data-00000-of-00001}`: the tensor bundle of every variable with
  TensorFlow's object-graph keys (the checkpoint writer's);
- `assets/`: the files of tf.saved_model.Asset objects and TextFileInitializer tables
  (table_export.py, which also writes the tables a function captures as resources);
- `fingerprint.pb` (its hashes are blake2b of the parts, not TensorFlow's farmhash:
  TensorFlow only records them).

The directory is written under a temporary name and swapped in atomically (renameat2's
RENAME_EXCHANGE over an existing one): after a crash the old or the new complete SavedModel is
at `export_dir`.

Example:
    >>> tf.saved_model.save(module, "/tmp/m", signatures=module.f)
"""
import hashlib
import os
import shutil

from tensorlite.checkpoint import object_graph as og
from tensorlite.framework import errors, nest
from tensorlite.framework.atomic_files import fsync_dir, host_tag, is_dead_own_temp
from tensorlite.saved_model import composites
from tensorlite.saved_model.function_def import (arg_name, call_node, function_def,
                                                 is_python_output)
from tensorlite.saved_model.load import Loaded, RestoredFunction
from tensorlite.saved_model.saver_functions import add_saver
from tensorlite.saved_model.options import SaveOptions
from tensorlite.saved_model.asset import Asset
from tensorlite.saved_model.table_export import add_asset_file, copy_assets, is_table
from tensorlite.saved_model.trace import TracedGraph
from tensorlite.summary.graph_def import datatype, shape_proto

SIGNATURE_KEY = "serving_default"
_TMP = ".tmp-saved_model-"


# -- finding functions --------------------------------------------------------------------------
# a loaded table's own functions: table_export.py writes them afresh for the table they made
_RESOURCE_FUNCTIONS = ("_create_resource", "_initialize", "_destroy_resource")


def _functions(obj):
    """(attribute name, bound tf.function) of an object: its class's, and for objects that
    do not name their own children (tf.Module, restored objects) its instance's too."""
    from tensorlite.graph.function import Function  # noqa: PLC0415
    found = {}
    for klass in reversed(type(obj).__mro__):
        for name, value in vars(klass).items():
            if isinstance(value, Function):
                found[name] = getattr(obj, name)
    own = not hasattr(obj, "_trackable_children")  # Keras: train_function & co. are not API
    for name, value in getattr(obj, "__dict__", {}).items():
        if isinstance(name, str) and isinstance(value, Function) and own:
            found[name] = value
        elif isinstance(name, str) and isinstance(value, RestoredFunction) and \
                name not in _RESOURCE_FUNCTIONS:
            made = _retraced(value)
            if made is not None:
                found[name] = made
    return sorted(found.items())


def _spec(spec):
    """A TensorSpec of a loaded function's signature leaf."""
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    return TensorSpec(spec.shape, spec.dtype, spec.name)


def _inference_first(concretes):
    """The concrete functions, those saved with no `True` argument (a Keras call's
    `training=False`) first: the one a re-saved model keeps."""
    from tensorlite.framework import nest  # noqa: PLC0415
    return sorted(concretes, key=lambda c: any(
        v is True for v in nest.flatten(c.structured_input_signature or ((), {}))))


def _retraced(restored):
    """A function of a loaded SavedModel as a tf.function (its FunctionDefs run on
    tensorlite ops, so tracing it gives graph IR again): re-saving a loaded, perhaps
    fine-tuned, model. Its tensor arguments become the tf.function's; its Python ones (a
    Keras call's `training=False, mask=None`) stay the values it was saved for. None for a
    function without tensor arguments but with others (Keras's `_adapt_function` of a
    dataset iterator): nothing to trace. Made once per restored function."""
    from tensorlite.framework import nest  # noqa: PLC0415
    from tensorlite.graph.function import Function  # noqa: PLC0415
    from tensorlite.saved_model.load import _Spec  # noqa: PLC0415
    if "_as_tf_function" in restored.__dict__:
        return restored._as_tf_function
    concrete = _inference_first(restored.concrete_functions)[0]
    args, kwargs = concrete.structured_input_signature or ((), {})
    if any(isinstance(v, _Spec) for v in nest.flatten(kwargs)):
        raise errors.UnimplementedError(None, None, "re-saving a loaded function with "
                                        "keyword-only tensor arguments")
    flat = nest.flatten(args)
    where = [i for i, v in enumerate(flat) if isinstance(v, _Spec)]
    made = None
    if where or not flat:
        def call(*xs):
            leaves = list(flat)
            for i, x in zip(where, xs):
                leaves[i] = x
            return concrete(*nest.pack_like(args, leaves), **kwargs)
        made = Function(call, input_signature=[_spec(flat[i]) for i in where])
    restored._as_tf_function = made
    return made


def _retraced_signature(concrete):
    """A loaded signature (keyword arguments, dict outputs) as a tf.function whose
    parameters are named as the signature's inputs."""
    import inspect  # noqa: PLC0415
    from tensorlite.graph.function import Function  # noqa: PLC0415
    specs = concrete.structured_input_signature[1]
    names = sorted(specs)

    def call(*xs):
        return concrete(**dict(zip(names, xs)))
    call.__signature__ = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in names])
    return Function(call, input_signature=[_spec(specs[n]) for n in names])


def _ranked(signature):
    """An input_signature as it is written: a TensorSpec of unknown rank
    (`tf.TensorSpec(None)`) becomes the scalar spec its graph is traced for. (TensorFlow's
    graph takes any rank there; tensorlite's graphs have ranks, so the saved function takes
    scalars, and a call of another shape is refused by the loader, not miscomputed.)"""
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    return [TensorSpec([], s.dtype, s.name) if isinstance(s, TensorSpec) and s.shape.rank is None
            else s for s in signature]


def _traces(function):
    """(input signature, graph or None, structured signature or None) to export a
    tf.function with: its input_signature (traced afresh), else each graph its calls
    traced, with the (args, kwargs) it was traced for where Python values are among them
    (a call `f([[2.0, 2.0]])` traces for that value: the saved function matches it)."""
    if function._signature is not None:
        return [(_ranked(function._signature), None, None)]
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    out = []
    for c in dict.fromkeys(function._cache.values()):
        structured = c.structured_input_signature
        python = any(not isinstance(v, TensorSpec) for v in nest.flatten(structured))
        out.append((_placeholder_specs(c.graph), c.graph, structured if python else None))
    return out


def _placeholder_specs(graph):
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    return [TensorSpec(graph.specs[s][0], graph.specs[s][1]) for s in graph.placeholders]


def _arg_names(function, n):
    import inspect  # noqa: PLC0415
    try:
        parameters = inspect.signature(getattr(function, "python_function", None)).parameters
        params = [p.name for p in parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    params = params[:n] + [f"args_{i}" for i in range(len(params), n)]
    taken = set()
    names = []
    for p in params:
        names.append(arg_name(p, taken))
        taken.add(names[-1])
    return names


# -- structured values ---------------------------------------------------------------------------
class _Outputs:
    """A signature's outputs: `leaves` (one per output key, a ragged or sparse one whole),
    `specs` (the function's flat outputs, composites as their components) and each leaf's
    positions among them (`groups`)."""

    def __init__(self, leaves, specs):
        self.leaves, self.specs, self.groups, k = leaves, specs, [], 0
        for leaf in leaves:
            n = len(composites.components(leaf)) if composites.is_composite(leaf) else 1
            self.groups.append(list(range(k, k + n)))
            k += n

    def positions(self, order):
        return [p for i in order for p in self.groups[i]]

    def spec(self, i):
        """Leaf i's spec: a Spec, or a composite's RaggedTensorSpec / SparseTensorSpec."""
        parts = [self.specs[p] for p in self.groups[i]]
        leaf = self.leaves[i]
        return composites.output_spec(leaf, parts) if composites.is_composite(leaf) else \
            parts[0]

    def write_spec(self, value, name, i):
        """Leaf i in a StructuredValue (an output_signature's entry)."""
        if composites.is_composite(self.leaves[i]):
            composites.write_type_spec(value, self.spec(i))
        else:
            _spec_value(value, name, self.spec(i))

    def write_info(self, info, i, names):
        """Leaf i's TensorInfo, its tensors named `names` (as TensorFlow writes a
        SparseTensor's: coo_sparse; a RaggedTensor's: composite_tensor)."""
        parts = [self.specs[p] for p in self.groups[i]]
        spec = self.spec(i)
        if type(spec).__name__ == "SparseTensorSpec":
            info.dtype = datatype(spec.dtype)
            info.tensor_shape.CopyFrom(shape_proto(spec.shape.as_list()))
            coo = info.coo_sparse
            coo.indices_tensor_name, coo.values_tensor_name, coo.dense_shape_tensor_name = \
                names
        elif type(spec).__name__ == "RaggedTensorSpec":
            composite = info.composite_tensor
            holder = composites.write_type_spec(_STRUCT(), spec)
            composite.type_spec.CopyFrom(holder.type_spec_value)
            for n, part in zip(names, parts):
                c = composite.components.add(name=n, dtype=datatype(part.dtype))
                c.tensor_shape.CopyFrom(shape_proto(part.shape))
        else:
            info.name, info.dtype = names[0], datatype(spec.dtype)
            info.tensor_shape.CopyFrom(shape_proto(spec.shape))


def _STRUCT():  # noqa: N802 - a message class's constructor
    from tensorlite.saved_model.protos import StructuredValue  # noqa: PLC0415
    return StructuredValue()


def _component_names(names, signature):
    """The FunctionDef's argument names: a composite argument `x` is its components `x`,
    `x_1`, ... (as TensorFlow names them)."""
    out, taken = [], set(names)
    for n, spec in zip(names, signature):
        count = len(composites.component_specs(spec)) if \
            composites.is_composite_spec(spec) else 1
        out.append(n)
        for k in range(1, count):
            out.append(arg_name(f"{n}_{k}", taken))
            taken.add(out[-1])
    return out


def _output_structure(value, structure, specs):
    """The output_signature of a function whose flat outputs (composites as their
    components) have Specs `specs`; Python values it returns are written as themselves."""
    it = iter(specs)

    def write(v, leaf, name):
        if is_python_output(leaf):  # returned as traced (a mutating method's None)
            _python_value(v, leaf.value)
        elif composites.is_composite(leaf):
            parts = [next(it) for _ in composites.components(leaf)]
            composites.write_type_spec(v, composites.output_spec(leaf, parts))
        else:
            _spec_value(v, name, next(it))
    _structure(value, structure, None, write=write)


def _spec_value(value, name, spec):
    s = value.tensor_spec_value
    s.name = name
    s.shape.CopyFrom(shape_proto(spec.shape))
    s.dtype = datatype(spec.dtype)
    return value


def _python_leaf(specs):
    """A leaf writer for `_structure` over a traced (args, kwargs) with Python values (a
    list of floats, training=False): Python values as themselves, each TensorSpec as the
    next of `specs` (the written placeholders' specs, named)."""
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415

    def write(value, leaf, name):
        if isinstance(leaf, TensorSpec):
            value.CopyFrom(next(specs))
        elif not _python_value(value, leaf):
            raise errors.UnimplementedError(
                None, None, f"SavedModel export: a function traced for the Python argument "
                f"{leaf!r} of type {type(leaf).__name__}; pass a tensor or give the "
                f"tf.function an input_signature")
    return write


def _python_value(value, leaf):
    """Writes a Python None, bool, int, float or str into StructuredValue `value`;
    False for any other leaf."""
    if leaf is None:
        value.none_value.SetInParent()
    elif isinstance(leaf, bool):
        value.bool_value = leaf
    elif isinstance(leaf, int):
        value.int64_value = leaf
    elif isinstance(leaf, float):
        value.float64_value = leaf
    elif isinstance(leaf, str):
        value.string_value = leaf
    else:
        return False
    return True


def _structure(value, structure, leaf, name="output", write=None):
    """Writes `structure` (dicts, lists, tuples, None, leaves) into StructuredValue `value`;
    `leaf(x)` gives a leaf's Spec, or `write(value, x, name)` writes the leaf itself."""
    if structure is None:
        value.none_value.SetInParent()
    elif isinstance(structure, dict):
        value.dict_value.SetInParent()
        for k in sorted(structure):
            _structure(value.dict_value.fields[str(k)], structure[k], leaf, str(k), write)
    elif isinstance(structure, (list, tuple)):
        target = value.list_value if isinstance(structure, list) else value.tuple_value
        target.SetInParent()
        for i, item in enumerate(structure):
            _structure(target.values.add(), item, leaf, f"{name}_{i}", write)
    elif write is not None:
        write(value, structure, name)
    else:
        _spec_value(value, name, leaf(structure))
    return value


def _fullargspec(value, names, kwonly=()):
    """A FullArgSpec StructuredValue: positional `names`, keyword-only `kwonly`."""
    spec = value.named_tuple_value
    spec.name = "FullArgSpec"
    for key in ("args", "varargs", "varkw", "defaults", "kwonlyargs", "kwonlydefaults",
                "annotations"):
        entry = spec.values.add(key=key).value
        if key == "args":
            entry.list_value.SetInParent()
            for n in names:
                entry.list_value.values.add().string_value = n
        elif key == "kwonlyargs":
            entry.list_value.SetInParent()
            for n in kwonly:
                entry.list_value.values.add().string_value = n
        elif key == "annotations":
            entry.dict_value.SetInParent()
        else:
            entry.none_value.SetInParent()


# -- the builder ---------------------------------------------------------------------------------
class _Builder:
    def __init__(self, root, custom_gradients=True):
        from tensorlite.saved_model.protos import MetaGraphDef  # noqa: PLC0415
        self.graph = og.gather(root)
        n = min((s for slots in self.graph.slots.values() for _, _, s in slots),
                default=len(self.graph.nodes))
        del self.graph.nodes[n:], self.graph.paths[n:], self.graph.refs[n:]
        self.graph.slots = {}  # optimizer slots stay out of an inference SavedModel
        self.meta = MetaGraphDef()
        self.objects = self.meta.object_graph_def
        self.library = self.meta.graph_def.library
        self.counter = 0
        self.handles = {}  # variable node id -> VarHandleOp name
        self.written = {}  # (function, graph, signature) -> what concrete() returned
        from tensorlite.saved_model.table_export import TableExporter  # noqa: PLC0415
        self.tables = TableExporter(self)
        from tensorlite.saved_model.custom_gradients import GradientWriter  # noqa: PLC0415
        self.gradients = GradientWriter(self, custom_gradients)
        self.assets = {}  # node id -> the outer graph Const of an Asset's path
        for node_id, obj in enumerate(self.graph.nodes):
            self._object(node_id, obj)

    def _object(self, node_id, obj):
        proto = self.objects.nodes.add()
        for name, child in self.graph.refs[node_id]:
            proto.children.add(node_id=child, local_name=name)
        if og.is_variable(obj):
            v = proto.variable
            v.dtype = datatype(obj.dtype)
            v.shape.CopyFrom(shape_proto(obj.shape.as_list()))
            v.trainable = bool(getattr(obj, "trainable", True))
            v.name = str(obj.name).split(":")[0]
            return
        if isinstance(obj, Asset):
            proto.asset.asset_file_def_index = add_asset_file(self.meta, obj._path)
            self.assets[node_id] = self.meta.asset_file_def[-1].tensor_info.name[:-2]
            return
        identifier = ("trackable_list_wrapper" if isinstance(obj, (list, tuple)) else
                      "trackable_dict_wrapper" if isinstance(obj, dict) else
                      "_generic_user_object")
        proto.user_object.identifier = identifier
        proto.user_object.version.producer = 1
        proto.user_object.version.min_consumer = 1

    def _new_name(self, base):
        self.counter += 1
        return f"__inference_{arg_name(base)}_{self.counter}"

    # -- functions -----------------------------------------------------------------------
    def concrete(self, function, signature, base, graph=None, structured=None):
        """Writes one concrete function; returns (name, captured variable node ids,
        traced graph, arg names, output Specs). `structured`: the (args, kwargs) it was
        traced for, where Python values are among them."""
        key = (id(function), id(graph), tuple((tuple(s.shape.as_list()), s.dtype.name)
                                              for s in signature))
        if key in self.written:  # a signature of an already saved function: written once
            return self.written[key]
        traced = TracedGraph(function, signature, graph)
        arg_names_ = _arg_names(function, len(signature))
        names = _component_names(arg_names_, signature)
        name = self._new_name(base)
        fdef, captured, outputs = function_def(traced, name, names, {
            self.graph.nodes[i]._path.encode(): self.graph.nodes[i] for i in self.assets},
            self.gradients)
        self.library.function.add().CopyFrom(fdef)
        bound = self.bound_ids(captured, base)
        saved = self.objects.concrete_functions[name]
        saved.bound_inputs.extend(bound)
        args = saved.canonicalized_input_signature.tuple_value.values.add().tuple_value
        args.SetInParent()
        flat = iter(range(len(names)))
        for n, spec in zip(arg_names_, signature):
            if composites.is_composite_spec(spec):  # its components' placeholders
                composites.write_type_spec(args.values.add(), spec)
                for _ in composites.component_specs(spec):
                    next(flat)
                continue
            i = next(flat)
            _spec_value(args.values.add(), n, traced.spec(traced.graph.placeholders[i]))
        saved.canonicalized_input_signature.tuple_value.values.add().dict_value.SetInParent()
        if structured is not None:  # Python values among the arguments: as traced
            specs = list(saved.canonicalized_input_signature.tuple_value.values[0]
                         .tuple_value.values)
            saved.canonicalized_input_signature.Clear()
            _structure(saved.canonicalized_input_signature, tuple(structured), None,
                       write=_python_leaf(iter(specs)))
        _output_structure(saved.output_signature, traced.graph.outputs, outputs)
        self.written[key] = name, bound, traced, names, outputs
        return self.written[key]

    def bound_ids(self, captured, base):
        """The object-graph node ids of the variables and tables a function captured."""
        bound = []
        for variable in captured:
            node_id = self.tables.node(variable) if is_table(variable) else \
                self.graph.ids.get(id(variable))
            if node_id is None:
                raise errors.InvalidArgumentError(
                    None, None, f"SavedModel export: {base} uses variable "
                    f"{getattr(variable, 'name', variable)} which is not reachable from the "
                    f"saved object; keep it as an attribute of the object (or of one it holds)")
            bound.append(node_id)
        return bound

    def function(self, parent_id, attr, function):
        """A tf.function attribute: a function node with its concrete functions."""
        traces = _traces(function)
        if not traces:
            return None
        node_id = len(self.objects.nodes)
        proto = self.objects.nodes.add()
        saved = proto.function
        names = None
        for signature, graph, structured in traces:
            name, _, _, names, _ = self.concrete(function, signature, attr, graph,
                                                 structured)
            saved.concrete_functions.append(name)
            names = _arg_names(function, len(signature))  # (a composite: one argument)
        first = traces[0][0]
        _fullargspec(saved.function_spec.fullargspec, names)
        if function._signature is not None:
            _structure(saved.function_spec.input_signature, tuple(range(len(first))),
                       None, "args", write=lambda value, i, name: composites.write_type_spec(
                           value, first[i]) if composites.is_composite_spec(first[i]) else
                       _spec_value(value, name, _spec_of(first[i])))
        else:
            saved.function_spec.input_signature.none_value.SetInParent()
        self.objects.nodes[parent_id].children.add(node_id=node_id, local_name=attr)
        return node_id

    # -- signatures ----------------------------------------------------------------------
    def signature(self, key, function, signature, map_id, call_index, graph=None):
        """A signature: the traced function, a wrapper returning a dict, its SignatureDef
        and the outer graph's placeholders and call."""
        inner, bound, traced, names, outputs = self.concrete(function, signature, key, graph)
        # a ragged argument is its components, each an input of its own (x, x_1), as TF
        signature = [c for s in signature for c in composites.component_specs(s)]
        structure = traced.graph.outputs
        flat = nest.flatten(structure)
        outputs = _Outputs(flat, outputs)
        if isinstance(structure, dict):
            if len(flat) != len(structure):
                raise ValueError(f"signature {key!r}: a signature returns a flat dict of "
                                 f"tensors (or tensors); got nested values under "
                                 f"{sorted(structure)}")
            keys = [str(k) for k in sorted(structure)]
        else:
            keys = [f"output_{i}" for i in range(len(flat))]
        order = sorted(range(len(keys)), key=lambda i: keys[i])  # TF flattens dicts sorted
        wrapper = self._wrapper(inner, key, names, signature, traced, bound, outputs, keys,
                                order)
        node_id = len(self.objects.nodes)
        bare = self.objects.nodes.add().bare_concrete_function
        bare.concrete_function_name = wrapper
        bare.argument_keywords.extend(sorted(names))
        # as TensorFlow writes a signature: its keyword-only inputs, of which the only one
        # may also be passed positionally (`loaded.signatures["serving_default"](x)`)
        bare.allowed_positional_arguments = 1 if len(names) == 1 else 0
        _fullargspec(bare.function_spec.fullargspec, [], sorted(names))
        bare.function_spec.input_signature.none_value.SetInParent()
        self.objects.nodes[map_id].children.add(node_id=node_id, local_name=key)
        self._signature_def(key, wrapper, names, signature, bound, outputs, keys, order,
                            call_index)

    def _wrapper(self, inner, key, names, signature, traced, bound, outputs, keys, order):
        from tensorlite.summary.graph_def import FunctionDef  # noqa: PLC0415
        name = self._new_name(f"signature_wrapper_{key}")
        fdef = FunctionDef()
        fdef.signature.name = name
        resources = [f"unknown_{i}" if i else "unknown" for i in range(len(bound))]
        for i in _by_name(names):  # TF's callers pass the keyword arguments sorted by name
            fdef.signature.input_arg.add(name=names[i], type=datatype(signature[i].dtype))
        for r, b in zip(resources, bound):
            fdef.signature.input_arg.add(name=r, type=self.bound_type(b))
        call = call_node(fdef.node_def.add(), "StatefulPartitionedCall", inner,
                          names + resources, [datatype(s.dtype) for s in signature] +
                          [self.bound_type(b) for b in bound],
                          [datatype(o.dtype) for o in outputs.specs])
        fdef.signature.is_stateful = True
        fdef.signature.control_output.append(call.name)
        fdef.control_ret[call.name] = call.name
        for k, i in enumerate(outputs.positions(order)):
            ident = fdef.node_def.add(name="Identity" if k == 0 else f"Identity_{k}",
                                      op="Identity", input=[f"{call.name}:output:{i}"])
            ident.attr["T"].type = datatype(outputs.specs[i].dtype)
            ret = "identity" if k == 0 else f"identity_{k}"
            fdef.signature.output_arg.add(name=ret, type=datatype(outputs.specs[i].dtype))
            fdef.ret[ret] = f"{ident.name}:output:0"
        shapes = fdef.attr["_input_shapes"].list
        for i in _by_name(names):
            shapes.shape.add().CopyFrom(shape_proto(signature[i].shape.as_list()))
        for _ in bound:
            shapes.shape.add()
        fdef.attr["_construction_context"].s = b"kEagerRuntime"
        self.library.function.add().CopyFrom(fdef)
        saved = self.objects.concrete_functions[name]
        saved.bound_inputs.extend(bound)
        args = saved.canonicalized_input_signature.tuple_value
        args.values.add().tuple_value.SetInParent()
        kwargs = args.values.add().dict_value
        kwargs.SetInParent()  # a signature without inputs still has its (empty) dict
        for n, spec in zip(names, signature):
            _spec_value(kwargs.fields[n], n, _spec_of(spec))
        out = saved.output_signature.dict_value
        out.SetInParent()
        for i, k in enumerate(keys):
            outputs.write_spec(out.fields[k], k, i)
        return name

    def _signature_def(self, key, wrapper, names, signature, bound, outputs, keys, order,
                       call_index):
        graph = self.meta.graph_def
        sig = self.meta.signature_def[key]
        sig.method_name = "tensorflow/serving/predict"
        inputs = []
        for n, spec in zip(names, signature):
            ph = graph.node.add(name=f"{arg_name(key)}_{n}", op="Placeholder")
            ph.attr["dtype"].type = datatype(spec.dtype)
            ph.attr["shape"].shape.CopyFrom(shape_proto(spec.shape.as_list()))
            inputs.append(ph.name)
            info = sig.inputs[n]
            info.name, info.dtype = f"{ph.name}:0", datatype(spec.dtype)
            info.tensor_shape.CopyFrom(shape_proto(spec.shape.as_list()))
        handles = [self.handle(b) for b in bound]
        call_name = "StatefulPartitionedCall" + (f"_{call_index}" if call_index else "")
        call_node(graph.node.add(), call_name, wrapper,
                  [inputs[i] for i in _by_name(names)] + handles,
                  [datatype(signature[i].dtype) for i in _by_name(names)] +
                  [self.bound_type(b) for b in bound],
                  [datatype(outputs.specs[i].dtype) for i in outputs.positions(order)])
        k = 0
        for i in order:
            n = len(outputs.groups[i])
            outputs.write_info(sig.outputs[keys[i]], i, [f"{call_name}:{k + j}"
                                                         for j in range(n)])
            k += n

    def bound_type(self, node_id):
        """The DataType a function's bound input has: a string for an asset's path, else a
        resource handle."""
        from tensorlite.framework import dtypes  # noqa: PLC0415
        from tensorlite.saved_model.function_def import datatype_resource  # noqa: PLC0415
        return datatype(dtypes.string) if node_id in self.assets else datatype_resource()

    def handle(self, node_id):
        """The outer graph's VarHandleOp of a variable (made once), a table's node or an
        asset's path."""
        if node_id in self.tables.handles:
            return self.tables.handles[node_id]
        if node_id in self.assets:
            return self.assets[node_id]
        if node_id not in self.handles:
            variable = self.graph.nodes[node_id]
            name = "/".join(self.graph.paths[node_id]) or "variable"
            node = self.meta.graph_def.node.add(name=name, op="VarHandleOp")
            node.attr["dtype"].type = datatype(variable.dtype)
            node.attr["shape"].shape.CopyFrom(shape_proto(variable.shape.as_list()))
            node.attr["shared_name"].s = name.encode()
            read = self.meta.graph_def.node.add(name=f"{name}/Read/ReadVariableOp",
                                                op="ReadVariableOp", input=[name])
            read.attr["dtype"].type = datatype(variable.dtype)
            self.handles[node_id] = name
        return self.handles[node_id]


def _by_name(names):
    """Positions of a signature's inputs sorted by name: the order of its wrapper's
    arguments, as TensorFlow flattens a signature's keyword arguments."""
    return sorted(range(len(names)), key=lambda i: names[i])


def _spec_of(spec):
    from tensorlite.framework.registry import Spec  # noqa: PLC0415
    return Spec(tuple(spec.shape.as_list()), spec.dtype)


def _signature_functions(obj, signatures, keras_call=None):
    """{key: (tf.function, input signature)} of `signatures`: a tf.function with an
    input_signature, a ConcreteFunction, or a dict of them; None: the object's only
    tf.function with an input_signature, if it has exactly one."""
    from tensorlite.graph.function import Function  # noqa: PLC0415
    if signatures is None and isinstance(getattr(obj, "signatures", None), dict) and \
            isinstance(obj, Loaded):  # re-saving a loaded SavedModel keeps its signatures
        signatures = {k: _retraced_signature(c) for k, c in obj.signatures.items()}
    if signatures is None:
        candidates = [f for _, f in _functions(obj)
                      if f._signature is not None and _returns_tensors(f)]
        signatures = candidates[0] if len(candidates) == 1 else \
            (keras_call or {}) if not candidates else {}
    if not isinstance(signatures, dict):
        signatures = {SIGNATURE_KEY: signatures}
    out = {}
    for key, fn in signatures.items():
        if isinstance(fn, Function):
            if fn._signature is None:
                raise ValueError(f"signature {key!r}: a tf.function given as a signature needs "
                                 f"an input_signature (or pass fn.get_concrete_function("
                                 f"tf.TensorSpec(...)))")
            out[key] = (fn, _ranked(fn._signature), None)
        elif hasattr(fn, "graph") and hasattr(fn, "_call_flat"):
            out[key] = _concrete_origin(obj, fn)
        else:
            raise ValueError(f"signature {key!r}: expected a tf.function or a concrete "
                             f"function, got {type(fn).__name__}")
    return out


def _returns_tensors(fn):
    """TensorFlow's test of a default-signature candidate: its outputs are tensors (a
    mutating method with an input_signature that returns None is no signature)."""
    flat = nest.flatten(fn.get_concrete_function().structured_outputs)
    return bool(flat) and not any(is_python_output(s) for s in flat)


def _keras_call(obj):
    """A built Keras model's inference call, a tf.function with the model's input
    signature: saved as the object's `__call__` (tf.keras 2 saves one, so that the reloaded
    object is callable: `tf.saved_model.load(d)(x)`, `hub.KerasLayer(d)`) and as its
    default signature (as TensorFlow saves one); None for other objects."""
    if isinstance(obj, Loaded):
        return None
    return _keras_serving(obj) or None


def _keras_serving(obj):
    """A Keras model's inference call as its default signature (as TensorFlow saves one),
    or no signature for other objects."""
    if not (hasattr(obj, "call") and hasattr(obj, "trainable_variables")
            and getattr(obj, "built", False)):
        return {}
    try:
        return inference_function(obj)
    except ValueError:  # inputs unknown (a subclassed model never called): no signature
        return {}


def inference_function(model, signature=None):
    """A tf.function calling a Keras model in inference mode, with an input signature from
    the model's inputs (None batch dimension) unless given.

    Example:
        >>> inference_function(model)(x)  # model(x, training=False)
    """
    from tensorlite.graph.capture import input_signature  # noqa: PLC0415
    from tensorlite.graph.function import function  # noqa: PLC0415
    signature = input_signature(model, signature)
    if len(signature) == 1:
        def serve(inputs):
            return model(inputs, training=False)
    else:
        def serve(*inputs):
            return model(list(inputs), training=False)
    return function(serve, input_signature=signature)


def _concrete_origin(obj, concrete):
    """(function, signature, graph) of a ConcreteFunction: the tf.function of a saved object
    that traced it, retraced from its input_signature where it has one (so a None batch
    dimension stays None), else the concrete function's own graph."""
    graph = concrete.graph
    for node in og.gather(obj).nodes:
        for _, fn in _functions(node):
            if any(c is concrete for c in fn._cache.values()):
                if fn._signature is not None:
                    return fn, list(fn._signature), None
                return fn, _placeholder_specs(graph), graph
    return concrete, _placeholder_specs(graph), graph


def build(obj, signatures=None, custom_gradients=True):
    """The MetaGraphDef of `obj` and the bundle tensors of its variables;
    `custom_gradients`: whether tf.custom_gradient functions keep their gradients
    (SaveOptions.experimental_custom_gradients)."""
    builder = _Builder(obj, custom_gradients)
    keras_call = _keras_call(obj)
    n_objects = len(builder.graph.nodes)
    for node_id in range(n_objects):
        if not og.is_variable(builder.graph.nodes[node_id]):
            functions = _functions(builder.graph.nodes[node_id])
            if node_id == 0 and keras_call is not None and \
                    "__call__" not in dict(functions):
                functions.append(("__call__", keras_call))
            for attr, fn in functions:
                builder.function(node_id, attr, fn)
    map_id = len(builder.objects.nodes)
    sig_map = builder.objects.nodes.add().user_object
    sig_map.identifier = "signature_map"
    sig_map.version.producer = sig_map.version.min_consumer = 1
    builder.objects.nodes[0].children.add(node_id=map_id, local_name="signatures")
    for i, (key, (fn, signature, graph)) in enumerate(
            _signature_functions(obj, signatures, keras_call).items()):
        builder.signature(key, fn, signature, map_id, i, graph)
    meta = builder.meta
    variables = [i for i, v in enumerate(builder.graph.nodes) if og.is_variable(v)]
    if variables:  # (SaveV2/RestoreV2 need at least one tensor)
        add_saver(meta, [(builder.graph.key(i, og.VARIABLE_VALUE), builder.graph.nodes[i])
                         for i in variables], [builder.handle(i) for i in variables],
                  builder._new_name)
    init = meta.signature_def["__saved_model_init_op"].outputs["__saved_model_init_op"]
    meta.graph_def.node.add(name="NoOp", op="NoOp",
                            input=[f"^{c}" for c in builder.tables.init_calls])
    init.name = "NoOp"
    init.tensor_shape.unknown_rank = True
    info = meta.meta_info_def
    info.tags.append("serve")
    from tensorlite.version import TENSORLITE_VERSION, VERSION  # noqa: PLC0415
    info.tensorflow_version = VERSION
    info.tensorflow_git_version = f"tensorlite-{TENSORLITE_VERSION}"
    info.stripped_default_attrs = True
    meta.graph_def.versions.producer = 1994  # a GraphDef version all of TF 2.16+ reads
    meta.graph_def.versions.min_consumer = 12
    tensors = list(builder.graph.tensors())
    tensors.append((og.OBJECT_GRAPH_KEY, builder.graph.proto().SerializeToString()))
    return meta, tensors


# -- writing -------------------------------------------------------------------------------------
def _hash(data):
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def _write_file(path, data):
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _write_directory(directory, meta, tensors):
    from tensorlite.checkpoint.bundle import write_bundle  # noqa: PLC0415
    from tensorlite.saved_model.protos import FingerprintDef, SavedModel  # noqa: PLC0415
    os.makedirs(os.path.join(directory, "variables"))
    os.makedirs(os.path.join(directory, "assets"))
    write_bundle(os.path.join(directory, "variables", "variables"), tensors)
    copy_assets(meta, directory)
    model = SavedModel(saved_model_schema_version=1)
    model.meta_graphs.add().CopyFrom(meta)
    data = model.SerializeToString()
    fingerprint = FingerprintDef(
        saved_model_checksum=_hash(data),
        graph_def_program_hash=_hash(meta.graph_def.SerializeToString(deterministic=True)),
        signature_def_hash=_hash(b"".join(meta.signature_def[k].SerializeToString()
                                          for k in sorted(meta.signature_def))),
        saved_object_graph_hash=_hash(meta.object_graph_def.SerializeToString()),
        checkpoint_hash=_hash(open(os.path.join(directory, "variables", "variables.index"),
                                   "rb").read()))
    fingerprint.version.producer = 1
    _write_file(os.path.join(directory, "fingerprint.pb"), fingerprint.SerializeToString())
    _write_file(os.path.join(directory, "saved_model.pb"), data)  # written last
    for sub in ("variables", "assets", ""):
        fsync_dir(os.path.join(directory, sub))


def _exchange(a, b):
    """Atomically swaps two paths (Linux renameat2 RENAME_EXCHANGE); False where the
    platform cannot."""
    import ctypes  # noqa: PLC0415
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def _remove_dead_temps(parent, base):
    """Removes the temporary directories NAME.tmp-saved_model-PID-HOST-N that writers of
    this host which no longer run left; nothing else (see framework/atomic_files.py)."""
    for entry in os.listdir(parent):
        if entry.startswith(f"{base}{_TMP}"):
            parts = entry[len(base) + len(_TMP):].split("-")  # PID, HOST, N
            path = os.path.join(parent, entry)
            if len(parts) == 3 and is_dead_own_temp(parts[0], parts[1]) and \
                    os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)


def write(export_dir, meta, tensors, extra=None):
    """Writes the SavedModel directory atomically: the old or the new complete one;
    `extra(tmp_dir)` may add files before it appears."""
    export_dir = os.path.abspath(os.fspath(export_dir))
    parent, base = os.path.split(export_dir)
    os.makedirs(parent, exist_ok=True)
    _remove_dead_temps(parent, base)
    tmp = os.path.join(parent, f"{base}{_TMP}{os.getpid()}-{host_tag()}-{id(meta)}")
    try:
        _write_directory(tmp, meta, tensors)
        if extra is not None:
            extra(tmp)
        if not os.path.exists(export_dir):
            os.rename(tmp, export_dir)
        elif os.path.isdir(export_dir) and _exchange(tmp, export_dir):
            shutil.rmtree(tmp)  # now the old directory
        else:  # no atomic swap here: move the old one aside first
            os.rename(export_dir, tmp + "-old")
            os.rename(tmp, export_dir)
            shutil.rmtree(tmp + "-old", ignore_errors=True)
        fsync_dir(parent)
    finally:
        if os.path.exists(tmp):
            shutil.rmtree(tmp, ignore_errors=True)


def save(obj, export_dir, signatures=None, options=None):
    """`tf.saved_model.save`: writes `obj` (a tf.Module, a Keras model, any object holding
    variables and tf.functions) to `export_dir` in TensorFlow's SavedModel layout.

    Example:
        >>> class Scale(tf.Module):
        ...     def __init__(self):
        ...         self.w = tf.Variable(2.0)
        ...     @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        ...     def __call__(self, x):
        ...         return x * self.w
        >>> tf.saved_model.save(Scale(), "/tmp/scale")  # doctest: +SKIP
    """
    if options is not None and not isinstance(options, SaveOptions):
        raise TypeError(f"options must be a tf.saved_model.SaveOptions, got "
                        f"{type(options).__name__}")
    meta, tensors = build(obj, signatures, options is None or
                          options.experimental_custom_gradients)
    if options is not None:
        meta.meta_info_def.tags.extend(t for t in options.extra_tags
                                       if t not in meta.meta_info_def.tags)
    write(export_dir, meta, tensors)


__all__ = ["save", "build", "write", "inference_function", "SIGNATURE_KEY"]

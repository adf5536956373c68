"""`tf.saved_model.load`: a SavedModel directory (as TensorFlow writes it) as tensorlite
objects: the `tf.Module` tree of its object graph, its variables restored from
`variables/variables` (a tensor bundle), its `tf.function`s and `signatures` callable. The
functions run their FunctionDefs op by op on tensorlite (function_runner.py), so a
GradientTape sees them and the restored trainable variables can be fine-tuned.

Nothing in the directory is executed as Python: the graph is data, each op runs through a
tensorlite op's declared `tf_import` rule, and an op without one is an UnimplementedError
naming it. The file is checked before anything is built from it (validate.py: structure and
claimed sizes), and its ops may touch only its own `assets/` and `variables/`
(file_access.py).

Example:
    >>> model = tf.saved_model.load("/tmp/exported")
    >>> model.signatures["serving_default"](x=tf.ones([1, 3]))
    {'output_0': <tf.Tensor ...>}
"""
import os

import numpy as np

from tensorlite.framework import errors, nest
from tensorlite.summary.graph_def import dtype_from_datatype

SAVED_MODEL_PB = "saved_model.pb"


def read_saved_model(export_dir):
    """The SavedModel message of a directory; a malformed file is DataLossError."""
    from google.protobuf.message import DecodeError  # noqa: PLC0415
    from tensorlite.saved_model.protos import SavedModel  # noqa: PLC0415
    path = os.path.join(os.fspath(export_dir), SAVED_MODEL_PB)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise errors.NotFoundError(None, None, f"SavedModel file does not exist at: {path}; "
                                   f"expected a directory written by tf.saved_model.save"
                                   ) from None
    except PermissionError:
        raise errors.PermissionDeniedError(None, None, f"{path}: permission denied") from None
    except OSError as e:  # a directory named saved_model.pb, an I/O error
        raise errors.DataLossError(None, None, f"{path} cannot be read as a SavedModel "
                                   f"({e.strerror or e})") from None
    try:
        model = SavedModel.FromString(data)
    except (DecodeError, RuntimeError) as e:
        raise errors.DataLossError(None, None, f"{path} is not a valid SavedModel protocol "
                                   f"buffer ({e})") from None
    if not model.meta_graphs:
        raise errors.DataLossError(None, None, f"{path} holds no MetaGraphDef")
    return model


def meta_graph(model, tags=None, where=""):
    """The MetaGraphDef with exactly `tags` (default: "serve", else the only one)."""
    wanted = {tags} if isinstance(tags, str) else set(tags or ())
    for meta in model.meta_graphs:
        have = set(meta.meta_info_def.tags)
        if (wanted and have == wanted) or (not wanted and ("serve" in have
                                                           or len(model.meta_graphs) == 1)):
            return meta
    raise RuntimeError(f"MetaGraphDef associated with tags {sorted(wanted) or ['serve']} could "
                       f"not be found in SavedModel {where}; available: "
                       f"{[sorted(m.meta_info_def.tags) for m in model.meta_graphs]}")


class Loaded:
    """A restored user object: its children as attributes (variables, sub-objects, lists,
    functions, `signatures`), as TensorFlow's restored objects have them."""

    def _trackable_children(self):
        """Its children as the checkpoint restorer walks them (sub-objects included, which
        are neither Modules nor variables)."""
        from tensorlite.checkpoint.object_graph import _trackable  # noqa: PLC0415
        return [(k, v) for k, v in vars(self).items()
                if isinstance(v, Loaded) or _trackable(v)]

    def _restore_from_tensors(self, restored):
        """A saved value matched to an object that holds none: the variables do not fit the
        object graph (a corrupt or mismatched directory)."""
        raise errors.DataLossError(None, None, f"SavedModel: the variables hold values "
                                   f"{sorted(restored)} for an object of the object graph that "
                                   f"is neither a variable nor a table; the SavedModel is "
                                   f"corrupt")

    def __call__(self, *args, **kwargs):
        fn = self.__dict__.get("__call__")
        if fn is None:
            raise TypeError(
                "'_UserObject' object is not callable: this restored object has no __call__ "
                f"function (a Keras 3 model saved by tf.saved_model.save has only its "
                f"signatures: call loaded.signatures[...](x); signatures here: "
                f"{sorted(self.__dict__.get('signatures') or {})})")
        return fn(*args, **kwargs)


# -- structured values: function signatures -----------------------------------------------------
class _Spec:
    """A TensorSpec placeholder in a decoded StructuredValue."""

    def __init__(self, name, shape, dtype):
        self.name, self.shape, self.dtype = name, shape, dtype

    def __repr__(self):  # as TensorFlow shows a signature's structured_outputs
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        return repr(TensorSpec(self.shape, self.dtype, self.name))


def decode(value):
    """A StructuredValue as Python: tuples, lists, dicts, None, scalars, _Spec leaves."""
    kind = value.WhichOneof("kind")
    if kind in (None, "none_value"):
        return None
    if kind == "tensor_spec_value":
        spec = value.tensor_spec_value
        shape = None if spec.shape.unknown_rank else [None if d.size < 0 else d.size
                                                      for d in spec.shape.dim]
        return _Spec(spec.name, shape, dtype_from_datatype(spec.dtype))
    if kind == "type_spec_value":  # a ragged or sparse argument or output (others, an
        from tensorlite.saved_model import composites  # noqa: PLC0415 - iterator: as is)
        if value.type_spec_value.type_spec_class in (composites.RAGGED, composites.SPARSE):
            return composites.TypeSpec(value.type_spec_value)
    if kind == "list_value":
        return [decode(v) for v in value.list_value.values]
    if kind == "tuple_value":
        return tuple(decode(v) for v in value.tuple_value.values)
    if kind == "dict_value":
        return {k: decode(v) for k, v in value.dict_value.fields.items()}
    if kind == "named_tuple_value":
        return {p.key: decode(p.value) for p in value.named_tuple_value.values}
    return getattr(value, kind)


def _flat_like(given, sig):
    """The leaves of `given` where the signature `sig` has them, a composite (a ragged
    argument as a RaggedTensor or a nested list) staying one leaf."""
    if isinstance(sig, (list, tuple)) and isinstance(given, (list, tuple)):
        out = []
        for g, s in zip(given, sig):
            out.extend(_flat_like(g, s))
        return out + list(given[len(sig):])
    if isinstance(sig, dict) and isinstance(given, dict):
        out = []
        for k in sorted(sig, key=nest._sort_key):
            out.extend(_flat_like(given.get(k), sig[k]))
        return out
    return [given]


class ConcreteFunction:
    """One restored concrete function: its FunctionDef, bound variables and signature."""

    def __init__(self, runner, name, saved, objects):
        self._runner, self.name = runner, name
        self._bound = [objects[i] for i in saved.bound_inputs]
        self.structured_input_signature = decode(saved.canonicalized_input_signature)
        self.structured_outputs = decode(saved.output_signature)
        self.function_def = runner.functions.get(name)
        self._value_shaped = runner.value_shaped(name)
        self.positional_keywords = []  # set from a bare concrete function's proto

    def _flat_inputs(self, args, kwargs):
        """The tensors of a call, in the signature's order. The signature's Python values
        (a Keras call's `training=False`, `mask=None`) must be given equal or left out;
        a concrete function saved for other values does not match (TypeError)."""
        sig_args, sig_kwargs = self.structured_input_signature or ((), {})
        args = self._keywords_of_positionals(args, sig_args, kwargs)
        if len(args) > len(sig_args):
            raise TypeError(f"{self.name} takes {len(sig_args)} positional arguments, got "
                            f"{len(args)}")
        given = list(args) + list(sig_args[len(args):]) + [
            kwargs.pop(k) if k in kwargs else sig_kwargs[k] for k in sorted(sig_kwargs)]
        if kwargs:
            raise TypeError(f"{self.name} got unexpected keyword arguments {sorted(kwargs)}; "
                            f"it takes {sorted(sig_kwargs)}")
        from tensorlite.saved_model.composites import TypeSpec  # noqa: PLC0415
        sig = (sig_args, sig_kwargs)
        flat = nest.flatten(given) if not any(
            isinstance(s, TypeSpec) for s in nest.flatten(sig)) else _flat_like(
            given, list(sig_args) + [sig_kwargs[k] for k in sorted(sig_kwargs)])
        flat_sig = nest.flatten(sig)
        tensor_leaf = (_Spec, TypeSpec)
        specs = [s for s in flat_sig if isinstance(s, tensor_leaf)]
        if len(flat) != len(flat_sig) or any(
                (v is None or isinstance(v, tensor_leaf)) for v, s in zip(flat, flat_sig)
                if isinstance(s, tensor_leaf)):
            raise TypeError(f"{self.name} expects {len(specs)} tensors "
                            f"({[s.name for s in specs]}), got {len(flat)} arguments")
        for v, s in zip(flat, flat_sig):
            if not isinstance(s, tensor_leaf) and not (v is s or (type(v) is type(s) and
                                                                  v == s)):
                raise TypeError(f"{self.name} was saved for the argument value {s!r}, "
                                f"got {v!r}")
        from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
        out = []
        for v, s in zip(flat, flat_sig):
            if isinstance(s, TypeSpec):
                out.extend(s.components(v))
            elif isinstance(s, _Spec):
                out.append(convert_to_tensor(v, dtype=s.dtype))
        return out

    def _keywords_of_positionals(self, args, sig_args, kwargs):
        """A function saved with keyword-only inputs of which the first
        `allowed_positional_arguments` may be given positionally (TensorFlow's
        one-input signatures: `signatures["serving_default"](x)`): those positional
        arguments become their keywords (in `kwargs`); returns the positionals left."""
        extra = len(args) - len(sig_args)
        allowed = self.positional_keywords
        if extra <= 0 or not allowed:
            return args
        if extra > len(allowed):
            raise TypeError(f"{self.name} takes {len(sig_args) + len(allowed)} positional "
                            f"arguments ({allowed}), got {len(args)}; pass the inputs by "
                            f"keyword")
        for name, value in zip(allowed, args[len(sig_args):]):
            if name in kwargs:
                raise TypeError(f"{self.name} got multiple values for argument {name!r}")
            kwargs[name] = value
        return args[:len(sig_args)]

    def __call__(self, *args, **kwargs):
        return self._call(args, kwargs, inline=False)

    def call_inline(self, *args, **kwargs):
        """Calls the function op by op even inside a tf.function trace, so that its ops
        enter the traced graph one by one, their shapes fixed at the trace's (an exporter's
        fixed-shape traces: TF Lite conversion writes each op as a builtin).

        Example:
            >>> f = tf.saved_model.load(d).signatures["serving_default"]
            >>> f.call_inline(x=tf.ones([1, 3]))
            {'output_0': <tf.Tensor ...>}
        """
        return self._call(args, kwargs, inline=True)

    def _call(self, args, kwargs, inline):
        from tensorlite.graph import tracing  # noqa: PLC0415
        from tensorlite.saved_model.resources import bound_value  # noqa: PLC0415
        inputs = self._flat_inputs(args, dict(kwargs))
        bound = [bound_value(b) for b in self._bound]
        if tracing.is_tracing() and self._value_shaped and not inline:
            outputs = self._run_as_node(inputs, bound)
        elif tracing.is_tracing() and not inline:
            try:
                outputs = self._runner.run(self.name, inputs + bound)
            except errors.InvalidArgumentError as e:
                if "used as a Python value" not in str(e):
                    raise
                # an import rule needs a value the graph computes (TensorFlow's Tile of a
                # computed multiples): this function runs as one node from now on (the ops
                # traced so far are unused and left out of what the graph runs)
                self._value_shaped = True
                outputs = self._run_as_node(inputs, bound)
        else:
            outputs = self._runner.run(self.name, inputs + bound)
        if self.structured_outputs is None:  # (None also for a file without the structure)
            return None if not outputs else outputs[0] if len(outputs) == 1 else outputs
        from tensorlite.saved_model.composites import pack  # noqa: PLC0415
        return pack(self.structured_outputs, outputs)

    def _run_as_node(self, inputs, bound):
        """Inside a tf.function, a function with VALUE_SHAPED ops (function_runner.py) runs
        as one differentiable py_function node, on every call of the graph: TensorFlow's
        graphs compute shapes from values (a ragged tensor's row partitions, a sentence's
        word count), which a tensorlite trace would freeze at their first values. Other
        functions are traced op by op. The captured variables enter as inputs, so gradients
        reach them."""
        from tensorlite.ops.script_ops import py_function  # noqa: PLC0415
        slots = [i for i, b in enumerate(bound) if getattr(b, "_is_variable", False)]

        def func(*tensors):
            feed = list(bound)
            for i, t in zip(slots, tensors[len(inputs):]):
                feed[i] = t  # the variable's value, read by the graph that calls this node
            return self._runner.run(self.name, list(tensors[:len(inputs)]) + feed)
        tout = [dtype_from_datatype(a.type) for a in self.function_def.signature.output_arg]
        outputs = py_function(func, inputs + [bound[i].read_value() for i in slots], tout)
        outputs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        return self._with_signature_shapes(outputs)

    def _with_signature_shapes(self, outputs):
        """The node's outputs with the static shapes the output signature declares (a
        py_function's outputs have none), as TF's function call ops carry them."""
        from tensorlite.ops.array_ops import ensure_shape  # noqa: PLC0415
        specs = nest.flatten(self.structured_outputs) if self.structured_outputs is not None \
            else []
        if len(specs) != len(outputs):
            return outputs
        return [ensure_shape(o, s.shape) if isinstance(s, _Spec) and s.shape is not None
                else o for o, s in zip(outputs, specs)]

    def matches(self, args, kwargs):
        try:
            self._flat_inputs(args, dict(kwargs))
        except (TypeError, ValueError, errors.OpError):
            return False
        return True


class RestoredFunction:
    """A restored `tf.function`: calls the first concrete function its arguments fit."""

    def __init__(self, concrete):
        self.concrete_functions = concrete

    def __call__(self, *args, **kwargs):
        for fn in self.concrete_functions:
            if fn.matches(args, kwargs):
                return fn(*args, **kwargs)
        raise ValueError(f"Could not find a matching function to call among "
                         f"{[f.name for f in self.concrete_functions]} for the given inputs")


def _variables_bytes(export_dir):
    """Bytes of the variables' data files present in `variables/` (what the variables'
    claimed shapes must fit in)."""
    folder = os.path.join(export_dir, "variables")
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    return sum(os.path.getsize(os.path.join(folder, n)) for n in names
               if n.startswith("variables.data-") and os.path.isfile(os.path.join(folder, n)))


def _make_object(proto, meta, export_dir, data_bytes=0):
    from tensorlite.saved_model import resources  # noqa: PLC0415
    kind = proto.WhichOneof("kind")
    if kind == "variable":
        from tensorlite.framework import size_limits  # noqa: PLC0415
        from tensorlite.framework.variables import Variable  # noqa: PLC0415
        v = proto.variable
        dtype = dtype_from_datatype(v.dtype)
        shape = [max(d.size, 0) for d in v.shape.dim]
        # its zeros are allocated before the checkpoint fills them: the claimed shape must
        # fit in the saved bytes (a string element takes at least one byte there)
        size_limits.check_shape(shape, np.uint8 if dtype.is_string else dtype.as_numpy_dtype,
                                data_bytes, f"variable {v.name!r}",
                                os.path.join(export_dir, "variables", "variables.data-*"))
        # a dimension TensorFlow saved as unknown (-1) takes the checkpoint's size
        known = None if v.shape.unknown_rank else [None if d.size < 0 else d.size
                                                   for d in v.shape.dim]
        return Variable(np.zeros(shape, dtype=dtype.as_numpy_dtype), trainable=v.trainable,
                        name=v.name or None, shape=known)
    if kind == "function":
        return "function"  # made once every variable exists (they are bound inputs)
    if kind == "bare_concrete_function":
        return "bare"
    if kind == "user_object":
        identifier = proto.user_object.identifier
        if identifier == "trackable_list_wrapper":
            return []
        if identifier in ("trackable_dict_wrapper", "signature_map"):
            return {}
        return Loaded()
    if kind == "resource":
        return resources.RestoredResource()
    if kind == "constant":
        return resources.constant(proto, meta)
    if kind == "asset":
        return resources.asset(proto, meta, export_dir)
    return None


def _link(graph, objects, runner):
    concrete = {}

    def concrete_fn(name):
        if name not in concrete:
            concrete[name] = ConcreteFunction(runner, name, graph.concrete_functions[name],
                                              objects)
        return concrete[name]

    for i, proto in enumerate(graph.nodes):
        kind = proto.WhichOneof("kind")  # objects[i] may be a tensor: compare kinds
        if kind == "function":
            objects[i] = RestoredFunction([concrete_fn(n) for n in
                                           proto.function.concrete_functions])
        elif kind == "bare_concrete_function":
            bare = proto.bare_concrete_function
            objects[i] = concrete_fn(bare.concrete_function_name)
            objects[i].positional_keywords = list(
                bare.argument_keywords[:bare.allowed_positional_arguments])
    for i, proto in enumerate(graph.nodes):
        obj = objects[i]
        for ref in proto.children:
            child = objects[ref.node_id]
            if isinstance(obj, list):
                obj.append(child)
            elif isinstance(obj, dict):
                obj[ref.local_name] = child
            elif isinstance(obj, Loaded):
                object.__setattr__(obj, ref.local_name, child)


def _restore_variables(export_dir, root, has_index):
    """Restores every variable of the object graph from `variables/`; a SavedModel whose
    variables are missing, partial or do not match its object graph is a DataLossError
    (never a model that runs on zero placeholders)."""
    prefix = os.path.join(export_dir, "variables", "variables")
    if not has_index:  # (_has_index: a SavedModel without variables needs none)
        return
    from tensorlite.checkpoint.bundle import BundleReader  # noqa: PLC0415
    from tensorlite.checkpoint.restore import restore_into  # noqa: PLC0415
    status = restore_into(root, BundleReader(prefix))
    if status._unused or status._unrestored:
        raise errors.DataLossError(
            None, None, f"{export_dir}: its variables do not match its object graph (saved "
            f"values without an object: {status._unused[:5]}; objects without a saved value: "
            f"{status._unrestored[:5]}); the directory is incomplete or inconsistent")


def _has_index(export_dir, graph):
    """Whether variables/variables.index exists (checked to stay in variables/); a
    SavedModel with variables but no index is a DataLossError."""
    has_variables = any(n.WhichOneof("kind") == "variable" for n in graph.nodes)
    if not os.path.exists(os.path.join(export_dir, "variables", "variables.index")):
        if has_variables:
            raise errors.DataLossError(None, None, f"{export_dir}: the SavedModel has variables "
                                       f"but no variables/variables.index; the directory is "
                                       f"incomplete")
        return False
    check_variables_files(export_dir)
    return True


def check_variables_files(export_dir):
    """PermissionDeniedError if a file of the variables bundle resolves outside
    `variables/` (a symlink to another file)."""
    from tensorlite.saved_model.file_access import Roots  # noqa: PLC0415
    roots, folder = Roots(export_dir), os.path.join(export_dir, "variables")
    for name in sorted(os.listdir(folder)):
        if name.startswith("variables."):
            roots.check(os.path.join(folder, name), "read", f"the variables file {name!r}")


def _bound_paths(graph, meta, export_dir):
    """node id -> the paths an object-graph node stands for as a function's bound input
    (an asset: its file in assets/; a string constant: its strings), or None."""
    from tensorlite.saved_model.file_access import const_paths  # noqa: PLC0415

    def paths(node_id):
        proto = graph.nodes[node_id]
        kind = proto.WhichOneof("kind")
        if kind == "asset":
            index = proto.asset.asset_file_def_index
            if 0 <= index < len(meta.asset_file_def):
                return [os.path.join(export_dir, "assets",
                                     meta.asset_file_def[index].filename)]
        if kind == "constant":
            for node in meta.graph_def.node:
                if node.name == proto.constant.operation and node.op == "Const":
                    return const_paths(node)
        return None
    return paths


def load(export_dir, tags=None, options=None):
    """`tf.saved_model.load`: the root object of a SavedModel directory."""
    from tensorlite.saved_model.function_runner import Runner  # noqa: PLC0415
    from tensorlite.saved_model.options import LoadOptions  # noqa: PLC0415
    if options is not None and not isinstance(options, LoadOptions):
        raise TypeError(f"options must be a tf.saved_model.LoadOptions, got "
                        f"{type(options).__name__}")
    from tensorlite.saved_model import file_access, validate  # noqa: PLC0415
    export_dir = os.fspath(export_dir)
    meta = meta_graph(read_saved_model(export_dir), tags, export_dir)
    validate.check_meta_graph(meta, os.path.join(export_dir, SAVED_MODEL_PB))
    graph = meta.object_graph_def
    if not graph.nodes:  # TF1: signatures over the main graph, variables by the saver
        from tensorlite.saved_model import load_v1  # noqa: PLC0415
        return load_v1.load(export_dir, meta)
    roots = file_access.Roots(export_dir)
    runner = Runner(meta.graph_def.library, roots)
    objects = [None] * len(graph.nodes)
    has_index = _has_index(export_dir, graph)  # (incomplete: fails before any allocation)
    data_bytes = _variables_bytes(export_dir)
    for i, proto in enumerate(graph.nodes):
        objects[i] = _make_object(proto, meta, export_dir, data_bytes)
    # before any function runs (the tables' initializers run below)
    file_access.check_static(meta, roots, _bound_paths(graph, meta, export_dir))
    _link(graph, objects, runner)
    runner.gradient_bound = {name: [objects[i] for i in graph.concrete_functions[name]
                                    .bound_inputs] for name in runner.gradients.values()
                             if name in graph.concrete_functions}
    root = objects[0]
    _restore_variables(export_dir, root, has_index)
    from tensorlite.saved_model.resources import initialize_all  # noqa: PLC0415
    initialize_all(objects)
    if isinstance(root, Loaded) and "signatures" not in root.__dict__:
        object.__setattr__(root, "signatures", {})
    return root

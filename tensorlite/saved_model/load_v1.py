"""TF1 SavedModels (written by `tf.compat.v1.saved_model.Builder`, Estimators' export): no
object graph, one GraphDef whose signatures name tensors (`"scores:0"`), variables restored
by the saver from `variables/variables`. `load(export_dir)` (dispatched here from
`tf.saved_model.load` when the MetaGraphDef has no object graph) returns an object whose
`signatures` run the part of the graph each signature needs, op by op through the same
`tf_import` rules as function_runner.py; `Placeholder`s are the signature's inputs and
`VarHandleOp`/`VariableV2` nodes are variables holding the saved values.

Nothing is executed as Python from the directory, and the saver's own nodes (SaveV2,
RestoreV2, ...) never run: the variables are read from the tensor bundle directly. The
asset constants (the MetaGraphDef's `asset_file_def`) are fed the path of the asset's file in
`assets/`, as TensorFlow's loader feeds them, and every file op a signature needs must name a
path inside the SavedModel's `assets/` or `variables/` (file_access.py), checked at load.

Example:
    >>> loaded = tf.saved_model.load("/models/estimator/1")      # a TF1 SavedModel
    >>> loaded.signatures["serving_default"](inputs=tf.constant([example_bytes]))
    {'classes': <tf.Tensor ...>, 'scores': <tf.Tensor ...>}
"""
import os

from tensorlite.framework import errors
from tensorlite.protos.tf_graph_format import VARIABLE_OPS
from tensorlite.saved_model.function_runner import Runner, _lookup, _order
from tensorlite.saved_model.load import Loaded, _Spec, dtype_from_datatype



def _node_name(tensor_name):
    name, _, index = tensor_name.partition(":")
    if index and not index.isdigit():
        raise errors.DataLossError(None, None, f"SavedModel: tensor name {tensor_name!r} is "
                                   f"not NODE:INDEX; the signature is corrupt")
    return name, int(index or 0)


class SignatureFunction:
    """One signature of a TF1 graph: `fn(**inputs) -> {output key: tensor}`, with TF's
    `structured_input_signature`, `structured_outputs` and the SignatureDef's method name."""

    def __init__(self, graph, key, sig):
        from tensorlite.saved_model.file_access import check_static_graph  # noqa: PLC0415
        self._graph, self.name, self.method_name = graph, key, sig.method_name
        self._inputs = {k: _node_name(v.name) for k, v in sig.inputs.items()}
        self._outputs = {k: v.name for k, v in sig.outputs.items()}
        self.input_tensor_names = {k: v.name for k, v in sig.inputs.items()}
        self.output_tensor_names = dict(self._outputs)
        self.structured_input_signature = ((), {k: _spec(k, v) for k, v in sig.inputs.items()})
        self.structured_outputs = {k: _spec(k, v) for k, v in sig.outputs.items()}
        self._order = _order(graph.nodes, list(self._outputs.values()))
        check_static_graph(graph.nodes, self._order, graph._runner.functions, graph.roots,
                           graph.asset_paths)

    def __call__(self, **kwargs):
        from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
        missing = sorted(set(self._inputs) - set(kwargs))
        extra = sorted(set(kwargs) - set(self._inputs))
        if missing or extra:
            raise TypeError(f"signature {self.name} takes inputs {sorted(self._inputs)}; "
                            f"missing {missing}, unexpected {extra}")
        fed = {}
        for key, (node, _) in self._inputs.items():
            spec = self.structured_input_signature[1][key]
            fed[node] = [convert_to_tensor(kwargs[key], dtype=spec.dtype)]
        return self._graph.run(self._order, fed, self._outputs)


def _spec(key, info):
    shape = None if info.tensor_shape.unknown_rank else [
        None if d.size < 0 else d.size for d in info.tensor_shape.dim]
    return _Spec(key, shape, dtype_from_datatype(info.dtype))


class Graph:
    """A GraphDef's nodes, its variables (restored) and the runner of their ops."""

    def __init__(self, graph_def, variables, roots, asset_paths):
        self.nodes = {n.name: n for n in graph_def.node}
        self.variables = variables
        self.roots = roots
        self.asset_paths = asset_paths  # asset constant's node name -> [its file's path]
        # TF1 serving graphs parse tf.Examples: make sure the lazily imported parsing ops
        # (ParseExampleV2's tf_import rule) are registered before the runner collects rules
        import tensorlite.ops.parsing_ops  # noqa: F401, PLC0415
        self._runner = Runner(graph_def.library, roots)

    def run(self, order, fed, outputs):
        from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
        done = {name: [convert_to_tensor(paths[0])] for name, paths in
                self.asset_paths.items()}
        done.update(fed)
        for name in order:
            if name in done:
                continue
            node = self.nodes[name]
            if node.op in VARIABLE_OPS:
                done[name] = [self.variables[name]]
                continue
            if node.op == "Placeholder":
                raise errors.InvalidArgumentError(
                    None, None, f"the graph needs placeholder {name!r}, which is not an input "
                    f"of this signature")
            inputs = [_lookup(ref, {}, done, self.nodes) for ref in node.input
                      if not ref.startswith("^")]
            done[name] = self._runner.node(node, inputs, "the TF1 graph")
        return {key: _lookup(ref, {}, done, self.nodes) for key, ref in outputs.items()}


def _restore(export_dir, graph_def):
    """Node name -> Variable (VarHandleOp) or tensor (VariableV2) of every variable in the
    graph, from variables/variables; a missing value is a DataLossError."""
    from tensorlite.checkpoint.bundle import BundleReader  # noqa: PLC0415
    from tensorlite.framework.convert import convert_to_tensor  # noqa: PLC0415
    from tensorlite.framework.variables import Variable  # noqa: PLC0415
    nodes = [n for n in graph_def.node if n.op in VARIABLE_OPS]
    if not nodes:
        return {}
    prefix = os.path.join(export_dir, "variables", "variables")
    if not os.path.exists(prefix + ".index"):
        raise errors.DataLossError(None, None, f"{export_dir}: the graph has variables but "
                                   f"there is no variables/variables.index; the directory is "
                                   f"incomplete")
    from tensorlite.saved_model.load import check_variables_files  # noqa: PLC0415
    check_variables_files(export_dir)
    reader = BundleReader(prefix)
    out = {}
    for node in nodes:
        shared = node.attr["shared_name"].s.decode() if "shared_name" in node.attr else ""
        key = shared or node.name
        if key not in reader.entries:
            raise errors.DataLossError(None, None, f"{export_dir}: variable {key} has no saved "
                                       f"value in variables/; the directory is incomplete")
        value = reader.tensor(key)
        out[node.name] = Variable(value, name=key) if node.op == "VarHandleOp" else \
            convert_to_tensor(value)
    return out


def _asset_paths(export_dir, meta):
    """Asset constant's node name -> [the path of its file in assets/]."""
    return {_node_name(a.tensor_info.name)[0]:
            [os.path.join(export_dir, "assets", a.filename).encode()]
            for a in meta.asset_file_def if a.tensor_info.name}


def load(export_dir, meta):
    """The TF1 SavedModel's `MetaGraphDef` `meta` as an object with `signatures`."""
    from tensorlite.saved_model.file_access import Roots  # noqa: PLC0415
    graph = Graph(meta.graph_def, _restore(export_dir, meta.graph_def), Roots(export_dir),
                  _asset_paths(export_dir, meta))
    root = Loaded()
    object.__setattr__(root, "signatures", {
        key: SignatureFunction(graph, key, sig) for key, sig in meta.signature_def.items()
        if not key.startswith("__")})  # __saved_model_init_op and the like are not callable
    return root

"""tf.custom_gradient in a SavedModel, written as TensorFlow writes it
(`SaveOptions(experimental_custom_gradients=True)`, TensorFlow's default).

The forward FunctionDef passes `outputs + arguments + variable reads` through one `IdentityN`
node whose attribute `_gradient_op_type` is "CustomGradient-<n>"; the function's results are
its first len(outputs) outputs. The library's `registered_gradients` maps that op type to a
gradient FunctionDef taking one `result_grads_i` per IdentityN output and returning the
gradients of the arguments, then of the variables read. A gradient that uses the forward's
values (it captures `x`) has no such function: TensorFlow skips it with a warning, and so
does this writer (the loaded function then differentiates the forward ops).

Example:
    >>> gradients = GradientWriter(builder, enabled=True)   # doctest: +SKIP
    >>> function_def(traced, name, names, gradients=gradients)   # doctest: +SKIP
"""
import warnings

from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.graph.ir import ASSIGN_VARIABLE, READ_VARIABLE, is_stateful
from tensorlite.summary.graph_def import datatype, shape_proto


class GradientWriter:
    """Writes the custom-gradient nodes of the functions one SavedModel builder writes."""

    def __init__(self, builder, enabled):
        self.builder = builder
        self.enabled = enabled  # SaveOptions.experimental_custom_gradients
        self.count = 0

    def write(self, writer, node, saved):
        """Writes IR node `node` (a custom gradient's; `saved` its SavedGradient rule) into
        function writer `writer`; returns the refs of its outputs."""
        refs = [writer.refs[s] for s in node.inputs]
        if not self.enabled:  # forward only, as TensorFlow with the option off
            return saved.passthrough(refs)
        specs = [writer.cap.spec(s) for s in node.inputs]
        split = saved.n_in + len(saved.variables)
        order = list(range(split, len(refs))) + list(range(split))  # outputs, args, reads
        grad_name = self._gradient_function(saved, specs, [specs[i] for i in order])
        if grad_name is None:  # (warned) forward only
            return saved.passthrough(refs)
        self.count += 1
        op_type = f"CustomGradient-{self.count}"
        n = writer.node("IdentityN", "IdentityN", [refs[i] for i in order],
                        T=[specs[i].dtype for i in order], _gradient_op_type=op_type)
        self.builder.library.registered_gradients.add(gradient_func=grad_name,
                                                      registered_op_type=op_type)
        return [f"{n.name}:output:{k}" for k in range(saved.n_y)]

    def _gradient_function(self, saved, specs, dy_specs):
        """Traces the gradient into the library; returns its name, or None (with a warning)
        when it uses the forward's values."""
        from tensorlite.saved_model.function_def import function_def  # noqa: PLC0415
        from tensorlite.saved_model.trace import TracedGraph  # noqa: PLC0415
        signature = [TensorSpec(s.shape, s.dtype) for s in specs[:saved.n_in] + dy_specs]
        traced = TracedGraph(saved.gradient_body, signature)
        if not _without_forward(traced, saved.n_in):
            warnings.warn(f"tf.saved_model.save: the gradient of custom gradient {saved.name} "
                          f"uses the forward's values (its grad_fn captures them), which "
                          f"TensorFlow's SavedModel format cannot hold; it is not saved, and "
                          f"the loaded function differentiates the forward ops",
                          stacklevel=4)
            return None
        name = self.builder._new_name("internal_grad_fn")
        arg_names = [f"result_grads_{i}" for i in range(len(dy_specs))]
        fdef, captured, outputs = function_def(traced, name, arg_names)
        self.builder.library.function.add().CopyFrom(fdef)
        entry = self.builder.objects.concrete_functions[name]
        entry.bound_inputs.extend(self.builder.bound_ids(captured, f"gradient of {saved.name}"))
        _signatures(entry, arg_names, dy_specs, outputs, saved.n_y)
        return name


def _without_forward(traced, n_x):
    """Drops from the traced gradient graph what its results do not need (the forward's
    ops) and its first `n_x` arguments (the forward's inputs); False when the results need
    those arguments."""
    graph = traced.graph
    xs = set(graph.placeholders[:n_x])
    needed, live = set(graph.output_slots()), set()
    for node in reversed(graph.nodes):
        if any(o in needed for o in node.outputs) or node.op is ASSIGN_VARIABLE or (
                is_stateful(node.op) and node.op is not READ_VARIABLE):
            live.add(id(node))
            needed.update(node.inputs)
    if needed & xs:
        return False
    graph.nodes = [n for n in graph.nodes if id(n) in live]
    graph.placeholders = graph.placeholders[n_x:]
    traced.signature = traced.signature[n_x:]
    return True


def _spec_value(value, name, spec):
    value.name = name
    value.shape.CopyFrom(shape_proto(spec.shape))
    value.dtype = datatype(spec.dtype)


def _signatures(entry, arg_names, dy_specs, outputs, n_y):
    """The gradient function's SavedConcreteFunction signatures, as TensorFlow writes them:
    inputs `(None, result_grads...)` (None: the op), outputs None for each forward output,
    then the tensors."""
    args = entry.canonicalized_input_signature.tuple_value.values.add().tuple_value
    args.values.add().none_value.SetInParent()
    for name, spec in zip(arg_names, dy_specs):
        _spec_value(args.values.add().tensor_spec_value, name, spec)
    entry.canonicalized_input_signature.tuple_value.values.add().dict_value.SetInParent()
    out = entry.output_signature.list_value
    for _ in range(n_y):
        out.values.add().none_value.SetInParent()
    for k, spec in enumerate(outputs):
        _spec_value(out.values.add().tensor_spec_value, f"tensor_{n_y + k}", spec)


__all__ = ["GradientWriter"]

"""What `pretty_printed_concrete_signatures` and `ConcreteFunction`'s str print: a traced
function's parameters (tensors listed under Args, Python values shown as name=value) and
its outputs' dtypes and static shapes (None where a polymorphic graph's size varies).

Example:
    >>> print(signature_text("f", None, concrete))  # doctest: +SKIP
    f(x)
      Args:
        x: float32 Tensor, shape=(None, 3)
      Returns:
        float32 Tensor, shape=(None, 4)
"""
from tensorlite.framework import nest
from tensorlite.framework.tensor_shape import TensorShape


class StaticSpecs:
    """Slots' static shapes: a polymorphic trace's (None dims), else by the shape rules."""

    def __init__(self, graph):
        from tensorlite.graph.passes import Specs  # noqa: PLC0415
        self.graph = graph
        self.specs = Specs(graph)

    def _spec(self, slot):
        return self.specs[slot] if isinstance(slot, int) else None

    def shape(self, slot):
        static = getattr(self.graph, "symbolic_shapes", None) or {}
        if isinstance(slot, int) and slot in static:
            return TensorShape(list(static[slot]))
        spec = self._spec(slot)
        return None if spec is None else TensorShape(
            None if spec.shape is None else list(spec.shape))

    def dtype(self, slot):
        spec = self._spec(slot)
        return None if spec is None else spec.dtype


def signature_text(name, fn, concrete):
    graph = concrete.graph
    params = getattr(concrete, "parameters", None) or [
        (f"arg{i}", [f"arg{i}"], None) for i in range(len(graph.placeholders))]
    head = ", ".join(p if labels is not None else f"{p}={value!r}"
                     for p, labels, value in params)
    labels = [label for _, ls, _ in params if ls is not None for label in ls]
    lines = [f"{name}({head})"]
    specs = StaticSpecs(graph)
    if labels:
        lines.append("  Args:")
        for label, s in zip(labels, graph.placeholders):
            lines.append(f"    {label}: {graph.specs[s][1].name} Tensor, "
                         f"shape={shape_text(specs.shape(s))}")

    def describe(slot):
        if not isinstance(slot, int):
            return repr(getattr(slot, "value", slot))
        dtype = specs.dtype(slot)
        return "Tensor" if dtype is None else \
            f"{dtype.name} Tensor, shape={shape_text(specs.shape(slot))}"
    out = nest.map_structure(describe, graph.outputs)
    lines += ["  Returns:", f"    {out}"]
    return "\n".join(lines)


def shape_text(shape):
    return None if shape is None or shape.rank is None else tuple(shape.as_list())

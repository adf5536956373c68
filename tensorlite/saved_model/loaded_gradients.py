"""A loaded function's custom gradients: TensorFlow's `IdentityN` node whose
`_gradient_op_type` the library's `registered_gradients` names differentiates by that
gradient function, as TensorFlow's loader does (function_deserialization.py).

The gradient function takes one output gradient per IdentityN output (zeros where none
reaches it) and returns the gradients of the IdentityN's trailing inputs (the custom
gradient's arguments, then the variables it read); its leading inputs (the forward's
outputs) get none. An IdentityN whose `_gradient_op_type` has no registered gradient (TensorFlow's
`SaveOptions(experimental_custom_gradients=False)`) runs, and differentiating it is a
LookupError, as in TensorFlow; one without the attribute is differentiated as identities.

Example:
    >>> outputs = identity_n(runner, node, inputs)   # doctest: +SKIP
"""
from tensorlite.framework import dispatch
from tensorlite.framework.registry import Op


def registered(library):
    """op type -> gradient function name, from a FunctionDefLibrary."""
    return {g.registered_op_type: g.gradient_func for g in library.registered_gradients}


def identity_n(runner, node, inputs):
    """The outputs of IdentityN `node` on `inputs` (tensors), recorded with its registered
    gradient where it has one."""
    from tensorlite.ops.array_ops import identity  # noqa: PLC0415
    from tensorlite.ops.common import to_tensor  # noqa: PLC0415
    inputs = [to_tensor(x) for x in inputs]
    op_type = node.attr["_gradient_op_type"].s.decode() \
        if "_gradient_op_type" in node.attr else None
    if op_type is None:
        return [identity(x) for x in inputs]
    grad_name = runner.gradients.get(op_type)
    if grad_name is None:
        return _without_gradient(op_type, node, inputs)
    n = len(inputs)

    def forward(*arrays):  # the inputs, unchanged
        return tuple(arrays)

    def grad(g, ans, *ins):
        bound = runner.gradient_bound.get(grad_name, [])
        n_grads = len(runner.functions[grad_name].signature.input_arg) - len(bound)
        outs = runner.run(grad_name, list(g)[:n_grads] + list(bound))
        return (None,) * (n - len(outs)) + tuple(outs)
    op = Op(f"IdentityN:{op_type}", forward, grad, None, True, False)
    return list(dispatch.execute(op, tuple(inputs), None))


def _without_gradient(op_type, node, inputs):
    """An IdentityN whose custom gradient was not saved: its forward runs, and differentiating
    it is a LookupError, as in TensorFlow."""
    def grad(g, ans, *ins):
        raise LookupError(f"No gradient defined for operation {node.name!r} (op type: "
                          f"IdentityN, custom gradient type {op_type}): the SavedModel was "
                          f"written with tf.saved_model.SaveOptions("
                          f"experimental_custom_gradients=False), so its custom gradient was "
                          f"not saved; save it with experimental_custom_gradients=True")
    op = Op(f"IdentityN:{op_type}", lambda *arrays: tuple(arrays), grad, None, True, False)
    return list(dispatch.execute(op, tuple(inputs), None))


__all__ = ["identity_n", "registered"]

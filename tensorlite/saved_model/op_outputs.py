"""The output argument names of TensorFlow's ops (their public OpDefs,
`tensorflow/core/ops/*.cc`): a FunctionDef names a node's output `node:ARG:index`, so a
SavedModel writer must know them. Each tensorlite op declares them beside its `tf` rule,
`registry.declare(OP, tf=..., tf_outputs=...)` (registry.PROPERTIES documents the forms);
this module only reads those declarations. A TensorFlow op no registered op declares is an
UnimplementedError at save, naming it.

Example:
    >>> output_arg("MatMul")
    'product'
"""
from tensorlite.framework import errors, registry

_CACHE = {}  # number of registered ops -> the table built then (ops only ever get added)


def output_args():
    """TensorFlow op name -> its output argument spec (a name, or a tuple of argument specs
    for ops with several), from every op's `tf_outputs` declaration."""
    n = len(registry.REGISTRY)
    if n in _CACHE:
        return _CACHE[n]
    table = {}
    for op in list(registry.REGISTRY.values()):
        spec = op.tf_outputs
        if isinstance(spec, dict):
            table.update(spec)
        elif spec is not None:
            table[op.tf if isinstance(op.tf, str) else op.name] = spec
    _CACHE.clear()
    _CACHE[n] = table
    return table


def output_arg(op_name):
    """The name of TensorFlow op `op_name`'s output argument (all its outputs share it for
    the list-valued ones: Unpack, Split, IdentityN)."""
    spec = output_args().get(op_name)
    if not isinstance(spec, str):
        raise errors.UnimplementedError(
            None, None, f"SavedModel export: TensorFlow op {op_name} has no single output "
            f"argument name declared; declare it beside the `tf` rule of the tensorlite op "
            f"that writes it: registry.declare(OP, tf_outputs=NAME)")
    return spec


__all__ = ["output_arg", "output_args"]

"""The interpreter's op kernels: builtin name -> Kernel(prepare, invoke, bind).

`prepare(ctx, node)` runs once per `allocate_tensors`: it checks the node's input types,
precomputes what does not change between runs (requantization multipliers, padding) into
`node.data`, and returns the output shapes. `invoke(ctx, node)` computes the outputs into
their arena arrays. An optional `bind(ctx, node)` runs once after the memory plan, when every
tensor's array is fixed: it may return a no-argument function computing the node (arrays,
views and weights bound in advance, so an invoke costs no lookups or allocations), or None
to have `invoke` called instead. `ctx` is the interpreter: `ctx.shape(i)`, `ctx.dtype(i)`, `ctx.quant(i)`
(scales, zero points, axis or None), `ctx.const(i)` and, while invoking, `ctx.array(i)`.

Example:
    >>> @kernel("EXP")
    ... class Exp:
    ...     def prepare(ctx, node): return [ctx.shape(node.inputs[0])]
    ...     def invoke(ctx, node): np.exp(ctx.array(node.inputs[0]), out=ctx.array(node.outputs[0]))
"""
from collections import namedtuple

Kernel = namedtuple("Kernel", ["prepare", "invoke", "bind"], defaults=[None])
KERNELS = {}


def kernel(*names):
    """Registers a class with static `prepare`, `invoke` and optional `bind` as the kernel
    of `names`."""
    def register(cls):
        for name in names:
            KERNELS[name] = Kernel(cls.prepare, cls.invoke, getattr(cls, "bind", None))
        return cls
    return register


def find(builtin):
    """The Kernel of a builtin op, importing the kernel modules on first use."""
    if not _LOADED:
        from tensorlite.lite.kernels import elementwise, nn  # noqa: F401,PLC0415
        _LOADED.append(True)
    return KERNELS.get(builtin)


_LOADED = []

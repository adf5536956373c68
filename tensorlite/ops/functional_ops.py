"""`tf.map_fn`, `tf.scan`, `tf.foldl`, `tf.foldr`: a function applied along the first axis
of one or more tensors (nested structures of them, RaggedTensors too).

Each runs the Python function once per element, eagerly or while a tf.function traces
(the graph then holds one copy of the function's ops per element, for the length traced:
a call of another length traces again, as graph/size_check.py finds the baked length).
Gradients flow through every step.

Example:
    >>> tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3]))
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 4, 9], dtype=int32)>
    >>> tf.scan(lambda a, x: a + x, tf.constant([1, 2, 3]))
    <tf.Tensor: shape=(3,), dtype=int32, numpy=array([1, 3, 6], dtype=int32)>
"""
from tensorlite.framework import dtypes, nest
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.ops import array_ops


def _is_ragged(x):
    return type(x).__name__ == "RaggedTensor"


def _leaves(elems, what):
    flat = [x if isinstance(x, Tensor) or _is_ragged(x) else convert_to_tensor(x)
            for x in nest.flatten(elems)]
    if not flat:
        raise ValueError(f"{what}: elems must hold at least one tensor")
    sizes = {_length(x) for x in flat}
    if len(sizes) != 1:
        raise ValueError(f"{what}: all elems must have the same first dimension, got sizes "
                         f"{sorted(sizes)}")
    return flat, sizes.pop()


def _length(x):
    if _is_ragged(x):
        return int(x.nrows())
    if x.shape.rank == 0:
        raise ValueError("elems must be tensors of rank >= 1 (they are unstacked along their "
                         "first dimension), got a scalar")
    return int(x._value.shape[0])


def _element(elems, flat, i):
    return nest.pack_like(elems, [x[i] for x in flat])


def _stack(rows, spec, what):
    """One output leaf from its per-element values, as `spec` (a TensorSpec or
    RaggedTensorSpec, or None: as the values are) says."""
    ragged_spec = spec == "ragged" or type(spec).__name__ == "RaggedTensorSpec"
    if ragged_spec or any(_is_ragged(r) for r in rows):
        from tensorlite.ragged.ragged_math import stack  # noqa: PLC0415
        return stack(rows, 0)
    rows = [convert_to_tensor(r) for r in rows]
    if spec is not None:
        want = dtypes.as_dtype(spec.dtype if isinstance(spec, TensorSpec) else spec)
        bad = [r.dtype.name for r in rows if r.dtype is not want]
        if bad:
            raise TypeError(f"{what}: fn returned {bad[0]} where fn_output_signature says "
                            f"{want.name}; cast inside fn or change fn_output_signature")
    shapes = {tuple(r._value.shape) for r in rows}
    if len(shapes) > 1:
        raise ValueError(f"{what}: fn's outputs differ in shape {sorted(shapes)}; give "
                         f"fn_output_signature=tf.RaggedTensorSpec(...) for ragged results")
    return array_ops.stack(rows, 0)


def _empty(spec, elems_flat):
    """The result for zero elements: empty along the first axis."""
    if isinstance(spec, TensorSpec) and spec.shape.rank is not None:
        return array_ops.zeros([0] + [d or 0 for d in spec.shape.as_list()], spec.dtype)
    if isinstance(spec, (dtypes.DType, str)):
        x = elems_flat[0]
        return array_ops.zeros([0] + list(x._value.shape[1:]), spec)
    x = elems_flat[0]
    return array_ops.zeros([0] + list(x._value.shape[1:]), x.dtype)


def map_fn(fn, elems, dtype=None, parallel_iterations=None, back_prop=True,
           swap_memory=False, infer_shape=True, name=None, fn_output_signature=None):
    """`tf.map_fn`: stacks fn(elems[i]) for each i. `fn_output_signature` (or the older
    `dtype`) gives the output's dtype and kind: a tf.RaggedTensorSpec for ragged results,
    whose rows may differ in length. Without it the results are of elems' kinds (ragged
    elems give ragged results)."""
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat, n = _leaves(elems, "map_fn")
    if n == 0:
        if signature is None:
            return nest.pack_like(elems, [_empty(None, [x]) for x in flat])
        return nest.map_structure(lambda s: _empty(s, flat), signature)
    outs = [fn(_element(elems, flat, i)) for i in range(n)]
    first = outs[0]
    if signature is not None:
        specs = nest.flatten(signature)
    elif len(nest.flatten(first)) == len(flat):  # as elems' (TF's default): ragged stays
        specs = ["ragged" if _is_ragged(x) else None for x in flat]
    else:
        specs = [None] * len(nest.flatten(first))
    per_leaf = list(zip(*[nest.flatten(o) for o in outs]))
    if len(specs) != len(per_leaf):
        raise ValueError(f"map_fn: fn_output_signature has {len(specs)} entries but fn "
                         f"returns {len(per_leaf)} values")
    stacked = [_stack(list(rows), s, "map_fn") for rows, s in zip(per_leaf, specs)]
    return nest.pack_like(first, stacked)


def _scan_steps(fn, elems, initializer, reverse, what):
    flat, n = _leaves(elems, what)
    order = list(range(n))[::-1] if reverse else list(range(n))
    if initializer is None:
        if n == 0:
            raise ValueError(f"{what}: elems is empty and no initializer was given")
        acc, order = _element(elems, flat, order[0]), order[1:]
        states = [acc]
    else:
        acc, states = initializer, []
    for i in order:
        acc = fn(acc, _element(elems, flat, i))
        states.append(acc)
    return acc, states


def scan(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
         swap_memory=False, infer_shape=True, reverse=False, name=None):
    """`tf.scan`: the running results of a = fn(a, elems[i]), stacked (the first element
    is the start, and the first result, when no initializer is given)."""
    _, states = _scan_steps(fn, elems, initializer, reverse, "scan")
    if not states:
        return nest.map_structure(lambda a: array_ops.zeros(
            [0] + list(convert_to_tensor(a)._value.shape), convert_to_tensor(a).dtype),
            initializer)
    if reverse:
        states = states[::-1]
    per_leaf = list(zip(*[nest.flatten(s) for s in states]))
    return nest.pack_like(states[0], [_stack(list(r), None, "scan") for r in per_leaf])


def foldl(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """`tf.foldl`: a = fn(a, x) over elems from the first; the last a."""
    return _scan_steps(fn, elems, initializer, False, "foldl")[0]


def foldr(fn, elems, initializer=None, parallel_iterations=10, back_prop=True,
          swap_memory=False, name=None):
    """`tf.foldr`: a = fn(a, x) over elems from the last; the last a."""
    return _scan_steps(fn, elems, initializer, True, "foldr")[0]


__all__ = ["map_fn", "scan", "foldl", "foldr"]

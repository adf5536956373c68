"""Nested structures (lists, tuples, namedtuples, dicts) as TensorFlow's `tf.nest` sees
them: flatten to leaves in a fixed order, and rebuild the same structure.

Example:
    >>> flatten({"b": 1, "a": [2, 3]})
    [2, 3, 1]
"""


def _is_namedtuple(x):
    return isinstance(x, tuple) and hasattr(x, "_fields")


def is_nested(x):
    return isinstance(x, (list, tuple, dict))


def flatten(x, expand_composites=False):
    """Leaves in order; dict entries by sorted key. With `expand_composites`, a composite
    tensor (one with `_tl_components()`, e.g. tf.RaggedTensor) is flattened into its
    component tensors, as TensorFlow's `expand_composites=True`."""
    out = []
    _flatten(x, out, expand_composites)
    return out


def _flatten(x, out, expand=False):
    if isinstance(x, dict):
        for k in sorted(x, key=_sort_key):
            _flatten(x[k], out, expand)
    elif isinstance(x, (list, tuple)):
        for v in x:
            _flatten(v, out, expand)
    elif expand and hasattr(x, "_tl_components"):
        for v in x._tl_components():
            _flatten(v, out, expand)
    else:
        out.append(x)


def _sort_key(k):
    return (type(k).__name__, k) if not isinstance(k, (int, float)) else ("", k)


def pack_like(structure, flat, expand_composites=False):
    """Rebuilds `structure` with the leaves of `flat`, in `flatten` order."""
    it = iter(flat)
    out = _pack(structure, it, expand_composites)
    rest = list(it)
    if rest:
        raise ValueError(f"pack_like: {len(rest)} leaves left over for structure {structure!r}")
    return out


def _pack(x, it, expand=False):
    if isinstance(x, dict):
        vals = {k: _pack(x[k], it, expand) for k in sorted(x, key=_sort_key)}
        return type(x)((k, vals[k]) for k in x) if type(x) is not dict else \
            {k: vals[k] for k in x}
    if _is_namedtuple(x):
        return type(x)(*[_pack(v, it, expand) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_pack(v, it, expand) for v in x)
    if expand and hasattr(x, "_tl_components"):
        return x._tl_rebuild([_pack(v, it, expand) for v in x._tl_components()])
    return next(it)


def map_structure(fn, *structures, expand_composites=False):
    """Applies `fn` leafwise across structures of the same shape."""
    flats = [flatten(s, expand_composites) for s in structures]
    if len({len(f) for f in flats}) > 1:
        raise ValueError("map_structure: the structures have different numbers of leaves")
    return pack_like(structures[0], [fn(*leaves) for leaves in zip(*flats)],
                     expand_composites)

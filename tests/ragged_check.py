"""The one shared check for ragged ops, as tests/op_check.py is for dense ones.

`check_ragged(tf_fn, ref_fn, *rows)`: the inputs are nested Python lists; tf_fn gets them as
`tf.ragged.constant` (float64 numbers), ref_fn gets the lists themselves and computes the
answer with plain Python (list comprehensions: the reference is a list-of-lists
implementation, independent of tensorlite). The result (RaggedTensor, Tensor or list of them)
must equal the reference, NaNs included, and every registry op the call ran must have a shape
rule that predicts what it produced. With `grad=True` the function is also differentiated
with respect to the flat values of every input by central finite differences
(tf.test.check_grads), first order.
"""
import math

import numpy as np

import tensorlite as tf
from tests.op_check import check_shape_rules


def to_ragged(rows, dtype="float64"):
    if isinstance(rows, (list, tuple)) and rows and isinstance(rows[0], str):
        return tf.constant(rows)
    return tf.ragged.constant(rows, dtype=dtype)


def as_lists(x):
    """A result as nested Python lists (bytes for strings)."""
    if isinstance(x, tf.RaggedTensor):
        return x.to_list()
    if isinstance(x, tf.Tensor):
        return x.numpy().tolist()
    if isinstance(x, (list, tuple)):
        return [as_lists(v) for v in x]
    return x


def assert_same(got, want, path="result", tol=1e-9):
    if isinstance(want, (list, tuple)):
        assert isinstance(got, (list, tuple)), f"{path}: got {got!r}, want a list {want!r}"
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}: {got} vs {want}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]", tol)
    elif isinstance(want, float) and math.isnan(want):
        assert isinstance(got, float) and math.isnan(got), f"{path}: got {got!r}, want nan"
    elif isinstance(want, float) and math.isinf(want):
        assert got == want, f"{path}: got {got!r}, want {want!r}"
    elif isinstance(want, (int, float)) and not isinstance(want, bool):
        assert abs(got - want) <= tol * max(1.0, abs(want)), f"{path}: got {got!r}, want {want!r}"
    else:
        assert got == want, f"{path}: got {got!r}, want {want!r}"


def check_ragged(tf_fn, ref_fn, *rows, grad=False, dtype="float64"):
    """The full check; see the module docstring."""
    inputs = [to_ragged(r, dtype) for r in rows]
    got = check_shape_rules(lambda *xs: tf_fn(*xs), inputs)
    assert_same(as_lists(got), ref_fn(*rows))
    if grad:
        check_ragged_grads(tf_fn, inputs)
    return got


def check_ragged_grads(tf_fn, inputs):
    """Gradients of tf_fn with respect to each input's flat values, by finite differences."""
    splits = [rt.nested_row_splits for rt in inputs]

    def f(*flats):
        rts = [tf.RaggedTensor.from_nested_row_splits(v, s) for v, s in zip(flats, splits)]
        out = tf_fn(*rts)
        return out.flat_values if isinstance(out, tf.RaggedTensor) else out
    tf.test.check_grads(f, [np.asarray(rt.flat_values.numpy(), np.float64) for rt in inputs],
                        order=1)


# -- list-of-lists references ---------------------------------------------------------------------
def ref_rows(rows, fn):
    return [fn(r) for r in rows]


def ref_mean(row):
    return sum(row) / len(row) if row else float("nan")


def ref_map(rows, fn):
    """fn applied to every scalar of a nested list."""
    if isinstance(rows, list):
        return [ref_map(r, fn) for r in rows]
    return fn(rows)


def ref_to_dense(rows, default=0, width=None):
    width = max((len(r) for r in rows), default=0) if width is None else width
    return [list(r[:width]) + [default] * (width - len(r[:width])) for r in rows]


def ref_reduce(rows, axis, fn, depth):
    """A nested list (`depth` levels of lists) reduced over `axis` with `fn` (a function of
    the list of contributing numbers), as TensorFlow's ragged reductions: over axis 0 the
    i-th output element combines the i-th elements of every row that has one, row by row
    for nested rows (so the output row is as long as the longest)."""
    if axis > 0:
        return [ref_reduce(r, axis - 1, fn, depth - 1) for r in rows]
    return _ref_combine(rows, fn, depth - 1)


def _ref_combine(items, fn, depth):
    if depth == 0:
        return fn(list(items))
    width = max((len(x) for x in items), default=0)
    return [_ref_combine([x[i] for x in items if len(x) > i], fn, depth - 1)
            for i in range(width)]


def ref_merge_dims(rows, outer, inner):
    """Nested lists with levels `outer..inner` flattened into one."""
    if outer > 0:
        return [ref_merge_dims(r, outer - 1, inner - 1) for r in rows]
    if inner == 0:
        return rows
    return ref_merge_dims([x for r in rows for x in r], 0, inner - 1)

"""`tf.math.unsorted_segment_{sum,max,min,prod,mean,sqrt_n}` and `tf.math.segment_{sum,
mean,max,min,prod}`: rows of `data` combined by a segment id per row (ids of rank k select
by data's first k dimensions).

An unsorted op takes `num_segments`; a negative id drops its row; an empty segment is 0 for
sums (1 for products) and the dtype's lowest (highest) value for maxima (minima), as in
TensorFlow. The sorted ops need non-decreasing ids, make ids[-1] + 1 segments, and give 0
for an empty segment whatever the reduction.

Gradients: a sum's rows get their segment's gradient; a maximum's (minimum's) shared among
the rows equal to it; a product's, the product of the segment's other rows (TensorFlow's
rule with zeros).

Example:
    >>> tf.math.unsorted_segment_sum([[1, 2], [3, 4], [5, 6]], [1, 0, 1], num_segments=2)
    <tf.Tensor: shape=(2, 2), dtype=int32, numpy=array([[3, 4], [6, 8]], dtype=int32)>
"""
import numpy as np

from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, register
from tensorlite.framework.tensor import GRAPH_TENSOR_INFO, Tensor, _graph_tensor_info, wrap
from tensorlite.ops.gather_ops import GATHER, _index_tensor
from tensorlite.ops.common import to_tensor

_IDENTITY = {"sum": 0, "prod": 1}
_UFUNC = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}
_TF_NAMES = {"sum": "UnsortedSegmentSum", "prod": "UnsortedSegmentProd",
             "max": "UnsortedSegmentMax", "min": "UnsortedSegmentMin"}


def _rows(data, ids):
    """data as [rows, rest] (rows: one per id), and the ids flat."""
    k = ids.ndim
    rows = int(np.prod(data.shape[:k], dtype=np.int64))
    return data.reshape((rows, int(np.prod(data.shape[k:], dtype=np.int64)))), ids.reshape(-1)


def _start(kind, dtype, shape):
    if kind in _IDENTITY:
        return np.full(shape, _IDENTITY[kind], dtype)
    if np.issubdtype(dtype, np.floating):
        info = np.finfo(dtype)  # TensorFlow's numeric_limits<T>::lowest() / max()
        return np.full(shape, info.min if kind == "max" else info.max, dtype)
    info = np.iinfo(dtype)
    return np.full(shape, info.min if kind == "max" else info.max, dtype)


def _segment_fwd(kind):
    def forward(data, segment_ids, num_segments):
        d2, ids = _rows(data, segment_ids)
        out = _start(kind, data.dtype, (num_segments, d2.shape[1]))
        keep = ids >= 0
        _UFUNC[kind].at(out, ids[keep], d2[keep])
        return out.reshape((num_segments,) + data.shape[segment_ids.ndim:])
    return forward


def _gathered(g, ids):
    """g's row for each data row (zero for dropped rows), through the differentiable gather."""
    clipped = wrap(np.maximum(ids._value, 0))
    rows = execute(GATHER, (g, clipped), {"axis": 0, "batch_dims": 0, "rank": g._value.ndim})
    dropped = ids._value < 0
    if not dropped.any():
        return rows
    from tensorlite.ops.math_ops import multiply  # noqa: PLC0415 - math_ops imports us
    keep = (~dropped).reshape(dropped.shape + (1,) * (rows._value.ndim - dropped.ndim))
    return multiply(rows, wrap(keep.astype(rows._value.dtype)))


def _sum_grad(g, ans, data, segment_ids, num_segments):
    return _gathered(g, segment_ids), None


def _extreme_grad(g, ans, data, segment_ids, num_segments):
    """Shared evenly among the rows equal to their segment's result (TensorFlow's rule)."""
    from tensorlite.ops.math_ops import multiply  # noqa: PLC0415
    x, ids = data._value, segment_ids._value
    hit = (x == ans._value[np.maximum(ids, 0)]) & (ids >= 0).reshape(
        ids.shape + (1,) * (x.ndim - ids.ndim))
    hit = hit.astype(g._value.dtype)
    counts = _segment_fwd("sum")(hit, ids, num_segments)
    share = hit / np.maximum(counts[np.maximum(ids, 0)], 1)
    return multiply(_gathered(g, segment_ids), wrap(share.astype(g._value.dtype))), None


def _prod_grad(g, ans, data, segment_ids, num_segments):
    """The product of the segment's other rows: ans / x where the segment has no zero; with
    one zero, the zero's row gets the product of the others; with more, nothing (as
    TensorFlow's rule). Built from ops, so it differentiates again."""
    from tensorlite.ops.math_ops import divide, multiply, where  # noqa: PLC0415
    x, ids = data._value, segment_ids._value
    at = wrap(np.maximum(ids, 0))
    zero = x == 0
    zeros = _segment_fwd("sum")(zero.astype(np.int64), ids, num_segments)[np.maximum(ids, 0)]
    gather = {"axis": 0, "batch_dims": 0, "rank": ans._value.ndim}
    safe = where(wrap(zero), wrap(np.ones_like(x)), data)
    nonzero_prod = execute(SEGMENT_OPS["prod"], (safe, segment_ids),
                           {"num_segments": num_segments})
    full = divide(execute(GATHER, (ans, at), gather), safe)
    lone = execute(GATHER, (nonzero_prod, at), gather)
    others = where(wrap(zeros == 0), full,
                   where(wrap(zero & (zeros == 1)), lone, wrap(np.zeros_like(x))))
    return multiply(_gathered(g, segment_ids), others), None


def _shape(data, ids, num_segments):
    return Spec((num_segments,) + tuple(data.shape[len(ids.shape):]), data.dtype)


def _tf_rule(kind):
    def rule(attrs, in_specs):
        return _TF_NAMES[kind], {"Tindices": in_specs[1].dtype,
                                 "Tnumsegments": in_specs[1].dtype}, \
            [0, 1, np.asarray(attrs["num_segments"], np.int32)]
    return rule


def _import_rule(kind):
    """A TensorFlow SavedModel's node (data, segment_ids, num_segments) as ours."""
    return lambda ins, attrs: _segment(kind, ins[0], ins[1], ins[2], _TF_NAMES[kind])


# A TensorFlow graph's num_segments is a tensor: traced again (a loaded function inside a
# tf.function), a computed one makes the counted form below, so no import is opaque.
_GRADS = {"sum": _sum_grad, "prod": _prod_grad, "max": _extreme_grad, "min": _extreme_grad}
SEGMENT_OPS = {kind: register(_TF_NAMES[kind], _segment_fwd(kind), grad=_GRADS[kind],
                              shape=_shape, tf=_tf_rule(kind), tf_outputs="output",
                              tf_import=_import_rule(kind),
                              unsupported="onnx tflite batch")
               for kind in _TF_NAMES}


def _counted_fwd(kind):
    forward = _segment_fwd(kind)
    return lambda data, segment_ids, num_segments: forward(data, segment_ids, int(num_segments))


def _counted_grad(kind):
    def grad(g, ans, data, segment_ids, num_segments):
        return _GRADS[kind](g, ans, data, segment_ids, int(num_segments._value))[0], None, None
    return grad


def _counted_tf(kind):
    return lambda attrs, in_specs: (_TF_NAMES[kind], {"Tindices": in_specs[1].dtype,
                                                      "Tnumsegments": in_specs[2].dtype},
                                    [0, 1, 2])


# num_segments as a tensor input, where it is computed inside a traced function (a batch's
# row count): an attribute would freeze its traced value into the graph. TensorFlow's ops
# take it as an input, so both forms export to the same op; TF's graphs import as the
# attribute form above (its rule computes on the loaded values).
COUNTED_SEGMENT_OPS = {kind: register(
    _TF_NAMES[kind] + "Counted", _counted_fwd(kind), grad=_counted_grad(kind),
    shape=lambda data, ids, n: Spec((None,) + tuple(data.shape[len(ids.shape):]), data.dtype),
    tf=_counted_tf(kind), tf_outputs={_TF_NAMES[kind]: "output"},
    unsupported="onnx tflite batch tf_import") for kind in _TF_NAMES}


def _is_graph_tensor(t):
    return bool(GRAPH_TENSOR_INFO) and isinstance(t, Tensor) and \
        _graph_tensor_info(t) is not None


def _segment(kind, data, segment_ids, num_segments, op_name):
    from tensorlite.ops.common import tensor_args  # noqa: PLC0415
    (x,) = tensor_args(op_name, (data,), names=("data",))
    ids = _index_tensor(op_name, segment_ids, "segment_ids")
    n = int(np.asarray(getattr(num_segments, "_value", num_segments)))
    if n < 0:
        raise invalid(op_name, f"{op_name}: num_segments must be >= 0, got {n}")
    if ids._value.shape != x._value.shape[:ids._value.ndim]:
        raise invalid(op_name, f"{op_name}: segment_ids shape {list(ids._value.shape)} must "
                      f"be a prefix of data's shape {list(x._value.shape)}")
    if ids._value.size and ids._value.max(initial=-1) >= n:
        raise invalid(op_name, f"{op_name}: segment id {int(ids._value.max())} is out of "
                      f"range [0, {n}) (num_segments={n})")
    if _is_graph_tensor(num_segments):
        return execute(COUNTED_SEGMENT_OPS[kind], (x, ids, num_segments), {})
    return execute(SEGMENT_OPS[kind], (x, ids), {"num_segments": n})


def unsorted_segment_sum(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_sum`."""
    return _segment("sum", data, segment_ids, num_segments, "UnsortedSegmentSum")


def unsorted_segment_prod(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_prod` (1 for an empty segment)."""
    return _segment("prod", data, segment_ids, num_segments, "UnsortedSegmentProd")


def unsorted_segment_max(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_max` (the dtype's lowest value for an empty segment)."""
    return _segment("max", data, segment_ids, num_segments, "UnsortedSegmentMax")


def unsorted_segment_min(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_min` (the dtype's highest value for an empty segment)."""
    return _segment("min", data, segment_ids, num_segments, "UnsortedSegmentMin")


def _counts(data, segment_ids, num_segments, op_name):
    """Rows per segment, shaped to divide the segment sums."""
    x = to_tensor(data)
    ids = _index_tensor(op_name, segment_ids, "segment_ids")
    ones = np.ones(ids._value.shape + (1,) * (x._value.ndim - ids._value.ndim),
                   x._value.dtype)
    return _segment("sum", wrap(ones), ids, num_segments, op_name)


def unsorted_segment_mean(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_mean` (0 for an empty segment)."""
    from tensorlite.ops.math_ops import divide, maximum  # noqa: PLC0415
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    count = _counts(data, segment_ids, num_segments, "UnsortedSegmentMean")
    return divide(total, maximum(count, 1))


def unsorted_segment_sqrt_n(data, segment_ids, num_segments, name=None):
    """`tf.math.unsorted_segment_sqrt_n`: the sum over the square root of the row count."""
    from tensorlite.ops.math_ops import divide, maximum, sqrt  # noqa: PLC0415
    total = unsorted_segment_sum(data, segment_ids, num_segments)
    count = _counts(data, segment_ids, num_segments, "UnsortedSegmentSqrtN")
    return divide(total, sqrt(maximum(count, 1)))


def _sorted(kind, data, segment_ids, op_name):
    ids = _index_tensor(op_name, segment_ids, "segment_ids")
    v = ids._value.reshape(-1)
    if ids._value.ndim != 1:
        raise invalid(op_name, f"{op_name}: segment_ids must be a vector, got shape "
                      f"{list(ids._value.shape)}")
    if v.size and (v[0] < 0 or np.any(np.diff(v) < 0)):
        raise invalid(op_name, f"{op_name}: segment_ids must be sorted and non-negative; use "
                      f"tf.math.unsorted_segment_{kind} for others")
    n = int(v[-1]) + 1 if v.size else 0
    if kind == "mean":
        return unsorted_segment_mean(data, ids, n)
    out = _segment(kind, data, ids, n, op_name)
    present = np.zeros(n, bool)
    present[v] = True
    if kind in ("max", "min") and not present.all():  # an empty sorted segment is 0
        from tensorlite.ops.array_ops import zeros_like  # noqa: PLC0415
        from tensorlite.ops.math_ops import where  # noqa: PLC0415
        mask = np.broadcast_to(present.reshape((n,) + (1,) * (out._value.ndim - 1)),
                               out._value.shape)
        out = where(wrap(mask), out, zeros_like(out))
    return out


def segment_sum(data, segment_ids, name=None):
    """`tf.math.segment_sum` (sorted ids)."""
    return _sorted("sum", data, segment_ids, "SegmentSum")


def segment_prod(data, segment_ids, name=None):
    """`tf.math.segment_prod` (sorted ids)."""
    return _sorted("prod", data, segment_ids, "SegmentProd")


def segment_max(data, segment_ids, name=None):
    """`tf.math.segment_max` (sorted ids; 0 for an empty segment)."""
    return _sorted("max", data, segment_ids, "SegmentMax")


def segment_min(data, segment_ids, name=None):
    """`tf.math.segment_min` (sorted ids; 0 for an empty segment)."""
    return _sorted("min", data, segment_ids, "SegmentMin")


def segment_mean(data, segment_ids, name=None):
    """`tf.math.segment_mean` (sorted ids)."""
    return _sorted("mean", data, segment_ids, "SegmentMean")


__all__ = ["unsorted_segment_sum", "unsorted_segment_prod", "unsorted_segment_max",
           "unsorted_segment_min", "unsorted_segment_mean", "unsorted_segment_sqrt_n",
           "segment_sum", "segment_prod", "segment_max", "segment_min", "segment_mean"]

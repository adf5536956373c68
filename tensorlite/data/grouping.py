"""Grouping and resampling transformations of the tf.data guide: `group_by_window`,
`bucket_by_sequence_length` and `rejection_resample`.

`group_by_window(key_func, reduce_func, window_size)` keeps one window of elements per key;
a full window (or, at the end of the input, each partial one in the order its key first
appeared) is handed to `reduce_func(key, window_dataset)`, whose elements are the output.
`bucket_by_sequence_length` is group_by_window keyed by the bucket an element's length
falls in, each bucket batched (padded) to its own batch size, as TensorFlow builds it.
`rejection_resample` accepts each element with the probability that moves the class
distribution from the initial one (given or estimated as it goes) to the target.

Example:
    >>> ds = tf.data.Dataset.range(10).group_by_window(
    ...     key_func=lambda x: x % 2, reduce_func=lambda k, w: w.batch(5), window_size=5)
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2, 4, 6, 8], [1, 3, 5, 7, 9]]
"""
import numpy as np

from tensorlite.data import structure
from tensorlite.data.dataset import UNKNOWN, DatasetV2
from tensorlite.data.iterator import RawIterator
from tensorlite.data.transforms import PassThroughIterator, UnaryDataset, inner_context
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.tensor import Tensor, wrap


class ListDataset(DatasetV2):
    """The elements of one window, as the dataset `reduce_func` receives."""

    _name = "Window"

    def __init__(self, elements, spec):
        self._elements, self._spec_value = list(elements), spec

    def _compute_spec(self):
        return self._spec_value

    def _cardinality(self):
        return len(self._elements)

    def _make_iterator(self, ctx):
        return _ListIterator(self._elements)


class _ListIterator(RawIterator):
    _profiled = False  # no span of its own yet (tracing.hook_next)
    def __init__(self, elements):
        self._elements, self._at = elements, 0

    def next(self):
        if self._at >= len(self._elements):
            raise StopIteration
        self._at += 1
        return self._elements[self._at - 1]

    def save(self):
        return self._at

    def restore(self, state):
        self._at = state


def _scalar_int(value, what):
    v = np.asarray(value._value if isinstance(value, Tensor) else value)
    if v.ndim != 0 or v.dtype.kind not in "iu":
        raise errors.InvalidArgumentError(None, None, f"{what} must return an integer scalar "
                                                      f"(int64), got {v.dtype} of shape "
                                                      f"{list(v.shape)}")
    return int(v)


class GroupByWindowDataset(UnaryDataset):
    _name = "GroupByWindow"

    def __init__(self, input_dataset, key_func, reduce_func, window_size=None,
                 window_size_func=None):
        super().__init__(input_dataset)
        if (window_size is None) == (window_size_func is None):
            raise ValueError("Either the `window_size` argument or the `window_size_func` "
                             "argument must be specified.")
        if window_size is not None:
            size = _scalar_int(window_size, "window_size")
            if size <= 0:
                raise errors.InvalidArgumentError(None, None, "group_by_window: window_size "
                                                              "must be positive")
            window_size_func = lambda key: size  # noqa: E731
        self._key_func, self._reduce_func = key_func, reduce_func
        self._size_func = window_size_func

    def _compute_spec(self):
        element_spec = self._input.element_spec
        probe = ListDataset([], element_spec)
        return self._reduce_func(wrap(np.int64(0)), probe).element_spec

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _GroupIterator(self, self._input._make_iterator(ctx), ctx)


class _GroupIterator(PassThroughIterator):
    _profiled = False  # no span of its own yet (tracing.hook_next)
    _scoped = None  # the reduce_func datasets' context (tracing.inner_context), made once

    def __init__(self, ds, inner, ctx):
        super().__init__(inner)
        self._ds, self._ctx = ds, ctx
        self._windows = {}  # key -> elements, in the order keys appeared
        self._sizes = {}
        self._out = None
        self._done = False

    def _emit(self, key):
        elements = self._windows.pop(key)
        spec = self._ds._input.element_spec
        result = self._ds._reduce_func(wrap(np.int64(key)), ListDataset(elements, spec))
        if not isinstance(result, DatasetV2):
            raise TypeError(f"group_by_window: reduce_func must return a Dataset, got "
                            f"{type(result).__name__}")
        self._out = result._make_iterator(inner_context(self))

    def next(self):
        while True:
            if self._out is not None:
                try:
                    return self._out.next()
                except StopIteration:
                    self._out.close()
                    self._out = None
            if self._done:
                if not self._windows:
                    raise StopIteration
                self._emit(next(iter(self._windows)))
                continue
            try:
                element = self._in.next()
            except StopIteration:
                self._done = True
                continue
            key = _scalar_int(structure.call_with_element(self._ds._key_func, element),
                              "group_by_window: key_func")
            if key not in self._sizes:
                self._sizes[key] = _scalar_int(self._ds._size_func(wrap(np.int64(key))),
                                               "group_by_window: window_size_func")
            window = self._windows.setdefault(key, [])
            window.append(element)
            if len(window) >= self._sizes[key]:
                self._emit(key)

    def save(self):
        raise errors.UnimplementedError(None, None, "group_by_window cannot be checkpointed "
                                                    "yet: its open windows are not saved")

    def close(self):
        if self._out is not None:
            self._out.close()
        self._in.close()


def _group_by_window(self, key_func, reduce_func, window_size=None, window_size_func=None,
                     name=None):
    """`Dataset.group_by_window` (see the module doc)."""
    return GroupByWindowDataset(self, key_func, reduce_func, window_size, window_size_func)


def _bucket_by_sequence_length(self, element_length_func, bucket_boundaries,
                               bucket_batch_sizes, padded_shapes=None, padding_values=None,
                               pad_to_bucket_boundary=False, no_padding=False,
                               drop_remainder=False, name=None):
    """`Dataset.bucket_by_sequence_length`: elements batched with others of similar length,
    bucket i holding lengths in [boundaries[i-1], boundaries[i])."""
    boundaries = [int(b) for b in bucket_boundaries]
    sizes = [int(b) for b in bucket_batch_sizes]
    if len(sizes) != len(boundaries) + 1:
        raise ValueError(f"len(bucket_batch_sizes) must equal len(bucket_boundaries) + 1 but "
                         f"len(bucket_batch_sizes)={len(sizes)} and "
                         f"len(bucket_boundaries)={len(boundaries)}")
    if any(b <= a for a, b in zip(boundaries, boundaries[1:])):
        raise ValueError("bucket_boundaries must be sorted and strictly increasing")

    def bucket_of(*element):
        length = _scalar_int(element_length_func(*element), "element_length_func")
        return np.int64(int(np.searchsorted(boundaries, length, side="right")))

    def batch(bucket, window):
        size = sizes[int(bucket)]
        if no_padding:
            return window.batch(size, drop_remainder=drop_remainder)
        shapes = padded_shapes
        if pad_to_bucket_boundary:
            if int(bucket) == len(boundaries):
                raise errors.InvalidArgumentError(
                    None, None, "bucket_by_sequence_length: with pad_to_bucket_boundary=True "
                                "every element must be shorter than the last boundary "
                                f"({boundaries[-1]})")
            # the sequence (first) dimension to the bucket's boundary - 1, the others to the
            # batch's longest (a spec inferred from one element may state a size there)
            shapes = nest.map_structure(
                lambda s: [boundaries[int(bucket)] - 1] + [None] * (s.shape.rank - 1)
                if s.shape.rank else [], window.element_spec)
        return window.padded_batch(size, padded_shapes=shapes, padding_values=padding_values,
                                   drop_remainder=drop_remainder)
    return GroupByWindowDataset(self, bucket_of, batch,
                                window_size_func=lambda bucket: sizes[int(bucket)])


class RejectionResampleDataset(UnaryDataset):
    _name = "RejectionResample"

    def __init__(self, input_dataset, class_func, target_dist, initial_dist=None, seed=None):
        super().__init__(input_dataset)
        self._class_func = class_func
        self._target = self._dist(target_dist, "target_dist")
        self._initial = None if initial_dist is None else self._dist(initial_dist,
                                                                      "initial_dist")
        if self._initial is not None and len(self._initial) != len(self._target):
            raise ValueError("initial_dist and target_dist must have the same length")
        self._seed = seed

    @staticmethod
    def _dist(value, what):
        d = np.asarray(value._value if isinstance(value, Tensor) else value, np.float64)
        if d.ndim != 1 or not len(d) or (d < 0).any() or not np.isclose(d.sum(), 1.0):
            raise errors.InvalidArgumentError(None, None, f"rejection_resample: {what} must "
                                                          f"be a probability vector, got {d}")
        return d

    def _compute_spec(self):
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        return (TensorSpec([], dtypes.int32), self._input.element_spec)

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _ResampleIterator(self, self._input._make_iterator(ctx))


class _ResampleIterator(PassThroughIterator):
    _profiled = False  # no span of its own yet (tracing.hook_next)
    def __init__(self, ds, inner):
        super().__init__(inner)
        self._ds = ds
        self._rng = np.random.default_rng(ds._seed)
        self._counts = np.zeros(len(ds._target))

    def next(self):
        ds = self._ds
        while True:
            element = self._in.next()
            c = _scalar_int(structure.call_with_element(ds._class_func, element),
                            "rejection_resample: class_func")
            if not 0 <= c < len(ds._target):
                raise errors.InvalidArgumentError(None, None, f"rejection_resample: class "
                                                              f"{c} is outside the "
                                                              f"{len(ds._target)} classes")
            self._counts[c] += 1
            initial = ds._initial if ds._initial is not None else \
                self._counts / self._counts.sum()  # estimated as the data goes, as TF does
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(initial > 0, ds._target / initial, 0.0)
            accept = ratio[c] / ratio.max() if ratio.max() > 0 else 0.0
            if self._rng.random() < accept:
                return (wrap(np.int32(c)), element)


def _rejection_resample(self, class_func, target_dist, initial_dist=None, seed=None,
                        name=None):
    """`Dataset.rejection_resample`: (class, element) pairs resampled toward target_dist."""
    return RejectionResampleDataset(self, class_func, target_dist, initial_dist, seed)


DatasetV2.group_by_window = _group_by_window
DatasetV2.bucket_by_sequence_length = _bucket_by_sequence_length
DatasetV2.rejection_resample = _rejection_resample

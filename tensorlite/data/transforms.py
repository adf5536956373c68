"""Element-wise and sequence transformations: map, filter, flat_map, repeat, take, skip,
shard, enumerate, scan, take_while, unique, ignore_errors, window. Batching, shuffling,
interleave, prefetch, cache and snapshot have their own modules."""
import time
import warnings

import numpy as np

from tensorlite.data import structure
from tensorlite.data.dataset import AUTOTUNE, INFINITE, UNKNOWN, DatasetV2, parallel_calls
from tensorlite.data.functions import StageFunction, check_predicate, traced_spec
from tensorlite.data.iterator import RawIterator
from tensorlite.data.seeding import element_seed
from tensorlite.data.tracing import inner_context
from tensorlite.framework import dtypes, errors, nest
from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_spec import TensorSpec


class UnaryDataset(DatasetV2):
    """A transformation of one input dataset."""

    def __init__(self, input_dataset):
        if not isinstance(input_dataset, DatasetV2):
            raise TypeError(f"expected a Dataset, got {type(input_dataset).__name__}")
        self._inputs = (input_dataset,)

    @property
    def _input(self):
        return self._inputs[0]

    def _compute_spec(self):
        return self._input.element_spec

    def _cardinality(self):
        return self._input._cardinality()


class PassThroughIterator(RawIterator):
    """Base for iterators that wrap one input iterator. A subclass whose position is one
    attribute (an element counter) names it in `_position`: it is saved beside the input's
    state and restored with it."""

    _position = None

    def __init__(self, inner):
        self._in = inner

    def save(self):
        inner = self._in.save()
        return inner if self._position is None else (getattr(self, self._position), inner)

    def restore(self, state):
        if self._position is None:
            self._in.restore(state)
            return
        value, inner = state
        setattr(self, self._position, value)
        self._in.restore(inner)

    def close(self):
        self._in.close()


class FunctionDataset(UnaryDataset):
    """A transformation of one input by one user function `_fn` (map, filter, flat_map,
    take_while): the stage's label names it ("Filter(is_even)")."""

    def __init__(self, input_dataset, fn):
        super().__init__(input_dataset)
        self._fn = fn

    def _kind(self):
        return self._name

    def _label(self):
        return f"{self._kind()}({fn_label(self._fn)})"


# -- map --------------------------------------------------------------------------------------
class MapDataset(FunctionDataset):
    _name = "Map"

    def __init__(self, input_dataset, map_func, num_parallel_calls=None, deterministic=None,
                 batch_safe=False, name=None):
        super().__init__(input_dataset, map_func)
        self._parallel = parallel_calls(num_parallel_calls, "map")
        self._deterministic = deterministic
        self._batch_safe = batch_safe  # declared vectorisable: map_vectorization may batch it

    def _compute_spec(self):
        return traced_spec(self._fn, self._input.element_spec,
                           structure.spec_of(self._first_element()))

    def _describe(self):
        par = "" if self._parallel is None else \
            f", num_parallel_calls={'AUTOTUNE' if self._parallel == AUTOTUNE else self._parallel}"
        return f"{getattr(self._fn, '__name__', 'fn')}{par}"

    def _kind(self):
        return "Map" if self._parallel is None else "ParallelMap"

    def _make_iterator(self, ctx):
        fn = StageFunction(self._fn, "Map")
        stats = ctx.stats.stage(self._key, f"Map({fn.name})")
        from tensorlite.data import debug_mode  # noqa: PLC0415
        if self._parallel is None or debug_mode.enabled():  # debug mode: sequential, in order
            return _MapIterator(self._input._make_iterator(ctx), fn, stats, ctx)
        from tensorlite.data.parallel_map import ParallelMapIterator  # noqa: PLC0415
        return ParallelMapIterator(self, self._input._make_iterator(ctx), fn, stats, ctx)


class _MapIterator(PassThroughIterator):
    _position = "_i"  # saved beside the input's state

    def __init__(self, inner, fn, stats, ctx):
        super().__init__(inner)
        self._fn, self._stats = fn, stats
        self._i = 0
        self._seed = ctx.seed

    def next(self):
        element = self._in.next()
        i = self._i
        self._i = i + 1
        t0 = time.perf_counter()
        with element_seed(self._seed, i):
            out = self._fn(element, i)
        self._stats.add(time.perf_counter() - t0)
        return self._fn.convert(out, i)


# -- filter -----------------------------------------------------------------------------------
class FilterDataset(FunctionDataset):
    _name = "Filter"

    def __init__(self, input_dataset, predicate, name=None):
        super().__init__(input_dataset, predicate)

    def _cardinality(self):
        return UNKNOWN if self._input._cardinality() != INFINITE else INFINITE

    def _describe(self):
        return getattr(self._fn, "__name__", "predicate")

    def _make_iterator(self, ctx):
        return _FilterIterator(self._input._make_iterator(ctx),
                               StageFunction(self._fn, "Filter", check_spec=False))


class _FilterIterator(PassThroughIterator):
    _position = "_i"  # saved beside the input's state

    def __init__(self, inner, pred):
        super().__init__(inner)
        self._pred = pred
        self._i = 0

    def next(self):
        while True:
            element = self._in.next()
            i = self._i
            self._i += 1
            if check_predicate(self._pred(element, i), "Filter", i):
                return element


# -- flat_map ---------------------------------------------------------------------------------
def _as_dataset(value, stage, index):
    if not isinstance(value, DatasetV2):
        raise TypeError(f"{stage}: the function must return a Dataset, got "
                        f"{type(value).__name__} for element {index}")
    return value


class FlatMapDataset(FunctionDataset):
    _name = "FlatMap"

    def __init__(self, input_dataset, map_func, name=None):
        super().__init__(input_dataset, map_func)

    def _compute_spec(self):
        return self._first_element_dataset().element_spec

    def _first_element_dataset(self):
        from tensorlite.data.iterator import make_raw_iterator  # noqa: PLC0415
        it = make_raw_iterator(self._input, optimize=False)
        try:
            return _as_dataset(structure.call_with_element(self._fn, it.next()), "flat_map", 0)
        finally:
            it.close()

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _FlatMapIterator(self._input._make_iterator(ctx),
                                StageFunction(self._fn, "FlatMap", check_spec=False), ctx)


class _FlatMapIterator(PassThroughIterator):
    _scoped = None  # the inner datasets' context, made on first use
    def __init__(self, inner, fn, ctx):
        super().__init__(inner)
        self._fn, self._ctx = fn, ctx
        self._cur = None
        self._i = 0

    def next(self):
        while True:
            if self._cur is None:
                element = self._in.next()
                ds = _as_dataset(self._fn(element, self._i), "flat_map", self._i)
                self._i += 1
                self._cur = ds._make_iterator(inner_context(self))
                self._cur_ds = ds
            try:
                return self._cur.next()
            except StopIteration:
                self._cur.close()
                self._cur = None

    def save(self):
        if self._cur is not None:
            raise errors.UnimplementedError(
                None, None, "flat_map cannot checkpoint in the middle of an inner dataset "
                "yet; checkpoint between inputs")
        return (self._i, self._in.save())

    def restore(self, state):
        self._i, inner = state
        self._in.restore(inner)

    def close(self):
        if self._cur is not None:
            self._cur.close()
        self._in.close()


# -- repeat / take / skip / shard -----------------------------------------------------------
class RepeatDataset(UnaryDataset):
    _name = "Repeat"

    def __init__(self, input_dataset, count=None, name=None):
        super().__init__(input_dataset)
        self._count = -1 if count is None else int(np.asarray(count))

    def _cardinality(self):
        n = self._input._cardinality()
        if self._count == 0 or n == 0:
            return 0
        if self._count < 0 or n == INFINITE:
            return INFINITE
        return UNKNOWN if n == UNKNOWN else n * self._count

    def _describe(self):
        return "count=infinite" if self._count < 0 else f"count={self._count}"

    def _label(self):
        return "Repeat" if self._count < 0 else f"Repeat({self._count})"

    def _make_iterator(self, ctx):
        return _RepeatIterator(self, ctx)


class _RepeatIterator(RawIterator):
    def __init__(self, ds, ctx):
        self._ds, self._ctx = ds, ctx
        self._epoch = 0
        self._it = ds._input._make_iterator(ctx) if ds._count != 0 else None
        self._produced = False

    def next(self):
        count = self._ds._count
        while self._it is not None:
            try:
                v = self._it.next()
                self._produced = True
                return v
            except StopIteration:
                self._it.close()
                self._epoch += 1
                if (0 <= count <= self._epoch) or not self._produced:
                    self._it = None  # an empty input repeated forever is still empty
                    break
                self._produced = False
                self._it = self._ds._input._make_iterator(self._ctx)
        raise StopIteration

    def save(self):
        return (self._epoch, self._produced, None if self._it is None else self._it.save())

    def restore(self, state):
        self._epoch, self._produced, inner = state
        if self._it is not None:
            self._it.close()
        self._it = None
        if inner is not None:
            self._it = self._ds._input._make_iterator(self._ctx)
            self._it.restore(inner)

    def close(self):
        if self._it is not None:
            self._it.close()


class CountedDataset(UnaryDataset):
    """A transformation of one input by one integer count (take, skip, ...): the count is
    `_count`, the stage's label shows it, and the iterator class `_iterator` gets it."""

    _iterator = None

    def __init__(self, input_dataset, count, name=None):
        super().__init__(input_dataset)
        self._count = int(np.asarray(count))

    def _label(self):
        return f"{self._name}({self._count})"

    def _make_iterator(self, ctx):
        return self._iterator(self._input._make_iterator(ctx), self._count)


class _CountdownIterator(PassThroughIterator):
    """An iterator whose position (`_position`, saved beside the input's state) is what is
    left of the stage's count."""

    def __init__(self, inner, count):
        super().__init__(inner)
        setattr(self, self._position, count)


class _TakeIterator(_CountdownIterator):
    _position = "_left"

    def next(self):
        if self._left == 0:
            raise StopIteration
        v = self._in.next()
        if self._left > 0:
            self._left -= 1
        return v


class TakeDataset(CountedDataset):
    _name = "Take"
    _iterator = _TakeIterator

    def _cardinality(self):
        n = self._input._cardinality()
        if self._count < 0:
            return n
        if n == INFINITE:
            return self._count
        return UNKNOWN if n == UNKNOWN else min(n, self._count)

    def _describe(self):
        return f"count={self._count}"


class _SkipIterator(_CountdownIterator):
    _position = "_to_skip"

    def next(self):
        while self._to_skip != 0:
            self._in.next()
            self._to_skip -= 1
        return self._in.next()


class SkipDataset(CountedDataset):
    _name = "Skip"
    _iterator = _SkipIterator

    def _cardinality(self):
        n = self._input._cardinality()
        if n < 0:
            return n
        return 0 if self._count < 0 else max(n - self._count, 0)


class ShardDataset(UnaryDataset):
    _name = "Shard"

    def __init__(self, input_dataset, num_shards, index, name=None):
        super().__init__(input_dataset)
        num_shards, index = int(np.asarray(num_shards)), int(np.asarray(index))
        if num_shards <= 0 or not 0 <= index < num_shards:
            raise errors.InvalidArgumentError(
                None, None, f"shard: need num_shards > 0 and 0 <= index < num_shards, got "
                f"num_shards={num_shards}, index={index}")
        self._n, self._k = num_shards, index

    def _cardinality(self):
        n = self._input._cardinality()
        return n if n < 0 else n // self._n + (1 if self._k < n % self._n else 0)

    def _describe(self):
        return f"num_shards={self._n}, index={self._k}"

    def _make_iterator(self, ctx):
        return _ShardIterator(self._input._make_iterator(ctx), self._n, self._k)


class _ShardIterator(PassThroughIterator):
    _position = "_pos"  # saved beside the input's state

    def __init__(self, inner, n, k):
        super().__init__(inner)
        self._n, self._k, self._pos = n, k, 0

    def next(self):
        while True:
            v = self._in.next()
            pos = self._pos
            self._pos += 1
            if pos % self._n == self._k:
                return v


# -- enumerate / scan / take_while / unique / ignore_errors --------------------------------------
class EnumerateDataset(UnaryDataset):
    _name = "Enumerate"

    def __init__(self, input_dataset, start=0, name=None):
        super().__init__(input_dataset)
        self._start = int(np.asarray(start))

    def _compute_spec(self):
        return (TensorSpec([], dtypes.int64), self._input.element_spec)

    def _make_iterator(self, ctx):
        return _EnumerateIterator(self._input._make_iterator(ctx), self._start)


class _EnumerateIterator(PassThroughIterator):
    _position = "_i"  # saved beside the input's state

    def __init__(self, inner, start):
        super().__init__(inner)
        self._i = start

    def next(self):
        v = self._in.next()
        i = self._i
        self._i += 1
        return (wrap(np.array(i, dtype=np.int64)), v)


class ScanDataset(UnaryDataset):
    _name = "Scan"

    def __init__(self, input_dataset, initial_state, scan_func, name=None):
        super().__init__(input_dataset)
        self._init = structure.to_element(initial_state, "scan initial_state")
        self._fn = scan_func

    def _compute_spec(self):
        return structure.spec_of(self._first_element())

    def _make_iterator(self, ctx):
        return _ScanIterator(self._input._make_iterator(ctx), self._init, self._fn)


class _ScanIterator(PassThroughIterator):
    def __init__(self, inner, init, fn):
        super().__init__(inner)
        self._state, self._fn, self._i = init, fn, 0
        self._state_spec = structure.spec_of(init)

    def next(self):
        element = self._in.next()
        result = self._fn(self._state, element)
        if not isinstance(result, tuple) or len(result) != 2:
            raise TypeError("scan: scan_func must return a pair (new_state, output_element)")
        new_state = structure.to_element(result[0], "scan new_state")
        structure.check_matches(new_state, nest.map_structure(
            lambda s: TensorSpec(None, s.dtype), self._state_spec), "Scan state", self._i)
        self._state = new_state
        self._i += 1
        return structure.to_element(result[1], "scan output")

    def save(self):
        return (structure.to_numpy_element(self._state), self._i, self._in.save())

    def restore(self, state):
        st, self._i, inner = state
        self._state = structure.from_numpy_element(st)
        self._in.restore(inner)


class TakeWhileDataset(FunctionDataset):
    _name = "TakeWhile"

    def __init__(self, input_dataset, predicate, name=None):
        super().__init__(input_dataset, predicate)

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _TakeWhileIterator(self._input._make_iterator(ctx),
                                  StageFunction(self._fn, "TakeWhile", check_spec=False))


class _TakeWhileIterator(PassThroughIterator):
    def __init__(self, inner, pred):
        super().__init__(inner)
        self._pred, self._done, self._i = pred, False, 0

    def next(self):
        if self._done:
            raise StopIteration
        v = self._in.next()
        ok = check_predicate(self._pred(v, self._i), "TakeWhile", self._i)
        self._i += 1
        if not ok:
            self._done = True
            raise StopIteration
        return v

    def save(self):
        return (self._done, self._i, self._in.save())

    def restore(self, state):
        self._done, self._i, inner = state
        self._in.restore(inner)


class UniqueDataset(UnaryDataset):
    _name = "Unique"

    def __init__(self, input_dataset, name=None):
        super().__init__(input_dataset)
        spec = input_dataset.element_spec
        if not isinstance(spec, TensorSpec) or spec.shape.rank != 0 or not (
                spec.dtype.is_integer or spec.dtype.is_string):
            raise TypeError(f"unique: elements must be scalar integer or string tensors, got "
                            f"{spec}")

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _UniqueIterator(self._input._make_iterator(ctx))


class _UniqueIterator(PassThroughIterator):
    def __init__(self, inner):
        super().__init__(inner)
        self._seen = set()

    def next(self):
        while True:
            v = self._in.next()
            key = v._value.item()
            if key not in self._seen:
                self._seen.add(key)
                return v

    def save(self):
        return (sorted(self._seen, key=repr), self._in.save())

    def restore(self, state):
        seen, inner = state
        self._seen = set(seen)
        self._in.restore(inner)


class IgnoreErrorsDataset(UnaryDataset):
    _name = "IgnoreErrors"

    def __init__(self, input_dataset, log_warning=False, name=None):
        super().__init__(input_dataset)
        self._log = log_warning

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _IgnoreErrorsIterator(self._input._make_iterator(ctx), self._log)


class _IgnoreErrorsIterator(PassThroughIterator):
    def __init__(self, inner, log):
        super().__init__(inner)
        self._log = log

    def next(self):
        while True:
            try:
                return self._in.next()
            except StopIteration:
                raise
            except Exception as e:  # noqa: BLE001 - that is the transformation's purpose
                if self._log:
                    warnings.warn(f"ignore_errors dropped an element: {e}", stacklevel=2)


# -- window -----------------------------------------------------------------------------------
class DatasetSpec:
    """`tf.data.DatasetSpec`: the element_spec component of a dataset of datasets."""

    def __init__(self, element_spec, dataset_shape=()):
        self.element_spec = element_spec
        self.shape = dataset_shape
        self.dtype = "dataset"

    def __repr__(self):
        return f"DatasetSpec({self.element_spec!r})"


class WindowDataset(UnaryDataset):
    _name = "Window"

    def __init__(self, input_dataset, size, shift=None, stride=1, drop_remainder=False,
                 name=None):
        super().__init__(input_dataset)
        self._size = int(size)
        self._shift = self._size if shift is None else int(shift)
        self._stride = int(stride)
        if min(self._size, self._shift, self._stride) <= 0:
            raise errors.InvalidArgumentError(None, None, "window: size, shift and stride must "
                                              "be positive")
        self._drop = drop_remainder

    def _compute_spec(self):
        return nest.map_structure(lambda s: DatasetSpec(TensorSpec(s.shape, s.dtype)),
                                  self._input.element_spec)

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _WindowIterator(self, self._input._make_iterator(ctx))


class _WindowIterator(PassThroughIterator):
    def __init__(self, ds, inner):
        super().__init__(inner)
        self._ds = ds
        self._buf = []
        self._done = False

    def next(self):
        ds = self._ds
        span = (ds._size - 1) * ds._stride + 1
        while not self._done and len(self._buf) < span:
            try:
                self._buf.append(self._in.next())
            except StopIteration:
                self._done = True
        if not self._buf or (self._done and ds._drop and len(self._buf) < span):
            raise StopIteration
        window = self._buf[:span:ds._stride]
        self._buf = self._buf[ds._shift:]
        if ds._shift > span:  # skip inputs between windows
            extra = ds._shift - span
            while extra > 0 and not self._done:
                try:
                    self._in.next()
                except StopIteration:
                    self._done = True
                extra -= 1
        comps = [list(c) for c in zip(*[nest.flatten(e) for e in window])]
        from tensorlite.data.sources import FromTensorSlicesDataset  # noqa: PLC0415
        from tensorlite.ops.array_ops import stack  # noqa: PLC0415
        sets = [FromTensorSlicesDataset(stack(c)) for c in comps]
        return nest.pack_like(window[0], sets)


def fn_label(fn):
    """A user function's name for stage labels."""
    return getattr(fn, "__name__", type(fn).__name__)


# -- attach methods -----------------------------------------------------------------------------
def _map(self, map_func, num_parallel_calls=None, deterministic=None, name=None):
    return MapDataset(self, map_func, num_parallel_calls, deterministic)


DatasetV2.map = _map
DatasetV2.filter = lambda self, predicate, name=None: FilterDataset(self, predicate)
DatasetV2.flat_map = lambda self, map_func, name=None: FlatMapDataset(self, map_func)
DatasetV2.repeat = lambda self, count=None, name=None: RepeatDataset(self, count)
DatasetV2.take = lambda self, count, name=None: TakeDataset(self, count)
DatasetV2.skip = lambda self, count, name=None: SkipDataset(self, count)
DatasetV2.shard = lambda self, num_shards, index, name=None: ShardDataset(self, num_shards,
                                                                           index)
DatasetV2.enumerate = lambda self, start=0, name=None: EnumerateDataset(self, start)
DatasetV2.scan = lambda self, initial_state, scan_func, name=None: ScanDataset(
    self, initial_state, scan_func)
DatasetV2.take_while = lambda self, predicate, name=None: TakeWhileDataset(self, predicate)
DatasetV2.unique = lambda self, name=None: UniqueDataset(self)
DatasetV2.ignore_errors = lambda self, log_warning=False, name=None: IgnoreErrorsDataset(
    self, log_warning)
DatasetV2.window = lambda self, size, shift=None, stride=1, drop_remainder=False, name=None: \
    WindowDataset(self, size, shift, stride, drop_remainder)

def _distribute(self, service, processing_mode="distributed_epoch", job_name=None):
    """The spelling of the TF Dev Summit 2020 talk "Scaling TensorFlow data processing
    with tf.data": the pipeline so far runs on the tf.data service at `service`
    (distributed_epoch by default: each element once, as without the service)."""
    from tensorlite.data.service import distribute  # noqa: PLC0415
    return self.apply(distribute(processing_mode, service, job_name=job_name))


DatasetV2.distribute = _distribute

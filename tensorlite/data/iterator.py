"""Iterators over datasets.

Every node's iterator implements the small protocol of `RawIterator`: `next()` (raising
StopIteration at the end), `save()` returning a picklable state, `restore(state)` and
`close()`. `OwnedIterator` is what `iter(dataset)` returns: a Python iterator with TF's
`get_next()`, whose state can be saved and restored through `tf.train.Checkpoint` or
`save_state()`/`restore_state()` so a job resumes mid-epoch at the exact next element.
"""
import copy
import itertools
import threading
import time
import weakref

from tensorlite.data import iterator_state, structure
from tensorlite.data.tracing import collector, hook, hook_next
from tensorlite.framework import errors
from tensorlite.graph import tracing as _graph_tracing

_pipeline_ids = itertools.count()
_LIVE = weakref.WeakSet()  # every Context alive: the profiler's baseline of stage stats
_LIVE_LOCK = threading.Lock()  # adds from other threads vs copies (GC removals wait anyway)


class RawIterator:
    """Protocol and defaults for node iterators."""

    _trace = None  # (span name, stage key, pipeline id): see tracing.py
    _tracing = False  # inside traced_next: run the plain body

    def __init_subclass__(cls, **kwargs):
        """The profiler's one installation point: each subclass's own `next` is swapped
        for a traced one while a profiler runs (tracing.py)."""
        super().__init_subclass__(**kwargs)
        hook_next(cls)

    def next(self):
        raise NotImplementedError

    def _trace_args(self):
        """Extra span args at the moment of a call (buffer fill, parallelism) or None."""
        return None

    def save(self):
        raise errors.UnimplementedError(
            None, None, f"{type(self).__name__} cannot be checkpointed")

    def restore(self, state):
        raise errors.UnimplementedError(
            None, None, f"{type(self).__name__} cannot be restored from a checkpoint")

    def close(self):
        pass


class Context:
    """What every iterator of one pipeline shares: options, stats, the RAM budget, and for
    the profiler the pipeline's id and (optimised) root dataset."""

    scope = ""  # inside an interleave/flat_map: (its stage key, its name), see tracing.py

    def __init__(self, options):
        from tensorlite.data.stats import RamBudget, Stats  # noqa: PLC0415
        self.options = options
        self.stats = Stats()
        self.ram = RamBudget(options.autotune.ram_budget)
        from tensorlite.data.seeding import pipeline_seed  # noqa: PLC0415
        self.seed = pipeline_seed(options)
        self.pipeline = None
        self.root = None
        with _LIVE_LOCK:
            _LIVE.add(self)

    def scoped(self, key, name):
        """The context for datasets made inside stage `key` (an interleave's inputs): the
        same pipeline, with stage keys (and span names) under that stage."""
        inner = copy.copy(self)
        inner.scope = (key, name)
        return inner


def live_contexts():
    """Every pipeline context alive now (a copy)."""
    with _LIVE_LOCK:
        return list(_LIVE)


def pipeline_id(dataset):
    """Small int naming the pipeline iterated from `dataset` (the same for every epoch)."""
    pid = dataset.__dict__.get("_pipeline_id")
    if pid is None:
        pid = dataset.__dict__["_pipeline_id"] = next(_pipeline_ids)
    return pid


def make_raw_iterator(dataset, optimize=True, ctx=None):
    from tensorlite.data.options import merged_options  # noqa: PLC0415
    from tensorlite.data.optimize import optimize_pipeline  # noqa: PLC0415
    options = merged_options(dataset)
    root = optimize_pipeline(dataset, options) if optimize else dataset
    if ctx is None:
        ctx = Context(options)
        ctx.pipeline = pipeline_id(dataset)
        ctx.root = root
    it = root._make_iterator(ctx)
    it._ctx = ctx
    it._root = root
    dataset.__dict__["_last_ctx"] = ctx  # explain() reports the latest run's measurements
    return it


class OwnedIterator:
    """`iter(dataset)`: a Python iterator whose position can be saved and restored."""

    def __init__(self, dataset):
        self._dataset = dataset
        self._raw = make_raw_iterator(dataset)
        self._finalizer = weakref.finalize(self, self._raw.close)

    @property
    def element_spec(self):
        return self._dataset.element_spec

    def __iter__(self):
        return self

    def __next__(self):
        if _graph_tracing._ACTIVE and _graph_tracing.is_tracing():
            return self._graph_next()
        return self._raw.next()

    def _graph_next(self):
        """`next(iterator)` inside a traced tf.function (the tf.function guide's
        `good_consume_next`): one stateful node that takes the next element each time the
        graph runs (OutOfRangeError at the end, as TensorFlow's IteratorGetNext), not the
        element met while tracing."""
        from tensorlite.framework import nest  # noqa: PLC0415
        from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
        from tensorlite.graph.autograph.dataset_loop import stand_in  # noqa: PLC0415
        from tensorlite.ops import script_ops  # noqa: PLC0415
        spec = self.element_spec
        specs = nest.flatten(spec)
        if not all(type(s) is TensorSpec for s in specs):
            raise NotImplementedError(
                f"next() on an iterator inside tf.function for elements of {spec}: only "
                f"dense tensors are supported there; iterate the dataset with `for` instead")
        raw = self._raw

        def fetch():
            if not script_ops.effects_on():  # a trace, not a run: consume nothing
                return [stand_in(s) for s in specs]
            try:
                element = raw.next()
            except StopIteration:
                raise errors.OutOfRangeError(None, None, "End of sequence") from None
            return [t.numpy() if hasattr(t, "numpy") else t for t in nest.flatten(element)]
        outs = script_ops.numpy_function(fetch, [], [s.dtype for s in specs],
                                         name="IteratorGetNext")
        outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
        for out, s in zip(outs, specs):
            out.set_shape(s.shape)
        return nest.pack_like(spec, outs)

    def _traced_next(self):
        """`__next__` while a profiler runs (tracing.hook): the consumer's wait for the next
        element, as an "input" span (IteratorGetNext) on its thread; the pipeline's context
        is kept for the analyzer."""
        if _graph_tracing._ACTIVE and _graph_tracing.is_tracing():
            return self._graph_next()
        c = collector()
        if c is None:
            return self._raw.next()
        ctx = getattr(self._raw, "_ctx", None)
        pipeline = getattr(ctx, "pipeline", None)
        pipes = getattr(c, "data_pipelines", None)
        if pipes is not None and ctx is not None and pipes.get(pipeline) is not ctx:
            pipes[pipeline] = ctx
        args = {"pipeline": pipeline}
        t0 = time.perf_counter_ns()
        try:
            return self._raw.next()
        except StopIteration:
            args["end_of_sequence"] = True
            raise
        finally:
            c.add_span("input", "IteratorGetNext", t0, time.perf_counter_ns(), args)

    def next(self):
        return self.__next__()

    def get_next(self):
        """The next element; raises tf.errors.OutOfRangeError at the end, as TF."""
        try:
            return self.__next__()
        except StopIteration:
            raise errors.OutOfRangeError(None, None, "End of sequence") from None

    def get_next_as_optional(self):
        from tensorlite.data.optional import Optional  # noqa: PLC0415
        try:
            return Optional.from_value(self.__next__())
        except StopIteration:
            return Optional.empty(self.element_spec)

    # -- checkpointing ---------------------------------------------------------------------
    def save_state(self):
        """The iterator's position (shuffle buffers and parallel stages included) as bytes:
        JSON and raw arrays (`iterator_state`), never a pickle."""
        return iterator_state.dumps(self._raw.save())

    def restore_state(self, blob):
        """Continues from a position saved by `save_state` on an iterator of the same
        pipeline."""
        self._raw.restore(iterator_state.loads(blob))

    def _serialize_to_tensors(self):  # the Checkpoint protocol
        return {"iterator_state": self.save_state()}

    def _restore_from_tensors(self, restored):
        self.restore_state(restored["iterator_state"])

    def close(self):
        self._finalizer()

    def __del__(self):
        try:
            self._finalizer()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


hook(OwnedIterator, "__next__", OwnedIterator._traced_next)
Iterator = OwnedIterator


class IteratorSpec:
    """`tf.data.IteratorSpec`: the type of an iterator over elements of `element_spec`
    (`iter(ds)._type_spec`)."""

    def __init__(self, element_spec):
        self._element_spec = element_spec

    element_spec = property(lambda self: self._element_spec)
    value_type = property(lambda self: OwnedIterator)

    def __eq__(self, other):
        return isinstance(other, IteratorSpec) and other._element_spec == self._element_spec

    def __hash__(self):
        return hash(repr(self._element_spec))

    def __repr__(self):
        return f"IteratorSpec({self._element_spec!r})"


OwnedIterator._type_spec = property(lambda self: IteratorSpec(self.element_spec))


class NumpyIterator:
    """`tf.data.NumpyIterator`, what `Dataset.as_numpy_iterator()` returns: the dataset's
    elements with NumPy values (bytes for strings) in the same structure."""

    def __init__(self, dataset):
        self._iterator = OwnedIterator(dataset)

    def __iter__(self):
        return self

    def __next__(self):
        return structure.nest.map_structure(lambda t: t.numpy(), next(self._iterator))

    next = __next__

    def _save(self):
        return self._iterator.save_state()

    def _restore(self, state):
        self._iterator.restore_state(state)

    def __repr__(self):
        return f"<tf.data.NumpyIterator element_spec={self._iterator.element_spec}>"


__all__ = ["RawIterator", "Context", "OwnedIterator", "Iterator", "IteratorSpec",
           "NumpyIterator", "make_raw_iterator", "structure"]

"""`tf.data.experimental.group_by_reducer` and `Reducer`: one reduced value per key.

Every element goes to the state of its key (`key_func(element)`, an int64 scalar): the state
starts as `init_func(key)` and becomes `reduce_func(state, element)`; when the input ends,
each key's `finalize_func(state)` is an output element, keys in order of first appearance.

Example:
    >>> reducer = tf.data.experimental.Reducer(init_func=lambda _: np.int64(0),
    ...                                        reduce_func=lambda x, y: x + y,
    ...                                        finalize_func=lambda x: x)
    >>> ds = tf.data.Dataset.range(10).apply(
    ...     tf.data.experimental.group_by_reducer(lambda x: x % 2, reducer))
    >>> [int(x) for x in ds]
    [20, 25]
"""
from tensorlite.data import structure
from tensorlite.data.dataset import UNKNOWN
from tensorlite.data.grouping import _scalar_int
from tensorlite.data.transforms import PassThroughIterator, UnaryDataset


class Reducer:
    """`tf.data.experimental.Reducer(init_func, reduce_func, finalize_func)`."""

    def __init__(self, init_func, reduce_func, finalize_func):
        for what, fn in (("init_func", init_func), ("reduce_func", reduce_func),
                         ("finalize_func", finalize_func)):
            if not callable(fn):
                raise TypeError(f"Reducer: {what} must be callable, got {type(fn).__name__}")
        self._init_func, self._reduce_func = init_func, reduce_func
        self._finalize_func = finalize_func

    init_func = property(lambda self: self._init_func)
    reduce_func = property(lambda self: self._reduce_func)
    finalize_func = property(lambda self: self._finalize_func)


class GroupByReducerDataset(UnaryDataset):
    _name = "GroupByReducer"

    def __init__(self, input_dataset, key_func, reducer):
        super().__init__(input_dataset)
        if not callable(key_func):
            raise TypeError(f"group_by_reducer: key_func must be callable, got "
                            f"{type(key_func).__name__}")
        if not isinstance(reducer, Reducer):
            raise TypeError(f"group_by_reducer: reducer must be a "
                            f"tf.data.experimental.Reducer, got {type(reducer).__name__}")
        self._key_func, self._reducer = key_func, reducer

    def _cardinality(self):
        return UNKNOWN

    def _make_iterator(self, ctx):
        return _ReducerIterator(self, self._input._make_iterator(ctx))


class _ReducerIterator(PassThroughIterator):
    """Consumes the whole input on the first next(), then yields the finalized states.
    State: the finalized outputs not yet returned (None before the input is consumed)."""

    def __init__(self, ds, inner):
        super().__init__(inner)
        self._ds, self._out = ds, None

    def _reduce_all(self):
        r = self._ds._reducer
        states = {}  # key -> state, in the order keys appeared
        while True:
            try:
                element = self._in.next()
            except StopIteration:
                break
            key = _scalar_int(structure.call_with_element(self._ds._key_func, element),
                              "group_by_reducer: key_func")
            if key not in states:
                states[key] = structure.to_element(r.init_func(structure.to_element(key)),
                                                   "group_by_reducer init_func result")
            states[key] = structure.to_element(r.reduce_func(states[key], element),
                                               "group_by_reducer reduce_func result")
        return [structure.to_element(structure.call_with_element(r.finalize_func, s),
                                     "group_by_reducer finalize_func result")
                for s in states.values()]

    def next(self):
        if self._out is None:
            self._out = self._reduce_all()
        if not self._out:
            raise StopIteration
        return self._out.pop(0)

    def save(self):
        return (None if self._out is None else list(self._out), self._in.save())

    def restore(self, state):
        out, inner = state
        self._out = None if out is None else list(out)
        self._in.restore(inner)


def group_by_reducer(key_func, reducer):
    """For `dataset.apply`: one `reducer.finalize_func(state)` element per key."""
    return lambda dataset: GroupByReducerDataset(dataset, key_func, reducer)

"""`tf.data.Dataset`: a pipeline of nodes, each a source or a transformation of its inputs.

A node knows its inputs (`_inputs`), its `element_spec` and how to make an iterator
(`_make_iterator`). Iterators are explicit objects with `next()`, `save()` and `restore()`
so that a pipeline can be checkpointed mid-epoch. Before iteration the pipeline graph is
rewritten by the optimisations in `tf.data.Options` (see `optimize.py`).

Example:
    >>> ds = tf.data.Dataset.range(10).map(lambda x: x * 2).batch(4)
    >>> [b.numpy().tolist() for b in ds]
    [[0, 2, 4, 6], [8, 10, 12, 14], [16, 18]]
"""
import itertools

import numpy as np

from tensorlite.data import structure
from tensorlite.framework import errors

INFINITE = -1
UNKNOWN = -2
AUTOTUNE = -1


def parallel_calls(value, what):
    """`num_parallel_calls` checked as TensorFlow's kernels check it: None, AUTOTUNE (-1) or
    a positive integer; another integer is an InvalidArgumentError, a non-integer a
    TypeError, each naming the transformation `what` ("map")."""
    if value is None:
        return None
    numpy = getattr(value, "numpy", None)
    arr = np.asarray(numpy() if callable(numpy) else value)
    if arr.shape != () or arr.dtype.kind not in "iu":
        raise TypeError(f"{what}: num_parallel_calls must be an integer or "
                        f"tf.data.AUTOTUNE, got {value!r}")
    n = int(arr)
    if n <= 0 and n != AUTOTUNE:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: num_parallel_calls must be greater than zero or "
            f"tf.data.AUTOTUNE (-1), got {n}")
    return n

def batch_size_arg(value, what):
    """A transformation's `batch_size` as an int, checked as TensorFlow's kernels check it:
    zero or less is an InvalidArgumentError naming the transformation `what` ("batch")."""
    n = int(np.asarray(value))
    if n <= 0:
        raise errors.InvalidArgumentError(
            None, None, f"{what}: batch_size must be greater than zero, got {n}")
    return n


_ids = itertools.count()  # node keys: stats and profiler stages (kept by optimised copies)


def _stamping(make_iterator):
    def _make_iterator(self, ctx):
        it = make_iterator(self, ctx)
        stamp(it, self, ctx)
        return it
    _make_iterator._stamps = True
    _make_iterator.__doc__ = make_iterator.__doc__
    return _make_iterator


class DatasetV2:
    """Base class of every dataset node."""

    _inputs = ()
    _name = "Dataset"

    def __new__(cls, *args, **kwargs):
        obj = super().__new__(cls)
        obj._key = next(_ids)
        return obj

    def __init_subclass__(cls, **kwargs):
        # Every node's iterator learns its stage name and key for the profiler (once per
        # iterator, nothing per element).
        super().__init_subclass__(**kwargs)
        make = cls.__dict__.get("_make_iterator")
        if make is not None and not getattr(make, "_stamps", False):
            cls._make_iterator = _stamping(make)

    # -- what subclasses provide -------------------------------------------------------
    def _make_iterator(self, ctx):
        raise NotImplementedError(f"{type(self).__name__} does not define _make_iterator")

    def _label(self):
        """The stage's name in profiles: e.g. "Map(parse)", "Batch(32)"."""
        return self._name

    def _compute_spec(self):
        return structure.spec_of(self._first_element())

    def _cardinality(self):
        return UNKNOWN

    def _describe(self):
        """Arguments shown by explain()."""
        return ""

    # -- element spec ----------------------------------------------------------------------
    @property
    def element_spec(self):
        spec = self.__dict__.get("_spec")
        if spec is None:
            spec = self._compute_spec()
            self.__dict__["_spec"] = spec
        return spec

    def _first_element(self):
        """Used where the spec depends on a user function: runs the pipeline for one
        element (TensorFlow traces the function once instead), with tf.print and
        tf.summary silenced so the probe is not seen as a real element."""
        from tensorlite.data.iterator import make_raw_iterator  # noqa: PLC0415
        from tensorlite.ops.script_ops import effects_off  # noqa: PLC0415
        it = make_raw_iterator(self, optimize=False)
        try:
            with effects_off():
                return it.next()
        except StopIteration:
            raise errors.InvalidArgumentError(
                None, None, f"{self._name}: cannot infer the element_spec of an empty "
                f"dataset; give an output signature") from None
        finally:
            it.close()

    # -- iteration -------------------------------------------------------------------------
    def __iter__(self):
        from tensorlite.data.iterator import OwnedIterator  # noqa: PLC0415
        return OwnedIterator(self)

    def as_numpy_iterator(self):
        """A tf.data.NumpyIterator: elements as NumPy values (bytes for strings)."""
        from tensorlite.data.iterator import NumpyIterator  # noqa: PLC0415
        return NumpyIterator(self)

    def __len__(self):
        n = self._cardinality()
        if n == INFINITE:
            raise TypeError("The dataset is infinite.")
        if n == UNKNOWN:
            raise TypeError("The dataset length is unknown.")
        return n

    def __bool__(self):
        return True

    def cardinality(self):
        """Number of elements, or tf.data.INFINITE_CARDINALITY / UNKNOWN_CARDINALITY."""
        from tensorlite.framework.tensor import wrap  # noqa: PLC0415
        return wrap(np.array(self._cardinality(), dtype=np.int64))

    def __repr__(self):
        return f"<{self._name}Dataset element_spec={self.element_spec}>"

    # -- options and explain ---------------------------------------------------------------
    def options(self):
        from tensorlite.data.options import merged_options  # noqa: PLC0415
        return merged_options(self)

    def with_options(self, options, name=None):
        from tensorlite.data.options import OptionsDataset  # noqa: PLC0415
        return OptionsDataset(self, options)

    def explain(self, print_fn=print):
        """Prints (and returns) the pipeline after optimisation, with what each stage
        runs, AUTOTUNE's choices and measured latencies where the pipeline has run."""
        from tensorlite.data.optimize import explain  # noqa: PLC0415
        text = explain(self)
        if print_fn is not None:
            print_fn(text)
        return text

    def apply(self, transformation_func):
        out = transformation_func(self)
        if not isinstance(out, DatasetV2):
            raise TypeError(f"apply: `transformation_func` must return a Dataset, got "
                            f"{type(out).__name__}")
        return out

    def reduce(self, initial_state, reduce_func, name=None):
        """Folds the dataset into one value: state = reduce_func(state, element)."""
        state = structure.to_element(initial_state, "reduce initial_state")
        for element in self:
            state = structure.to_element(reduce_func(state, element), "reduce function result")
        return state

    def get_single_element(self, name=None):
        """The dataset's only element. An empty dataset, or one with more than one element,
        raises InvalidArgumentError as TF does ("Dataset was empty." / "Dataset had more
        than one element.")."""
        from tensorlite.data.iterator import make_raw_iterator  # noqa: PLC0415
        it = make_raw_iterator(self)
        try:
            try:
                element = it.next()
            except StopIteration:
                raise errors.InvalidArgumentError(None, None, "Dataset was empty.") from None
            try:
                it.next()
            except StopIteration:
                return element
            raise errors.InvalidArgumentError(None, None,
                                              "Dataset had more than one element.")
        finally:
            it.close()

    def fingerprint(self):
        """A scalar tf.uint64 hash of the pipeline: its stages, their arguments, their
        functions' code and their source data (and input files' size and mtime). Equal
        fingerprints mean the datasets produce the same elements (for deterministic
        pipelines over unchanged files); the values differ from TF's graph hashes."""
        from tensorlite.data.snapshot import fingerprint  # noqa: PLC0415
        from tensorlite.framework.tensor import wrap  # noqa: PLC0415
        return wrap(np.array(int(fingerprint(self), 16), dtype=np.uint64))


Dataset = DatasetV2

from tensorlite.data.tracing import stamp  # noqa: E402

# Transformations and sources attach themselves as methods when tensorlite/data/__init__.py
# imports them, which Python runs before any of its modules (this one included): they import
# this module, never the reverse.

"""`tf.TensorArray`: a list of tensors written one index at a time, then stacked.

Eagerly it is a Python list of tensors (stack/gather/concat are recorded ops, so a tape
differentiates through them). Inside a tf.function trace it is a handle: a scalar tensor
made by the stateful `TensorArrayV3` op, holding a fresh store on every run of the graph;
writes, reads and stacks are stateful ops on it, and `write` returns a TensorArray with the
new handle (TensorFlow's flow), so a graph loop carries it as a loop variable (AutoGraph
and tf.while_loop wrap and unwrap it, graph/autograph/operators.py). A graph's
TensorArray ops have no gradient yet: differentiating through them is a loud LookupError.

Example:
    >>> ta = tf.TensorArray(tf.float32, size=2)
    >>> ta = ta.write(0, [1.0, 2.0]).write(1, [3.0, 4.0])
    >>> ta.stack().numpy()
    array([[1., 2.],
           [3., 4.]], dtype=float32)
"""
import numpy as np

from tensorlite.framework import dtypes, errors
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import declare, register
from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.ops import control_flow_ops
from tensorlite.ops.array_ops import concat, stack, unstack, zeros
from tensorlite.ops.gather_ops import gather
from tensorlite.ops.common import to_tensor


def _error(message):
    return errors.InvalidArgumentError(None, None, message)


class _Store:
    """What a graph TensorArray's handle holds while one run of the graph lasts."""

    def __init__(self, size, dynamic, dtype, element_shape):
        self.items = [None] * size
        self.dynamic, self.dtype, self.element_shape = dynamic, dtype, element_shape

    def put(self, i, value):
        if i < 0 or (i >= len(self.items) and not self.dynamic):
            raise _error(f"Tried to write to index {i} but array is not resizeable and size "
                         f"is: {len(self.items)}")
        # A second write to an index replaces the first (TensorFlow refuses it): tracing a
        # loop body runs its writes once for real before the loop node runs them again.
        self.items.extend([None] * (i + 1 - len(self.items)))
        self.items[i] = value

    def get(self, i):
        if not 0 <= i < len(self.items):
            raise _error(f"Tried to read from index {i} but array size is: {len(self.items)}")
        if self.items[i] is None:
            raise _error(f"Could not read from TensorArray index {i} because it has not yet "
                         f"been written to.")
        return self.items[i]

    def stacked(self, indices=None):
        rows = [self.get(i) for i in (range(len(self.items)) if indices is None
                                      else indices)]
        if rows:
            return np.stack(rows)
        shape = self.element_shape
        if shape is None or None in shape:
            raise _error("TensorArray has size zero, but element shape is not fully "
                         "defined; give element_shape= to stack an empty TensorArray")
        return np.zeros((0,) + tuple(shape), self.dtype.as_numpy_dtype)


def _handle(store):
    h = np.empty((), object)
    h[()] = store
    return h


def _store(handle):
    return np.asarray(handle)[()]


def _new_fwd(size, dtype, dynamic_size, element_shape):
    return _handle(_Store(int(size), dynamic_size, dtype, element_shape))


def _write_fwd(handle, index, value):
    _store(handle).put(int(index), value)
    return handle


def _scatter_fwd(handle, value):
    for i, row in enumerate(value):
        _store(handle).put(i, row)
    return handle


def _stateful(op):
    # run on every call, in order; never folded, merged or dropped
    return declare(op, effects="state")


# TensorArrays live in Python: no exporter writes them and vectorized_map runs them per
# example
_UNSUPPORTED = "tf onnx tflite batch tf_import"
TA_NEW = _stateful(register("TensorArrayV3", _new_fwd, unsupported=_UNSUPPORTED))
TA_WRITE = _stateful(register("TensorArrayWriteV3", _write_fwd, unsupported=_UNSUPPORTED))
TA_SCATTER = _stateful(register("TensorArrayScatterV3", _scatter_fwd, unsupported=_UNSUPPORTED))
TA_READ = _stateful(register("TensorArrayReadV3", lambda h, i: _store(h).get(int(i)),
                             unsupported=_UNSUPPORTED))
TA_STACK = _stateful(register("TensorArrayGatherV3", lambda h: _store(h).stacked(),
                              unsupported=_UNSUPPORTED))
TA_SIZE = _stateful(register(
    "TensorArraySizeV3", lambda h: np.array(len(_store(h).items), np.int32),
    unsupported=_UNSUPPORTED))


class TensorArray:
    """`tf.TensorArray(dtype, size=None, dynamic_size=None, ..., element_shape=None)`."""

    def __init__(self, dtype, size=None, dynamic_size=None, clear_after_read=None,
                 tensor_array_name=None, handle=None, flow=None, infer_shape=True,
                 element_shape=None, colocate_with_first_write_call=True, name=None):
        self._dtype = dtypes.as_dtype(dtype)
        self._dynamic = bool(dynamic_size)
        shape = TensorShape(element_shape) if element_shape is not None else None
        self._element_shape = None if shape is None or shape.rank is None else \
            tuple(shape.as_list())
        if handle is not None:  # a graph loop's handle, wrapped again
            self._handle, self._list = handle, None
            return
        if size is None and not self._dynamic:
            raise ValueError("Size must be provided if dynamic_size is False")
        size = 0 if size is None else size
        if control_flow_ops.graph_tracing():
            self._handle = execute(TA_NEW, (to_tensor(size, dtypes.int32),), {
                "dtype": self._dtype, "dynamic_size": self._dynamic,
                "element_shape": self._element_shape})
            self._list = None
        else:
            self._handle, self._list = None, [None] * int(np.asarray(size))

    # -- graph loops carry the handle -----------------------------------------------------------
    @property
    def handle(self):
        """The handle tensor a graph TensorArray flows through loops as (None eagerly)."""
        return self._handle

    def _with_handle(self, handle):
        return TensorArray(self._dtype, dynamic_size=self._dynamic, handle=handle,
                           element_shape=self._element_shape)

    # -- the API ----------------------------------------------------------------------------------
    @property
    def dtype(self):
        return self._dtype

    @property
    def dynamic_size(self):
        return self._dynamic

    @property
    def element_shape(self):
        return TensorShape(None if self._element_shape is None else list(self._element_shape))

    def write(self, index, value, name=None):
        """Writes `value` at `index`; returns the TensorArray to use from now on."""
        value = to_tensor(value, self._dtype)
        if value._dtype is not self._dtype:
            raise _error(f"TensorArray dtype is {self._dtype.name} but Op is trying to write "
                         f"dtype {value.dtype.name}")
        shape = tuple(value._value.shape)
        if self._element_shape is not None and \
                not TensorShape(list(self._element_shape)).is_compatible_with(shape):
            raise ValueError(f"Inconsistent shapes: saw {list(shape)} but expected "
                             f"{list(self._element_shape)}")
        if self._list is None:
            out = self._with_handle(execute(TA_WRITE, (self._handle, to_tensor(
                index, dtypes.int32), value), None))
        else:
            self._eager_store().put(int(np.asarray(index)), value)
            out = self
        if self._element_shape is None:  # the first write fixes it
            self._element_shape = out._element_shape = shape
        return out

    def read(self, index, name=None):
        """The tensor written at `index`."""
        if self._list is None:
            return execute(TA_READ, (self._handle, to_tensor(index, dtypes.int32)), None)
        return self._eager_store().get(int(np.asarray(index)))

    def _eager_store(self):
        """The store's checks over this eager array's list (shared, not copied)."""
        store = _Store(0, self._dynamic, self._dtype, self._element_shape)
        store.items = self._list
        return store

    def stack(self, name=None):
        """All elements stacked along a new first axis."""
        if self._list is None:
            return execute(TA_STACK, (self._handle,), None)
        if not self._list:
            return zeros([0] + list(self._element_shape or ()), self._dtype)
        return stack([self.read(i) for i in range(len(self._list))])

    def gather(self, indices, name=None):
        """The elements at `indices`, stacked."""
        return gather(self.stack(), indices)

    def concat(self, name=None):
        """The elements concatenated along their first axis."""
        if self._list is None:
            return concat(unstack(self.stack()), 0)
        return concat([self.read(i) for i in range(len(self._list))], 0)

    def unstack(self, value, name=None):
        """Writes the slices of `value` along its first axis at 0, 1, ..."""
        value = to_tensor(value, self._dtype)
        if self._list is None:
            return self._with_handle(execute(TA_SCATTER, (self._handle, value), None))
        ta = self
        for i, row in enumerate(unstack(value)):
            ta = ta.write(i, row)
        return ta

    def scatter(self, indices, value, name=None):
        """Writes value[k] at indices[k]."""
        ta = self
        for k, i in enumerate(np.asarray(indices).reshape(-1).tolist()):
            ta = ta.write(i, value[k])
        return ta

    def size(self, name=None):
        """The number of elements, as an int32 tensor."""
        if self._list is None:
            return execute(TA_SIZE, (self._handle,), None)
        return wrap(np.array(len(self._list), np.int32))

    def identity(self):
        return self

    def close(self, name=None):
        return None

    def mark_used(self):
        return None

    def __repr__(self):
        return f"<tf.TensorArray dtype={self._dtype.name}>"


def is_tensor_array(x):
    return isinstance(x, TensorArray)


__all__ = ["TensorArray"]

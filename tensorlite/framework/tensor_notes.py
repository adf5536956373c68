"""Notes attached to live tensors in side tables (a Tensor has fixed slots): Keras's mask of
a layer's output (`tensor._keras_mask`), the metric whose result a tensor is, and the
dataset rows that are rows of a ragged tensor. A note is
keyed by the tensor's id and dropped when the tensor dies.

Example:
    >>> KERAS_MASKS.set(t, mask)
    >>> KERAS_MASKS.get(t) is mask
    True
"""
import weakref


class TensorNotes:
    """One note per live tensor."""

    def __init__(self):
        self._notes = {}  # id(tensor) -> (weak reference to it, its note)

    def set(self, tensor, note):
        """Attaches `note` to `tensor` (nothing for a value that cannot be weakly
        referenced, a Python number)."""
        key = id(tensor)
        try:
            ref = weakref.ref(tensor, lambda _, k=key, notes=self._notes: notes.pop(k, None))
        except TypeError:
            return
        self._notes[key] = (ref, note)

    def get(self, tensor):
        """The note attached to `tensor`, or None."""
        entry = self._notes.get(id(tensor))
        return entry[1] if entry is not None and entry[0]() is tensor else None

    def __bool__(self):
        return bool(self._notes)


KERAS_MASKS = TensorNotes()  # keras/layers/mask_propagation.py's, read by tensor._keras_mask
# tf.data: a dense row sliced from a RaggedTensor (its spec is a RaggedTensorSpec of
# ragged_rank 0), so `batch` makes a ragged batch of such rows again, as TensorFlow does
RAGGED_ROWS = TensorNotes()

"""`tf.keras.layers.Normalization`: (x - mean) / sqrt(variance), the statistics given or
learned by `adapt(data)` over every axis but `axis` (features).

Example:
    >>> norm = tf.keras.layers.Normalization()
    >>> norm.adapt(np.array([[0.0], [2.0]]))
    >>> norm(np.array([[4.0]])).numpy()
    array([[3.]], dtype=float32)
"""
import numpy as np

from tensorlite.framework.tensor import Tensor
from tensorlite.keras import backend
from tensorlite.keras.layers.convolutional import KerasLayer
from tensorlite.ops import math_ops


def _batches(data, batch_size, steps):
    """NumPy batches of `data`: an array/tensor (split by batch_size) or a Dataset."""
    if hasattr(data, "as_numpy_iterator") or (hasattr(data, "__iter__") and
                                              not isinstance(data, (np.ndarray, Tensor,
                                                                    list, tuple))):
        for i, batch in enumerate(data):
            if steps is not None and i >= steps:
                return
            yield np.asarray(batch[0] if isinstance(batch, tuple) else batch, np.float64)
        return
    a = np.asarray(data, np.float64)
    n = batch_size or len(a) or 1
    for start in range(0, max(len(a), 1), n):
        yield a[start:start + n]


class Normalization(KerasLayer):
    """Feature-wise normalization; `invert=True` maps normalized values back."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = () if axis is None else ((axis,) if isinstance(axis, int) else
                                             tuple(axis))
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must "
                             f"be set. Got mean: {mean} and variance: {variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert
        self._stats = None  # (mean, variance) broadcastable arrays

    def _reduce_axes(self, ndim):
        keep = {a % ndim for a in self.axis}
        return tuple(i for i in range(ndim) if i not in keep)

    def adapt(self, data, batch_size=None, steps=None):
        """Learns mean and variance from `data` (arrays, tensors or a Dataset of batches)
        in one pass (float64 sums)."""
        total = total_sq = None
        count = 0
        for a in _batches(data, batch_size, steps):
            if a.ndim == 1 and self.axis == (-1,):
                a = a[:, None]
            axes = self._reduce_axes(a.ndim)
            s, sq = a.sum(axis=axes, keepdims=True), (a * a).sum(axis=axes, keepdims=True)
            total = s if total is None else total + s
            total_sq = sq if total_sq is None else total_sq + sq
            count += a.size // max(s.size, 1)
        if not count:
            raise ValueError("Normalization.adapt: the data is empty")
        mean = total / count
        self._set_stats(mean, np.maximum(total_sq / count - mean * mean, 0.0))

    def _set_stats(self, mean, variance):
        dt = np.dtype(self.dtype or "float32")
        self._stats = (np.asarray(mean, dt), np.asarray(variance, dt))
        self.adapt_mean = self.add_weight("mean", list(self._stats[0].shape),
                                          trainable=False) if not hasattr(
                                              self, "adapt_mean") else self.adapt_mean
        self.adapt_variance = self.add_weight("variance", list(self._stats[1].shape),
                                              trainable=False) if not hasattr(
                                                  self, "adapt_variance") else \
            self.adapt_variance
        self.adapt_mean.assign(self._stats[0])
        self.adapt_variance.assign(self._stats[1])

    def build(self, input_shape):
        if self.input_mean is not None and self._stats is None:
            ndim = len(input_shape)
            shape = [1] * ndim
            for a in self.axis:
                shape[a % ndim] = input_shape[a % ndim]
            mean = np.broadcast_to(np.asarray(self.input_mean, np.float64), shape)
            var = np.broadcast_to(np.asarray(self.input_variance, np.float64), shape)
            self._set_stats(mean, var)
        self.built = True

    def call(self, inputs):
        if self._stats is None and not hasattr(self, "adapt_mean"):
            raise ValueError(f"Normalization layer {self.name} has no statistics: call "
                             f"`adapt(data)` before using it, or pass `mean` and `variance`")
        x = math_ops.cast(inputs, self.dtype or "float32")
        mean, var = self.adapt_mean, self.adapt_variance
        if x.shape.rank == 1 and mean.shape.rank == 2:
            mean, var = mean[0], var[0]
        std = math_ops.maximum(math_ops.sqrt(var), backend.epsilon())
        if self.invert:
            return math_ops.add(math_ops.multiply(x, std), mean)
        return math_ops.divide(math_ops.subtract(x, mean), std)

    def get_config(self):
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": None if self.input_mean is None else np.asarray(self.input_mean)
                .tolist(), "variance": None if self.input_variance is None else
                np.asarray(self.input_variance).tolist()}

"""`tf.keras.layers.Normalization`: (x - mean) / sqrt(variance) per feature (the `axis`
dims; axis=None: one mean for everything), the statistics given (`mean`, `variance`) or
learned by `adapt(data)`.

As in Keras, building the layer creates the non-trainable weights `mean` (zeros),
`variance` (ones) and `count` (int64) that `adapt` fills; given statistics are constants.

Example:
    >>> norm = tf.keras.layers.Normalization()
    >>> norm.adapt(np.array([[0.0], [2.0]]))
    >>> norm(np.array([[4.0]])).numpy()
    array([[3.]], dtype=float32)
"""
import numpy as np

from tensorlite.framework.tensor import Tensor
from tensorlite.keras import backend
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, math_ops


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


class Normalization(Layer):
    """Feature-wise normalization; `invert=True` maps normalized values back."""

    def __init__(self, axis=-1, mean=None, variance=None, invert=False, **kwargs):
        super().__init__(**kwargs)
        self.axis = () if axis is None else ((axis,) if isinstance(axis, int) else
                                             tuple(axis))
        if (mean is None) != (variance is None):
            raise ValueError(f"When setting values directly, both `mean` and `variance` must "
                             f"be set. Got mean: {mean} and variance: {variance}")
        self.input_mean, self.input_variance, self.invert = mean, variance, invert

    def _kept(self, ndim):
        return sorted({a % ndim for a in self.axis})

    def build(self, input_shape):
        shape = list(input_shape)
        ndim = max(len(shape), 1)
        kept = self._kept(ndim) if shape else []
        feature_shape = [shape[a] for a in kept]
        if any(d is None for d in feature_shape):
            raise ValueError(f"All `axis` values to be kept must have known shape. Got axis: "
                             f"{self.axis}, input shape: {input_shape}")
        self._broadcast = [shape[i] if i in kept else 1 for i in range(len(shape))]
        if self.input_mean is None:
            self.adapt_mean = self.add_weight("mean", feature_shape, initializer="zeros",
                                              trainable=False)
            self.adapt_variance = self.add_weight("variance", feature_shape,
                                                  initializer="ones", trainable=False)
            self.count = self.add_weight("count", [], dtype="int64", initializer="zeros",
                                         trainable=False)
        self.built = True

    def adapt(self, data, batch_size=None, steps=None):
        """Learns mean and variance from `data` (arrays, tensors or a Dataset of batches)
        in one pass (float64 sums)."""
        total = total_sq = None
        count = 0
        for a in _batches(data, batch_size, steps):
            if not self.built:
                self.build((None,) + a.shape[1:])
                self._adapted_input_shape(a.shape)
            if self.input_mean is not None:
                raise ValueError("adapt() cannot be called on a Normalization layer "
                                 "initialized with `mean` and `variance`")
            axes = tuple(i for i in range(a.ndim) if i not in self._kept(a.ndim))
            s, sq = a.sum(axis=axes), (a * a).sum(axis=axes)
            total = s if total is None else total + s
            total_sq = sq if total_sq is None else total_sq + sq
            count += a.size // max(np.size(s), 1)
        if not count:
            raise ValueError("Normalization.adapt: the data is empty")
        mean = total / count
        self.adapt_mean.assign(np.asarray(mean, np.float32))
        self.adapt_variance.assign(np.asarray(np.maximum(total_sq / count - mean * mean, 0),
                                              np.float32))
        self.count.assign(np.int64(count))

    def _adapted_input_shape(self, data_shape):
        """As tf.keras 2's adapt, a layer given no input shape takes the data's rank, so a
        Sequential it starts is built (the regression tutorial's `summary()` after
        `Sequential([normalizer, Dense(64), ...])`); the kept axes keep their sizes, which
        the layers after it need."""
        if self._batch_input_shape is None:
            kept = self._kept(max(len(data_shape), 1)) if data_shape else []
            self._batch_input_shape = tuple(data_shape[i] if i in kept and i else None
                                            for i in range(len(data_shape)))

    def _stats(self):
        if self.input_mean is not None:
            mean = np.broadcast_to(np.asarray(self.input_mean, np.float32), self._broadcast)
            var = np.broadcast_to(np.asarray(self.input_variance, np.float32),
                                  self._broadcast)
            return mean, var
        return (array_ops.reshape(self.adapt_mean, self._broadcast),
                array_ops.reshape(self.adapt_variance, self._broadcast))

    @property
    def mean(self):
        """The mean in the inputs' broadcast shape (Keras 2's attribute): after `build`,
        the adapted or given statistics."""
        return self._stat(0, "mean")

    @property
    def variance(self):
        return self._stat(1, "variance")

    def _stat(self, which, name):
        if not self.built:
            raise AttributeError(f"'Normalization' layer has no attribute '{name}' before "
                                 f"it is built (call adapt() or the layer first)")
        stat = self._stats()[which]
        return stat if not isinstance(stat, np.ndarray) else math_ops.cast(stat, "float32")

    def call(self, inputs):
        x = math_ops.cast(inputs, self.dtype or "float32")
        mean, var = self._stats()
        std = math_ops.maximum(math_ops.sqrt(var), backend.epsilon())
        if self.invert:
            return math_ops.add(math_ops.multiply(x, std), mean)
        return math_ops.divide(math_ops.subtract(x, mean), std)

    def get_config(self):
        def listed(v):
            return None if v is None else np.asarray(v).tolist()
        return {**super().get_config(), "axis": self.axis, "invert": self.invert,
                "mean": listed(self.input_mean), "variance": listed(self.input_variance)}

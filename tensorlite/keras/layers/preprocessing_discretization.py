"""`tf.keras.layers.Discretization`: each value's bucket index among `bin_boundaries` (given,
or learned by `adapt` as approximate quantiles), then encoded as `output_mode` says.

Buckets are (-inf, b0), [b0, b1), ..., [b_last, inf), as `np.digitize` counts them. `adapt`
follows Keras 3's quantile summary step for step (`summarize`, `merge_summaries`,
`compress_summary`), so the learned boundaries are Keras's own, not merely close to them.
The int output is int32 as in Keras 3 (tf.keras 2 gave int64).

Example:
    >>> age = tf.constant([[10.], [93.], [57.], [18.], [37.], [5.]])
    >>> tf.keras.layers.Discretization(bin_boundaries=[18., 50.])(age).numpy().ravel()
    array([0, 2, 2, 1, 1, 0], dtype=int32)
"""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.convert import convert_to_tensor
from tensorlite.keras.layers.layer import Layer
from tensorlite.keras.layers.preprocessing_encoding import check_mode, encode
from tensorlite.ops import array_ops, math_ops

_MODES = ("int", "one_hot", "multi_hot", "count")


class Discretization(Layer):
    """Buckets continuous features by ranges (Keras 3's arguments and config)."""

    def __init__(self, bin_boundaries=None, num_bins=None, epsilon=0.01, output_mode="int",
                 sparse=False, dtype=None, name=None, **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        if sparse:
            raise NotImplementedError("Discretization(sparse=True): SparseTensor output is "
                                      "not implemented; use sparse=False")
        self.output_mode = check_mode(output_mode, _MODES, binary_alias=False)
        if num_bins is not None and num_bins < 0:
            raise ValueError(f"`num_bins` must be greater than or equal to 0. Received: "
                             f"`num_bins={num_bins}`")
        if num_bins is not None and bin_boundaries is not None:
            raise ValueError(f"Both `num_bins` and `bin_boundaries` should not be set. "
                             f"Received: `num_bins={num_bins}` and "
                             f"`bin_boundaries={bin_boundaries}`")
        if num_bins is None and bin_boundaries is None:
            raise ValueError("You need to set either `num_bins` or `bin_boundaries`.")
        self.bin_boundaries = None if bin_boundaries is None else \
            [float(b) for b in bin_boundaries]
        self.num_bins = num_bins
        self.epsilon = epsilon
        self.sparse = sparse
        self.summary = None if self.bin_boundaries else np.zeros((2, 0), np.float32)

    # -- adapt (Keras 3's quantile summary) ---------------------------------------------------
    def adapt(self, data, batch_size=None, steps=None):
        """Learns `num_bins` - 1 boundaries: approximate quantiles of every value in `data`
        (an array, a tensor, or a Dataset / iterable of batches)."""
        if self.num_bins is None:
            raise ValueError("Cannot adapt a Discretization layer that has been initialized "
                             "with `bin_boundaries`, use `num_bins` instead.")
        self.summary = np.zeros((2, 0), np.float32)
        if hasattr(data, "element_spec") or (hasattr(data, "__iter__") and not isinstance(
                data, (np.ndarray, list, tuple)) and not hasattr(data, "numpy")):
            for i, batch in enumerate(data):
                if steps is not None and i >= steps:
                    break
                self._update(batch)
        else:
            self._update(data)
        self.bin_boundaries = _compress(self.summary, 1.0 / self.num_bins)[0, :-1].tolist()

    def _update(self, batch):
        values = np.asarray(batch.numpy() if hasattr(batch, "numpy") else batch, np.float32)
        merged = np.concatenate((self.summary, _summarize(values, self.epsilon)), axis=1)
        merged = np.take(merged, np.argsort(merged[0]), axis=1)
        self.summary = _compress(merged, self.epsilon)

    # -- call --------------------------------------------------------------------------------
    def call(self, inputs):
        if self.bin_boundaries is None:
            raise ValueError("You need to either pass the `bin_boundaries` argument at "
                             "construction time or call `adapt(dataset)` before you can "
                             "start using the `Discretization` layer.")
        x = convert_to_tensor(inputs)
        if not x.dtype.is_floating:
            x = math_ops.cast(x, dtypes.float32)
        # np.digitize's index: how many boundaries are <= the value (ordinary ops, so the
        # layer traces and exports like any other)
        boundaries = convert_to_tensor(np.asarray(self.bin_boundaries,
                                                  x.dtype.as_numpy_dtype))
        above = math_ops.greater_equal(array_ops.expand_dims(x, -1), boundaries)
        ids = math_ops.reduce_sum(math_ops.cast(above, dtypes.int32), axis=-1)
        if self.output_mode == "int":
            return ids
        depth = len(self.bin_boundaries) + 1
        if self.output_mode == "one_hot" and ids.shape.rank and ids.shape.rank > 1 and \
                ids.shape[-1] == 1:
            ids = array_ops.squeeze(ids, -1)
        return encode(ids, self.output_mode, depth)

    def compute_output_shape(self, input_shape):
        shape = tuple(input_shape)
        if self.output_mode == "int":
            return shape
        depth = len(self.bin_boundaries) + 1 if self.bin_boundaries is not None else \
            self.num_bins
        if self.output_mode == "one_hot":
            return (shape[:-1] if len(shape) > 1 and shape[-1] == 1 else shape) + (depth,)
        return (shape[0],) + shape[2:] + (depth,) if len(shape) >= 2 else (depth,)

    def get_config(self):
        """Keras 3's config (its __init__ takes no `trainable`)."""
        return {"bin_boundaries": self.bin_boundaries, "num_bins": self.num_bins,
                "epsilon": self.epsilon, "output_mode": self.output_mode,
                "sparse": self.sparse, "name": self.name, "dtype": self.dtype}

    @classmethod
    def from_config(cls, config):
        """An adapted layer's config names both `num_bins` and the learned boundaries."""
        config = dict(config)
        boundaries = config.pop("bin_boundaries", None)
        if boundaries is not None and config.get("num_bins") is not None:
            layer = cls(**config)
            layer.bin_boundaries = [float(b) for b in boundaries]
            return layer
        return cls(bin_boundaries=boundaries, **config)


def _summarize(values, epsilon):
    """Keras 3's `summarize`: every step-th sorted value, weighted by the step."""
    values = np.sort(np.reshape(values, [-1]))
    step = max(np.size(values) / (1.0 / epsilon), 1)
    boundaries = values[int(step - 1)::int(step)]
    return np.stack([boundaries, np.ones_like(boundaries) * step])


def _compress(summary, epsilon):
    """Keras 3's `compress_summary`: the summary re-binned at cumulative-weight fractions
    epsilon, 2 epsilon, ..., 1 (interpolated)."""
    if summary.shape[1] * epsilon < 1:
        return summary
    percents = epsilon + np.arange(0.0, 1.0, epsilon)
    cum_weights = summary[1].cumsum()
    cum_weight_percents = cum_weights / cum_weights[-1]
    new_bins = np.interp(percents, cum_weight_percents, summary[0])
    cum_weights = np.interp(percents, cum_weight_percents, cum_weights)
    new_weights = cum_weights - np.concatenate((np.array([0]), cum_weights[:-1]))
    return np.stack((new_bins, new_weights)).astype("float32")


__all__ = ["Discretization"]

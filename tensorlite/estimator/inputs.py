"""`tf.estimator.inputs` / `tf.compat.v1.estimator.inputs`: input functions over NumPy data.

Example:
    >>> fn = numpy_input_fn({"x": np.arange(4.0)}, np.arange(4), batch_size=2, shuffle=False)
    >>> [f["x"].numpy().tolist() for f, _ in fn()]
    [[0.0, 1.0], [2.0, 3.0]]
"""
import numpy as np


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                   queue_capacity=1000, num_threads=1):
    """An input_fn yielding (features dict, labels) batches of `x` (a dict of arrays) and
    `y`, `num_epochs` times (None: forever), shuffled if asked (TF requires saying)."""
    from tensorlite.data.dataset import DatasetV2  # noqa: PLC0415
    if shuffle is None:
        raise ValueError("numpy_input_fn: shuffle must be provided explicitly (True or False)")
    if not isinstance(x, dict):
        raise TypeError(f"numpy_input_fn: x must be a dict of arrays, got {type(x).__name__}")
    sizes = {k: len(np.asarray(v)) for k, v in x.items()}
    if y is not None:
        sizes["<y>"] = len(np.asarray(y))
    if len(set(sizes.values())) > 1:
        raise ValueError(f"numpy_input_fn: x and y must have the same length, got {sizes}")

    def input_fn():
        data = {k: np.asarray(v) for k, v in x.items()}
        ds = DatasetV2.from_tensor_slices(data if y is None else (data, np.asarray(y)))
        if shuffle:
            ds = ds.shuffle(queue_capacity)
        return ds.repeat(num_epochs).batch(batch_size)
    return input_fn

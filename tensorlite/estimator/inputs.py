"""`tf.estimator.inputs` / `tf.compat.v1.estimator.inputs`: input functions over NumPy data
(numpy_input_fn) and pandas DataFrames (pandas_input_fn).

Example:
    >>> fn = numpy_input_fn({"x": np.arange(4.0)}, np.arange(4), batch_size=2, shuffle=False)
    >>> [f["x"].numpy().tolist() for f, _ in fn()]
    [[0.0, 1.0], [2.0, 3.0]]
"""
import numpy as np


def numpy_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                   queue_capacity=1000, num_threads=1):
    """An input_fn yielding (features, labels) batches of `x` (a dict of arrays, or one
    array: then features is a tensor) and `y` (an array or a dict of arrays), `num_epochs`
    times (None: forever), shuffled if asked (TF requires saying)."""
    from tensorlite.data.dataset import DatasetV2  # noqa: PLC0415
    if not isinstance(shuffle, bool):
        raise ValueError(f"numpy_input_fn: shuffle must be provided explicitly (True or "
                         f"False; True is recommended for training), got {shuffle!r}")
    if isinstance(x, dict) and isinstance(y, dict) and set(x) & set(y):
        raise ValueError(f"numpy_input_fn: {len(set(x) & set(y))} duplicate keys are found "
                         f"in both x and y: {sorted(set(x) & set(y))}")
    features, labels = _arrays(x), None if y is None else _arrays(y)
    sizes = {name: len(v) for name, v in _named(features, "x") + _named(labels, "y")}
    if len(set(sizes.values())) > 1:
        raise ValueError(f"numpy_input_fn: x and y must have the same length, got {sizes}")

    def input_fn():
        ds = DatasetV2.from_tensor_slices(features if labels is None else (features, labels))
        if shuffle:
            ds = ds.shuffle(queue_capacity)
        return ds.repeat(num_epochs).batch(batch_size)
    return input_fn


def _arrays(value):
    """A dict of arrays, or one array, as NumPy."""
    if isinstance(value, dict):
        return {k: np.asarray(v) for k, v in value.items()}
    return np.asarray(value)


def _named(value, name):
    """(name[key], array) pairs of a dict of arrays, or [(name, array)] for one array."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [(f"{name}[{k!r}]", v) for k, v in value.items()]
    return [(name, value)]


def pandas_input_fn(x, y=None, batch_size=128, num_epochs=1, shuffle=None,
                    queue_capacity=1000, num_threads=1, target_column="target"):
    """An input_fn over a pandas DataFrame `x` (one feature per column) and a Series (or
    DataFrame) `y` of labels with the same index, as numpy_input_fn batches them."""
    if shuffle is None:
        raise ValueError("pandas_input_fn: shuffle must be provided explicitly (True or False)")
    if not hasattr(x, "columns") or not hasattr(x, "index"):
        raise TypeError(f"pandas_input_fn: x must be a pandas DataFrame, got "
                        f"{type(x).__name__}")
    labels = None
    if y is not None:
        if target_column in x.columns:
            raise ValueError(f"Cannot use name {target_column} for target column since it is "
                             f"already a column name in x.")
        if not hasattr(y, "index") or not np.array_equal(np.asarray(x.index),
                                                         np.asarray(y.index)):
            raise ValueError("pandas_input_fn: x and y must be pandas objects with the same "
                             "index (Index for x and y are mismatched)")
        labels = _pandas_labels(y)
    features = {str(c): x[c].to_numpy() for c in x.columns}
    return numpy_input_fn(features, labels, batch_size=batch_size, num_epochs=num_epochs,
                          shuffle=shuffle, queue_capacity=queue_capacity,
                          num_threads=num_threads)


def _pandas_labels(y):
    """A Series' values; a one-column DataFrame's column (several columns: not supported)."""
    if hasattr(y, "columns"):
        if len(y.columns) != 1:
            raise NotImplementedError("pandas_input_fn: a y DataFrame with several columns "
                                      "(a dict of labels) is not implemented; pass a Series")
        y = y[y.columns[0]]
    return y.to_numpy()

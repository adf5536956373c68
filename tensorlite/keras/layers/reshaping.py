"""Reshaping layers: ZeroPadding1D/2D, Cropping1D/2D, UpSampling1D/2D, Permute,
RepeatVector.

Example:
    >>> tf.keras.layers.UpSampling2D()(tf.ones([1, 2, 2, 3])).shape
    TensorShape([1, 4, 4, 3])
"""
import numpy as np

from tensorlite.framework.tensor import wrap
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.keras.layers.base_layer_utils import check_ndim
from tensorlite.keras.layers.conv_utils import normalize_data_format, normalize_tuple
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops, gather_ops, math_ops


def _pairs(value, n, name):
    """int, n ints or n pairs -> n (before, after) pairs of non-negative ints."""
    if isinstance(value, int):
        out = ((value, value),) * n
    elif len(value) == n and all(isinstance(v, int) for v in value):
        out = tuple((v, v) for v in value)
    elif len(value) == n:
        out = tuple(normalize_tuple(v, 2, f"{name}[{i}]", allow_zero=True)
                    for i, v in enumerate(value))
    else:
        raise ValueError(f"`{name}` should be either an int, a tuple of {n} ints or a tuple of "
                         f"{n} tuples of 2 ints. Received: {name}={value!r}")
    if any(v < 0 for p in out for v in p):
        raise ValueError(f"`{name}` must be non-negative. Received: {name}={value!r}")
    return out


class _Spatial(Layer):
    """A layer acting on `_rank` spatial axes of channels_last/channels_first inputs."""

    _rank = 2

    def __init__(self, data_format=None, **kwargs):
        super().__init__(**kwargs)
        self.data_format = normalize_data_format(data_format)

    def _spatial_axes(self):
        start = 2 if self.data_format == "channels_first" else 1
        return list(range(start, start + self._rank))

    def _map_shape(self, input_shape, fn):
        s = TensorShape(input_shape).as_list()
        for i, ax in enumerate(self._spatial_axes()):
            s[ax] = None if s[ax] is None else fn(i, s[ax])
        return TensorShape(s)

    def get_config(self):
        config = super().get_config()
        if self._rank == 2:
            config["data_format"] = self.data_format
        return config


class ZeroPadding2D(_Spatial):
    """`tf.keras.layers.ZeroPadding2D`: zeros around the rows and columns of an image."""

    def __init__(self, padding=(1, 1), data_format=None, **kwargs):
        super().__init__(data_format, **kwargs)
        self.padding = _pairs(padding, self._rank, "padding")

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank + 2)
        pads = [[0, 0]] * (self._rank + 2)
        for p, ax in zip(self.padding, self._spatial_axes()):
            pads[ax] = list(p)
        return array_ops.pad(inputs, pads)

    def compute_output_shape(self, input_shape):
        return self._map_shape(input_shape, lambda i, n: n + sum(self.padding[i]))

    def get_config(self):
        return {**super().get_config(), "padding": self.padding}


class ZeroPadding1D(ZeroPadding2D):
    """`tf.keras.layers.ZeroPadding1D`: zeros before and after the steps of [b, steps, c]."""

    _rank = 1

    def __init__(self, padding=1, **kwargs):
        super().__init__(padding=(padding,) if isinstance(padding, int) else (tuple(padding),),
                         **kwargs)

    def get_config(self):
        return {**super().get_config(), "padding": self.padding[0]}


class Cropping2D(_Spatial):
    """`tf.keras.layers.Cropping2D`: drops rows and columns at the image's borders."""

    def __init__(self, cropping=((0, 0), (0, 0)), data_format=None, **kwargs):
        super().__init__(data_format, **kwargs)
        self.cropping = _pairs(cropping, self._rank, "cropping")

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank + 2)
        shape = inputs.shape.as_list()
        key = [slice(None)] * len(shape)
        for (a, b), ax in zip(self.cropping, self._spatial_axes()):
            if a + b >= shape[ax]:
                raise ValueError(f"Layer {self.name!r}: cropping {self.cropping} leaves nothing "
                                 f"of an input of shape {tuple(shape)}")
            key[ax] = slice(a, shape[ax] - b)
        return inputs[tuple(key)]

    def compute_output_shape(self, input_shape):
        return self._map_shape(input_shape, lambda i, n: n - sum(self.cropping[i]))

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping}


class Cropping1D(Cropping2D):
    """`tf.keras.layers.Cropping1D`: drops steps at the start and end of [b, steps, c]."""

    _rank = 1

    def __init__(self, cropping=(1, 1), **kwargs):
        super().__init__(cropping=(cropping,) if not isinstance(cropping, int) else
                         ((cropping, cropping),), **kwargs)

    def get_config(self):
        return {**super().get_config(), "cropping": self.cropping[0]}


def _bilinear_matrix(n_in, n_out, dtype):
    """[n_out, n_in] weights of TF 2's bilinear resize (half-pixel centres)."""
    src = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0, n_in - 1)
    lo = np.floor(src).astype(np.int64)
    hi = np.minimum(lo + 1, n_in - 1)
    frac = src - lo
    m = np.zeros((n_out, n_in))
    np.add.at(m, (np.arange(n_out), lo), 1 - frac)
    np.add.at(m, (np.arange(n_out), hi), frac)
    return wrap(m.astype(dtype.as_numpy_dtype))


class UpSampling2D(_Spatial):
    """`tf.keras.layers.UpSampling2D`: repeats rows and columns `size` times ('nearest') or
    resizes bilinearly ('bilinear', as tf.image.resize)."""

    def __init__(self, size=(2, 2), data_format=None, interpolation="nearest", **kwargs):
        super().__init__(data_format, **kwargs)
        self.size = normalize_tuple(size, self._rank, "size")
        if interpolation not in ("nearest", "bilinear"):
            raise ValueError(f"`interpolation` argument should be one of: 'nearest', "
                             f"'bilinear' (tensorlite). Received: {interpolation!r}.")
        self.interpolation = interpolation

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=self._rank + 2)
        out = inputs
        letters = "abcd"[:self._rank + 2]
        for s, ax in zip(self.size, self._spatial_axes()):
            if s == 1:
                continue
            if self.interpolation == "nearest":
                out = gather_ops.repeat(out, s, axis=ax)
            else:
                n = out.shape[ax]
                m = _bilinear_matrix(n, n * s, out.dtype)
                target = letters[:ax] + "z" + letters[ax + 1:]
                out = math_ops.einsum(f"z{letters[ax]},{letters}->{target}", m, out)
        return out

    def compute_output_shape(self, input_shape):
        return self._map_shape(input_shape, lambda i, n: n * self.size[i])

    def get_config(self):
        return {**super().get_config(), "size": self.size, "interpolation": self.interpolation}


class UpSampling1D(UpSampling2D):
    """`tf.keras.layers.UpSampling1D`: repeats each step `size` times."""

    _rank = 1

    def __init__(self, size=2, **kwargs):
        super().__init__(size=size, **kwargs)

    def get_config(self):
        config = super().get_config()
        config.pop("interpolation")
        return {**config, "size": self.size[0]}


class Permute(Layer):
    """`tf.keras.layers.Permute`: permutes the non-batch axes; dims are 1-based, e.g.
    Permute((2, 1)) swaps the two axes of [b, x, y]."""

    def __init__(self, dims, **kwargs):
        super().__init__(**kwargs)
        self.dims = tuple(dims)
        if sorted(self.dims) != list(range(1, len(self.dims) + 1)):
            raise ValueError(f"Invalid permutation argument `dims` for Permute Layer. The set "
                             f"of indices in `dims` must be consecutive and start from 1. "
                             f"Received dims={dims}")

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=len(self.dims) + 1)
        return array_ops.transpose(inputs, (0,) + self.dims)

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0]] + [s[d] for d in self.dims])

    def get_config(self):
        return {**super().get_config(), "dims": self.dims}


class RepeatVector(Layer):
    """`tf.keras.layers.RepeatVector`: [b, d] -> [b, n, d]."""

    def __init__(self, n, **kwargs):
        super().__init__(**kwargs)
        if not isinstance(n, int) or n < 0:
            raise TypeError(f"Expected an integer value for `n`, got {type(n).__name__} "
                            f"({n!r}).")
        self.n = n

    def call(self, inputs):
        check_ndim(self, inputs.shape, ndim=2)
        return array_ops.tile(array_ops.expand_dims(inputs, 1), [1, self.n, 1])

    def compute_output_shape(self, input_shape):
        s = TensorShape(input_shape).as_list()
        return TensorShape([s[0], self.n, s[1]])

    def get_config(self):
        return {**super().get_config(), "n": self.n}

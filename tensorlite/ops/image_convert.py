"""`tf.image.convert_image_dtype` (its registered op) and the float working image of the
colour adjustments built on it."""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, register
from tensorlite.ops import math_ops, numba_image_dtype
from tensorlite.ops.common import to_tensor


def _float_to_int(x, np_dtype):
    if np_dtype == np.uint8:  # one compiled pass (numba), the same values
        fast = numba_image_dtype.float32_to_uint8(x)
        if fast is not None:
            return fast
    info = np.iinfo(np_dtype)
    scaled = x * x.dtype.type(info.max + 0.5)
    return np.clip(scaled.astype(np.float64), info.min, info.max).astype(np_dtype)


def _int_to_int(x, np_dtype, saturate):
    imax, omax = int(np.iinfo(x.dtype).max), int(np.iinfo(np_dtype).max)
    info = np.iinfo(np_dtype)
    if imax > omax:  # scale down first, then cast
        y = x // ((imax + 1) // (omax + 1))
        return (np.clip(y, info.min, info.max) if saturate else y).astype(np_dtype)
    y = np.clip(x, max(info.min, int(np.iinfo(x.dtype).min)), info.max) if saturate else x
    return y.astype(np_dtype) * np_dtype((omax + 1) // (imax + 1))


def _convert_fwd(x, dtype, saturate):
    np_dtype = dtype.as_numpy_dtype
    if x.dtype.kind in "iu":
        if dtype.is_integer:
            return _int_to_int(x, np_dtype, saturate)
        return x.astype(np_dtype) * np_dtype(1.0 / np.iinfo(x.dtype).max)
    return _float_to_int(x, np_dtype)


# Integer on one side at least: nothing to differentiate (float->float is a tf.cast).
CONVERT = register(
    "ConvertImageDtype", _convert_fwd, grad=NOT_DIFFERENTIABLE,
    shape=lambda x, dtype, saturate: Spec(x.shape, dtype),
    unsupported="tf onnx tflite batch tf_import")


def convert_image_dtype(image, dtype, saturate=False, name=None):
    """`tf.image.convert_image_dtype`: converts, scaling integers' [0, MAX] to floats' [0, 1].

    >>> tf.image.convert_image_dtype(tf.constant([0, 255], tf.uint8), tf.float32).numpy()
    array([0., 1.], dtype=float32)"""
    x = to_tensor(image)
    dtype = dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer):
        raise AttributeError(f"convert_image_dtype: dtype must be either floating point or "
                             f"integer, got {dtype.name}")
    if not (x._dtype.is_floating or x._dtype.is_integer):
        raise AttributeError(f"convert_image_dtype: image dtype must be either floating point "
                             f"or integer, got {x._dtype.name}")
    if x._dtype is dtype:
        return x
    if x._dtype.is_floating and dtype.is_floating:
        return math_ops.cast(x, dtype)
    return execute(CONVERT, (x,), {"dtype": dtype, "saturate": bool(saturate)})


def to_float(x):
    """The working image of TF's colour adjustments: floats as they are, integers scaled to
    float32 [0, 1]."""
    return x if x._dtype.is_floating else convert_image_dtype(x, dtypes.float32)


def from_float(y, orig):
    """`y` (the float working image) back in the dtype `orig`, saturating integers."""
    return y if y._dtype is orig else convert_image_dtype(y, orig, saturate=True)

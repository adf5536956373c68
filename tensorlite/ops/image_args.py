"""What the tf.image op modules (image_ops, image_color, image_resize) share: their
argument checks, worded as TensorFlow's, and small helpers for scalars and random draws."""
import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import OBSERVERS, invalid
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import math_ops, random_ops
from tensorlite.ops.common import to_tensor

IMAGE_KINDS = "fiu"


def shape_str(x):
    """The shape of `x` as a list, as the error messages write it."""
    return list(x._value.shape)


def image_arg(op_name, image, ranks=(3, 4), arg="image"):
    """Converts `image` and checks its rank (ValueError, as TF's static shape checks)."""
    x = to_tensor(image)
    nd = x._value.ndim
    if ranks is None:
        if nd < 3:
            raise ValueError(f"{op_name}: '{arg}' (shape {shape_str(x)}) must be at least "
                             f"three-dimensional: [height, width, channels] or "
                             f"[..., height, width, channels]")
    elif nd not in ranks:
        want = " or ".join(str(r) for r in ranks)
        raise ValueError(f"{op_name}: '{arg}' (shape {shape_str(x)}) must have {want} "
                         f"dimensions: [height, width, channels] or [batch, height, width, "
                         f"channels]; use tf.expand_dims or tf.reshape")
    if any(d == 0 for d in x._value.shape[-3:]):
        raise ValueError(f"{op_name}: all dims of '{arg}.shape' must be > 0, got "
                         f"{shape_str(x)}")
    return x


def at_least_3d(op_name, x, channels=None):
    """The kernel-side checks of TF's colour ops (InvalidArgumentError)."""
    if x._value.ndim < 3:
        raise invalid(op_name, f"{op_name}: input must be at least 3-D, got shape "
                      f"{shape_str(x)}")
    if channels is not None and x._value.shape[-1] != channels:
        raise invalid(op_name, f"{op_name}: input must have {channels} channels but input only "
                      f"has {x._value.shape[-1]} channels (shape {shape_str(x)})")
    return x


def numeric(op_name, x):
    """`x` if its dtype is an integer or floating one (images), else TypeError."""
    if x._dtype.kind not in IMAGE_KINDS:
        raise TypeError(f"{op_name}: images must be of an integer or floating dtype, got "
                        f"{x._dtype.name}")
    return x


def float_only(op_name, x):
    """`x` if its dtype is floating (the ops TF defines on float images only), else
    TypeError naming convert_image_dtype."""
    if not x._dtype.is_floating:
        raise TypeError(f"{op_name}: Value passed to parameter 'images' has DataType "
                        f"{x._dtype.name} not in list of allowed values: float16, bfloat16, "
                        f"float32, float64; convert it with tf.image.convert_image_dtype")
    return x


def int_arg(v, what):
    """An integer argument (a Python int or an integer scalar tensor) as an int;
    TypeError for anything else."""
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        v = np.asarray(v)
    if isinstance(v, np.ndarray):
        if v.ndim != 0 or v.dtype.kind not in "iu":
            raise TypeError(f"{what} must be an integer scalar, got {v.dtype} of shape "
                            f"{list(v.shape)}")
        v = v.item()
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer, got {v!r}")
    return int(v)


def float_arg(v, what):
    """A number argument (a Python number or a scalar tensor) as a float; TypeError
    for anything else."""
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        v = np.asarray(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a number, got {v!r}") from None


def scalar_like(v, x):
    """`v` as a tensor of `x`'s dtype: Python numbers convert directly (no float32 detour),
    tensors are cast (differentiably)."""
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        return math_ops.cast(v, x._dtype)
    return to_tensor(v, dtype=x._dtype)


def const_like(values, x):
    """`values` as a constant tensor of `x`'s NumPy dtype."""
    return wrap(np.asarray(values, dtype=x._value.dtype))


def _is_number(v):
    return type(v) in (int, float)


def uniform_draw(shape, lo, hi, seed, stateless, dtype=dtypes.float32):
    """A uniform draw in [lo, hi): stateless from `seed` when `stateless`, else
    through tf.random.uniform's global/op seed rules."""
    if not stateless and not OBSERVERS and dtype is dtypes.float32 and \
            _is_number(lo) and _is_number(hi) and isinstance(shape, list) and not shape:
        return wrap(random_ops.scalar_uniform(lo, hi, seed))  # eager: no ops, same value
    if stateless:
        return random_ops.stateless_uniform(shape, seed, minval=lo, maxval=hi, dtype=dtype)
    return random_ops.uniform(shape, minval=lo, maxval=hi, dtype=dtype, seed=seed)

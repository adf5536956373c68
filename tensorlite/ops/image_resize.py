"""`tf.image.resize` and `resize_with_pad`: separable tap tables per method (bilinear,
bicubic, area, lanczos, gaussian, mitchellcubic; nearest by index), with their registered
ops and gradients.
"""
import functools
import math

import numpy as np

from tensorlite.framework import dtypes
from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import Spec, register
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops import gather_ops, math_ops, numba_resize
from tensorlite.ops.common import DECLINED, fast_path
from tensorlite.ops.image_args import image_arg, int_arg, numeric
from tensorlite.ops.image_ops import pad_to_bounding_box

__all__ = []  # TensorFlow exports these under tf.image only


# -- resize ------------------------------------------------------------------------------------
class ResizeMethod:
    """`tf.image.ResizeMethod`: the names `tf.image.resize` accepts."""
    BILINEAR = "bilinear"
    NEAREST_NEIGHBOR = "nearest"
    BICUBIC = "bicubic"
    AREA = "area"
    LANCZOS3 = "lanczos3"
    LANCZOS5 = "lanczos5"
    GAUSSIAN = "gaussian"
    MITCHELLCUBIC = "mitchellcubic"


_METHODS = ("bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian",
            "mitchellcubic")


def _keys_cubic(x, a=-0.5):
    x = np.abs(x)
    near = ((a + 2) * x - (a + 3)) * x * x + 1
    far = ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _mitchell(x, b=1 / 3, c=1 / 3):
    x = np.abs(x)
    near = ((12 - 9 * b - 6 * c) * x ** 3 + (-18 + 12 * b + 6 * c) * x ** 2 + (6 - 2 * b)) / 6
    far = ((-b - 6 * c) * x ** 3 + (6 * b + 30 * c) * x ** 2 + (-12 * b - 48 * c) * x
           + (8 * b + 24 * c)) / 6
    return np.where(x < 1, near, np.where(x < 2, far, 0.0))


def _lanczos(n):
    return lambda x: np.where(np.abs(x) < n, np.sinc(x) * np.sinc(x / n), 0.0)


# name -> (kernel function, radius)
_KERNELS = {
    "bilinear": (lambda x: np.maximum(0.0, 1.0 - np.abs(x)), 1.0),
    "bicubic": (_keys_cubic, 2.0),
    "lanczos3": (_lanczos(3), 3.0),
    "lanczos5": (_lanczos(5), 5.0),
    "gaussian": (lambda x: np.where(np.abs(x) < 1.5, np.exp(-x * x / (2 * 0.5 ** 2)), 0.0), 1.5),
    "mitchellcubic": (_mitchell, 2.0),
}


def _bilinear_taps(n_in, n_out, np_dtype):
    """TF's half-pixel bilinear sampling, in the image's float precision."""
    f = np_dtype.type
    pos = (np.arange(n_out, dtype=np_dtype) + f(0.5)) * (f(n_in) / f(n_out)) - f(0.5)
    low = np.floor(pos)
    frac = pos - low
    lo = np.maximum(low, 0).astype(np.intp)
    hi = np.minimum(np.ceil(pos), n_in - 1).astype(np.intp)
    return np.stack([lo, hi], 1), np.stack([1 - frac, frac], 1)


def _area_taps(n_in, n_out):
    """Each output averages the input span [i * s, (i + 1) * s) by overlap (TF's area)."""
    s = n_in / n_out
    start = np.arange(n_out) * s
    end = start + s
    first = np.floor(start).astype(np.intp)
    idx = first[:, None] + np.arange(int(math.ceil(s)) + 1)
    overlap = np.minimum(idx + 1, end[:, None]) - np.maximum(idx, start[:, None])
    w = np.clip(overlap, 0, None) / s
    return np.minimum(idx, n_in - 1), w


def _kernel_taps(method, antialias, n_in, n_out):
    """TF's scale-and-translate sampling: kernel taps at input pixel centres, stretched by
    the downscale factor when antialiasing, out-of-image taps dropped, weights normalised."""
    kernel, radius = _KERNELS[method]
    inv_scale = n_in / n_out
    ks = max(inv_scale, 1.0) if antialias else 1.0
    centre = (np.arange(n_out) + 0.5) * inv_scale
    start = np.ceil(centre - radius * ks - 0.5).astype(np.intp)
    idx = start[:, None] + np.arange(int(math.ceil(2 * radius * ks)) + 1)
    dist = (idx + 0.5 - centre[:, None]) / ks
    w = np.where((idx >= 0) & (idx < n_in) & (np.abs(dist) <= radius), kernel(dist), 0.0)
    total = w.sum(1, keepdims=True)
    w = np.where(np.abs(total) >= 1000 * np.finfo(np.float32).tiny, w / np.where(
        total == 0, 1, total), 0.0)
    return np.clip(idx, 0, n_in - 1), w


@functools.lru_cache(maxsize=256)
def _taps(method, antialias, n_in, n_out, dtype_str):
    """(indices [n_out, T], weights [n_out, T]) of resampling one axis."""
    np_dtype = np.dtype(dtype_str)
    if method == "bilinear" and not antialias:
        idx, w = _bilinear_taps(n_in, n_out, np_dtype)
    elif method == "area":
        idx, w = _area_taps(n_in, n_out)
    else:
        idx, w = _kernel_taps(method, antialias, n_in, n_out)
    w = w.astype(np_dtype)
    idx.flags.writeable = w.flags.writeable = False
    return idx, w


@functools.lru_cache(maxsize=256)
def _dense(method, antialias, n_in, n_out, dtype_str):
    """The same resampling as a dense [n_out, n_in] matrix (for the transposed map)."""
    idx, w = _taps(method, antialias, n_in, n_out, dtype_str)
    m = np.zeros((n_out, n_in), dtype=w.dtype)
    np.add.at(m, (np.repeat(np.arange(n_out), idx.shape[1]), idx.reshape(-1)), w.reshape(-1))
    m.flags.writeable = False
    return m


def _apply_taps(x, idx, w, axis):
    shape = [1] * x.ndim
    shape[axis] = -1
    out = None
    for t in range(idx.shape[1]):  # a handful of taps; each is one vectorised pass
        term = np.take(x, idx[:, t], axis=axis)
        term *= w[:, t].reshape(shape)
        if out is None:
            out = term
        else:
            out += term
    return out


def _resize_fwd(x, size, method, antialias):
    ih, iw = x.shape[-3], x.shape[-2]
    oh, ow = size
    th = _taps(method, antialias, ih, oh, x.dtype.str)
    tw = _taps(method, antialias, iw, ow, x.dtype.str)
    if method == "bilinear" and not antialias:
        fast = numba_resize.bilinear(x, size, th, tw)
        if fast is not None:
            return fast
    # Gathering whole rows (axis -3) is ~5x cheaper per element than gathering columns
    # (axis -2): choose the order that does the least column work.
    if 2 * ih * ow < oh * iw + oh * ow:
        return _apply_taps(_apply_taps(x, *tw, -2), *th, -3)
    return _apply_taps(_apply_taps(x, *th, -3), *tw, -2)


def _resize_transposed(g, in_size, method, antialias):
    oh, ow, c = g.shape[-3:]
    ih, iw = in_size
    mh = _dense(method, antialias, ih, oh, g.dtype.str)
    mw = _dense(method, antialias, iw, ow, g.dtype.str)
    lead = g.shape[:-3]
    t = np.matmul(mh.T, g.reshape(lead + (oh, ow * c))).reshape(lead + (ih, ow, c))
    return np.matmul(mw.T, t)


def _def_resize(name):
    """A resize op and its gradient op (the transposed map); each is the other's gradient."""
    def grad(g, ans, x, size, method, antialias):
        return execute(grad_op, (g,), {"in_size": tuple(x._value.shape[-3:-1]),
                                       "method": method, "antialias": antialias})

    def grad_grad(gg, ans, g, in_size, method, antialias):
        return execute(op, (gg,), {"size": tuple(g._value.shape[-3:-1]), "method": method,
                                   "antialias": antialias})

    # no exporter or batching rule for resizing yet: declared unsupported
    op = register(name, _resize_fwd, grad=grad, unsupported="tf onnx tflite batch tf_import",
                  shape=lambda x, size, method, antialias: Spec(
                      tuple(x.shape[:-3]) + tuple(size) + (x.shape[-1],), x.dtype))
    grad_op = register(name + "Grad", _resize_transposed, grad=grad_grad,
                       unsupported="tf onnx tflite batch tf_import",
                       shape=lambda g, in_size, method, antialias: Spec(
                           tuple(g.shape[:-3]) + tuple(in_size) + (g.shape[-1],), g.dtype))
    return op


RESIZE_BILINEAR = _def_resize("ResizeBilinear")
RESIZE_BICUBIC = _def_resize("ResizeBicubic")
RESIZE_AREA = _def_resize("ResizeArea")
SCALE_AND_TRANSLATE = _def_resize("ScaleAndTranslate")
_RESIZE_OPS = {"bilinear": RESIZE_BILINEAR, "bicubic": RESIZE_BICUBIC, "area": RESIZE_AREA}


def _nearest(x, oh, ow):
    """TF2's half-pixel nearest neighbour: floor((i + 0.5) * in / out), computed in float32."""
    def index(n_in, n_out):
        scale = np.float32(n_in) / np.float32(n_out)
        pos = np.floor((np.arange(n_out, dtype=np.float32) + np.float32(0.5)) * scale)
        return wrap(np.minimum(pos, n_in - 1).astype(np.int32))
    ih, iw = x._value.shape[-3:-1]
    nd = x._value.ndim
    y = gather_ops.gather(x, index(ih, oh), axis=nd - 3)
    return gather_ops.gather(y, index(iw, ow), axis=nd - 2)


def _size_arg(op_name, size):
    if isinstance(size, (Tensor, np.ndarray)) or getattr(size, "_is_variable", False):
        arr = np.asarray(size)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"{op_name}: 'size' must be an integer tensor, got {arr.dtype}")
        vals = arr.reshape(-1).tolist() if arr.ndim == 1 else None
    else:
        try:
            vals = list(size)
        except TypeError:
            vals = None
        if vals is not None and any(isinstance(v, (float, np.floating)) for v in vals):
            raise TypeError(f"{op_name}: 'size' must hold integers, got {size!r}")
    if vals is None or len(vals) != 2:
        raise ValueError(f"{op_name}: 'size' must be a 1-D Tensor of 2 elements: new_height, "
                         f"new_width; got {size!r}")
    return [int_arg(v, f"{op_name}: size") for v in vals]


def _aspect_size(h, w, nh, nw):
    f32 = np.float32
    scale = min(f32(nh) / f32(h), f32(nw) / f32(w))
    return int(np.round(f32(scale) * f32(h))), int(np.round(f32(scale) * f32(w)))


def _resize_float(x):
    """Resized images are float32 as in TF (float64 kept; see the module notes)."""
    return x if x._dtype in (dtypes.float32, dtypes.float64) else \
        math_ops.cast(x, dtypes.float32)


def _resize_fast(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
                 antialias=False, name=None):
    # eager bilinear resize of a uint8/float32 image [H, W, C] or batch to a size of two
    # positive Python ints (a tf.data map's augmentation: its Python runs under the GIL)
    if method != "bilinear" or preserve_aspect_ratio or antialias or \
            type(images) is not Tensor or type(size) not in (list, tuple) or len(size) != 2 or \
            any(type(v) is not int or v <= 0 for v in size):
        return DECLINED
    x = images._value
    if x.dtype not in (np.uint8, np.float32) or x.ndim not in (3, 4) or 0 in x.shape:
        return DECLINED
    f = x.astype(np.float32) if x.dtype == np.uint8 else x  # _resize_float's cast
    return wrap(_resize_fwd(f, tuple(size), "bilinear", False))


@fast_path(_resize_fast)
def resize(images, size, method=ResizeMethod.BILINEAR, preserve_aspect_ratio=False,
           antialias=False, name=None):
    """`tf.image.resize`: resamples height and width with TF2's half-pixel centres; float32
    out except for 'nearest', which keeps the dtype.

    >>> tf.image.resize(tf.zeros([64, 48, 3], tf.uint8), (224, 224)).dtype
    tf.float32"""
    x = image_arg("resize", images, arg="images")
    numeric("resize", x)
    method = str(getattr(method, "value", method)).lower()
    if method not in _METHODS:
        raise ValueError(f"resize: Resize method is not implemented: [{method}]; use one of "
                         f"{list(_METHODS)}")
    oh, ow = _size_arg("resize", size)
    ih, iw = x._value.shape[-3:-1]
    if preserve_aspect_ratio:
        oh, ow = _aspect_size(ih, iw, oh, ow)
    if oh <= 0 or ow <= 0:
        raise invalid("ResizeBilinear" if method == "bilinear" else "Resize",
                      f"resize: output dimensions must be positive, got size [{oh}, {ow}]")
    if method == "nearest":
        return _nearest(x, oh, ow)
    op = SCALE_AND_TRANSLATE if antialias and method == "bicubic" else \
        _RESIZE_OPS.get(method, SCALE_AND_TRANSLATE)
    return execute(op, (_resize_float(x),), {"size": (oh, ow), "method": method,
                                             "antialias": bool(antialias)})


def resize_with_pad(image, target_height, target_width, method=ResizeMethod.BILINEAR,
                    antialias=False):
    """`tf.image.resize_with_pad`: resizes keeping the aspect ratio, then pads with zeros
    to the target size, centred."""
    x = image_arg("resize_with_pad", image)
    th = int_arg(target_height, "resize_with_pad: target_height")
    tw = int_arg(target_width, "resize_with_pad: target_width")
    if th <= 0 or tw <= 0:
        raise ValueError(f"resize_with_pad: target_height and target_width must be > 0, got "
                         f"{th}, {tw}")
    h, w = (np.float32(d) for d in x._value.shape[-3:-1])
    ratio = max(w / np.float32(tw), h / np.float32(th))
    rh, rw = h / ratio, w / ratio
    resized = resize(x, [int(np.floor(rh)), int(np.floor(rw))], method=method,
                     antialias=antialias)
    ph = max(0, int(np.floor((np.float32(th) - rh) / 2)))
    pw = max(0, int(np.floor((np.float32(tw) - rw) / 2)))
    return pad_to_bounding_box(resized, ph, pw, th, tw)

"""`tf.signal.frame` and `tf.signal.overlap_and_add`, composed from registered ops (gather,
pad, reshape, transpose, reduce_sum) so that both are differentiable."""
import math

import numpy as np

from tensorlite.framework import errors
from tensorlite.graph import control_flow
from tensorlite.ops import array_ops, gather_ops, math_ops
from tensorlite.ops.common import int_list, tensor_args, to_tensor


def _positive_int(value, what, op_name):
    (n,) = int_list(value, what)
    if n is None or n < 1:
        raise errors.InvalidArgumentError(
            None, None, f"{op_name}: {what} must be a positive integer, got {value!r}")
    return n


def frame(signal, frame_length, frame_step, pad_end=False, pad_value=0, axis=-1, name=None):
    """`tf.signal.frame`: slices `signal` along `axis` into frames of `frame_length` samples
    that start every `frame_step` samples; that axis becomes [num_frames, frame_length].

    With pad_end=False frames that would run past the end are dropped; with pad_end=True
    the end is padded with `pad_value` so that ceil(length / frame_step) frames fit.

    >>> tf.signal.frame(tf.range(6), 3, 2).numpy()
    array([[0, 1, 2],
           [2, 3, 4]], dtype=int32)
    """
    x = to_tensor(signal)
    length_n = _positive_int(frame_length, "frame_length", "frame")
    step = _positive_int(frame_step, "frame_step", "frame")
    rank = x._value.ndim
    if rank < 1:
        raise errors.InvalidArgumentError(None, None, "frame: signal must have rank at least "
                                          "1, got a scalar")
    (axis,) = int_list(axis, "axis")
    if not -rank <= axis < rank:
        raise errors.InvalidArgumentError(None, None, f"frame: axis {axis} is out of range for "
                                          f"a signal of rank {rank}")
    axis %= rank
    varies = _varies(x, axis)
    if pad_end:
        x = _pad_end(x, axis, length_n, step, pad_value)
    if varies:
        return gather_ops.gather(x, _dynamic_index(x, axis, length_n, step, pad_end), axis=axis)
    length = x._value.shape[axis]
    num_frames = (-(-(length - length_n) // step) if pad_end else
                  max(0, 1 + (length - length_n) // step))
    index = step * np.arange(num_frames)[:, None] + np.arange(length_n)[None, :]
    return gather_ops.gather(x, index.astype(np.int32), axis=axis)


def _varies(x, axis):
    """Whether x's size along axis varies in the polymorphic graph being traced (then the
    frames are counted at run time from tf.shape, as TensorFlow does). Tensor.shape shows
    tensorlite's own code the concrete size, so this asks the trace for the static one."""
    shape = control_flow.static_shape(control_flow.outer_tracer(), x)
    return shape is not None and shape[axis] is None


def _pad_end(x, axis, length_n, step, pad_value):
    """Appends frame_length samples of pad_value along axis: enough for TF's
    ceil(length / frame_step) frames (the last starts before the end, so it needs fewer
    than frame_length more); frame() then takes only the frames TF's padding allows."""
    x, value = tensor_args("frame", (x, pad_value), names=("signal", "pad_value"))
    paddings = [[0, 0]] * x._value.ndim
    paddings[axis] = [0, length_n]
    return array_ops.pad(x, paddings, constant_values=value)


def _dynamic_index(x, axis, length_n, step, pad_end):
    length = array_ops.shape(x)[axis] - (length_n if pad_end else 0)
    if pad_end:
        count = (length + (step - 1)) // step
    else:
        count = math_ops.maximum(0, (length - length_n) // step + 1)
    return array_ops.range(count)[:, None] * step + array_ops.range(length_n)[None, :]


def overlap_and_add(signal, frame_step, name=None):
    """`tf.signal.overlap_and_add`: sums frames [..., frames, frame_length] placed every
    `frame_step` samples into a signal of (frames - 1) * frame_step + frame_length samples.
    """
    x = to_tensor(signal)
    step = _positive_int(frame_step, "frame_step", "overlap_and_add")
    shape = x._value.shape
    if len(shape) < 2:
        raise errors.InvalidArgumentError(None, None, f"overlap_and_add: signal must have rank "
                                          f"at least 2, got shape {list(shape)}")
    outer, frames, length = list(shape[:-2]), shape[-2], shape[-1]
    if frames == 0:
        return array_ops.zeros(outer + [max(0, length - step)], x._dtype)
    output_length = length + step * (frames - 1)
    # TensorFlow's construction: cut each frame into `segments` pieces of frame_step samples,
    # shear the [frames, segments] grid so pieces that land on the same output block line
    # up in one column, then sum the columns.
    segments = math.ceil(length / step)
    paddings = [[0, 0]] * len(outer) + [[0, segments], [0, segments * step - length]]
    x = array_ops.pad(x, paddings)
    x = array_ops.reshape(x, outer + [frames + segments, segments, step])
    n = len(outer)
    x = array_ops.transpose(x, list(range(n)) + [n + 1, n, n + 2])
    x = array_ops.reshape(x, outer + [(frames + segments) * segments, step])
    x = x[..., :(frames + segments - 1) * segments, :]
    x = array_ops.reshape(x, outer + [segments, frames + segments - 1, step])
    x = math_ops.reduce_sum(x, axis=-3)
    x = array_ops.reshape(x, outer + [(frames + segments - 1) * step])
    return x[..., :output_length]

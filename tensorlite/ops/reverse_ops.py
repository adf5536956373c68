"""Reordering elements: tf.reverse and tf.roll, each op's registration with its rules."""
import numpy as np

from tensorlite.framework.dispatch import execute, invalid
from tensorlite.framework.registry import register
from tensorlite.ops.common import composite_aware, int_list, to_tensor


REVERSE = register("ReverseV2", lambda x, axis: np.flip(x, axis),
                   grad=lambda g, ans, x, axis: execute(REVERSE, (g,), {"axis": axis}),
                   shape=lambda x, axis: x, unsupported="onnx tflite batch",
                   # TF takes the (possibly negative) axes as an int32 input tensor
                   tf=lambda a, specs: ("ReverseV2", {}, [0, np.asarray(a["axis"], np.int32)]),
                   tf_outputs="output",
                   tf_import=lambda ins, a: reverse(ins[0], np.asarray(ins[1]).tolist()))


@composite_aware("reverse")
def reverse(tensor, axis, name=None):
    """`tf.reverse`: flips the tensor along each dimension in `axis`.

    >>> tf.reverse(tf.constant([[1, 2], [3, 4]]), [1]).numpy()
    array([[2, 1],
           [4, 3]], dtype=int32)"""
    x = to_tensor(tensor)
    nd = x._value.ndim
    axes = int_list(axis, "axis")
    for a in axes:
        if not -nd <= a < nd:
            raise invalid("ReverseV2", f"'axis'[{axes.index(a)}] = {a} is out of valid range "
                          f"[{-nd}, {nd}) for a tensor of shape {list(x._value.shape)}")
    norm = [a % nd for a in axes]
    if len(set(norm)) != len(norm):
        raise invalid("ReverseV2", f"axis {axes} names a dimension more than once")
    # Negative axes let the same op flip a cotangent that carries leading batch dims.
    return execute(REVERSE, (x,), {"axis": tuple(a - nd for a in norm)})


ROLL = register("Roll", lambda x, shift, axis: np.roll(x, shift, axis),
                grad=lambda g, ans, x, shift, axis: execute(
                    ROLL, (g,), {"shift": tuple(-s for s in shift), "axis": axis}),
                shape=lambda x, shift, axis: x, unsupported="tf onnx tflite batch tf_import")


def roll(input, shift, axis, name=None):  # noqa: A002
    """`tf.roll`: shifts elements cyclically by `shift[i]` along `axis[i]` (repeated axes
    add up).

    >>> tf.roll(tf.constant([0, 1, 2, 3]), 1, 0).numpy()
    array([3, 0, 1, 2], dtype=int32)"""
    x = to_tensor(input)
    nd = x._value.ndim
    shifts, axes = int_list(shift, "shift"), int_list(axis, "axis")
    if len(shifts) != len(axes):
        raise invalid("Roll", f"shift and axis must have the same size, got shift {shifts} and "
                      f"axis {axes}")
    for a in axes:
        if not -nd <= a < nd:
            raise invalid("Roll", f"axis {a} is out of range for a tensor of shape "
                          f"{list(x._value.shape)}; use an axis in [{-nd}, {nd})")
    return execute(ROLL, (x,), {"shift": tuple(shifts),
                                "axis": tuple(a % nd - nd for a in axes)})

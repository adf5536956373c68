"""What the array op modules (reshape_ops, concat_ops, creation_ops, ...) and gather_ops
share: the check on a new tensor's dims, the leading (batch) shape of a cotangent, and the
int32 constants TensorFlow's export rules take for attributes."""
import os

import numpy as np

from tensorlite.framework import errors
from tensorlite.framework.dispatch import invalid
from tensorlite.ops.common import batch_dims, int_list


def lead_shape(g, ans):
    """The leading dimensions a cotangent `g` carries beyond its op's output `ans`."""
    return tuple(g._value.shape[:batch_dims(g, ans)])


def int32s(values):
    """`values` as an int32 array: attributes TensorFlow's ops take as input tensors
    (export rules, tensorlite/saved_model/function_def.py) become such constant inputs."""
    return np.asarray(list(values), np.int32)


def _physical_memory():
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return 1 << 40


# Larger requests are refused up front with TF's error, rather than NumPy's MemoryError or
# an overcommitted array that fails later when touched.
MAX_ALLOC_BYTES = _physical_memory()


def checked_dims(shape, op_name="Fill", dtype=None):
    """The dims of a new tensor: nonnegative, and not more memory than can exist."""
    dims = tuple(int_list(shape, "shape")) if not isinstance(shape, int) else (shape,)
    for i, d in enumerate(dims):
        if d is None or d < 0:
            raise invalid(op_name, f"dims[{i}] = {d} must be nonnegative; a new tensor needs a "
                          f"fully known shape")
    itemsize = np.dtype(dtype.as_numpy_dtype if dtype is not None and not dtype.is_string
                        else np.float32).itemsize
    nbytes = int(np.prod(dims, dtype=object)) * itemsize if dims else itemsize
    if nbytes > MAX_ALLOC_BYTES:
        raise errors.ResourceExhaustedError(
            None, None, f"OOM when allocating tensor with shape{list(dims)} and type "
            f"{dtype.name if dtype is not None else 'float32'}: {nbytes} bytes asked for "
            f"[Op:{op_name}]")
    return dims

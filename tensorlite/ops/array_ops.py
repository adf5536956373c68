"""Array ops, `tf`'s names for them in one place: each concern has its own module, and this
one hands their names on (`from tensorlite.ops.array_ops import reshape` keeps working).

- reshape_ops: reshape, transpose, expand_dims, squeeze, identity, broadcast_to
- shape_ops: shape, size, rank, ensure_shape
- concat_ops: concat, split, stack, unstack
- tile_pad_ops: tile, pad
- creation_ops: zeros, ones, fill, zeros_like, ones_like, range, linspace, meshgrid
- reverse_ops: reverse, roll
- unique_ops: unique
- array_common: what they share (the new-tensor dims check, `checked_dims`)

Gather and scatter ops are in gather_ops, slicing in slice_ops.
"""
from tensorlite.ops.array_common import MAX_ALLOC_BYTES, checked_dims  # noqa: F401
from tensorlite.ops.concat_ops import (CONCAT, SPLIT, STACK, UNSTACK, concat,  # noqa: F401
                                       split, stack, unstack)
from tensorlite.ops.creation_ops import (ONES_LIKE, RANGE, ZEROS_LIKE, fill,  # noqa: F401
                                         linspace, meshgrid, ones, ones_like, range, zeros,
                                         zeros_like)
from tensorlite.ops.reshape_ops import (BROADCAST_TO, IDENTITY, RESHAPE,  # noqa: F401
                                        TRANSPOSE, broadcast_to, expand_dims, identity,
                                        reshape, squeeze, transpose)
from tensorlite.ops.reverse_ops import REVERSE, ROLL, reverse, roll  # noqa: F401
from tensorlite.ops.shape_ops import (ENSURE_SHAPE, RANK, SHAPE, SIZE,  # noqa: F401
                                      ensure_shape, rank, shape, size)
from tensorlite.ops.tile_pad_ops import (MIRROR_PAD, MIRROR_PAD_GRAD, PAD, TILE,  # noqa: F401
                                         pad, tile)
from tensorlite.ops.unique_ops import Unique, unique  # noqa: F401

__all__ = ["reshape", "transpose", "expand_dims", "squeeze", "identity", "broadcast_to",
           "zeros", "ones", "fill", "zeros_like", "ones_like", "concat", "stack", "unstack",
           "split", "shape", "size", "rank", "tile", "pad", "range", "reverse", "linspace",
           "roll", "meshgrid", "unique", "ensure_shape"]

"""`tf.config.experimental.enable_op_determinism()`: the same inputs give the same outputs,
bit for bit, on every run on the same machine.

By default three choices are made by measurement, and each can change the last bits of a
result from one run to the next:
  * a kernel that splits its runs of images (or rows) over the intra-op threads pulls them
    dynamically, and where it sums partial results (a filter gradient, a bias gradient, a
    matmul split along its contraction) the partition decides the order of the additions;
    how many threads it gets is timed, and capped by the load;
  * each convolution shape takes the algorithm measured fastest on its first call
    (im2col, Winograd, ...: different arithmetic);
  * the same for filter gradients.
With determinism on, split kernels run on one thread and the algorithm is the first
eligible one in the fixed preference order. Plain BLAS calls keep their threads (OpenBLAS
splits a GEMM's output among them, never the sum behind one element), and so do tf.data's
parallel map (its order is kept and its random ops are seeded per element). As in
TensorFlow, this costs speed: a CIFAR CNN's step loses its split convolutions.
TF_DETERMINISTIC_OPS=1 in the environment (TensorFlow's older switch) turns it on too.

Example:
    >>> tf.keras.utils.set_random_seed(1)
    >>> tf.config.experimental.enable_op_determinism()
"""
import os

_STATE = {"on": os.environ.get("TF_DETERMINISTIC_OPS", "").strip().lower() in ("1", "true")}


def enable():
    _STATE["on"] = True


def disable():
    _STATE["on"] = False


def enabled():
    """True while op determinism is on."""
    return _STATE["on"]

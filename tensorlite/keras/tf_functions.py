"""TensorFlow's public functions as Keras's own code calls them (Keras 2's backend `K.*`,
the activations), taken from the op modules rather than the public namespace `tensorlite`,
which sits above Keras in the layer order (pyproject.toml's import-linter contracts).

`tf` here holds the same function objects the public `tf`, `tf.math`, `tf.nn` and
`tf.random` hand on, and registers them with the symbolic dispatch
(framework/symbolic_dispatch.py) under the same public paths, so `K.mean(x)` on a
`tf.keras.Input` becomes the TFOpLambda layer "reduce_mean" that `tf.reduce_mean(x)`
would make. `tf.random`'s functions are not registered, as the public `tf.random` does not
register them. Look functions up when calling (`tf.nn.relu(x)`, not a module-level
`relu = tf.nn.relu`): the dispatch replaces them with wrappers when Keras makes its first
symbolic tensor.

Example:
    >>> from tensorlite.keras.tf_functions import tf
    >>> tf.reduce_mean(tf.constant([1.0, 3.0])).numpy()
    2.0
"""
import types

from tensorlite.autodiff.tape import stop_gradient
from tensorlite.framework import symbolic_dispatch
from tensorlite.framework.convert import constant
from tensorlite.framework.dtypes import bool as _bool
from tensorlite.framework.tensor import is_tensor
from tensorlite.ops import (array_ops, control_flow_ops, conv_ops, gather_ops, linalg_ops,
                            logging_ops, math_ops, nn_ops, random_ops)

__all__ = ["tf"]


def _take(module, names):
    """{name: module.name} for each of `names`."""
    return {name: getattr(module, name) for name in names.split()}


math = types.SimpleNamespace(
    **_take(math_ops, "cumprod log reduce_std reduce_variance"),
    **_take(nn_ops, "softplus softsign"))

nn = types.SimpleNamespace(**_take(nn_ops, (
    "bias_add dropout elu gelu in_top_k l2_normalize leaky_relu log_softmax relu relu6 "
    "selu sigmoid_cross_entropy_with_logits silu softmax softplus softsign")),
    **_take(conv_ops, "convolution"))

random = types.SimpleNamespace(**_take(random_ops, "normal truncated_normal uniform"))

tf = types.SimpleNamespace(
    **_take(math_ops, (
        "abs argmax argmin cast clip_by_value cos cumsum einsum equal exp greater "
        "greater_equal less less_equal matmul maximum minimum not_equal pow reduce_all "
        "reduce_any reduce_max reduce_mean reduce_min reduce_prod reduce_sum round sigmoid "
        "sign sin sqrt square tanh tensordot where")),
    **_take(array_ops, (
        "concat expand_dims ones ones_like range reshape reverse shape squeeze stack tile "
        "transpose zeros zeros_like")),
    **_take(gather_ops, "gather one_hot repeat"),
    **_take(linalg_ops, "eye"),
    **_take(control_flow_ops, "cond"),
    **_take(logging_ops, "print"),
    bool=_bool, constant=constant, is_tensor=is_tensor, stop_gradient=stop_gradient,
    math=math, nn=nn, random=random)

# the prefixes are the public paths: a saved TFOpLambda layer names its function by it
symbolic_dispatch.expose(vars(tf))
symbolic_dispatch.expose(vars(math), "math.")
symbolic_dispatch.expose(vars(nn), "nn.")

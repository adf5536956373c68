"""tensorlite: a TensorFlow-2-style machine-learning system on NumPy.

    import tensorlite as tf

This module is the public namespace: it hands names on and defines nothing.
"""
from tensorlite.framework import blas_tuning as _blas_tuning  # noqa: F401 - before NumPy loads
from tensorlite.framework import malloc_tuning as _malloc_tuning  # noqa: F401
from tensorlite.framework import dispatch as _dispatch  # noqa: F401 - installs execute
from tensorlite.framework import symbolic_dispatch as _symbolic_dispatch
from tensorlite.framework import dtypes, errors
from tensorlite.framework.dtypes import (DType, as_dtype, bfloat16, bool, complex64,  # noqa: A004
                                         complex128, double, float16, float32, float64, half,
                                         int8, int16, int32, int64, string, uint8, uint16,
                                         uint32, uint64)
from tensorlite.framework.tensor_shape import TensorShape
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.framework.tensor import Tensor, is_tensor
from tensorlite.framework.convert import (constant, convert_to_tensor,
                                          register_tensor_conversion_function)
from tensorlite.framework.variables import (Variable, VariableAggregation,
                                            VariableSynchronization, variable_creator_scope)
from tensorlite.framework.module import Module
from tensorlite.framework.name_scope import name_scope
from tensorlite.framework import nest
from tensorlite.ops import tensor_operators as _tensor_operators  # noqa: F401
from tensorlite.ops import sparse_ops as _sparse_ops  # noqa: F401 - attaches SparseTensor operators
from tensorlite.ops.array_ops import *  # noqa: F401,F403
from tensorlite.ops.gather_ops import *  # noqa: F401,F403
from tensorlite.ops.math_ops import (abs, add, add_n, argmax, argmin, argsort,  # noqa: A004
                                     cast, clip_by_global_norm, clip_by_norm, clip_by_value,
                                     cos, cumsum, divide, einsum, equal, exp, floor, greater,
                                     greater_equal, less, less_equal, logical_and, logical_not,
                                     logical_or, matmul, maximum, minimum, multiply, negative,
                                     not_equal, pow, realdiv, reduce_all, reduce_any,
                                     reduce_logsumexp, reduce_max, reduce_mean, reduce_min,
                                     reduce_prod, reduce_sum, round, sigmoid, sign, sin, sort,
                                     sqrt, square, subtract, tanh, tensordot, truediv, where,
                                     log, floordiv, tan, sinh, cosh, asin, acos, atan, atan2,
                                     cumprod, reciprocal, ceil, rsqrt, squared_difference)
from tensorlite.ops.complex_ops import complex  # noqa: A004
from tensorlite.ops import fft_ops as _fft_ops  # noqa: F401 - registers FFT ops (SavedModels)
from tensorlite.ops.slice_ops import slice, strided_slice  # noqa: A004
from tensorlite.ops.logging_ops import print  # noqa: A004
from tensorlite.ops.script_ops import numpy_function, py_function
from tensorlite.ops.nn_ops import *  # noqa: F401,F403
from tensorlite.ops.conv_ops import *  # noqa: F401,F403
from tensorlite.ops.pooling_ops import *  # noqa: F401,F403
from tensorlite.ops.random_ops import *  # noqa: F401,F403
from tensorlite.ops.linalg_ops import *  # noqa: F401,F403
from tensorlite.autodiff.tape import GradientTape, UnconnectedGradients, stop_gradient
from tensorlite.autodiff.custom_gradient import custom_gradient
from tensorlite import linalg, math, nn, random  # noqa: A004
from tensorlite import bitwise, config
from tensorlite.graph.context import executing_eagerly, init_scope
from tensorlite.graph.function import function
from tensorlite.ops.control_flow_ops import case, cond, switch_case, while_loop
from tensorlite.ops.functional_ops import foldl, foldr, map_fn, scan
from tensorlite import test
from tensorlite import debugging, version
from tensorlite.framework.device import DeviceSpec, device
from tensorlite.ops.check_ops import Assert

# TF functions called on Keras symbolic tensors become layers (framework/symbolic_dispatch.py)
_symbolic_dispatch.expose(globals())

newaxis = None
__version__ = version.VERSION

# Sub-packages that most programs never touch load on first use, keeping the import fast.
_LAZY = {"compat", "data", "image", "io", "keras", "lite", "profiler", "saved_model", "sparse", "summary",
         "train", "distribute", "estimator", "contrib", "feature_column", "types"}
_LAZY |= {"ragged", "strings", "lookup", "autograph", "experimental", "signal"}
# Names that live in a lazily loaded sub-package: name -> (module, attribute).
_LAZY_NAMES = {"RaggedTensor": ("tensorlite.ragged", "RaggedTensor"),
               "RaggedTensorSpec": ("tensorlite.ragged", "RaggedTensorSpec"),
               "vectorized_map": ("tensorlite.graph.vectorize", "vectorized_map"),
               "TensorArray": ("tensorlite.ops.tensor_array_ops", "TensorArray")}
# TF 2's initializer classes (`tf.random_normal_initializer()(shape)`): Keras's, same API
_LAZY_NAMES.update({f"{tf_name}_initializer": ("tensorlite.keras.initializers", cls)
                    for tf_name, cls in (("constant", "Constant"), ("ones", "Ones"),
                                         ("zeros", "Zeros"), ("random_normal", "RandomNormal"),
                                         ("random_uniform", "RandomUniform"))})

_KERAS_ALIASES = {"optimizers", "initializers", "losses", "metrics", "activations"}


def __getattr__(name):
    import importlib  # noqa: PLC0415
    if name in _LAZY:
        module = importlib.import_module(f"tensorlite.{name}")
        globals()[name] = module
        return module
    if name in _LAZY_NAMES:
        module, attr = _LAZY_NAMES[name]
        return getattr(importlib.import_module(module), attr)
    if name in _KERAS_ALIASES:  # TF 2's tf.optimizers, tf.losses, ...: tf.keras's modules
        module = importlib.import_module(f"tensorlite.keras.{name}")
        globals()[name] = module
        return module
    if name in ("Graph", "gradients"):  # TF1 graphs (tf.compat.v1), loaded when used
        from tensorlite.compat import v1  # noqa: PLC0415
        return getattr(v1, name)
    if name in ("SparseTensor", "SparseTensorSpec"):
        from tensorlite import sparse  # noqa: PLC0415
        return getattr(sparse, name)
    raise AttributeError(f"module 'tensorlite' has no attribute {name!r}")

"""`tf.random`: random ops and TF's global/op seed semantics (see ops/random_ops.py).

    >>> tf.random.set_seed(1)
    >>> a = tf.random.uniform([2])  # the same pair after every tf.random.set_seed(1)
"""
import sys as _sys
import types as _types

from tensorlite.ops.candidate_sampling_ops import (  # noqa: F401
    all_candidate_sampler, fixed_unigram_candidate_sampler, log_uniform_candidate_sampler,
    uniform_candidate_sampler)
from tensorlite.ops.random_ops import (Algorithm, Generator, categorical,  # noqa: F401
                                       create_rng_state, gamma, get_global_generator, normal,
                                       poisson, set_global_generator, set_seed, shuffle,
                                       stateless_binomial, stateless_categorical,
                                       stateless_fold_in, stateless_gamma, stateless_normal,
                                       stateless_poisson, stateless_split,
                                       stateless_truncated_normal, stateless_uniform,
                                       truncated_normal, uniform)

# TF 2.21's names for the seed utilities (the same functions as the experimental ones)
split = stateless_split
fold_in = stateless_fold_in

experimental = _types.ModuleType(__name__ + ".experimental",
                                 "`tf.random.experimental`: generators and seed utilities.")
for _name in ("Algorithm", "Generator", "create_rng_state", "get_global_generator",
              "set_global_generator", "stateless_split", "stateless_fold_in"):
    setattr(experimental, _name, globals()[_name])
_sys.modules[experimental.__name__] = experimental
del _name

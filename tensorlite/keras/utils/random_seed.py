"""`tf.keras.utils.set_random_seed`: one call seeds every random source a Keras program uses."""
import random

import numpy as np

from tensorlite.ops import random_ops


def set_random_seed(seed):
    """Seeds Python's `random`, NumPy's global generator and TensorFlow's global seed
    (`tf.random.set_seed`), as Keras does, so a program run twice draws the same numbers.

    >>> tf.keras.utils.set_random_seed(42)
    >>> a = tf.random.uniform([2]); tf.keras.utils.set_random_seed(42)
    >>> bool(tf.reduce_all(a == tf.random.uniform([2])))
    True
    """
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise ValueError(f"set_random_seed expects an int seed, got {seed!r} of type "
                         f"{type(seed).__name__}")
    seed = int(seed)
    random.seed(seed)
    np.random.seed(seed % (1 << 32))
    random_ops.set_seed(seed)

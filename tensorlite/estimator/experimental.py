"""`tf.estimator.experimental` (and `tf.compat.v1.estimator.experimental`): the early
stopping hooks (early_stopping.py)."""
from tensorlite.estimator.early_stopping import (make_early_stopping_hook,
                                                 stop_if_higher_hook, stop_if_lower_hook,
                                                 stop_if_no_decrease_hook,
                                                 stop_if_no_increase_hook)

__all__ = ["make_early_stopping_hook", "stop_if_higher_hook", "stop_if_lower_hook",
           "stop_if_no_decrease_hook", "stop_if_no_increase_hook"]

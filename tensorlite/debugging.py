"""`tf.debugging`: assertions that run eagerly and on every call of a graph, and numeric
checks (see ops/check_ops.py)."""
from tensorlite.ops.check_ops import (assert_all_finite, assert_equal,  # noqa: F401
                                      assert_greater, assert_greater_equal, assert_integer,
                                      assert_less, assert_less_equal, assert_near,
                                      assert_negative, assert_non_negative,
                                      assert_non_positive, assert_none_equal, assert_positive,
                                      assert_rank, assert_rank_at_least, assert_shapes,
                                      assert_type, check_numerics, disable_check_numerics,
                                      enable_check_numerics, Assert)
from tensorlite.ops.math_ops import is_finite, is_inf, is_nan  # noqa: F401

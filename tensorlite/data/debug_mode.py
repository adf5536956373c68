"""`tf.data.experimental.enable_debug_mode()`: run pipelines in an order a debugger can follow.

tensorlite's map functions always run eagerly (as Python), so TF's first effect — user
functions running eagerly instead of as traced graphs — already holds. What debug mode adds
here is TF's second effect: `map(num_parallel_calls=...)` runs its function on the
iterating thread, one element after another in input order, and
`interleave(num_parallel_calls=...)` (so also readers' `num_parallel_reads`) reads its inner
datasets there, in the deterministic cycle order, so breakpoints and prints inside user
functions fire sequentially and deterministically.

Example:
    >>> tf.data.experimental.enable_debug_mode()
    >>> ds = tf.data.Dataset.range(3).map(lambda x: x + 1, num_parallel_calls=tf.data.AUTOTUNE)
"""
_enabled = False


def enable_debug_mode():
    """Turns debug mode on for every pipeline iterated from now on (TF has no switch to
    turn it off; neither has tensorlite: `_disable_for_tests` exists for test isolation)."""
    global _enabled
    _enabled = True


def enabled():
    """Whether parallel stages must run sequentially."""
    return _enabled


def _disable_for_tests():
    global _enabled
    _enabled = False

"""`tf.executing_eagerly`: False in TF 1.x graph mode and while a tf.function traces; and
`tf.init_scope`, which lifts a block out of every function being traced."""
import contextlib
import sys

from tensorlite.framework import dispatch, variables
from tensorlite.framework.tensor import _ON_NUMPY, GRAPH_TENSOR_INFO
from tensorlite.graph import tracing


def executing_eagerly():
    """True unless tf.compat.v1 graph mode is on or a tf.function is being traced."""
    graph_mode = sys.modules.get("tensorlite.compat.v1.graph_mode")  # loaded only if used
    return (graph_mode is None or graph_mode.executing_eagerly()) and not tracing.is_tracing()


@contextlib.contextmanager
def init_scope():
    """`tf.init_scope()`: the block runs as if no tf.function were being traced and no tape
    recorded: its ops run now, eagerly, its variable reads and assignments act now and
    become no part of the graph (a one-time initialisation inside a traced method), as
    TensorFlow lifts them into the outermost eager context.

        @tf.function
        def __call__(self):
            with tf.init_scope():   # runs once, while the trace runs
                self.v.assign_add(1)
            return self.v
    """
    hooks = (variables.READ_HOOKS, variables.ASSIGN_HOOKS, _ON_NUMPY, GRAPH_TENSOR_INFO,
             tracing._ACTIVE)
    saved = [lst[:] for lst in hooks]
    for lst in hooks:
        lst.clear()
    try:
        with dispatch.observers_paused():
            yield
    finally:
        for lst, old in zip(hooks, saved):
            lst[:] = old

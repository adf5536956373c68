"""Graph mode: `tf.compat.v1.disable_eager_execution()` and its way back.

While graph mode is on (eager execution disabled, or inside `Graph.as_default()`), one
dispatch observer and the variable and NumPy hooks forward every op, variable read and
assignment to the default graph's tracer, and a variable creator names new variables
uniquely and enters them in the graph's collections. Ops still compute, on stand-in values
(a placeholder's zeros), so NumPy warnings are silenced while building. Turning graph mode
off removes all of it: eager code pays nothing.

Example:
    >>> tf.compat.v1.disable_eager_execution()
    >>> tf.executing_eagerly()
    False
    >>> tf.compat.v1.enable_eager_execution()
"""
import numpy as np

from tensorlite.compat.v1 import graph as graph_mod
from tensorlite.framework import convert, dispatch, variables
from tensorlite.framework import tensor as tensor_mod
from tensorlite.framework.name_scope import name_scope, scoped_name

_DISABLED = [False]  # disable_eager_execution() was called
_ON = [False]  # the hooks are installed
_SAVED_ERR = [None]  # NumPy's error settings before graph mode silenced them


def disable_eager_execution():
    """`tf.compat.v1.disable_eager_execution`: ops build a graph run by `Session.run`."""
    _DISABLED[0] = True
    sync()


def enable_eager_execution(config=None, device_policy=None, execution_mode=None):
    """`tf.compat.v1.enable_eager_execution`: back to eager execution."""
    _DISABLED[0] = False
    sync()


def disable_v2_behavior():
    """`tf.compat.v1.disable_v2_behavior`: here, graph mode (the rest of v2 stays)."""
    disable_eager_execution()


def enable_v2_behavior():
    """`tf.compat.v1.enable_v2_behavior`."""
    enable_eager_execution()


def recording():
    """True while ops are recorded into a graph instead of only run."""
    return _DISABLED[0] or bool(graph_mod._STACK)


def executing_eagerly():
    """`tf.compat.v1.executing_eagerly`: False in graph mode."""
    return not recording()


def executing_eagerly_outside_functions():
    """`tf.compat.v1.executing_eagerly_outside_functions`."""
    return not recording()


def user_errstate():
    """NumPy's error settings as the user had them (Session.run computes real values)."""
    return _SAVED_ERR[0] if _ON[0] else np.geterr()


# -- the hooks ---------------------------------------------------------------------------
class _Recorder:
    """The dispatch observer: hands each op to the default graph's tracer."""

    def record(self, op, inputs, attrs, outputs):
        graph_mod.get_default_graph()._tracer.record(op, inputs, attrs, outputs)


_RECORDER = _Recorder()


def _read_hook(variable, tensor):
    graph_mod.get_default_graph()._tracer.on_read(variable, tensor)


def _assign_hook(variable, mode, value):
    graph_mod.get_default_graph()._tracer.on_assign(variable, mode, value)


def _constant_hook(tensor, name):
    g = graph_mod.get_default_graph()
    g._tracer.on_constant(tensor, g.unique_name(scoped_name(name or "Const")))


def _numpy_hook(tensor):
    graph_mod.get_default_graph()._tracer.on_numpy(tensor)


def _creator(next_creator, **kwargs):
    """Graph-mode variables: unique names (TF 1.x's `v`, `v_1`), collections, and no
    value outside a Session until their initializer runs there."""
    from tensorlite.compat.v1.variables import track_variable  # noqa: PLC0415 - a cycle
    g = graph_mod.get_default_graph()
    kwargs["name"] = g.unique_name(scoped_name(kwargs.get("name") or "Variable"))
    with name_scope(""):  # the name is complete already
        v = next_creator(**kwargs)
    track_variable(g, v)
    return v


def sync():
    """Installs the hooks when graph mode starts and removes them when it ends."""
    on = recording()
    if on == _ON[0]:
        return
    if on:
        dispatch.OBSERVERS.append(_RECORDER)
        variables.READ_HOOKS.append(_read_hook)
        variables.ASSIGN_HOOKS.append(_assign_hook)
        tensor_mod._ON_NUMPY.append(_numpy_hook)
        convert.CONSTANT_HOOKS.append(_constant_hook)
        variables._creator_stack().insert(0, _creator)
        _SAVED_ERR[0] = np.seterr(all="ignore")  # stand-in zeros divide by zero, log 0...
    else:
        _remove(dispatch.OBSERVERS, _RECORDER)
        _remove(variables.READ_HOOKS, _read_hook)
        _remove(variables.ASSIGN_HOOKS, _assign_hook)
        _remove(tensor_mod._ON_NUMPY, _numpy_hook)
        _remove(convert.CONSTANT_HOOKS, _constant_hook)
        _remove(variables._creator_stack(), _creator)
        np.seterr(**_SAVED_ERR[0])
        _SAVED_ERR[0] = None
    _ON[0] = on


def _remove(hooks, hook):
    for i, h in enumerate(hooks):
        if h is hook:
            del hooks[i]
            return

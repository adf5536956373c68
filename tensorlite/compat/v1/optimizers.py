"""TF1 optimizers (`tf.compat.v1.train.GradientDescentOptimizer`, `MomentumOptimizer`,
`AdamOptimizer`, `AdagradOptimizer`) and the global step, for graphs run in a Session.

`minimize(loss, global_step=None, var_list=None)` builds the gradients with
tf.compat.v1.gradients and one assignment per variable (slot variables such as Momentum's
accumulators are graph variables, initialized by global_variables_initializer), and
returns the training Operation: each `Session.run(train_op)` applies one step, with TF1's
update rules, and increments `global_step`.

Example:
    >>> with tf.Graph().as_default():
    ...     w = tf.compat.v1.get_variable("w", initializer=tf.constant(1.0))
    ...     train = tf.compat.v1.train.GradientDescentOptimizer(0.5).minimize(w * w)
    ...     with tf.compat.v1.Session() as s:
    ...         s.run(tf.compat.v1.global_variables_initializer())
    ...         s.run(train)
    ...         s.run(w)
    0.0
"""
from tensorlite.compat.v1 import graph_mode
from tensorlite.compat.v1.gradients import gradients
from tensorlite.compat.v1.graph import GraphKeys, Operation, get_default_graph
from tensorlite.compat.v1.variables import _assign, trainable_variables
from tensorlite.framework import dtypes
from tensorlite.framework.variables import Variable
from tensorlite.ops import array_ops, math_ops


def get_or_create_global_step(graph=None):
    """`tf.compat.v1.train.get_or_create_global_step`: the int64 step counter."""
    step = get_global_step(graph)
    if step is None:
        step = Variable(0, dtype=dtypes.int64, trainable=False, name="global_step")
        get_default_graph().add_to_collection(GraphKeys.GLOBAL_STEP, step)
    return step


def get_global_step(graph=None):
    """`tf.compat.v1.train.get_global_step`: the step variable, None if none was made."""
    found = (graph or get_default_graph()).get_collection(GraphKeys.GLOBAL_STEP)
    return found[0] if found else None


class Optimizer:
    """The TF1 optimizer base: compute_gradients, apply_gradients, minimize."""

    def __init__(self, learning_rate, use_locking=False, name="Optimizer"):
        self._lr = learning_rate
        self._name = name
        self._slots = {}  # (slot name, id(variable)) -> slot variable

    def compute_gradients(self, loss, var_list=None, **_):
        """[(gradient, variable)] of `loss` for `var_list` (default: trainable variables)."""
        if not graph_mode.recording():
            raise RuntimeError(f"{type(self).__name__}.compute_gradients needs a TF1 graph "
                               f"(tf.Graph().as_default() or disable_eager_execution); with "
                               f"eager execution use tf.keras.optimizers and GradientTape")
        var_list = list(var_list) if var_list is not None else trainable_variables()
        if not var_list:
            raise ValueError("No variables to optimize.")
        return list(zip(gradients(loss, var_list), var_list))

    def apply_gradients(self, grads_and_vars, global_step=None, name=None):
        """The Operation applying one update per (gradient, variable) pair."""
        pairs = [(g, v) for g, v in grads_and_vars if g is not None]
        if not pairs:
            raise ValueError(f"No gradients provided for any variable: "
                             f"{[v.name for _, v in grads_and_vars]}")
        updates = self._updates(pairs)
        if global_step is not None:
            updates.append(_assign(global_step, 1, "add"))
        return _group(updates, name or self._name)

    def minimize(self, loss, global_step=None, var_list=None, name=None, **_):
        """`compute_gradients` then `apply_gradients`: the training Operation."""
        return self.apply_gradients(self.compute_gradients(loss, var_list), global_step,
                                    name)

    def _slot(self, var, slot_name, init=None):
        key = (slot_name, id(var))
        if key not in self._slots:
            value = array_ops.zeros(var.shape, var.dtype) if init is None else init
            self._slots[key] = Variable(value, trainable=False,
                                        name=f"{var.name.split(':')[0]}/{self._name}/{slot_name}")
        return self._slots[key]

    def _updates(self, pairs):
        raise NotImplementedError


class GradientDescentOptimizer(Optimizer):
    """`var -= learning_rate * grad`."""

    def __init__(self, learning_rate, use_locking=False, name="GradientDescent"):
        super().__init__(learning_rate, use_locking, name)

    def _updates(self, pairs):
        return [_assign(v, math_ops.multiply(math_ops.cast(self._lr, v.dtype), g), "sub")
                for g, v in pairs]


class MomentumOptimizer(Optimizer):
    """`accum = momentum * accum + grad; var -= lr * accum` (Nesterov: TF1's form)."""

    def __init__(self, learning_rate, momentum, use_locking=False, name="Momentum",
                 use_nesterov=False):
        super().__init__(learning_rate, use_locking, name)
        self._momentum = momentum
        self._nesterov = use_nesterov

    def _updates(self, pairs):
        out = []
        for g, v in pairs:
            acc = self._slot(v, "Momentum")
            new_acc = _assign(acc, acc * self._momentum + g, "set")
            step = g + new_acc * self._momentum if self._nesterov else new_acc
            out.append(_assign(v, step * self._lr, "sub"))
        return out


class AdamOptimizer(Optimizer):
    """TF1's Adam: lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t);
    var -= lr_t * m / (sqrt(v) + epsilon)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 use_locking=False, name="Adam"):
        super().__init__(learning_rate, use_locking, name)
        self._b1, self._b2, self._eps = beta1, beta2, epsilon

    def _updates(self, pairs):
        first = pairs[0][1]
        b1p = self._slot(first, "beta1_power", init=self._b1 * array_ops.ones([], first.dtype))
        b2p = self._slot(first, "beta2_power", init=self._b2 * array_ops.ones([], first.dtype))
        lr_t = self._lr * math_ops.sqrt(1 - b2p) / (1 - b1p)
        out = []
        for g, v in pairs:
            m, s = self._slot(v, "m"), self._slot(v, "v")
            m_t = _assign(m, m * self._b1 + g * (1 - self._b1), "set")
            v_t = _assign(s, s * self._b2 + g * g * (1 - self._b2), "set")
            out.append(_assign(v, lr_t * m_t / (math_ops.sqrt(v_t) + self._eps), "sub"))
        # the powers advance after every variable's update read them
        out.append(_assign(b1p, b1p * self._b1, "set"))
        out.append(_assign(b2p, b2p * self._b2, "set"))
        return out


class AdagradOptimizer(Optimizer):
    """TF1's Adagrad: `accum += grad ** 2; var -= lr * grad / sqrt(accum)`, each
    accumulator starting at initial_accumulator_value."""

    def __init__(self, learning_rate, initial_accumulator_value=0.1, use_locking=False,
                 name="Adagrad"):
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: "
                             f"{initial_accumulator_value}")
        super().__init__(learning_rate, use_locking, name)
        self._initial_accumulator_value = initial_accumulator_value

    def _updates(self, pairs):
        out = []
        for g, v in pairs:
            init = array_ops.ones(v.shape, v.dtype) * self._initial_accumulator_value
            acc = self._slot(v, "Adagrad", init=init)
            acc_t = _assign(acc, acc + g * g, "set")
            out.append(_assign(v, g * self._lr / math_ops.sqrt(acc_t), "sub"))
        return out


def _group(tensors, name):
    """An Operation whose run evaluates `tensors` (the updates) in the session."""
    graph = get_default_graph()
    name = graph.unique_name(name)

    def run(session, feeds):
        session._evaluate(list(dict.fromkeys(graph._slot(t) for t in tensors)), feeds)
    op = Operation(name, run, graph, "NoOp")
    graph._register_name(name, op)
    graph.add_to_collection(GraphKeys.TRAIN_OP, op)
    return op

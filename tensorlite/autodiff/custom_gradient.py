"""`tf.custom_gradient`: a function that supplies its own gradient.

The decorated function returns ``(y, grad_fn)``; ``grad_fn(*dys)`` returns one gradient per
tensor argument, or ``(input_grads, variable_grads)`` when it takes a ``variables`` keyword
(the trainable variables the function read).

Example:
    >>> @tf.custom_gradient
    ... def clip_grad(x):
    ...     return tf.identity(x), lambda dy: tf.clip_by_value(dy, -1.0, 1.0)
"""
import functools
import inspect
import warnings

from tensorlite.autodiff import tape as tape_mod
from tensorlite.framework import dispatch, nest, variables
from tensorlite.framework.registry import Op, declare
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.ops.common import to_tensor


def custom_gradient(f=None):
    """Decorator; see the module docstring."""
    if f is None:
        return custom_gradient

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        recording = [t for t in tape_mod._ACTIVE if t._recording]
        if any(getattr(ob, "RECORDS_GRAPH", False) for ob in dispatch.OBSERVERS):
            return _in_graph(f, args, kwargs, recording)
        if not recording:
            y, _ = f(*args, **kwargs)
            return y
        y, grad_fn, read_vars = _forward_unrecorded(f, args, kwargs, recording)
        inputs = _tensor_args(args)
        outs = tuple(wrap(to_tensor(v)._value) for v in nest.flatten(y))
        extra = _variables_for(grad_fn, read_vars, recording)

        def grad(g, ans, *ins):
            return _call_grad_fn(f, grad_fn, g, len(outs), len(inputs), extra)
        op = Op(f"CustomGradient:{f.__name__}", None, grad, None, len(outs) > 1, False)
        for ob in list(dispatch.OBSERVERS):
            ob.record(op, tuple(inputs) + tuple(extra), None, outs if len(outs) > 1 else outs[0])
        return nest.pack_like(y, list(outs))
    return wrapped


def _tensor_args(args):
    return [a for a in nest.flatten(list(args)) if isinstance(a, Tensor)
            or getattr(a, "_is_variable", False)]


def _forward_unrecorded(f, args, kwargs, recording):
    """Runs the forward unseen by the recording tapes (the supplied gradient replaces its
    internals); returns (y, grad_fn, [(variable, the tensor read)] of trainable reads)."""
    read_vars = []

    def note_read(var, tensor):
        if var.trainable and all(v is not var for v, _ in read_vars):
            read_vars.append((var, tensor))
    saved = [(t, t._recording) for t in recording]
    for t in recording:
        t._recording = False
    variables.READ_HOOKS.append(note_read)
    try:
        y, grad_fn = f(*args, **kwargs)
    finally:
        variables.READ_HOOKS.remove(note_read)
        for t, r in saved:
            t._recording = r
    return y, grad_fn, read_vars


def _takes_variables(grad_fn):
    return "variables" in inspect.signature(grad_fn).parameters


def _variables_for(grad_fn, read_vars, recording):
    """The variables whose gradients grad_fn gives (its `variables` argument), made
    visible to the recording tapes."""
    extra = [v for v, _ in read_vars] if _takes_variables(grad_fn) else []
    for t in recording:
        for v in extra:
            if t._watch_accessed or id(v) in t._tracked:
                t._tracked[id(v)] = v
    return extra


def _call_grad_fn(f, grad_fn, g, n_out, n_in, extra):
    """grad_fn on the output gradients `g`: the inputs' gradients, then the variables'."""
    dys = list(g) if n_out > 1 else [g]
    if _takes_variables(grad_fn):
        gin, gvars = grad_fn(*dys, variables=extra)
        gin = list(gin) if isinstance(gin, (list, tuple)) else [gin]
        return tuple(gin) + tuple(gvars)
    gin = grad_fn(*dys)
    gin = list(gin) if isinstance(gin, (list, tuple)) else [gin]
    if len(gin) != n_in:
        raise ValueError(f"custom gradient of {f.__name__} returned {len(gin)} "
                         f"gradients for {n_in} tensor inputs")
    return tuple(None if v is None else to_tensor(v) for v in gin)


def _in_graph(f, args, kwargs, recording):
    """Inside a tf.function trace: the forward's ops go into the graph, and its outputs
    pass through one `CustomGradient:<name>` node that forwards them unchanged and whose
    gradient is `f`'s own. That rule runs `f` again on the values the node meets, for a
    grad_fn of those values (one captured while tracing would hold the trace's), so a tape
    over any later call of the graph, or tape.gradient inside the trace, differentiates by
    the supplied gradient, as TensorFlow's graphs do. Its `tf` rule is a SavedGradient,
    which a SavedModel writes as TensorFlow's IdentityN with a registered gradient."""
    y, _, read_vars = _forward_unrecorded(f, args, kwargs, recording)
    for var, tensor in read_vars:  # the tapes see these reads (unseen in the forward)
        tape_mod._on_variable_read(var, tensor)
    arg_leaves = nest.flatten(list(args))
    inputs = [a for a in arg_leaves if isinstance(a, Tensor)]
    reads = [tensor for _, tensor in read_vars]
    flat_y = [to_tensor(v) for v in nest.flatten(y)]
    n_in, n_y = len(inputs), len(flat_y)
    first_y = n_in + len(reads)

    def forward(*arrays):  # the forward's outputs, unchanged
        return tuple(arrays[first_y:]) if n_y > 1 else arrays[first_y]

    def grad(g, ans, *ins):
        now = iter(ins[:n_in])
        again = nest.pack_like(list(args), [next(now) if isinstance(a, Tensor) else a
                                            for a in arg_leaves])
        active = [t for t in tape_mod._ACTIVE if t._recording]
        _, grad_fn, now_read = _forward_unrecorded(f, again, kwargs, active)
        extra = [v for v, _ in now_read] if _takes_variables(grad_fn) else []
        got = _call_grad_fn(f, grad_fn, g, n_y, n_in, extra)
        by_var = dict(zip(map(id, extra), got[n_in:]))
        return tuple(got[:n_in]) + tuple(by_var.get(id(v)) for v, _ in read_vars) + \
            (None,) * n_y

    saved = SavedGradient(f, args, kwargs, [v for v, _ in read_vars], n_y)
    op = declare(Op(f"CustomGradient:{f.__name__}", forward, grad, None, n_y > 1, False),
                 tf=lambda attrs, in_specs: saved)
    outs = dispatch.execute(op, tuple(inputs) + tuple(reads) + tuple(flat_y), None)
    return nest.pack_like(y, list(outs) if n_y > 1 else [outs])


class SavedGradient:
    """The `tf` rule of one traced custom gradient. A SavedModel writer that saves custom
    gradients writes the node as TensorFlow does: an IdentityN over `outputs + arguments +
    variable reads` (the node's inputs come as `arguments + reads + outputs`) with a gradient
    function traced from `gradient_body`. Called as an expand rule `write(add, refs)` by a
    consumer that cannot, it warns and writes the forward only."""

    def __init__(self, f, args, kwargs, read_vars, n_y):
        self.name = f.__name__
        self._f, self._args, self._kwargs = f, args, kwargs
        self.variables = read_vars  # the variables read, in the node's input order
        self.n_y = n_y
        self.n_in = len([a for a in nest.flatten(list(args)) if isinstance(a, Tensor)])

    def passthrough(self, refs):
        """The forward's outputs: the node's inputs after the arguments and reads."""
        return refs[self.n_in + len(self.variables):]

    def __call__(self, add, refs):
        warnings.warn(f"tf.saved_model.save: the custom gradient of {self.name} is not "
                      f"saved; the loaded function differentiates its forward ops",
                      stacklevel=2)
        return self.passthrough(refs)

    def gradient_body(self, *xs_and_dys):
        """The gradients of the arguments, then of the variables read, from `f` run again on
        the arguments `xs` and its grad_fn called on the output gradients: `xs_and_dys` are
        the n_in arguments, then one gradient per IdentityN output (outputs, arguments,
        reads), of which the first n_y are used. A missing gradient is zeros."""
        xs, dys = xs_and_dys[:self.n_in], xs_and_dys[self.n_in:]
        arg_leaves = nest.flatten(list(self._args))
        now = iter(xs)
        again = nest.pack_like(list(self._args), [next(now) if isinstance(a, Tensor) else a
                                                  for a in arg_leaves])
        _, grad_fn, now_read = _forward_unrecorded(self._f, again, self._kwargs, [])
        extra = [v for v, _ in now_read] if _takes_variables(grad_fn) else []
        g = tuple(dys[:self.n_y]) if self.n_y > 1 else dys[0]
        got = _call_grad_fn(self._f, grad_fn, g, self.n_y, self.n_in, extra)
        by_var = dict(zip(map(id, extra), got[self.n_in:]))
        grads = list(got[:self.n_in]) + [by_var.get(id(v)) for v in self.variables]
        from tensorlite.ops.creation_ops import zeros_like  # noqa: PLC0415
        return [zeros_like(dys[self.n_y + i]) if g is None else to_tensor(g)
                for i, g in enumerate(grads)]

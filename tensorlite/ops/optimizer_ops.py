"""Optimizer updates as registry ops: one fused op per optimizer family, TensorFlow's
`ResourceApply*` kernels in functional form.

Each update is written once, as an in-place NumPy *kernel*

    kernel(w, slots, g, t, *coefficients, **attrs) -> (array, mode)

that updates the slot arrays in place (using the scratch array `t` of g's shape) and says
how the variable changes: `var -= array` (SUB), `var += array` (ADD) or `var = array`
(SET). `w` (the variable's value) is only read. The Keras optimizers run the kernel on
their own arrays when eager (slots updated in place: no allocation per step); inside a
`tf.function` they call the op, whose forward runs the same kernel on copies and returns
(new variable, new slots...), and assign those to the variables: so a graph holds ordinary
`GraphReadVariableOp` -> `ApplyAdam` -> `AssignVariableOp` nodes that graph passes, the
compiler and GraphDef export see, and graph and eager give the same numbers.

The coefficients are 0-d values (the per-step learning rate, decay rates, epsilon) in the
variable's dtype; inside a graph they are tensors computed from the hyperparameter
variables and the optimizer's `iterations`, so schedules and callbacks act on every run.

Example:
    >>> w, m, v = ADAM.forward(np.ones(2, np.float32), np.zeros(2, np.float32),
    ...                        np.zeros(2, np.float32), np.ones(2, np.float32),
    ...                        0.1, 0.9, 0.1, 0.999, 0.001, 1e-7, n_slots=2)
    >>> w
    array([0.9968377, 0.9968377], dtype=float32)
"""
import numpy as np

from tensorlite.framework import blas_threads, intra_op_pool
from tensorlite.framework.registry import NOT_DIFFERENTIABLE, Spec, declare, register
from tensorlite.ops import numba_updates

SUB, ADD, SET = "sub", "add", "set"

__all__ = ["SUB", "ADD", "SET", "UPDATE_COST", "split_update", "SGD", "MOMENTUM", "ADAM",
           "RMSPROP", "ADAGRAD", "ADADELTA", "ADAMAX", "NADAM", "FTRL", "LION", "rms_scaled"]


def rms_scaled(g, second_moment, t, lr, epsilon):
    """t = lr * g / (sqrt(second_moment) + epsilon): the step Adagrad and RMSprop share."""
    np.sqrt(second_moment, out=t)
    np.add(t, epsilon, out=t)
    np.divide(g, t, out=t)
    np.multiply(t, lr, out=t)
    return t


def _ema(acc, x, t, decay, one_minus_decay, square=False):
    """acc = decay acc + (1 - decay) x (x^2 when `square`), in place; t is scratch."""
    np.multiply(acc, decay, out=acc)
    if square:
        np.multiply(x, x, out=t)
        np.multiply(t, one_minus_decay, out=t)
    else:
        np.multiply(x, one_minus_decay, out=t)
    np.add(acc, t, out=acc)


def _moments(m, v, g, t, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2):
    """Adam's moments in place: m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2."""
    _ema(m, g, t, beta_1, one_minus_beta_1)
    _ema(v, g, t, beta_2, one_minus_beta_2, square=True)


# -- kernels ---------------------------------------------------------------------------------
def _sgd(w, slots, g, t, lr):
    """w -= lr * g"""
    return np.multiply(g, lr, out=t), SUB


def _momentum(w, slots, g, t, lr, momentum, nesterov=False):
    """velocity = momentum * velocity - lr * g; w += velocity (nesterov: w += momentum *
    velocity - lr * g)."""
    vel, = slots
    np.multiply(g, lr, out=t)
    np.multiply(vel, momentum, out=vel)
    np.subtract(vel, t, out=vel)
    if nesterov:
        np.subtract(t, np.multiply(vel, momentum), out=t)
        return t, SUB
    return vel, ADD


def _adam(w, slots, g, t, lr, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, epsilon):
    """m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2 (amsgrad: vhat = max(vhat, v));
    w -= lr * m / (sqrt(v or vhat) + epsilon), lr already bias-corrected."""
    m, v = slots[0], slots[1]
    _moments(m, v, g, t, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2)
    if len(slots) == 3:  # amsgrad
        np.maximum(slots[2], v, out=slots[2])
        v = slots[2]
    np.sqrt(v, out=t)
    np.add(t, epsilon, out=t)
    np.divide(m, t, out=t)
    np.multiply(t, lr, out=t)
    return t, SUB


def _rmsprop(w, slots, g, t, lr, rho, one_minus_rho, momentum, epsilon, centered=False,
             use_momentum=False):
    """rms = rho rms + (1 - rho) g^2; denom = rms (centered: rms - mg^2 with mg = rho mg +
    (1 - rho) g); momentum: mom = momentum mom + lr g / sqrt(denom + eps), w -= mom;
    otherwise w -= lr g / (sqrt(denom) + eps). Slots: rms, [momentum], [mg]."""
    rms = slots[0]
    _ema(rms, g, t, rho, one_minus_rho, square=True)
    denom = rms
    if centered:
        mg = slots[-1]
        _ema(mg, g, t, rho, one_minus_rho)
        np.multiply(mg, mg, out=t)
        np.subtract(rms, t, out=t)
        denom = t
    if not use_momentum:
        return rms_scaled(g, denom, t, lr, epsilon), SUB
    np.add(denom, epsilon, out=t)
    np.sqrt(t, out=t)
    np.divide(g, t, out=t)
    np.multiply(t, lr, out=t)
    mom = slots[1]
    np.multiply(mom, momentum, out=mom)
    np.add(mom, t, out=mom)
    return mom, SUB


def _adagrad(w, slots, g, t, lr, epsilon):
    """accumulator += g^2; w -= lr g / (sqrt(accumulator) + epsilon)."""
    acc, = slots
    np.multiply(g, g, out=t)
    np.add(acc, t, out=acc)
    return rms_scaled(g, acc, t, lr, epsilon), SUB


def _adadelta(w, slots, g, t, lr, rho, one_minus_rho, epsilon):
    """accum = rho accum + (1 - rho) g^2; update = sqrt(accum_update + eps) /
    sqrt(accum + eps) * g; accum_update = rho accum_update + (1 - rho) update^2;
    w -= lr * update (TensorFlow's ApplyAdadelta)."""
    acc, acc_update = slots
    _ema(acc, g, t, rho, one_minus_rho, square=True)
    update = np.add(acc_update, epsilon)
    np.sqrt(update, out=update)
    np.add(acc, epsilon, out=t)
    np.sqrt(t, out=t)
    np.divide(update, t, out=update)
    np.multiply(update, g, out=update)
    _ema(acc_update, update, t, rho, one_minus_rho, square=True)
    return np.multiply(update, lr, out=update), SUB


def _adamax(w, slots, g, t, lr, beta_1, one_minus_beta_1, beta_2, epsilon):
    """m = b1 m + (1 - b1) g; v = max(b2 v, |g|); w -= lr * m / (v + epsilon), lr already
    divided by 1 - b1^t (TensorFlow's ApplyAdaMax)."""
    m, v = slots
    _ema(m, g, t, beta_1, one_minus_beta_1)
    np.multiply(v, beta_2, out=v)
    np.abs(g, out=t)
    np.maximum(v, t, out=v)
    np.add(v, epsilon, out=t)
    np.divide(m, t, out=t)
    np.multiply(t, lr, out=t)
    return t, SUB


def _nadam(w, slots, g, t, lr, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2, epsilon,
           one_minus_m_t, m_t_1, one_minus_m_schedule_new, one_minus_m_schedule_next,
           v_t_prime_denominator):
    """Keras's Nadam (Dozat 2015) with the momentum schedule coefficients of this step:
    m_bar = (1 - m_t) g / (1 - prod m) + m_{t+1} m / (1 - prod_next m);
    w -= lr * m_bar / (sqrt(v / (1 - b2^t)) + epsilon)."""
    m, v = slots
    _moments(m, v, g, t, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2)
    bar = np.multiply(g, one_minus_m_t / one_minus_m_schedule_new)
    np.multiply(m, m_t_1 / one_minus_m_schedule_next, out=t)
    np.add(bar, t, out=bar)
    np.divide(v, v_t_prime_denominator, out=t)
    np.sqrt(t, out=t)
    np.add(t, epsilon, out=t)
    np.divide(bar, t, out=t)
    np.multiply(t, lr, out=t)
    return t, SUB


def _ftrl(w, slots, g, t, lr, l1, l2, lr_power, l2_shrinkage):
    """TensorFlow's ApplyFtrlV2: accum_new = accum + g^2; linear += g + 2 l2_shrinkage w -
    (accum_new^-p - accum^-p) / lr * w; quadratic = accum_new^-p / lr + 2 l2;
    w = (sign(linear) l1 - linear) / quadratic where |linear| > l1, else 0."""
    acc, linear = slots
    new_acc = np.multiply(g, g)
    np.add(new_acc, acc, out=new_acc)
    np.power(new_acc, -lr_power, out=t)
    sigma = np.power(acc, -lr_power)
    np.subtract(t, sigma, out=sigma)
    np.divide(sigma, lr, out=sigma)
    np.multiply(sigma, w, out=sigma)
    np.subtract(linear, sigma, out=linear)
    np.add(linear, g, out=linear)
    if l2_shrinkage:
        np.add(linear, np.multiply(w, 2 * l2_shrinkage), out=linear)
    np.divide(t, lr, out=t)
    np.add(t, 2 * l2, out=t)  # quadratic
    acc[...] = new_acc
    out = np.sign(linear)
    np.multiply(out, l1, out=out)
    np.subtract(out, linear, out=out)
    np.divide(out, t, out=out)
    out[np.abs(linear) <= l1] = 0
    return out, SET


def _lion(w, slots, g, t, lr, beta_1, one_minus_beta_1, beta_2, one_minus_beta_2):
    """w -= lr * sign(b1 m + (1 - b1) g); m = b2 m + (1 - b2) g (Chen et al. 2023)."""
    m, = slots
    np.multiply(m, beta_1, out=t)
    np.add(t, np.multiply(g, one_minus_beta_1), out=t)
    np.sign(t, out=t)
    np.multiply(t, lr, out=t)
    np.multiply(m, beta_2, out=m)
    np.add(m, np.multiply(g, one_minus_beta_2), out=m)
    return t, SUB


# -- a kernel over parts of the arrays, on the intra-op threads ---------------------------------
# Multiply-adds blas_threads counts per element of an update (about its passes over memory):
# a Dense layer's 1.2M-element RMSprop step is then timed for a split, a bias's is not.
UPDATE_COST = 8


def split_update(kernel, w, slots, g, t, args, attrs):
    """kernel(w, slots, g, t, *args, **attrs) run on parts of the flattened arrays (every
    update kernel is elementwise) on the intra-op threads granted by blas_threads.run,
    NumPy releasing the GIL in each pass: the same (array, mode), the slots and `t`
    updated in place. A part's result that is a view of `t` or of a slot stands for the
    whole of it; results made afresh are joined."""
    flat = [a.reshape(-1) for a in (w, g, t)]
    flat_slots = [s.reshape(-1) for s in slots]
    whole = [t] + list(slots)
    bases = [a.reshape(-1) for a in whole]

    def worker(pull):
        done = []
        for s, e in pull:
            out, mode = kernel(flat[0][s:e], [x[s:e] for x in flat_slots], flat[1][s:e],
                               flat[2][s:e], *args, **attrs)
            done.append((s, out, mode))
        return done
    parts = sorted((p for ps in intra_op_pool.map_runs(_parts(g.size), worker) if ps
                    for p in ps),
                   key=lambda p: p[0])
    mode = parts[0][2]
    for full, base in zip(whole, bases):
        if all(np.may_share_memory(out, base) for _, out, _ in parts):
            return full, mode
    return np.concatenate([out.reshape(-1) for _, out, _ in parts]).reshape(g.shape), mode


def _compiled(name, applies):
    """The one-pass compiled form of an update (ops/numba_updates.py: `name`), for the eager
    optimizers: in_place(w, slots, g, args, attrs) updates the variable's array `w` and the
    slots in place and returns True, where `applies(attrs, len(slots))`, numba is installed
    and the arrays are C-contiguous float arrays of one dtype; else returns False (the
    caller runs the NumPy kernel). The same numbers as the kernel, bit for bit. Large
    arrays are split over the intra-op threads."""
    def in_place(w, slots, g, args, attrs):
        dtype = w.dtype
        if dtype.char not in "fd" or not applies(attrs, len(slots)) or g.dtype != dtype or \
                not (w.flags.c_contiguous and g.flags.c_contiguous) or \
                any(s.dtype != dtype or not s.flags.c_contiguous for s in slots):
            return False
        kernels = numba_updates.kernels()
        if kernels is None:
            return False
        fn = getattr(kernels, name)
        flat = [a.reshape(-1) for a in (w, *slots, g)]
        coefficients = [dtype.type(a) for a in args]  # in the arrays' precision, as NumPy's
        if g.size * UPDATE_COST < blas_threads.SMALL_MACS:
            fn(*flat, *coefficients)
        else:
            blas_threads.run(g.size * UPDATE_COST, _split_in_place, fn, flat, coefficients,
                             split=True)
        return True
    return in_place


def _split_in_place(fn, flat, coefficients):
    """fn over parts of the flat arrays, on the intra-op threads blas_threads.run granted."""
    def worker(pull):
        for s, e in pull:
            fn(*[a[s:e] for a in flat], *coefficients)
    intra_op_pool.map_runs(_parts(flat[0].size), worker)


def _parts(n):
    """(start, end) runs over n elements for an update split over the granted threads."""
    return intra_op_pool.split_runs(n, -(-n // intra_op_pool.ways()))


# -- the ops -----------------------------------------------------------------------------------
def _functional(kernel):
    """The op's forward: the kernel run on copies of the variable's and slots' values.
    Inputs are (var, slot_0 .. slot_{n-1}, grad, coefficients...)."""
    def forward(w, *rest, n_slots, **attrs):
        slots = [np.array(s, copy=True) for s in rest[:n_slots]]
        g = rest[n_slots]
        out, mode = kernel(w, slots, g, np.empty_like(g), *rest[n_slots + 1:], **attrs)
        if mode == SUB:
            new = np.subtract(w, out)
        elif mode == ADD:
            new = np.add(w, out)
        elif out is g or out is w or out.base is not None or any(out is s for s in slots):
            new = np.array(out, copy=True)  # outputs never alias inputs or each other
        else:
            new = out
        return (new.astype(w.dtype, copy=False), *slots)
    forward.kernel = kernel
    return forward


def _shape(var, *rest, n_slots, **attrs):
    return [Spec(var.shape, var.dtype)] + [Spec(s.shape, s.dtype) for s in rest[:n_slots]]


def _update_op(name, kernel, tf_name, in_place=None):
    """The op for `kernel`; `in_place`: its one-pass compiled form (`_compiled`), which the
    eager optimizers use where it applies, as `op.kernel.in_place`."""
    kernel.in_place = in_place
    # fresh_outputs: each output is a new array no input and no other output shares: the
    # graph executor lets the AssignVariableOp that alone reads one adopt it without a copy.
    # unsupported: updates are training state, written to no inference format and never
    # vectorized; Keras-only updates (no TensorFlow op) have no tf rule either
    unsupported = "onnx tflite batch tf_import" + (" tf" if tf_name is None else "")
    op = register(name, _functional(kernel), grad=NOT_DIFFERENTIABLE, shape=_shape,
                  multi_output=True, kernel=kernel, fresh_outputs=True, unsupported=unsupported)
    # TensorFlow's ResourceApply* ops have no output arguments (tf_outputs=())
    return declare(op, tf=tf_name, tf_outputs=()) if tf_name is not None else op


def _tf_name(base):
    """TensorFlow's op for an update, its attributes (n_slots is ours) dropped but for
    use_nesterov."""
    def rule(attrs, in_specs):
        out = {"use_nesterov": attrs["nesterov"]} if "nesterov" in attrs else {}
        return base(attrs) if callable(base) else base, out
    return rule


SGD = _update_op("ApplyGradientDescent", _sgd, _tf_name("ResourceApplyGradientDescent"),
                 in_place=_compiled("sgd", lambda attrs, n_slots: n_slots == 0))
MOMENTUM = _update_op("ApplyKerasMomentum", _momentum, _tf_name("ResourceApplyKerasMomentum"))
ADAM = _update_op("ApplyAdam", _adam, _tf_name(
    lambda a: "ResourceApplyAdamWithAmsgrad" if a["n_slots"] == 3 else "ResourceApplyAdam"),
    in_place=_compiled("adam", lambda attrs, n_slots: n_slots == 2))  # not amsgrad
RMSPROP = _update_op("ApplyRMSProp", _rmsprop, _tf_name(
    lambda a: "ResourceApplyCenteredRMSProp" if a.get("centered") else "ResourceApplyRMSProp"),
    in_place=_compiled("rmsprop", lambda attrs, n_slots: not attrs.get("centered")
                       and not attrs.get("use_momentum")))
ADAGRAD = _update_op("ApplyAdagradV2", _adagrad, _tf_name("ResourceApplyAdagradV2"))
ADADELTA = _update_op("ApplyAdadelta", _adadelta, _tf_name("ResourceApplyAdadelta"))
ADAMAX = _update_op("ApplyAdaMax", _adamax, _tf_name("ResourceApplyAdaMax"))
FTRL = _update_op("ApplyFtrlV2", _ftrl, _tf_name("ResourceApplyFtrlV2"))
# Keras writes these two as elementwise math, TensorFlow has no fused kernel for them.
NADAM = _update_op("KerasNadamUpdate", _nadam, None)
LION = _update_op("KerasLionUpdate", _lion, None)

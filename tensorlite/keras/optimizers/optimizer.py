"""`tf.keras.optimizers.Optimizer`: the base of every optimizer (Keras 2's OptimizerV2 API).

A subclass declares its state in `_create_slots(var_list)` with `add_slot`, its
hyperparameters with `_set_hyper`, and its update in `_resource_apply_dense(grad, var,
apply_state)`. `apply_gradients` drops None gradients, creates the slots of variables it has
not seen, clips (clipvalue / clipnorm / global_clipnorm), computes per-step coefficients once
(`_prepare` -> `_prepare_local`), applies each variable's update, applies its constraint and
increments `iterations`.

Hyperparameters read as attributes: `opt.learning_rate` (alias `opt.lr`) is a float32
`tf.Variable` (or the schedule / callable it was given), and assigning `opt.learning_rate = x`
updates it in place, as callbacks do.

The built-in optimizers update on the raw NumPy arrays: preallocated slots updated in place,
one vectorised expression per variable. They write into a variable's array in place only
when nothing else refers to it (`exclusive_array`, in_place.py), so a tensor read from a
variable earlier never changes; otherwise they install a new array.

Example:
    >>> v = tf.Variable(1.0)
    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1)
    >>> opt.minimize(lambda: v ** 2, [v]).numpy()
    1
    >>> v.numpy()
    0.8
"""
import inspect
import warnings

import numpy as np

from tensorlite.distribute import distribute_lib
from tensorlite.framework import blas_threads, nest
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.variables import Variable
from tensorlite.graph.tracing import is_tracing
from tensorlite.keras.optimizers import ema, weight_decay
from tensorlite.keras.optimizers import schedules as _schedules
from tensorlite.keras.optimizers.clipping import ClippingMixin
from tensorlite.keras.optimizers.hyperparameters import HyperparameterMixin, coefficient_tensor, \
    is_schedule
from tensorlite.keras.optimizers.in_place import add_to, exclusive_array, subtract_from, \
    value_array, writable_array
from tensorlite.keras.optimizers.slots import SlotMixin
from tensorlite.ops.optimizer_ops import ADD, SUB, UPDATE_COST, split_update

_ALLOWED_KWARGS = ("clipnorm", "clipvalue", "lr", "decay", "global_clipnorm",
                   # TF 2.11+'s optimizer arguments (see weight_decay.py, ema.py)
                   "weight_decay", "use_ema", "ema_momentum", "ema_overwrite_frequency",
                   "jit_compile")


class _CallableList(list):
    """A list that can also be called: `opt.variables` and `opt.variables()` both work
    (OptimizerV2 has the method, newer Keras the property)."""

    def __call__(self):
        return self


class Optimizer(HyperparameterMixin, SlotMixin, ClippingMixin):
    """Base class for Keras optimizers (OptimizerV2 API): hyperparameters
    (hyperparameters.py), slots and weights (slots.py) and gradient clipping (clipping.py)
    are mixins; this class applies the update."""

    _HAS_AGGREGATE_GRAD = True

    def __init__(self, name, gradient_aggregator=None, gradient_transformers=None,
                 learning_rate=None, **kwargs):
        for k in kwargs:
            if k not in _ALLOWED_KWARGS:
                raise TypeError(f"Unexpected keyword argument passed to optimizer: {k!s}. "
                                f"Allowed kwargs are {{{', '.join(_ALLOWED_KWARGS)}}}.")
            if kwargs[k] is not None and not callable(kwargs[k]) and \
                    not is_schedule(kwargs[k]) and float(np.asarray(kwargs[k])) < 0:
                raise ValueError(f"Expected {k} >= 0, received: {kwargs[k]}")
        self._hyper = {}
        self._name = name
        self._hypers_created = False
        self._slots = {}  # id(var) -> {slot_name: slot variable}
        self._slot_owner = {}  # id(var) -> var, keeps the ids valid
        self._slot_names = []
        self._weights = []
        self._iterations = None
        self._scratch = {}  # id(var) -> work array of var's shape (built-ins)
        self._takes_apply_state = None
        decay = kwargs.pop("decay", 0.0)
        self._initial_decay = 0.0 if decay is None else float(decay)
        self._clipnorm = kwargs.pop("clipnorm", None)
        self._global_clipnorm = kwargs.pop("global_clipnorm", None)
        self._clipvalue = kwargs.pop("clipvalue", None)
        if self._clipnorm is not None and self._global_clipnorm is not None:
            raise ValueError(f"Cannot accept both `clipnorm` and `global_clipnorm`. Received: "
                             f"`clipnorm`={self._clipnorm}, "
                             f"`global_clipnorm`={self._global_clipnorm}.")
        self.gradient_aggregator = gradient_aggregator
        self.gradient_transformers = list(gradient_transformers or [])
        self.weight_decay = kwargs.pop("weight_decay", None)
        self._exclude_ids, self._exclude_names = set(), []
        self.use_ema = bool(kwargs.pop("use_ema", False))
        self.ema_momentum = kwargs.pop("ema_momentum", 0.99)
        self.ema_overwrite_frequency = kwargs.pop("ema_overwrite_frequency", None)
        if not 0 <= self.ema_momentum <= 1:
            raise ValueError(f"`ema_momentum` must be in the range [0, 1]. Received: "
                             f"ema_momentum={self.ema_momentum}")
        kwargs.pop("jit_compile", None)  # XLA's switch: the fused update ops need none
        if learning_rate is not None:  # the built-in optimizers: the rate (TF 1's `lr`
            # spelling wins, as in Keras) and its decay are their first hyperparameters
            self._set_hyper("learning_rate", kwargs.get("lr", learning_rate))
            self._set_hyper("decay", self._initial_decay)

    # -- iterations -------------------------------------------------------------------------
    @property
    def iterations(self):
        """The number of updates applied so far (an int64 `tf.Variable`)."""
        if self._iterations is None:
            self._iterations = Variable(np.asarray(0, dtype=np.int64),
                                        name=f"{self._name}/iter", trainable=False)
            self._weights.insert(0, self._iterations)
        return self._iterations

    @iterations.setter
    def iterations(self, variable):
        if self._iterations is not None:
            raise RuntimeError("Cannot set `iterations` to a new Variable after the "
                               "Optimizer weights have been created. Here it is attempting "
                               f"to set `iterations` to {variable}.")
        self._iterations = variable
        self._weights.insert(0, variable)

    def _step(self):
        it = self.iterations
        return int(it._t._value) if type(it) is Variable else int(np.asarray(it))

    # -- slots ---------------------------------------------------------------------------
    def add_slot(self, var, slot_name, initializer="zeros", shape=None):
        """Creates (once) the slot `slot_name` of `var`: a non-trainable variable of var's
        dtype initialised from a tensor, an initializer name or a callable."""
        if slot_name not in self._slot_names:
            self._slot_names.append(slot_name)
        slots = self._slots.get(id(var))
        if slots is None:
            slots = self._slots[id(var)] = {}
            self._slot_owner[id(var)] = var
        if slot_name in slots:
            return slots[slot_name]
        dtype = var.dtype
        slot_shape = tuple(var.shape.as_list()) if shape is None else tuple(shape)
        if isinstance(initializer, str) or (callable(initializer) and not isinstance(
                initializer, (Tensor, Variable))):
            from tensorlite.keras import initializers  # noqa: PLC0415
            init = initializers.get(initializer)
            value = init(slot_shape, dtype=dtype)
        else:
            value = initializer
        base = var.name[:-2] if var.name.endswith(":0") else var.name
        slot = Variable(value, name=f"{self._name}/{base}/{slot_name}", dtype=dtype,
                        trainable=False)
        slots[slot_name] = slot
        self._weights.append(slot)
        return slot

    def get_slot(self, var, slot_name):
        """The slot variable `slot_name` of `var`."""
        slot = self._slots.get(id(var), {}).get(slot_name)
        if slot is None:
            raise KeyError(f"Optimizer {self._name} has no slot {slot_name!r} for variable "
                           f"{getattr(var, 'name', var)}; slots are created by apply_gradients "
                           f"(known slot names: {self._slot_names})")
        return slot

    def get_slot_names(self):
        """Names of the slots this optimizer has created, in creation order."""
        return list(self._slot_names)


    def build(self, var_list):
        """Keras's `optimizer.build(model.trainable_variables)`: creates the iterations,
        hyperparameters and every slot of `var_list` now (e.g. so that a checkpoint restore
        finds them), as the first `apply_gradients` would."""
        self._create_all_weights(list(var_list))


    # -- weights ---------------------------------------------------------------------------
    @property
    def weights(self):
        """[iterations] + slot variables, in creation order."""
        return list(self._weights)

    @property
    def variables(self):
        """The optimizer's variables; works as a property and as OptimizerV2's method."""
        return _CallableList(self._weights)

    def get_weights(self):
        return [np.array(value_array(w), copy=True) for w in self._weights]

    def set_weights(self, weights):
        if len(weights) != len(self._weights):
            raise ValueError(f"You called `set_weights(weights)` on optimizer {self._name} "
                             f"with a weight list of length {len(weights)}, but the "
                             f"optimizer was expecting {len(self._weights)} weights. "
                             f"Provided weights: {str(weights)[:50]}...")
        for w, value in zip(self._weights, weights):
            w.assign(np.asarray(value, dtype=w.dtype.as_numpy_dtype))

    # -- applying gradients ----------------------------------------------------------------
    def apply_gradients(self, grads_and_vars, name=None, experimental_aggregate_gradients=True):
        """Applies one update per (gradient, variable) pair; None gradients are skipped.

        Inside a `tf.function` the update is traced into the graph as ordinary ops: the
        learning rate (a schedule evaluated on the traced `iterations`), the clipping, each
        variable's fused update op (`ApplyAdam`, ...) and the assignments of the variable,
        its slots and `iterations`; every run of the graph applies the update again."""
        if distribute_lib._replica_ctx() is not None:
            # Inside strategy.run: gradients are summed over the replicas, applied once.
            return distribute_lib.replica_apply_gradients(
                list(grads_and_vars), lambda pairs: self.apply_gradients(
                    pairs, name, experimental_aggregate_gradients))
        pairs = _filter_empty_gradients(grads_and_vars)
        if not pairs:  # no variables at all (a model without weights): no step, as Keras
            return self.iterations
        return self._apply(pairs, experimental_aggregate_gradients)

    def _apply(self, pairs, experimental_aggregate_gradients):
        graph = is_tracing()
        var_list = [v for _, v in pairs]
        # Slots are created on first use; inside a trace that is the first trace only, as
        # TensorFlow creates optimizer variables.
        self._create_all_weights(var_list)
        if experimental_aggregate_gradients and self.gradient_aggregator is not None:
            pairs = list(self.gradient_aggregator(pairs))
        pairs = self._transform_gradients(pairs, graph)
        apply_state = self._prepare(var_list)
        self._before_apply(var_list, apply_state)
        fused = self._fused_update()
        if fused is not None and not graph:
            self._eager_updates(pairs, apply_state, fused)
        elif fused is not None:
            for grad, var in pairs:
                self._graph_update(grad, var, self._coefficients(var, apply_state), fused)
                self._apply_constraint(var)
        else:
            takes_state = self._takes_apply_state
            if takes_state is None:
                takes_state = self._takes_apply_state = _accepts_apply_state(
                    self._resource_apply_dense)
            for grad, var in pairs:
                if takes_state:
                    self._resource_apply_dense(grad, var, apply_state=apply_state)
                else:
                    self._resource_apply_dense(grad, var)
                self._apply_constraint(var)
        if self.use_ema:
            ema.update_averages(self, var_list, graph)
        it = self.iterations
        if type(it) is Variable and not graph:
            it._t = wrap(np.asarray(int(it._t._value) + 1, dtype=np.int64))
        else:
            it.assign_add(1)
        return it

    @staticmethod
    def _apply_constraint(var):
        constraint = getattr(var, "constraint", None)
        if constraint is not None:
            var.assign(constraint(var))

    # -- the fused update of the built-in optimizers ---------------------------------------
    def _update_config(self):
        """(op, slot names, attrs) of a built-in optimizer's fused update (an op of
        ops/optimizer_ops.py); None for an optimizer that writes its own
        `_resource_apply_dense`. Its `_prepare_local` puts the op's coefficients, in order,
        under the key "_args"."""
        return None

    def _fused_update(self):
        """The fused update config, unless a subclass overrides `_resource_apply_dense`
        (then its own update runs, eagerly and in graphs alike)."""
        if type(self)._resource_apply_dense is not Optimizer._resource_apply_dense:
            return None
        return self._update_config()

    def _eager_update(self, grad, var, c, fused):
        """The kernel on one variable's arrays."""
        self._eager_updates([(grad, var)], {(var.device, var.dtype): c}, fused)

    def _eager_updates(self, pairs, apply_state, fused):
        """The kernel on the arrays: slots updated in place, each variable in place when
        nothing else refers to its array. (The per-variable loop of every eager step, so it
        is kept free of calls that are not needed.)"""
        op, slot_names, attrs = fused
        kernel = op.kernel
        in_place = getattr(kernel, "in_place", None)  # its one-pass compiled form, if any
        # apply_state has exactly the keys of these variables: one key is every variable's.
        only = next(iter(apply_state.values())) if len(apply_state) == 1 else None
        all_slots, scratch = self._slots, self._scratch
        for grad, var in pairs:
            c = only if only is not None else self._coefficients(var, apply_state)
            g = grad._value if type(grad) is Tensor else np.asarray(grad)
            slots = all_slots[id(var)]
            slots = [writable_array(slots[n]) for n in slot_names]
            if in_place is not None:
                w = exclusive_array(var)
                if w is not None and in_place(w, slots, g, c["_args"], attrs):
                    if getattr(var, "constraint", None) is not None:
                        self._apply_constraint(var)
                    continue
            t = scratch.get(id(var))
            if t is None or t.shape != g.shape or t.dtype != g.dtype:
                t = self._scratch_for(var, g)
            if g.size * UPDATE_COST >= blas_threads.SMALL_MACS:  # a large layer's weights:
                out, mode = blas_threads.run(  # its parts on the intra-op threads
                    g.size * UPDATE_COST, split_update, kernel, value_array(var), slots, g,
                    t, c["_args"], attrs, split=True)
            else:
                out, mode = kernel(value_array(var), slots, g, t, *c["_args"], **attrs)
            if mode is SUB:
                subtract_from(var, out)
            elif mode is ADD:
                add_to(var, out)
            elif type(var) is Variable:
                var._t = wrap(out)
            else:
                var.assign(wrap(out))
            if getattr(var, "constraint", None) is not None:
                self._apply_constraint(var)

    def _graph_update(self, grad, var, c, fused):
        """The update as graph ops: read the variable and its slots, one fused op, assign
        its outputs back."""
        op, slot_names, attrs = fused
        slots = [self.get_slot(var, n) for n in slot_names]
        outs = op(var.read_value(), *(s.read_value() for s in slots), grad, *c["_args"],
                  n_slots=len(slots), **attrs)
        for target, value in zip([var] + slots, outs):
            target.assign(value)

    def _before_apply(self, var_list, apply_state):
        """Hook run once per step before the per-variable updates: the weight decay."""
        weight_decay.apply_weight_decay(self, var_list, apply_state, is_tracing())

    def exclude_from_weight_decay(self, var_list=None, var_names=None):
        """Variables (or variables whose name matches one of `var_names`, as regular
        expressions) that weight decay leaves alone, e.g. biases and norms."""
        self._exclude_ids.update(id(v) for v in var_list or ())
        self._exclude_names.extend(var_names or ())

    def finalize_variable_values(self, var_list):
        """With `use_ema`, gives every variable its moving average (`fit` calls this at
        the end of training); nothing otherwise."""
        if self.use_ema:
            ema.finalize(self, var_list)

    def _prepare(self, var_list):
        """Per-step coefficients, computed once: {(device, dtype): {name: value}}; Python
        floats eagerly, tensors of the variables' dtype inside a trace."""
        apply_state = {}
        graph = is_tracing()
        for var in var_list:
            key = (var.device, var.dtype)
            if key not in apply_state:
                apply_state[key] = {}
                self._prepare_local(key[0], key[1], apply_state)
                args = apply_state[key].get("_args")
                if graph and args is not None:
                    apply_state[key]["_args"] = tuple(coefficient_tensor(a, key[1]) for a in args)
        return apply_state

    def _prepare_local(self, var_device, var_dtype, apply_state):
        if "learning_rate" in self._hyper:
            apply_state[(var_device, var_dtype)]["lr_t"] = self._decayed_lr(var_dtype)

    def _fallback_apply_state(self, var_device, var_dtype):
        apply_state = {(var_device, var_dtype): {}}
        self._prepare_local(var_device, var_dtype, apply_state)
        return apply_state[(var_device, var_dtype)]

    def _coefficients(self, var, apply_state):
        """The coefficients `_prepare_local` computed for var's device and dtype."""
        if apply_state is not None:
            if len(apply_state) == 1 and type(var) is Variable:
                # apply_gradients prepared exactly the keys of its variables: one key
                # means it is this variable's (skips hashing the dtype per variable).
                key, c = next(iter(apply_state.items()))
                if key[1] is var._t._dtype:
                    return c
            c = apply_state.get((var.device, var.dtype))
            if c is not None:
                return c
        return self._fallback_apply_state(var.device, var.dtype)

    def _resource_apply_dense(self, grad, var, apply_state=None):
        """The built-in optimizers' fused update (for subclasses calling super()); other
        optimizers implement it."""
        fused = self._update_config()
        if fused is None:
            raise NotImplementedError(f"{type(self).__name__} must implement "
                                      f"_resource_apply_dense(self, grad, var, "
                                      f"apply_state=None)")
        update = self._graph_update if is_tracing() else self._eager_update
        update(grad, var, self._coefficients(var, apply_state), fused)

    def _resource_apply_sparse(self, grad, var, indices, apply_state=None):
        raise NotImplementedError(f"{type(self).__name__} has no sparse update; tensorlite "
                                  f"gradients are dense")

    def _scratch_for(self, var, a):
        """A work array shaped like var's value `a`, reused across steps."""
        s = self._scratch.get(id(var))
        if s is None or s.shape != a.shape or s.dtype != a.dtype:
            s = self._scratch[id(var)] = np.empty_like(a)
        return s

    # -- minimize --------------------------------------------------------------------------
    def minimize(self, loss, var_list, grad_loss=None, name=None, tape=None):
        """Computes the gradients of `loss` (a callable, or a tensor recorded on `tape`) with
        respect to `var_list` (a list or a callable returning one) and applies them."""
        pairs = self._compute_gradients(loss, var_list, grad_loss=grad_loss, tape=tape)
        return self.apply_gradients(pairs, name=name)

    def _compute_gradients(self, loss, var_list, grad_loss=None, tape=None):
        if not callable(loss) and tape is None:
            raise ValueError(f"`tape` is required when a `Tensor` loss is passed. Received: "
                             f"loss={loss}, tape={tape}.")
        from tensorlite.autodiff.tape import GradientTape  # noqa: PLC0415
        own_tape = tape is None
        tape = GradientTape() if own_tape else tape
        if callable(loss):
            with tape:
                if not callable(var_list):
                    tape.watch(var_list)
                loss = loss()
                if callable(var_list):
                    var_list = var_list()
        var_list = nest.flatten(var_list)
        grads = tape.gradient(loss, var_list, grad_loss)
        if own_tape:
            tape.reset()  # releases the recorded reads, so the update can work in place
        return list(zip(grads, var_list))

    # -- configuration ---------------------------------------------------------------------
    def get_config(self):
        config = {"name": self._name}
        if self._clipnorm is not None:
            config["clipnorm"] = self._clipnorm
        if self._clipvalue is not None:
            config["clipvalue"] = self._clipvalue
        if self._global_clipnorm is not None:
            config["global_clipnorm"] = self._global_clipnorm
        if self.weight_decay is not None:
            config["weight_decay"] = self.weight_decay
        if self.use_ema:
            config.update(use_ema=True, ema_momentum=self.ema_momentum,
                          ema_overwrite_frequency=self.ema_overwrite_frequency)
        return config

    @classmethod
    def from_config(cls, config, custom_objects=None):
        config = dict(config)
        if "lr" in config:
            config["learning_rate"] = config.pop("lr")
        if isinstance(config.get("learning_rate"), dict):
            config["learning_rate"] = _schedules.deserialize(config["learning_rate"],
                                                             custom_objects)
        return cls(**config)

    def __repr__(self):
        return f"<tf.keras.optimizers.{type(self).__name__} name={self._name!r}>"


def _accepts_apply_state(fn):
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return True
    return "apply_state" in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _filter_empty_gradients(grads_and_vars):
    pairs = []
    for item in grads_and_vars:
        try:
            g, v = item
        except (TypeError, ValueError):
            raise ValueError(f"apply_gradients expects (gradient, variable) pairs, e.g. "
                             f"zip(grads, model.trainable_variables); got {item!r}") from None
        pairs.append((g, v))
    kept = [(g, v) for g, v in pairs if g is not None]
    if pairs and not kept:  # no variables at all (a model without weights): nothing to do
        names = [getattr(v, "name", repr(v)) for _, v in pairs]
        raise ValueError(f"No gradients provided for any variable: {names}. Check that the "
                         f"loss depends on the variables (computed inside the GradientTape, "
                         f"without leaving TensorFlow through .numpy()).")
    if len(kept) < len(pairs):
        missing = [getattr(v, "name", repr(v)) for g, v in pairs if g is None]
        warnings.warn(f"Gradients do not exist for variables {missing} when minimizing the "
                      f"loss. If you're using `model.compile()`, did you forget to provide a "
                      f"`loss` argument?", stacklevel=3)
    return kept



"""The optimizer's variables: slots (per-variable state such as Adam's m and v), creating
them on first use or in `build`, `weights`/`get_weights`/`set_weights`, and the checkpoint
children by which tf.keras 2 and Keras 3 save them.
"""
import numpy as np

from tensorlite.framework import module
from tensorlite.framework.tensor import Tensor
from tensorlite.framework.variables import Variable
from tensorlite.keras.optimizers import ema
from tensorlite.keras.optimizers.in_place import value_array


class _CallableList(list):
    """A list that can also be called: `opt.variables` and `opt.variables()` both work
    (OptimizerV2 has the method, newer Keras the property)."""

    def __call__(self):
        return self



class SlotMixin:
    """Optimizer's slots and weights: a host class sets `_slots`, `_slot_owner`,
    `_slot_names`, `_weights`, `_name` and `use_ema` and has `iterations`,
    `_create_hypers()` and `_hyper`."""

    def _add_slots(self, var_list, *names):
        """Creates the slots `names` (zeros) of every variable, name by name (Keras's
        creation order: all m, then all v)."""
        for name in names:
            for var in var_list:
                self.add_slot(var, name)

    # -- checkpointing ---------------------------------------------------------------------
    # Slot names whose variables tf.keras interleaves per variable (Adam: m0, v0, m1, v1);
    # other slots follow slot by slot, in creation order.
    _CHECKPOINT_SLOT_GROUPS = ()

    def _trackable_children(self):
        """`_iterations`, `_learning_rate` and the slots by the per-slot lists that tf.keras 2
        and Keras 3 both track (`_momentums`, ...: keras/saving/keras3_layout.py); an
        optimizer with a slot of no known list has tf.keras 2's `_variables` (iterations,
        then the slots in tf.keras's build order) instead."""
        from tensorlite.keras.saving import keras3_layout  # noqa: PLC0415
        self._create_hypers()
        lists = keras3_layout.slot_lists(self)
        out = [("_iterations", self.iterations)]
        if lists is None:
            out.insert(0, ("_variables", self._checkpoint_variables()))
        lr = self._hyper.get("learning_rate")
        if isinstance(lr, Variable):
            out.append(("_learning_rate", lr))
        return out + (lists or [])

    def _checkpoint_redundant_children(self, saved_names):
        """Saved children a restore need not wait for: `_variables` (numbered differently
        by tf.keras 2 and Keras 3) where the file also has the per-slot lists."""
        from tensorlite.keras.saving import keras3_layout  # noqa: PLC0415
        if keras3_layout.slot_list_names(self) & set(saved_names):
            return ("_variables",)
        return ()

    def _create_saved_child(self, name):
        """Restore hook: a file with only tf.keras 2's `_variables` (no per-slot lists,
        e.g. written by an older tensorlite) restores the slots through it."""
        if name == "_variables" and self._slot_names:
            return self._checkpoint_variables()
        return None

    def _checkpoint_variables(self):
        grouped = [n for group in self._CHECKPOINT_SLOT_GROUPS for n in group]
        groups = list(self._CHECKPOINT_SLOT_GROUPS) + [
            (n,) for n in self._slot_names if n not in grouped]
        out = [self.iterations]
        for group in groups:
            for var_id in self._slot_owner:
                slots = self._slots.get(var_id, {})
                out.extend(slots[n] for n in group if n in slots)
        return out

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

    def _create_slots(self, var_list):
        pass

    def build(self, var_list):
        """Keras's `optimizer.build(model.trainable_variables)`: creates the iterations,
        hyperparameters and every slot of `var_list` now (e.g. so that a checkpoint restore
        finds them), as the first `apply_gradients` would."""
        self._create_all_weights(list(var_list))

    def _create_all_weights(self, var_list):
        _ = self.iterations
        self._create_hypers()
        new = [v for v in var_list if id(v) not in self._slot_owner]
        if new:
            for v in new:
                self._slots.setdefault(id(v), {})
                self._slot_owner[id(v)] = v
            self._create_slots(new)
            if self.use_ema:
                ema.create_averages(self, new)
            if module.CHILD_ADDED:  # a restore waiting for these slots
                module.child_added()

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

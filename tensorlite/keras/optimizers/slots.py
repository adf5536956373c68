"""The optimizer's slot bookkeeping: creating every slot of new variables on first use (or in
`build`), with their moving averages, and the checkpoint children by which tf.keras 2 and
Keras 3 save the slots. The public slot API (`add_slot`, `get_slot`, `weights`, ...) is
Optimizer's own.
"""
from tensorlite.framework import module
from tensorlite.framework.variables import Variable
from tensorlite.keras.optimizers import ema


class SlotMixin:
    """Optimizer's slot bookkeeping: a host class sets `_slots`, `_slot_owner`,
    `_slot_names`, `_name` and `use_ema` and has `iterations`, `add_slot`,
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

    def _create_slots(self, var_list):
        pass

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

"""`tf.keras.optimizers.Adadelta`: steps scaled by the ratio of running RMS of updates and
of gradients (Zeiler 2012), TensorFlow's ApplyAdadelta:

    accum = rho * accum + (1 - rho) * g ** 2
    update = sqrt(accum_update + epsilon) / sqrt(accum + epsilon) * g
    accum_update = rho * accum_update + (1 - rho) * update ** 2
    w -= learning_rate * update

Example:
    >>> opt = tf.keras.optimizers.Adadelta(learning_rate=1.0, rho=0.95)
"""
from tensorlite.keras import backend
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class Adadelta(Optimizer):
    """Adadelta optimizer."""

    _CHECKPOINT_SLOT_GROUPS = (("accum_grad", "accum_var"),)

    def __init__(self, learning_rate=0.001, rho=0.95, epsilon=1e-7, name="Adadelta",
                 **kwargs):
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("rho", rho)
        self.epsilon = backend.epsilon() if epsilon is None else epsilon

    def _create_slots(self, var_list):
        self._add_slots(var_list, "accum_grad", "accum_var")

    def _update_config(self):
        return optimizer_ops.ADADELTA, ("accum_grad", "accum_var"), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        rho = self._hyper_value("rho", var_dtype)
        c.update(lr_t=self._lr_now(var_dtype), rho=rho, epsilon=float(self.epsilon))
        c["_args"] = (c["lr_t"], rho, 1.0 - rho, c["epsilon"])

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(), epsilon=self.epsilon)
        return config

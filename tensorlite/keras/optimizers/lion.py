"""`tf.keras.optimizers.Lion`: the sign of an interpolated momentum (Chen et al. 2023,
"Symbolic Discovery of Optimization Algorithms"):

    w -= learning_rate * sign(beta_1 * m + (1 - beta_1) * g)
    m = beta_2 * m + (1 - beta_2) * g

Its steps are larger than Adam's: Keras advises a learning rate 3-10x smaller.

Example:
    >>> opt = tf.keras.optimizers.Lion(learning_rate=1e-4)
"""
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class Lion(Optimizer):
    """Lion optimizer."""

    def __init__(self, learning_rate=0.0001, beta_1=0.9, beta_2=0.99, name="Lion", **kwargs):
        if not 0 < beta_1 <= 1:
            raise ValueError(f"Argument `beta_1` must be in the [0, 1] range. Otherwise, "
                             f"the optimizer degenerates to SignSGD. Received: "
                             f"beta_1={beta_1}.")
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)

    def _create_slots(self, var_list):
        self._add_slots(var_list, "m")

    def _update_config(self):
        return optimizer_ops.LION, ("m",), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        b1, b2 = self._hyper_value("beta_1", var_dtype), self._hyper_value("beta_2", var_dtype)
        c["lr_t"] = self._lr_now(var_dtype)
        c["_args"] = (c["lr_t"], b1, 1 - b1, b2, 1 - b2)

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config())
        return config

"""`tf.keras.optimizers.Adamax`: Adam with the infinity norm (Kingma & Ba, section 7),
TensorFlow's ApplyAdaMax, at step t = iterations + 1:

    m = beta_1 * m + (1 - beta_1) * g
    v = max(beta_2 * v, |g|)
    w -= learning_rate / (1 - beta_1 ** t) * m / (v + epsilon)

Example:
    >>> opt = tf.keras.optimizers.Adamax(learning_rate=0.002)
"""
from tensorlite.keras import backend
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class Adamax(Optimizer):
    """Adamax optimizer."""

    _CHECKPOINT_SLOT_GROUPS = (("m", "v"),)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Adamax", **kwargs):
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = backend.epsilon() if epsilon is None else epsilon

    def _create_slots(self, var_list):
        self._add_slots(var_list, "m", "v")

    def _update_config(self):
        return optimizer_ops.ADAMAX, ("m", "v"), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        lr = self._lr_now(var_dtype)
        b1, b2 = self._hyper_value("beta_1", var_dtype), self._hyper_value("beta_2", var_dtype)
        c.update(lr_t=lr, epsilon=float(self.epsilon), beta_1_t=b1, beta_2_t=b2,
                 beta_1_power=b1 ** self._step_value(var_dtype, 1))
        c["_args"] = (lr / (1 - c["beta_1_power"]), b1, 1 - b1, b2, c["epsilon"])

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(), epsilon=self.epsilon)
        return config

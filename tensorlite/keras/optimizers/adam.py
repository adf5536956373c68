"""`tf.keras.optimizers.Adam` and `AdamW`.

Adam, at step t = iterations + 1:

    m = beta_1 * m + (1 - beta_1) * g
    v = beta_2 * v + (1 - beta_2) * g ** 2            (amsgrad: vhat = max(vhat, v), used for v)
    w -= lr * sqrt(1 - beta_2 ** t) / (1 - beta_1 ** t) * m / (sqrt(v) + epsilon)

AdamW first decays the weights, decoupled from the gradient: w -= w * weight_decay * lr
(weight_decay.py; every optimizer takes `weight_decay`, AdamW defaults it to 0.004).

Example:
    >>> opt = tf.keras.optimizers.Adam(learning_rate=1e-3)
"""
from tensorlite.keras import backend
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class Adam(Optimizer):
    """Adam optimizer (Kingma & Ba), with the AMSGrad variant."""

    _CHECKPOINT_SLOT_GROUPS = (("m", "v"),)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 amsgrad=False, name="Adam", **kwargs):
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = backend.epsilon() if epsilon is None else epsilon
        self.amsgrad = amsgrad

    def _create_slots(self, var_list):
        self._add_slots(var_list, "m", "v", *(("vhat",) if self.amsgrad else ()))

    def _update_config(self):
        return optimizer_ops.ADAM, ("m", "v", "vhat") if self.amsgrad else ("m", "v"), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        lr = self._lr_now(var_dtype)
        b1, b2 = self._hyper_value("beta_1", var_dtype), self._hyper_value("beta_2", var_dtype)
        t = self._step_value(var_dtype, 1)
        b1_power, b2_power = b1 ** t, b2 ** t
        c.update(lr_t=lr, lr=lr * (1 - b2_power) ** 0.5 / (1 - b1_power),
                 epsilon=float(self.epsilon), beta_1_t=b1, beta_1_power=b1_power,
                 one_minus_beta_1_t=1 - b1, beta_2_t=b2, beta_2_power=b2_power,
                 one_minus_beta_2_t=1 - b2)
        c["_args"] = (c["lr"], b1, c["one_minus_beta_1_t"], b2, c["one_minus_beta_2_t"],
                      c["epsilon"])

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(), epsilon=self.epsilon, amsgrad=self.amsgrad)
        return config


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter)."""

    def __init__(self, learning_rate=0.001, weight_decay=0.004, beta_1=0.9, beta_2=0.999,
                 epsilon=1e-7, amsgrad=False, name="AdamW", **kwargs):
        if weight_decay is None or (isinstance(weight_decay, (int, float))
                                    and weight_decay < 0):
            raise ValueError(f"Argument `weight_decay` must be a float >= 0 for AdamW. "
                             f"Received: weight_decay={weight_decay}")
        super().__init__(learning_rate=learning_rate, beta_1=beta_1, beta_2=beta_2,
                         epsilon=epsilon, amsgrad=amsgrad, name=name,
                         weight_decay=weight_decay, **kwargs)

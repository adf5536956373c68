"""`tf.keras.optimizers.RMSprop`: steps scaled by a moving average of squared gradients.

    rms = rho * rms + (1 - rho) * g ** 2
    denom = rms                         (centered: rms - mg ** 2, mg = rho * mg + (1 - rho) * g)
    momentum > 0:  mom = momentum * mom + lr * g / sqrt(denom + epsilon);  w -= mom
    otherwise:     w -= lr * g / (sqrt(denom) + epsilon)

Legacy arguments work as in TF 2 (the notes "Structure of Deep Learning
Frameworks" use them): `RMSprop(lr=0.0001, decay=1e-6)` uses the
learning rate lr / (1 + decay * iterations).

Example:
    >>> opt = tf.keras.optimizers.RMSprop(lr=0.0001, decay=1e-6)
"""
from tensorlite.framework.tensor import Tensor
from tensorlite.keras import backend
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class RMSprop(Optimizer):
    """RMSprop optimizer."""

    def __init__(self, learning_rate=0.001, rho=0.9, momentum=0.0, epsilon=1e-7,
                 centered=False, name="RMSprop", **kwargs):
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("rho", rho)
        self._momentum = isinstance(momentum, Tensor) or callable(momentum) or momentum > 0
        if isinstance(momentum, (int, float)) and not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: "
                             f"momentum={momentum} (of type {type(momentum)}).")
        self._set_hyper("momentum", momentum)
        self.epsilon = backend.epsilon() if epsilon is None else epsilon
        self.centered = centered

    def _create_slots(self, var_list):
        self._add_slots(var_list, *self._update_config()[1])

    def _update_config(self):
        slots = ("rms",) + (("momentum",) if self._momentum else ()) + \
            (("mg",) if self.centered else ())
        return optimizer_ops.RMSPROP, slots, {"centered": bool(self.centered),
                                              "use_momentum": bool(self._momentum)}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        rho = self._hyper_value("rho", var_dtype)
        c.update(lr_t=self._lr_now(var_dtype), rho=rho, one_minus_rho=1.0 - rho,
                 momentum=self._hyper_value("momentum", var_dtype),
                 epsilon=float(self.epsilon))
        c["_args"] = (c["lr_t"], rho, c["one_minus_rho"], c["momentum"], c["epsilon"])

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(), epsilon=self.epsilon, centered=self.centered)
        return config

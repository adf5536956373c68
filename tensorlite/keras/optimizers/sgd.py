"""`tf.keras.optimizers.SGD`: gradient descent with optional (Nesterov) momentum.

    velocity = momentum * velocity - learning_rate * g
    w = w + velocity                                  (nesterov: w + momentum * velocity - lr * g)

Example:
    >>> opt = tf.keras.optimizers.SGD(learning_rate=0.1, momentum=0.9)
"""
from tensorlite.framework.tensor import Tensor
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class SGD(Optimizer):
    """Gradient descent (with momentum) optimizer."""

    def __init__(self, learning_rate=0.01, momentum=0.0, nesterov=False, name="SGD", **kwargs):
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._momentum = isinstance(momentum, Tensor) or callable(momentum) or momentum > 0
        if isinstance(momentum, (int, float)) and not 0 <= momentum <= 1:
            raise ValueError(f"`momentum` must be between [0, 1]. Received: "
                             f"momentum={momentum} (of type {type(momentum)}).")
        self._set_hyper("momentum", momentum)
        self.nesterov = nesterov

    def _create_slots(self, var_list):
        self._add_slots(var_list, *self._update_config()[1])

    def _update_config(self):
        if self._momentum:
            return optimizer_ops.MOMENTUM, ("momentum",), {"nesterov": bool(self.nesterov)}
        return optimizer_ops.SGD, (), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        c["lr_t"] = lr = self._lr_now(var_dtype)
        c["momentum"] = momentum = self._hyper_value("momentum", var_dtype)
        c["_args"] = (lr, momentum) if self._momentum else (lr,)

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(), nesterov=self.nesterov)
        return config

"""`tf.keras.optimizers.Adagrad`: per-coordinate steps shrinking with accumulated squares.

    accumulator += g ** 2
    w -= learning_rate * g / (sqrt(accumulator) + epsilon)

Example:
    >>> opt = tf.keras.optimizers.Adagrad(learning_rate=0.1)
"""
from tensorlite.keras import backend
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class Adagrad(Optimizer):
    """Adagrad optimizer."""

    def __init__(self, learning_rate=0.001, initial_accumulator_value=0.1, epsilon=1e-7,
                 name="Adagrad", **kwargs):
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value must be non-negative: "
                             f"{initial_accumulator_value}")
        if epsilon is None:
            epsilon = backend.epsilon()
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._initial_accumulator_value = initial_accumulator_value
        self.epsilon = epsilon

    def _create_slots(self, var_list):
        from tensorlite.keras.initializers import Constant  # noqa: PLC0415
        for var in var_list:
            self.add_slot(var, "accumulator", Constant(self._initial_accumulator_value))

    def _update_config(self):
        return optimizer_ops.ADAGRAD, ("accumulator",), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        c["lr_t"] = lr = self._lr_now(var_dtype)
        c["epsilon"] = float(self.epsilon)
        c["_args"] = (lr, c["epsilon"])

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(),
                      initial_accumulator_value=self._initial_accumulator_value,
                      epsilon=self.epsilon)
        return config

"""`tf.keras.optimizers.Ftrl`: Follow The Regularized Leader (McMahan et al. 2013), the
optimizer of large sparse linear models, TensorFlow's ApplyFtrlV2:

    accum_new = accum + g ** 2
    linear += g + 2 * l2_shrinkage * w - (accum_new ** -p - accum ** -p) / lr * w
    quadratic = accum_new ** -p / lr + 2 * l2          (l2 includes beta / (2 * lr))
    w = (sign(linear) * l1 - linear) / quadratic  where |linear| > l1, else 0

with p = -learning_rate_power (0.5 by default).

Example:
    >>> opt = tf.keras.optimizers.Ftrl(learning_rate=0.1, l1_regularization_strength=0.01)
"""
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.ops import optimizer_ops


class Ftrl(Optimizer):
    """FTRL-Proximal optimizer."""

    _CHECKPOINT_SLOT_GROUPS = (("accumulator", "linear"),)

    def __init__(self, learning_rate=0.001, learning_rate_power=-0.5,
                 initial_accumulator_value=0.1, l1_regularization_strength=0.0,
                 l2_regularization_strength=0.0, name="Ftrl",
                 l2_shrinkage_regularization_strength=0.0, beta=0.0, **kwargs):
        for arg, value, rule in (
                ("initial_accumulator_value", initial_accumulator_value, "positive or zero"),
                ("learning_rate_power", -learning_rate_power, "negative or zero"),
                ("l1_regularization_strength", l1_regularization_strength, "positive or zero"),
                ("l2_regularization_strength", l2_regularization_strength, "positive or zero"),
                ("l2_shrinkage_regularization_strength", l2_shrinkage_regularization_strength,
                 "positive or zero")):
            if value < 0.0:
                shown = -value if arg == "learning_rate_power" else value
                raise ValueError(f"`{arg}` needs to be {rule}. Received: {arg}={shown}.")
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("learning_rate_power", learning_rate_power)
        self._set_hyper("l1_regularization_strength", l1_regularization_strength)
        self._set_hyper("l2_regularization_strength", l2_regularization_strength)
        self._set_hyper("beta", beta)
        self._initial_accumulator_value = initial_accumulator_value
        self._l2_shrinkage_regularization_strength = l2_shrinkage_regularization_strength

    def _create_slots(self, var_list):
        from tensorlite.keras.initializers import Constant  # noqa: PLC0415
        for var in var_list:
            self.add_slot(var, "accumulator", Constant(self._initial_accumulator_value))
            self.add_slot(var, "linear")

    def _update_config(self):
        return optimizer_ops.FTRL, ("accumulator", "linear"), {}

    def _prepare_local(self, var_device, var_dtype, apply_state):
        c = apply_state[(var_device, var_dtype)]
        lr = self._lr_now(var_dtype)
        hyper = {n: self._hyper_value(n, var_dtype) for n in (
            "learning_rate_power", "l1_regularization_strength",
            "l2_regularization_strength", "beta")}
        c.update(hyper, lr_t=lr, l2_shrinkage_regularization_strength=float(
            self._l2_shrinkage_regularization_strength))
        # Keras folds beta into the l2 strength TensorFlow's kernel takes.
        l2 = hyper["l2_regularization_strength"] + hyper["beta"] / (2.0 * lr)
        c["_args"] = (lr, hyper["l1_regularization_strength"], l2,
                      hyper["learning_rate_power"], c["l2_shrinkage_regularization_strength"])

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(),
                      initial_accumulator_value=self._initial_accumulator_value,
                      l2_shrinkage_regularization_strength=
                      self._l2_shrinkage_regularization_strength)
        return config

"""`tf.keras.optimizers.Nadam`: Adam with Nesterov momentum (Dozat 2015), as Keras's
OptimizerV2 computes it. With t = iterations + 1, a momentum schedule
mu_t = beta_1 * (1 - 0.5 * 0.96 ** (0.004 * t)) and its running product `momentum_cache`
(prod_t = prod_{t-1} * mu_t, an optimizer weight):

    m = beta_1 * m + (1 - beta_1) * g;  v = beta_2 * v + (1 - beta_2) * g ** 2
    m_bar = (1 - mu_t) * g / (1 - prod_t) + mu_{t+1} * m / (1 - prod_t * mu_{t+1})
    w -= learning_rate * m_bar / (sqrt(v / (1 - beta_2 ** t)) + epsilon)

As in Keras, the learning rate cannot be a LearningRateSchedule (0.004 is the
`schedule_decay` of the momentum schedule, not a learning-rate decay).

Example:
    >>> opt = tf.keras.optimizers.Nadam(learning_rate=0.002)
"""
import numpy as np

from tensorlite.framework.tensor import wrap
from tensorlite.framework.variables import Variable
from tensorlite.graph.tracing import is_tracing
from tensorlite.keras import backend
from tensorlite.keras.optimizers.hyperparameters import coefficient_tensor
from tensorlite.keras.optimizers.optimizer import Optimizer
from tensorlite.keras.optimizers.schedules import LearningRateSchedule
from tensorlite.ops import optimizer_ops


class Nadam(Optimizer):
    """Nadam optimizer."""

    _CHECKPOINT_SLOT_GROUPS = (("m", "v"),)

    def __init__(self, learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-7,
                 name="Nadam", **kwargs):
        kwargs["decay"] = kwargs.pop("schedule_decay", 0.004)
        learning_rate = kwargs.get("lr", learning_rate)
        if isinstance(learning_rate, LearningRateSchedule):
            raise ValueError("The Nadam optimizer does not support "
                             "tf.keras.optimizers.LearningRateSchedules as the learning rate.")
        super().__init__(name, learning_rate=learning_rate, **kwargs)
        self._set_hyper("beta_1", beta_1)
        self._set_hyper("beta_2", beta_2)
        self.epsilon = epsilon or backend.epsilon()
        self._m_cache = None
        self._m_cache_read = None

    def _create_slots(self, var_list):
        if self._m_cache is None:
            self._m_cache = Variable(np.asarray(1.0, dtype=var_list[0].dtype.as_numpy_dtype),
                                     name=f"{self._name}/momentum_cache", trainable=False)
            self._weights.append(self._m_cache)
        self._add_slots(var_list, "m", "v")

    def _update_config(self):
        return optimizer_ops.NADAM, ("m", "v"), {}

    def _checkpoint_variables(self):
        """Keras's order: iterations, the momentum cache, then the slots."""
        out = super()._checkpoint_variables()
        return out[:1] + ([self._m_cache] if self._m_cache is not None else []) + out[1:]

    def _prepare(self, var_list):
        # The momentum product before this step, read once (its update follows).
        self._m_cache_read = self._m_cache.read_value() if is_tracing() else \
            float(self._m_cache._t._value)
        return super()._prepare(var_list)

    def _prepare_local(self, var_device, var_dtype, apply_state):
        lr = self._hyper_value("learning_rate", var_dtype)  # `decay` is the schedule's
        b1, b2 = self._hyper_value("beta_1", var_dtype), self._hyper_value("beta_2", var_dtype)
        t = self._step_value(var_dtype, 1)
        mu_t = b1 * (1.0 - 0.5 * 0.96 ** (self._initial_decay * t))
        mu_next = b1 * (1.0 - 0.5 * 0.96 ** (self._initial_decay * (t + 1)))
        cache = self._m_cache_read
        if is_tracing():
            cache = coefficient_tensor(cache, var_dtype)
        m_schedule_new = cache * mu_t
        if var_dtype is self._m_cache.dtype:
            if is_tracing():
                self._m_cache.assign(m_schedule_new)
            else:
                self._m_cache._t = wrap(np.asarray(m_schedule_new, dtype=var_dtype.as_numpy_dtype))
        c = apply_state[(var_device, var_dtype)]
        c.update(lr_t=lr, epsilon=float(self.epsilon), beta_1_t=b1, beta_2_t=b2, m_t=mu_t,
                 m_t_1=mu_next)
        c["_args"] = (lr, b1, 1 - b1, b2, 1 - b2, c["epsilon"], 1.0 - mu_t, mu_next,
                      1.0 - m_schedule_new, 1.0 - m_schedule_new * mu_next, 1.0 - b2 ** t)

    def get_config(self):
        config = super().get_config()
        config.update(self._hyper_config(), epsilon=self.epsilon)
        return config

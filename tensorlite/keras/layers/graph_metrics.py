"""A functional model's symbolic losses and metrics, as the layers tf.keras 2 makes of them.

`model.add_loss(tf.reduce_sum(x1) * 0.1)` and `model.add_metric(tf.math.reduce_std(x1),
name="std", aggregation="mean")` on tensors of a functional model's graph (the TF guide's
"Training and evaluation with the built-in methods") become an `AddLoss` / `AddMetric`
layer called on that tensor. Its node joins the model's graph beside the outputs, so each
call of the model computes it and the layer adds the loss or updates the metric; it is
saved and loaded with the model like any layer.

Example:
    >>> model.add_loss(tf.reduce_sum(x1) * 0.1)
    >>> model.losses    # after a call: that call's value
"""
from tensorlite.keras.layers.layer import Layer


class AddLoss(Layer):
    """Adds its input to the losses of the model it is part of."""

    def __init__(self, unconditional=False, **kwargs):
        super().__init__(**kwargs)
        self.unconditional = unconditional
        self.built = True

    def call(self, inputs):
        self.add_loss(inputs)
        return inputs

    def get_config(self):
        return {**super().get_config(), "unconditional": self.unconditional}


class AddMetric(Layer):
    """Averages its input into the metric `metric_name`."""

    def __init__(self, aggregation=None, metric_name=None, **kwargs):
        super().__init__(**kwargs)
        self.aggregation, self.metric_name = aggregation, metric_name
        self.built = True

    def call(self, inputs):
        self.add_metric(inputs, name=self.metric_name, aggregation=self.aggregation)
        return inputs

    def get_config(self):
        return {**super().get_config(), "aggregation": self.aggregation,
                "metric_name": self.metric_name}

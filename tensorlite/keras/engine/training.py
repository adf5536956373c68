"""`tf.keras.Model`: compile, fit, evaluate, predict and the overridable steps.

`train_step`/`test_step`/`predict_step` are the units fit/evaluate/predict run per batch;
overriding them (as the TF Dev Summit 2020 talk "Learning to read with TensorFlow and
Keras" does) keeps the rest: callbacks, progress bar, History, validation.
"""
import copy
import os

import numpy as np

from tensorlite.autodiff.tape import GradientTape
from tensorlite.framework import nest
from tensorlite.framework.tensor import Tensor
from tensorlite.keras.engine import data_adapter, distributed_training
from tensorlite.keras.engine.compile_utils import LossesContainer, MetricsContainer
from tensorlite.keras.layers.layer import Layer
from tensorlite.ops import array_ops
from tensorlite.profiler import Trace


def _scalar(v):
    if isinstance(v, Tensor) or getattr(v, "_is_variable", False):
        v = v.numpy()
    return float(np.asarray(v)) if np.ndim(v) == 0 else v


def _step_logs(logs):
    """A step's returned dict as fit's logs: values as Python numbers, and a nested dict
    (Keras 3's `{"compile_metrics": {"mae": ...}}` from a custom `train_step` looping over
    `self.metrics`) flattened into its entries, as Keras 3 does."""
    out = {}
    for k, v in logs.items():
        if isinstance(v, dict):
            out.update(_step_logs(v))
        else:
            out[k] = _scalar(v)
    return out


class Model(Layer):
    """A layer with training: subclass it with `call`, or build it functionally as
    ``tf.keras.Model(inputs, outputs)``."""

    def __new__(cls, *args, **kwargs):
        if cls is Model and _functional_params(args, kwargs):
            from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
            return super().__new__(Functional)
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        functional = _functional_params(args, kwargs)
        if functional and not _is_functional(self):
            # A Model subclass built as `CustomModel(inputs, outputs)` (a custom train_step
            # on a functional graph): as tf.keras 2 does, its class becomes a Functional one
            from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
            _functional_bases(type(self), Functional)
            Functional.__init__(self, *args, **kwargs)
            return
        if type(self).__name__ == "Functional" or functional:
            return  # Functional.__init__ handles it
        base_kwargs = {k: kwargs.pop(k) for k in ("name", "trainable", "dtype")
                       if k in kwargs}
        super().__init__(**base_kwargs, **{k: v for k, v in kwargs.items()
                                           if k in ("input_shape", "batch_input_shape")})
        self._init_model_state()

    def _init_model_state(self):
        self.optimizer = None
        self.compiled_loss = None
        self.compiled_metrics = None
        self.stop_training = False
        self.history = None
        self._is_compiled = False
        self._compile_config = None
        self._run_eagerly = None
        self._build_input_shape = None
        # The strategy whose scope() the model was created (or compiled) in: fit then trains
        # data-parallel over its replicas (distributed_training.py).
        self._distribution_strategy = distributed_training.strategy_in_scope()

    # -- compile ---------------------------------------------------------------------------
    def compile(self, optimizer="rmsprop", loss=None, metrics=None, loss_weights=None,
                weighted_metrics=None, run_eagerly=None, steps_per_execution=None,
                jit_compile=None, **kwargs):
        """Configures the model for training (optimizer, loss, metrics)."""
        from tensorlite.keras import optimizers  # noqa: PLC0415
        if kwargs:
            raise TypeError(f"Invalid keyword argument(s) in `compile()`: {sorted(kwargs)}")
        self.optimizer = optimizers.get(optimizer)
        from tensorlite.keras import mixed_precision  # noqa: PLC0415
        if self.dtype_policy.name == "mixed_float16" and \
                not isinstance(self.optimizer, mixed_precision.LossScaleOptimizer):
            # as Keras: float16 gradients need loss scaling to keep small values
            self.optimizer = mixed_precision.LossScaleOptimizer(self.optimizer)
        names = self.output_names
        # without a loss, the model trains on what its layers add (add_loss), if anything
        self.compiled_loss = LossesContainer(loss, loss_weights, names)
        self.loss = loss  # as Keras: what compile was given (model.loss.threshold)
        self.compiled_metrics = MetricsContainer(metrics, weighted_metrics, names, loss)
        self._compile_config = {"optimizer": optimizers.serialize(self.optimizer),
                                "loss": _serializable(loss), "metrics": _serializable(metrics),
                                "loss_weights": loss_weights}
        self._run_eagerly = run_eagerly
        self._is_compiled = True
        # a new step graph: which layers are trainable may have changed (fine-tuning)
        self.__dict__.pop("_loss_and_grads", None)
        self._distribution_strategy = distributed_training.strategy_in_scope() or \
            getattr(self, "_distribution_strategy", None)

    @property
    def distribute_strategy(self):
        from tensorlite.distribute import get_strategy  # noqa: PLC0415
        return getattr(self, "_distribution_strategy", None) or get_strategy()

    @property
    def output_names(self):
        return ["output_1"]

    @property
    def metrics(self):
        out = []
        if self.compiled_loss is not None:
            out.extend(self.compiled_loss.metrics)
        if self.compiled_metrics is not None:
            # before the first update, the compiled metrics are one metric as Keras 3 lists
            # them ("compile_metrics", built by its first update_state), so a custom
            # train_step looping over self.metrics updates them; afterwards each one
            # is listed, as tf.keras 2 lists them
            container = self.compiled_metrics
            out.extend(container.metrics if container.built or not container.has_metrics()
                       else [container])
        return out + self._layer_metrics()  # then add_metric's, as tf.keras 2 lists them

    @property
    def metrics_names(self):
        return [m.name for m in self.metrics]

    @property
    def run_eagerly(self):
        return bool(self._run_eagerly)

    @run_eagerly.setter
    def run_eagerly(self, value):
        self._run_eagerly = value

    def get_layer(self, name=None, index=None):
        """tf.keras's `get_layer`: one of `self.layers`, by name or by index."""
        if name is not None and index is not None:
            raise ValueError(f"Provide only a layer name or a layer index. Received: "
                             f"index={index}, name={name}.")
        if index is not None:
            if not -len(self.layers) <= index < len(self.layers):
                raise ValueError(f"Was asked to retrieve layer at index {index} but model "
                                 f"only has {len(self.layers)} layers.")
            return self.layers[index]
        if name is None:
            raise ValueError("Provide either a layer name or layer index at `get_layer`.")
        for layer in self.layers:
            if layer.name == name:
                return layer
        raise ValueError(f"No such layer: {name}. Existing layers are: "
                         f"{[layer.name for layer in self.layers]}.")

    def reset_metrics(self):
        for m in self.metrics:
            m.reset_state()

    # -- the steps -------------------------------------------------------------------------
    def train_step(self, data):
        x, y, sample_weight = data_adapter.unpack(data)
        if self._graph_step_allowed():
            return self._graph_train_step(x, y, sample_weight)
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            loss = self.compute_loss(x, y, y_pred, sample_weight)
        self.optimizer.minimize(loss, self.trainable_variables, tape=tape)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _graph_step_allowed(self):
        """Keras runs the built-in step as a graph unless run_eagerly (or a customised loss
        computation) says otherwise; so do we."""
        cls = type(self)
        return not self.run_eagerly and self.compiled_loss is not None and \
            cls.compute_loss is Model.compute_loss and cls.train_step is Model.train_step

    def _graph_train_step(self, x, y, sample_weight):
        """Forward, loss and backward as one compiled graph; the optimizer and the metrics
        (which update NumPy state directly) run eagerly on its results."""
        total, per_output, y_pred, grads = self._loss_and_grads_step()(x, y, sample_weight)
        # the variables the graph was traced for: a layer frozen or unfrozen since then
        # takes effect at the next compile(), as in tf.keras
        self.optimizer.apply_gradients(zip(grads, self.__dict__["_step_variables"]))
        batch = nest.flatten(y_pred)[0].shape[0]
        self.compiled_loss.update_metrics(total, per_output, batch)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def _loss_and_grads_step(self):
        """(x, y, sample_weight) -> (total, per_output, y_pred, grads): the built-in step's
        forward and backward, compiled unless the model runs eagerly."""
        step = self.__dict__.get("_loss_and_grads")
        if step is None:
            from tensorlite.graph.function import Function  # noqa: PLC0415
            step = self.__dict__["_loss_and_grads"] = Function(self._loss_and_grads_eager,
                                                               name="train_step")
            # a graph per batch shape met (each data size's last batch), by design: fixed
            # shapes keep the fastest kernels (tf.keras relaxes them: reduce_retracing)
            step.warns_on_retracing = False
        return step if self._graph_step_allowed() else self._loss_and_grads_eager

    def _loss_and_grads_eager(self, x, y, sample_weight):
        with GradientTape() as tape:
            y_pred = self(x, training=True)
            total, per_output, _ = self.compiled_loss.compute(
                y, y_pred, sample_weight, regularization_losses=self.losses)
        # after the forward pass: a model's first call builds its layers
        variables = self.__dict__["_step_variables"] = self.trainable_variables
        scaling = getattr(self.optimizer, "get_scaled_loss", None)
        if scaling is None:
            grads = tape.gradient(total, variables)
        else:  # a LossScaleOptimizer: differentiate the scaled loss, unscale the gradients
            with tape:
                scaled = scaling(total)
            grads = self.optimizer.get_unscaled_gradients(tape.gradient(scaled, variables))
        return total, per_output, y_pred, grads

    def _traced_train_graph(self):
        """The graph fit's built-in train step last traced (None when fit ran eagerly: a
        custom train_step, run_eagerly=True, tf.config.run_functions_eagerly(True))."""
        step = self.__dict__.get("_loss_and_grads")
        if step is None or not self._graph_step_allowed():
            return None
        concrete = step.last_concrete_function
        return None if concrete is None else concrete.graph

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None):
        if self.compiled_loss is None:
            raise ValueError("No loss found. You may have forgotten to provide a `loss` "
                             "argument in the `compile()` method.")
        return self.compiled_loss(y, y_pred, sample_weight, regularization_losses=self.losses)

    def compute_metrics(self, x, y, y_pred, sample_weight):
        self.compiled_metrics.update_state(y, y_pred, sample_weight)
        return self.get_metrics_result()

    def get_metrics_result(self):
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        x, y, sample_weight = data_adapter.unpack(data)
        y_pred = self(x, training=False)
        self.compute_loss(x, y, y_pred, sample_weight)
        return self.compute_metrics(x, y, y_pred, sample_weight)

    def predict_step(self, data):
        x, _, _ = data_adapter.unpack(data)
        return self(x, training=False)

    def _predict_batch(self, batch):
        """predict_step, compiled as Keras's predict_function unless the model runs eagerly
        or predict_step is customised: the optimised graph folds BatchNormalization into
        the convolutions (reading the variables on each call) and fuses kernels."""
        if self.run_eagerly or type(self).predict_step is not Model.predict_step:
            return self.predict_step(batch)
        step = self.__dict__.get("_predict_function")
        if step is None:
            from tensorlite.graph.function import Function  # noqa: PLC0415
            step = self.__dict__["_predict_function"] = Function(
                lambda x: self(x, training=False), name="predict_step")
            step.warns_on_retracing = False  # a graph per batch shape, as the train step
        x, _, _ = data_adapter.unpack(batch)
        return step(x)

    # -- fit / evaluate / predict ---------------------------------------------------------
    def _assert_compiled(self, what):
        if not self._is_compiled:
            raise RuntimeError(f"You must compile your model before training/testing. Use "
                               f"`model.compile(optimizer, loss)` (called from {what})")

    def fit(self, x=None, y=None, batch_size=None, epochs=1, verbose="auto", callbacks=None,
            validation_split=0.0, validation_data=None, shuffle=True, class_weight=None,
            sample_weight=None, initial_epoch=0, steps_per_epoch=None, validation_steps=None,
            validation_batch_size=None, validation_freq=1, max_queue_size=10, workers=1,
            use_multiprocessing=False):
        """Trains for `epochs` epochs; returns a History."""
        from tensorlite.keras import callbacks as cbks  # noqa: PLC0415
        self._assert_compiled("fit")
        if validation_split and validation_data is None:
            (x, y, sample_weight), validation_data = data_adapter.split_validation(
                x, y, sample_weight, validation_split)
        batches = data_adapter.make_batches(x, y, sample_weight, batch_size, shuffle,
                                            class_weight, steps_per_epoch, "fit", workers,
                                            use_multiprocessing, max_queue_size)
        val = None
        if validation_data is not None:
            val = self._validation_batches(validation_data, validation_batch_size or batch_size,
                                           validation_steps)
        verbose = 1 if verbose == "auto" else verbose
        callback_list = cbks.CallbackList(callbacks, add_history=True,
                                          add_progbar=verbose != 0, model=self,
                                          verbose=verbose, epochs=epochs,
                                          steps=batches.steps())
        data_parallel = distributed_training.data_parallel_step(self, batches)
        train_step = data_parallel or self.train_step
        self.stop_training = False
        callback_list.on_train_begin()
        initial_epoch, skip = _resume_point(callback_list, initial_epoch)
        logs = {}
        for epoch in range(initial_epoch, epochs):
            self.reset_metrics()
            callback_list.on_epoch_begin(epoch)
            step = -1
            for step, batch in enumerate(batches.epoch()):
                if step < skip:  # trained before a restart (BackupAndRestore)
                    continue
                callback_list.on_train_batch_begin(step)
                with Trace("train", epoch_num=epoch, step_num=step, _r=1):
                    logs = train_step(batch)
                    logs = _step_logs(logs)
                callback_list.on_train_batch_end(step, logs)
                if self.stop_training:
                    break
            skip = 0
            if step < 0:
                raise ValueError("Unexpected result of `train_function` (Empty logs). This "
                                 "could be due to issues in input data: the training data "
                                 "produced no batch (an empty dataset or steps_per_epoch=0)")
            epoch_logs = dict(logs)
            if val is not None and (epoch + 1) % validation_freq == 0:
                val_logs = self._run_test(val, None)
                epoch_logs.update({f"val_{k}": v for k, v in val_logs.items()})
            callback_list.on_epoch_end(epoch, epoch_logs)
            if self.stop_training:
                break
        finalize = getattr(self.optimizer, "finalize_variable_values", None)
        if finalize is not None and epochs > initial_epoch:  # use_ema: the averages, as Keras
            finalize(self.trainable_variables)
        callback_list.on_train_end(logs)
        return self.history

    def _validation_batches(self, validation_data, batch_size, steps):
        if isinstance(validation_data, tuple) and not hasattr(validation_data, "_fields"):
            vx, vy, vsw = (tuple(validation_data) + (None,))[:3] if len(validation_data) == 2 \
                else validation_data
            return data_adapter.make_batches(vx, vy, vsw, batch_size, False, None, steps,
                                             "validation")
        return data_adapter.make_batches(validation_data, None, None, None, False, None, steps,
                                         "validation")

    def _run_test(self, batches, callback_list):
        self.reset_metrics()
        logs = {}
        for step, batch in enumerate(batches.epoch()):
            if callback_list is not None:
                callback_list.on_test_batch_begin(step)
            logs = _step_logs(self.test_step(batch))
            if callback_list is not None:
                callback_list.on_test_batch_end(step, logs)
        return logs

    def evaluate(self, x=None, y=None, batch_size=None, verbose="auto", sample_weight=None,
                 steps=None, callbacks=None, max_queue_size=10, workers=1,
                 use_multiprocessing=False, return_dict=False):
        """Loss and metrics on the data; a list (or dict with return_dict=True)."""
        self._assert_compiled("evaluate")
        batches = data_adapter.make_batches(x, y, sample_weight, batch_size, False, None, steps,
                                            "evaluate")
        callback_list = self._one_pass_callbacks(callbacks, verbose, batches, "test")
        callback_list.on_test_begin()
        logs = self._run_test(batches, callback_list)
        if not logs:
            raise ValueError("evaluate: the data produced no batch")
        callback_list.on_test_end(logs)
        if return_dict:
            return logs
        values = [logs[m.name] for m in self.metrics if m.name in logs]
        return values[0] if len(values) == 1 else values

    def _one_pass_callbacks(self, callbacks, verbose, batches, mode):
        """The CallbackList of evaluate (mode 'test') or predict: one pass, a progress bar
        unless verbose=0."""
        from tensorlite.keras import callbacks as cbks  # noqa: PLC0415
        verbose = 1 if verbose == "auto" else verbose
        return cbks.CallbackList(callbacks, add_progbar=verbose != 0, model=self,
                                 verbose=verbose, epochs=1, steps=batches.steps(), mode=mode)

    def predict(self, x, batch_size=None, verbose="auto", steps=None, callbacks=None,
                max_queue_size=10, workers=1, use_multiprocessing=False):
        """Model outputs for every input, concatenated into NumPy arrays."""
        batches = data_adapter.make_batches(x, None, None, batch_size, False, None, steps,
                                            "predict")
        callback_list = self._one_pass_callbacks(callbacks, verbose, batches, "predict")
        callback_list.on_predict_begin()
        outputs = []
        for step, batch in enumerate(batches.epoch()):
            callback_list.on_predict_batch_begin(step)
            out = self._predict_batch(batch)
            outputs.append(nest.map_structure(lambda t: np.asarray(t), out))
            callback_list.on_predict_batch_end(step, {"outputs": out})
        if not outputs:
            raise ValueError("Unexpected result of `predict_function` (Empty batch_outputs). "
                             "Please use `Model.compile(..., run_eagerly=True)`, or "
                             "`tf.config.run_functions_eagerly(True)` for more information "
                             "of where went wrong, or file a issue/bug to `tf.keras`.")
        callback_list.on_predict_end()
        return nest.map_structure(lambda *parts: np.concatenate(parts, axis=0), *outputs)

    def train_on_batch(self, x, y=None, sample_weight=None, class_weight=None,
                       reset_metrics=True, return_dict=False):
        self._assert_compiled("train_on_batch")
        if reset_metrics:
            self.reset_metrics()
        batch = next(data_adapter.make_batches(x, y, sample_weight, None, False, class_weight,
                                               None, "train_on_batch").epoch())
        logs = _step_logs(self.train_step(batch))
        return logs if return_dict else list(logs.values())

    def test_on_batch(self, x, y=None, sample_weight=None, reset_metrics=True,
                      return_dict=False):
        if reset_metrics:
            self.reset_metrics()
        batch = next(data_adapter.make_batches(x, y, sample_weight, None, False, None, None,
                                               "test_on_batch").epoch())
        logs = _step_logs(self.test_step(batch))
        return logs if return_dict else list(logs.values())

    def predict_on_batch(self, x):
        return nest.map_structure(np.asarray, self(x, training=False))

    # -- building, summary, saving -----------------------------------------------------------
    def _maybe_build(self, inputs):
        """A model's layers build themselves when called; only a user-defined build()
        (creating the model's own weights) runs here. Model.build itself calls the model."""
        if self.built:
            return
        shapes = nest.map_structure(lambda t: t.shape, inputs)
        if self._build_input_shape is None:
            self._build_input_shape = shapes
        own_build = type(self).build
        if own_build is not Model.build and own_build.__qualname__.split(".")[0] not in (
                "Sequential", "Functional"):
            from tensorlite.framework.name_scope import name_scope  # noqa: PLC0415
            with name_scope(self._scope_name):
                own_build(self, shapes)
        self.built = True

    def build(self, input_shape):
        """Builds the model by calling it on zeros of `input_shape` (None batch -> 1)."""
        if self.built and self._build_input_shape is not None:
            return
        self._build_input_shape = input_shape

        def zeros(shape):
            dims = shape.as_list() if hasattr(shape, "as_list") else list(shape)
            return array_ops.zeros([1 if d is None else d for d in dims],
                                   dtype=getattr(self, "_input_dtype", None) or self.dtype)
        if isinstance(input_shape, dict):
            probe = {k: zeros(v) for k, v in input_shape.items()}
        elif isinstance(input_shape, (list, tuple)) and input_shape and \
                isinstance(input_shape[0], (list, tuple)) or (
                    isinstance(input_shape, list) and input_shape and
                    hasattr(input_shape[0], "as_list")):
            probe = [zeros(s) for s in input_shape]
        else:
            probe = zeros(input_shape)
        self(probe, training=False)
        self.built = True

    def summary(self, line_length=None, positions=None, print_fn=None, expand_nested=False,
                show_trainable=False):
        from tensorlite.keras.engine.summary import print_summary  # noqa: PLC0415
        if not self.built:
            raise ValueError("This model has not yet been built. Build the model first by "
                             "calling `build()` or by calling the model on a batch of data.")
        print_summary(self, line_length=line_length, positions=positions, print_fn=print_fn)

    def _trackable_children(self):
        """tf.keras's checkpoint layout: a network's layers as `layer_with_weights-J` (those
        with weights, numbered among themselves) and `layer-I`; a subclassed model's by
        attribute; then the `optimizer`. A network also has Keras 3's `_operations` (or
        `_functional`) edges to the same layers (keras/saving/keras3_layout.py)."""
        if self._is_network():
            out, j = [], 0
            for i, layer in enumerate(self.layers):
                if layer.weights:
                    out.append((f"layer_with_weights-{j}", layer))
                    j += 1
                out.append((f"layer-{i}", layer))
            from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
            from tensorlite.keras.saving import keras3_layout  # noqa: PLC0415
            out.extend(keras3_layout.model_aliases(self, isinstance(self, Sequential)))
        else:
            out = Layer._trackable_children(self)
        if self.optimizer is not None:
            out.append(("optimizer", self.optimizer))
        return out

    def _prepare_restore(self):
        """Before a checkpoint restores the optimizer: its slots exist to receive values
        (tf.keras restores them as they are created; here they are created first)."""
        if self.optimizer is not None and self.built:
            self.optimizer._create_all_weights(self.trainable_variables)

    def _is_network(self):
        from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
        from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
        return isinstance(self, (Functional, Sequential))

    def save(self, filepath, overwrite=True, include_optimizer=True, save_format=None,
             signatures=None, options=None, save_traces=True):
        """Saves architecture, weights and compile state (see keras/saving/save.py)."""
        from tensorlite.keras.saving import save as saving  # noqa: PLC0415
        saving.save_model(self, filepath, overwrite=overwrite,
                          include_optimizer=include_optimizer)

    def export(self, filepath, format="tf_saved_model", verbose=True,  # noqa: A002
               input_signature=None):
        """Keras 3's `model.export`: a serving SavedModel (`serve` endpoint and the
        `serving_default` signature) that TensorFlow loads (see keras/saving/export.py)."""
        if format != "tf_saved_model":
            raise ValueError(f"Unrecognized format={format!r}: tensorlite exports "
                             f"format='tf_saved_model' (for ONNX: tf.onnx.export, for "
                             f"TFLite: tf.lite.TFLiteConverter)")
        from tensorlite.keras.saving.export import export  # noqa: PLC0415
        export(self, filepath, input_signature)
        if verbose:
            print(f"Saved artifact at '{os.fspath(filepath)}'. The following endpoints are "
                  f"available:\n\n* Endpoint 'serve'")

    def save_weights(self, filepath, overwrite=True, save_format=None, options=None):
        from tensorlite.keras.saving import save as saving  # noqa: PLC0415
        saving.save_weights(self, filepath)

    def load_weights(self, filepath, by_name=False, skip_mismatch=False, options=None):
        from tensorlite.keras.saving import save as saving  # noqa: PLC0415
        return saving.load_weights(self, filepath)

    def get_config(self):
        if type(self).get_config is not Model.get_config:
            # a subclass's get_config extending ours ({**super().get_config(), ...}): the
            # base arguments, as tf.keras's Model.get_config gives them
            return {"name": self.name, "trainable": self.trainable}
        raise NotImplementedError(f"Model {type(self).__name__} is a subclassed model: "
                                  f"implement get_config() (and from_config) to serialise it, "
                                  f"or save with save_weights()")

    def to_json(self, **kwargs):
        """The model's architecture as Keras's JSON config (`model_from_json` rebuilds it;
        `.keras` archives hold the same); keyword arguments go to json.dumps."""
        import json  # noqa: PLC0415
        from tensorlite.keras.saving.keras_config import to_keras  # noqa: PLC0415
        if not self._is_network():
            self.get_config()  # a subclassed model without get_config: its error
            raise NotImplementedError(f"to_json of the subclassed model "
                                      f"{type(self).__name__}: save it with save_weights, "
                                      f"or as a .keras archive")
        from tensorlite.keras.saving.keras_archive import _json_default  # noqa: PLC0415
        return json.dumps(to_keras(self), default=_json_default, **kwargs)

    @classmethod
    def from_config(cls, config, custom_objects=None):
        """A functional model's config (`get_config()`, tensorlite's or Keras's layout)
        rebuilds the graph; any other config is a subclassed model's constructor
        arguments."""
        if isinstance(config, dict) and "layers" in config and \
                ("nodes" in config or "input_layers" in config):
            from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
            if "nodes" in config:
                return Functional.from_config(config, custom_objects)
            from tensorlite.keras.saving.keras_config import from_keras  # noqa: PLC0415
            return from_keras({"class_name": "Functional", "config": config}, custom_objects)
        return cls(**config)

    def __deepcopy__(self, memo):
        return copy.copy(self)


def _is_functional(model):
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    return isinstance(model, Functional)


def _functional_params(args, kwargs):
    """Whether Model(...) arguments build a functional model (inputs and outputs given), as
    tf.keras 2 decides; a subclass's other positional arguments are ignored there (the
    effective TF 2 guide's `super().__init__(self)`)."""
    return len(args) >= 2 or (len(args) == 1 and "outputs" in kwargs) or \
        ("inputs" in kwargs and "outputs" in kwargs)


def _functional_bases(cls, functional):
    """Puts `functional` where Model is among `cls`'s bases (and its bases' bases), as
    tf.keras 2's inject_functional_model_class does; returns the class."""
    if cls is Model:
        return functional
    if cls is functional or not issubclass(cls, Model):
        return cls
    cls.__bases__ = tuple(_functional_bases(base, functional) for base in cls.__bases__)
    return cls


def _serializable(spec):
    if spec is None or isinstance(spec, (str, int, float)):
        return spec
    if isinstance(spec, (list, tuple)):
        return [_serializable(s) for s in spec]
    if isinstance(spec, dict):
        return {k: _serializable(v) for k, v in spec.items()}
    if hasattr(spec, "get_config"):
        try:
            return {"class_name": type(spec).__name__, "config": spec.get_config()}
        except NotImplementedError:
            return None
    return getattr(spec, "__name__", None)


def _resume_point(callback_list, initial_epoch):
    """(epoch, steps to skip) where fit continues: a restored BackupAndRestore's position,
    else (initial_epoch, 0)."""
    for cb in callback_list:
        at = getattr(cb, "_resume_at", None)
        if at is not None:
            return max(at[0], initial_epoch), at[1] if at[0] >= initial_epoch else 0
    return initial_epoch, 0

"""`tf.estimator.Estimator`: model_fn(features, labels, mode[, params, config]) returns an
EstimatorSpec; train/evaluate/predict loop over input_fn's dataset; export_saved_model.

Two paths, chosen by what model_fn's TRAIN spec gives as train_op (graph_estimator.py):

- TF1's train_op (`tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(loss,
  global_step=tf.compat.v1.train.get_global_step())`): the graph path, as TensorFlow runs an
  Estimator. model_fn is built once per call in a fresh tf.Graph (graph_model.py), run by a
  Session with SessionRunHooks (graph_loops.py), checkpointed in TF's format as
  model_dir/model.ckpt-<step> (graph_checkpoint.py), evaluated with eval_metric_ops'
  (value, update_op) pairs and exported as a SavedModel (saved_model_export.py). With
  `RunConfig(train_distribute=MirroredStrategy(...))` the graph path runs each batch whole in
  one Session: for a loss that is a mean over the batch this is the update the replicas make
  together (TF's Estimator scales each replica's loss so that their summed gradients are
  the mean's), so the strategy is accepted and results match a single device.
- A Keras optimizer (or its name) as train_op: tensorlite's eager path (this module).
  model_fn runs once per batch. Variables it creates (Keras layers, tf.Variable, embedding
  tables) are created on the first call and handed back, in creation order, on later calls,
  so the same function serves every step. The step records model_fn under a GradientTape
  and applies the optimizer. With `RunConfig(train_distribute=strategy)` each batch is split
  among the strategy's replicas and their gradients summed (distribute/data_parallel.py).
  Checkpoints are NumPy archives in model_dir (written by the chief, atomically); a new
  Estimator on the same model_dir continues from the latest one. Hooks are not run and
  export_saved_model is not available on this path.

Example:
    >>> def model_fn(features, labels, mode):
    ...     pred = tf.compat.v1.layers.dense(features["x"], 1)
    ...     loss = tf.compat.v1.losses.mean_squared_error(labels, pred)
    ...     train_op = tf.compat.v1.train.GradientDescentOptimizer(0.1).minimize(
    ...         loss, global_step=tf.compat.v1.train.get_global_step())
    ...     return tf.estimator.EstimatorSpec(mode, predictions={"y": pred}, loss=loss,
    ...         train_op=train_op, eval_metric_ops={
    ...             "mae": tf.compat.v1.metrics.mean_absolute_error(labels, pred)})
    >>> est = tf.estimator.Estimator(model_fn, model_dir="/tmp/m")
"""
import contextlib
import inspect
import os
import tempfile
import threading

import numpy as np

from tensorlite.framework.atomic_files import write_bytes, write_with
from tensorlite.autodiff.tape import GradientTape
from tensorlite.distribute.distribute_lib import should_write_checkpoint
from tensorlite.estimator import eval_events, graph_checkpoint, graph_estimator, warm_start
from tensorlite.estimator.run_config import RunConfig
from tensorlite.framework import nest
from tensorlite.framework.tensor import Tensor, wrap
from tensorlite.framework.variables import variable_creator_scope


class ModeKeys:
    TRAIN = "train"
    EVAL = "eval"
    PREDICT = "infer"


class EstimatorSpec:
    """What model_fn returns: predictions, loss, train_op and eval_metric_ops.

    train_op is TF1's training op (`optimizer.minimize(loss, global_step=...)` in a graph):
    the Estimator then runs model_fn in a graph (graph_loops.py), with eval_metric_ops as
    (value, update_op) pairs. A Keras optimizer (or its name) as train_op selects the eager
    path instead, where eval_metric_ops may also be tensors or Keras metrics."""

    def __init__(self, mode, predictions=None, loss=None, train_op=None, eval_metric_ops=None,
                 export_outputs=None, training_chief_hooks=None, training_hooks=None,
                 scaffold=None, evaluation_hooks=None, prediction_hooks=None):
        if mode == ModeKeys.TRAIN and (loss is None or train_op is None):
            raise ValueError("EstimatorSpec in TRAIN mode needs `loss` and `train_op` (TF1's "
                             "optimizer.minimize(loss, global_step=...), or a Keras "
                             "optimizer for the eager path)")
        if mode == ModeKeys.EVAL and loss is None:
            raise ValueError("EstimatorSpec in EVAL mode needs `loss`")
        if mode == ModeKeys.PREDICT and predictions is None:
            raise ValueError("EstimatorSpec in PREDICT mode needs `predictions`")
        self.mode, self.predictions, self.loss = mode, predictions, loss
        self.train_op, self.eval_metric_ops = train_op, eval_metric_ops or {}
        self.export_outputs = export_outputs
        self.training_chief_hooks = list(training_chief_hooks or [])
        self.training_hooks = list(training_hooks or [])
        self.evaluation_hooks = list(evaluation_hooks or [])
        self.prediction_hooks = list(prediction_hooks or [])
        self.scaffold = scaffold


class _VariableStore:
    """Variables a model_fn creates, handed back by creation order on every later call."""

    def __init__(self):
        self.variables = []
        self._local = threading.local()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def reuse(self):
        self._local.i = 0
        with variable_creator_scope(self._creator):
            yield

    def _creator(self, next_creator, **kwargs):
        i = self._local.i
        self._local.i += 1
        with self._lock:
            if i < len(self.variables):
                return self.variables[i]
            v = next_creator(**kwargs)
            self.variables.append(v)
            return v


def _as_numpy(v):
    return v._value if isinstance(v, Tensor) else np.asarray(v.numpy() if hasattr(v, "numpy")
                                                               else v)


class Estimator:
    """Trains, evaluates and predicts with a model_fn."""

    def __init__(self, model_fn, model_dir=None, config=None, params=None,
                 warm_start_from=None):
        if not callable(model_fn):
            raise ValueError(f"model_fn must be callable, got {model_fn!r}")
        config = config or RunConfig()
        if not isinstance(config, RunConfig):
            raise ValueError(f"config must be a tf.estimator.RunConfig, got "
                             f"{type(config).__name__}")
        if model_dir and config.model_dir and model_dir != config.model_dir:
            raise ValueError(f"model_dir are set both in constructor and RunConfig, but with "
                             f"different values: {model_dir} vs {config.model_dir}")
        self._model_dir = model_dir or config.model_dir or tempfile.mkdtemp(prefix="est_")
        self._config = config.replace(model_dir=self._model_dir)
        self._model_fn, self._params = model_fn, dict(params or {})
        self._store = _VariableStore()
        self._optimizer = None
        self._global_step = 0
        self._restored = False
        self._fn_args = set(inspect.signature(model_fn).parameters)
        self._kind = None          # "graph" or "eager" once known (graph_estimator.py)
        self._graph_error = None   # why building model_fn in a graph failed, if it did
        self._hook_stopped = False  # whether a hook's request_stop ended the last train
        self._warm_start = warm_start.settings(warm_start_from)

    model_dir = property(lambda self: self._model_dir)
    config = property(lambda self: self._config)
    params = property(lambda self: dict(self._params))

    # -- model_fn ---------------------------------------------------------------------------
    def _invoke_model_fn(self, features, labels, mode):
        """model_fn(features, labels, mode[, params, config]) -> its EstimatorSpec."""
        kwargs = {"features": features, "labels": labels, "mode": mode}
        if "params" in self._fn_args:
            kwargs["params"] = self._params
        if "config" in self._fn_args:
            kwargs["config"] = self._config
        if "labels" not in self._fn_args:
            kwargs.pop("labels")
        spec = self._model_fn(**kwargs)
        if not isinstance(spec, EstimatorSpec):
            raise ValueError(f"model_fn must return an EstimatorSpec, got "
                             f"{type(spec).__name__}")
        return spec

    def _call_model_fn(self, features, labels, mode):
        """The eager path's call: variables handed back by creation order."""
        with self._store.reuse():
            spec = self._invoke_model_fn(features, labels, mode)
        if not self._restored:
            # The first call made the variables; load the checkpoint into them and run
            # again so this batch sees the restored values.
            self._maybe_restore()
            with self._store.reuse():
                spec = self._invoke_model_fn(features, labels, mode)
        return spec

    def _trainable(self):
        return [v for v in self._store.variables if getattr(v, "trainable", True)]

    def _loss_and_grads(self, features, labels):
        with GradientTape() as tape:
            spec = self._call_model_fn(features, labels, ModeKeys.TRAIN)
        if self._optimizer is None:
            self._optimizer = _as_optimizer(spec.train_op)
        grads = tape.gradient(spec.loss, self._trainable())
        return [spec.loss], grads, None

    def _train_step(self, features, labels):
        strategy = self._config.train_distribute
        if strategy is None or strategy.num_replicas_in_sync == 1:
            _, grads, _ = self._loss_and_grads(features, labels)
        else:
            from tensorlite.distribute import data_parallel  # noqa: PLC0415
            if not self._store.variables:     # first step: create variables, one replica
                self._call_model_fn(*_first_rows((features, labels)), ModeKeys.TRAIN)
            variables = self._trainable()
            step = data_parallel.replicated_step(
                strategy, (features, labels), lambda p: self._loss_and_grads(*p),
                [tuple(v.shape) for v in variables], 1,
                [_as_numpy(v).dtype for v in variables])
            grads = [wrap(g) for g in step.grads]
        variables = self._trainable()
        self._optimizer.apply_gradients([(g, v) for g, v in zip(grads, variables)
                                         if g is not None])
        self._global_step += 1

    # -- the public loops -------------------------------------------------------------------
    def train(self, input_fn, hooks=None, steps=None, max_steps=None, saving_listeners=None):
        """Trains for `steps` more steps, up to global step `max_steps`, or until input_fn's
        data ends; then writes a checkpoint."""
        if steps is not None and max_steps is not None:
            raise ValueError("Can not provide both steps and max_steps.")
        if steps is not None and steps <= 0:
            raise ValueError(f"Must specify steps > 0, given: {steps}")
        if max_steps is not None and max_steps <= 0:
            raise ValueError(f"Must specify max_steps > 0, given: {max_steps}")
        if graph_estimator.uses_graph(self, ModeKeys.TRAIN):
            step = graph_estimator.train(self, input_fn, hooks, steps, max_steps,
                                         saving_listeners)
            if step is not None:
                self._global_step = step
                return self
        _no_hooks_on_eager_path(hooks, saving_listeners)
        if self._warm_start is not None:
            raise NotImplementedError("warm_start_from works on the graph path only (model_fn "
                                      "returning TF1's train_op), not with a Keras optimizer")
        with graph_estimator.noting_graph_error(self):
            return self._train_eager(steps, max_steps, input_fn)

    def _train_eager(self, steps, max_steps, input_fn):
        self._maybe_restore()
        if not self._restored:   # variables not made yet: take the step from the checkpoint
            with np.load(self.latest_checkpoint(), allow_pickle=False) as data:
                self._global_step = int(data["global_step"])
        stop = max_steps if max_steps is not None else \
            (self._global_step + steps if steps is not None else None)
        if stop is not None and self._global_step >= stop:
            return self
        every = self._config.save_checkpoints_steps
        for features, labels in self._batches(input_fn, ModeKeys.TRAIN):
            self._train_step(features, labels)
            if every and self._global_step % every == 0:
                self._save()
            if stop is not None and self._global_step >= stop:
                break
        self._save()
        return self

    def evaluate(self, input_fn, steps=None, hooks=None, checkpoint_path=None, name=None):
        """{'loss': mean loss, each eval metric, 'global_step'} over input_fn's data; also
        written as summaries in eval_dir(name)."""
        if self._kind is None and checkpoint_path is None and \
                graph_checkpoint.kind(self._model_dir) is None:
            raise ValueError(f"Could not find trained model in model_dir: {self._model_dir}. "
                             f"Train the Estimator first (or pass checkpoint_path)")
        if graph_estimator.uses_graph(self, ModeKeys.EVAL):
            return graph_estimator.evaluate(self, input_fn, steps, hooks, checkpoint_path,
                                            name)
        _no_hooks_on_eager_path(hooks)
        self._maybe_restore(checkpoint_path)
        sums, count = {}, 0
        for i, (features, labels) in enumerate(self._batches(input_fn, ModeKeys.EVAL)):
            if steps is not None and i >= steps:
                break
            spec = self._call_model_fn(features, labels, ModeKeys.EVAL)
            n = _batch_size(features)
            values = {"loss": spec.loss}
            for k, v in spec.eval_metric_ops.items():
                v = v[0] if isinstance(v, tuple) else v
                values[k] = v.result() if hasattr(v, "result") else v   # a Keras metric
            for k, v in values.items():
                sums[k] = sums.get(k, 0.0) + float(np.mean(_as_numpy(v))) * n
            count += n
        if not count:
            raise ValueError("evaluate: input_fn produced no data")
        out = {k: np.float32(v / count) for k, v in sums.items()}
        out["global_step"] = np.int64(self._global_step)
        eval_events.write(self.eval_dir(name), self._global_step, out)
        return out

    def eval_dir(self, name=None):
        """Where evaluate writes its summaries: model_dir/eval or model_dir/eval_<name>."""
        return os.path.join(self._model_dir, "eval" if not name else f"eval_{name}")

    def predict(self, input_fn, predict_keys=None, hooks=None, checkpoint_path=None,
                yield_single_examples=True):
        """Yields predictions (dicts of arrays, one example at a time by default)."""
        if graph_estimator.uses_graph(self, ModeKeys.PREDICT):
            yield from graph_estimator.predict(self, input_fn, predict_keys, hooks,
                                               checkpoint_path, yield_single_examples)
            return
        _no_hooks_on_eager_path(hooks)
        self._maybe_restore(checkpoint_path)
        for features, _ in self._batches(input_fn, ModeKeys.PREDICT):
            spec = self._call_model_fn(features, None, ModeKeys.PREDICT)
            preds = spec.predictions
            if isinstance(preds, dict):
                preds = {k: _as_numpy(v) for k, v in preds.items()
                         if predict_keys is None or k in predict_keys}
                if not yield_single_examples:
                    yield preds
                    continue
                n = len(next(iter(preds.values())))
                for i in range(n):
                    yield {k: v[i] for k, v in preds.items()}
            else:
                arr = _as_numpy(preds)
                yield from (arr if yield_single_examples else [arr])

    def export_saved_model(self, export_dir_base, serving_input_receiver_fn,
                           assets_extra=None, as_text=False, checkpoint_path=None,
                           experimental_mode=ModeKeys.PREDICT):
        """Writes a timestamped SavedModel under export_dir_base serving model_fn's PREDICT
        outputs (saved_model_export.py); returns its path as bytes."""
        if experimental_mode != ModeKeys.PREDICT or assets_extra or as_text:
            raise NotImplementedError("export_saved_model: tensorlite exports the PREDICT "
                                      "mode only, without assets_extra or as_text")
        if checkpoint_path is None and graph_checkpoint.kind(self._model_dir) is None:
            raise ValueError(f"Couldn't find trained model at {self._model_dir}.")
        if not graph_estimator.uses_graph(self, None):
            raise NotImplementedError("export_saved_model needs a graph-mode model_fn (TF1 "
                                      "train_op) trained into model_dir; the eager path's "
                                      "Keras-optimizer model_fns cannot be exported yet")
        from tensorlite.estimator import saved_model_export  # noqa: PLC0415 - heavy
        return saved_model_export.export(self, export_dir_base, serving_input_receiver_fn,
                                         checkpoint_path)

    def _batches(self, input_fn, mode):
        kwargs = {}
        params = inspect.signature(input_fn).parameters
        for name, value in (("mode", mode), ("params", self._params),
                            ("config", self._config)):
            if name in params:
                kwargs[name] = value
        data = input_fn(**kwargs)
        if isinstance(data, tuple) and len(data) == 2 and not hasattr(data, "_fields"):
            yield data
            return
        for element in data:
            if isinstance(element, tuple) and len(element) == 2:
                yield element
            else:
                yield element, None

    # -- variables and checkpoints --------------------------------------------------------
    def get_variable_names(self):
        """Names of the model's variables (a graph model's: the latest checkpoint's keys)."""
        if graph_estimator.uses_graph(self, None):
            return graph_estimator.checkpoint_names(self)
        return [v.name for v in self._store.variables]

    def get_variable_value(self, name):
        """A variable's value (a graph model's: from the latest checkpoint)."""
        if graph_estimator.uses_graph(self, None):
            return graph_estimator.checkpoint_value(self, name)
        for v in self._store.variables:
            if v.name == name:
                return _as_numpy(v)
        raise ValueError(f"No variable named {name!r}; known: {self.get_variable_names()}")

    def latest_checkpoint(self):
        """The latest checkpoint's path in model_dir, or None."""
        if graph_checkpoint.kind(self._model_dir) == "graph":
            return graph_checkpoint.latest(self._model_dir)
        marker = os.path.join(self._model_dir, "checkpoint")
        if not os.path.exists(marker):
            return None
        with open(marker, encoding="utf-8") as f:
            name = f.read().strip()
        if os.sep in name or name.startswith(".") or not name.startswith("model.ckpt-"):
            raise ValueError(f"{marker}: not a checkpoint name: {name!r}")
        return os.path.join(self._model_dir, name)

    def _save(self):
        if not should_write_checkpoint() or not self._store.variables:
            return
        os.makedirs(self._model_dir, exist_ok=True)
        name = f"model.ckpt-{self._global_step}.npz"
        arrays = {f"v{i}": _as_numpy(v) for i, v in enumerate(self._store.variables)}
        arrays["global_step"] = np.int64(self._global_step)
        write_with(os.path.join(self._model_dir, name), lambda tmp: _savez(tmp, arrays))
        write_bytes(os.path.join(self._model_dir, "checkpoint"), name.encode())

    def _maybe_restore(self, checkpoint_path=None):
        """Loads the latest checkpoint into the variables once they exist."""
        if self._restored and checkpoint_path is None:
            return
        path = checkpoint_path or self.latest_checkpoint()
        if path is None:
            self._restored = True
            return
        if not self._store.variables:
            return     # model_fn has not created them yet: restored after its first call
        with np.load(path, allow_pickle=False) as data:
            n = len([k for k in data.files if k.startswith("v")])
            if n != len(self._store.variables):
                raise ValueError(f"checkpoint {path} holds {n} variables but model_fn "
                                 f"creates {len(self._store.variables)}: a different model")
            for i, v in enumerate(self._store.variables):
                v.assign(data[f"v{i}"])
            self._global_step = int(data["global_step"])
        self._restored = True


def _no_hooks_on_eager_path(hooks, listeners=None):
    if hooks or listeners:
        raise NotImplementedError("SessionRunHooks and saving_listeners run on the graph path "
                                  "only (model_fn returning TF1's train_op); the eager path "
                                  "(a Keras optimizer as train_op) has no Session to hook")


def _savez(path, arrays):
    with open(path, "wb") as f:  # a file object: np.savez would append .npz to a name
        np.savez(f, **arrays)


def _as_optimizer(train_op):
    from tensorlite.keras import optimizers  # noqa: PLC0415
    if isinstance(train_op, str):
        return optimizers.get(train_op)
    if not hasattr(train_op, "apply_gradients"):
        raise ValueError(f"EstimatorSpec.train_op must be a Keras optimizer (or its name) in "
                         f"tensorlite, got {type(train_op).__name__}")
    return train_op


def _batch_size(features):
    leaves = [v for v in nest.flatten(features) if v is not None]
    return int(np.shape(_as_numpy(leaves[0]))[0]) if leaves else 1


def _first_rows(batch):
    return nest.map_structure(lambda v: None if v is None else wrap(_as_numpy(v)[:1]), batch)

"""`tf.keras.callbacks.TensorBoard`: fit's metrics, weight histograms and images, the model's
graphs and a profile range, written as TensorBoard event files.

Its own module so that `callbacks.py` keeps the callbacks that only watch logs; it is
re-exported as `tf.keras.callbacks.TensorBoard`.

Example:
    >>> tb = tf.keras.callbacks.TensorBoard(log_dir="/tmp/logs", histogram_freq=1)
    >>> model.fit(x, y, epochs=2, callbacks=[tb])  # doctest: +SKIP
"""
import os
import warnings

import numpy as np

from tensorlite.keras.callback import Callback


class TensorBoard(Callback):
    """`tf.keras.callbacks.TensorBoard`: writes fit's metrics (and weight histograms) as
    TensorBoard event files, train ones under `log_dir/train` and validation ones under
    `log_dir/validation`.

    Epoch metrics are tagged 'epoch_<metric>' at step = epoch; with `update_freq='batch'`
    or an int N, batch metrics are tagged 'batch_<metric>' every N batches at step = the
    number of batches trained so far. `histogram_freq=N` writes one histogram per weight
    every N epochs. `profile_batch=N` or `(start, stop)` (or `'150, 160'`) runs
    `tf.profiler` from the start of the start-th batch of the run (counted from 1 over all
    epochs, as Keras) to the end of the stop-th, writing the profile under
    `log_dir/plugins/profile/`; fit marks each step with `Trace('train', step_num=...)`.
    Profiling problems (another profiler running, an unwritable log_dir, a range the run never
    reaches) are warnings: training goes on. `write_graph=True` (the default) writes, at the
    start of training, the model's JSON config tagged 'keras' (TensorBoard's conceptual
    graph; Sequential and functional models only, as Keras) and, after the first batch, the
    op graph of the traced train step (forward, loss and gradients) as the run's graph;
    with `run_eagerly=True` there is no op graph, as in Keras. Not available in tensorlite:
    embeddings.
    """

    _DEPRECATED_KWARGS = ("write_grads", "embeddings_layer_names", "batch_size")

    def __init__(self, log_dir="logs", histogram_freq=0, write_graph=True, write_images=False,
                 write_steps_per_second=False, update_freq="epoch", profile_batch=0,
                 embeddings_freq=0, embeddings_metadata=None, **kwargs):
        super().__init__()
        self._supports_tf_logs = True
        unknown = set(kwargs) - set(self._DEPRECATED_KWARGS)
        if unknown:
            raise ValueError(f"Unrecognized arguments in `TensorBoard` Callback: "
                             f"{sorted(unknown)}")
        for key in kwargs:
            warnings.warn(f"TensorBoard: `{key}` is deprecated and ignored", stacklevel=2)
        self.log_dir = os.fspath(log_dir)
        self.histogram_freq = _tb_nonneg_int(histogram_freq, "histogram_freq")
        self.write_graph = write_graph
        self.write_images = write_images
        self.write_steps_per_second = write_steps_per_second
        self.update_freq = _tb_update_freq(update_freq)
        self.embeddings_freq = _tb_nonneg_int(embeddings_freq, "embeddings_freq")
        self.embeddings_metadata = embeddings_metadata
        self._init_profile_batch(profile_batch)
        if self.embeddings_freq:
            warnings.warn("TensorBoard: embeddings are not available yet in tensorlite; "
                          "`embeddings_freq` is ignored", stacklevel=2)
        self._log_write_dir = self.log_dir
        self._train_dir = os.path.join(self.log_dir, "train")
        self._val_dir = os.path.join(self.log_dir, "validation")
        self._writers = {}
        self._global_train_batch = 0
        self._epoch = 0
        self._epoch_start = None
        self._batch_start = None
        self._profiling = False
        self._profiled_batches = 0
        self._should_write_train_graph = False

    def _init_profile_batch(self, profile_batch):
        message = ("profile_batch must be a non-negative integer or 2-tuple of positive "
                   "integers. A pair of positive integers signifies a range of batches to "
                   f"profile. Found: {profile_batch}")
        value = profile_batch
        try:
            if isinstance(value, str):
                value = [int(part) for part in value.split(",")]
                value = value[0] if len(value) == 1 else value  # '3' as 3 (Keras refuses)
            if isinstance(value, (bool, np.bool_)):
                raise ValueError(message)
            if isinstance(value, (int, np.integer)):
                start = stop = int(value)
            elif isinstance(value, (tuple, list)) and len(value) == 2:
                start, stop = (_tb_int(v, message) for v in value)
            else:
                raise ValueError(message)
        except (TypeError, ValueError):
            raise ValueError(message) from None
        if start < 0 or stop < start:
            raise ValueError(message)
        self._start_batch, self._stop_batch = start, stop
        self._should_trace = not (start == 0 and stop == 0)

    # -- profiler --------------------------------------------------------------------------------
    def _start_profiler(self):
        from tensorlite import profiler  # noqa: PLC0415 - upper layer
        from tensorlite.framework import errors  # noqa: PLC0415
        try:
            profiler.experimental.start(self._log_write_dir)
        except (errors.OpError, ValueError) as e:
            warnings.warn(f"TensorBoard: failed to start the profiler for profile_batch="
                          f"{self._profile_range()}: {getattr(e, 'message', e)}; training "
                          f"continues without a profile", stacklevel=3)
            return
        self._profiling = True
        self._profiled_batches = 0

    def _stop_profiler(self):
        from tensorlite import profiler  # noqa: PLC0415
        from tensorlite.framework import errors  # noqa: PLC0415
        self._profiling = False
        try:
            profiler.experimental.stop()
        except errors.OpError as e:
            warnings.warn(f"TensorBoard: failed to save the profile of profile_batch="
                          f"{self._profile_range()}: {e.message}", stacklevel=3)

    def _profile_range(self):
        return f"({self._start_batch}, {self._stop_batch})"

    # -- writers ---------------------------------------------------------------------------------
    def _writer(self, which):
        writer = self._writers.get(which)
        if writer is None or writer._closed:
            from tensorlite import summary  # noqa: PLC0415 - upper layer, protobuf optional
            path = self._train_dir if which == "train" else self._val_dir
            writer = self._writers[which] = summary.create_file_writer(path)
        return writer

    def _close_writers(self):
        for writer in self._writers.values():
            writer.close()
        self._writers = {}

    # -- hooks -----------------------------------------------------------------------------------
    def on_train_begin(self, logs=None):
        self._global_train_batch = 0
        self._writer("train")
        if self.write_graph:
            self._write_keras_model_summary()
            self._should_write_train_graph = True

    def on_train_end(self, logs=None):
        if self._profiling:
            warnings.warn(f"TensorBoard: training ended after batch {self._global_train_batch}, "
                          f"before the end of profile_batch={self._profile_range()}; the "
                          f"profile covers the {self._profiled_batches} batches run",
                          stacklevel=2)
            self._stop_profiler()
        elif self._should_trace and self._global_train_batch < self._start_batch:
            warnings.warn(f"TensorBoard: profile_batch={self._profile_range()} was never "
                          f"reached: training ran {self._global_train_batch} batches, so "
                          f"nothing was profiled. Choose batches within the run.",
                          stacklevel=2)
        self._close_writers()

    def on_epoch_begin(self, epoch, logs=None):
        self._epoch = epoch
        self._epoch_start = _tb_now()

    def on_train_batch_begin(self, batch, logs=None):
        self._global_train_batch += 1
        if self._should_trace and self._global_train_batch == self._start_batch:
            self._start_profiler()
        self._batch_start = _tb_now()

    def on_train_batch_end(self, batch, logs=None):
        if self._should_write_train_graph:
            self._should_write_train_graph = False
            self._write_keras_model_train_graph()
        if self._profiling:
            self._profiled_batches += 1
            if self._global_train_batch >= self._stop_batch:
                self._stop_profiler()
        if self.update_freq == "epoch" or self._global_train_batch % self.update_freq:
            return
        from tensorlite import summary  # noqa: PLC0415
        step = self._global_train_batch
        with self._writer("train").as_default():
            for name, value in _tb_scalars(logs).items():
                summary.scalar("batch_" + name, value, step=step)
            if self.write_steps_per_second and self._batch_start is not None:
                elapsed = max(_tb_now() - self._batch_start, 1e-9)
                summary.scalar("batch_steps_per_second", 1.0 / elapsed, step=step)

    # -- graphs ----------------------------------------------------------------------------------
    def _write_keras_model_summary(self):
        """The model's JSON for the conceptual graph (tag 'keras', step 0); subclassed
        models have no config and are skipped quietly, as in Keras."""
        from tensorlite.summary import graph_summaries  # noqa: PLC0415
        json_string = _tb_model_json(self.model)
        if json_string is None:
            return
        from tensorlite import summary  # noqa: PLC0415
        with self._writer("train").as_default(), summary.record_if(True):
            graph_summaries.keras_model_json("keras", json_string, step=0)

    def _write_keras_model_train_graph(self):
        """The traced train step's op graph as the train run's graph."""
        traced = getattr(self.model, "_traced_train_graph", None)  # a tensorlite Model
        graph = traced() if traced is not None else None
        if graph is None:
            return
        from tensorlite import summary  # noqa: PLC0415
        with self._writer("train").as_default(), summary.record_if(True):
            try:
                summary.graph(graph)
            except Exception as e:  # noqa: BLE001 - a summary must never stop training
                warnings.warn(f"TensorBoard: the train step's graph could not be written: "
                              f"{e}", stacklevel=3)

    def on_epoch_end(self, epoch, logs=None):
        self._log_epoch_metrics(epoch, logs)
        if self.histogram_freq and epoch % self.histogram_freq == 0:
            self._log_weights(epoch)

    def _log_epoch_metrics(self, epoch, logs):
        from tensorlite import summary  # noqa: PLC0415
        scalars = _tb_scalars(logs)
        train = {k: v for k, v in scalars.items() if not k.startswith("val_")}
        val = {k[4:]: v for k, v in scalars.items() if k.startswith("val_")}
        lr = self._learning_rate()
        if lr is not None:
            train.setdefault("learning_rate", lr)
        if self.write_steps_per_second and self._epoch_start is not None:
            steps = self.params.get("steps") if self.params else None
            elapsed = _tb_now() - self._epoch_start
            if steps and elapsed > 0:
                train["steps_per_second"] = steps / elapsed
        with self._writer("train").as_default():
            for name, value in train.items():
                summary.scalar("epoch_" + name, value, step=epoch)
        if val:
            iterations = self._iterations()
            with self._writer("validation").as_default():
                for name, value in val.items():
                    summary.scalar("epoch_" + name, value, step=epoch)
                    if iterations is not None:
                        summary.scalar(f"evaluation_{name}_vs_iterations", value,
                                       step=iterations)

    def _log_weights(self, epoch):
        from tensorlite import summary  # noqa: PLC0415
        with self._writer("train").as_default():
            for layer in getattr(self.model, "layers", ()):
                for weight in getattr(layer, "weights", ()):
                    name = _tb_weight_name(weight)
                    values = np.asarray(weight.numpy())
                    if values.size and not np.all(np.isfinite(values)):
                        continue  # a diverged run must still finish; TensorBoard can't bin NaN
                    summary.histogram(name, values, step=epoch)
                    if self.write_images:
                        image = _tb_weight_image(values)
                        if image is not None:
                            summary.image(name + "/image", image, step=epoch)

    def _learning_rate(self):
        opt = getattr(self.model, "optimizer", None)
        lr = getattr(opt, "learning_rate", None) if opt is not None else None
        if lr is None:
            return None
        try:
            if callable(lr) and not hasattr(lr, "numpy"):
                lr = lr(getattr(opt, "iterations", 0))
            value = np.asarray(lr.numpy() if hasattr(lr, "numpy") else lr)
            return float(value) if value.shape == () and value.dtype.kind in "iuf" else None
        except Exception:  # noqa: BLE001 - optional summary, never break training for it
            return None

    def _iterations(self):
        opt = getattr(self.model, "optimizer", None)
        it = getattr(opt, "iterations", None) if opt is not None else None
        if it is None:
            return None
        try:
            return int(np.asarray(it.numpy() if hasattr(it, "numpy") else it))
        except (TypeError, ValueError):
            return None


def _tb_model_json(model):
    """`model.to_json()`, or for a Sequential / functional model its config in the layout
    of Keras's to_json (which TensorBoard's graph plugin reads); None for a subclassed
    model (no config) or a config that is not JSON."""
    import json  # noqa: PLC0415 - kept local to the TensorBoard section
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    if not isinstance(model, (Functional, Sequential)):
        return None
    try:
        if hasattr(model, "to_json"):
            return model.to_json()
        entry = _tb_keras_layout({"class_name": type(model).__name__,
                                  "config": model.get_config()})
        entry.update(keras_version="tensorlite", backend="tensorflow")
        return json.dumps(entry, default=_tb_json_default)
    except Exception as e:  # noqa: BLE001 - a summary must never stop training
        warnings.warn(f"TensorBoard: the model failed to serialize as JSON, so the "
                      f"conceptual graph is not written: {e}", stacklevel=4)
        return None


def _tb_json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "as_list"):
        return o.as_list()
    return getattr(o, "name", str(o))


def _tb_keras_layout(entry):
    """A {class_name, config} model entry with functional configs (tensorlite's `nodes` and
    refs) given Keras's wiring: InputLayer entries, each layer's `inbound_nodes` (args of
    `__keras_tensor__` with a `keras_history`), `input_layers` and `output_layers`.
    Nested models are converted too; tensorlite's own keys are kept."""
    config = dict(entry.get("config") or {})
    layers = [_tb_keras_layout(layer) if isinstance(layer.get("config"), dict) and
              "layers" in layer["config"] else dict(layer)
              for layer in config.get("layers", [])]
    config["layers"] = layers
    if "nodes" in config and "inputs" in config:
        _tb_functional_wiring(config)
    return {**entry, "config": config}


def _tb_functional_wiring(config):
    layers, nodes = config["layers"], config["nodes"]
    names = [layer["config"].get("name", f"layer_{i}") for i, layer in enumerate(layers)]
    node_index, seen = [], {}  # a node's index among the calls of its layer
    for node in nodes:
        node_index.append(seen.get(node["layer"], 0))
        seen[node["layer"]] = node_index[-1] + 1
    inputs = config["inputs"]

    def history(ref):
        if ref[0] == "input":
            return [inputs[ref[1]]["name"], 0, 0]
        return [names[nodes[ref[1]]["layer"]], node_index[ref[1]], ref[2]]

    def tensor(ref):
        return {"class_name": "__keras_tensor__", "config": {"keras_history": history(ref)}}

    def args(x):
        if isinstance(x, dict) and "ref" in x:
            return tensor(x["ref"])
        if isinstance(x, dict):
            return [args(v) for v in x.values()]
        if isinstance(x, (list, tuple)):
            return [args(v) for v in x]
        return x
    for layer in layers:
        layer.setdefault("inbound_nodes", [])
    for node in nodes:
        layer = layers[node["layer"]]
        layer["name"] = names[node["layer"]]
        layer["inbound_nodes"].append({"args": [args(node["inputs"])], "kwargs": {}})
    config["layers"] = [{"class_name": "InputLayer", "name": i["name"], "inbound_nodes": [],
                         "config": {"name": i["name"], "batch_shape": i["shape"],
                                    "dtype": i["dtype"]}} for i in inputs] + layers
    config["input_layers"] = [[i["name"], 0, 0] for i in inputs]
    config["output_layers"] = [history(ref) for ref in config["outputs"]]


def _tb_now():
    import time  # noqa: PLC0415 - kept local to the TensorBoard section
    return time.perf_counter()


def _tb_int(value, message):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(message)
    return int(value)


def _tb_nonneg_int(value, what):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)) \
            or value < 0:
        raise ValueError(f"TensorBoard: `{what}` must be a non-negative integer, got "
                         f"{value!r}")
    return int(value)


def _tb_update_freq(update_freq):
    if update_freq == "batch":
        return 1
    if update_freq == "epoch":
        return "epoch"
    if isinstance(update_freq, (int, np.integer)) and not isinstance(update_freq, bool) \
            and update_freq > 0:
        return int(update_freq)
    raise ValueError(f"TensorBoard: `update_freq` must be 'epoch', 'batch' or a positive "
                     f"integer (a number of batches), got {update_freq!r}")


def _tb_scalars(logs):
    """The scalar numeric entries of `logs` as floats (others, e.g. per-class arrays, are
    not scalars TensorBoard can plot)."""
    out = {}
    for name, value in (logs or {}).items():
        try:
            arr = np.asarray(value.numpy() if hasattr(value, "numpy") else value)
        except (TypeError, ValueError):
            continue
        if arr.shape == () and arr.dtype.kind in "biuf":
            out[name] = float(arr)
    return out


def _tb_weight_name(weight):
    name = getattr(weight, "name", None) or "weight"
    return name[:-2] if name.endswith(":0") else name.replace(":", "_")


def _tb_weight_image(values):
    """A weight as a [1, h, w, 1] grayscale image (vectors become one row; a 2-D kernel is
    laid out wide), or None for shapes with no natural picture."""
    if values.ndim == 1:
        values = values[None, :]
    elif values.ndim == 2:
        if values.shape[0] > values.shape[1]:
            values = values.T
    else:
        return None
    if not values.size:
        return None
    lo, hi = float(values.min()), float(values.max())
    scaled = (values - lo) / (hi - lo) if hi > lo else np.zeros_like(values, dtype=np.float64)
    return scaled.astype(np.float32)[None, :, :, None]

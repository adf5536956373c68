"""Keras's legacy HDF5 model files (`model.save("m.h5")`, as tf.keras 2 and Keras 3 write
them) and `.h5` weight files, through h5py: the file's `model_config` attribute (a Keras
config, read by keras_config.from_keras with the same class resolution and Lambda refusal
as `.keras`), `training_config` (compile settings) and the `model_weights` groups (see
weights_layout.read_legacy). Optimizer state is not restored from `.h5` files (a `.keras`
archive or a checkpoint keeps it).

Example:
    >>> model = tf.keras.models.load_model("mlp.h5")
"""
import contextlib
import json

from tensorlite.framework import errors, size_limits
from tensorlite.keras.saving import keras_config, weights_layout


def _open(path, mode):
    h5py = weights_layout.h5py_module()
    try:
        return h5py.File(path, mode)
    except OSError as e:
        raise errors.DataLossError(None, None, f"{path} is not a valid HDF5 file ({e})") \
            from None


@contextlib.contextmanager
def damaged_h5(path, what="it"):
    """What h5py raises for a damaged file once it is open (OSError, RuntimeError from
    HDF5's object visitation, KeyError for a named group that is not there) becomes the
    file's DataLossError."""
    try:
        yield
    except (OSError, RuntimeError, KeyError) as e:
        raise errors.DataLossError(None, None, f"{path}: {what} is not a valid Keras HDF5 "
                                   f"file ({type(e).__name__}: {e})") from None


def check_h5_sizes(f, path):
    """Before any dataset is read: a dataset whose shape needs more bytes than the file
    stores for it (fill values, compressed chunks) expands, so the expansion is capped
    (ResourceExhaustedError naming the file), per dataset and in total."""
    h5py = weights_layout.h5py_module()
    total = [0]

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset) and obj.dtype.kind in "biufc":
            nbytes = size_limits.shape_bytes(obj.shape or (), obj.dtype)
            if nbytes > obj.id.get_storage_size():
                size_limits.check_inflated(nbytes, f"dataset {name}", path)
            total[0] += nbytes
    f.visititems(visit)
    size_limits.check_inflated(total[0], "weights' datasets together", path)


def _attr_json(f, name, path):
    raw = f.attrs.get(name)
    if raw is None:
        return None
    size_limits.check_config(len(raw), f"{name} attribute", path)
    try:
        return json.loads(raw.decode("utf-8") if isinstance(raw, bytes) else raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise errors.DataLossError(None, None, f"{path}: its {name} is not valid JSON ({e})") \
            from None


def load_model(path, custom_objects=None, compile=True, safe_mode=True):  # noqa: A002
    """The model of a legacy `.h5` model file."""
    with _open(path, "r") as f, damaged_h5(path):
        config = _attr_json(f, "model_config", path)
        if config is None:
            raise ValueError(f"No model config found in the file at {path}: it holds weights "
                             f"only; build the model and call load_weights")
        model = keras_config.from_keras(config, custom_objects, safe_mode)
        training = _attr_json(f, "training_config", path)
        if "model_weights" not in f:
            raise errors.DataLossError(None, None, f"{path} has no model_weights group")
        check_h5_sizes(f, path)
        weights_layout.read_legacy(model, f["model_weights"])
    if compile and training:
        keras_config.compile_from_keras(model, training, custom_objects)
    return model


def save_model(model, path, include_optimizer=True):
    """Writes a legacy `.h5` model file atomically (temporary name, fsync, rename)."""
    from tensorlite.framework.atomic_files import write_with  # noqa: PLC0415

    def write(tmp):
        with _open(tmp, "w") as f:
            f.attrs["model_config"] = json.dumps(_legacy_input_shapes(
                keras_config.to_keras(model)))
            f.attrs["keras_version"] = "3.0.0"
            f.attrs["backend"] = "tensorflow"
            if include_optimizer and model.optimizer is not None:
                training = keras_config.compile_to_keras(model._compile_config)
                optimizer = training.pop("optimizer")
                training["optimizer_config"] = {"class_name": optimizer["class_name"],
                                                "config": optimizer["config"]}
                f.attrs["training_config"] = json.dumps(training)
            weights_layout.write_legacy(model, f.create_group("model_weights"))
    write_with(path, write)


def _legacy_input_shapes(entry):
    """The model config in tf.keras 2's forms where Keras 3 reads both, so both Kerases
    load the `.h5` file (tf.keras 2's own format): an InputLayer's `batch_shape` as
    `batch_input_shape`, and a layer's inbound nodes as tf.keras 2's lists."""
    if isinstance(entry, list):
        return [_legacy_input_shapes(e) for e in entry]
    if not isinstance(entry, dict):
        return entry
    out = {k: _legacy_input_shapes(v) for k, v in entry.items()}
    if out.get("class_name") == "InputLayer" and "batch_shape" in out.get("config", {}):
        config = dict(out["config"])
        config["batch_input_shape"] = config.pop("batch_shape")
        out["config"] = config
    nodes = out.get("inbound_nodes")
    if isinstance(nodes, list) and nodes and all(isinstance(n, dict) for n in nodes):
        legacy = [_legacy_node(n) for n in nodes]
        if all(n is not None for n in legacy):
            out["inbound_nodes"] = legacy
    return out


def _is_keras_tensor(x):
    return isinstance(x, dict) and x.get("class_name") == "__keras_tensor__"


def _has_keras_tensor(x):
    if _is_keras_tensor(x):
        return True
    values = x.values() if isinstance(x, dict) else x if isinstance(x, list) else ()
    return any(_has_keras_tensor(v) for v in values)


def _history(x):
    return list(x["config"]["keras_history"])


def _legacy_node(node):
    """A Keras 3 node {"args": [...], "kwargs": {...}} as tf.keras 2 writes it: one
    [layer, node_index, tensor_index, call_kwargs] per tensor of the first argument; None
    where tf.keras 2's form cannot say it (more positional arguments, a first argument that
    is not tensors, tensors among the keyword arguments)."""
    args, kwargs = node.get("args", []), node.get("kwargs", {})
    if len(args) != 1 or _has_keras_tensor(kwargs):
        return None
    first = args[0]
    flat = first if isinstance(first, list) else [first]
    if not flat or not all(_is_keras_tensor(t) for t in flat):
        return None
    return [_history(t) + [dict(kwargs)] for t in flat]


def load_weights(model, path):
    """`load_weights("w.h5")` (legacy layout) or `load_weights("w.weights.h5")` (Keras 3)."""
    with _open(path, "r") as f, damaged_h5(path):
        check_h5_sizes(f, path)
        if "layer_names" in f.attrs:
            weights_layout.read_legacy(model, f)
        elif "model_weights" in f:
            weights_layout.read_legacy(model, f["model_weights"])
        else:
            weights_layout.assign_keras3(model, weights_layout.read_h5(f, path))


def save_weights(model, path):
    """`save_weights("w.weights.h5")`: Keras 3's layout, atomically."""
    from tensorlite.framework.atomic_files import write_with  # noqa: PLC0415

    def write(tmp):
        with _open(tmp, "w") as f:
            weights_layout.write_h5(f, weights_layout.keras3_arrays(model))
    write_with(path, write)


def load_published_weights(layers, path, by_name=True):
    """Keras's published application weights (tf.keras 2's `save_weights` layout: root
    `layer_names`, per layer `weight_names`) into `layers`, a model's layers with weights in
    tf.keras 2's `model.layers` order: with `by_name`, each takes the file's group of its
    name when every name is in the file; otherwise the file's layers in order (what
    tf.keras's own `load_weights` does, and what models whose layers carry generated names,
    such as InceptionV3, need: a generated name depends on what the session built before).
    Every value and shape is checked before any is assigned."""
    with _open(path, "r") as f, damaged_h5(path):
        check_h5_sizes(f, path)
        if "layer_names" not in f.attrs:
            raise errors.DataLossError(None, None, f"{path} is not a tf.keras 2 weights file "
                                       f"(no layer_names attribute)")
        names = weights_layout._decode(f.attrs["layer_names"])  # noqa: SLF001
        if by_name and all(layer.name in names for layer in layers):
            groups = [f[layer.name] for layer in layers]
        else:
            groups = [f[name] for name in names if len(f[name].attrs.get("weight_names", []))]
            if len(groups) != len(layers):
                raise ValueError(f"{path}: the model has {len(layers)} layers with weights, "
                                 f"the file {len(groups)}")
        pending = []
        for layer, group in zip(layers, groups):
            pending.extend(_layer_values(layer, group, path))
    for w, value in pending:
        w.assign(value.astype(w.dtype.as_numpy_dtype, copy=False))


def _layer_values(layer, group, path):
    """(weight, value) pairs of one layer from its file group, counts and shapes checked."""
    weight_names = weights_layout._decode(group.attrs.get("weight_names", []))  # noqa: SLF001
    if len(weight_names) != len(layer.weights):
        raise ValueError(f"{path}: layer {layer.name!r} expects {len(layer.weights)} weights, "
                         f"the file's {group.name.lstrip('/')!r} has {len(weight_names)}")
    pairs = []
    for w, wname in zip(layer.weights, weight_names):
        value = weights_layout._array(group[wname], f"{group.name}/{wname}")  # noqa: SLF001
        if tuple(value.shape) != tuple(w.shape.as_list()):
            raise ValueError(f"{path}: layer {layer.name!r} weight {w.name} has shape "
                             f"{tuple(w.shape.as_list())}, the file's {wname} {value.shape}")
        pairs.append((w, value))
    return pairs

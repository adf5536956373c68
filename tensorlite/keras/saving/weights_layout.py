"""Keras weights in HDF5 (through h5py, an optional extra), in the two layouts Keras uses:

- Keras 3's (`model.weights.h5` inside a `.keras` archive, and `*.weights.h5` files): a
  group per object path, `layers/<class>/vars/<i>` for a layer's own variables in
  creation order (a model's layers named by class and counted: `dense`, `dense_1`),
  sub-layers of a layer under their attribute names (`layers/lstm/cell/vars`), those in
  a list or dict attribute by class (`layers/rnn/cell/cells/lstm_cell/vars`); the
  optimizer's under `optimizer/vars/<i>` (iterations, the learning rate, then its slots
  in Keras's order);
- the legacy `.h5` layout (`model.save("m.h5")`, tf.keras 2's `save_weights("w.h5")`): a
  group per layer under `model_weights` (or the file's root), whose `weight_names`
  attribute lists the layer's weights in order, with `optimizer_weights` beside.

Datasets are read as plain arrays: h5py never unpickles, and object or compound data is
refused.

Without h5py, a `.keras` archive that tensorlite writes holds the same paths in
`model.weights.npz` instead (a tensorlite-only variant, said so by a warning).

Example:
    >>> arrays = keras3_arrays(model)      # {"layers/dense/vars/0": ..., ...}
    >>> assign_keras3(clone, arrays)
"""
import numpy as np

from tensorlite.framework import errors


def h5py_module():
    try:
        import h5py  # noqa: PLC0415
    except ImportError as e:
        raise ImportError("Keras HDF5 files (.h5, .weights.h5, and the weights inside a "
                          ".keras archive) need h5py: pip install '.[keras]'"
                          " in a clone of tensorlite (or "
                          "pip install h5py)") from e
    return h5py


def _array(dataset, where):
    if dataset.dtype.kind not in "biufc":
        raise errors.DataLossError(None, None, f"{where}: dataset of dtype {dataset.dtype} is "
                                   f"not a weight array")
    return np.asarray(dataset[()])


def _children(layer):
    """(path, sub-layer) of what Keras 3 saves beneath a layer."""
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    from tensorlite.keras.layers.layer import Layer  # noqa: PLC0415
    if isinstance(layer, Model) and layer._is_network():
        return [(f"layers/{name}", sub) for name, sub in _class_names(layer.layers)]
    out = []
    for key, value in sorted(vars(layer).items()):
        if key.startswith("_"):
            continue
        if isinstance(value, Layer):
            out.append((key, value))
        elif isinstance(value, (list, tuple, dict)):  # a container: its layers by class
            items = value.values() if isinstance(value, dict) else value
            out += [(f"{key}/{name}", sub) for name, sub in
                    _class_names([v for v in items if isinstance(v, Layer)])]
    return out


def _class_names(layers):
    """Keras 3 names a model's layers in its weights file by class, not by layer name:
    `dense`, `dense_1`, `conv2d`, ... counted per class in layer order."""
    from tensorlite.keras.layers.layer import keras_snake_case  # noqa: PLC0415
    used, out = {}, []
    for layer in layers:
        name = keras_snake_case(type(layer).__name__)
        count = used.get(name)
        used[name] = 0 if count is None else count + 1
        out.append((name if count is None else f"{name}_{count + 1}", layer))
    return out


def _own_variables(layer):
    """A layer's own variables: add_weight's in creation order, then tf.Variables assigned
    to its attributes (the modules guide's `self.w = tf.Variable(...)` in build), in the
    order they were assigned; never silently left out of a saved file."""
    from tensorlite.keras.layers.layer import _is_trackable_weight  # noqa: PLC0415
    out = list(layer._own_weights)
    seen = {id(v) for v in out}
    for t in layer._tracked:
        if _is_trackable_weight(t) and id(t) not in seen:
            seen.add(id(t))
            out.append(t)
    return out


def _walk(layer, path):
    """(group path, [own variables]) for a layer and everything beneath it."""
    yield path, _own_variables(layer)
    for sub_path, sub in _children(layer):
        yield from _walk(sub, f"{path}/{sub_path}" if path else sub_path)


def _optimizer_vars(model):
    optimizer = getattr(model, "optimizer", None)
    if optimizer is None:
        return None
    optimizer._create_hypers()
    if model.built:
        optimizer._create_all_weights(model.trainable_variables)
    lr = optimizer._hyper.get("learning_rate")
    slots = optimizer._checkpoint_variables()[1:]
    return [optimizer.iterations] + ([lr] if hasattr(lr, "assign") else []) + slots


def keras3_arrays(model, include_optimizer=True):
    """{"layers/dense/vars/0": array, ...}: the model's (and its optimizer's) variables
    by their path in Keras 3's layout."""
    out = {}
    for path, variables in _walk(model, ""):
        group = f"{path}/vars" if path else "vars"
        out.update({f"{group}/{i}": np.asarray(v.numpy()) for i, v in enumerate(variables)})
    opt = _optimizer_vars(model) if include_optimizer else None
    for i, v in enumerate(opt or ()):
        out[f"optimizer/vars/{i}"] = np.asarray(v.numpy())
    return out


def _assign(variables, arrays, group, where):
    names = sorted((k[len(group) + 1:] for k in arrays if k.startswith(group + "/")
                    and "/" not in k[len(group) + 1:]), key=lambda n: (len(n), n))
    if len(names) != len(variables):
        raise ValueError(f"Layer {where!r} expects {len(variables)} weight(s), but the file "
                         f"holds {len(names)}: the saved model has another architecture")
    for v, name in zip(variables, names):
        value = arrays[f"{group}/{name}"]
        if tuple(value.shape) != tuple(v.shape.as_list()):
            raise ValueError(f"Layer {where!r} weight {name} has shape {value.shape} in the "
                             f"file but {tuple(v.shape.as_list())} in the model")
        v.assign(value.astype(v.dtype.as_numpy_dtype, copy=False))


def assign_keras3(model, arrays, load_optimizer=True):
    """Assigns the model's (and, when it has one, its optimizer's) variables from
    `keras3_arrays`-style paths."""
    for path, variables in _walk(model, ""):
        _assign(variables, arrays, f"{path}/vars" if path else "vars", path or model.name)
    if load_optimizer and any(k.startswith("optimizer/vars/") for k in arrays):
        opt = _optimizer_vars(model)
        if opt is not None:
            _assign(opt, arrays, "optimizer/vars", "optimizer")


def write_h5(h5, arrays):
    """Writes path -> array as HDF5 groups and datasets (groups carry Keras's `name`)."""
    for path, value in arrays.items():
        group, name = path.rsplit("/", 1)
        g = h5.require_group(group)
        if "name" not in g.attrs:
            g.attrs["name"] = group.rsplit("/", 2)[-2] if "/" in group else "model"
        g.create_dataset(name, data=value)


def read_h5(h5, where):
    """path -> array of every dataset in an HDF5 file (numbers only)."""
    h5py = h5py_module()
    out = {}

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            out[name] = _array(obj, f"{where}: {name}")
    h5.visititems(visit)
    return out


# -- the legacy layout ---------------------------------------------------------------------------
def _decode(names):
    return [n.decode("utf-8") if isinstance(n, bytes) else str(n) for n in names]


def write_legacy(model, group):
    """Writes `model_weights`-style groups: one per layer, with `weight_names`."""
    layers = model.layers
    group.attrs["layer_names"] = np.array([layer.name.encode("utf-8") for layer in layers])
    group.attrs["backend"] = "tensorflow"
    for layer in layers:
        sub = group.create_group(layer.name)
        names = []
        for i, w in enumerate(layer.weights):
            short = str(w.name).split(":")[0].rsplit("/", 1)[-1] or f"weight_{i}"
            name = f"{layer.name}/{short}_{i}" if f"{layer.name}/{short}" in names else \
                f"{layer.name}/{short}"
            names.append(name)
            sub.create_dataset(name, data=np.asarray(w.numpy()))
        sub.attrs["weight_names"] = np.array([n.encode("utf-8") for n in names])


def read_legacy(model, group):
    """Assigns each layer's weights from a `model_weights`-style group, matched by layer
    order among the layers that have weights, as Keras does."""
    if "layer_names" not in group.attrs:
        raise errors.DataLossError(None, None, "HDF5 weights file has no `layer_names`: not a "
                                   "Keras weights file")
    saved = []
    for name in _decode(group.attrs["layer_names"]):
        if name not in group:
            raise errors.DataLossError(None, None, f"HDF5 weights file lists layer {name!r} "
                                       f"but has no group for it")
        weight_names = _decode(group[name].attrs.get("weight_names", []))
        if weight_names:
            saved.append((name, [_array(group[name][w], f"{name}/{w}") for w in weight_names]))
    layers = [layer for layer in model.layers if layer.weights]
    if len(layers) != len(saved):
        raise ValueError(f"Layer count mismatch when loading weights from file. Model expects "
                         f"{len(layers)} layers with weights, the file holds {len(saved)}")
    for layer, (name, values) in zip(layers, saved):
        if len(values) != len(layer.weights):
            raise ValueError(f"Layer {layer.name!r} expects {len(layer.weights)} weights, but "
                             f"the saved layer {name!r} has {len(values)}")
        for w, value in zip(layer.weights, values):
            if tuple(value.shape) != tuple(w.shape.as_list()):
                raise ValueError(f"Layer {layer.name!r} weight {w.name} has shape "
                                 f"{tuple(w.shape.as_list())}, the file's {value.shape}")
            w.assign(value.astype(w.dtype.as_numpy_dtype, copy=False))

"""`tfjs.converters`: Keras models to TF.js's Layers format and back, as the `tensorflowjs`
package's functions of the same names.

`save_keras_model(model, dir)` writes `dir/model.json` (`format: "layers-model"`, the Keras 2
topology, the weights manifest) and the `group1-shard<i>of<N>.bin` weight shards;
`load_keras_model("dir/model.json")` reads such a directory back, whether tensorlite, the
tfjs-converter or TF.js itself (`model.save("file://...")`, `tf.io.withSaveHandler`) wrote it.

Example:
    >>> import tensorlite.js as tfjs
    >>> tfjs.converters.save_keras_model(model, "web_model")
    >>> again = tfjs.converters.load_keras_model("web_model/model.json")
"""
import json
import os

from tensorlite.framework import errors, size_limits
from tensorlite.js import layers_format, layers_support, weights
from tensorlite.version import TENSORLITE_VERSION as VERSION

FORMAT = "layers-model"


def _generated_by():
    return f"tensorlite {VERSION} (Keras {layers_format.KERAS_VERSION} topology)"


def save_keras_model(model, artifacts_dir, quantization_dtype_map=None,
                     weight_shard_size_bytes=weights.DEFAULT_SHARD_SIZE_BYTES, metadata=None):
    """Writes a Keras model as a TF.js Layers model in `artifacts_dir`; returns the path of
    its model.json.

    Args:
      model: a Sequential or functional Keras model (the applications included).
      artifacts_dir: the directory for model.json and the weight shards (created).
      quantization_dtype_map: {"float16"|"uint8"|"uint16": True (all weights) or wildcard
        patterns (a list, or "a/*,b/*")}; float32 weights matched are stored quantized.
      weight_shard_size_bytes: the largest shard file (4 MB by default, what browsers cache).
      metadata: a JSON-serializable dict stored as `userDefinedMetadata`.
    Raises:
      UnimplementedError naming the layer or setting TF.js cannot load.
    """
    if os.path.isfile(artifacts_dir):
        raise ValueError(f"artifacts_dir {artifacts_dir!r} is a file; give a directory")
    topology = layers_format.to_topology(model)
    entries = layers_format.weight_entries(model)
    qmap = weights.quantization_map([n for n, _ in entries], **_qargs(quantization_dtype_map))
    os.makedirs(artifacts_dir, exist_ok=True)
    _remove_old_shards(artifacts_dir)
    manifest = weights.write_weights([entries], artifacts_dir, weight_shard_size_bytes, qmap)
    model_json = {"format": FORMAT, "generatedBy": _generated_by(),
                  "convertedBy": f"tensorlite.js converter {VERSION} (for TensorFlow.js "
                                 f"{layers_support.TFJS_VERSION})",
                  "modelTopology": topology, "weightsManifest": manifest}
    if metadata is not None:
        model_json["userDefinedMetadata"] = metadata
    path = os.path.join(artifacts_dir, "model.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(model_json, f)
    return path


def _qargs(quantization_dtype_map):
    """quantization_map's keyword arguments from tensorflowjs's {dtype: patterns} map."""
    qmap = dict(quantization_dtype_map or {})
    unknown = set(qmap) - set(weights.QUANTIZATION_DTYPES)
    if unknown:
        raise ValueError(f"quantization_dtype_map keys must be float16, uint8 or uint16, not "
                         f"{sorted(unknown)}")
    return qmap


def _remove_old_shards(directory):
    """Shards a previous save left (they would sit beside the new manifest, unused)."""
    for name in os.listdir(directory):
        if name.startswith("group") and "-shard" in name and name.endswith(".bin"):
            os.remove(os.path.join(directory, name))


def read_model_json(path):
    """The parsed model.json at `path` (size capped, DataLossError if it is not JSON)."""
    if os.path.isdir(path):
        path = os.path.join(path, "model.json")
    if not os.path.isfile(path):
        raise errors.NotFoundError(None, None, f"{path}: no such TF.js model.json")
    size_limits.check_config(os.path.getsize(path), "model.json", path)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise errors.DataLossError(None, None, f"{path} is not valid JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("modelTopology"), dict):
        raise errors.DataLossError(None, None, f"{path} has no modelTopology: it is not a TF.js "
                                               f"Layers model")
    return path, data


def load_keras_model(config_json_path, load_weights=True, custom_objects=None):
    """The tensorlite Keras model of a TF.js Layers model.json (and its weight shards).

    Reads the Keras 2 topology with or without tfjs-converter's `model_config` wrapper (TF.js
    saves none) and matches weights by name as TF.js does (`dense_Dense1/kernel`, an RNN's
    `lstm/lstm_cell/kernel` or `lstm/kernel`); optimizer weights TF.js saved are skipped.
    The model is not compiled: compile it to train on.
    """
    from tensorlite.keras.saving import keras_config  # noqa: PLC0415
    path, data = read_model_json(config_json_path)
    fmt = data.get("format")
    if fmt not in (None, FORMAT):
        raise ValueError(f"{path} is a TF.js {fmt!r}, not a Layers model; only layers-model "
                         f"files load as Keras models")
    topology = data["modelTopology"]
    topology = topology.get("model_config", topology)
    model = keras_config.from_keras(topology, custom_objects)
    if load_weights:
        manifest = data.get("weightsManifest")
        values = weights.read_weights(manifest, os.path.dirname(path), path)
        groups = {s["name"]: s.get("group") for g in manifest for s in g["weights"]}
        values = {k: v for k, v in values.items() if groups.get(k) != "optimizer"}
        assign_by_name(model, values, path)
    return model


def _model_weights(model):
    """[(layer name, variable)] of a model, nested models' layers flattened."""
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    out = []
    for layer in model.layers:
        if isinstance(layer, Model) and layer._is_network():
            out.extend(_model_weights(layer))
        else:
            out.extend((layer.name, w) for w in layer.weights)
    return out


def _short(name):
    """TF.js's fallback for names with an RNN cell in the middle: `l/cell/w` -> `l/w`."""
    tokens = name.split("/")
    return "/".join(tokens[:-2] + tokens[-1:]) if len(tokens) > 2 else name


def assign_by_name(model, values, source):
    """Assigns `values` ({manifest name: array}) to the model's weights, every one matched
    and shape-checked before any is assigned (ValueError naming the weight otherwise)."""
    lookup = dict(values)
    for name in values:
        lookup.setdefault(_short(name), values[name])
    pending, used = [], set()
    for layer_name, w in _model_weights(model):
        full = layers_format.weight_name(layer_name, w.name)
        key = next((k for k in (full, _short(full)) if k in lookup), None)
        if key is None:
            raise ValueError(f"{source}: no weight for {full!r} (layer {layer_name!r}) in the "
                             f"weights manifest")
        value = lookup[key]
        if tuple(value.shape) != tuple(w.shape.as_list()):
            raise ValueError(f"{source}: weight {key!r} has shape {list(value.shape)} but layer "
                             f"{layer_name!r} needs {w.shape.as_list()}")
        pending.append((w, value))
        used.add(id(value))
    unused = [k for k, v in values.items() if id(v) not in used]
    if unused:
        raise ValueError(f"{source}: weights {unused[:5]} match no layer of the model")
    for w, value in pending:
        w.assign(value.astype(w.dtype.as_numpy_dtype, copy=False))

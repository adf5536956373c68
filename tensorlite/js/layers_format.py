"""A tensorlite Keras model as TF.js's Layers-format topology (the Keras 2 form TF.js 4
reads), and the names its weights carry in the weights manifest.

tensorlite describes a model in Keras 3's form (`keras_config.to_keras`); TF.js 4 reads Keras
2's: no `module`/`registered_name`, an InputLayer's `batch_input_shape` (TF.js rejects Keras
3's `batch_shape`), dtypes as plain names, and a functional layer's `inbound_nodes` as lists of
`[layer, node, tensor, kwargs]`. Every layer is checked against what TF.js supports
(layers_support) first.

Weights are named `<layer>/<weight>` as tfjs-converter names a Keras model's (TF.js matches
them to its layers' `originalName`, dropping an RNN cell's name in the middle).

Example:
    >>> topology = to_topology(model)
    >>> topology["model_config"]["class_name"]
    'Sequential'
"""
from tensorlite.framework import nest
from tensorlite.js import layers_support
from tensorlite.keras.saving import keras_config

KERAS_VERSION = "2.15.0"  # the Keras 2 topology form written (what tf_keras 2.15 writes)
_TENSOR = "__keras_tensor__"


def to_topology(model):
    """`modelTopology` for model.json: {"keras_version", "backend", "model_config"} with the
    model's Keras 2 config, as tfjs-converter writes it for a Keras model."""
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    if not isinstance(model, Model) or not model._is_network():
        raise TypeError(f"TF.js's Layers format holds Sequential and functional Keras models; "
                        f"{type(model).__name__} is a subclassed model (save it as a SavedModel "
                        f"and convert that to the Graph format instead)")
    return {"keras_version": KERAS_VERSION, "backend": "tensorflow",
            "model_config": _model_entry(keras_config.to_keras(model))}


def _model_entry(entry):
    """A Keras 3 Sequential/Functional entry in Keras 2 form."""
    config = entry["config"]
    if entry["class_name"] == "Sequential":
        layers = [_layer(e) for e in config["layers"]]
        if not layers or layers[0]["class_name"] != "InputLayer":
            raise ValueError(f"Sequential model {config['name']!r} has no input shape: build it "
                             f"(model.build(input_shape)) or give its first layer input_shape "
                             f"before converting; TF.js needs the input shape")
        for layer in layers[1:]:
            layer["config"].pop("batch_input_shape", None)
        return {"class_name": "Sequential", "config": {"name": config["name"],
                                                       "layers": layers}}
    layers = []
    for e in config["layers"]:
        layer = _layer(e)
        layer["name"] = e["name"]
        layer["inbound_nodes"] = [_node(n, e["name"]) for n in e.get("inbound_nodes", [])]
        layers.append(layer)
    return {"class_name": "Functional", "config": {
        "name": config["name"], "layers": layers,
        "input_layers": _triples(config["input_layers"]),
        "output_layers": _triples(config["output_layers"])}}


def _triples(value):
    """Keras 2 always lists [layer, node, tensor] triples (Keras 3 writes one bare)."""
    return [list(value)] if value and isinstance(value[0], str) else [list(v) for v in value]


def _plain(value):
    """Nested serialized objects as Keras 2's {"class_name", "config"}; dtype policies as
    their names."""
    if isinstance(value, dict) and "class_name" in value and "config" in value:
        if value["class_name"] in ("DTypePolicy", "Policy"):
            return value["config"].get("name")
        return {"class_name": value["class_name"], "config": _plain(value["config"])}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _layer(entry):
    """One layer entry in Keras 2 form, checked against TF.js's support."""
    if entry["class_name"] in ("Sequential", "Functional", "Model") and \
            "layers" in entry.get("config", {}):
        return _model_entry(entry)
    config = _plain(entry["config"])
    if entry["class_name"] == "InputLayer":
        config = {"batch_input_shape": config.get("batch_shape") or config.get(
            "batch_input_shape"), "dtype": config.get("dtype") or "float32",
                  "sparse": False, "ragged": False, "name": config["name"]}
    layers_support.check_layer(entry["class_name"], config)
    return {"class_name": entry["class_name"], "config": config}


def _node(node, layer_name):
    """A Keras 3 inbound node ({"args", "kwargs"}) as Keras 2's list of
    [layer, node, tensor, kwargs] (TF.js passes only the first argument's tensors)."""
    args, kwargs = node.get("args", []), node.get("kwargs", {})
    refs = [x for x in nest.flatten(kwargs) if _is_ref(x)] if kwargs else []
    if len(args) != 1 or refs or any(_is_ref(x) for x in nest.flatten(args[1:])):
        raise layers_support._unsupported(  # noqa: SLF001
            layer_name, "call", "it is called with more than one tensor argument (masks, "
                                "initial states or extra inputs), which TF.js's Layers "
                                "format cannot express")
    extra = {k: v for k, v in kwargs.items() if v is not None}
    inputs = [x for x in _flatten_refs(args[0])]
    return [[*x["config"]["keras_history"], extra] for x in inputs]


def _is_ref(x):
    return isinstance(x, dict) and x.get("class_name") == _TENSOR


def _flatten_refs(value):
    if _is_ref(value):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [r for v in value for r in _flatten_refs(v)]
    return []


def weight_entries(model):
    """[(manifest name, array)] of a model's weights: `<layer>/<weight>` (an RNN's as
    `<layer>/<cell>/<weight>`), nested models' layers under their own names, as TF.js
    resolves them."""
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    out = []
    for layer in model.layers:
        if isinstance(layer, Model) and layer._is_network():
            out.extend(weight_entries(layer))
            continue
        for w in layer.weights:
            out.append((weight_name(layer.name, w.name), w.numpy()))
    return out


def weight_name(layer_name, variable_name):
    """`dense/kernel` from a layer and its variable's name (`dense/kernel:0`)."""
    base = variable_name.split(":")[0]
    if base.startswith(layer_name + "/"):
        return base
    return f"{layer_name}/{base.rsplit('/', 1)[-1]}"

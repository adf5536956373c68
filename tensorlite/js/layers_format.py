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
    nested = nested_models(config["layers"])
    layers = []
    for e in config["layers"]:
        layer = _layer(e)
        layer["name"] = e["name"]
        layer["inbound_nodes"] = [_node(n, e["name"], nested)
                                  for n in e.get("inbound_nodes", [])]
        layers.append(layer)
    return {"class_name": "Functional", "config": {
        "name": config["name"], "layers": layers,
        "input_layers": _triples(config["input_layers"], nested),
        "output_layers": _triples(config["output_layers"], nested)}}


def nested_models(layers):
    """Names of the models nested as layers. Keras 2 (and TF.js) count a nested model's own
    input node as its node 0, so its calls in the outer model are nodes 1, 2, ...; Keras 3
    (and tensorlite's config) count from 0."""
    return {e.get("name") or e["config"].get("name") for e in layers
            if e["class_name"] in ("Sequential", "Functional", "Model")
            and "layers" in e.get("config", {})}


def _history(history, nested):
    name, node, tensor = history[:3]
    return [name, node + 1 if name in nested else node, tensor]


def _triples(value, nested):
    """Keras 2 always lists [layer, node, tensor] triples (Keras 3 writes one bare)."""
    value = [value] if value and isinstance(value[0], str) else value
    return [_history(v, nested) for v in value]


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


def _node(node, layer_name, nested):
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
    return [[*_history(x["config"]["keras_history"], nested), extra] for x in inputs]


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


def from_keras2(entry):
    """A Keras 2 / TF.js model entry with references to nested models counted from 0, as
    tensorlite's reader (Keras 3's numbering) expects; other entries unchanged."""
    config = entry.get("config")
    if entry.get("class_name") not in ("Functional", "Model") or not isinstance(config, dict) \
            or "layers" not in config:
        return entry
    nested = nested_models(config["layers"])

    def shift(ref):
        if isinstance(ref, list) and len(ref) >= 3 and ref[0] in nested and ref[1] >= 1:
            return [ref[0], ref[1] - 1, *ref[2:]]
        return ref
    layers = []
    for e in config["layers"]:
        e = dict(e, config=from_keras2(e)["config"]) if e["class_name"] in (
            "Functional", "Model") else dict(e)
        nodes = e.get("inbound_nodes", [])
        e["inbound_nodes"] = [[shift(r) for r in n] if n and isinstance(n[0], list) else
                              shift(n) for n in nodes]
        layers.append(e)
    ends = {k: [shift(r) for r in config[k]] if config[k] and isinstance(config[k][0], list)
            else shift(config[k]) for k in ("input_layers", "output_layers")}
    return dict(entry, config=dict(config, layers=layers, **ends))


def named_variables(model):
    """[(manifest name, variable)] of a model's weights as TF.js names them:
    `<layer>/<weight>` (an RNN's `<layer>/<cell>/<weight>`, which TF.js also matches),
    a Bidirectional's `<layer>/forward_<inner>/<weight>` and `.../backward_<inner>/...`,
    nested models' layers under their own names."""
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    out = []
    for layer in model.layers:
        if isinstance(layer, Model) and layer._is_network():
            out.extend(named_variables(layer))
        elif type(layer).__name__ == "Bidirectional":
            inner = layer.get_config()["layer"]["config"]["name"]
            for side, sub in (("forward", layer.forward_layer), ("backward",
                                                                layer.backward_layer)):
                prefix = f"{layer.name}/{side}_{inner}"
                out.extend((weight_name(prefix, w.name, sub.name), w) for w in sub.weights)
        else:
            out.extend((weight_name(layer.name, w.name), w) for w in layer.weights)
    return out


def weight_entries(model):
    """[(manifest name, array)] of a model's weights (see named_variables)."""
    return [(name, w.numpy()) for name, w in named_variables(model)]


def weight_name(prefix, variable_name, owner=None):
    """`dense/kernel` from a layer's name and its variable's (`dense/kernel:0`); a variable
    under its own layer's name keeps the path below it (`lstm/lstm_cell/kernel`)."""
    base = variable_name.split(":")[0]
    owner = owner or prefix
    if base.startswith(owner + "/"):
        return prefix + base[len(owner):]
    return f"{prefix}/{base.rsplit('/', 1)[-1]}"

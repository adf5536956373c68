"""Keras 3's model config (a `.keras` archive's `config.json`, an `.h5` file's
`model_config`), to and from tensorlite models.

A config entry is `{"module", "class_name", "config", "registered_name"}`. A Sequential's
config lists its layers (an InputLayer first, with `batch_shape`); a Functional's lists
each layer with `inbound_nodes` whose arguments name their sources as
`{"class_name": "__keras_tensor__", "config": {"keras_history": [layer, node, tensor]}}`
(Keras 3) or as `[layer, node, tensor, kwargs]` lists (tf.keras 2's `.h5` files), and
names the model's `input_layers` and `output_layers` the same way.

Reading resolves classes only through `registry.get_class` (tensorlite's own classes and the
caller's `custom_objects`/registered ones: nothing a file names is imported) and refuses
a Lambda layer's stored bytecode unless `safe_mode=False` (one whose function is registered
or given in `custom_objects` loads by name), as Keras 3 does. Config keys tensorlite does not
know are dropped when they hold their neutral value (None, False, ...) and are an error naming
the layer and key otherwise, never silently ignored.

Example:
    >>> entry = to_keras(model)
    >>> clone = from_keras(entry)
"""
import inspect

from tensorlite.framework import dtypes, nest
from tensorlite.keras.saving.object_registration import (function_by_name,
                                                       get_registered_name, lookup)

_NEUTRAL = (None, False, 0, "", (), [], {})
_TENSOR = "__keras_tensor__"
_CONSTANT = "_CONSTANT_VALUE"  # Keras 2's marker of a constant first argument
_OBJECT_MODULES = {"initializer": "keras.initializers", "regularizer": "keras.regularizers",
                   "constraint": "keras.constraints"}


# -- reading -------------------------------------------------------------------------------------
def _plain(value):
    """A nested serialized object ({"module", "class_name", "config", ...}) as tensorlite's
    {"class_name", "config"}, neutral None keys dropped; a DTypePolicy as its name."""
    if isinstance(value, dict) and "class_name" in value:
        if value["class_name"] in ("DTypePolicy", "Policy"):
            return value.get("config", {}).get("name")
        config = value.get("config")
        if isinstance(config, dict):
            config = {k: _plain(v) for k, v in config.items() if v is not None}
        return {"class_name": value["class_name"], "config": config}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _accepted(cls):
    from tensorlite.keras.layers.layer import _KWARGS  # noqa: PLC0415
    names = set(_KWARGS) | {"name", "trainable", "dtype"}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None:
            names |= set(inspect.signature(init).parameters) - {"self", "args", "kwargs"}
    return names


def _layer_config(cls, class_name, config):
    config = {k: _plain(v) for k, v in config.items()}
    accepted = _accepted(cls)
    for key in list(config):
        if key not in accepted:
            if config[key] not in _NEUTRAL:
                raise ValueError(f"Cannot load layer {class_name} "
                                 f"{config.get('name', '')!r}: its config sets {key}="
                                 f"{config[key]!r}, which tensorlite's {class_name} does not "
                                 f"support")
            del config[key]
    return config


def _class(entry, custom_objects):
    from tensorlite.keras.saving.registry import get_class  # noqa: PLC0415
    name = entry.get("registered_name") or entry["class_name"]
    if custom_objects and name not in custom_objects and entry["class_name"] in custom_objects:
        name = entry["class_name"]
    try:
        return get_class(name, custom_objects)
    except ValueError:
        if name != entry["class_name"]:
            return get_class(entry["class_name"], custom_objects)
        raise


def from_keras(entry, custom_objects=None, safe_mode=True):
    """The tensorlite model or layer of a Keras config entry."""
    if not isinstance(entry, dict) or "class_name" not in entry:
        raise ValueError(f"not a Keras config entry: {str(entry)[:100]}")
    class_name = entry["class_name"]
    config = entry.get("config") or {}
    if class_name == "Sequential":
        return _sequential(config, custom_objects, safe_mode)
    if class_name in ("Functional", "Model") and "layers" in config:
        return _functional(config, custom_objects, safe_mode)
    if class_name == "Lambda" and safe_mode and not _named_function(config, custom_objects):
        raise ValueError("Requested the deserialization of a Lambda layer, whose Python code "
                         "is stored in the file and would run. This is refused in safe mode: "
                         "pass safe_mode=False to load_model if you trust the file's source, "
                         "or register the function (keras.utils.register_keras_serializable)")
    cls = _class(entry, custom_objects)
    if class_name == "InputLayer":
        shape = config.get("batch_shape") or config.get("batch_input_shape")
        return cls(batch_input_shape=shape, dtype=_plain(config.get("dtype")),
                   name=config.get("name"))
    from tensorlite.keras.saving.registry import instantiate  # noqa: PLC0415
    return instantiate(cls, _layer_config(cls, class_name, config), custom_objects)


def _named_function(config, custom_objects):
    """Whether a Lambda config's function is one registered or in `custom_objects`: that
    one loads by name, no stored code runs (Keras 3 loads it in safe mode too)."""
    entry = config.get("function")
    inner = entry.get("config") if isinstance(entry, dict) else None
    if not isinstance(inner, dict):
        return False
    return lookup(inner.get("name"), inner.get("registered_name"), custom_objects) is not None

def _sequential(config, custom_objects, safe_mode):
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    model = Sequential(name=config.get("name"))
    for layer in config.get("layers", []):
        model.add(from_keras(layer, custom_objects, safe_mode))
    shape = config.get("build_input_shape")
    if shape is not None and not model.built:
        model.build(shape)
    return model


def _history(ref):
    """(layer, node, tensor) of a Keras 3 __keras_tensor__ or a Keras 2 [l, n, t, kw]."""
    if isinstance(ref, dict):
        return tuple(ref["config"]["keras_history"])
    return tuple(ref[:3])


def _triples(value, keras2):
    """`input_layers`/`output_layers`: one [name, node, tensor] or a list of them (a list
    of one in a tf.keras 2 config means a single tensor, as Keras 2 unpacks it)."""
    if value and isinstance(value[0], str):
        return [value], True
    return value, keras2 and len(value) == 1


def _tensor_structure(value, keras2, deref):
    """The model's inputs or outputs from `input_layers`/`output_layers`: a dict of
    [name, node, tensor] (Keras 3 writes a dict of inputs or outputs so), or _triples'."""
    if isinstance(value, dict):
        return {k: deref(("ref", tuple((v[0] if v and isinstance(v[0], list) else v)[:3])))
                for k, v in value.items()}
    triples, single = _triples(value, keras2)
    tensors = [deref(("ref", tuple(t[:3]))) for t in triples]
    return tensors[0] if single else tensors


def _node_args(node):
    """(args, kwargs) of one inbound node, with sources as ("ref", history) markers."""
    def mark(x):
        if isinstance(x, dict) and x.get("class_name") == _TENSOR:
            return ("ref", _history(x))
        if isinstance(x, list):
            return [mark(v) for v in x]
        if isinstance(x, dict):
            return {k: mark(v) for k, v in x.items()}
        return x
    if isinstance(node, dict):  # Keras 3
        return mark(node.get("args", [])), mark(node.get("kwargs", {}))
    # Keras 2: a list of [layer, node, tensor, kwargs] entries; an op layer's (TFOpLambda)
    # node with one tensor as first argument is that entry itself, a constant first
    # argument is ["_CONSTANT_VALUE", -1, value, kwargs], and its kwargs name tensors as
    # [layer, node, tensor] lists
    single = bool(node) and isinstance(node[0], str)
    entries = [node] if single else node
    firsts = [entry[2] if entry[0] == _CONSTANT else ("ref", tuple(entry[:3]))
              for entry in entries]
    kwargs = entries[0][3] if entries and len(entries[0]) > 3 else {}
    first = firsts[0] if len(firsts) == 1 else firsts
    return [first], _keras2_refs(dict(kwargs))


def _keras2_refs(x):
    """Keras 2's kwargs with their [layer, node, tensor] lists as ("ref", ...) markers (a
    list of 3 or 4 starting with a string and two integers, as Keras 2 reads them)."""
    if isinstance(x, list) and len(x) in (3, 4) and isinstance(x[0], str) and \
            all(isinstance(v, int) for v in x[1:3]):
        return ("ref", tuple(x[:3]))
    if isinstance(x, list):
        return [_keras2_refs(v) for v in x]
    if isinstance(x, dict):
        return {k: _keras2_refs(v) for k, v in x.items()}
    return x


def _functional(config, custom_objects, safe_mode):
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    from tensorlite.keras.engine_symbolic import Input  # noqa: PLC0415
    produced = {}  # (layer name, node index) -> flat outputs
    called = []  # (layer, outputs) of each node, in order

    def deref(x):
        if isinstance(x, tuple) and len(x) == 2 and x[0] == "ref":
            name, node, tensor = x[1]
            try:
                return produced[(name, node)][tensor]
            except (KeyError, IndexError):
                raise ValueError(f"model config refers to {name}[{node}][{tensor}] before it "
                                 f"is produced: the config is malformed") from None
        if isinstance(x, list):
            return [deref(v) for v in x]
        if isinstance(x, dict):
            return {k: deref(v) for k, v in x.items()}
        return x

    for entry in config["layers"]:
        name = entry.get("name") or entry["config"].get("name")
        if entry["class_name"] == "InputLayer":
            c = entry["config"]
            shape = c.get("batch_shape") or c.get("batch_input_shape")
            produced[(name, 0)] = [Input(batch_shape=shape, dtype=_plain(c.get("dtype")),
                                         name=name)]
            continue
        layer = from_keras(entry, custom_objects, safe_mode)
        for index, node in enumerate(entry.get("inbound_nodes", [])):
            args, kwargs = _node_args(node)
            args, kwargs = deref(args), deref(kwargs)
            out = layer(*args, **kwargs)
            produced[(name, index)] = nest.flatten(out)
            called.append((layer, out))
    keras2 = any(isinstance(node, list) for entry in config["layers"]
                 for node in entry.get("inbound_nodes", []))
    model = Functional(_tensor_structure(config["input_layers"], keras2, deref),
                       _tensor_structure(config["output_layers"], keras2, deref),
                       name=config.get("name"))
    model._adopt_extra_layers(called)
    return model


# -- writing -------------------------------------------------------------------------------------
def _keras_object(key, value):
    """tensorlite's {"class_name", "config"} of an initializer, regularizer or constraint
    as Keras 3 serializes it (with its module)."""
    if isinstance(value, dict) and "class_name" in value and "config" in value:
        module = next((m for suffix, m in _OBJECT_MODULES.items() if key.endswith(suffix)),
                      None)
        if module is not None:
            return {"module": module, "class_name": value["class_name"],
                    "config": value["config"], "registered_name": None}
    return value


def layer_entry(layer):
    """The Keras 3 entry of a tensorlite layer (a model: its whole config)."""
    from tensorlite.keras.engine.training import Model  # noqa: PLC0415
    if isinstance(layer, Model) and layer._is_network():
        return to_keras(layer)
    return _layer_config_entry(type(layer), layer.get_config())


def _layer_config_entry(cls, config):
    """Keras 3's entry of a layer class and its config; the layers nested in it (a
    wrapper's `layer`, an RNN's `cell`) become entries of their own, as Keras 3 nests them."""
    config = {k: _nested_layer(_keras_object(k, v)) for k, v in config.items()
              if not _tf_keras2_only(cls, k, v)}
    module = "keras.layers" if cls.__module__.startswith("tensorlite.keras.layers") else None
    return {"module": module, "class_name": cls.__name__, "config": config,
            "registered_name": None if module else get_registered_name(cls)}


# Keras 3's spatial dropouts take only (rate, [data_format,] seed, name, dtype); tf.keras 2's
# inherit Dropout's noise_shape and the base `trainable` (a layer without weights)
_KERAS3_REFUSES = {"SpatialDropout1D": {"trainable", "noise_shape", "data_format"},
                   "SpatialDropout2D": {"trainable", "noise_shape"}}


def _tf_keras2_only(cls, key, value):
    """Config entries tf.keras 2 writes that Keras 3's layers refuse: `time_major=False`
    (no such argument), a layer's `batch_input_shape` (the model's InputLayer entry holds
    the input shape) and the spatial dropouts' inherited keys."""
    if key == "time_major":
        return value is False
    if key in _KERAS3_REFUSES.get(cls.__name__, ()):
        return True
    return key == "batch_input_shape" and cls.__name__ != "InputLayer"


def _nested_layer(value):
    """A {"class_name", "config"} naming one of tensorlite's layers (or a list of them) as
    Keras 3's entry; any other value as it is."""
    if isinstance(value, list):
        return [_nested_layer(v) for v in value]
    if not (isinstance(value, dict) and set(value) == {"class_name", "config"}):
        return value
    from tensorlite.keras import layers  # noqa: PLC0415
    cls = getattr(layers, str(value["class_name"]), None)
    if not (isinstance(cls, type) and issubclass(cls, layers.Layer)):
        return value
    return _layer_config_entry(cls, value["config"])


def _input_entry(name, shape, dtype):
    return {"module": "keras.layers", "class_name": "InputLayer",
            "config": {"batch_shape": list(shape), "dtype": dtype, "sparse": False,
                       "name": name}, "registered_name": None}


def to_keras(model):
    """The Keras 3 config entry of a Sequential or Functional tensorlite model."""
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    if isinstance(model, Sequential):
        return _sequential_entry(model)
    return _functional_entry(model)


def _sequential_entry(model):
    layers = [layer_entry(layer) for layer in model.layers]
    shape = model._input_batch_shape or getattr(model, "_build_input_shape", None)
    if shape is not None:
        shape = list(shape.as_list() if hasattr(shape, "as_list") else shape)
        if model._input_batch_shape is None and shape:  # built on data: any batch size
            shape[0] = None
        dtype = dtypes.as_dtype(model._input_dtype).name if model._input_dtype is not None \
            else model.dtype
        layers.insert(0, _input_entry(f"{model.name}_input", shape, dtype))
    return {"module": "keras", "class_name": "Sequential",
            "config": {"name": model.name, "trainable": model.trainable, "dtype": model.dtype,
                       "layers": layers, "build_input_shape": shape},
            "registered_name": None,
            "build_config": {"input_shape": shape}}


def _functional_entry(model):
    from tensorlite.keras.engine_symbolic import KerasTensor  # noqa: PLC0415
    history, calls, entries = {}, {}, []
    for t in model.inputs:
        history[id(t)] = [t.name, 0, 0]
        entries.append(dict(_input_entry(t.name, t.shape.as_list(), t.dtype.name),
                            name=t.name, inbound_nodes=[]))
    by_layer = {}
    for node in model._nodes:
        index = calls.get(id(node.layer), 0)
        calls[id(node.layer)] = index + 1
        for k, t in enumerate(node.outputs):
            history[id(t)] = [node.layer.name, index, k]

        def ref(x):
            return nest.map_structure(
                lambda t: {"class_name": _TENSOR, "config": {
                    "shape": t.shape.as_list(), "dtype": t.dtype.name,
                    "keras_history": history[id(t)]}} if isinstance(t, KerasTensor) else t, x)
        entry = by_layer.get(id(node.layer))
        if entry is None:
            entry = by_layer[id(node.layer)] = dict(layer_entry(node.layer),
                                                    name=node.layer.name, inbound_nodes=[])
            entries.append(entry)
        entry["inbound_nodes"].append({"args": [ref(node.inputs), *ref(list(node.args))],
                                       "kwargs": {k: ref(v) for k, v in node.kwargs.items()}})
    def layers_of(structure, flat):
        if isinstance(structure, dict):  # as Keras 3 writes a dict of inputs or outputs
            return {k: history[id(t)] for k, t in structure.items()}
        triples = [history[id(t)] for t in flat]
        return triples[0] if not isinstance(structure, (list, tuple)) else triples
    # Keras 3 writes a Functional's module and registered name so (keras.Functional is not
    # a name its loader resolves)
    return {"module": "keras.src.models.functional", "class_name": "Functional",
            "config": {"name": model.name, "trainable": model.trainable, "layers": entries,
                       "input_layers": layers_of(model._inputs_struct, model.inputs),
                       "output_layers": layers_of(model._outputs_struct, model.outputs)},
            "registered_name": "Functional", "build_config": {"input_shape": None}}


# -- compile settings ----------------------------------------------------------------------------
_KERAS3_OPTIMIZER_DEFAULTS = {"weight_decay": None, "use_ema": False, "ema_momentum": 0.99,
                              "ema_overwrite_frequency": None, "loss_scale_factor": None,
                              "gradient_accumulation_steps": None, "clipnorm": None,
                              "global_clipnorm": None, "clipvalue": None}
_NO_MATH = ("is_legacy_optimizer", "jit_compile")  # flags that change no update


def compile_to_keras(compile_config):
    """tensorlite's compile settings as Keras 3's `compile_config`."""
    if not compile_config:
        return None
    optimizer = dict(compile_config["optimizer"])
    config = {k: v for k, v in optimizer.get("config", {}).items()
              if not (k == "decay" and not v)}
    return {"optimizer": {"module": "keras.optimizers", "class_name": optimizer["class_name"],
                          "config": config, "registered_name": None},
            "loss": _keras3_objects(compile_config.get("loss"), "keras.losses"),
            "loss_weights": compile_config.get("loss_weights"),
            "metrics": _keras3_objects(compile_config.get("metrics"), "keras.metrics"),
            "weighted_metrics": None, "run_eagerly": False, "steps_per_execution": 1,
            "jit_compile": False}


def _keras3_objects(value, module):
    """Loss or metric objects of a compile config ({"class_name", "config"}, alone or in a
    list or dict) as Keras 3 writes them: with their module, and a Loss's reduction by its
    Keras 3 name ("auto" is tf.keras 2's, Keras 3 refuses it)."""
    if isinstance(value, (list, tuple)):
        return [_keras3_objects(v, module) for v in value]
    if isinstance(value, dict) and "class_name" not in value:
        return {k: _keras3_objects(v, module) for k, v in value.items()}
    if not isinstance(value, dict):
        return value
    config = dict(value.get("config") or {})
    if config.get("reduction") == "auto":
        config["reduction"] = "sum_over_batch_size"
    return {"module": module, "class_name": value["class_name"], "config": config,
            "registered_name": None}


def compile_from_keras(model, compile_config, custom_objects=None):
    """Compiles `model` as a Keras 3 (or tf.keras 2) compile/training config says."""
    from tensorlite.keras import losses, optimizers  # noqa: PLC0415
    optimizer = compile_config.get("optimizer_config") or compile_config.get("optimizer")
    if isinstance(optimizer, dict):
        config = dict(optimizer.get("config", {}))
        for key, neutral in _KERAS3_OPTIMIZER_DEFAULTS.items():
            if key in config and config[key] == neutral:
                del config[key]
        for key in _NO_MATH:
            config.pop(key, None)
        name = optimizer["class_name"]
        if name.startswith("Custom>") and name[7:].lower() in optimizers._BY_NAME:
            name = name[7:]  # tf.keras 2 registers its built-in optimizers as Custom>Adam
        optimizer = optimizers.deserialize({"class_name": name, "config": _plain(config)},
                                           custom_objects)
    loss = _user_loss(compile_config.get("loss"), custom_objects)
    if isinstance(loss, dict) and "class_name" in loss:
        loss = losses.deserialize(_plain(loss), custom_objects=custom_objects)
    metrics = compile_config.get("metrics")
    model.compile(optimizer=optimizer, loss=loss,
                  metrics=_plain_metrics(metrics, custom_objects),
                  loss_weights=compile_config.get("loss_weights"))


def _user_loss(loss, custom_objects):
    """A compiled loss that is a user function, from `custom_objects` or the registered
    objects: by name (`load_model(path, custom_objects={"huber_fn": huber_fn})` in Hands-On
    ML's chapter 12) or as Keras 3's function entry; any other loss as it is."""
    if isinstance(loss, dict) and loss.get("class_name") == "function":
        return function_by_name(loss, "The compiled loss", custom_objects)
    if isinstance(loss, str):
        found = lookup(loss, None, custom_objects)
        if callable(found):
            return found
    return loss


def _plain_metrics(metrics, custom_objects=None):
    """The compiled metrics: built-ins by name; a user Metric class (Hands-On ML's
    HuberMetric) or metric function given in `custom_objects` or registered, rebuilt."""
    if not metrics:
        return None
    out = []
    for m in metrics:
        if isinstance(m, dict) and m.get("class_name") == "function":
            m = function_by_name(m, "A compiled metric", custom_objects)
        elif isinstance(m, dict) and "class_name" in m:
            cls = lookup(m["class_name"], m.get("registered_name"), custom_objects)
            m = cls.from_config(_plain(m.get("config", {}))) if isinstance(cls, type) else \
                m.get("config", {}).get("name") or m["class_name"]
        elif isinstance(m, str) and callable(lookup(m, None, custom_objects)):
            m = lookup(m, None, custom_objects)
        out.append(m)
    return out

"""TF.js's Graph format (`tf.loadGraphModel`) from a SavedModel or a tf.function: what
`tensorflowjs_converter --input_format tf_saved_model --output_format tfjs_graph_model` writes.

`model.json` holds `format: "graph-model"`, the `modelTopology` (a frozen GraphDef in
protobuf's JSON mapping: graph_def_json.py), the `signature` (the SavedModel signature's
inputs and outputs as TensorInfo, keyed by their signature names, so
`model.execute({x: t}, "output_0")` works as with tfjs-converter's files) and the
`weightsManifest` of the graph's `Const` values, sharded into `group1-shard<i>of<N>.bin`
files (weights.py) and optionally quantized as tfjs-converter does.

The graph is tensorlite's IR after its graph passes (graph_trace.py): variables frozen into
constants (weights keep the variables' names), arithmetic simplified, constants folded
(BatchNormalization's inference-time scale and offset become constants), BatchNorm scales
folded into the convolution or matrix-product filters before them
(graph/passes/fold_batch_norm.py), duplicates merged, dead code removed. Each IR node is the TensorFlow node its op's `tf`
rule writes for SavedModel export; a node TF.js does not run is an UnimplementedError
naming it. A Keras model converts too (convert_function), as with `--input_format keras`.

Example:
    >>> tf.saved_model.save(model, "exported")
    >>> convert_saved_model("exported", "web_model")  # web_model/model.json + shards
    >>> # in JavaScript: const m = await tf.loadGraphModel("web_model/model.json");
    >>> #                m.execute({inputs: x})
"""
import json
import os

from tensorlite.framework import dtypes
from tensorlite.js.graph_def_json import graph_def_json
from tensorlite.js.graph_trace import trace_function, trace_saved_model
from tensorlite.js.tfjs_ops import TFJS_VERSION
from tensorlite.js.weights import DEFAULT_SHARD_SIZE_BYTES, quantization_map, write_weights
from tensorlite.version import TENSORLITE_VERSION

MODEL_JSON = "model.json"


def _tensor_info(name, spec):
    """A signature entry as tfjs-converter writes it (TensorInfo in JSON form)."""
    dims = [{"size": str(-1 if d is None else int(d))} for d in spec.shape]
    return {"name": name, "dtype": dtypes.DT_NAMES[spec.dtype.name],
            "tensorShape": {"dim": dims} if dims else {}}


def _signature(traced, input_tensors, output_tensors):
    from tensorlite.framework import nest  # noqa: PLC0415
    inputs = {key: _tensor_info(name, traced.spec(slot)) for key, name, slot in
              zip(traced.input_keys, input_tensors, traced.graph.placeholders)}
    slots = nest.flatten(traced.graph.outputs)
    outputs = {key: _tensor_info(name, traced.spec(slot)) for key, name, slot in
               zip(traced.output_keys, output_tensors, slots)}
    return {"inputs": inputs, "outputs": outputs}


def _quantization(weights, quantization):
    """{weight name: dtype} from the `quantization` argument (see convert_saved_model);
    only float32 weights are quantized, as tfjs-converter does."""
    if not quantization:
        return {}
    if isinstance(quantization, str):
        quantization = {quantization: True}
    unknown = set(quantization) - {"float16", "uint8", "uint16"}
    if unknown:
        raise ValueError(f"quantization keys must be float16, uint8 or uint16, not "
                         f"{sorted(unknown)}")
    names = [name for name, value in weights if value.dtype == "float32"]
    return quantization_map(names, **quantization)


def write_graph_model(traced, output_dir, weight_shard_size_bytes=DEFAULT_SHARD_SIZE_BYTES,
                      quantization=None, metadata=None):
    """Writes an InferenceGraph (graph_trace.py) as model.json and weight shards in
    `output_dir`; returns the model.json contents. `metadata` (a JSON-able dict) becomes
    `userDefinedMetadata`, which TF.js hands back as `model.metadata`."""
    topology, weights, input_tensors, output_tensors = graph_def_json(traced)
    manifest = write_weights([weights], output_dir, weight_shard_size_bytes,
                             _quantization(weights, quantization))
    model_json = {
        "format": "graph-model",
        "generatedBy": f"tensorlite {TENSORLITE_VERSION}",
        "convertedBy": f"tensorlite.js (for TensorFlow.js {TFJS_VERSION})",
        "modelTopology": topology,
        "signature": _signature(traced, input_tensors, output_tensors),
        "weightsManifest": manifest,
    }
    if metadata:
        model_json["userDefinedMetadata"] = dict(metadata)
    path = os.path.join(output_dir, MODEL_JSON)
    with open(path + ".tmp", "w", encoding="utf-8") as f:
        json.dump(model_json, f)
    os.replace(path + ".tmp", path)
    return model_json


def convert_saved_model(saved_model_dir, output_dir, signature_name="serving_default",
                        tags=("serve",), weight_shard_size_bytes=DEFAULT_SHARD_SIZE_BYTES,
                        quantization=None, metadata=None, **tfjs_names):
    """Converts a SavedModel's signature into a TF.js Graph model in `output_dir`.

    Args:
      saved_model_dir: a directory written by tf.saved_model.save (or TensorFlow).
      output_dir: where model.json and the weight shards go (created if missing).
      signature_name: the signature to convert (`--signature_name`).
      tags: the MetaGraph's tags, a list or a comma-separated string
        (`--saved_model_tags`).
      weight_shard_size_bytes: the largest shard file (`--weight_shard_size_bytes`).
      quantization: None, "float16"/"uint8"/"uint16" (every float32 weight), or a dict
        {"float16"|"uint8"|"uint16": True or wildcard patterns} (`--quantize_float16` &c.)
        matched against the weight names (the variables' names: "dense/kernel").
      metadata: a JSON-able dict written as `userDefinedMetadata` (`--metadata`).
      **tfjs_names: tensorflowjs.converters.convert_tf_saved_model's names for the same
        arguments: `signature_def`, `saved_model_tags`, `quantization_dtype_map`.

    Returns the model.json contents.

    Example:
        >>> convert_saved_model("exported", "web_model", quantization="uint8")  # +SKIP
    """
    signature_name, tags, quantization = _tfjs_aliases(
        tfjs_names, signature_name=signature_name, tags=tags, quantization=quantization)
    traced = trace_saved_model(saved_model_dir, signature_name, tags)
    return write_graph_model(traced, output_dir, weight_shard_size_bytes, quantization,
                             metadata)


_ALIASES = {"signature_def": "signature_name", "saved_model_tags": "tags",
            "quantization_dtype_map": "quantization"}


def _tfjs_aliases(given, **ours):
    """Our arguments with tensorflowjs's names for them applied; unknown names and an
    argument given under both names are TypeErrors."""
    defaults = {"signature_name": "serving_default", "tags": ("serve",), "quantization": None}
    for name, value in given.items():
        if name not in _ALIASES:
            raise TypeError(f"convert_saved_model() got an unexpected keyword argument "
                            f"{name!r}")
        key = _ALIASES[name]
        if ours[key] != defaults[key] and ours[key] != value:
            raise TypeError(f"convert_saved_model() got both {key}= and {name}= (the same "
                            f"argument under tensorflowjs's name); give one")
        ours[key] = value
    return ours["signature_name"], ours["tags"], ours["quantization"]


def convert_function(fn, output_dir, input_signature=None,
                     weight_shard_size_bytes=DEFAULT_SHARD_SIZE_BYTES, quantization=None,
                     metadata=None):
    """Converts a tf.function (with an input signature, given here or its own: only the
    first dimension may be None) or a concrete function into a TF.js Graph model in
    `output_dir`; inputs are keyed by the function's argument names, outputs by a returned
    dict's keys (else output_0, output_1, ...). A Keras model converts too (inference
    mode; keyed by its input and output names): `--input_format keras --output_format
    tfjs_graph_model`. Other arguments as convert_saved_model.

    Example:
        >>> f = tf.function(lambda x: {"y": tf.nn.relu(x)},
        ...                 input_signature=[tf.TensorSpec([None, 3], tf.float32)])
        >>> convert_function(f, "web_model")["signature"]["outputs"]["y"]["name"]
        'Identity:0'
    """
    traced = trace_function(fn, input_signature)
    return write_graph_model(traced, output_dir, weight_shard_size_bytes, quantization,
                             metadata)


__all__ = ["convert_saved_model", "convert_function", "write_graph_model", "MODEL_JSON"]

"""`tensorlite-tfjs-converter` (also `python -m tensorlite.js`): tensorflowjs_converter's
command line for the conversions tensorlite makes.

    tensorlite-tfjs-converter --input_format keras model.h5 web_model/
    tensorlite-tfjs-converter --input_format tf_saved_model --signature_name serving_default
        --saved_model_tags serve --quantize_uint8 "*" saved_model/ web_model/
    tensorlite-tfjs-converter --input_format tfjs_layers_model --output_format keras \
        web_model/model.json fine_tuned.h5

Conversions (input -> output): keras / keras_saved_model / tfjs_layers_model ->
tfjs_layers_model (re-sharding or quantizing an existing one); any of them or tf_saved_model
-> tfjs_graph_model; tfjs_layers_model -> keras (`.h5`, or `.keras` by the file's ending) or
keras_saved_model (a directory).
"""
import argparse
import os
import sys
import tempfile

from tensorlite.framework import errors
from tensorlite.js import weights

INPUT_FORMATS = ("tf_saved_model", "keras", "keras_saved_model", "tfjs_layers_model")
OUTPUT_FORMATS = ("tfjs_layers_model", "tfjs_graph_model", "keras", "keras_saved_model")
_DEFAULT_OUTPUT = {"tf_saved_model": "tfjs_graph_model", "keras": "tfjs_layers_model",
                   "keras_saved_model": "tfjs_layers_model", "tfjs_layers_model": "keras"}


def _quantize_flag(parser, dtype, extra):
    parser.add_argument(
        f"--quantize_{dtype}", nargs="?", const=True, default=None, metavar="WILDCARDS",
        help=f"Store float32 weights as {dtype}{extra}. Alone it applies to every weight; "
             f"with comma-separated wildcards (e.g. 'conv*/kernel,dense/*') to the weights "
             f"whose names match. A weight may get only one quantization.")


def _path_and_format_flags(parser):
    """The positional paths and --input_format/--output_format."""
    parser.add_argument("input_path", help="The model to convert: a .h5/.keras file (keras), a "
                        "SavedModel directory (tf_saved_model, keras_saved_model) or a TF.js "
                        "model.json (tfjs_layers_model).")
    parser.add_argument("output_path", help="Where to write: a directory for TF.js models "
                        "and keras_saved_model, a .h5 or .keras file for keras.")
    parser.add_argument("--input_format", choices=INPUT_FORMATS, default="tf_saved_model",
                        help="The format of input_path: tf_saved_model (default; a "
                        "SavedModel directory), keras (a Keras .h5 or .keras file), "
                        "keras_saved_model (a SavedModel directory written by Keras's "
                        "model.save), tfjs_layers_model (a TF.js Layers model.json).")
    parser.add_argument("--output_format", choices=OUTPUT_FORMATS, default=None,
                        help="The format to write: tfjs_layers_model (TF.js's Layers "
                        "format: Keras topology, loadable with tf.loadLayersModel and "
                        "trainable in TF.js), tfjs_graph_model (TF.js's Graph format: an "
                        "optimized GraphDef for tf.loadGraphModel, inference only), keras "
                        "(an .h5 or .keras file), keras_saved_model (a SavedModel directory). "
                        "Default: tfjs_graph_model for tf_saved_model, tfjs_layers_model for "
                        "keras and keras_saved_model, keras for tfjs_layers_model.")


def build_parser():
    """The argument parser, with tensorflowjs_converter's flags and help."""
    parser = argparse.ArgumentParser(
        prog="tensorlite-tfjs-converter",
        description="Converts Keras models and SavedModels to TensorFlow.js's Layers and "
                    "Graph formats (model.json plus weight shards), and TF.js Layers models "
                    "back to Keras files, as tensorflowjs_converter does.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    _path_and_format_flags(parser)
    parser.add_argument("--signature_name", default="serving_default",
                        help="The SavedModel signature to convert (tf_saved_model input; "
                        "default serving_default).")
    parser.add_argument("--saved_model_tags", default="serve",
                        help="Comma-separated tags of the SavedModel MetaGraph to convert "
                        "(tf_saved_model input; default 'serve').")
    parser.add_argument("--weight_shard_size_bytes", type=int,
                        default=weights.DEFAULT_SHARD_SIZE_BYTES,
                        help="The largest weight shard file, in bytes (default 4194304, 4 MB: "
                        "what browsers cache per file).")
    _quantize_flag(parser, "float16", " (half the size; about 3 significant digits)")
    _quantize_flag(parser, "uint8", " (a quarter of the size; affine, 256 levels between "
                                    "each weight's min and max)")
    _quantize_flag(parser, "uint16", " (half the size; affine, 65536 levels)")
    parser.add_argument("--metadata", default=None, metavar="NAME:PATH,...",
                        help="JSON files to store in model.json's userDefinedMetadata, as "
                        "comma-separated name:path pairs.")
    parser.add_argument("--version", "-v", action="version",
                        version=f"tensorlite-tfjs-converter {_version()}")
    return parser


def _version():
    from tensorlite.version import TENSORLITE_VERSION  # noqa: PLC0415
    return TENSORLITE_VERSION


def quantization_dtype_map(args):
    """tensorflowjs's {dtype: True | [wildcards]} from the three quantize flags."""
    out = {}
    for dtype in ("float16", "uint8", "uint16"):
        value = getattr(args, f"quantize_{dtype}")
        if value is True:
            out[dtype] = True
        elif value:
            out[dtype] = [p.strip() for p in value.split(",") if p.strip()]
    return out or None


def _metadata(spec):
    import json  # noqa: PLC0415
    if not spec:
        return None
    out = {}
    for pair in spec.split(","):
        name, sep, path = pair.partition(":")
        if not sep or not name or not path:
            raise ValueError(f"--metadata entries are name:path, not {pair!r}")
        with open(path, encoding="utf-8") as f:
            out[name] = json.load(f)
    return out


def _load_keras(args):
    """The Keras model that input_path holds (keras, keras_saved_model, tfjs_layers_model)."""
    from tensorlite.js import converters  # noqa: PLC0415
    from tensorlite.keras.saving.save import load_model  # noqa: PLC0415
    if args.input_format == "tfjs_layers_model":
        return converters.load_keras_model(args.input_path, compile=True)
    if args.input_format == "keras_saved_model" and not os.path.isdir(args.input_path):
        raise ValueError(f"--input_format keras_saved_model needs a SavedModel directory, not "
                         f"{args.input_path!r}")
    return load_model(args.input_path, compile=False)


def _to_graph_model(args, qmap):
    """tfjs_graph_model output: a SavedModel (a Keras input saved as one first, as
    tensorflowjs_converter does) through converters.convert_tf_saved_model."""
    from tensorlite.js import converters  # noqa: PLC0415
    options = {"signature_def": args.signature_name, "saved_model_tags": args.saved_model_tags,
               "quantization_dtype_map": qmap,
               "weight_shard_size_bytes": args.weight_shard_size_bytes,
               "metadata": _metadata(args.metadata)}
    if args.input_format == "tf_saved_model":
        return converters.convert_tf_saved_model(args.input_path, args.output_path, **options)
    from tensorlite.saved_model import save  # noqa: PLC0415
    model = _load_keras(args)
    with tempfile.TemporaryDirectory() as tmp:
        save(model, tmp)
        return converters.convert_tf_saved_model(tmp, args.output_path, **options)


def convert(args):
    """Runs one conversion from parsed arguments; returns the path written."""
    from tensorlite.js import converters  # noqa: PLC0415
    out_format = args.output_format or _DEFAULT_OUTPUT[args.input_format]
    qmap = quantization_dtype_map(args)
    if out_format == "tfjs_graph_model":
        return _to_graph_model(args, qmap)
    if args.input_format == "tf_saved_model":
        raise ValueError(f"--input_format tf_saved_model converts to tfjs_graph_model only "
                         f"(a SavedModel holds a graph, not a Keras model); for "
                         f"{out_format}, give a Keras model (keras or keras_saved_model)")
    if out_format == "tfjs_layers_model":
        return converters.save_keras_model(
            _load_keras(args), args.output_path, quantization_dtype_map=qmap,
            weight_shard_size_bytes=args.weight_shard_size_bytes,
            metadata=_metadata(args.metadata))
    if args.input_format != "tfjs_layers_model":
        raise ValueError(f"--output_format {out_format} takes a tfjs_layers_model input, not "
                         f"{args.input_format}")
    if qmap:
        raise ValueError("quantization applies to TF.js outputs only, not to "
                         f"--output_format {out_format}")
    return _write_keras(_load_keras(args), args.output_path, out_format)


def _write_keras(model, path, out_format):
    if out_format == "keras" and not path.endswith((".h5", ".hdf5", ".keras")):
        raise ValueError(f"--output_format keras writes an .h5 or .keras file; {path!r} has "
                         f"neither ending")
    if out_format == "keras_saved_model" and path.endswith((".h5", ".hdf5", ".keras")):
        raise ValueError(f"--output_format keras_saved_model writes a directory, not {path!r}")
    model.save(path)
    return path


def main(argv=None):
    """Entry point of the console script; returns the process's exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.weight_shard_size_bytes <= 0:
        parser.error("--weight_shard_size_bytes must be a positive number of bytes")
    try:
        written = convert(args)
    except (ValueError, OSError, NotImplementedError) as e:
        print(f"tensorlite-tfjs-converter: error: {e}", file=sys.stderr)
        return 1
    except errors.OpError as e:  # UnimplementedError naming a layer, DataLossError, ...
        print(f"tensorlite-tfjs-converter: error: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {written}")
    return 0

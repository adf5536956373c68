"""`python -m tensorlite.lite`: the TensorFlow Lite converter's command line, in the style of
TensorFlow's `tflite_convert`.

    python -m tensorlite.lite --saved_model_dir=exported --output_file=model.tflite
    python -m tensorlite.lite --keras_model_file=model.keras --output_file=model.tflite \\
        --post_training_quantize
    python -m tensorlite.lite --keras_model_file=model.keras --output_file=int8.tflite \\
        --representative_dataset=samples.npy --inference_input_type=int8 \\
        --inference_output_type=int8

`--saved_model_dir`, `--keras_model_file`, `--output_file`, `--saved_model_tag_set` and
`--saved_model_signature_key` are tflite_convert's flags. tflite_convert (TF2) has no
quantization flags, so these follow its TF1 names and the Python converter's settings:
`--post_training_quantize` (dynamic range: `optimizations = [tf.lite.Optimize.DEFAULT]`),
`--quantize_to_float16` (`target_spec.supported_types = [tf.float16]`) and
`--representative_dataset FILE.npy` (full integer: the file's rows are the calibration
samples, one at a time).
"""
import argparse
import os
import sys

_TYPES = ("float32", "int8", "uint8")


def build_parser():
    """The argparse parser of `python -m tensorlite.lite` (every flag described)."""
    p = argparse.ArgumentParser(
        prog="python -m tensorlite.lite",
        description="Convert a SavedModel or a Keras model file to a TensorFlow Lite "
                    "FlatBuffer (.tflite), optionally quantized, as tflite_convert does.",
        epilog="Example: python -m tensorlite.lite --saved_model_dir=exported "
               "--output_file=model.tflite --post_training_quantize")
    p.add_argument("--output_file", required=True,
                   help="the .tflite file to write (written whole or not at all)")
    src = p.add_argument_group("input model (exactly one)").add_mutually_exclusive_group(
        required=True)
    src.add_argument("--saved_model_dir",
                     help="a SavedModel directory (tf.saved_model.save, model.export)")
    src.add_argument("--keras_model_file",
                     help="a Keras model file written by model.save (.keras or .h5)")
    p.add_argument("--saved_model_tag_set", default="serve",
                   help="comma-separated tags of the SavedModel's MetaGraphDef to convert "
                        "(default %(default)s)")
    p.add_argument("--saved_model_signature_key", default="serving_default",
                   help="the SavedModel signature to convert (default %(default)s)")
    _quantization_flags(p)
    return p


def _quantization_flags(p):
    g = p.add_argument_group("post-training quantization (at most one; default: float32)")
    q = g.add_mutually_exclusive_group()
    q.add_argument("--post_training_quantize", action="store_true",
                   help="dynamic range quantization: weights of dense and convolution "
                        "layers stored as int8, activations float "
                        "(optimizations=[tf.lite.Optimize.DEFAULT])")
    q.add_argument("--quantize_to_float16", action="store_true",
                   help="float16 quantization: float weights stored as float16 "
                        "(target_spec.supported_types=[tf.float16])")
    q.add_argument("--representative_dataset", metavar="FILE",
                   help="full integer quantization calibrated on FILE: a .npy array whose "
                        "rows are input samples, or a .npz with one such array per model "
                        "input, in the order of the model's inputs (a SavedModel's in the "
                        "order of their names)")
    g.add_argument("--num_calibration_samples", type=int, default=None,
                   help="with --representative_dataset: use only the first N rows "
                        "(default: all; TensorFlow's guide uses about 100)")
    g.add_argument("--inference_input_type", choices=_TYPES, default="float32",
                   help="with --representative_dataset: the model input's type; int8 or "
                        "uint8 removes the float QUANTIZE op at the start "
                        "(default %(default)s)")
    g.add_argument("--inference_output_type", choices=_TYPES, default="float32",
                   help="with --representative_dataset: the model output's type "
                        "(default %(default)s)")


def _check(p, args):
    """Flag combinations argparse cannot express: a usage error (exit status 2)."""
    integer_io = {args.inference_input_type, args.inference_output_type} != {"float32"}
    if args.representative_dataset is None and integer_io:
        p.error("--inference_input_type/--inference_output_type int8 or uint8 need "
                "--representative_dataset (full integer quantization)")
    if args.representative_dataset is None and args.num_calibration_samples is not None:
        p.error("--num_calibration_samples needs --representative_dataset")
    if args.num_calibration_samples is not None and args.num_calibration_samples < 1:
        p.error(f"--num_calibration_samples must be at least 1, got "
                f"{args.num_calibration_samples}")
    if args.keras_model_file is not None and (args.saved_model_tag_set != "serve" or
                                              args.saved_model_signature_key !=
                                              "serving_default"):
        p.error("--saved_model_tag_set/--saved_model_signature_key apply to "
                "--saved_model_dir only")


def load_samples(path, limit=None):
    """The representative dataset a .npy/.npz file holds: a list of arrays (one per model
    input), each with the samples along its first axis. ValueError naming what is wrong."""
    import numpy as np  # noqa: PLC0415
    if not os.path.isfile(path):
        raise ValueError(f"--representative_dataset {path!r} is not a file")
    try:
        loaded = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as e:
        raise ValueError(f"--representative_dataset {path!r} is not a .npy or .npz file "
                         f"(np.save / np.savez): {e}") from None
    arrays = [loaded[k] for k in loaded.files] if hasattr(loaded, "files") else [loaded]
    if not arrays or any(a.ndim < 1 or len(a) == 0 for a in arrays):
        raise ValueError(f"--representative_dataset {path!r} holds no samples: it needs "
                         f"arrays whose first axis lists the samples")
    if len({len(a) for a in arrays}) != 1:
        raise ValueError(f"--representative_dataset {path!r}: its arrays hold different "
                         f"numbers of samples {[len(a) for a in arrays]}")
    return [a[:limit] for a in arrays]


def check_samples(arrays, signature, path):
    """ValueError naming the input when the file's arrays do not fit the model's inputs
    (their number, or a sample's shape beside the input's, batch dimension aside)."""
    if len(arrays) != len(signature):
        names = [getattr(spec, "name", None) or f"input_{i}" for i, spec in
                 enumerate(signature)]
        raise ValueError(f"--representative_dataset {path!r} holds {len(arrays)} array(s) but "
                         f"the model takes {len(signature)} input(s) {names}: give a .npz "
                         f"with one array per input, in that order")
    for i, (array, spec) in enumerate(zip(arrays, signature)):
        want = list(spec.shape)[1:]
        got = list(array.shape[1:])
        if len(want) != len(got) or any(w is not None and w != g for w, g in zip(want, got)):
            name = getattr(spec, "name", None) or f"input_{i}"
            raise ValueError(f"--representative_dataset {path!r}: samples of shape {got} do "
                             f"not fit input {name!r} of shape {want} (batch dimension "
                             f"aside)")


def make_converter(args):
    """The tf.lite.TFLiteConverter the flags describe."""
    from tensorlite.framework import dtypes  # noqa: PLC0415 - keep --help fast
    from tensorlite.keras.saving.save import load_model  # noqa: PLC0415
    from tensorlite.lite.convert.tflite_converter import (  # noqa: PLC0415
        Optimize, TFLiteConverter)
    if args.saved_model_dir is not None:
        converter = TFLiteConverter.from_saved_model(
            args.saved_model_dir, signature_keys=[args.saved_model_signature_key],
            tags=[t for t in args.saved_model_tag_set.split(",") if t])
    else:
        model = load_model(args.keras_model_file, compile=False)
        converter = TFLiteConverter.from_keras_model(model)
    if args.post_training_quantize:
        converter.optimizations = [Optimize.DEFAULT]
    elif args.quantize_to_float16:
        converter.optimizations = [Optimize.DEFAULT]
        converter.target_spec.supported_types = [dtypes.float16]
    elif args.representative_dataset is not None:
        arrays = load_samples(args.representative_dataset, args.num_calibration_samples)
        captured = converter._make_capture()   # traced once: its signature checks the file
        converter._make_capture = lambda: captured
        check_samples(arrays, captured.signature, args.representative_dataset)

        def representative_dataset():
            for i in range(len(arrays[0])):
                yield [a[i:i + 1].astype(a.dtype) for a in arrays]

        converter.optimizations = [Optimize.DEFAULT]
        converter.representative_dataset = representative_dataset
        converter.inference_input_type = dtypes.as_dtype(args.inference_input_type)
        converter.inference_output_type = dtypes.as_dtype(args.inference_output_type)
    return converter


def main(argv=None):
    """Runs the converter; returns the exit status (1 with a message when the model cannot
    be read or converted, 2 for bad flags)."""
    p = build_parser()
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    _check(p, args)
    from tensorlite.framework import errors  # noqa: PLC0415
    from tensorlite.framework.atomic_files import write_bytes  # noqa: PLC0415
    try:
        data = make_converter(args).convert()
    except (ValueError, TypeError, OSError, NotImplementedError, errors.OpError) as e:
        source = args.saved_model_dir or args.keras_model_file
        print(f"python -m tensorlite.lite: cannot convert {source}: "
              f"{getattr(e, 'message', None) or e}", file=sys.stderr)
        return 1
    write_bytes(args.output_file, data)
    print(f"wrote {args.output_file}: {len(data)} bytes")
    return 0

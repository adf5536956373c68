"""`python -m tensorlite.onnx MODEL.keras OUT.onnx [--opset N] [--input-shape 32,32,3]`:
exports a model saved with `model.save` to ONNX (batch dimension dynamic)."""
import argparse
import sys


def _parse_shape(text):
    return [int(d) for d in text.split(",") if d.strip()]


def build_parser():
    """The argparse parser of `python -m tensorlite.onnx` (every argument described)."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorlite.onnx",
        description="Export a saved Keras model (.keras, .h5) to ONNX, batch dimension "
                    "dynamic.",
        epilog="Example: python -m tensorlite.onnx cnn.keras cnn.onnx --opset 17")
    parser.add_argument("model", help="a model saved with model.save (.keras or .h5)")
    parser.add_argument("output", help="the .onnx file to write")
    parser.add_argument("--opset", type=int, default=None,
                        help="the ONNX opset to target (default 17)")
    parser.add_argument("--input-shape", type=_parse_shape, default=None,
                        help="the input's shape without the batch dimension, e.g. 32,32,3 "
                             "(needed when the model does not record it)")
    parser.add_argument("--input-dtype", default="float32",
                        help="the input's dtype when --input-shape is given "
                             "(default %(default)s)")
    return parser


def main(argv=None):
    """Example: `python -m tensorlite.onnx cnn.keras cnn.onnx --opset 17`."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.input_shape is None and args.input_dtype != "float32":
        parser.error("--input-dtype applies with --input-shape (the signature it completes)")
    from tensorlite.framework import errors  # noqa: PLC0415 - keep --help fast
    from tensorlite.framework.tensor_spec import TensorSpec  # noqa: PLC0415
    from tensorlite.keras.saving.save import load_model  # noqa: PLC0415
    from tensorlite.onnx import DEFAULT_OPSET, export  # noqa: PLC0415
    try:
        model = load_model(args.model, compile=False)
    except (ValueError, OSError, errors.OpError) as e:  # a refused or unreadable file
        print(f"python -m tensorlite.onnx: cannot load {args.model}: {e}", file=sys.stderr)
        return 1
    signature = None
    if args.input_shape is not None:
        signature = [TensorSpec([None] + args.input_shape, args.input_dtype)]
    proto = export(model, args.output, input_signature=signature,
                   opset=args.opset or DEFAULT_OPSET)
    print(f"wrote {args.output}: {len(proto.graph.node)} nodes, opset "
          f"{proto.opset_import[0].version}, inputs "
          f"{[i.name for i in proto.graph.input]}, outputs "
          f"{[o.name for o in proto.graph.output]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

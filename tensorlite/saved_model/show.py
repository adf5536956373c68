"""`python -m tensorlite.saved_model show --dir DIR [--all | --tag_set TAGS
[--signature_def KEY]]`: what a SavedModel holds, as TensorFlow's `saved_model_cli show`
prints it: tag-sets, signatures with their inputs and outputs (dtype, shape, tensor name),
and the functions of the object graph.

Example:
    $ python -m tensorlite.saved_model show --dir /tmp/exported --all
"""
import argparse
import sys

from tensorlite.framework import errors
from tensorlite.saved_model.load import meta_graph, read_saved_model

def _dtype(value):
    from tensorlite.protos.example import DATA_TYPES  # noqa: PLC0415
    names = {number: name for name, number in DATA_TYPES.items()}
    return names.get(value, f"DataType({value})")


def _shape(proto):
    if proto.unknown_rank:
        return "unknown_rank"
    return "(" + ", ".join(str(d.size) for d in proto.dim) + ("," if len(proto.dim) == 1
                                                              else "") + ")"


def _tensor(kind, key, info):
    return [f"  {kind}['{key}'] tensor_info:", f"      dtype: {_dtype(info.dtype)}",
            f"      shape: {_shape(info.tensor_shape)}", f"      name: {info.name}"]


def signature_lines(meta, key):
    sig = meta.signature_def[key]
    lines = ["The given SavedModel SignatureDef contains the following input(s):"]
    for name in sorted(sig.inputs):
        lines += _tensor("inputs", name, sig.inputs[name])
    lines.append("The given SavedModel SignatureDef contains the following output(s):")
    for name in sorted(sig.outputs):
        lines += _tensor("outputs", name, sig.outputs[name])
    lines.append(f"Method name is: {sig.method_name}")
    return lines


def show_all(export_dir):
    """The text `show --all` prints."""
    model = read_saved_model(export_dir)
    lines = []
    for meta in model.meta_graphs:
        tags = ", ".join(meta.meta_info_def.tags)
        lines.append("")
        lines.append(f"MetaGraphDef with tag-set: '{tags}' contains the following "
                     f"SignatureDefs:")
        for key in sorted(meta.signature_def):
            lines += ["", f"signature_def['{key}']:"]
            lines += ["  " + line for line in signature_lines(meta, key)]
        functions = [f.signature.name for f in meta.graph_def.library.function]
        lines += ["", f"Functions in the library: {len(functions)}"]
        lines += [f"  {name}" for name in sorted(functions)]
    return "\n".join(lines)


def build_parser():
    """The argparse parser of `python -m tensorlite.saved_model` (saved_model_cli's
    `show` command and its flags)."""
    parser = argparse.ArgumentParser(
        prog="python -m tensorlite.saved_model",
        description="Inspect a SavedModel directory, as TensorFlow's saved_model_cli does.",
        epilog="Example: python -m tensorlite.saved_model show --dir /tmp/exported --all")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND",
                                help="show: what a SavedModel holds (the only command)")
    show = sub.add_parser("show", help="show what a SavedModel holds",
                          description="Show the tag-sets, signatures (inputs, outputs, "
                                      "method) and functions of a SavedModel.")
    show.add_argument("--dir", required=True, help="the SavedModel directory")
    show.add_argument("--all", action="store_true",
                      help="print every tag-set and signature with its inputs and outputs")
    show.add_argument("--tag_set",
                      help="comma-separated tags of one MetaGraphDef (e.g. serve); alone: "
                           "list its SignatureDef keys")
    show.add_argument("--signature_def",
                      help="with --tag_set: print this signature's inputs and outputs")
    return parser


def main(argv=None):
    """Runs the command line; returns the exit status (1 with a message on a bad model)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.signature_def is not None and args.tag_set is None:
        parser.error("--signature_def needs --tag_set (the MetaGraphDef that holds it)")
    if args.all and args.tag_set is not None:
        parser.error("--all shows every tag-set: give either --all or --tag_set")
    try:
        if args.all:
            print(show_all(args.dir))
        elif args.tag_set is None:
            model = read_saved_model(args.dir)
            print("The given SavedModel contains the following tag-sets:")
            for meta in model.meta_graphs:
                print(f"'{', '.join(meta.meta_info_def.tags)}'")
        else:
            meta = meta_graph(read_saved_model(args.dir), args.tag_set.split(","), args.dir)
            if args.signature_def is None:
                print("The given SavedModel MetaGraphDef contains SignatureDefs with the "
                      "following keys:")
                for key in sorted(meta.signature_def):
                    print(f'SignatureDef key: "{key}"')
            else:
                print("\n".join(signature_lines(meta, args.signature_def)))
    except (errors.OpError, RuntimeError, KeyError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0

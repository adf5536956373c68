"""Issue 34: per-image latency of the converted CIFAR CNN and MobileNetV2 in TensorFlow.js
(Node: the pure-JS `cpu` backend and `wasm`) beside tensorlite's graph execution and LiteRT,
on the same inputs, and the sizes of the TF.js files in float32, float16 and uint8.

    python bench/tfjs_inference.py [--number 20] [--repeats 5] [--threads 1]
                                   [--mobilenet-size 96] [--models cnn,mobilenet_v2]

Each model is saved as a SavedModel and converted to TF.js's Graph format
(tensorlite.js.graph_model) and to a .tflite file (tensorlite.lite). TF.js runs in one Node
process per row (tests/js/graph_model.js: the model loads, runs once to check its output
against tensorlite's, `--warmup` untimed runs, then the mean of `--number * --repeats`
timed runs); tensorlite and LiteRT are timed in interleaved rounds (bench/graph_speedup.py),
medians in milliseconds per image at batch 1. Rows that cannot run here (no node, no
js/node_modules, no ai_edge_litert, a backend that fails to start) are listed as skipped,
with why. No goal is asserted: the figures say where tensorlite's files stand in TF.js.
"""
import argparse
import os
import shutil
import sys
import tempfile

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def _arguments(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--number", type=int, default=20, help="timed calls per round")
    parser.add_argument("--repeats", type=int, default=5, help="rounds (median taken)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed TF.js runs first")
    parser.add_argument("--threads", type=int, default=1,
                        help="threads for tensorlite (BLAS) and LiteRT")
    parser.add_argument("--mobilenet-size", type=int, default=96,
                        help="MobileNetV2's input height and width (96..224)")
    parser.add_argument("--models", default="cnn,mobilenet_v2",
                        help="comma-separated: cnn, mobilenet_v2")
    return parser.parse_args(argv)


ARGS = _arguments(sys.argv[1:]) if __name__ == "__main__" else None
if ARGS is not None:  # before NumPy loads BLAS
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(ARGS.threads))
import numpy as np  # noqa: E402

sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))
import tensorlite as tf  # noqa: E402
from bench.graph_speedup import interleaved  # noqa: E402 - one timing loop for benches
from examples.seed_models import generate_model  # noqa: E402
from tensorlite.framework import errors  # noqa: E402
from tensorlite.js import graph_model  # noqa: E402
from tests.tfjs_models import spread_batch_norms  # noqa: E402 - the TF.js tests' models

QUANTIZATIONS = (("float32", None), ("float16", "float16"), ("uint8", "uint8"))


def _models(names, size):
    tf.random.set_seed(0)
    out = {}
    if "cnn" in names:
        out["CIFAR CNN"] = (generate_model(), (1, 32, 32, 3))
    if "mobilenet_v2" in names:
        model = tf.keras.applications.MobileNetV2(input_shape=(size, size, 3), weights=None)
        out[f"MobileNetV2 {size}x{size}"] = (spread_batch_norms(model, 0), (1, size, size, 3))
    return out


def _dir_size(path):
    return sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))


def _node_problem():
    if shutil.which("node") is None:
        return "node is not installed"
    if not os.path.isdir(os.path.join(ROOT, "js", "node_modules", "@tensorflow", "tfjs")):
        return "js/node_modules is missing (cd js && npm ci)"
    return None


def _tfjs_row(model_dir, x, backend, args):
    """(ms per image, max |TF.js - tensorlite| input) of one backend, or raises."""
    from js_runner import run_node  # noqa: PLC0415 - tests/js_runner.py runs the Node helper
    request = {"model": os.path.join(model_dir, "model.json"), "backend": backend,
               "inputs": {"inputs": {"shape": list(x.shape), "dtype": "float32",
                                     "values": x.ravel().tolist()}},
               "repeat": args.number * args.repeats, "warmup": args.warmup}
    result = run_node("graph_model.js", request)
    out = result["outputs"]["output_0"]
    return result["ms_per_run"], np.asarray(out["values"], np.float32).reshape(out["shape"])


def _litert(model, x, threads):
    try:
        from ai_edge_litert.interpreter import Interpreter  # noqa: PLC0415
    except ImportError:
        return None, "ai_edge_litert is not installed"
    try:
        data = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    except errors.UnimplementedError as e:  # an op tensorlite.lite cannot write yet
        return None, f"tensorlite.lite cannot convert it: {e.message.split(';')[0]}"
    interpreter = Interpreter(model_content=data, num_threads=threads)
    interpreter.allocate_tensors()
    index = interpreter.get_input_details()[0]["index"]
    out = interpreter.get_output_details()[0]["index"]

    def call():
        interpreter.set_tensor(index, x)
        interpreter.invoke()
        return interpreter.get_tensor(out)
    return call, None


def bench_model(name, model, shape, args, work, skipped):
    """Prints one model's file sizes and latency table."""
    x = np.random.default_rng(0).uniform(-1, 1, size=shape).astype("float32")
    saved = os.path.join(work, f"{len(os.listdir(work))}_saved")
    tf.saved_model.save(model, saved)
    dirs = {}
    for label, quantization in QUANTIZATIONS:
        dirs[label] = os.path.join(saved + "_tfjs_" + label)
        graph_model.convert_saved_model(saved, dirs[label], quantization=quantization)
    base = _dir_size(dirs["float32"])
    print(f"\n{name}: TF.js graph model files " + ", ".join(
        f"{label} {_dir_size(d) / 1e6:.2f} MB ({_dir_size(d) / base:.2f}x)"
        for label, d in dirs.items()))
    graph = tf.function(lambda v: model(v, training=False))
    want = graph(tf.constant(x)).numpy()
    timed = {"tensorlite graph (tf.function)": lambda: graph(tf.constant(x))}
    call, why = _litert(model, x, args.threads)
    if call is None:
        skipped.append(f"{name}: LiteRT: {why}")
    else:
        timed["LiteRT (default kernels)"] = call
    rows = {k: us / 1e3 for k, us in interleaved(timed, args.number, args.repeats).items()}
    problem = _node_problem()
    for backend in ("cpu", "wasm"):
        if problem:
            skipped.append(f"{name}: TF.js {backend}: {problem}")
            continue
        try:
            ms, got = _tfjs_row(dirs["float32"], x, backend, args)
        except AssertionError as e:  # the Node helper failed: say why, keep the others
            skipped.append(f"{name}: TF.js {backend}: {str(e).splitlines()[-1]}")
            continue
        err = float(np.abs(got - want).max())
        rows[f"TF.js Node {backend} (max |diff| {err:.1e})"] = ms
    width = max(map(len, rows))
    for row, ms in rows.items():
        print(f"  {row:<{width}}  {ms:9.3f} ms/image")


def main(argv=None):
    """Example: python bench/tfjs_inference.py --number 5 --repeats 3 --models cnn"""
    args = ARGS if argv is None and ARGS is not None else _arguments(argv or [])
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    skipped = []
    work = tempfile.mkdtemp(prefix="tfjs_bench_")
    try:
        models = _models(args.models.split(","), args.mobilenet_size)
        for name, (model, shape) in models.items():
            bench_model(name, model, shape, args, work, skipped)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("\nskipped rows:" if skipped else "\nskipped rows: none")
    for line in skipped:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The CIFAR CNN (of the notes "Structure of Deep Learning Frameworks") at batch 1,
per-image latency of tensorlite's NumPy TF Lite interpreter beside LiteRT (TensorFlow's TF
Lite runtime), onnxruntime, and tensorlite's own eager and tf.function graph execution;
float32 and full-integer int8.

    python bench/lite_inference.py [--repeats 15] [--number 20] [--threads 1]
        [--int8-gemm auto,madd512,blas]

Candidates are timed in interleaved rounds (every candidate once per round, `number` calls
each) so load from neighbours hits them alike; figures are medians in milliseconds per
image. LiteRT is timed with its default kernels (XNNPACK for float) and with its reference
kernels (the arithmetic our int8 kernels reproduce bit for bit). Peers that are not
installed are left out, and the bench prints each row it skipped and why (the `test`
extra installs both: ai-edge-litert and onnxruntime). Every engine runs on `--threads`
threads (OpenBLAS for NumPy, LiteRT's and onnxruntime's own pools, tensorlite's intra-op
limit): at batch 1 on a shared 2-core machine, BLAS threads spinning against neighbours
cost NumPy up to 40x on a 2304x512 product. Goals: our interpreter within 3x of LiteRT on
float and on int8, int8 no slower than our float32, and ahead of tensorlite's graph
executor. The int8 convolutions and wide FULLY_CONNECTED layers run on a compiled integer
GEMM (tensorlite/lite/kernels/int_gemm.py): vpdpbusd on AVX-512 VNNI, else vpmaddwd
(AVX-512BW or AVX2, compiled without VNNI), else exact float32 BLAS blocks. `--int8-gemm`
adds one int8 interpreter row per listed kernel (TENSORLITE_INT8_GEMM's values), each
named by the kernel it ran on, so a machine with VNNI also measures the paths without it.
"""
import argparse
import os
import sys


def _threads(argv):
    for i, arg in enumerate(argv):
        if arg.startswith("--threads"):
            return arg.split("=", 1)[1] if "=" in arg else argv[i + 1]
    return "1"


THREADS = int(_threads(sys.argv[1:]))
os.environ.setdefault("OPENBLAS_NUM_THREADS", str(THREADS))  # before NumPy loads BLAS
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import tensorlite as tf  # noqa: E402
from bench.graph_speedup import interleaved  # noqa: E402 - one timing loop for benches
from examples.seed_models import generate_model  # noqa: E402
from tensorlite.lite.interpreter import Interpreter  # noqa: E402


def _interpreter_call(interpreter, x):
    detail = interpreter.get_input_details()[0]
    if detail["dtype"] != np.float32:
        scale, zero = detail["quantization"]
        x = np.clip(np.round(x / scale + zero), -128, 127).astype(detail["dtype"])
    index, out = detail["index"], interpreter.get_output_details()[0]["index"]

    def call():
        interpreter.set_tensor(index, x)
        interpreter.invoke()
        return interpreter.get_tensor(out)
    return call


def _files(model, x):
    def representative():
        rng = np.random.default_rng(1)
        for _ in range(16):
            yield [rng.normal(size=x.shape).astype("float32")]
    float_file = tf.lite.TFLiteConverter.from_keras_model(model).convert()
    converter = tf.lite.TFLiteConverter.from_keras_model(model)
    converter.optimizations = [tf.lite.Optimize.DEFAULT]
    converter.representative_dataset = representative
    converter.inference_input_type = converter.inference_output_type = tf.int8
    return {"float32": float_file, "int8": converter.convert()}


def _litert(data, reference):
    """A LiteRT interpreter, or the reason there is none (a str)."""
    try:
        from ai_edge_litert.interpreter import Interpreter as LiteRT, OpResolverType
    except ImportError as e:
        return f"LiteRT is not installed (pip install ai-edge-litert): {e}"
    kind = OpResolverType.BUILTIN_REF if reference else OpResolverType.AUTO
    interpreter = LiteRT(model_content=data, experimental_op_resolver_type=kind,
                         num_threads=THREADS)
    interpreter.allocate_tensors()
    return interpreter


def _onnxruntime(model, x):
    """A call running the model in onnxruntime, or the reason there is none (a str)."""
    try:
        import onnxruntime as ort
        from tensorlite.onnx import to_model
        from tensorlite.graph.capture import capture
    except ImportError as e:
        return (f"onnxruntime or onnx is not installed (pip install onnxruntime and "
                f"tensorlite's onnx extra): {e}")
    proto = to_model(capture(model))
    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = options.inter_op_num_threads = THREADS
    session = ort.InferenceSession(proto.SerializeToString(), options,
                                   providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    return lambda: session.run(None, {name: x})


def _our_rows(kind, data, x, gemms):
    """{row: call} of our interpreter on the .tflite `data`: one row for float32, one per
    int8 GEMM kernel in `gemms` (those the host lacks fall back, and say so)."""
    if kind == "float32":
        return {"tensorlite interpreter (float32)": _interpreter_call(
            _allocated(Interpreter(model_content=data)), x)}
    from tensorlite.lite.kernels import int_gemm  # noqa: PLC0415
    rows, before = {}, os.environ.get("TENSORLITE_INT8_GEMM")
    try:
        for wanted in gemms:
            os.environ["TENSORLITE_INT8_GEMM"] = wanted  # read when the steps are bound
            used = int_gemm.choice() or "blas"
            row = f"tensorlite interpreter (int8, {used})"
            if row not in rows:
                rows[row] = _interpreter_call(_allocated(Interpreter(model_content=data)), x)
    finally:
        os.environ.pop("TENSORLITE_INT8_GEMM", None)
        if before is not None:
            os.environ["TENSORLITE_INT8_GEMM"] = before
    return rows


def candidates(model, x, gemms=("auto",)):
    """({row: call} to time, {.tflite kind: bytes}, {skipped row: why})."""
    files = _files(model, x)
    skipped = {}
    graph = tf.function(lambda v: model(v, training=False))
    out = {"tensorlite eager (float32)": lambda: model(x, training=False),
           "tensorlite graph (float32)": lambda: graph(tf.constant(x))}
    for kind, data in files.items():
        out.update(_our_rows(kind, data, x, gemms))
        for reference in (False, True):
            litert = _litert(data, reference)
            row = f"LiteRT {'reference' if reference else 'default'} kernels ({kind})"
            if isinstance(litert, str):
                skipped[row] = litert
            else:
                out[row] = _interpreter_call(litert, x)
    session = _onnxruntime(model, x)
    if isinstance(session, str):
        skipped["onnxruntime (float32)"] = session
    else:
        out["onnxruntime (float32)"] = session
    return out, {k: len(v) for k, v in files.items()}, skipped


def _allocated(interpreter):
    interpreter.allocate_tensors()
    return interpreter


def main(argv=None):
    """Example: python bench/lite_inference.py --repeats 5 --number 5"""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15, help="interleaved rounds")
    parser.add_argument("--number", type=int, default=20, help="calls per candidate a round")
    parser.add_argument("--threads", type=int, default=1, help="threads of every engine")
    parser.add_argument("--int8-gemm", default="auto",
                        help="comma-separated int8 GEMM kernels, one interpreter row each: "
                             "auto, vnni, madd512, madd256, blas")
    args = parser.parse_args(argv)
    # tensorlite's own kernels pick their BLAS thread count per GEMM (blas_threads.py), up
    # to this limit: the same count as every other engine here
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.random.set_seed(0)
    model = generate_model()
    x = np.random.default_rng(0).normal(size=(1, 32, 32, 3)).astype("float32")
    cands, sizes, skipped = candidates(model, x, args.int8_gemm.split(","))
    print(f"CIFAR CNN .tflite: float32 {sizes['float32'] / 1e6:.2f} MB, int8 "
          f"{sizes['int8'] / 1e6:.2f} MB ({sizes['int8'] / sizes['float32']:.2f}x)")
    times = {k: us / 1e3 for k, us in interleaved(cands, args.number, args.repeats).items()}
    width = max(map(len, list(times) + list(skipped)))
    for name, ms in times.items():
        print(f"  {name:<{width}}  {ms:8.3f} ms/image")
    for name, why in skipped.items():
        print(f"  {name:<{width}}  skipped: {why}")
    ours_float = times["tensorlite interpreter (float32)"]
    for row, ours in times.items():
        if not row.startswith("tensorlite interpreter"):
            continue
        kind = "float32" if "float32" in row else "int8"
        what = row[len("tensorlite interpreter "):]
        ref = times.get(f"LiteRT default kernels ({kind})")
        if not ref:
            print(f"interpreter / LiteRT {what}: no ratio, the LiteRT rows were skipped")
        if ref:
            print(f"interpreter / LiteRT default {what}: {ours / ref:.2f}x (goal: <= 3x)")
        ref = times.get(f"LiteRT reference kernels ({kind})")
        if ref:
            print(f"interpreter / LiteRT reference {what}: {ours / ref:.2f}x")
        if kind == "int8":
            print(f"interpreter int8 / float32 {what}: {ours / ours_float:.2f}x (goal: <= 1)")
    print(f"interpreter (float32) / tensorlite graph: "
          f"{times['tensorlite interpreter (float32)'] / times['tensorlite graph (float32)']:.2f}x"
          f" (goal: < 1)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

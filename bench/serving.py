"""Model server throughput and latency: the MLP of the notes "Structure of
Deep Learning Frameworks" behind tensorlite-serving's REST API,
at 1, 8 and 32 concurrent clients, batching off and on, beside the same signature called
in-process (the floor: no HTTP, no JSON).

The server runs as its own process (`python -m tensorlite.serving`, on 127.0.0.1); the
clients are coroutines of this process on one asyncio loop, each a keep-alive connection
sending one example per request (pre-encoded HTTP/1.1 bytes) for `--seconds` (bounded).
The client must not be the bottleneck, so it is first measured alone against a trivial
endpoint (bench/trivial_http.py, a fixed reply): its requests/s there is the ceiling of
every figure below. Prints requests/s, p50 and p99 latency and the ratios the goals name:
batching at 32 clients vs unbatched (goal >= 3x) and p99/p50 (goal < 5x).

    python bench/serving.py [--seconds 5] [--repeats 3] [--http auto|h11|httptools]
"""
import argparse
import asyncio
import http.client
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import tensorlite as tf  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _cleanup import exit_on_signals  # noqa: E402

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "serving")


def saved_models(tmp):
    """That MLP as SavedModel version 1: written at full size (128 hidden units) by
    real TensorFlow when $TENSORLITE_TF_PYTHON (or .venv-tf) has it, else the test
    fixture's 16-unit version (tensorlite does not write SavedModels yet)."""
    tf_python = os.environ.get("TENSORLITE_TF_PYTHON") or os.path.join(ROOT, ".venv-tf", "bin",
                                                                       "python")
    base = os.path.join(tmp, "mlp")
    if os.path.exists(tf_python):
        subprocess.run([tf_python, os.path.join(FIXTURES, "make_fixtures.py"), tmp, "--hidden",
                        "128"], check=True, capture_output=True,
                       env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONPATH=""))
        shutil.rmtree(os.path.join(base, "2"))
        return base, "MLP (128 hidden units), written by TensorFlow"
    os.makedirs(base)
    shutil.copytree(os.path.join(FIXTURES, "mlp", "1"), os.path.join(base, "1"))
    return base, "MLP with 16 hidden units (the test fixture; no TensorFlow found)"


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(base, batching, port, http_parser="auto"):
    args = [sys.executable, "-m", "tensorlite.serving", "--model_name=mlp",
            f"--model_base_path={base}", f"--rest_api_port={port}",
            f"--rest_api_http={http_parser}"]
    if batching:
        cfg = os.path.join(base, "..", "batching.config")
        with open(cfg, "w") as f:
            f.write("max_batch_size { value: 32 } batch_timeout_micros { value: 2000 } "
                    "num_batch_threads { value: 1 } max_enqueued_batches { value: 64 }")
        args += ["--enable_batching", f"--batching_parameters_file={cfg}"]
    proc = subprocess.Popen(args, env=dict(os.environ, PYTHONPATH=ROOT),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/v1/models/mlp")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"server did not start: {proc.stderr.read().decode()[-2000:]}")


def trivial_server(port):
    """bench/trivial_http.py in its own process, once it listens."""
    proc = subprocess.Popen([sys.executable, os.path.join(ROOT, "bench", "trivial_http.py"),
                             str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.stdout.readline().strip() != b"ready":
        proc.kill()
        raise RuntimeError(f"trivial server did not start: {proc.stderr.read().decode()}")
    return proc


def http_request(path, body):
    """One HTTP/1.1 POST, encoded once: the clients send these bytes as they are."""
    return (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


async def _client(port, request, stop, latencies, errors):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        while time.monotonic() < stop:
            t0 = time.perf_counter()
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            i = head.lower().find(b"content-length:")
            await reader.readexactly(int(head[i + 15:head.index(b"\r\n", i)]))
            if head[9:12] != b"200":
                errors.append(int(head[9:12]))
            latencies.append(time.perf_counter() - t0)
    finally:
        writer.close()


def load(port, clients, seconds, request):
    """`clients` keep-alive connections sending `request` back to back for `seconds`."""
    latencies, errors = [], []

    async def run():
        stop = time.monotonic() + seconds
        await asyncio.gather(*[_client(port, request, stop, latencies, errors)
                               for _ in range(clients)])
    t0 = time.perf_counter()
    asyncio.run(run())
    wall = time.perf_counter() - t0
    lat = np.array(latencies) * 1e3
    return {"rps": len(latencies) / wall, "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99)), "errors": len(errors)}


def in_process(module, seconds, x):
    fn = module.signatures["serving_default"]
    n, stop = 0, time.monotonic() + seconds
    lat = []
    while time.monotonic() < stop:
        t0 = time.perf_counter()
        fn(x=tf.constant(x))
        lat.append(time.perf_counter() - t0)
        n += 1
    lat = np.array(lat) * 1e3
    return {"rps": n / seconds, "p50": float(np.percentile(lat, 50)),
            "p99": float(np.percentile(lat, 99)), "errors": 0}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=5.0, help="seconds of load per case")
    p.add_argument("--repeats", type=int, default=3, help="interleaved runs; medians are reported")
    p.add_argument("--http", choices=("auto", "h11", "httptools"), default="auto",
                   help="the server's HTTP parser (uvicorn's; auto: httptools if installed)")
    args = p.parse_args()
    exit_on_signals()  # SIGTERM too ends the servers and removes the SavedModels
    with tempfile.TemporaryDirectory() as tmp:  # the SavedModels, removed at the end
        run_cases(args, tmp)


def run_cases(args, tmp):
    """Times every case against SavedModels written in `tmp`."""
    base, what = saved_models(tmp)
    print(f"model: {what}; server HTTP parser: {args.http}; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    loaded = tf.saved_model.load(os.path.join(base, "1"))
    x = np.random.rand(1, 28, 28).astype(np.float32)
    request = http_request("/v1/models/mlp:predict",
                           json.dumps({"instances": x.tolist()}).encode())
    results = {}
    port = _free_port()
    proc = trivial_server(port)
    try:
        results["client alone x32"] = [load(port, 32, args.seconds, request)
                                       for _ in range(args.repeats)]
    finally:
        proc.kill()
        proc.wait(timeout=30)
    results["in-process"] = [in_process(loaded, args.seconds, x) for _ in range(args.repeats)]
    for batching in (False, True):
        port = _free_port()
        proc = start_server(base, batching, port, args.http)
        try:
            for clients in (1, 8, 32):
                key = f"{'batched' if batching else 'unbatched'} x{clients}"
                results[key] = [load(port, clients, args.seconds, request)
                                for _ in range(args.repeats)]
        finally:
            proc.terminate()
            proc.wait(timeout=30)
    print(f"{'case':<17} {'req/s':>9} {'p50 ms':>8} {'p99 ms':>8} {'p99/p50':>8} {'errors':>6}")
    med = {}
    for key, runs in results.items():
        m = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p99", "errors")}
        med[key] = m
        print(f"{key:<17} {m['rps']:9.0f} {m['p50']:8.2f} {m['p99']:8.2f} "
              f"{m['p99'] / m['p50']:8.2f} {m['errors']:6.0f}")
    ratio = med["batched x32"]["rps"] / med["unbatched x32"]["rps"]
    print(f"\nbatched / unbatched throughput at 32 clients: {ratio:.2f}x (goal >= 3x)")
    print(f"p99 / p50 batched at 32 clients: "
          f"{med['batched x32']['p99'] / med['batched x32']['p50']:.2f} (goal < 5)")
    print(f"client alone (trivial endpoint) / batched x32: "
          f"{med['client alone x32']['rps'] / med['batched x32']['rps']:.1f}x (the client "
          f"is not the bottleneck while this is well above 1)")
    print(f"unbatched 1 client vs in-process floor: "
          f"{med['in-process']['rps'] / med['unbatched x1']['rps']:.1f}x the request rate "
          f"in-process (medians of {args.repeats} runs of {args.seconds:.0f} s)")


if __name__ == "__main__":
    main()

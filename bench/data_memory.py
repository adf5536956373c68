"""Memory of tf.data buffers and worker processes.

1. shuffle(buffer) over 1 MB elements: the peak RSS growth should be the buffer's bytes plus
   a small constant (each element is held once).
2. A parallel map in worker processes over a large in-memory source: each worker's private
   memory (USS) should stay small: workers receive elements, not a copy of the pipeline.

    python bench/data_memory.py [--buffer 1000] [--source-mb 400]

Each measurement runs in a fresh subprocess so peak RSS figures do not mix.
"""
import argparse
import json
import os
import subprocess
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")

SHUFFLE = """
import resource, sys, json
sys.path.insert(0, {root!r})
import numpy as np, tensorlite as tf
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
n, buf = {n}, {buf}
ds = tf.data.Dataset.range(n).map(lambda i: np.full(1 << 20, int(i) % 251, np.uint8)).shuffle(buf, seed=1)
count = sum(1 for _ in ds)
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({{"count": count, "growth_mb": (peak - base) / 1024}}))
"""

WORKERS = """
import sys, json, os, time
sys.path.insert(0, {root!r})
import numpy as np, tensorlite as tf
source = np.random.default_rng(0).random(({mb} << 20) // 8 // 1000 * 1000).reshape(-1, 1000)
def pure_python(row):
    s = 0.0
    for v in row.numpy()[:200].tolist():
        s += v * v
    return np.asarray(s)
options = tf.data.Options()
options.threading.worker_mechanism = "process"
ds = tf.data.Dataset.from_tensor_slices(source).map(pure_python, num_parallel_calls=2).with_options(options)
it = iter(ds)
for _ in range(200):
    next(it)
def uss(pid):
    total = 0
    with open(f"/proc/{{pid}}/smaps_rollup") as f:
        for line in f:
            if line.startswith(("Private_Clean", "Private_Dirty")):
                total += int(line.split()[1])
    return total / 1024
def rss(pid):
    with open(f"/proc/{{pid}}/status") as f:
        for line in f:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) / 1024
raw = it._raw
while not hasattr(raw, "_workers"):
    raw = raw._in
workers = [w.proc.pid for w in raw._workers]
print(json.dumps({{"source_mb": source.nbytes / 2**20, "parent_rss_mb": rss(os.getpid()),
                   "worker_uss_mb": [uss(p) for p in workers],
                   "worker_rss_mb": [rss(p) for p in workers]}}))
"""


def run(code):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--buffer", type=int, default=1000,
                        help="shuffle buffer size in 1 MB elements")
    parser.add_argument("--source-mb", type=int, default=400,
                        help="size of the in-memory source the process workers share")
    args = parser.parse_args()
    r = run(SHUFFLE.format(root=ROOT, n=args.buffer * 2, buf=args.buffer))
    buffer_mb = args.buffer * 1.0
    print(f"shuffle({args.buffer}) over 1 MB elements: peak RSS growth {r['growth_mb']:.0f} MB "
          f"for a {buffer_mb:.0f} MB buffer (overhead {r['growth_mb'] - buffer_mb:+.0f} MB, "
          f"{r['growth_mb'] / buffer_mb:.3f}x)")
    w = run(WORKERS.format(root=ROOT, mb=args.source_mb))
    print(f"process workers over a {w['source_mb']:.0f} MB in-memory source: parent RSS "
          f"{w['parent_rss_mb']:.0f} MB; worker private memory (USS) "
          f"{', '.join(f'{u:.0f}' for u in w['worker_uss_mb'])} MB; worker RSS "
          f"{', '.join(f'{u:.0f}' for u in w['worker_rss_mb'])} MB (shared pages counted)")


if __name__ == "__main__":
    main()

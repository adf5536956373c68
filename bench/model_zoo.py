"""The models people train today, tensorlite beside TensorFlow: MobileNetV2 (training at 96x96,
inference at 224x224), ResNet50 inference, a Transformer encoder block, the CIFAR CNN's
`fit` and an LSTM text classifier (bench/model_zoo_workers.py has the exact shapes).

Every (setting, workload, system) runs in its own process, interleaved round by round, so
load from neighbours hits both alike. Settings: 1 thread pinned to one core, 2 threads, and
--contended (default threads beside a process spinning on one core for the whole run).
For each it prints median milliseconds per step, the ratio tensorlite / TensorFlow (the
median of the per-round ratios; lower is better, goal <= 1.0) and the fraction of the
machine's measured float32 matrix-product peak each reaches (a NumPy sgemm on as many
threads, measured at the start).

    python bench/model_zoo.py [--rounds 3] [--steps 5] [--workloads a,b] [--settings 1,2]
    python bench/model_zoo.py --contended

TensorFlow runs from TL_BENCH_TF_PYTHON, else the repository's interop venv (.venv-tf, made
by tests/interop/setup_tf_venv.sh); without it the TensorFlow rows are skipped, saying so.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from model_zoo_workers import WORKLOADS  # noqa: E402 - beside this file

_PEAK = """
import time, numpy as np
a = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)
best = 0.0
for _ in range(7):
    t = time.perf_counter(); a @ a; best = max(best, 2 * 1024 ** 3 / (time.perf_counter() - t))
print(best)
"""
_SPIN = "import time\nend = time.time() + {s}\nwhile time.time() < end: pass"


def tf_python():
    """(the Python with TensorFlow, or None, and why not)."""
    candidates = [os.environ.get("TL_BENCH_TF_PYTHON"),
                  os.path.join(HERE, "..", ".venv-tf", "bin", "python")]
    for py in candidates:
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import tensorflow"], capture_output=True, check=False).returncode == 0:
            return py, None
    return None, ("no Python with TensorFlow: set TL_BENCH_TF_PYTHON or run "
                  "tests/interop/setup_tf_venv.sh .venv-tf")


def _env(threads):
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    if threads:
        for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[var] = str(threads)
    return env


def _pin(threads):
    """A preexec function pinning the child to `threads` cores (None: no pinning)."""
    if not threads or not hasattr(os, "sched_setaffinity"):
        return None
    cores = sorted(os.sched_getaffinity(0))[:threads]
    return lambda: os.sched_setaffinity(0, cores)


def peak_flops(threads):
    proc = subprocess.run([sys.executable, "-c", _PEAK], capture_output=True, text=True,
                          env=_env(threads or os.cpu_count()), preexec_fn=_pin(threads),
                          check=True)
    return float(proc.stdout)


def one_run(python, system, workload, threads, steps):
    proc = subprocess.run([python, os.path.join(HERE, "model_zoo_workers.py"), system,
                           workload, "--threads", str(threads), "--steps", str(steps)],
                          capture_output=True, text=True, env=_env(threads),
                          preexec_fn=_pin(threads), check=False)
    if proc.returncode != 0:
        print(f"  {system} {workload} failed: {proc.stderr.strip().splitlines()[-1:]}",
              flush=True)
        return None
    return json.loads(proc.stdout.strip().splitlines()[-1])


def compare(pythons, workloads, settings, rounds, steps):
    """{(setting, workload, system): [result, ...]} over interleaved rounds."""
    results = {}
    for r in range(rounds):
        for threads in settings:
            for workload in workloads:
                for system, py in pythons.items():
                    out = one_run(py, system, workload, threads, steps)
                    if out is not None:
                        results.setdefault((threads, workload, system), []).append(out)
                        print(f"  round {r + 1}: {system} {workload} threads="
                              f"{threads or 'default'}: {out['step_s'] * 1e3:.1f} ms",
                              flush=True)
    return results


def report(results, pythons, workloads, settings, peaks):
    for threads in settings:
        label = {0: "default threads", 1: "1 thread, pinned"}.get(threads, f"{threads} threads")
        print(f"\n{label} (sgemm peak {peaks[threads] / 1e9:.1f} GFLOP/s)")
        print(f"  {'workload':20s}" + "".join(f"{s + ' ms':>16s}{'% peak':>8s}"
                                             for s in pythons) + f"{'tl/tf':>8s}")
        for workload in workloads:
            line = f"  {workload:20s}"
            for system in pythons:
                runs = results.get((threads, workload, system))
                if not runs:
                    line += f"{'-':>16s}{'-':>8s}"
                    continue
                step = statistics.median(x["step_s"] for x in runs)
                line += f"{step * 1e3:16.1f}{100 * runs[0]['flops'] / step / peaks[threads]:7.0f}%"
            ours, theirs = (results.get((threads, workload, s)) for s in ("tensorlite",
                                                                          "tensorflow"))
            if ours and theirs:  # adjacent runs saw about the same load
                ratio = statistics.median(a["step_s"] / b["step_s"] for a, b in zip(ours, theirs))
                line += f"{ratio:8.2f}"
            print(line)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (medians)")
    parser.add_argument("--steps", type=int, default=5, help="steady steps timed per run")
    parser.add_argument("--workloads", default=",".join(WORKLOADS),
                        help="comma-separated, from: " + ", ".join(WORKLOADS))
    parser.add_argument("--settings", default="1,2",
                        help="thread counts to compare (1 is pinned to one core)")
    parser.add_argument("--contended", action="store_true",
                        help="default threads beside a process spinning on one core")
    parser.add_argument("--contend-seconds", type=float, default=1800,
                        help="the spinning process stops by itself after this long")
    args = parser.parse_args()
    workloads = args.workloads.split(",")
    unknown = sorted(set(workloads) - set(WORKLOADS))
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {sorted(WORKLOADS)}")
    pythons = {"tensorlite": sys.executable}
    tf_py, why = tf_python()
    if tf_py:
        pythons["tensorflow"] = tf_py
    else:
        print(f"skipping the TensorFlow rows: {why}")
    settings = [0] if args.contended else [int(s) for s in args.settings.split(",")]
    spinner = subprocess.Popen([sys.executable, "-c", _SPIN.format(s=args.contend_seconds)]) \
        if args.contended else None
    try:
        peaks = {t: peak_flops(t) for t in settings}
        start = time.perf_counter()
        results = compare(pythons, workloads, settings, args.rounds, args.steps)
        print(f"\nmedians of {args.rounds} interleaved rounds, {args.steps} steps each "
              f"({time.perf_counter() - start:.0f} s)" +
              ("; contended: a spinning process holds one core" if spinner else ""))
        report(results, pythons, workloads, settings, peaks)
    finally:
        if spinner is not None:
            spinner.kill()
            spinner.wait()


if __name__ == "__main__":
    main()

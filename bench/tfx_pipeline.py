"""Statistics and tf.Transform analysis of a large CSV on Apache Beam, 1 and 2 workers, beside
the same computations written directly in pandas (the single-machine floor).

    python bench/tfx_pipeline.py              # 1,000,000 rows
    python bench/tfx_pipeline.py --rows 100000 --repeats 1

The CSV (4 numeric and 2 string columns) is generated into a temporary directory and removed
afterwards. Each timing is the median of --repeats interleaved rounds (each round runs every
measurement once), after a warm-up round on a 1000-row CSV.
- empty pipeline: Beam's fixed cost of starting and stopping a pipeline (on 2 workers that
  includes starting two Python worker processes), the floor under every Beam timing;
- statistics: tfdv.generate_statistics_from_csv (counts, missing, mean/std/min/max/median,
  histograms, quantiles; top-k and unique counts of the strings) vs pandas reading the CSV
  and computing the same numbers (describe-like reductions, np.histogram, value_counts);
- analysis: tft_beam.AnalyzeDataset of a preprocessing_fn (z-scores, 0-1 scaling, 10-bucket
  quantiles, a vocabulary) writing its transform graph vs pandas computing the same
  analyzer results (mean/std, min/max, quantiles, value_counts).
Beam runs on the DirectRunner in-process (1 worker) and with
`--direct_num_workers=2 --direct_running_mode=multi_processing`; with --dask also on Beam's
DaskRunner over a local cluster of 2 worker processes started before the timings (a
standing cluster: its workers' start is not paid per pipeline).
Goal: within 2x of pandas on one worker and faster on two.
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import tensorlite as tf  # noqa: E402
import tensorlite.data_validation as tfdv  # noqa: E402
import tensorlite.transform as tft  # noqa: E402

NUMERIC = ["a", "b", "c", "d"]
SPEC = {**{k: tf.io.FixedLenFeature([], tf.float32) for k in NUMERIC},
        "s": tf.io.FixedLenFeature([], tf.string), "t": tf.io.FixedLenFeature([], tf.string)}
TWO = ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]


def write_csv(path, rows, seed=0):
    import pandas as pd  # noqa: PLC0415
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({k: rng.normal(i, 1 + i, rows).round(4) for i, k in enumerate(NUMERIC)})
    df["s"] = rng.choice([f"w{i}" for i in range(50)], rows)
    df["t"] = rng.choice([f"city_{i}" for i in range(1000)], rows)
    df.to_csv(path, index=False)


def preprocessing_fn(inputs):
    out = {}
    for k in NUMERIC:
        out[k + "_z"] = tft.scale_to_z_score(inputs[k])
        out[k + "_01"] = tft.scale_to_0_1(inputs[k])
        out[k + "_b"] = tft.bucketize(inputs[k], 10)
    out["s_id"] = tft.compute_and_apply_vocabulary(inputs["s"])
    out["t_id"] = tft.compute_and_apply_vocabulary(inputs["t"])
    return out


def pandas_statistics(path):
    import pandas as pd  # noqa: PLC0415
    df = pd.read_csv(path)
    out = {}
    for k in NUMERIC:
        v = df[k].dropna().to_numpy()
        out[k] = (len(v), df[k].isna().sum(), v.mean(), v.std(), v.min(), v.max(),
                  np.quantile(v, np.linspace(0, 1, 11)), np.histogram(v, 10),
                  np.count_nonzero(v == 0))
    for k in ("s", "t"):
        counts = df[k].value_counts()
        out[k] = (counts.head(20), len(counts), df[k].str.len().mean())
    return out


def pandas_analysis(path):
    import pandas as pd  # noqa: PLC0415
    df = pd.read_csv(path)
    out = {}
    for k in NUMERIC:
        v = df[k].to_numpy(np.float32)
        out[k] = (v.mean(), v.std(), v.min(), v.max(), np.quantile(v, np.arange(1, 10) / 10))
    for k in ("s", "t"):
        out[k] = df[k].value_counts().index.tolist()
    return out


def beam_analysis(path, tmp, flags):
    import tensorlite.transform.beam as tft_beam  # noqa: PLC0415 - needs the tfx extra
    import apache_beam as beam  # noqa: PLC0415
    from apache_beam.options.pipeline_options import PipelineOptions  # noqa: PLC0415
    out = tempfile.mkdtemp(dir=tmp)
    with tft_beam.Context(temp_dir=out), beam.Pipeline(options=PipelineOptions(flags)) as p:
        dataset = tft_beam.ReadCsvBatches(p, path, SPEC)
        _ = dataset | tft_beam.AnalyzeDataset(preprocessing_fn) | \
            tft_beam.WriteTransformFn(os.path.join(out, "out"))


def empty_pipeline(flags):
    """Beam's fixed cost: starting and stopping a pipeline that reads nothing."""
    import apache_beam as beam  # noqa: PLC0415
    from apache_beam.options.pipeline_options import PipelineOptions  # noqa: PLC0415
    with beam.Pipeline(options=PipelineOptions(flags)) as p:
        _ = p | beam.Create([0]) | beam.Map(abs)


def measurements(path, tmp, dask=None):
    """(name, pandas, Beam on 1 worker, Beam on 2 workers[, Beam on the Dask cluster]) of
    the CSV at path; `dask` is the DaskRunner's flags."""
    rows = [
        ("empty pipeline", lambda: None, lambda: empty_pipeline([]),
         lambda: empty_pipeline(TWO)),
        ("statistics", lambda: pandas_statistics(path),
         lambda: tfdv.generate_statistics_from_csv(path),
         lambda: tfdv.generate_statistics_from_csv(path, pipeline_options=TWO)),
        ("transform analysis", lambda: pandas_analysis(path),
         lambda: beam_analysis(path, tmp, []), lambda: beam_analysis(path, tmp, TWO))]
    if dask:
        extra = [lambda: empty_pipeline(dask),
                 lambda: tfdv.generate_statistics_from_csv(path, pipeline_options=dask),
                 lambda: beam_analysis(path, tmp, dask)]
        rows = [(*row, fn) for row, fn in zip(rows, extra)]
    return rows


def dask_cluster():
    """A local Dask cluster of 2 single-threaded worker processes, started before the
    timings (as a standing cluster is), and the DaskRunner flags that use it."""
    import distributed  # noqa: PLC0415 - Beam's Dask runner's dependency (tfx extra)
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    return cluster, ["--runner=apache_beam.runners.dask.dask_runner.DaskRunner",
                     f"--dask_client_address={cluster.scheduler_address}"]


def interleaved(rows, repeats):
    """{name: [median seconds of each column]}: every round runs every measurement once,
    so a load that comes and goes on the machine falls on all of them alike."""
    times = {name: [[] for _ in fns] for name, *fns in rows}
    for _ in range(repeats):
        for name, *fns in rows:
            for i, fn in enumerate(fns):
                start = time.perf_counter()
                fn()
                times[name][i].append(time.perf_counter() - start)
    return {name: [statistics.median(t) for t in columns] for name, columns in times.items()}


def report(medians):
    """Prints the medians and their ratios."""
    dask = len(next(iter(medians.values()))) == 4
    print(f"{'':20s} {'pandas':>8s} {'beam x1':>8s} {'beam x2':>8s}"
          + (f" {'dask x2':>8s}" if dask else "")
          + f" {'x1/pd':>6s} {'x2/pd':>6s} {'x2/x1':>6s}" + (f" {'dask/x1':>7s}" if dask else ""))
    for name, (t_pd, t1, t2, *td) in medians.items():
        ratios = (f"{t1 / t_pd:5.2f}x {t2 / t_pd:5.2f}x" if t_pd > 1e-3
                  else f"{'':6s} {'':6s}")
        print(f"{name:20s} {t_pd:7.2f}s {t1:7.2f}s {t2:7.2f}s"
              + "".join(f" {t:7.2f}s" for t in td) + f" {ratios} {t2 / t1:5.2f}x"
              + "".join(f" {t / t1:6.2f}x" for t in td))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=1_000_000, help="CSV rows (1M)")
    parser.add_argument("--repeats", type=int, default=3, help="interleaved rounds")
    parser.add_argument("--dask", action="store_true",
                        help="also Beam's DaskRunner on a local 2-worker Dask cluster")
    args = parser.parse_args(argv)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
         os.environ.get("PYTHONPATH", "")])  # the multi_processing workers import this file
    tmp = tempfile.mkdtemp(prefix="tfx_bench_")
    cluster, dask = dask_cluster() if args.dask else (None, None)
    try:
        path, small = os.path.join(tmp, "data.csv"), os.path.join(tmp, "small.csv")
        write_csv(path, args.rows)
        write_csv(small, 1000)
        print(f"{args.rows} rows, {os.path.getsize(path) / 1e6:.0f} MB CSV; "
              f"median of {args.repeats} interleaved rounds")
        interleaved(measurements(small, tmp, dask), 1)  # warm-up: imports, first pipelines
        medians = interleaved(measurements(path, tmp, dask), args.repeats)
        report(medians)
    finally:
        if cluster is not None:
            cluster.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The same TFX pipelines give the same results however Beam runs them: the DirectRunner with
one worker, with two worker processes (`direct_num_workers=2`,
`direct_running_mode=multi_processing`), and Beam's DaskRunner on a local Dask cluster
(slow). Statistics, analyzer results and sliced metrics are compared exactly."""
import os

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
beam = pytest.importorskip("apache_beam")

import tensorlite as tf  # noqa: E402
import tensorlite.data_validation as tfdv  # noqa: E402
import tensorlite.model_analysis as tfma  # noqa: E402
import tensorlite.transform as tft  # noqa: E402
import tensorlite.transform.beam as tft_beam  # noqa: E402
from tensorlite.data_validation import batches  # noqa: E402
from apache_beam.options.pipeline_options import PipelineOptions  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TWO_WORKERS = ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]
SPEC = {"x": tf.io.FixedLenFeature([], tf.float32), "city": tf.io.FixedLenFeature([], tf.string),
        "label": tf.io.FixedLenFeature([], tf.int64)}


@pytest.fixture(autouse=True)
def _workers_import_this_repo(monkeypatch):
    """Worker processes unpickle this module's functions by reference."""
    monkeypatch.setenv("PYTHONPATH", ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setattr(batches, "RANGE_BYTES", 20_000)  # several ranges to share out


@pytest.fixture(scope="module")
def csv_path(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 6000
    df = pd.DataFrame({"x": rng.normal(3, 2, n).round(4), "city": rng.choice(
        ["NYC", "SF", "LA", "Boston"], n, p=[0.4, 0.3, 0.2, 0.1]),
        "label": rng.integers(0, 2, n)})
    path = tmp_path_factory.mktemp("data") / "data.csv"
    df.to_csv(path, index=False)
    return str(path)


def preprocessing_fn(inputs):
    return {"x_z": tft.scale_to_z_score(inputs["x"]), "x_b": tft.bucketize(inputs["x"], 5),
            "city_id": tft.compute_and_apply_vocabulary(inputs["city"], vocab_filename="city"),
            "x_01": tft.scale_to_0_1(inputs["x"])}


def _analyze(csv_path, out_dir, flags):
    with tft_beam.Context(temp_dir=str(out_dir)), \
            beam.Pipeline(options=PipelineOptions(flags)) as p:
        dataset = tft_beam.ReadCsvBatches(p, csv_path, SPEC)
        transform_fn = dataset | tft_beam.AnalyzeDataset(preprocessing_fn)
        _ = transform_fn | tft_beam.WriteTransformFn(str(out_dir / "out"))
    output = tft.TFTransformOutput(str(out_dir / "out"))
    probe = {"x": tf.constant(np.linspace(-5, 11, 97), tf.float32),
             "city": tf.constant(["NYC", "SF", "LA", "Boston", "Paris"] * 19 + ["SF", "LA"]),
             "label": tf.zeros([97], tf.int64)}
    values = {k: v.numpy() for k, v in output.transform_features_layer()(probe).items()}
    return output.vocabulary_by_name("city"), values


def _model(tmp_path):
    class Scorer(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x")])
        def serve(self, x):
            return {"p": tf.sigmoid(x - 3.0)}
    module = Scorer()
    tf.saved_model.save(module, str(tmp_path / "m"), signatures={"serving_default": module.serve})
    return tfma.default_eval_shared_model(str(tmp_path / "m"))


def _evaluate(csv_path, model, flags):
    config = tfma.EvalConfig(
        slicing_specs=[tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=["city"])],
        metrics_specs=[tfma.MetricsSpec([tfma.MetricConfig("AUC"),
                                         tfma.MetricConfig("MeanPrediction")])],
        options=tfma.Options(compute_confidence_intervals=True, num_bootstrap_samples=20))
    result = tfma.run_model_analysis(model, config, csv_path, file_format="csv",
                                     pipeline_options=flags, random_seed_for_testing=3)
    return {repr(k): m for k, m in result.slicing_metrics}


def test_statistics_same_on_one_and_two_workers(csv_path):
    one = tfdv.generate_statistics_from_csv(csv_path)
    two = tfdv.generate_statistics_from_csv(csv_path, pipeline_options=TWO_WORKERS)
    assert one.datasets[0].num_examples == 6000
    assert one == two


def test_analyzers_same_on_one_and_two_workers(csv_path, tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    vocab1, values1 = _analyze(csv_path, tmp_path / "a", [])
    vocab2, values2 = _analyze(csv_path, tmp_path / "b", TWO_WORKERS)
    assert vocab1 == vocab2 == [b"NYC", b"SF", b"LA", b"Boston"]
    for name in values1:
        np.testing.assert_array_equal(values1[name], values2[name], err_msg=name)


def test_sliced_metrics_same_on_one_and_two_workers(csv_path, tmp_path):
    model = _model(tmp_path)
    assert _evaluate(csv_path, model, []) == _evaluate(csv_path, model, TWO_WORKERS)


@pytest.fixture
def dask_cluster():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                       host="127.0.0.1", dashboard_address=None)
    try:
        yield ["--runner=apache_beam.runners.dask.dask_runner.DaskRunner",
               f"--dask_client_address={cluster.scheduler_address}"]
    finally:
        cluster.close()


@pytest.mark.slow
def test_statistics_and_metrics_same_on_dask(csv_path, tmp_path, dask_cluster):
    assert tfdv.generate_statistics_from_csv(csv_path, pipeline_options=dask_cluster) == \
        tfdv.generate_statistics_from_csv(csv_path)
    model = _model(tmp_path)
    assert _evaluate(csv_path, model, dask_cluster) == _evaluate(csv_path, model, [])


@pytest.mark.slow
def test_analyzers_same_on_dask(csv_path, tmp_path, dask_cluster):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    vocab1, values1 = _analyze(csv_path, tmp_path / "a", [])
    vocab2, values2 = _analyze(csv_path, tmp_path / "b", dask_cluster)
    assert vocab1 == vocab2
    for name in values1:
        np.testing.assert_array_equal(values1[name], values2[name], err_msg=name)


def _die_once(batch, marker):
    """Kills this Dask worker process the first time it sees a batch (marker file unset)."""
    if not os.path.exists(marker):
        with open(marker, "w"):
            pass
        os._exit(1)
    return batch


@pytest.mark.slow
def test_a_killed_dask_worker_does_not_change_the_statistics(csv_path, tmp_path,
                                                            dask_cluster):
    """Dask reschedules the lost worker's tasks (its nanny restarts the process); the
    statistics equal those of an undisturbed run. (The DirectRunner does not retry: a dead
    multi_processing worker fails its pipeline with 'Channel closed prematurely'.)"""
    from tensorlite.data_validation import beam_util, stats_api
    from tensorlite.data_validation.stats_combiner import StatsCombineFn
    marker = str(tmp_path / "killed")
    result = beam_util.ResultFile()
    with beam_util.make_pipeline(dask_cluster) as p:
        _ = (stats_api.csv_batches(p, csv_path) | beam.Map(_die_once, marker)
             | beam.CombineGlobally(StatsCombineFn()) | beam.Map(result.write))
    assert os.path.exists(marker)  # a worker did die
    assert result.read() == tfdv.generate_statistics_from_csv(csv_path)


def _reader_pid(batch, folder):
    """Notes which process read a batch (a file named after its PID)."""
    open(os.path.join(folder, str(os.getpid())), "w").close()
    return batch


@pytest.mark.slow
def test_dask_workers_read_their_own_csv_ranges(csv_path, tmp_path, dask_cluster):
    """On the DaskRunner the CSV byte ranges are spread over Dask partitions, so both
    workers read ranges themselves (Beam's Dask Create would put them all in one
    partition, read by one worker); the rows are all read once."""
    from tensorlite.data_validation import beam_util, stats_api
    folder = tmp_path / "pids"
    folder.mkdir()
    with beam_util.ResultFile() as result:
        with beam_util.pipeline(dask_cluster) as p:
            _ = (stats_api.csv_batches(p, csv_path) | beam.Map(_reader_pid, str(folder))
                 | beam.Map(lambda b: sum(len(c.lengths) for c in b.values()))
                 | beam.CombineGlobally(sum) | beam.Map(result.write))
        assert result.read() == 6000 * 3
    assert len(os.listdir(folder)) == 2

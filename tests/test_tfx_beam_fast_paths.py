"""The shortcuts that make the TFX pipelines fast give the same results as the plain way:
statistics accumulated from pandas' columns equal those of Column batches, record batches
round-trip through their Beam coder (whose size estimate does not encode them), and CSV
strings reach the preprocessing_fn as the UTF-8 bytes TensorFlow uses."""
import io
import os
import shutil

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
beam = pytest.importorskip("apache_beam")

import tensorlite as tf  # noqa: E402
from tensorlite.data_validation import batches, beam_util  # noqa: E402
from tensorlite.data_validation.record_batch import RecordBatch, RecordBatchCoder  # noqa: E402
from tensorlite.data_validation.stats_combiner import (StatsOptions, accumulate_batch,  # noqa: E402
                                                      accumulate_dataframe, build_statistics)

CSV = "a,b,c,d,e\n1,2.5,x,True,\n,3.5,,False,7\n3,,héllo,True,8\n4,1e3,x,,9\n"


@pytest.mark.parametrize("frame", [
    lambda: pd.read_csv(io.StringIO(CSV), dtype_backend="numpy_nullable"),
    lambda: pd.read_csv(io.StringIO(CSV)),
    lambda: pd.DataFrame({"mixed": [1, "x", None, 2.5], "raw": [b"q", b"r", None, b"q"],
                          "cat": pd.Categorical(["u", "v", "u", None])})],
    ids=["csv-nullable", "csv-numpy", "python-objects"])
def test_statistics_from_columns_equal_statistics_from_batches(frame):
    df, options = frame(), StatsOptions()
    fast = build_statistics(accumulate_dataframe(df, options), options)
    plain = build_statistics(accumulate_batch(batches.batch_from_dataframe(df), options),
                             options)
    assert fast == plain
    assert fast.datasets[0].num_examples == 4


def test_record_batch_coder_round_trips_and_estimates_without_encoding(monkeypatch):
    batch = RecordBatch(x=np.arange(5, dtype=np.float32),
                        s=np.array([b"a", b"bb", b"", b"c", b"d"], dtype=object))
    coder = beam.coders.registry.get_coder(RecordBatch)
    assert isinstance(coder, RecordBatchCoder)
    back = coder.decode(coder.encode(batch))
    assert isinstance(back, RecordBatch) and back.keys() == batch.keys()
    np.testing.assert_array_equal(back["x"], batch["x"])
    assert back["s"].tolist() == batch["s"].tolist()
    monkeypatch.setattr(RecordBatchCoder, "encode", None)  # an estimate that encoded fails
    assert coder.get_impl().estimate_size(batch) == 5 * 4 + 5 * 24


def test_csv_strings_become_utf8_bytes_kept_as_text():
    df = pd.read_csv(io.StringIO("z,s\n007,héllo\n010,x\x00y\n"), dtype=str,
                     dtype_backend="numpy_nullable")
    assert batches.utf8_bytes(df["z"]).tolist() == [b"007", b"010"]
    assert batches.utf8_bytes(df["s"]).tolist() == ["héllo".encode(), b"x\x00y"]
    assert batches.utf8_bytes(pd.Series(["a", "b"], dtype=object)).tolist() == [b"a", b"b"]


@pytest.fixture
def unrun_pipelines():
    """Builds pipelines that the test never runs, and removes the temporary directory each
    beam.Pipeline made (Beam removes it only when the pipeline runs)."""
    made = []

    def build(make, flags):
        made.append(make(flags))
        return made[-1]
    yield build
    for p in made:
        shutil.rmtree(p.local_tempdir, ignore_errors=True)


def test_own_pipelines_skip_the_prism_attempt_unless_a_runner_is_named(unrun_pipelines):
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    assert isinstance(unrun_pipelines(beam_util.make_pipeline, []).runner,
                      fn_runner.FnApiRunner)
    named = unrun_pipelines(beam_util.make_pipeline, ["--runner=DirectRunner"]).runner
    assert not isinstance(named, fn_runner.FnApiRunner)


def test_transform_graph_input_of_bytes_is_not_copied():
    from tensorlite.transform import graph
    values = np.array([b"a", b"b"], dtype=object)
    spec = {"s": tf.io.FixedLenFeature([], tf.string)}
    assert graph.to_tensors({"s": values}, spec)["s"].numpy() is values
    mixed = graph.to_tensors({"s": np.array(["a", b"b"], dtype=object)}, spec)["s"]
    assert mixed.numpy().tolist() == [b"a", b"b"]  # str values still become bytes


def test_work_items_are_reshuffled_only_where_several_workers_share_them(unrun_pipelines):
    from apache_beam.options.pipeline_options import PipelineOptions
    make = beam_util.make_pipeline
    assert not beam_util.several_workers(unrun_pipelines(make, []))
    assert not beam_util.several_workers(unrun_pipelines(
        lambda flags: beam.Pipeline(options=PipelineOptions(flags)), []))
    for flags in (["--direct_num_workers=2", "--direct_running_mode=multi_processing"],
                  ["--direct_num_workers=2", "--direct_running_mode=multi_threading"],
                  ["--runner=apache_beam.runners.dask.dask_runner.DaskRunner"]):
        assert beam_util.several_workers(unrun_pipelines(make, flags)), flags


def test_a_pipeline_that_fails_to_build_leaves_no_temporary_directory(tmp_path):
    """beam_util.pipeline removes the directory its beam.Pipeline made even when building
    the pipeline raises (here: a CSV file that does not exist)."""
    import tensorlite.data_validation as tfdv
    made = []
    real = beam_util.make_pipeline

    def spy(options=None):
        made.append(real(options))
        return made[-1]
    results = []
    real_file = beam_util.ResultFile

    def spy_file():
        results.append(real_file())
        return results[-1]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(beam_util, "make_pipeline", spy)
        mp.setattr(beam_util, "ResultFile", spy_file)
        with pytest.raises(tf.errors.NotFoundError):
            tfdv.generate_statistics_from_csv(str(tmp_path / "missing.csv"))
        tfdv.generate_statistics_from_csv(_small_csv(tmp_path))
    assert len(made) == 2 and os.path.isdir(os.path.dirname(made[0].local_tempdir))
    assert not any(os.path.exists(p.local_tempdir) for p in made)
    assert len(results) == 2  # nor the result file the failed pipeline never wrote
    assert not any(os.path.exists(r.path) for r in results)


def _small_csv(tmp_path):
    path = tmp_path / "small.csv"
    path.write_text(CSV)
    return str(path)


def test_csv_ranges_keep_pandas_nullable_types(tmp_path):
    """The range reader parses with pandas' fast default types and parses again only the
    columns those may have changed (integers or booleans with a gap): the statistics are
    those of the nullable parse."""
    path = tmp_path / "t.csv"
    path.write_text(CSV)
    names = batches.csv_header(str(path))
    df = batches.read_csv_frame((str(path), 0, path.stat().st_size), names)
    assert df["a"].dtype == "Int64" and df["d"].dtype == "boolean"
    assert df["e"].dtype == "Int64" and df["b"].dtype.kind == "f"
    options = StatsOptions()
    nullable = pd.read_csv(io.StringIO(CSV), dtype_backend="numpy_nullable")
    assert build_statistics(accumulate_dataframe(df, options), options) == \
        build_statistics(accumulate_dataframe(nullable, options), options)


def test_statistics_do_not_depend_on_how_batches_are_merged():
    """Mean and variance merge the batches' moments in sorted order and order statistics
    are selected by partition, so any grouping and order of the merges gives the same."""
    from tensorlite.data_validation.stats_combiner import StatsCombineFn
    rng = np.random.default_rng(1)
    frames = [pd.DataFrame({"x": rng.normal(3, 1e4, n), "i": rng.integers(-9, 9, n)})
              for n in (5, 700, 31, 2000, 1)]
    fn, options = StatsCombineFn(), StatsOptions()
    accs = [accumulate_dataframe(df, options) for df in frames]
    results = []
    for order in ([0, 1, 2, 3, 4], [4, 3, 2, 1, 0], [2, 0, 4, 1, 3]):
        left = fn.merge_accumulators([accs[order[0]], accs[order[1]]])
        right = fn.merge_accumulators([accs[k] for k in order[2:]])
        results.append(fn.extract_output(fn.merge_accumulators([left, right])))
    assert results[0] == results[1] == results[2]
    x = np.concatenate([df["x"].to_numpy() for df in frames])
    num = results[0].datasets[0].features[1].num_stats
    assert num.median == np.sort(x)[(len(x) - 1) // 2] and num.min == x.min()
    np.testing.assert_allclose([num.mean, num.std_dev], [x.mean(), x.std()], rtol=1e-12)

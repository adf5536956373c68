"""The shortcuts that make the TFX pipelines fast give the same results as the plain way:
statistics accumulated from pandas' columns equal those of Column batches, record batches
round-trip through their Beam coder (whose size estimate does not encode them), and CSV
strings reach the preprocessing_fn as the UTF-8 bytes TensorFlow uses."""
import io

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


def test_own_pipelines_skip_the_prism_attempt_unless_a_runner_is_named():
    from apache_beam.runners.portability.fn_api_runner import fn_runner
    assert isinstance(beam_util.make_pipeline([]).runner, fn_runner.FnApiRunner)
    named = beam_util.make_pipeline(["--runner=DirectRunner"]).runner
    assert not isinstance(named, fn_runner.FnApiRunner)


def test_transform_graph_input_of_bytes_is_not_copied():
    from tensorlite.transform import graph
    values = np.array([b"a", b"b"], dtype=object)
    spec = {"s": tf.io.FixedLenFeature([], tf.string)}
    assert graph.to_tensors({"s": values}, spec)["s"].numpy() is values
    mixed = graph.to_tensors({"s": np.array(["a", b"b"], dtype=object)}, spec)["s"]
    assert mixed.numpy().tolist() == [b"a", b"b"]  # str values still become bytes


def test_work_items_are_reshuffled_only_where_several_workers_share_them():
    from apache_beam.options.pipeline_options import PipelineOptions
    assert not beam_util.several_workers(beam_util.make_pipeline([]))
    assert not beam_util.several_workers(beam.Pipeline(options=PipelineOptions([])))
    for flags in (["--direct_num_workers=2", "--direct_running_mode=multi_processing"],
                  ["--direct_num_workers=2", "--direct_running_mode=multi_threading"],
                  ["--runner=apache_beam.runners.dask.dask_runner.DaskRunner"]):
        assert beam_util.several_workers(beam_util.make_pipeline(flags)), flags

"""tfdv.generate_statistics_from_csv / _from_tfrecord / _from_dataframe as Beam pipelines:
read record batches (in parallel byte ranges or files), combine them into statistics, and
write the DatasetFeatureStatisticsList where TFDV does (`output_path`, a TFRecord file).

Example:
    >>> stats = tfdv.generate_statistics_from_csv("data/train.csv")  # doctest: +SKIP
    >>> stats.datasets[0].num_examples  # doctest: +SKIP
    1000
"""
from tensorlite.data_validation import batches, beam_util
from tensorlite.data_validation.stats_combiner import (StatsCombineFn, StatsOptions,
                                                      accumulate_batch, accumulate_dataframe)
from tensorlite.data_validation.stats_io import write_stats_tfrecord


def _run(make_batches, stats_options, pipeline_options, output_path):
    """make_batches(pipeline, then) is the reading chain whose last step applies `then` to
    what it reads (batches, or DataFrames: `then.frames`), so that a batch becomes an
    accumulator in the step that read it:
    Beam encodes the first elements of every PCollection to estimate their size, and a
    batch's strings cost far more to pickle than its accumulator."""
    beam = beam_util.import_beam()
    options = stats_options or StatsOptions()
    combine_fn = StatsCombineFn(options, inputs_are_accumulators=True)
    with beam_util.ResultFile() as result:
        with beam_util.pipeline(pipeline_options) as p:
            _ = (make_batches(p, _Accumulate(options))
                 # without Beam's default-value branch (a side input and a stage more per
                 # pipeline); no input at all gives the empty accumulator's statistics
                 | "Statistics" >> beam.CombineGlobally(combine_fn).without_defaults()
                 | "Collect" >> beam.Map(result.write))
        stats = result.read(default=lambda: combine_fn.extract_output(
            combine_fn.create_accumulator()))
    if output_path:
        write_stats_tfrecord(stats, output_path)
    return stats


class _Keep:
    """The `then` that keeps the batches (DataFrames become Column batches)."""

    def __call__(self, batch_list):
        return batch_list

    def frames(self, frames):
        return [batches.batch_from_dataframe(df) for df in frames]


class _Accumulate:
    """Batches or DataFrames -> their accumulators (a picklable `then` for the readers)."""

    def __init__(self, options):
        self._options = options

    def __call__(self, batch_list):
        return [accumulate_batch(batch, self._options) for batch in batch_list]

    def frames(self, frames):
        return [accumulate_dataframe(df, self._options) for df in frames]


_KEEP = _Keep()


def _read_csv(rng, names, delimiter, then):
    df = batches.read_csv_frame(rng, names, delimiter)
    return then.frames([] if df is None else [df])


def _read_tfrecord(path, compression_type, then):
    return then(batches.read_tfrecord_file(path, compression_type))


def csv_batches(pipeline, data_location, column_names=None, delimiter=",", then=_KEEP):
    """The PTransform chain reading CSV files as batches (first line = header unless
    column_names is given, as TFDV); `then` maps each range's list of batches."""
    beam = beam_util.import_beam()
    paths = beam_util.expand_pattern(data_location)
    names = list(column_names) if column_names else batches.csv_header(paths[0], delimiter)
    ranges = batches.csv_ranges(paths)
    if column_names:  # no header line: a range starting at 0 keeps its first line
        ranges = [(path, -1 if start == 0 else start, end) for path, start, end in ranges]
    return (beam_util.work_items(pipeline, "CsvRanges", ranges)
            | "ReadCsv" >> beam.FlatMap(_read_csv, names, delimiter, then))


def tfrecord_batches(pipeline, data_location, compression_type=None, then=_KEEP):
    """The PTransform chain reading TFRecord files of tf.train.Example as batches."""
    beam = beam_util.import_beam()
    paths = beam_util.expand_pattern(data_location)
    return (beam_util.work_items(pipeline, "TFRecordFiles", paths)
            | "ReadTFRecord" >> beam.FlatMap(_read_tfrecord, compression_type, then))


def _dataframe_batch(chunk, then):
    return then.frames([chunk])


def dataframe_batches(pipeline, dataframe, then=_KEEP):
    """The PTransform chain of a DataFrame's chunks as batches."""
    beam = beam_util.import_beam()
    return (beam_util.work_items(pipeline, "Chunks", batches.dataframe_chunks(dataframe))
            | "ToBatches" >> beam.FlatMap(_dataframe_batch, then))


def generate_statistics_from_csv(data_location, column_names=None, delimiter=",",
                                 output_path=None, stats_options=None, pipeline_options=None,
                                 compression_type=None):
    """Statistics of CSV files (a path or glob pattern), as TFDV computes them."""
    if compression_type not in (None, "", "AUTO", "UNCOMPRESSED"):
        raise NotImplementedError(
            f"generate_statistics_from_csv: compressed CSV ({compression_type}) is not "
            "supported by tensorlite; decompress the files first")
    return _run(lambda p, then: csv_batches(p, data_location, column_names, delimiter, then),
                stats_options, pipeline_options, output_path)


def generate_statistics_from_tfrecord(data_location, output_path=None, stats_options=None,
                                      pipeline_options=None, compression_type=None):
    """Statistics of TFRecord files of tf.train.Example."""
    return _run(lambda p, then: tfrecord_batches(p, data_location, compression_type, then),
                stats_options, pipeline_options, output_path)


def generate_statistics_from_dataframe(dataframe, stats_options=None, n_jobs=1,
                                       pipeline_options=None):
    """Statistics of a pandas DataFrame (`n_jobs` > 1 runs that many Beam workers)."""
    if pipeline_options is None and n_jobs and n_jobs > 1:
        pipeline_options = [f"--direct_num_workers={n_jobs}",
                            "--direct_running_mode=multi_processing"]
    return _run(lambda p, then: dataframe_batches(p, dataframe, then), stats_options, pipeline_options,
                None)


__all__ = ["generate_statistics_from_csv", "generate_statistics_from_tfrecord",
           "generate_statistics_from_dataframe", "StatsOptions"]

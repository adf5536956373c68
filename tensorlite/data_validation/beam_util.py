"""Running tensorlite's TFX pipelines on Apache Beam: the pipeline (the DirectRunner's local
batch engine unless the options name a runner), file patterns, and getting a single result back to the caller
through a file (the runner's workers may be other processes or machines).
"""
import contextlib
import glob
import os
import pickle
import shutil
import tempfile

from tensorlite.framework import errors


def import_beam():
    """apache_beam, or an ImportError that says how to install it."""
    try:
        import apache_beam as beam  # noqa: PLC0415 - Beam is the optional `tfx` extra
    except ImportError as e:
        raise ImportError("tensorlite's data_validation / transform / model_analysis "
                          "pipelines run on Apache Beam: pip install 'tensorlite[tfx]'") from e
    return beam


def make_pipeline(pipeline_options=None):
    """A beam.Pipeline; `pipeline_options` is a PipelineOptions, a dict or a list of flags
    (e.g. ['--direct_num_workers=2', '--direct_running_mode=multi_processing'])."""
    beam = import_beam()
    from apache_beam.options.pipeline_options import PipelineOptions  # noqa: PLC0415
    if pipeline_options is None:
        pipeline_options = PipelineOptions([])
    elif isinstance(pipeline_options, dict):
        pipeline_options = PipelineOptions(**pipeline_options)
    elif isinstance(pipeline_options, (list, tuple)):
        pipeline_options = PipelineOptions(list(pipeline_options))
    return beam.Pipeline(runner=_default_runner(pipeline_options), options=pipeline_options)


@contextlib.contextmanager
def pipeline(pipeline_options=None):
    """`with pipeline(options) as p:` builds the pipeline `p` and runs it on leaving, as
    `with beam.Pipeline(...)` does, and removes the local temporary directory that
    beam.Pipeline made (`p.local_tempdir`, /tmp/beam-pipeline-temp*) also when the
    pipeline never runs: Beam removes it only at the end of `run()`, so a pipeline whose
    construction raised (a missing file, bad input) would leave it behind."""
    p = make_pipeline(pipeline_options)
    try:
        with p:
            yield p
    finally:
        shutil.rmtree(p.local_tempdir, ignore_errors=True)


def _default_runner(options):
    """Beam's FnApiRunner where the options name no runner, else None (Beam picks it).

    Beam's DirectRunner first tries the Prism runner, a Go binary it downloads from GitHub,
    and falls back to the FnApiRunner for batch pipelines; the attempt costs ~0.3 s a
    pipeline offline (and a download online). These pipelines are batch, so they go to
    the FnApiRunner directly, with the options passed to its workers as the DirectRunner
    passes them (`direct_num_workers`, `direct_running_mode` keep their meaning)."""
    from apache_beam.options.pipeline_options import StandardOptions  # noqa: PLC0415
    standard = options.view_as(StandardOptions)
    if standard.runner is not None or standard.streaming:
        return None
    from apache_beam.portability.api import beam_provision_api_pb2  # noqa: PLC0415
    from apache_beam.runners.portability.fn_api_runner import fn_runner  # noqa: PLC0415
    from apache_beam.runners.portability.portable_runner import \
        JobServiceHandle  # noqa: PLC0415
    encoded = JobServiceHandle.encode_pipeline_options(options.get_all_options())
    return fn_runner.FnApiRunner(provision_info=fn_runner.ExtendedProvisionInfo(
        beam_provision_api_pb2.ProvisionInfo(pipeline_options=encoded)))


def several_workers(pipeline):
    """Whether the pipeline's runner may spread elements over several workers, so that a
    Create of work items (file ranges) should reshuffle them to share them out. False only
    for the local runners with one in-process worker, where the reshuffle's extra stage
    (~0.1 s) buys nothing."""
    from apache_beam.options.pipeline_options import DirectOptions  # noqa: PLC0415
    from apache_beam.runners.direct.direct_runner import DirectRunner  # noqa: PLC0415
    from apache_beam.runners.portability.fn_api_runner import fn_runner  # noqa: PLC0415
    if not isinstance(pipeline.runner, (DirectRunner, fn_runner.FnApiRunner)):
        return True
    direct = pipeline.options.view_as(DirectOptions)
    return direct.direct_running_mode != "in_memory" or direct.direct_num_workers != 1


DASK_PARTITIONS = 32


def work_items(pipeline, label, items):
    """The PCollection of work items (CSV byte ranges, files, DataFrame chunks), created so
    that each worker reads its own share: a Reshuffle where several workers may run them;
    on Beam's DaskRunner, whose Create puts up to 128 items into one Dask partition (one
    task, so one worker reads every range), one Create per share of the items (up to
    DASK_PARTITIONS), flattened, unless the options set `--dask_npartitions` or
    `--dask_partition_size`."""
    beam = import_beam()
    if not _dask_partitions_unset(pipeline):
        return pipeline | label >> beam.Create(items, reshuffle=several_workers(pipeline))
    parts = max(1, min(len(items), DASK_PARTITIONS))
    shares = [pipeline | f"{label}{k}" >> beam.Create(items[k::parts], reshuffle=False)
              for k in range(parts)]
    return shares | label >> beam.Flatten()


def _dask_partitions_unset(pipeline):
    """Whether the pipeline runs on Beam's DaskRunner with its default partitioning."""
    if type(pipeline.runner).__name__ != "DaskRunner":
        return False
    from apache_beam.runners.dask.dask_runner import DaskOptions  # noqa: PLC0415
    dask = pipeline.options.view_as(DaskOptions)
    return dask.npartitions is None and dask.partition_size is None


def expand_pattern(data_location):
    """The files a path or glob pattern (or a list of them) names; NotFoundError if none."""
    patterns = [data_location] if isinstance(data_location, (str, os.PathLike)) \
        else list(data_location)
    paths = []
    for pattern in patterns:
        pattern = os.fspath(pattern)
        paths += sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
    paths = [p for p in paths if os.path.isfile(p)]
    if not paths:
        raise errors.NotFoundError(None, None, f"no file matches {data_location!r}")
    return paths


class ResultFile:
    """A temporary file the pipeline's last step writes its one result into (pickled).
    As a context manager it removes the file (and a partial write) on leaving, also when
    the pipeline failed before its result was read."""

    def __init__(self):
        fd, self.path = tempfile.mkstemp(prefix="tensorlite_beam_", suffix=".pkl")
        os.close(fd)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for path in (self.path, self.path + ".part"):
            with contextlib.suppress(FileNotFoundError):
                os.remove(path)
        return False

    def write(self, value):
        """The pipeline step: writes the value (atomically) and passes it on."""
        tmp = self.path + ".part"
        with open(tmp, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, self.path)
        return value

    def read(self, default=None):
        """The value the pipeline wrote; removes the file. `default()` is the value where
        it wrote none (a combine without defaults over no input), else InternalError."""
        try:
            with open(self.path, "rb") as f:
                return pickle.load(f)
        except EOFError as e:
            if default is not None:
                return default()
            raise errors.InternalError(None, None, "the Beam pipeline finished without "
                                       "writing its result") from e
        finally:
            os.remove(self.path)

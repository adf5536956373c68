"""tf.Transform's Beam API (`import tensorlite.transform.beam as tft_beam`): the full pass
over the data that computes a preprocessing_fn's analyzers (`AnalyzeDataset`), the transform
of the data by the resulting transform graph (`TransformDataset`), both at once
(`AnalyzeAndTransformDataset`), and `WriteTransformFn`.

A dataset is `(data, DatasetMetadata)`; data is a PCollection (or, outside a pipeline, a
list, run at once on the DirectRunner) of instances (dicts of scalars) or, from
`ReadCsvBatches`, of record batches (dicts of NumPy arrays). A transform_fn is
`(PCollection of the transform graph's directory, transformed DatasetMetadata)`.

Example:
    >>> with tft_beam.Context(temp_dir=tmp):  # doctest: +SKIP
    ...     (data, metadata), transform_fn = (raw, raw_metadata) | \\
    ...         tft_beam.AnalyzeAndTransformDataset(preprocessing_fn)
"""
import os
import shutil
import tempfile
import threading
import uuid

import numpy as np
from google.protobuf import text_format

import tensorlite as tf
from tensorlite.data_validation import batches as batch_io
from tensorlite.data_validation import beam_util
from tensorlite.data_validation.record_batch import RecordBatch

beam = beam_util.import_beam()  # an ImportError naming the `tfx` extra when Beam is missing
from tensorlite.transform import analyzers, graph
from tensorlite.transform.tf_metadata import dataset_metadata

_CONTEXT = threading.local()
BATCH_SIZE = 1000


class Context:
    """`tft_beam.Context(temp_dir=...)`: where the transform graphs are written."""

    def __init__(self, temp_dir=None, desired_batch_size=None, passthrough_keys=None,
                 use_deep_copy_optimization=None, force_tf_compat_v1=None):
        self.temp_dir = temp_dir
        self.desired_batch_size = desired_batch_size

    def __enter__(self):
        stack = getattr(_CONTEXT, "stack", [])
        stack.append(self)
        _CONTEXT.stack = stack
        return self

    def __exit__(self, *exc):
        _CONTEXT.stack.pop()
        return False

    @staticmethod
    def get_temp_dir():
        """The innermost Context's temp_dir, else a new temporary directory."""
        for ctx in reversed(getattr(_CONTEXT, "stack", [])):
            if ctx.temp_dir:
                return ctx.temp_dir
        return tempfile.mkdtemp(prefix="tensorlite_tft_")


def _batch_size():
    for ctx in reversed(getattr(_CONTEXT, "stack", [])):
        if ctx.desired_batch_size:
            return ctx.desired_batch_size
    return BATCH_SIZE


def _instances_to_batch(instances, feature_spec):
    out = RecordBatch()
    for name, spec in feature_spec.items():
        values = [inst[name] for inst in instances]
        if spec.dtype == tf.string:
            out[name] = np.array([v.encode() if isinstance(v, str) else bytes(v)
                                  for v in values], dtype=object)
        else:
            out[name] = np.asarray(values, dtype=spec.dtype.as_numpy_dtype).reshape(-1)
    return out


def _as_batches(data, metadata):
    if getattr(metadata, "record_batches", False):
        return data
    size = _batch_size()
    return (data | "Batch" >> beam.BatchElements(min_batch_size=size, max_batch_size=size)
            | "ToBatch" >> beam.Map(_instances_to_batch, metadata.feature_spec
                                    ).with_output_types(RecordBatch))


def _phase_partials(batch, preprocessing_fn, feature_spec, phase, known=None):
    run = graph.run_analyze(preprocessing_fn, batch, feature_spec, known or {})
    return {i: run.partials[i] for i in phase}


class _PhaseCombineFn(beam.CombineFn):
    """The partial accumulators of one phase's analyzers -> their results."""

    def __init__(self, phase, kinds):
        self._phase, self._kinds = phase, {i: kinds[i] for i in phase}

    def create_accumulator(self):
        return {i: [] for i in self._phase}

    def add_input(self, acc, partials):
        for i, parts in partials.items():
            acc[i].extend(parts)
        return acc

    def merge_accumulators(self, accs):
        out = self.create_accumulator()
        for acc in accs:
            for i, parts in acc.items():
                out[i].extend(parts)
        return out

    def extract_output(self, acc):
        return {i: analyzers.finalize(self._kinds[i][0], parts, self._kinds[i][1])
                for i, parts in acc.items()}


def _merge_results(new, previous):
    return {**previous, **new}


def _write_graph(results, preprocessing_fn, feature_spec, kinds, temp_dir):
    path = os.path.join(temp_dir, "transform_fn_" + uuid.uuid4().hex)
    graph.save(preprocessing_fn, feature_spec, results, kinds, path)
    return path


def _transformed_metadata(dtypes):
    def feature(dtype):
        if type(dtype).__name__ == "VarLenFeature":  # a sparse output
            return tf.io.VarLenFeature(tf.int64 if dtype.dtype == tf.int32 else dtype.dtype)
        return tf.io.FixedLenFeature([], dtype if dtype != tf.int32 else tf.int64)
    spec = {name: feature(dtype) for name, dtype in dtypes.items()}
    return dataset_metadata.DatasetMetadata.from_feature_spec(spec)


class _PTransform(beam.PTransform):
    """A PTransform that, applied to in-memory data (`(instances, metadata) | ...`), removes
    the temporary directory of the pipeline Beam makes for that call when building it
    raises (a bad preprocessing_fn or feature spec): Beam removes it only when the
    pipeline runs. A pipeline the data already belongs to is the caller's, left alone."""

    def __ror__(self, left, label=None):
        _, pvalues = self._extract_input_pvalues(left)
        values = pvalues.values() if isinstance(pvalues, dict) else pvalues
        implicit = bool(values) and not any(isinstance(v, beam.pvalue.PValue) for v in values)
        before = self.pipeline
        try:
            return super().__ror__(left, label)
        except BaseException:
            if implicit and self.pipeline is not None and self.pipeline is not before:
                shutil.rmtree(self.pipeline.local_tempdir, ignore_errors=True)
            raise


class AnalyzeDataset(_PTransform):
    """(data, metadata) -> transform_fn: the full-pass analysis of a preprocessing_fn."""

    def __init__(self, preprocessing_fn, output_record_batches=False):
        super().__init__()
        self._fn = preprocessing_fn

    def _extract_input_pvalues(self, dataset):
        return dataset, {"data": dataset[0]}

    def expand(self, dataset):
        data, metadata = dataset
        spec = metadata.feature_spec
        phases, kinds, dtypes = graph.plan(self._fn, spec)
        batches = _as_batches(data, metadata)
        results = None
        for k, phase in enumerate(phases):
            side = [beam.pvalue.AsSingleton(results)] if results is not None else []
            partials = batches | f"Analyze{k}" >> beam.Map(_phase_partials, self._fn, spec,
                                                           phase, *side)
            found = partials | f"Combine{k}" >> beam.CombineGlobally(
                _PhaseCombineFn(phase, kinds))
            results = found if results is None else (
                found | f"Merge{k}" >> beam.Map(_merge_results,
                                                beam.pvalue.AsSingleton(results)))
        if results is None:
            results = batches.pipeline | "NoAnalyzers" >> beam.Create([{}])
        path = results | "WriteTransformGraph" >> beam.Map(
            _write_graph, self._fn, spec, kinds, Context.get_temp_dir())
        return path, _transformed_metadata(dtypes)


_LOADED = {}
_LOADED_LOCK = threading.Lock()


def load_transform_graph(path):
    """The transform graph SavedModel at path, loaded once per process."""
    with _LOADED_LOCK:
        if path not in _LOADED:
            _LOADED[path] = tf.saved_model.load(path)
        return _LOADED[path]


def transform_batch(batch, path, feature_spec):
    """A batch through the transform graph (its serving_default signature)."""
    fn = load_transform_graph(path).signatures["serving_default"]
    outputs = fn(**graph.to_tensors(batch, feature_spec))
    return {name: _rows(value) for name, value in outputs.items()}


def _rows(value):
    """An output's values per row: a dense output's array; a 2-D SparseTensor's (tfidf,
    bag_of_words) each row's values in index order, as tf.Transform gives a sparse
    output's instances."""
    if not isinstance(value, tf.SparseTensor):
        return value.numpy()
    indices, values = value.indices.numpy(), value.values.numpy()
    if indices.shape[1] != 2:
        raise NotImplementedError(f"a transformed SparseTensor output of rank "
                                  f"{indices.shape[1]} (only 2-D ones are split into rows)")
    bounds = np.searchsorted(indices[:, 0], np.arange(int(value.dense_shape[0]) + 1))
    return [values[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _to_instances(batch):
    names = sorted(batch)
    n = len(batch[names[0]]) if names else 0
    return [{name: batch[name][i] for name in names} for i in range(n)]


class TransformDataset(_PTransform):
    """((data, metadata), transform_fn) -> (transformed data, transformed metadata)."""

    def __init__(self, exclude_outputs=None, output_record_batches=False):
        super().__init__()
        self._record_batches = output_record_batches

    def _extract_input_pvalues(self, inputs):
        (data, _), (path, _) = inputs
        return inputs, {"data": data, "transform_fn": path}

    def expand(self, inputs):
        (data, metadata), (path, transformed_metadata) = inputs
        out = _as_batches(data, metadata) | "Transform" >> beam.Map(
            transform_batch, beam.pvalue.AsSingleton(path), metadata.feature_spec)
        if not (self._record_batches or getattr(metadata, "record_batches", False)):
            out = out | "ToInstances" >> beam.FlatMap(_to_instances)
        return out, transformed_metadata


class AnalyzeAndTransformDataset(_PTransform):
    """(data, metadata) -> ((transformed data, metadata), transform_fn)."""

    def __init__(self, preprocessing_fn, output_record_batches=False):
        super().__init__()
        self._fn, self._record_batches = preprocessing_fn, output_record_batches

    def _extract_input_pvalues(self, dataset):
        return dataset, {"data": dataset[0]}

    def expand(self, dataset):
        transform_fn = dataset | "AnalyzeDataset" >> AnalyzeDataset(self._fn)
        transformed = (dataset, transform_fn) | "TransformDataset" >> TransformDataset(
            output_record_batches=self._record_batches)
        return transformed, transform_fn


def _copy_transform_fn(path, output_dir, transformed_metadata, raw_metadata):
    target = os.path.join(output_dir, "transform_fn")
    if os.path.exists(target):
        shutil.rmtree(target)
    shutil.copytree(path, target)
    for sub, meta in (("transformed_metadata", transformed_metadata),
                      ("metadata", raw_metadata)):
        if meta is None:
            continue
        os.makedirs(os.path.join(output_dir, sub), exist_ok=True)
        with open(os.path.join(output_dir, sub, "schema.pbtxt"), "w") as f:
            f.write(text_format.MessageToString(meta.schema))
    return output_dir


class WriteTransformFn(beam.PTransform):
    """Writes a transform_fn to output_dir: transform_fn/ (the SavedModel),
    transformed_metadata/schema.pbtxt and, given raw_metadata, metadata/schema.pbtxt."""

    def __init__(self, output_dir, raw_metadata=None):
        super().__init__()
        self._dir, self._raw = output_dir, raw_metadata

    def _extract_input_pvalues(self, transform_fn):
        return transform_fn, {"transform_fn": transform_fn[0]}

    def expand(self, transform_fn):
        path, transformed_metadata = transform_fn
        return path | "WriteTransformFn" >> beam.Map(
            _copy_transform_fn, self._dir, transformed_metadata, self._raw)


class _BatchMetadata(dataset_metadata.DatasetMetadata):
    """Metadata of a PCollection of record batches (dicts of NumPy arrays)."""
    record_batches = True


def _csv_batch(rng, names, feature_spec, delimiter):
    """The record batch of a CSV byte range (a list of one, or none): strings as UTF-8
    bytes (read as text, so '007' stays '007'), numbers as the spec's dtype."""
    strings = {name for name, spec in feature_spec.items() if spec.dtype == tf.string}
    df = batch_io.read_csv_frame(rng, names, delimiter,  # a missing value is an error here
                                 dtype={name: str for name in strings} or None,
                                 exact_types=False)
    if df is None:
        return []
    batch = RecordBatch()
    for name, spec in feature_spec.items():
        if name not in df.columns:
            raise tf.errors.InvalidArgumentError(
                None, None, f"the CSV file has no column {name!r} (columns: {names})")
        column = df[name]
        missing = int(column.isna().sum())
        if missing:
            raise tf.errors.InvalidArgumentError(
                None, None, f"CSV column {name!r} has {missing} empty values; "
                "a FixedLenFeature without a default needs a value in every row")
        batch[name] = (batch_io.utf8_bytes(column) if name in strings
                       else column.to_numpy(dtype=spec.dtype.as_numpy_dtype))
    return [batch]


def ReadCsvBatches(pipeline, file_pattern, feature_spec, delimiter=","):  # noqa: N802
    """(PCollection of record batches, metadata) of CSV files with a header line, read in
    parallel byte ranges (each row must have every feature of feature_spec)."""
    paths = beam_util.expand_pattern(file_pattern)
    names = batch_io.csv_header(paths[0], delimiter)
    ranges = batch_io.csv_ranges(paths)
    data = (beam_util.work_items(pipeline, "CsvRanges", ranges)
            | "ReadCsv" >> beam.FlatMap(_csv_batch, names, feature_spec,
                                        delimiter).with_output_types(RecordBatch))
    metadata = _BatchMetadata(dataset_metadata.DatasetMetadata.from_feature_spec(
        feature_spec).schema)
    return data, metadata

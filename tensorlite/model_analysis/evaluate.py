"""tfma.run_model_analysis as a Beam pipeline: read the evaluation data in batches, run each
model's serving signature on the raw features, key every example by its slices (overall,
per feature value, per feature cross), gather each (slice, model) and compute its metrics,
with Poisson-bootstrap confidence intervals when asked; then check the thresholds against
the baseline and write the results, the validation and the blessing where TFX's Evaluator
writes them.
"""
import os
import threading
import zlib

import numpy as np

from tensorlite.data_validation import beam_util
from tensorlite.data_validation import stats_api
from tensorlite.framework import errors
from tensorlite.model_analysis import config as cfg
from tensorlite.model_analysis import metrics as metric_fns
from tensorlite.model_analysis.validation import validate

_MODELS = {}
_MODELS_LOCK = threading.Lock()
OVERALL = ()


def _signature(model):
    import tensorlite as tf  # noqa: PLC0415 - loaded in the Beam worker
    # keyed by the file's mtime too: a model re-exported to the same path is loaded again
    pb = os.path.join(model.model_path, "saved_model.pb")
    key = (model.model_path, os.stat(pb).st_mtime_ns)
    with _MODELS_LOCK:
        if key not in _MODELS:
            _MODELS[key] = tf.saved_model.load(model.model_path)
        return _MODELS[key]


def _dense(batch, name):
    column = batch.get(name)
    if column is None:
        raise errors.InvalidArgumentError(None, None, f"the evaluation data has no column "
                                          f"{name!r} (it has {sorted(batch)})")
    if column.num_missing:
        raise errors.InvalidArgumentError(None, None, f"column {name!r} has "
                                          f"{column.num_missing} missing values")
    return column.values


def predict(batch, model, spec):
    """The model's predictions (1-D float64) for one batch of raw features."""
    import tensorlite as tf  # noqa: PLC0415
    fn = _signature(model).signatures[spec.signature_name]
    inputs = {}
    for name, tspec in fn.structured_input_signature[1].items():
        values = _dense(batch, name)
        if tspec.dtype == tf.string:
            values = np.array([str(v).encode() for v in values], dtype=object)
        inputs[name] = tf.constant(values, dtype=tspec.dtype)
    outputs = fn(**inputs)
    key = spec.prediction_key or (next(iter(outputs)) if len(outputs) == 1 else None)
    if key not in outputs:
        raise errors.InvalidArgumentError(None, None, "set ModelSpec.prediction_key to one of "
                                          f"the model's outputs {sorted(outputs)}")
    pred = np.asarray(outputs[key].numpy(), np.float64)
    return pred if pred.ndim == 1 else pred.reshape(pred.shape[0], -1)[:, -1]


def _scalar(v):
    return v.item() if hasattr(v, "item") else v


def slice_keys(batch, spec, n):
    """The slice key of each of n examples for one SlicingSpec (None: not in the slice)."""
    names = list(spec.feature_keys) + [k for k in spec.feature_values
                                       if k not in spec.feature_keys]
    if not names:
        return [OVERALL] * n
    columns = {name: _dense(batch, name) for name in names}
    keys = []
    for i in range(n):
        key = tuple((name, _scalar(columns[name][i])) for name in names)
        wanted = all(str(dict(key)[k]) == str(v) for k, v in spec.feature_values.items())
        keys.append(key if wanted else None)
    return keys


def _examples(batch, models, specs, slicing_specs):
    """((slice key, model name), (labels, predictions, weights)) chunks of one batch."""
    out = []
    for model, spec in zip(models, specs):
        labels = np.asarray(_dense(batch, spec.label_key), np.float64)
        preds = predict(batch, model, spec)
        weights = (np.asarray(_dense(batch, spec.example_weight_key), np.float64)
                   if spec.example_weight_key else np.ones_like(labels))
        groups = {}
        for slicing in slicing_specs:
            for i, key in enumerate(slice_keys(batch, slicing, len(labels))):
                if key is not None:
                    groups.setdefault(key, []).append(i)
        for key, rows in groups.items():
            rows = np.asarray(rows)
            out.append(((key, spec.name), (labels[rows], preds[rows], weights[rows])))
    return out


def _concat(chunks):
    chunks = list(chunks)
    return tuple(np.concatenate([c[i] for c in chunks]) for i in range(3))


def slice_metrics(item, names, options, seed):
    """((slice, model), {metric: {'value', and with CIs 'lower_bound', 'upper_bound',
    'standard_error'}}) for the gathered examples of one slice."""
    (key, model_name), (y, p, w) = item
    order = np.lexsort((w, y, p))  # a canonical order: the same on any number of workers
    y, p, w = y[order], p[order], w[order]
    values = metric_fns.compute(names, y, p, w)
    result = {name: {"value": v} for name, v in values.items()}
    if options.compute_confidence_intervals and len(y) >= options.min_slice_size:
        rng = np.random.default_rng([seed, zlib.crc32(repr((key, model_name)).encode())])
        samples = {name: [] for name in names}
        for _ in range(options.num_bootstrap_samples):
            resampled = metric_fns.compute(names, y, p, w * rng.poisson(1.0, len(y)))
            for name, v in resampled.items():
                samples[name].append(v)
        for name, vs in samples.items():
            vs = np.asarray(vs, np.float64)
            vs = vs[~np.isnan(vs)]
            if len(vs) > 1:
                lo, hi = np.percentile(vs, [2.5, 97.5])
                result[name].update(lower_bound=float(lo), upper_bound=float(hi),
                                    standard_error=float(vs.std(ddof=1)))
    return key, model_name, int(len(y)), result


def _reads(pipeline, data_location, file_format):
    if file_format == "csv":
        return stats_api.csv_batches(pipeline, data_location)
    if file_format in ("tfrecords", "tfrecord"):
        return stats_api.tfrecord_batches(pipeline, data_location)
    raise errors.InvalidArgumentError(None, None, f"file_format must be 'csv' or 'tfrecords', "
                                      f"got {file_format!r}")


def _models(eval_shared_model, eval_config):
    models = eval_shared_model if isinstance(eval_shared_model, (list, tuple)) \
        else [eval_shared_model]
    specs = []
    for model in models:
        spec = next((s for s in eval_config.model_specs if s.name == model.model_name), None)
        if spec is None:
            if len(models) > 1:
                raise errors.InvalidArgumentError(None, None, "no ModelSpec is named "
                                                  f"{model.model_name!r}")
            spec = eval_config.model_specs[0]
        specs.append(spec)
    return list(models), specs


def _metric_names(eval_config):
    names = []
    for ms in eval_config.metrics_specs:
        names += [m.class_name for m in ms.metrics if m.class_name not in names]
    if "ExampleCount" not in names:
        names.insert(0, "ExampleCount")
    metric_fns.check_names(names)
    return names


def run_model_analysis(eval_shared_model=None, eval_config=None, data_location="",
                       file_format="tfrecords", output_path=None, pipeline_options=None,
                       slicing_specs=None, metrics_specs=None, random_seed_for_testing=None,
                       **unused):
    """Evaluates the model(s) on data_location; returns an EvalResult (see module doc)."""
    from tensorlite.model_analysis.result import EvalResult  # noqa: PLC0415
    beam = beam_util.import_beam()
    eval_config = eval_config or cfg.EvalConfig()
    if slicing_specs is not None:
        eval_config.slicing_specs = list(slicing_specs)
    if metrics_specs is not None:
        eval_config.metrics_specs = list(metrics_specs)
    models, specs = _models(eval_shared_model, eval_config)
    names = _metric_names(eval_config)
    seed = 0 if random_seed_for_testing is None else int(random_seed_for_testing)
    with beam_util.ResultFile() as result:
        with beam_util.pipeline(pipeline_options) as p:
            _ = (_reads(p, data_location, file_format)
                 | "Predict" >> beam.FlatMap(_examples, models, specs,
                                             eval_config.slicing_specs)
                 | "Gather" >> beam.GroupByKey()
                 | "Concat" >> beam.MapTuple(lambda k, chunks: (k, _concat(chunks)))
                 | "Metrics" >> beam.Map(slice_metrics, names, eval_config.options, seed)
                 | "All" >> beam.combiners.ToList()
                 | "Collect" >> beam.Map(result.write))
        rows = sorted(result.read(), key=lambda r: (r[1], repr(r[0])))
    eval_result = EvalResult(rows, specs, eval_config)
    eval_result.validation = validate(eval_result, eval_config)
    if output_path:
        eval_result.write(output_path)
    return eval_result


"""The transform graph: a preprocessing_fn with its analyzers' results baked in, as a
tensorlite SavedModel that TensorFlow loads.

`plan(preprocessing_fn, feature_spec)` finds, before any data is read, the analyzers a
preprocessing_fn calls and the order they can be computed in: it runs the function twice on a
small sample with two different placeholder results; an analyzer whose input is the same in
both runs does not depend on any unknown analyzer and belongs to the current phase.

`save(...)` writes the SavedModel: a tf.Module whose `transform_fn` (also its
`serving_default` signature) takes the raw features by name, [batch] tensors, and returns
the transformed features; vocabularies are text files in its assets/ read by lookup tables.
"""
import keyword
import os
import shutil
import tempfile

import numpy as np

import tensorlite as tf
from tensorlite.framework import errors
from tensorlite.framework import tensor as tensor_lib
from tensorlite.transform import analyzers, context

_SAMPLE_ROWS = 4


def check_feature_spec(feature_spec):
    """Only scalar FixedLenFeatures of float32/float64/int64/string, with names usable as
    argument names (the transform graph's signature takes them by name)."""
    for name, spec in feature_spec.items():
        shape = list(getattr(spec, "shape", [None]))
        if type(spec).__name__ != "FixedLenFeature" or shape not in ([], [1]):
            raise NotImplementedError(
                f"feature {name!r}: tensorlite.transform supports scalar "
                f"tf.io.FixedLenFeature([], dtype) raw features only, got {spec!r}")
        if not name.isidentifier() or keyword.iskeyword(name):
            raise errors.InvalidArgumentError(
                None, None, f"feature name {name!r} is not a Python identifier; the transform "
                "graph's signature takes the raw features as named arguments")
        if spec.dtype not in (tf.float32, tf.float64, tf.int64, tf.string):
            raise errors.InvalidArgumentError(None, None, f"feature {name!r}: dtype "
                                              f"{spec.dtype} is not float32/float64/int64/string")


def sample_batch(feature_spec):
    """A few synthetic rows of each raw feature (the plan's sample)."""
    out = {}
    for name, spec in feature_spec.items():
        if spec.dtype == tf.string:
            out[name] = np.array([b"a", b"bb", b"c", b"dd"][:_SAMPLE_ROWS], dtype=object)
        else:
            out[name] = np.arange(_SAMPLE_ROWS).astype(spec.dtype.as_numpy_dtype)
    return out


def to_tensors(batch, feature_spec):
    """A batch of NumPy arrays as the preprocessing_fn's input tensors."""
    missing = [n for n in feature_spec if n not in batch]
    if missing:
        raise errors.InvalidArgumentError(None, None, f"the data has no feature(s) {missing} "
                                          "that the raw feature spec declares")
    return {n: _tensor(batch[n], spec.dtype) for n, spec in feature_spec.items()}


def _tensor(values, dtype):
    """tf.constant(values, dtype), without its per-string check where the values are
    already an object array of bytes (as the CSV reader makes them)."""
    if dtype == tf.string and isinstance(values, np.ndarray) and values.dtype == object:
        import pandas as pd  # noqa: PLC0415 - the readers' dependency; its check is C
        if pd.api.types.infer_dtype(values, skipna=False) in ("bytes", "empty"):
            return tensor_lib.wrap(values)
    return tf.constant(values, dtype=dtype)


def run_analyze(preprocessing_fn, batch, feature_spec, known, variant=0):
    """Runs the preprocessing_fn on one batch in analyze mode; returns the Run."""
    with context.Run("analyze", known=known, variant=variant) as run:
        outputs = preprocessing_fn(to_tensors(batch, feature_spec))
    if not isinstance(outputs, dict):
        raise TypeError(f"preprocessing_fn must return a dict of tensors, got "
                        f"{type(outputs).__name__}")
    run.outputs = outputs
    return run


def _same(a, b):
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b))


def plan(preprocessing_fn, feature_spec):
    """(phases: lists of analyzer indices, kinds: {index: (kind, params)}, output dtypes:
    a SparseTensor output's as a tf.io.VarLenFeature of its dtype)."""
    check_feature_spec(feature_spec)
    sample = sample_batch(feature_spec)
    known, phases = {}, []
    while True:
        runs = [run_analyze(preprocessing_fn, sample, feature_spec, known, v) for v in (0, 1)]
        pending = sorted(runs[0].partials)
        if not pending:
            outputs = runs[0].outputs  # a sparse output (tfidf's): a VarLenFeature
            dtypes = {k: tf.io.VarLenFeature(v.dtype) if isinstance(v, tf.SparseTensor)
                      else v.dtype for k, v in outputs.items()}
            return phases, runs[0].kinds, dtypes
        phase = [i for i in pending if _same(runs[0].inputs[i], runs[1].inputs.get(i))]
        if not phase:
            raise errors.InternalError(None, None, "could not order the preprocessing_fn's "
                                       "analyzers: each depends on another")
        phases.append(phase)
        for i in phase:  # stand-ins: the later phases only need them to be fixed
            kind, params = runs[0].kinds[i]
            known[i] = analyzers.placeholder(kind, params, 0)


def _named_function(names, body):
    """A Python function with parameters `names` calling body(dict of them) (the
    signature's inputs are named after the function's parameters)."""
    source = (f"def transform_fn({', '.join(names)}):\n"
              f"    return _body(dict(zip({names!r}, ({', '.join(names)},))))\n")
    namespace = {"_body": body}
    exec(source, namespace)  # noqa: S102 - names are checked identifiers
    return namespace["transform_fn"]


class TransformModule(tf.Module):
    """The transform graph as a trackable module (see the module docstring)."""

    def __init__(self, preprocessing_fn, feature_spec, results, kinds, asset_dir):
        super().__init__()
        self._fn, self._known = preprocessing_fn, dict(results)
        self._tables, self._assets = {}, {}
        for index, (kind, params) in sorted(kinds.items()):
            if kind == "vocabulary":
                self._add_vocabulary(index, params, results[index], asset_dir)
        names = sorted(feature_spec)
        specs = [tf.TensorSpec([None], feature_spec[n].dtype, name=n) for n in names]
        self.transform_fn = tf.function(_named_function(names, self._apply),
                                        input_signature=specs)

    def _add_vocabulary(self, index, params, tokens, asset_dir):
        filename = params.get("vocab_filename") or f"vocab_{index}"
        path = os.path.join(asset_dir, filename)
        with open(path, "w", encoding="utf-8") as f:
            f.write("".join(t + "\n" for t in tokens))
        asset = tf.saved_model.Asset(path)
        setattr(self, f"vocabulary_asset_{index}", asset)
        self._assets[index] = asset
        default, oov = params.get("default_value", -1), params.get("num_oov_buckets", 0)
        if not tokens:
            table = tf.lookup.StaticHashTable(tf.lookup.KeyValueTensorInitializer(
                tf.constant(["\x00"]), tf.constant([default], tf.int64)), default)
        else:
            init = tf.lookup.TextFileInitializer(
                path, tf.string, tf.lookup.TextFileIndex.WHOLE_LINE, tf.int64,
                tf.lookup.TextFileIndex.LINE_NUMBER)
            table = (tf.lookup.StaticVocabularyTable(init, oov) if oov
                     else tf.lookup.StaticHashTable(init, default))
        setattr(self, f"vocabulary_table_{index}", table)
        self._tables[index] = table

    def _apply(self, inputs):
        paths = {i: a.asset_path for i, a in self._assets.items()}
        with context.Run("apply", known=self._known, tables=self._tables,
                         asset_paths=paths):
            return dict(self._fn(inputs))


def save(preprocessing_fn, feature_spec, results, kinds, export_dir):
    """Writes the transform graph SavedModel to export_dir."""
    staging = tempfile.mkdtemp(prefix="tensorlite_tft_assets_")
    try:
        module = TransformModule(preprocessing_fn, feature_spec, results, kinds, staging)
        fn = module.transform_fn.get_concrete_function()
        tf.saved_model.save(module, export_dir, signatures={"serving_default": fn})
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return export_dir

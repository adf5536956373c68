"""`tft.TFTransformOutput(output_dir)`: what a tf.Transform pipeline wrote (the transform graph
in transform_fn/, the transformed schema), and `transform_features_layer()`, the Keras layer
that runs the transform graph inside a model, so a model exported with it takes raw features.

Example:
    >>> tft_output = tft.TFTransformOutput(output_dir)  # doctest: +SKIP
    >>> layer = tft_output.transform_features_layer()  # doctest: +SKIP
    >>> transformed = layer({"x": tf.constant([1.0]), "s": tf.constant(["a"])})  # doctest: +SKIP
"""
import os

from google.protobuf import text_format

import tensorlite as tf
from tensorlite.data_validation import metadata_protos as pb
from tensorlite.framework import errors
from tensorlite.transform.tf_metadata import schema_utils


class TransformFeaturesLayer(tf.keras.layers.Layer):
    """Applies the transform graph to a dict of raw feature tensors. Keys the graph does not
    take are ignored; a raw feature the dict lacks (the label, when serving) is fed as zeros
    or empty strings, so the outputs computed from it are meaningless and a serving model
    must not use them (TFX's layer prunes them instead)."""

    def __init__(self, transform_graph, raw_feature_spec, **kwargs):
        super().__init__(trainable=False, **kwargs)
        self.transform_graph = transform_graph
        self._spec = dict(raw_feature_spec)

    def call(self, features):
        present = [n for n in self._spec if n in features]
        if not present:
            raise errors.InvalidArgumentError(None, None, "none of the raw features "
                                              f"{sorted(self._spec)} was given")
        # zeros shaped like a given feature (tf.fill(tf.shape(...)) would keep the traced
        # batch size in a saved tensorlite graph)
        first = features[present[0]]
        zeros = tf.zeros_like(tf.cast(tf.strings.length(first) if first.dtype == tf.string
                                      else first, tf.int64))
        inputs = {}
        for name, spec in self._spec.items():
            if name in features:
                inputs[name] = tf.cast(features[name], spec.dtype) \
                    if features[name].dtype != spec.dtype else features[name]
            else:
                inputs[name] = (tf.strings.as_string(zeros) if spec.dtype == tf.string
                                else tf.cast(zeros, spec.dtype))
        fn = self.transform_graph.signatures["serving_default"]
        return dict(fn(**inputs))


class TFTransformOutput:
    """The outputs of tf.Transform in a directory (see the module docstring)."""

    TRANSFORM_FN_DIR = "transform_fn"
    TRANSFORMED_METADATA_DIR = "transformed_metadata"
    RAW_METADATA_DIR = "metadata"

    def __init__(self, transform_output_dir):
        self._dir = os.fspath(transform_output_dir)
        if not os.path.isdir(self.transform_savedmodel_dir):
            raise errors.NotFoundError(None, None, f"{self._dir!r} has no transform_fn/ "
                                       "directory: write one with tft_beam.WriteTransformFn")
        self._graph = None

    @property
    def transform_savedmodel_dir(self):
        return os.path.join(self._dir, self.TRANSFORM_FN_DIR)

    def _schema(self, sub):
        path = os.path.join(self._dir, sub, "schema.pbtxt")
        if not os.path.isfile(path):
            raise errors.NotFoundError(None, None, f"{path!r} does not exist")
        with open(path) as f:
            return text_format.Parse(f.read(), pb.Schema())

    def transformed_feature_spec(self):
        """{name: FixedLenFeature} of the transformed features."""
        return schema_utils.schema_as_feature_spec(self._schema(self.TRANSFORMED_METADATA_DIR))

    def raw_feature_spec(self):
        """{name: FixedLenFeature} of the raw features (from the transform graph's signature)."""
        fn = self._load().signatures["serving_default"]
        specs = fn.structured_input_signature[1]
        return {name: tf.io.FixedLenFeature([], spec.dtype) for name, spec in specs.items()}

    def _load(self):
        if self._graph is None:
            self._graph = tf.saved_model.load(self.transform_savedmodel_dir)
        return self._graph

    def transform_features_layer(self):
        """A Keras layer applying the transform graph (loaded once per TFTransformOutput)."""
        return TransformFeaturesLayer(self._load(), self.raw_feature_spec())

    def transform_raw_features(self, raw_features, drop_unused_features=True):
        """The transformed features of a dict of raw feature tensors."""
        return self.transform_features_layer()(raw_features)

    def vocabulary_file_by_name(self, vocab_filename):
        """The path of a vocabulary file in the transform graph's assets."""
        path = os.path.join(self.transform_savedmodel_dir, "assets", vocab_filename)
        if not os.path.isfile(path):
            raise errors.NotFoundError(None, None, f"no vocabulary {vocab_filename!r} in "
                                       f"{self.transform_savedmodel_dir}/assets")
        return path

    def vocabulary_by_name(self, vocab_filename):
        """The tokens of a vocabulary file, as bytes (most frequent first)."""
        with open(self.vocabulary_file_by_name(vocab_filename), "rb") as f:
            return [line.rstrip(b"\n") for line in f]

    def vocabulary_size_by_name(self, vocab_filename):
        """The number of tokens of a vocabulary."""
        return len(self.vocabulary_by_name(vocab_filename))

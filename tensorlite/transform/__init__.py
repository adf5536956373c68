"""tf.Transform (`import tensorlite.transform as tft`): a preprocessing_fn's analyzers are
computed by a full pass over the data on Apache Beam (tensorlite.transform.beam), and the
result is a transform graph, a SavedModel that applies exactly the same transformation in
training and in serving (`TFTransformOutput(dir).transform_features_layer()`).

Example:
    >>> def preprocessing_fn(inputs):
    ...     return {"x_z": tft.scale_to_z_score(inputs["x"]),
    ...             "s_id": tft.compute_and_apply_vocabulary(inputs["s"])}
"""
from tensorlite.transform.mappers import (apply_buckets, apply_vocabulary, bucketize,
                                          compute_and_apply_vocabulary, hash_strings, max,
                                          mean, min, quantiles, scale_by_min_max,
                                          scale_to_0_1, scale_to_z_score, var, vocabulary)
from tensorlite.transform.text import bag_of_words, ngrams, tfidf
from tensorlite.transform.output import TFTransformOutput, TransformFeaturesLayer

__all__ = ["TFTransformOutput", "TransformFeaturesLayer", "apply_buckets", "apply_vocabulary",
           "bag_of_words",
           "bucketize", "compute_and_apply_vocabulary", "hash_strings", "max", "mean", "min",
           "ngrams", "quantiles", "scale_by_min_max", "scale_to_0_1", "scale_to_z_score",
           "tfidf", "var", "vocabulary"]

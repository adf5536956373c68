"""TensorFlow Data Validation's API (`import tensorlite.data_validation as tfdv`): statistics
of CSV, TFRecord and DataFrame data computed by Apache Beam pipelines, schema inference,
validation (anomalies and drift) and a Facets-style HTML overview, in TFDV's protobuf
formats (tensorflow_metadata's DatasetFeatureStatisticsList, Schema and Anomalies).

Example:
    >>> import tensorlite.data_validation as tfdv
    >>> stats = tfdv.generate_statistics_from_csv("train.csv")  # doctest: +SKIP
    >>> schema = tfdv.infer_schema(stats)  # doctest: +SKIP
    >>> anomalies = tfdv.validate_statistics(tfdv.generate_statistics_from_csv(
    ...     "eval.csv"), schema)  # doctest: +SKIP
"""
from tensorlite.data_validation.metadata_protos import (Anomalies, DatasetFeatureStatisticsList,
                                                        Schema)
from tensorlite.data_validation.overview import get_statistics_html, visualize_statistics
from tensorlite.data_validation.schema_infer import get_domain, get_feature, infer_schema
from tensorlite.data_validation.stats_api import (StatsOptions, generate_statistics_from_csv,
                                                  generate_statistics_from_dataframe,
                                                  generate_statistics_from_tfrecord)
from tensorlite.data_validation.stats_io import (load_anomalies_text, load_schema_text,
                                                 load_statistics, load_stats_binary,
                                                 load_stats_text, write_anomalies_text,
                                                 write_schema_text, write_stats_binary,
                                                 write_stats_text, write_stats_tfrecord)
from tensorlite.data_validation.validation import validate_statistics

__all__ = ["Anomalies", "DatasetFeatureStatisticsList", "Schema", "StatsOptions",
           "generate_statistics_from_csv", "generate_statistics_from_dataframe",
           "generate_statistics_from_tfrecord", "get_domain", "get_feature",
           "get_statistics_html", "infer_schema", "load_anomalies_text", "load_schema_text",
           "load_statistics", "load_stats_binary", "load_stats_text", "validate_statistics",
           "visualize_statistics", "write_anomalies_text", "write_schema_text",
           "write_stats_binary", "write_stats_text", "write_stats_tfrecord"]

"""TensorFlow Model Analysis's API (`import tensorlite.model_analysis as tfma`): metrics of a
SavedModel over a whole evaluation set computed by an Apache Beam pipeline, overall and per
slice (feature values and crosses), with Poisson-bootstrap confidence intervals, thresholds
against a baseline model that decide its blessing, and an HTML slice report.

Example:
    >>> result = tfma.run_model_analysis(
    ...     tfma.default_eval_shared_model("serving/1"), data_location="eval.csv",
    ...     file_format="csv", slicing_specs=[tfma.SlicingSpec(),
    ...                                       tfma.SlicingSpec(feature_keys=["city"])],
    ...     metrics_specs=[tfma.MetricsSpec(metrics=[tfma.MetricConfig("AUC")])])  # doctest: +SKIP
"""
from tensorlite.model_analysis.config import (EvalConfig, EvalSharedModel,
                                              GenericChangeThreshold, GenericValueThreshold,
                                              MetricConfig, MetricDirection, MetricsSpec,
                                              MetricThreshold, ModelSpec, Options,
                                              SlicingSpec, default_eval_shared_model)
from tensorlite.model_analysis.evaluate import run_model_analysis
from tensorlite.model_analysis.report import slicing_metrics_html
from tensorlite.model_analysis.result import (EvalResult, load_eval_result,
                                              load_validation_result)
from tensorlite.model_analysis.validation import ValidationResult

__all__ = ["EvalConfig", "EvalResult", "EvalSharedModel", "GenericChangeThreshold",
           "GenericValueThreshold", "MetricConfig", "MetricDirection", "MetricThreshold",
           "MetricsSpec", "ModelSpec", "Options", "SlicingSpec", "ValidationResult",
           "default_eval_shared_model", "load_eval_result", "load_validation_result",
           "run_model_analysis", "slicing_metrics_html"]

"""TensorFlow Model Analysis's configuration objects (`tfma.EvalConfig`, `ModelSpec`,
`SlicingSpec`, `MetricsSpec`, `MetricConfig`, `MetricThreshold` and its value and change
thresholds, `Options`) and the model under evaluation (`default_eval_shared_model`), as
plain Python classes with TFMA's field names."""
import dataclasses
import enum
import os

from tensorlite.framework import errors


class MetricDirection(enum.IntEnum):
    """Which way a metric improves (a change threshold's direction)."""
    UNKNOWN = 0
    LOWER_IS_BETTER = 1
    HIGHER_IS_BETTER = 2


@dataclasses.dataclass
class GenericValueThreshold:
    """The metric must lie in [lower_bound, upper_bound] ({'value': x} or a number)."""
    lower_bound: object = None
    upper_bound: object = None


@dataclasses.dataclass
class GenericChangeThreshold:
    """The candidate's change from the baseline (absolute and/or relative) must not be worse
    than the bound in `direction`."""
    absolute: object = None
    relative: object = None
    direction: MetricDirection = MetricDirection.UNKNOWN


@dataclasses.dataclass
class MetricThreshold:
    """A value threshold and/or a change threshold; a model failing one is not blessed."""
    value_threshold: GenericValueThreshold = None
    change_threshold: GenericChangeThreshold = None


@dataclasses.dataclass
class MetricConfig:
    """One metric by TFMA class name (AUC, BinaryAccuracy, ExampleCount, ...)."""
    class_name: str
    config: str = ""
    threshold: MetricThreshold = None


@dataclasses.dataclass
class MetricsSpec:
    """Metrics computed for every slice."""
    metrics: list = dataclasses.field(default_factory=list)
    thresholds: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class SlicingSpec:
    """A slice: all data (no keys), each value of a feature (`feature_keys=['a']`), each
    cross of values (`['a', 'b']`), or one given value (`feature_values={'a': 'x'}`)."""
    feature_keys: list = dataclasses.field(default_factory=list)
    feature_values: dict = dataclasses.field(default_factory=dict)


@dataclasses.dataclass
class ModelSpec:
    """Which model and how to read its labels and predictions."""
    name: str = ""
    signature_name: str = "serving_default"
    label_key: str = "label"
    prediction_key: str = ""
    example_weight_key: str = ""
    is_baseline: bool = False


@dataclasses.dataclass
class Options:
    """Evaluation options (`compute_confidence_intervals`: Poisson bootstrap)."""
    compute_confidence_intervals: bool = False
    num_bootstrap_samples: int = 100
    min_slice_size: int = 1


@dataclasses.dataclass
class EvalConfig:
    """What to evaluate: models, slices, metrics and options."""
    model_specs: list = dataclasses.field(default_factory=lambda: [ModelSpec()])
    slicing_specs: list = dataclasses.field(default_factory=lambda: [SlicingSpec()])
    metrics_specs: list = dataclasses.field(default_factory=list)
    options: Options = dataclasses.field(default_factory=Options)


@dataclasses.dataclass
class EvalSharedModel:
    """A SavedModel to evaluate (loaded lazily in each Beam worker)."""
    model_path: str
    model_name: str = ""
    is_baseline: bool = False


def default_eval_shared_model(eval_saved_model_path, model_name="", eval_config=None,
                              **unused):
    """The EvalSharedModel of a SavedModel directory (its serving signature is used)."""
    path = os.fspath(eval_saved_model_path)
    if not os.path.isfile(os.path.join(path, "saved_model.pb")):
        raise errors.NotFoundError(None, None, f"{path!r} is not a SavedModel directory (no "
                                   "saved_model.pb)")
    spec = next((s for s in (eval_config.model_specs if eval_config else [])
                 if s.name == model_name), None)
    return EvalSharedModel(path, model_name, bool(spec and spec.is_baseline))


def bound(value):
    """A threshold bound given as {'value': x}, a number, or None."""
    if value is None:
        return None
    if isinstance(value, dict):
        return float(value["value"])
    return float(value)

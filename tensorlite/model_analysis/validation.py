"""Model validation (TFMA's MetricThreshold): the candidate's overall metrics against value
thresholds, and their change from the baseline's against change thresholds. A model that
fails any threshold is not blessed.

TFMA's rules: a value threshold passes when lower_bound <= value <= upper_bound; a change
threshold compares diff = candidate - baseline (relative: diff / baseline) with its bound:
HIGHER_IS_BETTER passes when diff >= bound, LOWER_IS_BETTER when diff <= bound.
"""
import dataclasses
import math

from tensorlite.framework import errors
from tensorlite.model_analysis import config as cfg


@dataclasses.dataclass
class ValidationResult:
    """validation_ok, and one entry per failed threshold."""
    validation_ok: bool
    failures: list = dataclasses.field(default_factory=list)
    missing_baseline: bool = False


def _thresholds(eval_config):
    out = []
    for ms in eval_config.metrics_specs:
        for metric in ms.metrics:
            if metric.threshold is not None:
                out.append((metric.class_name, metric.threshold))
        for name, threshold in ms.thresholds.items():
            out.append((name, threshold))
    return out


def _value_failure(name, value, threshold):
    lo, hi = cfg.bound(threshold.lower_bound), cfg.bound(threshold.upper_bound)
    if math.isnan(value):
        return f"{name} is NaN"
    if lo is not None and value < lo:
        return f"{name} = {value:.6g} is below the lower bound {lo:g}"
    if hi is not None and value > hi:
        return f"{name} = {value:.6g} is above the upper bound {hi:g}"
    return None


def _change_failure(name, value, base, threshold):
    direction = threshold.direction
    if direction not in (cfg.MetricDirection.HIGHER_IS_BETTER,
                         cfg.MetricDirection.LOWER_IS_BETTER):
        raise errors.InvalidArgumentError(None, None, f"the change threshold of {name} needs a "
                                          "direction (HIGHER_IS_BETTER or LOWER_IS_BETTER)")
    diff = value - base
    checks = [("absolute", diff, cfg.bound(threshold.absolute))]
    if threshold.relative is not None:
        checks.append(("relative", diff / base if base else math.inf,
                       cfg.bound(threshold.relative)))
    higher = direction == cfg.MetricDirection.HIGHER_IS_BETTER
    for kind, change, limit in checks:
        if limit is None:
            continue
        if (change < limit) if higher else (change > limit):
            return (f"{name} changed by {change:.6g} ({kind}) from the baseline's {base:.6g}; "
                    f"the threshold is {limit:g} ({direction.name})")
    return None


def validate(eval_result, eval_config):
    """The ValidationResult of an EvalResult (thresholds apply to the overall slice)."""
    thresholds = _thresholds(eval_config)
    candidate = eval_result.candidate_name
    baseline = eval_result.baseline_name
    result = ValidationResult(True)
    overall = eval_result.metrics_for_slice((), candidate)
    base = eval_result.metrics_for_slice((), baseline) if baseline is not None else None
    for name, threshold in thresholds:
        value = overall[name]["value"]
        failure = None
        if threshold.value_threshold is not None:
            failure = _value_failure(name, value, threshold.value_threshold)
        if failure is None and threshold.change_threshold is not None:
            if base is None:
                result.missing_baseline = True
                failure = f"{name} has a change threshold but no baseline model was evaluated"
            else:
                failure = _change_failure(name, value, base[name]["value"],
                                          threshold.change_threshold)
        if failure:
            result.failures.append({"metric": name, "slice": "Overall", "reason": failure})
    result.validation_ok = not result.failures
    return result

"""tfdv.validate_statistics: the Anomalies of statistics against a schema, with TFDV's anomaly
types and wording: a column the schema expects but the data lacks (SCHEMA_MISSING_COLUMN),
a column the schema does not know (SCHEMA_NEW_COLUMN), a type change (UNEXPECTED_DATA_TYPE),
a feature present less often than required, a fixed shape not met (INVALID_FEATURE_SHAPE), string values outside the domain, numbers
outside an int/float domain, and drift from `previous_statistics` (L-infinity distance of
categorical distributions, approximate Jensen-Shannon divergence of numeric histograms)
above the schema's `drift_comparator` thresholds.
"""
import numpy as np

from tensorlite.data_validation import metadata_protos as pb
from tensorlite.data_validation.schema_infer import (_TYPES, _check_stats, common_stats,
                                                     feature_name)

_TYPE_NAMES = {1: "BYTES", 2: "INT", 3: "FLOAT", 4: "STRUCT"}


def _reason(anomalies, name, type_name, short, description):
    info = anomalies.anomaly_info[name]
    if not info.path.step:
        info.path.step.append(name)
    info.severity = pb.AnomalyInfo.ERROR
    info.reason.add(type=pb.enum_value("AnomalyInfo.Type", type_name),
                    short_description=short, description=description)
    reasons = info.reason
    if len(reasons) == 1:
        info.short_description, info.description = short, description
    else:
        info.short_description = "Multiple errors"
        info.description = " ".join(r.description for r in reasons)


def validate_statistics(statistics, schema, environment=None, previous_statistics=None,
                        serving_statistics=None):
    """Anomalies of `statistics` against `schema` (and drift from previous_statistics)."""
    _check_stats(statistics)
    if not isinstance(schema, pb.Schema):
        raise TypeError(f"schema must be a Schema, got {type(schema).__name__}")
    if serving_statistics is not None:
        raise NotImplementedError("validate_statistics: training/serving skew detection "
                                  "(serving_statistics) is not implemented in tensorlite")
    dataset = statistics.datasets[0]
    anomalies = pb.Anomalies()
    anomalies.baseline.CopyFrom(schema)
    anomalies.data_missing = dataset.num_examples == 0
    by_name = {feature_name(f): f for f in dataset.features}
    previous = _previous(previous_statistics)
    for feature in schema.feature:
        if environment and _not_in_environment(feature, environment):
            continue
        stats = by_name.get(feature.name)
        if stats is None:
            if feature.presence.min_count > 0 or feature.presence.min_fraction > 0:
                _reason(anomalies, feature.name, "SCHEMA_MISSING_COLUMN", "Column dropped",
                        "Column is completely missing")
            continue
        _check_feature(anomalies, schema, feature, stats, dataset.num_examples)
        if feature.name in previous:
            _check_drift(anomalies, feature, stats, previous[feature.name])
    known = {f.name for f in schema.feature}
    for name in by_name:
        if name not in known:
            _reason(anomalies, name, "SCHEMA_NEW_COLUMN", "New column",
                    "New column (column in data but not in schema)")
    return anomalies


def _not_in_environment(feature, environment):
    if environment in feature.not_in_environment:
        return True
    return bool(feature.in_environment) and environment not in feature.in_environment


def _previous(previous_statistics):
    if previous_statistics is None:
        return {}
    _check_stats(previous_statistics)
    return {feature_name(f): f for f in previous_statistics.datasets[0].features}


def _check_feature(anomalies, schema, feature, stats, num_examples):
    name = feature.name
    expected = feature.type
    actual = _TYPES.get(stats.type)
    if expected and actual and expected != actual and not (
            expected == 3 and actual == 2):  # INT data in a FLOAT feature is fine
        _reason(anomalies, name, "UNEXPECTED_DATA_TYPE", "Unexpected data type",
                f"Expected data of type: {_TYPE_NAMES[expected]} but got "
                f"{_TYPE_NAMES[actual]}")
        return
    common = common_stats(stats)
    if num_examples and feature.presence.min_fraction:
        fraction = common.num_non_missing / num_examples
        if fraction < feature.presence.min_fraction:
            _reason(anomalies, name, "FEATURE_TYPE_LOW_FRACTION_PRESENT", "Column dropped",
                    "The feature was present in fewer examples than expected: minimum "
                    f"fraction = {feature.presence.min_fraction:g}, actual = {fraction:g}")
    _check_shape(anomalies, feature, common)
    _check_domain(anomalies, schema, feature, stats)


def _check_shape(anomalies, feature, common):
    """A fixed shape needs every example to have exactly that many values."""
    if not feature.HasField("shape"):
        return
    size = int(np.prod([d.size for d in feature.shape.dim])) if feature.shape.dim else 1
    if common.num_missing or common.min_num_values != size or \
            common.max_num_values != size:
        _reason(anomalies, feature.name, "INVALID_FEATURE_SHAPE", "Invalid shape",
                f"Specified shape {[d.size for d in feature.shape.dim]} but the feature is "
                f"missing from {common.num_missing} examples or has {common.min_num_values}"
                f"-{common.max_num_values} values per example")


def _string_domain(schema, feature):
    which = feature.WhichOneof("domain_info")
    if which == "string_domain":
        return feature.string_domain
    if which == "domain":
        for domain in schema.string_domain:
            if domain.name == feature.domain:
                return domain
    return None


def _check_domain(anomalies, schema, feature, stats):
    domain = _string_domain(schema, feature)
    if domain is not None and stats.WhichOneof("stats") == "string_stats":
        allowed = set(domain.value)
        counts = {b.label: b.sample_count for b in stats.string_stats.rank_histogram.buckets}
        unexpected = sorted(v for v in counts if v not in allowed)
        if unexpected:
            total = sum(counts.values()) or 1
            share = sum(counts[v] for v in unexpected) / total
            _reason(anomalies, feature.name, "ENUM_TYPE_UNEXPECTED_STRING_VALUES",
                    "Unexpected string values", "Examples contain values missing from the "
                    f"schema: {', '.join(unexpected)} (~{round(100 * share)}%). ")
        return
    which = feature.WhichOneof("domain_info")
    if which not in ("int_domain", "float_domain") or stats.WhichOneof("stats") != "num_stats":
        return
    dom, num = getattr(feature, which), stats.num_stats
    prefix = "INT_TYPE" if which == "int_domain" else "FLOAT_TYPE"
    small, big = ("SMALL_INT", "BIG_INT") if which == "int_domain" else ("SMALL_FLOAT",
                                                                       "BIG_FLOAT")
    if dom.HasField("min") and num.min < dom.min:
        _reason(anomalies, feature.name, f"{prefix}_{small}", "Out-of-range values",
                f"Unexpectedly small value: {num.min:g}.")
    if dom.HasField("max") and num.max > dom.max:
        _reason(anomalies, feature.name, f"{prefix}_{big}", "Out-of-range values",
                f"Unexpectedly large value: {num.max:g}.")


def categorical_distribution(stats):
    """{value: fraction} of a string feature (its rank histogram, else its top values)."""
    s = stats.string_stats
    pairs = [(b.label, b.sample_count) for b in s.rank_histogram.buckets] or \
        [(v.value, v.frequency) for v in s.top_values]
    total = sum(c for _, c in pairs) or 1.0
    return {v: c / total for v, c in pairs}


def l_infinity(current, previous):
    """(distance, value with the largest difference) of two {value: fraction} maps."""
    best, where = 0.0, ""
    for value in sorted(set(current) | set(previous)):
        d = abs(current.get(value, 0.0) - previous.get(value, 0.0))
        if d > best:
            best, where = d, value
    return best, where


def _histogram_masses(hist, edges):
    """The mass of a histogram on [edges[i], edges[i+1]), uniform inside its buckets."""
    out = np.zeros(len(edges) - 1)
    for b in hist.buckets:
        if b.high_value == b.low_value:
            i = min(max(np.searchsorted(edges, b.low_value, side="right") - 1, 0), len(out) - 1)
            out[i] += b.sample_count
            continue
        lo = np.clip(edges[:-1], b.low_value, b.high_value)
        hi = np.clip(edges[1:], b.low_value, b.high_value)
        out += b.sample_count * (hi - lo) / (b.high_value - b.low_value)
    return out / max(out.sum(), 1e-300)


def jensen_shannon(p, q):
    """The Jensen-Shannon divergence (base 2, in [0, 1]) of two distributions."""
    p, q = np.asarray(p, float), np.asarray(q, float)
    m = (p + q) / 2

    def kl(a):
        keep = a > 0
        return float(np.sum(a[keep] * np.log2(a[keep] / m[keep])))
    return (kl(p) + kl(q)) / 2


def numeric_jsd(current, previous):
    """The approximate JSD of two numeric features' standard histograms."""
    h1, h2 = (_standard(s) for s in (current, previous))
    if h1 is None or h2 is None:
        return 0.0
    edges = np.unique([b.low_value for h in (h1, h2) for b in h.buckets] +
                      [b.high_value for h in (h1, h2) for b in h.buckets])
    if len(edges) < 2:
        return 0.0
    return jensen_shannon(_histogram_masses(h1, edges), _histogram_masses(h2, edges))


def _standard(stats):
    for h in stats.num_stats.histograms:
        if h.type == pb.Histogram.STANDARD:
            return h
    return None


def _check_drift(anomalies, feature, stats, previous):
    comparator = feature.drift_comparator
    info = None
    kind = stats.WhichOneof("stats")
    if comparator.HasField("infinity_norm") and kind == "string_stats":
        dist, value = l_infinity(categorical_distribution(stats),
                                 categorical_distribution(previous))
        threshold = comparator.infinity_norm.threshold
        info = _measure(anomalies, feature.name, "L_INFTY", dist, threshold)
        if dist > threshold:
            _reason(anomalies, feature.name, "COMPARATOR_L_INFTY_HIGH",
                    "High Linfty distance between current and previous",
                    f"The Linfty distance between current and previous is {dist:.6g} (up to "
                    f"six significant digits), above the threshold {threshold:g}. The feature "
                    f"value with maximum difference is: {value}")
    if comparator.HasField("jensen_shannon_divergence"):
        if kind == "string_stats":
            cur, prev = categorical_distribution(stats), categorical_distribution(previous)
            keys = sorted(set(cur) | set(prev))
            dist = jensen_shannon([cur.get(k, 0) for k in keys], [prev.get(k, 0) for k in keys])
        else:
            dist = numeric_jsd(stats, previous)
        threshold = comparator.jensen_shannon_divergence.threshold
        info = _measure(anomalies, feature.name, "JENSEN_SHANNON_DIVERGENCE", dist, threshold,
                        info)
        if dist > threshold:
            _reason(anomalies, feature.name, "COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH",
                    "High approximate Jensen-Shannon divergence between current and previous",
                    "The approximate Jensen-Shannon divergence between current and previous "
                    f"is {dist:.6g} (up to six significant digits), above the threshold "
                    f"{threshold:g}.")


def _measure(anomalies, name, type_name, value, threshold, info=None):
    if info is None:
        info = anomalies.drift_skew_info.add()
        info.path.step.append(name)
    info.drift_measurements.add(
        type=pb.enum_value("DriftSkewInfo.Measurement.Type", type_name), value=value,
        threshold=threshold)
    return info

"""tfdv.infer_schema: a Schema from statistics, with TFDV's rules: each feature's type,
its presence (required when never missing), its shape (one value, when always present
with exactly one) and, for string features with few distinct values, a string domain.
"""
from tensorlite.data_validation import metadata_protos as pb

_TYPES = {pb.FeatureNameStatistics.INT: pb.Feature.DESCRIPTOR.fields_by_name["type"]
          .enum_type.values_by_name["INT"].number,
          pb.FeatureNameStatistics.FLOAT: pb.Feature.DESCRIPTOR.fields_by_name["type"]
          .enum_type.values_by_name["FLOAT"].number,
          pb.FeatureNameStatistics.STRING: pb.Feature.DESCRIPTOR.fields_by_name["type"]
          .enum_type.values_by_name["BYTES"].number,
          pb.FeatureNameStatistics.BYTES: pb.Feature.DESCRIPTOR.fields_by_name["type"]
          .enum_type.values_by_name["BYTES"].number}


def feature_name(feature_stats):
    """A FeatureNameStatistics' name (its path joined by '.', or its legacy name)."""
    if feature_stats.HasField("path"):
        return ".".join(feature_stats.path.step)
    return feature_stats.name


def common_stats(feature_stats):
    """The CommonStatistics of a FeatureNameStatistics, whatever its kind."""
    which = feature_stats.WhichOneof("stats")
    return getattr(feature_stats, which).common_stats if which else None


def _check_stats(statistics):
    if not isinstance(statistics, pb.DatasetFeatureStatisticsList):
        raise TypeError("statistics must be a DatasetFeatureStatisticsList, got "
                        f"{type(statistics).__name__}")
    if len(statistics.datasets) != 1:
        raise ValueError("statistics must hold exactly one dataset (slice), got "
                         f"{len(statistics.datasets)}")


def infer_schema(statistics, infer_feature_shape=True, max_string_domain_size=100,
                 schema_transformations=None):
    """The Schema TFDV infers from a DatasetFeatureStatisticsList of one dataset."""
    _check_stats(statistics)
    dataset = statistics.datasets[0]
    schema = pb.Schema()
    for stats in dataset.features:
        feature = schema.feature.add(name=feature_name(stats), type=_TYPES[stats.type])
        common = common_stats(stats)
        always = common.num_missing == 0 and common.num_non_missing > 0
        feature.presence.min_count = 1
        if always:
            feature.presence.min_fraction = 1.0
        single = common.min_num_values == 1 and common.max_num_values == 1
        if single and always and infer_feature_shape:
            feature.shape.dim.add(size=1)
        elif single:
            feature.value_count.min = feature.value_count.max = 1
        elif common.min_num_values >= 1:
            feature.value_count.min = 1
        _infer_string_domain(schema, feature, stats, max_string_domain_size)
    for transform in schema_transformations or ():
        schema = transform(schema, statistics)
    return schema


def _infer_string_domain(schema, feature, stats, max_size):
    if stats.WhichOneof("stats") != "string_stats":
        return
    string_stats = stats.string_stats
    if not 0 < string_stats.unique <= max_size:
        return
    values = sorted(b.label for b in string_stats.rank_histogram.buckets)
    if len(values) != string_stats.unique:
        return  # the histogram does not list every value: no domain
    schema.string_domain.add(name=feature.name, value=values)
    feature.domain = feature.name


def get_feature(schema, name):
    """The schema's Feature called `name`; ValueError if there is none."""
    for feature in schema.feature:
        if feature.name == name:
            return feature
    raise ValueError(f"feature {name!r} is not in the schema")


def get_domain(schema, name):
    """The domain of feature `name` (a StringDomain, IntDomain or FloatDomain)."""
    feature = get_feature(schema, name)
    which = feature.WhichOneof("domain_info")
    if which == "domain":
        for domain in schema.string_domain:
            if domain.name == feature.domain:
                return domain
        raise ValueError(f"the schema names domain {feature.domain!r} but has none")
    if which is None:
        raise ValueError(f"feature {name!r} has no domain")
    return getattr(feature, which)

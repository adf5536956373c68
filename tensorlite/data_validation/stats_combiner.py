"""The statistics of record batches as a Beam CombineFn: accumulate per feature, merge the
workers' accumulators, and give TFDV's DatasetFeatureStatisticsList.

Numeric features keep their values, string features a value -> count map, so quantiles,
medians, histograms and top-k are exact and every statistic is the same however the runner
splits the data: order statistics are selected by partition (a value's rank does not depend
on the order values arrive in), mean and variance merge the moments of each input batch
(batches are fixed by the input: CSV byte ranges, DataFrame chunks) in sorted order, ties in
the top-k break by value. A feature seen as a number in one batch and as text in another becomes a
string feature (its numbers counted by their text).
"""
import dataclasses

import numpy as np

from tensorlite.data_validation import metadata_protos as pb
from tensorlite.data_validation.moments import batch_moments, merged_moments

try:
    import apache_beam as beam
    _CombineFn = beam.CombineFn
except ImportError:  # the combiner's logic is usable without Beam (tests, pandas bench)
    _CombineFn = object


@dataclasses.dataclass
class StatsOptions:
    """tfdv.StatsOptions (the options tensorlite uses)."""
    num_top_values: int = 20
    num_rank_histogram_buckets: int = 1000
    num_values_histogram_buckets: int = 10
    num_histogram_buckets: int = 10
    num_quantiles_histogram_buckets: int = 10
    feature_allowlist: list = None


@dataclasses.dataclass
class FeatureAcc:
    """The running statistics of one feature."""
    kind: str
    num_missing: int = 0
    lengths: dict = dataclasses.field(default_factory=dict)  # values per example -> count
    numbers: list = dataclasses.field(default_factory=list)
    counts: dict = dataclasses.field(default_factory=dict)
    moments: list = dataclasses.field(default_factory=list)  # (n, mean, M2) of each batch

    def add_numbers(self, values):
        """Adds one batch's numbers (and their moments)."""
        self.numbers.append(values)
        if len(values):
            self.moments.append(batch_moments(values))

    def add(self, column):
        self.num_missing += column.num_missing
        _count_lengths(self.lengths, column.lengths)
        kind = _merge_kinds(self.kind, column.kind)
        if kind == "string":
            self._to_strings()
            _count_into(self.counts, column.values if column.kind == "string"
                        else _as_text(column.values, column.kind))
        else:
            self.add_numbers(column.values)
        self.kind = kind

    def merge(self, other):
        self.num_missing += other.num_missing
        for length, count in other.lengths.items():
            self.lengths[length] = self.lengths.get(length, 0) + count
        kind = _merge_kinds(self.kind, other.kind)
        if kind == "string":
            self._to_strings()
            other._to_strings()
            for value, count in other.counts.items():
                self.counts[value] = self.counts.get(value, 0) + count
        else:
            self.numbers += other.numbers
            self.moments += other.moments
        self.kind = kind

    def compact(self):
        """Concatenates the number parts into one array."""
        if self.kind != "string" and len(self.numbers) != 1:
            dtype = np.int64 if self.kind == "int" else np.float64
            parts = [np.asarray(p, dtype) for p in self.numbers] or [np.zeros(0, dtype)]
            self.numbers = [np.concatenate(parts)]
        return self

    def _to_strings(self):
        if self.kind != "string" and self.numbers:
            for part in self.numbers:
                _count_into(self.counts, _as_text(part, self.kind))
        self.numbers = []
        self.moments = []
        self.kind = "string"


def _count_lengths(counts, lengths):
    if len(lengths) == 0:
        return
    n = np.bincount(np.asarray(lengths, np.int64))
    for length in np.flatnonzero(n).tolist():
        counts[length] = counts.get(length, 0) + int(n[length])


def _merge_kinds(a, b):
    if "string" in (a, b):
        return "string"
    return "float" if "float" in (a, b) else "int"


def _as_text(values, kind):
    if kind == "int":
        return np.array([str(int(v)) for v in values], dtype=object)
    return np.array([repr(float(v)) for v in values], dtype=object)


def _count_into(counts, values):
    """Adds each value's count (a hash table: pandas' value_counts, O(n))."""
    import pandas as pd  # noqa: PLC0415 - the CSV reader's dependency
    for value, count in pd.Series(values, dtype=object).value_counts(sort=False).items():
        key = value if isinstance(value, str) else str(value)
        counts[key] = counts.get(key, 0) + int(count)


def accumulate_batch(batch, options=None):
    """One batch's accumulator, made where the batch was read, so only accumulators (not
    the batch's values) travel between Beam stages."""
    fn = StatsCombineFn(options)
    return fn.compact(fn.add_input(fn.create_accumulator(), batch))


def accumulate_dataframe(df, options=None):
    """The accumulator of a DataFrame batch (one value per cell), the same as
    accumulate_batch(batch_from_dataframe(df)) but on pandas' own columns: a text column is
    counted by pandas' value_counts (in Arrow, where pandas keeps its strings), without
    turning each string into a Python object first."""
    import pandas as pd  # noqa: PLC0415
    from tensorlite.data_validation.batches import column_from_array  # noqa: PLC0415
    allow = (options or StatsOptions()).feature_allowlist
    features = {}
    for name in df.columns:
        key = str(name)
        if allow is not None and key not in allow:
            continue
        series = df[name]
        if series.dtype == object or not (pd.api.types.is_string_dtype(series.dtype) or
                                          pd.api.types.is_numeric_dtype(series.dtype) or
                                          pd.api.types.is_bool_dtype(series.dtype)):
            column = column_from_array(series.to_numpy() if series.dtype == object
                                       else series.array)  # as batch_from_dataframe
            features[key] = FeatureAcc(column.kind)
            features[key].add(column)
            continue
        present = series.notna().to_numpy()
        n = int(present.sum())
        kept = series[present] if n < len(series) else series
        kind = ("string" if pd.api.types.is_string_dtype(series.dtype) else
                "float" if pd.api.types.is_float_dtype(series.dtype) else "int")
        feature = FeatureAcc(kind, num_missing=len(series) - n, lengths={1: n} if n else {})
        if kind == "string":
            for value, count in kept.value_counts(sort=False).items():
                feature.counts[value] = feature.counts.get(value, 0) + int(count)
        else:
            feature.add_numbers(kept.to_numpy(dtype=np.int64 if kind == "int" else np.float64))
        features[key] = feature
    return [len(df), features]


class StatsCombineFn(_CombineFn):
    """Batches -> {name: FeatureAcc} and the number of examples -> statistics proto."""

    def __init__(self, options=None, name="All Examples", inputs_are_accumulators=False):
        self._options = options or StatsOptions()
        self._name = name
        self._merge_inputs = inputs_are_accumulators

    def create_accumulator(self):
        return [0, {}]

    def add_input(self, acc, batch):
        if self._merge_inputs:  # a worker's partial accumulator (see accumulate_batch)
            return self.merge_accumulators([acc, batch])
        allow = self._options.feature_allowlist
        rows = 0
        for name, column in batch.items():
            rows = max(rows, column.num_missing + len(column.lengths))  # an array here
            if allow is not None and name not in allow:
                continue
            feature = acc[1].setdefault(name, FeatureAcc(column.kind))
            feature.add(column)
        acc[0] += rows
        return acc

    def merge_accumulators(self, accs):
        accs = list(accs)
        out = [0, {}]
        for num, features in accs:
            out[0] += num
            for name, feature in features.items():
                if name in out[1]:
                    out[1][name].merge(feature)
                else:
                    out[1][name] = dataclasses.replace(feature, lengths=dict(feature.lengths),
                                                       numbers=list(feature.numbers),
                                                       counts=dict(feature.counts),
                                                       moments=list(feature.moments))
        return out  # number parts are concatenated once (compact), not at every merge

    def compact(self, acc):
        for feature in acc[1].values():
            feature.compact()
        return acc

    def extract_output(self, acc):
        return build_statistics(acc, self._options, self._name)


def build_statistics(acc, options, name="All Examples"):
    """The DatasetFeatureStatisticsList of an accumulator."""
    num_examples, features = acc
    out = pb.DatasetFeatureStatisticsList()
    dataset = out.datasets.add(name=name, num_examples=num_examples)
    for feature_name in sorted(features):
        feature = features[feature_name].compact()
        proto = dataset.features.add()
        proto.path.step.append(feature_name)
        keys = np.array(sorted(feature.lengths), np.int64)
        lengths = np.repeat(keys, [feature.lengths[k] for k in keys.tolist()])  # sorted
        if feature.kind == "string":
            proto.type = pb.FeatureNameStatistics.STRING
            _common(proto.string_stats.common_stats, feature, lengths, options)
            _string_stats(proto.string_stats, feature.counts, options)
        else:
            proto.type = (pb.FeatureNameStatistics.INT if feature.kind == "int"
                          else pb.FeatureNameStatistics.FLOAT)
            _common(proto.num_stats.common_stats, feature, lengths, options)
            _numeric_stats(proto.num_stats, feature.numbers[0].astype(np.float64),
                           feature.moments, options)
    return out


def _common(common, feature, lengths, options):
    common.num_non_missing = len(lengths)
    common.num_missing = feature.num_missing
    if len(lengths):
        common.min_num_values = int(lengths.min())
        common.max_num_values = int(lengths.max())
        common.tot_num_values = int(lengths.sum())
        common.avg_num_values = float(lengths.mean())
        _quantiles_histogram(common.num_values_histogram, lengths.astype(float),
                             options.num_values_histogram_buckets)


def _numeric_stats(stats, values, moments, options):
    n = len(values)
    if n == 0:
        return
    mean, var = merged_moments(moments)
    stats.mean = mean
    stats.std_dev = float(np.sqrt(var))
    stats.num_zeros = int(np.count_nonzero(values == 0))
    buckets = options.num_quantiles_histogram_buckets
    ranked = _order_statistics(values, [0, n - 1, (n - 1) // 2] + _quantile_ranks(n, buckets))
    stats.min, stats.max = float(ranked[0]), float(ranked[n - 1])
    stats.median = float(ranked[(n - 1) // 2])  # the 'lower' median, a data value (TFDV)
    _standard_histogram(stats.histograms.add(), values, float(ranked[0]), float(ranked[n - 1]),
                        options.num_histogram_buckets)
    _quantiles_histogram(stats.histograms.add(), ranked, buckets)


def _order_statistics(values, ranks):
    """values partitioned so that each of `ranks` holds the value of that rank in sorted
    order (np.partition: O(n) a rank, no full sort)."""
    return np.partition(values, sorted(set(ranks)))


def _quantile_ranks(n, buckets):
    """The ranks of the 'lower' quantiles at 0, 1/buckets, ..., 1 of n sorted values."""
    return np.floor(np.linspace(0, 1, buckets + 1) * (n - 1)).astype(int).tolist()


def _standard_histogram(hist, values, lo, hi, buckets):
    hist.type = pb.Histogram.STANDARD
    if lo == hi:
        hist.buckets.add(low_value=lo, high_value=hi, sample_count=float(len(values)))
        return
    counts, edges = np.histogram(values, bins=buckets, range=(lo, hi))  # uniform: no sort
    for i, count in enumerate(counts):
        hist.buckets.add(low_value=float(edges[i]), high_value=float(edges[i + 1]),
                         sample_count=float(count))


def _quantiles_histogram(hist, ranked, buckets):
    """Equal-mass buckets between the exact quantiles (each holds n / buckets samples);
    `ranked` holds the values of the quantile ranks at those ranks (sorted or partitioned)."""
    hist.type = pb.Histogram.QUANTILES
    n = len(ranked)
    if n == 0:
        return
    edges = ranked[_quantile_ranks(n, buckets)]  # the 'lower' quantiles
    for i in range(buckets):
        hist.buckets.add(low_value=float(edges[i]), high_value=float(edges[i + 1]),
                         sample_count=n / buckets)


def _string_stats(stats, counts, options):
    stats.unique = len(counts)
    if not counts:
        return
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    for value, count in ranked[:options.num_top_values]:
        stats.top_values.add(value=value, frequency=float(count))
    for rank, (value, count) in enumerate(ranked[:options.num_rank_histogram_buckets]):
        stats.rank_histogram.buckets.add(low_rank=rank, high_rank=rank, label=value,
                                         sample_count=float(count))
    total = sum(counts.values())
    stats.avg_length = sum(len(v) * c for v, c in counts.items()) / total

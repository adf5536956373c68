"""tensorlite.data_validation (TFDV's API) on Apache Beam: statistics of CSV / TFRecord /
DataFrame data against pandas' and NumPy's own numbers, schema inference, anomalies and drift
with TFDV's anomaly types, the files in TFDV's formats, and the Facets-style overview page in
headless Chromium."""

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("apache_beam")

import tensorlite as tf  # noqa: E402
import tensorlite.data_validation as tfdv  # noqa: E402
from tensorlite.data_validation import batches  # noqa: E402
from tensorlite.framework import errors  # noqa: E402
from tests.chromium import offline_page


def _frame(n=3000, seed=0, shift=0.0, cities=("NYC", "SF", "LA")):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({
        "age": rng.integers(18, 90, n),
        "income": (rng.normal(50 + shift, 10, n)).round(3),
        "city": rng.choice(list(cities), n, p=None),
        "label": rng.integers(0, 2, n)})
    df["income"] = df["income"].astype(float)
    df.loc[::10, "income"] = np.nan
    return df


def _csv(tmp_path, df, name="train.csv"):
    path = tmp_path / name
    df.to_csv(path, index=False)
    return str(path)


def _feature(stats, name):
    for f in stats.datasets[0].features:
        if f.path.step == [name]:
            return f
    raise AssertionError(f"no statistics for {name}")


def test_csv_statistics_match_pandas(tmp_path, monkeypatch):
    df = _frame()
    path = _csv(tmp_path, df)
    monkeypatch.setattr(batches, "RANGE_BYTES", 7_000)  # several byte ranges, split lines
    assert len(batches.csv_ranges([path])) > 5
    stats = tfdv.generate_statistics_from_csv(path)
    assert stats.datasets[0].num_examples == len(df)
    income = _feature(stats, "income")
    assert income.type == tfdv.metadata_protos.FeatureNameStatistics.FLOAT
    values = df["income"].dropna().to_numpy()
    num = income.num_stats
    assert num.common_stats.num_non_missing == len(values)
    assert num.common_stats.num_missing == df["income"].isna().sum()
    np.testing.assert_allclose([num.mean, num.std_dev, num.min, num.max],
                               [values.mean(), values.std(), values.min(), values.max()],
                               rtol=1e-12)
    assert num.median == np.sort(values)[(len(values) - 1) // 2]  # a data value, as TFDV
    standard, quantiles = num.histograms
    assert sum(b.sample_count for b in standard.buckets) == len(values)
    counts, _ = np.histogram(values, bins=10)
    assert [b.sample_count for b in standard.buckets] == counts.tolist()
    assert quantiles.type == tfdv.metadata_protos.Histogram.QUANTILES
    age = _feature(stats, "age")
    assert age.type == tfdv.metadata_protos.FeatureNameStatistics.INT
    assert age.num_stats.num_zeros == 0 and age.num_stats.min == df["age"].min()
    city = _feature(stats, "city").string_stats
    counts = df["city"].value_counts()
    assert city.unique == 3
    assert [(v.value, v.frequency) for v in city.top_values] == \
        sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    assert city.avg_length == pytest.approx(df["city"].str.len().mean(), rel=1e-6)


def test_csv_without_header_and_a_missing_file(tmp_path):
    path = tmp_path / "raw.csv"
    path.write_text("1,a\n2,b\n3,\n")
    stats = tfdv.generate_statistics_from_csv(str(path), column_names=["x", "s"])
    assert stats.datasets[0].num_examples == 3
    assert _feature(stats, "s").string_stats.common_stats.num_missing == 1
    with pytest.raises(errors.NotFoundError, match="no file matches"):
        tfdv.generate_statistics_from_csv(str(tmp_path / "nope*.csv"))


def test_tfrecord_statistics_count_values_per_example(tmp_path):
    path = str(tmp_path / "data.tfrecord")
    with tf.io.TFRecordWriter(path) as w:
        for i in range(50):
            feature = {"ids": tf.train.Feature(int64_list=tf.train.Int64List(
                value=list(range(i % 3 + 1))))}
            if i % 5:
                feature["word"] = tf.train.Feature(bytes_list=tf.train.BytesList(
                    value=[b"even" if i % 2 == 0 else b"odd"]))
            w.write(tf.train.Example(features=tf.train.Features(feature=feature))
                    .SerializeToString())
    stats = tfdv.generate_statistics_from_tfrecord(path)
    ids = _feature(stats, "ids").num_stats.common_stats
    assert (ids.min_num_values, ids.max_num_values, ids.tot_num_values) == (1, 3, 99)
    word = _feature(stats, "word").string_stats
    assert word.common_stats.num_missing == 10 and word.unique == 2
    schema = tfdv.infer_schema(stats)
    assert tfdv.get_feature(schema, "ids").value_count.min == 1
    assert not tfdv.get_feature(schema, "ids").HasField("shape")


def test_dataframe_statistics_equal_csv_statistics(tmp_path):
    df = _frame(500)
    from_df = tfdv.generate_statistics_from_dataframe(df)
    from_csv = tfdv.generate_statistics_from_csv(_csv(tmp_path, df))
    assert from_df == from_csv


def test_infer_schema_and_no_anomalies_on_its_own_data(tmp_path):
    stats = tfdv.generate_statistics_from_csv(_csv(tmp_path, _frame()))
    schema = tfdv.infer_schema(stats)
    assert [f.name for f in schema.feature] == ["age", "city", "income", "label"]
    assert list(tfdv.get_domain(schema, "city").value) == ["LA", "NYC", "SF"]
    assert tfdv.get_feature(schema, "age").presence.min_fraction == 1.0
    assert tfdv.get_feature(schema, "income").presence.min_fraction == 0.0
    assert tfdv.get_feature(schema, "age").shape.dim[0].size == 1
    anomalies = tfdv.validate_statistics(stats, schema)
    assert dict(anomalies.anomaly_info) == {}
    assert anomalies.baseline == schema


def _reasons(anomalies):
    names = tfdv.metadata_protos.AnomalyInfo.Type
    return {k: sorted(names.Name(r.type) for r in v.reason)
            for k, v in anomalies.anomaly_info.items()}


def test_anomalies_missing_new_type_and_domain(tmp_path):
    train = tfdv.generate_statistics_from_csv(_csv(tmp_path, _frame()))
    schema = tfdv.infer_schema(train)
    tfdv.get_feature(schema, "age").int_domain.max = 60
    bad = _frame(400, seed=1, cities=("NYC", "SF", "Boston")).drop(columns=["label"])
    bad["age"] = bad["age"].astype(float) + 0.5
    bad["extra"] = 1
    stats = tfdv.generate_statistics_from_csv(_csv(tmp_path, bad, "eval.csv"))
    anomalies = tfdv.validate_statistics(stats, schema)
    assert _reasons(anomalies) == {
        "label": ["SCHEMA_MISSING_COLUMN"], "extra": ["SCHEMA_NEW_COLUMN"],
        "age": ["UNEXPECTED_DATA_TYPE"], "city": ["ENUM_TYPE_UNEXPECTED_STRING_VALUES"]}
    assert "Boston" in anomalies.anomaly_info["city"].description
    assert anomalies.anomaly_info["age"].description == \
        "Expected data of type: INT but got FLOAT"
    ints = _frame(400, seed=2)
    anomalies = tfdv.validate_statistics(
        tfdv.generate_statistics_from_dataframe(ints), schema)
    assert _reasons(anomalies) == {"age": ["INT_TYPE_BIG_INT"]}


def test_low_presence_is_an_anomaly():
    schema = tfdv.infer_schema(tfdv.generate_statistics_from_dataframe(
        pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0]})))
    stats = tfdv.generate_statistics_from_dataframe(pd.DataFrame({"x": [1.0, None, 3.0, 4.0]}))
    # and its inferred shape [1] is broken too (real TFDV reports both)
    assert _reasons(tfdv.validate_statistics(stats, schema)) == {
        "x": ["FEATURE_TYPE_LOW_FRACTION_PRESENT", "INVALID_FEATURE_SHAPE"]}


def test_drift_by_l_infinity_and_jensen_shannon():
    base = _frame(2000)
    train = tfdv.generate_statistics_from_dataframe(base)
    schema = tfdv.infer_schema(train)
    tfdv.get_feature(schema, "city").drift_comparator.infinity_norm.threshold = 0.05
    tfdv.get_feature(schema, "income").drift_comparator \
        .jensen_shannon_divergence.threshold = 0.1
    same = tfdv.generate_statistics_from_dataframe(_frame(2000, seed=3))
    anomalies = tfdv.validate_statistics(same, schema, previous_statistics=train)
    assert _reasons(anomalies) == {}
    measured = {m.path.step[0]: m.drift_measurements[0].value
                for m in anomalies.drift_skew_info}
    assert 0 < measured["city"] < 0.05 and 0 < measured["income"] < 0.1
    drifted = _frame(2000, seed=4, shift=15.0)
    drifted["city"] = np.where(np.arange(2000) % 4 == 0, "LA", "NYC")
    anomalies = tfdv.validate_statistics(tfdv.generate_statistics_from_dataframe(drifted),
                                         schema, previous_statistics=train)
    assert _reasons(anomalies) == {
        "city": ["COMPARATOR_L_INFTY_HIGH"],
        "income": ["COMPARATOR_JENSEN_SHANNON_DIVERGENCE_HIGH"]}
    counts = base["city"].value_counts(normalize=True)
    expected = max(abs(0.75 - counts["NYC"]), abs(0.25 - counts["LA"]), counts["SF"])
    assert measured_city(anomalies) == pytest.approx(expected, rel=1e-9)


def measured_city(anomalies):
    return next(m.drift_measurements[0].value for m in anomalies.drift_skew_info
                if m.path.step[0] == "city")


def test_files_in_tfdv_formats_round_trip(tmp_path):
    stats = tfdv.generate_statistics_from_dataframe(_frame(300))
    schema = tfdv.infer_schema(stats)
    tfdv.write_stats_text(stats, str(tmp_path / "stats.pbtxt"))
    tfdv.write_schema_text(schema, str(tmp_path / "schema.pbtxt"))
    assert tfdv.load_stats_text(str(tmp_path / "stats.pbtxt")) == stats
    assert tfdv.load_schema_text(str(tmp_path / "schema.pbtxt")) == schema
    assert 'name: "city"' in (tmp_path / "schema.pbtxt").read_text()
    binary = tfdv.generate_statistics_from_csv(_csv(tmp_path, _frame(300)),
                                               output_path=str(tmp_path / "out" / "stats"))
    assert tfdv.load_statistics(str(tmp_path / "out" / "stats")) == binary
    with tf.io.TFRecordWriter(str(tmp_path / "stats.tfrecord")) as w:
        w.write(stats.SerializeToString())
    assert tfdv.load_statistics(str(tmp_path / "stats.tfrecord")) == stats
    (tmp_path / "junk.pbtxt").write_text("not a proto {")
    with pytest.raises(errors.InvalidArgumentError, match="not a .*Schema"):
        tfdv.load_schema_text(str(tmp_path / "junk.pbtxt"))
    with pytest.raises(TypeError, match="DatasetFeatureStatisticsList"):
        tfdv.write_stats_text(schema, str(tmp_path / "x"))


def test_bytes_are_tensorflow_metadatas_wire_format():
    """The descriptors are TensorFlow Metadata's (field numbers from the .proto files)."""
    stats = tfdv.DatasetFeatureStatisticsList()
    feature = stats.datasets.add(num_examples=7).features.add()
    feature.path.step.append("x")
    feature.num_stats.mean = 1.5
    # datasets=1 { num_examples=2: 7, features=3 { num_stats=3 { mean=2 }, path=8 { step=1 } } }
    feature_bytes = b"\x1a\x09\x11" + np.float64(1.5).tobytes() + b"\x42\x03\x0a\x01x"
    assert stats.SerializeToString() == b"\x0a\x14\x10\x07\x1a\x10" + feature_bytes



def test_overview_page_in_headless_chromium(tmp_path):
    train = tfdv.generate_statistics_from_dataframe(_frame(500))
    evaluation = tfdv.generate_statistics_from_dataframe(_frame(200, seed=5))
    page_path = tmp_path / "overview.html"
    page_path.write_text(tfdv.get_statistics_html(train, evaluation, "train", "eval"))
    with offline_page(page_path, {"width": 1200, "height": 900}) as (page, problems):
        page.wait_for_selector("body[data-drawn]")
        assert page.get_attribute("body", "data-drawn") == "8"  # 4 features x 2 datasets
        numeric = page.locator("#numeric tr.feature td.name").all_inner_texts()
        assert [n for n in numeric if n] == ["age", "income", "label"]
        assert page.locator("#categorical svg.chart rect.d1").count() == 3
        assert page.locator("#numeric svg.chart rect.d0").count() == 30
        assert "10.0%" in page.inner_text("#numeric")  # income's missing share
        page.click("#numeric th:nth-child(5)")  # sort by mean
        order = [n for n in page.locator("#numeric tr.feature td.name")
                 .all_inner_texts() if n]
        assert order == ["label", "income", "age"]
    assert problems == []

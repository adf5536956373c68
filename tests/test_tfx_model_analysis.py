"""tensorlite.model_analysis (TFMA's API) on Apache Beam: metrics of a SavedModel overall and
per slice against scikit-learn's, Poisson-bootstrap confidence intervals, value and change
thresholds deciding the blessing, and the slice report in headless Chromium."""
import os

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("apache_beam")
metrics_sk = pytest.importorskip("sklearn.metrics")

import tensorlite as tf  # noqa: E402
import tensorlite.model_analysis as tfma  # noqa: E402
from tensorlite.framework import errors  # noqa: E402
from tests.chromium import offline_page


class Scorer(tf.Module):
    """A fixed logistic scorer of raw features: sigmoid(w * x + city bonus)."""

    def __init__(self, w):
        super().__init__()
        self.w = tf.Variable(w)

    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32, name="x"),
                                  tf.TensorSpec([None], tf.string, name="city")])
    def serve(self, x, city):
        bonus = tf.cast(tf.equal(city, "SF"), tf.float32) * 0.5
        return {"probability": tf.sigmoid(self.w * x + bonus)}


def _save(tmp_path, name, w):
    module = Scorer(w)
    path = str(tmp_path / name)
    tf.saved_model.save(module, path, signatures={"serving_default": module.serve})
    return path


def _data(tmp_path, n=600, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n).astype(np.float32)
    city = rng.choice(["NYC", "SF", "LA"], n)
    size = rng.choice([1, 2], n)
    label = (x + rng.normal(scale=1.0, size=n) > 0).astype(int)
    df = pd.DataFrame({"x": x, "city": city, "size": size, "label": label})
    path = tmp_path / "eval.csv"
    df.to_csv(path, index=False)
    return str(path), df


def _expected(df, w=2.0):
    x = df["x"].to_numpy(np.float32)
    bonus = (df["city"] == "SF").to_numpy(np.float32) * 0.5
    return 1 / (1 + np.exp(-(np.float32(w) * x + bonus)))


METRICS = [tfma.MetricsSpec(metrics=[tfma.MetricConfig("AUC"),
                                     tfma.MetricConfig("BinaryAccuracy"),
                                     tfma.MetricConfig("MeanLabel"),
                                     tfma.MetricConfig("Precision")])]
SLICES = [tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=["city"]),
          tfma.SlicingSpec(feature_keys=["city", "size"])]


def test_overall_and_sliced_metrics_equal_sklearn(tmp_path):
    path, df = _data(tmp_path)
    model = tfma.default_eval_shared_model(_save(tmp_path, "m", 2.0))
    result = tfma.run_model_analysis(model, data_location=path, file_format="csv",
                                     slicing_specs=SLICES, metrics_specs=METRICS)
    p = _expected(df)
    keys = result.slice_keys()
    assert len(keys) == 1 + 3 + 6 and () in keys
    for key in keys:
        mask = np.ones(len(df), bool)
        for feature, value in key:
            mask &= (df[feature] == value).to_numpy()
        y, pm = df["label"].to_numpy()[mask], p[mask]
        got = result.metrics_for_slice(key)
        assert got["ExampleCount"]["value"] == mask.sum()
        assert got["AUC"]["value"] == pytest.approx(metrics_sk.roc_auc_score(y, pm), abs=1e-9)
        assert got["BinaryAccuracy"]["value"] == pytest.approx(
            metrics_sk.accuracy_score(y, pm > 0.5), abs=1e-12)
        assert got["Precision"]["value"] == pytest.approx(
            metrics_sk.precision_score(y, pm > 0.5), abs=1e-12)
        assert got["MeanLabel"]["value"] == pytest.approx(y.mean(), abs=1e-12)
    with pytest.raises(KeyError, match="no slice"):
        result.metrics_for_slice((("city", "Paris"),))


def test_bootstrap_confidence_intervals(tmp_path):
    path, df = _data(tmp_path, n=800, seed=1)
    model = tfma.default_eval_shared_model(_save(tmp_path, "m", 2.0))
    config = tfma.EvalConfig(slicing_specs=[tfma.SlicingSpec()], metrics_specs=METRICS,
                             options=tfma.Options(compute_confidence_intervals=True,
                                                  num_bootstrap_samples=200))
    runs = [tfma.run_model_analysis(model, config, path, file_format="csv",
                                    random_seed_for_testing=7) for _ in range(2)]
    overall = runs[0].metrics_for_slice(())
    assert overall == runs[1].metrics_for_slice(())  # seeded: reproducible
    for name in ("AUC", "BinaryAccuracy", "MeanLabel"):
        m = overall[name]
        assert m["lower_bound"] < m["value"] < m["upper_bound"], name
    mean = df["label"].mean()
    binomial = np.sqrt(mean * (1 - mean) / len(df))
    assert overall["MeanLabel"]["standard_error"] == pytest.approx(binomial, rel=0.3)


def _thresholds(value_lower, change_abs):
    return [tfma.MetricsSpec(metrics=[tfma.MetricConfig("AUC", threshold=tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": value_lower}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER,
            absolute={"value": change_abs})))])]


def _compare(tmp_path, candidate_w, baseline_w, value_lower, out):
    path, _ = _data(tmp_path, n=400, seed=2)
    config = tfma.EvalConfig(model_specs=[tfma.ModelSpec(name="candidate"),
                                          tfma.ModelSpec(name="baseline", is_baseline=True)],
                             metrics_specs=_thresholds(value_lower, -1e-10))
    models = [tfma.default_eval_shared_model(_save(tmp_path, "c", candidate_w), "candidate",
                                             config),
              tfma.default_eval_shared_model(_save(tmp_path, "b", baseline_w), "baseline",
                                             config)]
    return tfma.run_model_analysis(models, config, path, file_format="csv",
                                   output_path=str(tmp_path / out))


def test_thresholds_decide_the_blessing(tmp_path):
    same = _compare(tmp_path, 2.0, 2.0, 0.6, "same")
    assert same.validation.validation_ok
    assert os.path.exists(tmp_path / "same" / "BLESSED")
    assert tfma.load_validation_result(str(tmp_path / "same"))["validation_ok"] is True
    worse = _compare(tmp_path, -2.0, 2.0, 0.0, "worse")  # an inverted scorer: AUC drops
    assert not worse.validation.validation_ok
    assert os.path.exists(tmp_path / "worse" / "NOT_BLESSED")
    assert not os.path.exists(tmp_path / "worse" / "BLESSED")
    (failure,) = worse.validation.failures
    assert "AUC changed by" in failure["reason"] and "HIGHER_IS_BETTER" in failure["reason"]
    alone = tfma.run_model_analysis(
        tfma.default_eval_shared_model(_save(tmp_path, "alone", 2.0)),
        tfma.EvalConfig(metrics_specs=_thresholds(0.5, -1e-10)), _data(tmp_path, n=100)[0],
        file_format="csv")  # a change threshold with no baseline fails, as TFMA
    assert alone.validation.missing_baseline and not alone.validation.validation_ok
    low = _compare(tmp_path, 2.0, 2.0, 0.99, "low")
    assert [f["reason"].split(" = ")[0] for f in low.validation.failures] == ["AUC"]
    assert "below the lower bound 0.99" in low.validation.failures[0]["reason"]
    metrics = tfma.load_eval_result(str(tmp_path / "worse"))
    assert {s["model"] for s in metrics["slices"]} == {"candidate", "baseline"}


def test_bad_configs_fail_clearly(tmp_path):
    path, _ = _data(tmp_path, n=50)
    model = tfma.default_eval_shared_model(_save(tmp_path, "m", 1.0))
    with pytest.raises(errors.InvalidArgumentError, match="unknown metric"):
        tfma.run_model_analysis(model, data_location=path, file_format="csv",
                                metrics_specs=[tfma.MetricsSpec([tfma.MetricConfig("F7")])])
    with pytest.raises(Exception, match="no column 'weight'"):
        tfma.run_model_analysis(model, tfma.EvalConfig(model_specs=[tfma.ModelSpec(
            example_weight_key="weight")]), path, file_format="csv")
    with pytest.raises(errors.NotFoundError, match="not a SavedModel"):
        tfma.default_eval_shared_model(str(tmp_path))



def test_slice_report_in_headless_chromium(tmp_path):
    path, _ = _data(tmp_path, n=300)
    model = tfma.default_eval_shared_model(_save(tmp_path, "m", 2.0))
    value_only = [tfma.MetricsSpec(metrics=[tfma.MetricConfig("AUC", threshold=tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": 0.6}))),
        tfma.MetricConfig("MeanLabel")])]
    config = tfma.EvalConfig(slicing_specs=SLICES[:2], metrics_specs=value_only,
                             options=tfma.Options(compute_confidence_intervals=True,
                                                  num_bootstrap_samples=30))
    result = tfma.run_model_analysis(model, config, path, file_format="csv",
                                     output_path=str(tmp_path / "out"))
    with offline_page(tmp_path / "out" / "report.html", {"width": 1000, "height": 800}) as (page, problems):
        page.wait_for_selector("body[data-drawn]")
        assert page.inner_text("#blessing").startswith("BLESSED")
        assert page.locator("tr.slice-row").count() == 4
        assert page.locator("#chart rect.bar").count() == 4
        assert page.locator("#chart line.ci").count() == 4
        assert page.get_attribute("#chart", "data-metric") == "AUC"
        page.click("#slices th:nth-child(3)")  # slice, ExampleCount, AUC: ascending
        aucs = sorted(result.metrics_for_slice(k)["AUC"]["value"] for k in result.slice_keys())
        first = page.locator("tr.slice-row td:nth-child(3)").first.inner_text()
        assert float(first.split()[0]) == pytest.approx(aucs[0], abs=1e-3)
        page.click("#slices th:nth-child(3)")  # again: descending
        first = page.locator("tr.slice-row td:nth-child(3)").first.inner_text()
        assert float(first.split()[0]) == pytest.approx(aucs[-1], abs=1e-3)
        page.select_option("#metric", "ExampleCount")
        assert page.get_attribute("#chart", "data-metric") == "ExampleCount"
    assert problems == []

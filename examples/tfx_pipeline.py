"""A TFX pipeline on Apache Beam, end to end, on one machine:

  CSV data -> statistics, schema and anomalies (tensorlite.data_validation)
           -> tf.Transform analysis and transform graph (tensorlite.transform)
           -> Keras training on transformed features, exported once with the transform
              graph so the servable takes raw features
           -> sliced evaluation against the current servable with a blessing threshold
              (tensorlite.model_analysis)
           -> push: a blessed model becomes the next version of the serving directory that
              tensorlite's model server (tensorlite-serving) polls.

The data is a synthetic census-like table written into the work directory (no download).
Every Beam step runs on the DirectRunner unless Beam flags are given after `--`, e.g.

    python examples/tfx_pipeline.py --workdir /tmp/tfx
    python examples/tfx_pipeline.py -- --direct_num_workers=2 --direct_running_mode=multi_processing
    python examples/tfx_pipeline.py -- --runner=apache_beam.runners.dask.dask_runner.DaskRunner \\
        --dask_client_address=127.0.0.1:8786

then serve the pushed model:  tensorlite-serving --model_name=census \\
    --model_base_path=<workdir>/serving --rest_api_port=8501
"""
import argparse
import os
import shutil
import sys
import time

import numpy as np

import tensorlite as tf
import tensorlite.data_validation as tfdv
import tensorlite.model_analysis as tfma
import tensorlite.transform as tft
import tensorlite.transform.beam as tft_beam

EDUCATION = ["HS-grad", "Some-college", "Bachelors", "Masters", "Doctorate"]
CITIES = ["NYC", "SF", "LA", "Boston", "Austin", "Denver"]
RAW_SPEC = {"age": tf.io.FixedLenFeature([], tf.int64),
            "hours": tf.io.FixedLenFeature([], tf.float32),
            "education": tf.io.FixedLenFeature([], tf.string),
            "city": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64)}
FEATURES = ["age", "hours", "education", "city"]


def write_census(path, rows, seed):
    """A census-like CSV: income over 50K depends on age, hours and education."""
    import pandas as pd  # noqa: PLC0415
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 80, rows)
    hours = rng.normal(40, 10, rows).clip(1, 99).round(1)
    edu = rng.choice(len(EDUCATION), rows, p=[0.35, 0.25, 0.25, 0.1, 0.05])
    logit = 0.04 * (age - 40) + 0.06 * (hours - 40) + 0.8 * edu - 1.6
    label = (rng.random(rows) < 1 / (1 + np.exp(-logit))).astype(int)
    pd.DataFrame({"age": age, "hours": hours, "education": np.array(EDUCATION)[edu],
                  "city": rng.choice(CITIES, rows), "label": label}).to_csv(path, index=False)


def preprocessing_fn(inputs):
    """The features the model sees; the analyzers' results are baked into the graph."""
    return {"age_z": tft.scale_to_z_score(inputs["age"]),
            "age_bucket": tft.bucketize(inputs["age"], 5),
            "hours_01": tft.scale_to_0_1(inputs["hours"]),
            "education_id": tft.compute_and_apply_vocabulary(
                inputs["education"], num_oov_buckets=1, vocab_filename="education"),
            "city_hash": tft.hash_strings(inputs["city"], 8)}


def validate_data(work, train_csv, eval_csv, beam_flags):
    """Statistics of both splits, a schema from train, the anomalies of eval."""
    train = tfdv.generate_statistics_from_csv(train_csv, pipeline_options=beam_flags)
    evaluation = tfdv.generate_statistics_from_csv(eval_csv, pipeline_options=beam_flags)
    schema = tfdv.infer_schema(train)
    tfdv.get_feature(schema, "education").drift_comparator.infinity_norm.threshold = 0.05
    anomalies = tfdv.validate_statistics(evaluation, schema, previous_statistics=train)
    tfdv.write_stats_text(train, os.path.join(work, "stats", "train.pbtxt"))
    tfdv.write_schema_text(schema, os.path.join(work, "schema", "schema.pbtxt"))
    tfdv.write_anomalies_text(anomalies, os.path.join(work, "anomalies.pbtxt"))
    with open(os.path.join(work, "stats", "overview.html"), "w") as f:
        f.write(tfdv.get_statistics_html(train, evaluation, "train", "eval"))
    return anomalies


def transform(work, train_csv, beam_flags):
    """The full-pass analysis over train; writes the transform graph to work/transform."""
    import apache_beam as beam  # noqa: PLC0415
    from apache_beam.options.pipeline_options import PipelineOptions  # noqa: PLC0415
    spec = {k: v for k, v in RAW_SPEC.items() if k != "label"}
    with tft_beam.Context(temp_dir=os.path.join(work, "tmp")), \
            beam.Pipeline(options=PipelineOptions(beam_flags)) as p:
        dataset = tft_beam.ReadCsvBatches(p, train_csv, spec)
        transform_fn = dataset | tft_beam.AnalyzeDataset(preprocessing_fn)
        _ = transform_fn | tft_beam.WriteTransformFn(os.path.join(work, "transform"))
    return tft.TFTransformOutput(os.path.join(work, "transform"))


def build_model():
    inputs = {"age_z": tf.keras.Input(shape=(1,), name="age_z"),
              "hours_01": tf.keras.Input(shape=(1,), name="hours_01"),
              "age_bucket": tf.keras.Input(shape=(), dtype=tf.int64, name="age_bucket"),
              "education_id": tf.keras.Input(shape=(), dtype=tf.int64, name="education_id"),
              "city_hash": tf.keras.Input(shape=(), dtype=tf.int64, name="city_hash")}
    embedded = [tf.keras.layers.Flatten()(tf.keras.layers.Embedding(n, 3)(inputs[k]))
                for k, n in (("age_bucket", 5), ("education_id", 6), ("city_hash", 8))]
    x = tf.keras.layers.Concatenate()([inputs["age_z"], inputs["hours_01"]] + embedded)
    x = tf.keras.layers.Dense(16, activation="relu")(x)
    model = tf.keras.Model(inputs, tf.keras.layers.Dense(1, activation="sigmoid")(x))
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="binary_crossentropy",
                  metrics=["accuracy"])
    return model


def _model_inputs(transformed):
    return {k: (tf.expand_dims(v, -1) if k in ("age_z", "hours_01") else v)
            for k, v in transformed.items()}


def train_and_export(train_csv, tft_output, export_dir, epochs):
    """Trains on the transform graph's output; exports model + transform graph once."""
    import pandas as pd  # noqa: PLC0415
    df = pd.read_csv(train_csv)
    layer = tft_output.transform_features_layer()
    raw = {k: tf.constant(df[k].to_numpy(), RAW_SPEC[k].dtype) for k in FEATURES}
    transformed = _model_inputs(layer(raw))
    tf.random.set_seed(0)
    model = build_model()
    model.fit(transformed, df["label"].to_numpy(np.float32), batch_size=256, epochs=epochs,
              verbose=0)
    model.tft_layer = layer

    @tf.function(input_signature=[tf.TensorSpec([None], tf.int64, name="age"),
                                  tf.TensorSpec([None], tf.float32, name="hours"),
                                  tf.TensorSpec([None], tf.string, name="education"),
                                  tf.TensorSpec([None], tf.string, name="city")])
    def serve(age, hours, education, city):
        t = model.tft_layer({"age": age, "hours": hours, "education": education, "city": city})
        return {"probability": model(_model_inputs(t))}
    tf.saved_model.save(model, export_dir, signatures={"serving_default": serve})
    return export_dir


def latest_version(serving_dir):
    versions = [int(v) for v in os.listdir(serving_dir) if v.isdigit()] \
        if os.path.isdir(serving_dir) else []
    return max(versions) if versions else None


def evaluate(work, eval_csv, candidate_dir, serving_dir, beam_flags):
    """Sliced metrics of the candidate vs the served model (if any); the blessing."""
    latest = latest_version(serving_dir)
    auc = tfma.MetricConfig("AUC", threshold=tfma.MetricThreshold(
        value_threshold=tfma.GenericValueThreshold(lower_bound={"value": 0.7}),
        change_threshold=tfma.GenericChangeThreshold(
            direction=tfma.MetricDirection.HIGHER_IS_BETTER, absolute={"value": -0.01})
        if latest is not None else None))
    specs = [tfma.ModelSpec(name="candidate", label_key="label")]
    if latest is not None:
        specs.append(tfma.ModelSpec(name="baseline", label_key="label", is_baseline=True))
    config = tfma.EvalConfig(
        model_specs=specs,
        slicing_specs=[tfma.SlicingSpec(), tfma.SlicingSpec(feature_keys=["education"]),
                       tfma.SlicingSpec(feature_keys=["city", "education"])],
        metrics_specs=[tfma.MetricsSpec(metrics=[auc, tfma.MetricConfig("BinaryAccuracy"),
                                                 tfma.MetricConfig("MeanLabel"),
                                                 tfma.MetricConfig("MeanPrediction")])],
        options=tfma.Options(compute_confidence_intervals=True, num_bootstrap_samples=20))
    models = [tfma.default_eval_shared_model(candidate_dir, "candidate", config)]
    if latest is not None:
        models.append(tfma.default_eval_shared_model(
            os.path.join(serving_dir, str(latest)), "baseline", config))
    return tfma.run_model_analysis(models, config, eval_csv, file_format="csv",
                                   output_path=os.path.join(work, "evaluation"),
                                   pipeline_options=beam_flags, random_seed_for_testing=0)


def push(candidate_dir, serving_dir):
    """Copies a blessed model to serving/<next version> (atomically: copy, then rename)."""
    version = (latest_version(serving_dir) or 0) + 1
    os.makedirs(serving_dir, exist_ok=True)
    staging = os.path.join(serving_dir, f".{version}.tmp")
    shutil.copytree(candidate_dir, staging)
    os.rename(staging, os.path.join(serving_dir, str(version)))
    return version


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    beam_flags = argv[argv.index("--") + 1:] if "--" in argv else []
    own = argv[:argv.index("--")] if "--" in argv else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workdir", default=os.path.join(os.getcwd(), "tfx_pipeline_run"))
    parser.add_argument("--rows", type=int, default=20_000, help="training rows")
    parser.add_argument("--epochs", type=int, default=5)
    args = parser.parse_args(own)
    work = args.workdir
    os.makedirs(work, exist_ok=True)
    train_csv, eval_csv = os.path.join(work, "train.csv"), os.path.join(work, "eval.csv")
    write_census(train_csv, args.rows, seed=1)
    write_census(eval_csv, max(args.rows // 4, 200), seed=2)
    start = time.perf_counter()
    anomalies = validate_data(work, train_csv, eval_csv, beam_flags)
    print(f"data validation: {len(anomalies.anomaly_info)} anomalies "
          f"{sorted(anomalies.anomaly_info)}")
    tft_output = transform(work, train_csv, beam_flags)
    print("transform: vocabulary", tft_output.vocabulary_by_name("education"))
    candidate = os.path.join(work, "candidate")
    if os.path.exists(candidate):
        shutil.rmtree(candidate)
    train_and_export(train_csv, tft_output, candidate, args.epochs)
    serving_dir = os.path.join(work, "serving")
    result = evaluate(work, eval_csv, candidate, serving_dir, beam_flags)
    overall = result.metrics_for_slice(())
    print(f"evaluation: AUC {overall['AUC']['value']:.4f} "
          f"[{overall['AUC'].get('lower_bound', float('nan')):.4f}, "
          f"{overall['AUC'].get('upper_bound', float('nan')):.4f}], "
          f"{len(result.slice_keys())} slices; report {work}/evaluation/report.html")
    if result.validation.validation_ok:
        print(f"BLESSED: pushed as version {push(candidate, serving_dir)} to {serving_dir}")
    else:
        print("NOT BLESSED:", "; ".join(f["reason"] for f in result.validation.failures))
    print(f"pipeline took {time.perf_counter() - start:.1f}s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

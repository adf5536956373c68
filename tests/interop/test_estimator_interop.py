"""A graph-mode Estimator's files read by real TensorFlow: the model_dir checkpoint through
tf.train.load_checkpoint / latest_checkpoint, and the SavedModel of export_saved_model through
tf.saved_model.load, whose serving_default signature predicts what tensorlite predicts, and
the evaluation summaries in model_dir/eval through tf.compat.v1.train.summary_iterator."""
import numpy as np
import pytest

import tensorlite as tf
from tests.interop.conftest import run_tf
from tests.test_estimator_graph import _estimator, _eval_fn, _train_fn

pytestmark = pytest.mark.interop

_TF_SIDE = '''
import json, sys
import numpy as np
import tensorflow as tf

model_dir = sys.argv[2]
with open(model_dir + "/export_path.txt") as f:
    export_dir = f.read()
reader = tf.train.load_checkpoint(model_dir)
serve = tf.saved_model.load(export_dir).signatures["serving_default"]
out = serve(x=tf.constant([[0.0], [1.0], [-2.0]]))
evals = {}
for path in tf.io.gfile.glob(model_dir + "/eval/events.out.tfevents.*"):
    for event in tf.compat.v1.train.summary_iterator(path):
        for v in event.summary.value:
            evals.setdefault(str(event.step), {})[v.tag] = v.simple_value
print(json.dumps({
    "latest": tf.train.latest_checkpoint(model_dir),
    "shapes": reader.get_variable_to_shape_map(),
    "global_step": int(reader.get_tensor("global_step")),
    "kernel": reader.get_tensor("linear/kernel").tolist(),
    "bias": reader.get_tensor("linear/bias").tolist(),
    "inputs": sorted(serve.structured_input_signature[1]),
    "y": out["y"].numpy().tolist(),
    "evals": evals,
}))
'''


def test_tensorflow_reads_checkpoint_and_exported_saved_model(tmp_path):
    model_dir = tmp_path / "model"
    est = _estimator(model_dir, every=50)
    est.train(_train_fn(), max_steps=120)
    metrics = est.evaluate(_eval_fn())
    receiver_fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
        {"x": tf.TensorSpec([None, 1], tf.float32)})
    export_dir = est.export_saved_model(str(tmp_path / "export"), receiver_fn).decode()
    (model_dir / "export_path.txt").write_text(export_dir)
    script = tmp_path / "tf_estimator_side.py"
    script.write_text(_TF_SIDE)
    facts = run_tf("read", model_dir, script=script)
    assert facts["latest"] == str(model_dir / "model.ckpt-120")
    assert facts["shapes"] == {"global_step": [], "linear/kernel": [1, 1], "linear/bias": [1]}
    assert facts["global_step"] == 120
    np.testing.assert_array_equal(facts["kernel"], est.get_variable_value("linear/kernel"))
    np.testing.assert_array_equal(facts["bias"], est.get_variable_value("linear/bias"))
    assert facts["inputs"] == ["x"]
    ours = [p["y"] for p in est.predict(tf.estimator.inputs.numpy_input_fn(
        {"x": np.array([[0.0], [1.0], [-2.0]], np.float32)}, shuffle=False))]
    np.testing.assert_allclose(facts["y"], ours, rtol=1e-6)
    np.testing.assert_allclose(facts["y"], [[2.0], [5.0], [-4.0]], atol=0.05)
    # TensorFlow's summary_iterator reads the evaluation the early-stopping hooks read
    assert set(facts["evals"]) == {"120"}
    assert facts["evals"]["120"] == pytest.approx(
        {k: float(metrics[k]) for k in ("loss", "mae", "rmse")}, rel=1e-6)

"""The model server's pieces on their own: TF Serving's REST JSON forms (row and columnar,
b64, NaN), its config files in protobuf text format, and the dynamic batcher."""
import base64
import json
import threading
import time

import numpy as np
import pytest

pytest.importorskip("starlette")

import tensorlite as tf  # noqa: E402
from tensorlite.serving import json_codec  # noqa: E402
from tensorlite.serving.batching import Batcher  # noqa: E402
from tensorlite.serving.config import (BatchingParameters, ConfigError,  # noqa: E402
                                       parse_batching_parameters, parse_model_config)
from tensorlite.serving.json_codec import RequestError  # noqa: E402

F32 = (tf.float32, (None, 3))


def test_row_format_single_input():
    row, inputs = json_codec.parse_predict({"instances": [[1, 2, 3], [4, 5, 6]]}, {"x": F32})
    assert row and inputs["x"].dtype == np.float32 and inputs["x"].tolist()[1] == [4, 5, 6]


def test_row_format_named_inputs_and_columnar_equivalent():
    specs = {"tag": (tf.string, (None,)), "signal": (tf.int64, (None, 5)),
             "sensor": (tf.float32, (None, 2, 2))}
    rows = {"instances": [{"tag": "foo", "signal": [1, 2, 3, 4, 5], "sensor": [[1, 2], [3, 4]]},
                          {"tag": "bar", "signal": [3, 4, 1, 2, 5], "sensor": [[4, 5], [6, 8]]}]}
    cols = {"inputs": {"tag": ["foo", "bar"], "signal": [[1, 2, 3, 4, 5], [3, 4, 1, 2, 5]],
                       "sensor": [[[1, 2], [3, 4]], [[4, 5], [6, 8]]]}}
    r, a = json_codec.parse_predict(rows, specs)
    c, b = json_codec.parse_predict(cols, specs)
    assert r and not c
    for name in specs:
        np.testing.assert_array_equal(a[name], b[name])
    assert a["tag"].tolist() == [b"foo", b"bar"] and a["signal"].dtype == np.int64


def test_b64_and_special_floats():
    doc = json_codec.loads(b'{"inputs": {"img": [{"b64": "aW1hZ2UgYnl0ZXM="}], '
                           b'"v": [[NaN, Infinity, -Infinity]]}}')
    _, inputs = json_codec.parse_predict(doc, {"img": (tf.string, (None,)), "v": F32})
    assert inputs["img"][0] == b"image bytes"
    assert np.isnan(inputs["v"][0, 0]) and inputs["v"][0, 1] == np.inf
    out = json_codec.format_predict({"scores": np.array([np.nan, 1.5], np.float32),
                                     "img_bytes": np.array([b"\x00\xff"], dtype=object)}, False)
    text = json_codec.dumps(out)
    assert b"NaN" in text and base64.b64encode(b"\x00\xff") in text


def _written(outputs, row_format):
    return json.loads(json_codec.dumps(json_codec.format_predict(outputs, row_format)))


def test_response_forms():
    one = _written({"y": np.array([[1.0], [2.0]])}, True)
    assert one == {"predictions": [[1.0], [2.0]]}
    two = _written({"a": np.array([1, 2]), "b": np.array([[3], [4]])}, True)
    assert two == {"predictions": [{"a": 1, "b": [3]}, {"a": 2, "b": [4]}]}
    cols = _written({"a": np.array([1, 2]), "b": np.array([3])}, False)
    assert cols == {"outputs": {"a": [1, 2], "b": [3]}}


def test_float32_outputs_are_written_exactly_and_briefly():
    """float32 values round-trip through their shortest decimal form (TF Serving writes
    float32 with up to 9 significant digits), and NaN/Infinity survive as tokens, never
    as null."""
    y = np.array([[0.1, 1 / 3, 1e-30, 3.4e38]], np.float32)
    text = json_codec.dumps(json_codec.format_predict({"y": y}, True))
    assert b"0.1," in text and b"0.10000000149" not in text
    np.testing.assert_array_equal(np.array(json.loads(text)["predictions"], np.float32), y)
    y[0, 1:3] = [np.nan, -np.inf]
    text = json_codec.dumps(json_codec.format_predict({"y": y}, False))
    assert b"NaN" in text and b"-Infinity" in text and b"null" not in text
    strided = np.arange(12, dtype=np.float32).reshape(3, 4)[:, ::2]  # not C-contiguous
    assert json.loads(json_codec.dumps({"outputs": strided})) == {"outputs": strided.tolist()}


@pytest.mark.parametrize("doc, pattern", [
    ({"instances": [[1, 2, 3]], "inputs": [[1, 2, 3]]}, "not both"),
    ({}, "Missing 'inputs' or 'instances'"),
    ({"instances": []}, "non-empty list"),
    ({"instances": [[1, 2]]}, r"shape \[1, 2\].*\[\?,3\]"),
    ({"instances": [[1, 2, 3], [1, 2]]}, "not rectangular|ragged"),
    ({"instances": [["a", "b", "c"]]}, "expects numbers"),
    ({"inputs": {"y": [[1, 2, 3]]}}, r"lacks \['x'\].*unknown \['y'\]"),
    ({"instances": [[1, 2, 3]], "extra": 1}, "Unknown keys"),
])
def test_bad_predict_requests(doc, pattern):
    with pytest.raises(RequestError, match=pattern) as e:
        json_codec.parse_predict(doc, {"x": F32})
    assert e.value.status == 400


def test_integer_input_refuses_fractions():
    with pytest.raises(RequestError, match="expects integers"):
        json_codec.to_array([1.5], "ids", (tf.int32, (None,)))
    assert json_codec.to_array([1.0, 2], "ids", (tf.int32, (None,))).dtype == np.int32


def test_malformed_json():
    with pytest.raises(RequestError, match="JSON Parse error"):
        json_codec.loads(b"{nope")
    with pytest.raises(RequestError, match="must be a JSON object"):
        json_codec.loads(b"[1]")


def test_classify_examples_with_context():
    feats = json_codec.example_features({"context": {"lang": "en"},
                                         "examples": [{"x": 1.5, "ids": [1, 2]},
                                                      {"x": 2, "ids": [3]}]})
    assert feats[0] == {"lang": ("bytes_list", [b"en"]), "x": ("float_list", [1.5]),
                        "ids": ("int64_list", [1, 2])}
    with pytest.raises(RequestError, match="both 'context' and an example"):
        json_codec.example_features({"context": {"x": 1}, "examples": [{"x": 2}]})


MODEL_CONFIG = """
model_config_list {
  config {
    name: "mlp"
    base_path: "/models/mlp"
    model_platform: "tensorflow"
    model_version_policy { specific { versions: 2 versions: 1 } }
    version_labels { key: "stable" value: 1 }
    version_labels { key: "canary" value: 2 }
  }
  config { name: "cnn" base_path: "/models/cnn" model_version_policy { all {} } }
  config { name: "lm" base_path: "/models/lm" model_version_policy { latest { num_versions: 2 } } }
}
"""


def test_model_server_config_text_format():
    mlp, cnn, lm = parse_model_config(MODEL_CONFIG)
    assert (mlp.name, mlp.base_path, mlp.policy) == ("mlp", "/models/mlp", ("specific", (1, 2)))
    assert mlp.labels == {"stable": 1, "canary": 2}
    assert cnn.policy == ("all",) and lm.policy == ("latest", 2)


@pytest.mark.parametrize("text, pattern", [
    ('model_config_list { config { nme: "x" } }', 'no field named "nme"'),
    ('model_config_list { config { name: "x" } }', "needs a name and a base_path"),
    ('model_config_list { config { name: "x" base_path: "/a" model_platform: "onnx" } }',
     "only 'tensorflow'"),
    ('model_config_list { config { name: "x" base_path: "/a" } config { name: "x" '
     'base_path: "/b" } }', "unique"),
])
def test_bad_model_config(text, pattern):
    with pytest.raises(ConfigError, match=pattern):
        parse_model_config(text)


def test_batching_parameters_file():
    p = parse_batching_parameters("max_batch_size { value: 64 } batch_timeout_micros { value: "
                                  "500 } num_batch_threads { value: 2 } max_enqueued_batches "
                                  "{ value: 10 } pad_variable_length_inputs: true")
    assert (p.max_batch_size, p.batch_timeout_micros, p.num_batch_threads,
            p.max_enqueued_batches, p.pad_variable_length_inputs) == (64, 500, 2, 10, True)
    with pytest.raises(ConfigError, match="allowed_batch_sizes"):
        parse_batching_parameters("max_batch_size { value: 8 } allowed_batch_sizes: 4")


def test_batcher_merges_concurrent_requests_and_splits_outputs():
    calls = []

    def run(inputs):
        calls.append(len(inputs["x"]))
        return {"y": inputs["x"] * 2}
    b = Batcher(run, BatchingParameters(max_batch_size=8, batch_timeout_micros=200_000))
    futures = [b.submit({"x": np.full((1, 2), i, np.float32)}) for i in range(8)]
    for i, f in enumerate(futures):
        np.testing.assert_array_equal(f.result(timeout=10)["y"], np.full((1, 2), 2 * i))
    assert calls == [8]
    b.close()


def test_batcher_times_out_a_partial_batch_and_refuses_when_full():
    gate = threading.Event()

    def run(inputs):
        gate.wait(10)
        return {"y": inputs["x"]}
    b = Batcher(run, BatchingParameters(max_batch_size=2, batch_timeout_micros=1000,
                                        max_enqueued_batches=1))
    first = b.submit({"x": np.ones((1, 1))})
    time.sleep(0.2)  # the first batch (one row, timed out) is running and blocked
    b.submit({"x": np.ones((2, 1))})  # fills the queue: one batch of two rows
    with pytest.raises(tf.errors.UnavailableError, match="queue is full"):
        b.submit({"x": np.ones((1, 1))})
    gate.set()
    assert first.result(timeout=10)["y"].shape == (1, 1)
    b.close()


def test_batcher_errors_reach_every_request_of_the_batch():
    def run(inputs):
        raise tf.errors.InvalidArgumentError(None, None, "bad batch")
    b = Batcher(run, BatchingParameters(max_batch_size=4, batch_timeout_micros=100_000))
    futures = [b.submit({"x": np.ones((1, 1))}) for _ in range(4)]
    for f in futures:
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad batch"):
            f.result(timeout=10)
    b.close()

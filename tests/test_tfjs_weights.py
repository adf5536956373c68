"""TF.js weight files (tensorlite.js.weights) judged by the real TF.js: tf.io.decodeWeights
reads what tensorlite writes (sharded, float16/uint8/uint16 quantized, strings), and
tensorlite reads them back as TF.js does; bad files are clear errors naming the file."""
import os

import numpy as np
import pytest

from tensorlite.framework import errors
from tensorlite.js import weights as tfjs_weights
from tests.js_runner import needs_node, run_node


def _arrays():
    rng = np.random.default_rng(7)
    return {"conv1/kernel": rng.normal(0, 0.2, (3, 3, 4, 8)).astype("float32"),
            "conv1/bias": rng.uniform(0.1, 0.9, 8).astype("float32"),  # range without 0
            "dense/kernel": rng.normal(0, 1.0, (300, 200)).astype("float32"),
            "steps": np.array([3, -4, 5], "int64"),
            "flat": np.full((4,), 0.25, "float32"),
            "vocab": np.array(["a", "bé", ""], dtype=object)}


def _tfjs_decoded(tmp_path, manifest):
    got = run_node("decode_weights.js", {"dir": str(tmp_path), "manifest": manifest})
    return {k: np.array(v["values"], dtype=object if v["dtype"] == "string" else None)
            .reshape(v["shape"]) for k, v in got.items()}


@needs_node
@pytest.mark.parametrize("quantize", [None, "float16", "uint8", "uint16"])
def test_tfjs_decodes_sharded_and_quantized_weights(tmp_path, quantize):
    arrays = _arrays()
    qmap = tfjs_weights.quantization_map(list(arrays), **({quantize: True} if quantize else {}))
    manifest = tfjs_weights.write_weights([{k: arrays[k] for k in list(arrays)[:3]},
                                           {k: arrays[k] for k in list(arrays)[3:]}],
                                          tmp_path, shard_size_bytes=20_000, quantization=qmap)
    assert manifest[0]["paths"] == [f"group1-shard{i}of{len(manifest[0]['paths'])}.bin"
                                    for i in range(1, len(manifest[0]["paths"]) + 1)]
    assert len(manifest[0]["paths"]) > 1 and all(
        os.path.getsize(tmp_path / p) == 20_000 for p in manifest[0]["paths"][:-1])
    ours = tfjs_weights.read_weights(manifest, str(tmp_path))
    theirs = _tfjs_decoded(tmp_path, manifest)
    specs = {s["name"]: s for g in manifest for s in g["weights"]}
    for name, original in arrays.items():
        if name == "vocab":
            assert list(theirs[name]) == ["a", "bé", ""]
            assert list(ours[name]) == [b"a", "bé".encode(), b""]
            continue
        # TF.js and tensorlite read the same numbers, bit for bit.
        np.testing.assert_array_equal(ours[name], theirs[name].astype(ours[name].dtype))
        err = np.abs(ours[name].astype(np.float64) - original)
        assert np.all(err <= tfjs_weights.quantization_error_bound(specs[name], original))
    assert ("quantization" in specs["dense/kernel"]) == (quantize is not None)
    assert "quantization" not in specs["steps"] and specs["steps"]["dtype"] == "int32"


def test_affine_quantization_keeps_zero_exact_and_matches_tfjs_converter_form():
    data = np.array([-0.1, 0.0, 0.37, 1.2], "float32")
    q, meta = tfjs_weights.quantize(data, "uint8")
    assert q.dtype == np.uint8 and meta["dtype"] == "uint8"
    assert meta["original_dtype"] == "float32" and set(meta) >= {"scale", "min"}
    back = tfjs_weights.dequantize(q, meta)
    assert back[1] == 0.0  # zero padding stays zero
    assert np.abs(back - data).max() <= meta["scale"] / 2 + 1e-7


def test_wildcards_pick_weights_and_conflicts_are_errors():
    names = ["conv1/kernel", "conv1/bias", "dense/kernel"]
    assert tfjs_weights.quantization_map(names, uint8="conv1/*", float16=True) == {
        "conv1/kernel": "uint8", "conv1/bias": "uint8", "dense/kernel": "float16"}
    assert tfjs_weights.quantization_map(names, uint16=["*/kernel"]) == {
        "conv1/kernel": "uint16", "dense/kernel": "uint16"}
    with pytest.raises(ValueError, match="conv1/kernel"):
        tfjs_weights.quantization_map(names, uint8="conv1/*", uint16="*/kernel")
    with pytest.raises(ValueError, match="only one"):
        tfjs_weights.quantization_map(names, uint8=True, float16=True)


def test_truncated_shard_is_data_loss_naming_it(tmp_path):
    manifest = tfjs_weights.write_weights([{"w": np.ones((100, 100), "float32")}], tmp_path,
                                          shard_size_bytes=16_000)
    os.truncate(tmp_path / "group1-shard2of3.bin", 100)
    with pytest.raises(errors.DataLossError, match="group1-shard2of3.bin"):
        tfjs_weights.read_weights(manifest, str(tmp_path))


def test_huge_claimed_shape_is_data_loss_not_allocation(tmp_path):
    manifest = tfjs_weights.write_weights([{"w": np.ones(4, "float32")}], tmp_path)
    manifest[0]["weights"][0]["shape"] = [1 << 40, 1 << 20]
    with pytest.raises(errors.DataLossError, match="group1-shard1of1.bin"):
        tfjs_weights.read_weights(manifest, str(tmp_path))


def test_group_over_the_cap_is_resource_exhausted(tmp_path, monkeypatch):
    manifest = tfjs_weights.write_weights([{"w": np.ones(1000, "float32")}], tmp_path)
    monkeypatch.setenv("TENSORLITE_MAX_DECOMPRESSED_BYTES", "1000")
    with pytest.raises(errors.ResourceExhaustedError, match="group1-shard1of1.bin"):
        tfjs_weights.read_weights(manifest, str(tmp_path))


@pytest.mark.parametrize("path", ["../outside.bin", "/etc/passwd", "sub/../../x.bin",
                                  "http://example.com/x.bin"])
def test_paths_outside_the_model_directory_are_refused(tmp_path, path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (tmp_path / "outside.bin").write_bytes(b"\0" * 16)
    manifest = [{"paths": [path], "weights": [{"name": "w", "shape": [4], "dtype": "float32"}]}]
    with pytest.raises(errors.InvalidArgumentError, match="inside"):
        tfjs_weights.read_weights(manifest, str(model_dir))


def test_symlink_out_of_the_model_directory_is_refused(tmp_path):
    model_dir = tmp_path / "model"
    model_dir.mkdir()
    (tmp_path / "secret.bin").write_bytes(b"\0" * 16)
    os.symlink(tmp_path / "secret.bin", model_dir / "group1-shard1of1.bin")
    manifest = [{"paths": ["group1-shard1of1.bin"],
                 "weights": [{"name": "w", "shape": [4], "dtype": "float32"}]}]
    with pytest.raises(errors.InvalidArgumentError, match="outside"):
        tfjs_weights.read_weights(manifest, str(model_dir))


def test_missing_shard_is_not_found(tmp_path):
    manifest = tfjs_weights.write_weights([{"w": np.ones(4, "float32")}], tmp_path)
    os.remove(tmp_path / "group1-shard1of1.bin")
    with pytest.raises(errors.NotFoundError, match="group1-shard1of1.bin"):
        tfjs_weights.read_weights(manifest, str(tmp_path))


def test_dtype_tfjs_cannot_hold_is_a_type_error(tmp_path):
    with pytest.raises(TypeError, match="'w'.*uint32"):
        tfjs_weights.write_weights([{"w": np.ones(4, "uint32")}], tmp_path)

"""A saved TFOpLambda layer names a TensorFlow function; loading in safe mode calls only
functions free of effects. Crafted `.keras`, `.h5` and JSON configs naming `tf.print` (with
`output_stream="file://<canary>"`), `py_function`, `numpy_function` and other spellings are
refused before anything runs; the canary is never created; pure functions still load and
predict the same; `safe_mode=False` allows the others for trusted files."""
import json
import os
import subprocess
import sys
import zipfile

import h5py
import numpy as np
import pytest

import tensorlite as tf
from tensorlite.framework import errors, registry
from tensorlite.framework.dispatch import execute
from tensorlite.keras.layers import op_lambda_effects
from tensorlite.keras.saving import object_registration
from tests.security.conftest import tree_state

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_SAFE_MODE = r"safe_mode=False"


def _base_model():
    """Input -> tf.nn.relu (a TFOpLambda, the layer the tests rewrite) -> Dense."""
    x = tf.keras.Input(shape=(3,))
    return tf.keras.Model(x, tf.keras.layers.Dense(2)(tf.nn.relu(x)))


def _op_layer(config):
    return next(layer for layer in config["config"]["layers"]
                if layer["class_name"] == "TFOpLambda")


def _crafted_config(function, kwargs):
    config = json.loads(_base_model().to_json())
    layer = _op_layer(config)
    layer["config"]["function"] = function
    layer["inbound_nodes"][0]["kwargs"] = dict(kwargs)
    return config


def _write_keras(path, config):
    _base_model().save(str(path))
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members["config.json"] = json.dumps(config)
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)


def _write_h5(path, config):
    _base_model().save(str(path))
    with h5py.File(path, "r+") as f:
        f.attrs["model_config"] = json.dumps(config)


def _print_kwargs(target):
    return {"output_stream": f"file://{target}", "summarize": 3}


# function spelling -> kwargs factory (given the canary path); all refused for effects
_EFFECTFUL = {
    "print": _print_kwargs,
    "compat.v1.print": _print_kwargs,
    "compat.v2.print": _print_kwargs,
    "py_function": lambda c: {"func": "print", "inp": [], "Tout": "float32"},
    "numpy_function": lambda c: {"func": "print", "inp": [], "Tout": "float32"},
    "compat.v1.numpy_function": lambda c: {"func": "print", "inp": [], "Tout": "float32"},
}
# names that are no TensorFlow function tensorlite provides at all (refused for that)
_UNKNOWN = ["io.write_file", "compat.v1.io.write_file", "summary.scalar", "summary.write",
            "summary.text", "debugging.enable_check_numerics", "__operators__.print",
            "__operators__.__class__", "math.print", "print.", ".print", "print..x",
            "__builtins__.open", "builtins.open", "keras.models.load_model",
            "experimental.numpy.save", "io.gfile.remove", "compat.v1.py_func",
            "raw_ops.PrintV2", "compat.v1.Print", "os.system", "np.save"]


def _load(kind, tmp_path, config, **kwargs):
    if kind == "json":
        return tf.keras.models.model_from_json(json.dumps(config))
    path = tmp_path / f"crafted.{kind}"
    (_write_keras if kind == "keras" else _write_h5)(path, config)
    return tf.keras.models.load_model(str(path), **kwargs)


@pytest.mark.parametrize("kind", ["keras", "h5", "json"])
@pytest.mark.parametrize("function", sorted(_EFFECTFUL))
def test_functions_with_effects_are_refused_in_safe_mode(kind, function, tmp_path, canary):
    config = _crafted_config(function, _EFFECTFUL[function](canary))
    before = tree_state(tmp_path)
    with pytest.raises(ValueError, match=rf"tf\.{function}\b.*{_SAFE_MODE}"):
        if kind == "json":
            _load(kind, tmp_path, config)
        else:
            path = tmp_path / f"crafted.{kind}"
            (_write_keras if kind == "keras" else _write_h5)(path, config)
            before = tree_state(tmp_path)
            tf.keras.models.load_model(str(path))
    assert tree_state(tmp_path) == before


@pytest.mark.parametrize("kind", ["keras", "h5", "json"])
@pytest.mark.parametrize("function", _UNKNOWN)
def test_names_of_no_tensorflow_function_are_refused(kind, function, tmp_path, canary):
    config = _crafted_config(function, _print_kwargs(canary))
    with pytest.raises(ValueError, match="TFOpLambda|TensorFlow function"):
        _load(kind, tmp_path, config)


@pytest.mark.parametrize("function", ["print", "py_function"])
def test_the_refusal_explains_itself(function, tmp_path, canary):
    config = _crafted_config(function, _EFFECTFUL[function](canary))
    with pytest.raises(ValueError) as info:
        _load("keras", tmp_path, config)
    text = str(info.value)
    assert f"tf.{function}" in text and "safe_mode=False" in text and "trust" in text
    assert ("PrintV2 (io)" in text) if function == "print" else ("EagerPyFunc" in text)


def test_onnx_cli_refuses_a_crafted_h5(tmp_path, canary):
    path, out = tmp_path / "crafted.h5", tmp_path / "out.onnx"
    _write_h5(path, _crafted_config("print", _print_kwargs(canary)))
    before = tree_state(tmp_path)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "tensorlite.onnx", str(path), str(out)],
                          capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr
    assert "cannot load" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    assert "tf.print" in proc.stderr and "safe_mode=False" in proc.stderr, proc.stderr
    assert tree_state(tmp_path) == before


def test_safe_mode_false_allows_them_for_trusted_files(tmp_path, canary):
    written = tmp_path / "trusted_output.txt"  # not the canary: this load is trusted
    path = tmp_path / "trusted.keras"
    _write_keras(path, _crafted_config("print", _print_kwargs(written)))
    # allowed: the layer is built and called (a refusal is safe mode's ValueError); its
    # tf.print returns no tensor. Construction is symbolic, as in TF, so the print itself
    # would run only when the model runs, and the file is not written at load
    with pytest.raises(errors.DataLossError, match="returned NoneType"):  # tf.print
        tf.keras.models.load_model(str(path), safe_mode=False)


def test_enable_unsafe_deserialization_allows_them(tmp_path, canary, monkeypatch):
    monkeypatch.setattr(object_registration, "_UNSAFE_GLOBALLY", [False])  # restored after
    tf.keras.config.enable_unsafe_deserialization()
    written = tmp_path / "trusted_output.txt"
    with pytest.raises(TypeError, match="returned NoneType"):  # allowed, as above
        _load("json", tmp_path, _crafted_config("print", _print_kwargs(written)))


# -- pure functions keep loading -------------------------------------------------------------

def _pure_model():
    x = tf.keras.Input(shape=(4,))
    y = tf.concat([tf.nn.relu(x), x[:, :2] * 2.0], axis=-1)
    y = tf.keras.layers.Dense(3)(y + tf.reduce_sum(x, axis=-1, keepdims=True))
    z = tf.math.tanh(y)[:, 0]
    return tf.keras.Model(x, z)


@pytest.mark.parametrize("suffix", [".keras", ".h5"])
def test_pure_functions_load_and_predict_the_same(suffix, tmp_path):
    model = _pure_model()
    path = str(tmp_path / f"pure{suffix}")
    model.save(path)
    data = np.random.default_rng(0).normal(size=(5, 4)).astype(np.float32)
    loaded = tf.keras.models.load_model(path)
    np.testing.assert_allclose(loaded.predict(data, verbose=0),
                               model.predict(data, verbose=0), rtol=1e-6)
    clone = tf.keras.models.model_from_json(model.to_json())
    assert [layer.name for layer in clone.layers] == [layer.name for layer in model.layers]


def test_every_resolvable_function_is_judged_by_its_ops():
    """Of the public functions a file can name, exactly those reaching an op with effects
    (or Python's I/O) are refused; the common tensor functions are not."""
    from tensorlite.framework import symbolic_dispatch
    tf.keras.Input(shape=(1,))  # installs the symbolic wrappers
    names = {}
    for namespace, prefix, _ in symbolic_dispatch._SPACES:
        for name, value in namespace.items():
            if getattr(value, "_tf_api_symbol", None) is not None:
                names[prefix + name] = value
    refused = {n for n, fn in names.items() if op_lambda_effects.unsafe_reasons(fn)}
    assert {"print", "py_function", "numpy_function"} <= refused
    for pure in ("concat", "nn.relu", "math.multiply", "reduce_sum", "matmul", "nn.softmax",
                 "strings.regex_replace", "gather", "reshape", "einsum", "cond"):
        assert pure in names and pure not in refused, pure


@pytest.mark.parametrize("path", ["io.write_file", "io.read_file", "summary.scalar",
                                  "summary.text", "summary.flush", "io.gfile.remove",
                                  "io.gfile.makedirs", "io.gfile.GFile",
                                  "keras.backend.print_tensor"])
def test_the_walk_also_judges_functions_a_file_cannot_name_today(path):
    """Were these ever resolvable by name, the walk would refuse them: their ops or Python
    calls write, read or print."""
    fn = tf
    for part in path.split("."):
        fn = getattr(fn, part)
    assert op_lambda_effects.unsafe_reasons(fn), path


def _function_in_ops(body_globals):
    """A function of a (pretend) op module that runs `OP`: the walk follows it."""
    code = compile("def f(x):\n    return execute(OP, (x,), None)\n", "<fake op module>",
                   "exec")
    scope = {"__name__": "tensorlite.ops.fake_module", **body_globals}
    exec(code, scope)  # noqa: S102 - a test-only function with a known body
    return scope["f"]


@pytest.mark.parametrize("effects", ["io", "callback", "pure_callback"])
def test_the_allow_list_derives_from_the_registry(effects):
    op = registry.Op("FakeEffect", lambda x: x, None, None, False, True, effects=effects)
    fn = _function_in_ops({"OP": op, "execute": execute})
    assert op_lambda_effects.unsafe_reasons(fn) == [f"can run the op FakeEffect ({effects})"]
    pure = registry.Op("FakePure", lambda x: x, None, None, False, True)
    assert op_lambda_effects.unsafe_reasons(_function_in_ops({"OP": pure,
                                                              "execute": execute})) == []


def test_registry_rejects_unknown_effects():
    with pytest.raises(ValueError, match="effects"):
        registry.Op("Bad", lambda x: x, None, None, False, True, effects="network")


def test_a_loaded_layer_cannot_dispatch_an_op_with_effects(tmp_path, canary):
    """Defence in depth: were a loaded function to reach an io op anyway, dispatch refuses
    it before its forward runs."""
    path = str(tmp_path / "pure.keras")
    _pure_model().save(path)
    loaded = tf.keras.models.load_model(path)
    layer = next(lay for lay in loaded.layers if getattr(lay, "symbol", None) == "nn.relu")
    write = registry.get("WriteFile")

    def sneaky(x, **kwargs):
        execute(write, (tf.constant(str(canary)), tf.constant("x")), None)
        return x
    layer.function = sneaky
    with pytest.raises(errors.PermissionDeniedError, match=r"tf\.nn\.relu.*WriteFile"):
        layer(tf.zeros((1, 4)))
    tf.io.write_file(str(tmp_path / "other.txt"), "ok")  # outside such a call: allowed
    assert (tmp_path / "other.txt").read_bytes() == b"ok"

"""`run_layer_test`: one layer class held to the contract every Keras layer keeps, as Keras's
`testing_utils.layer_test` and Keras 3's `TestCase.run_layer_test` do.

It builds the layer from `init_kwargs`, calls it on real data and checks, in order:
  1. weights: the trainable / non-trainable counts after build, and `supports_masking`;
  2. output: shape (None in `expected_output_shape` matches any size) and dtype,
     `compute_output_shape` agreeing with the real output where the layer implements it,
     and the same output inside a `tf.function` as eagerly;
  3. config: every named `__init__` argument appears in `get_config` (a dropped argument is
     how `Dense` lost its constraints), the config survives JSON, `from_config(get_config())`
     gives the same config again, and the copy with copied weights gives the same outputs;
  4. saving: a functional model of the layer saved as `.keras` and `.h5` loads back with the
     same outputs;
  5. training: a compiled model of the layer, two `fit` steps, changes its trainable weights.

Example:
    >>> run_layer_test(tf.keras.layers.Dense, {"units": 3}, input_shape=(2, 4),
    ...                expected_output_shape=(2, 3), expected_num_trainable_weights=2,
    ...                tmp_path=tmp_path)
"""
import inspect
import json

import numpy as np

import tensorlite as tf

keras = tf.keras


def _make_data(input_shape, input_dtype, seed):
    """Random inputs: one array per shape (a list of shapes gives a list of arrays, a dict
    of shapes a dict, passed to `call` by keyword)."""
    rng = np.random.default_rng(seed)
    if isinstance(input_shape, dict):
        return {k: _make_data(s, input_dtype, seed + i)
                for i, (k, s) in enumerate(input_shape.items())}
    if input_shape and isinstance(input_shape[0], (list, tuple)):
        return [_make_data(s, input_dtype, seed + i) for i, s in enumerate(input_shape)]
    dtype = np.dtype(input_dtype)
    if dtype.kind in "iu":
        return rng.integers(0, 4, size=input_shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 2, size=input_shape).astype(bool)
    return rng.normal(size=input_shape).astype(dtype)


def _numpy(x):
    return [np.asarray(t.numpy() if hasattr(t, "numpy") else t) for t in tf.nest.flatten(x)]


def _assert_same_outputs(a, b, what):
    xs, ys = _numpy(a), _numpy(b)
    assert len(xs) == len(ys), f"{what}: {len(xs)} outputs against {len(ys)}"
    for x, y in zip(xs, ys):
        if x.dtype.kind in "fc":
            np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5, err_msg=what)
        else:
            np.testing.assert_array_equal(x, y, err_msg=what)


def _check_shape(got, expected, what):
    got = tuple(got)
    assert len(got) == len(expected) and all(
        e is None or g == e for g, e in zip(got, expected)), \
        f"{what}: shape {got}, expected {tuple(expected)}"


def _call(layer, data, call_kwargs):
    """`layer(data)`; a dict is the call's arguments by name, the first one given
    positionally, as `Layer.__call__` takes its inputs (MultiHeadAttention's query, value)."""
    if isinstance(data, dict):
        first, *rest = data
        return layer(data[first], **{k: data[k] for k in rest}, **call_kwargs)
    return layer(data, **call_kwargs)


def _check_output(layer, data, out, expected_shape, expected_dtype, call_kwargs):
    """Output shapes and dtypes, and compute_output_shape where the layer has one."""
    outs = tf.nest.flatten(out)
    if expected_shape is not None:
        shapes = expected_shape if isinstance(expected_shape, list) else [expected_shape]
        for o, s in zip(outs, shapes):
            _check_shape(o.shape.as_list(), s, f"{layer.name} output")
    if expected_dtype is not None:
        for o in outs:
            assert o.dtype == tf.as_dtype(expected_dtype), \
                f"{layer.name} output dtype {o.dtype.name}, expected {expected_dtype}"
    if call_kwargs or len(outs) != 1 or isinstance(data, dict):
        return
    in_shape = [tuple(d.shape) for d in data] if isinstance(data, list) else tuple(data.shape)
    try:
        computed = layer.compute_output_shape(in_shape)
    except NotImplementedError:
        return
    _check_shape(tf.TensorShape(computed).as_list(), outs[0].shape.as_list(),
                 f"{layer.name}.compute_output_shape")


def _check_graph(layer, data, out, call_kwargs):
    """The layer traced into a tf.function computes what it computes eagerly."""
    traced = tf.function(lambda d: _call(layer, d, call_kwargs))
    _assert_same_outputs(out, traced(data), f"{layer.name} in a tf.function")


def _check_config_arguments(layer_cls, config, exempt):
    """Every named __init__ argument is written to the config (or exempt, saying why)."""
    params = inspect.signature(layer_cls.__init__).parameters
    named = [n for n, p in params.items() if n != "self" and
             p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    # `dynamic` (the base Layer's) is not written by tf.keras either: every layer runs eagerly
    missing = [n for n in named if n not in config and n not in exempt and n != "dynamic"]
    assert not missing, f"{layer_cls.__name__}.get_config() drops arguments {missing}"


def _check_config(layer, layer_cls, data, out, call_kwargs, config_exempt):
    """The get_config/from_config round trip: same config, same outputs with same weights."""
    config = layer.get_config()
    _check_config_arguments(layer_cls, config, config_exempt)
    json.dumps(config, default=_json_default)  # a .keras file's config is JSON
    copy = layer_cls.from_config(dict(config))
    again = copy.get_config()
    assert json.dumps(again, sort_keys=True, default=_json_default) == json.dumps(
        config, sort_keys=True, default=_json_default), \
        f"{layer_cls.__name__}: from_config(get_config()) changed the config"
    _call(copy, data, call_kwargs)  # builds it
    copy.set_weights(layer.get_weights())
    _assert_same_outputs(out, _call(copy, data, call_kwargs), f"{layer.name} from_config copy")


def _json_default(obj):
    if isinstance(obj, (np.integer, np.floating)):
        return obj.item()
    if isinstance(obj, np.ndarray):
        return obj.tolist()
    if isinstance(obj, tf.DType):
        return obj.name
    raise TypeError(f"not JSON serializable: {obj!r}")


def _functional_model(layer, data, input_dtype, call_kwargs):
    """A functional model calling `layer` on Inputs shaped like `data` (batch left free)."""
    if isinstance(data, dict):
        inputs = {k: keras.Input(shape=a.shape[1:], dtype=input_dtype, name=k)
                  for k, a in data.items()}
        return keras.Model(inputs, _call(layer, inputs, call_kwargs))
    arrays = data if isinstance(data, list) else [data]
    inputs = [keras.Input(shape=a.shape[1:], dtype=input_dtype) for a in arrays]
    inputs = inputs if isinstance(data, list) else inputs[0]
    return keras.Model(inputs, _call(layer, inputs, call_kwargs))


def _check_saving(model, data, formats, tmp_path, custom_objects):
    expected = model(data)
    for fmt in formats:
        path = str(tmp_path / f"{model.layers[-1].name}_model.{fmt}")
        model.save(path)
        loaded = keras.models.load_model(path, custom_objects=custom_objects)
        _assert_same_outputs(expected, loaded(data), f"{path} loaded")


def _check_training(model, data):
    """Two fit steps on an MSE loss against random targets move the trainable weights."""
    out = model(data)
    targets = [np.random.default_rng(1).normal(size=o.shape.as_list()).astype(np.float32)
               for o in tf.nest.flatten(out)]
    before = [w.numpy().copy() for w in model.trainable_weights]
    model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
    model.fit(data, targets if len(targets) > 1 else targets[0], batch_size=len(targets[0]),
              epochs=2, verbose=0)
    after = [w.numpy() for w in model.trainable_weights]
    assert any(not np.allclose(a, b) for a, b in zip(before, after)), \
        "two fit steps left every trainable weight unchanged"


def run_layer_test(layer_cls, init_kwargs=None, input_shape=None, input_dtype="float32",
                   input_data=None, call_kwargs=None, expected_output_shape=None,
                   expected_output_dtype=None, expected_num_trainable_weights=None,
                   expected_num_non_trainable_weights=None, supports_masking=None,
                   run_config_check=True, config_exempt=(), run_training_check=True,
                   run_saving_check=True, saving_formats=("keras", "h5"), tmp_path=None,
                   custom_objects=None):
    """Holds `layer_cls` to the layer contract (module docstring); raises AssertionError
    naming the first broken rule. `init_kwargs` may be a function returning them, for
    arguments that are layers (a wrapped layer or an RNN cell), so that each layer the test
    makes gets its own. `input_data` (an array, a list of arrays, or a dict of the call's
    arguments) overrides `input_shape`. Outputs are compared as the layer computes them
    without `training=True`, where Dropout, GaussianNoise and the Random* layers are
    deterministic."""
    call_kwargs = dict(call_kwargs or {})

    def make():
        return layer_cls(**(init_kwargs() if callable(init_kwargs) else init_kwargs or {}))

    data = input_data if input_data is not None else _make_data(input_shape, input_dtype, 0)
    layer = make()
    if supports_masking is not None:
        assert layer.supports_masking == supports_masking, \
            f"{layer_cls.__name__}.supports_masking is {layer.supports_masking}"
    out = _call(layer, data, call_kwargs)
    assert layer.built, f"{layer_cls.__name__} is not built after its first call"
    if expected_num_trainable_weights is not None:
        assert len(layer.trainable_weights) == expected_num_trainable_weights, \
            f"{layer.name}: {len(layer.trainable_weights)} trainable weights"
    if expected_num_non_trainable_weights is not None:
        assert len(layer.non_trainable_weights) == expected_num_non_trainable_weights, \
            f"{layer.name}: {len(layer.non_trainable_weights)} non-trainable weights"
    _check_output(layer, data, out, expected_output_shape, expected_output_dtype, call_kwargs)
    _check_graph(layer, data, out, call_kwargs)
    if run_config_check:
        _check_config(layer, layer_cls, data, out, call_kwargs, set(config_exempt))
    if run_saving_check:
        model = _functional_model(make(), data, input_dtype, call_kwargs)
        model.layers[-1].set_weights(layer.get_weights())
        _check_saving(model, data, saving_formats, tmp_path, custom_objects)
    if run_training_check and layer.trainable_weights:
        _check_training(_functional_model(make(), data, input_dtype, call_kwargs), data)
    return layer

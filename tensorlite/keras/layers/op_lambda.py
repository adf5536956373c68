"""TFOpLambda: a TensorFlow function called on Keras symbolic tensors, as a layer.

TF 2's Keras records `tf.concat([a, b], axis=-1)`, `tf.nn.relu(x)`, `x[:, 0]` or `x * 2`
on `tf.keras.Input` tensors as layers of the functional model (named "tf.concat",
"tf.nn.relu", "tf.__operators__.getitem", "tf.math.multiply"), which tensorlite's API
functions hand over through framework/symbolic_dispatch.py. The layer holds the function's
public path (`function`: "math.reduce_sum") and nothing else; the call's other arguments are
the node's, positional ones after the first turned into keyword arguments as Keras 2 does,
so that a saved config names each. Loading resolves the path among tensorlite's public
functions only: a file can name a function, never supply code; in safe mode, only a
function free of effects (no printing, files or Python callbacks: op_lambda_effects.py).
`SlicingOpLambda` is Keras 2's name for the `[...]` layer, whose slices a config holds as
{start, stop, step} dicts.

Example:
    >>> x = tf.keras.Input(shape=(4,))
    >>> y = tf.concat([tf.nn.relu(x), x[:, :2] * 2.0], axis=-1)
    >>> [layer.name for layer in tf.keras.Model(x, y).layers]
    ['tf.nn.relu', 'tf.__operators__.getitem', 'tf.math.multiply', 'tf.concat']
"""
import inspect
import types

from tensorlite.keras.layers.layer import Layer

_ELLIPSIS = {"class_name": "__ellipsis__"}


def encode_slice_spec(spec):
    """A `[...]` key in JSON's terms (Keras 2's): slices as {start, stop, step}, `...` as
    {"class_name": "__ellipsis__"}, a tuple as a list."""
    if isinstance(spec, tuple):
        return [encode_slice_spec(s) for s in spec]
    if isinstance(spec, slice):
        return {"start": spec.start, "stop": spec.stop, "step": spec.step}
    if spec is Ellipsis:
        return dict(_ELLIPSIS)
    return spec


def decode_slice_spec(spec):
    if isinstance(spec, list):
        return tuple(decode_slice_spec(s) for s in spec)
    if isinstance(spec, dict) and set(spec) == {"start", "stop", "step"}:
        return slice(spec["start"], spec["stop"], spec["step"])
    if spec == _ELLIPSIS:
        return Ellipsis
    return spec


def _getitem(tensor, slice_spec):
    return tensor[decode_slice_spec(slice_spec)]


def _add(x, y):
    return x + y


# TF's `tf.__operators__` functions (what Keras 2 records for `+` and `[...]`)
_OPERATORS = {"add": _add, "getitem": _getitem}


def api_function(symbol):
    """The public tensorlite function at `symbol` ("concat", "math.reduce_sum",
    "__operators__.getitem"); a ValueError for anything else."""
    import tensorlite  # noqa: PLC0415 - the public namespace, loaded by now
    parts = str(symbol).split(".")
    if parts[0] == "__operators__" and len(parts) == 2 and parts[1] in _OPERATORS:
        return _OPERATORS[parts[1]]
    found = tensorlite
    for part in parts:
        # only modules are looked into: an attribute of any other object may be a property
        # that runs code
        is_module = isinstance(found, types.ModuleType)
        found = getattr(found, part, None) if is_module and not part.startswith("_") \
            else None
        if found is None:
            break
    if found is None or getattr(found, "_tf_api_symbol", None) is None:
        raise ValueError(f"TFOpLambda names the function 'tf.{symbol}', which is not a "
                         f"TensorFlow function tensorlite provides")
    return found


class TFOpLambda(Layer):
    """`function(inputs, **kwargs)` for one public TF function (see the module doc)."""

    _infers_batch = True  # a TF function may reduce, move or keep the batch dimension
    _safe_loaded = False  # made from a config in safe mode: its calls are guarded

    def __init__(self, function, **kwargs):
        from tensorlite.keras import backend  # noqa: PLC0415
        symbol = getattr(function, "_tf_api_symbol", function)
        kwargs.setdefault("name", backend.unique_object_name(f"tf.{symbol}"))
        super().__init__(**kwargs)
        self.symbol = symbol
        self.function = api_function(symbol)
        self.built = True

    @classmethod
    def from_config(cls, config):
        """The layer of a saved config. In safe mode (the default of `load_model`) the
        function must be free of effects (op_lambda_effects.py): `tf.print`,
        `tf.py_function` and the like are a ValueError before anything runs."""
        from tensorlite.keras.layers import op_lambda_effects  # noqa: PLC0415
        from tensorlite.keras.saving.object_registration import in_safe_mode  # noqa: PLC0415
        config = dict(config)
        symbol = config.get("function")
        symbol = getattr(symbol, "_tf_api_symbol", symbol)
        safe = in_safe_mode()
        if safe:
            op_lambda_effects.check_loadable(symbol, api_function(symbol))
        layer = cls(**config)
        layer._safe_loaded = safe
        return layer

    def __call__(self, inputs, *args, **kwargs):
        from tensorlite.keras.engine_symbolic import maybe_symbolic_call  # noqa: PLC0415
        symbolic = maybe_symbolic_call(self, inputs, args, kwargs)
        if symbolic is not None:
            return symbolic
        if self._safe_loaded:  # defence in depth: no op with effects runs
            from tensorlite.keras.layers import op_lambda_effects  # noqa: PLC0415
            with op_lambda_effects.guard(self.symbol):
                return self.function(inputs, *args, **kwargs)
        return self.function(inputs, *args, **kwargs)

    def get_config(self):
        return {"name": self.name, "trainable": self.trainable, "dtype": self.dtype,
                "function": self.symbol}


class SlicingOpLambda(TFOpLambda):
    """Keras 2's class for `tensor[...]` on symbolic tensors (`__operators__.getitem`)."""


def call_on_symbols(symbol, fn, args, kwargs):
    """`fn(*args, **kwargs)` with KerasTensors among the arguments, as a TFOpLambda layer:
    the first argument is the layer's input, the other positional ones become keyword
    arguments where `fn`'s signature names them."""
    args, kwargs = list(args), dict(kwargs)
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        params = []
    if not args and params and params[0].name in kwargs:
        args = [kwargs.pop(params[0].name)]
    named = [p.name for p in params[1:len(args)]
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
    if len(named) == len(args) - 1:
        kwargs.update(zip(named, args[1:]))
        args = args[:1]
    if not args:
        raise TypeError(f"tf.{symbol} was called on symbolic tensors without positional "
                        f"arguments")
    return layer_for(symbol)(args[0], *args[1:], **kwargs)


def layer_for(symbol):
    """A new op layer for the function at `symbol`."""
    cls = SlicingOpLambda if symbol == "__operators__.getitem" else TFOpLambda
    return cls(symbol)

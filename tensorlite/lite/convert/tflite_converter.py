"""`tf.lite.TFLiteConverter`, `tf.lite.Optimize`, `tf.lite.OpsSet` and the seed's
`convert_savedmodel.convert` spelling.

Example:
    >>> converter = tf.lite.TFLiteConverter.from_keras_model(model)
    >>> converter.optimizations = [tf.lite.Optimize.DEFAULT]
    >>> open("model.tflite", "wb").write(converter.convert())  # doctest: +SKIP
"""
import enum

from tensorlite.framework import dtypes, nest
from tensorlite.framework.tensor_spec import TensorSpec
from tensorlite.graph.capture import Capture, capture
from tensorlite.lite import flatbuf
from tensorlite.lite.convert.converter import lower, model_dict


class Optimize(enum.Enum):
    """`tf.lite.Optimize`: DEFAULT quantizes (weights to int8; activations too with a
    representative dataset); the two older names mean the same, as in TensorFlow."""
    DEFAULT = "DEFAULT"
    OPTIMIZE_FOR_SIZE = "OPTIMIZE_FOR_SIZE"
    OPTIMIZE_FOR_LATENCY = "OPTIMIZE_FOR_LATENCY"


class OpsSet(enum.Enum):
    """`tf.lite.OpsSet`."""
    TFLITE_BUILTINS = "TFLITE_BUILTINS"
    TFLITE_BUILTINS_INT8 = "TFLITE_BUILTINS_INT8"
    SELECT_TF_OPS = "SELECT_TF_OPS"
    EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8 = \
        "EXPERIMENTAL_TFLITE_BUILTINS_ACTIVATIONS_INT16_WEIGHTS_INT8"


class TargetSpec:
    """`converter.target_spec`: `supported_ops` and `supported_types` ([tf.float16] for
    float16 weights)."""

    def __init__(self):
        self.supported_ops = {OpsSet.TFLITE_BUILTINS}
        self.supported_types = set()


def _concrete_capture(concrete):
    graph = concrete.graph
    signature = [TensorSpec(graph.specs[s][0], graph.specs[s][1]) for s in graph.placeholders]
    return Capture([graph, graph], signature)


def _saved_model_capture(saved_model_dir, key, tags):
    """(Capture, output names) of a SavedModel's signature function."""
    from tensorlite.saved_model.load import _Spec, load  # noqa: PLC0415
    loaded = load(saved_model_dir, tags)
    signatures = getattr(loaded, "signatures", None) or {}
    if key not in signatures:
        raise ValueError(f"Invalid signature key '{key}' found. Valid keys are "
                         f"'{', '.join(sorted(signatures))}' (SavedModel {saved_model_dir})")
    fn = signatures[key]
    args, kwargs = fn.structured_input_signature or ((), {})
    names = sorted(kwargs)  # a signature function takes keyword arguments only
    if any(isinstance(a, _Spec) for a in nest.flatten(args)) or \
            not all(isinstance(kwargs[n], _Spec) for n in names):
        raise NotImplementedError(f"signature '{key}' of {saved_model_dir} takes positional "
                                  f"or nested arguments; TFLite conversion takes one tensor "
                                  f"per keyword")
    signature = [TensorSpec(kwargs[n].shape, kwargs[n].dtype, name=n) for n in names]

    def call(*xs):  # op by op: a py_function node would be opaque to the converter
        return fn.call_inline(**dict(zip(names, xs)))

    outputs = fn.structured_outputs
    out_names = sorted(outputs) if isinstance(outputs, dict) else None
    return capture(call, signature), out_names


class TFLiteConverter:
    """Converts a Keras model or concrete functions to TensorFlow Lite's FlatBuffer."""

    def __init__(self, make_capture, output_names=None):
        self._make_capture = make_capture
        self._output_names = output_names
        self.optimizations = []
        self.representative_dataset = None
        self.target_spec = TargetSpec()
        self.inference_input_type = dtypes.float32
        self.inference_output_type = dtypes.float32
        self.allow_custom_ops = False
        self.experimental_new_converter = True
        self.experimental_new_quantizer = True

    @classmethod
    def from_keras_model(cls, model):
        """A converter for a Keras model (inference mode, dynamic batch, batch 1 in the
        file's shapes and -1 in its shape signatures)."""
        return cls(lambda: capture(model), getattr(model, "output_names", None))

    @classmethod
    def from_concrete_functions(cls, funcs, trackable_obj=None):
        """A converter for one ConcreteFunction (`f.get_concrete_function(spec)`), with the
        shapes it was traced at."""
        funcs = list(funcs)
        if len(funcs) != 1:
            raise ValueError(f"from_concrete_functions converts one function; got "
                             f"{len(funcs)}")
        if not hasattr(funcs[0], "graph"):
            raise TypeError(f"expected a ConcreteFunction (f.get_concrete_function(...)), "
                            f"got {type(funcs[0]).__name__}")
        return cls(lambda: _concrete_capture(funcs[0]))

    @classmethod
    def from_saved_model(cls, saved_model_dir, signature_keys=None, tags=None):
        """A converter for one signature (default "serving_default") of a SavedModel
        directory, as TensorFlow writes it (tf.saved_model.save, Keras's model.export):
        loaded by tensorlite.saved_model.load and traced with a dynamic batch dimension.
        The file's signature keeps the SavedModel's input and output names."""
        keys = list(signature_keys or ["serving_default"])
        if len(keys) != 1:
            raise NotImplementedError(f"TFLiteConverter.from_saved_model converts one "
                                      f"signature into one subgraph; got signature_keys="
                                      f"{keys}: convert each separately")
        captured = _saved_model_capture(saved_model_dir, keys[0], tags)
        return cls(lambda: captured[0], captured[1])

    def _quantization_passes(self):
        from tensorlite.lite.convert import quantize  # noqa: PLC0415
        return quantize.passes_for(self)

    def convert(self):
        """The `.tflite` file's bytes."""
        cap = self._make_capture()
        ctx = lower(cap, self._quantization_passes())
        names_out = self._output_names if isinstance(self._output_names, list) and \
            len(self._output_names) == len(ctx.output_tensors) else \
            [f"output_{i}" for i in range(len(ctx.output_tensors))]
        names_in = [getattr(s, "name", None) or f"input_{i}"
                    for i, s in enumerate(cap.signature)]
        return flatbuf.encode(model_dict(ctx, names_in, names_out))


def convert(saved_model_dir=None, output_tflite=None, model=None, output_tflit=None):
    """TF 1.8's `convert_savedmodel.convert(saved_model_dir=..., output_tflite=...)`: writes
    the converted model to `output_tflite` (a Keras `model` may stand in for the directory;
    the seed's spelling `output_tflit` is taken too). Returns the bytes.

    Example:
        >>> data = convert(saved_model_dir="exported", output_tflite="m.tflite")  # +SKIP
    """
    output_tflite = output_tflite if output_tflite is not None else output_tflit
    converter = TFLiteConverter.from_keras_model(model) if model is not None else \
        TFLiteConverter.from_saved_model(saved_model_dir)
    data = converter.convert()
    if output_tflite is not None:
        from tensorlite.framework.atomic_files import write_bytes  # noqa: PLC0415
        write_bytes(str(output_tflite), data)
    return data

"""What TensorFlow.js 4's Layers API can rebuild from a Keras topology, checked before a
model is written (an unsupported layer, activation or setting is a clear error naming it,
never a model that TF.js loads and computes differently).

The class lists are the names `@tensorflow/tfjs-layers` 4.22 registers for deserialization.
TF.js ignores config keys it does not know, so the settings it has no equivalent of are
listed per layer with the only value it computes correctly; any other value is refused.
"""
from tensorlite.framework import errors

TFJS_VERSION = "4.22.0"

LAYERS = frozenset("""
Activation Add AlphaDropout Average AveragePooling1D AveragePooling2D AveragePooling3D
BatchNormalization Bidirectional CategoryEncoding CenterCrop Concatenate Conv1D Conv2D
Conv2DTranspose Conv3D Conv3DTranspose ConvLSTM2D Cropping2D Dense DepthwiseConv2D Dot Dropout
ELU Embedding Flatten GRU GaussianDropout GaussianNoise GlobalAveragePooling1D
GlobalAveragePooling2D GlobalMaxPooling1D GlobalMaxPooling2D InputLayer LSTM LayerNormalization
LeakyReLU Masking MaxPooling1D MaxPooling2D MaxPooling3D Maximum Minimum Multiply PReLU Permute
RandomHeight RandomWidth ReLU RepeatVector Rescaling Reshape Resizing SeparableConv2D SimpleRNN
Softmax SpatialDropout1D ThresholdedReLU TimeDistributed UpSampling2D ZeroPadding2D
Sequential Functional Model
""".split())

ACTIVATIONS = frozenset("""elu selu relu relu6 linear sigmoid hard_sigmoid softplus softsign
tanh softmax log_softmax gelu mish swish""".split())

INITIALIZERS = frozenset("""Zeros Ones Constant RandomUniform RandomNormal TruncatedNormal
Identity VarianceScaling GlorotUniform GlorotNormal HeNormal HeUniform LecunNormal LecunUniform
LeCunNormal LeCunUniform Orthogonal""".split())

# Settings TF.js has no equivalent of (it would ignore them): the value it computes.
_CONV = {"groups": 1}
_RNN = {"time_major": False}
_POOL = {"keepdims": False}
NEUTRAL_ONLY = {
    "Conv1D": _CONV, "Conv2D": _CONV, "Conv3D": _CONV, "SeparableConv2D": _CONV,
    "Conv2DTranspose": {**_CONV, "output_padding": None},
    "Conv3DTranspose": {**_CONV, "output_padding": None},
    "ReLU": {"negative_slope": 0.0, "threshold": 0.0},
    "LSTM": _RNN, "SimpleRNN": _RNN, "GRU": {**_RNN, "reset_after": False},
    "GlobalAveragePooling1D": _POOL, "GlobalAveragePooling2D": _POOL,
    "GlobalMaxPooling1D": _POOL, "GlobalMaxPooling2D": _POOL,
    "BatchNormalization": {"synchronized": False, "renorm": False,
                           "virtual_batch_size": None},
    "LayerNormalization": {"rms_scaling": False},
    "Embedding": {"sparse": False},
    "Dense": {"lora_rank": None},
}


def _unsupported(layer_name, class_name, what):
    return errors.UnimplementedError(
        None, None, f"layer {layer_name!r} ({class_name}): {what}; TensorFlow.js "
                    f"{TFJS_VERSION} cannot load it, so the model cannot be converted to the "
                    f"TF.js Layers format (the Graph format, tfjs_graph_model, may hold it)")


def check_layer(class_name, config):
    """Raises UnimplementedError naming the layer unless TF.js supports its class, its
    activations and initializers, and every setting it sets."""
    name = config.get("name", "?")
    if class_name not in LAYERS:
        raise _unsupported(name, class_name, "TF.js has no such layer")
    for key, neutral in NEUTRAL_ONLY.get(class_name, {}).items():
        if key in config and config[key] != neutral and not (neutral is False
                                                               and config[key] is None):
            raise _unsupported(name, class_name, f"{key}={config[key]!r} has no TF.js "
                                                 f"equivalent (only {neutral!r})")
    for key, value in config.items():
        if key.endswith("activation") and isinstance(value, str) and value not in ACTIVATIONS:
            raise _unsupported(name, class_name, f"{key}={value!r} is not a TF.js activation")
        if key.endswith("activation") and isinstance(value, dict):
            raise _unsupported(name, class_name, f"{key} is a custom function")
        if key.endswith("initializer") and isinstance(value, dict) \
                and value.get("class_name") not in INITIALIZERS:
            raise _unsupported(name, class_name, f"{key} {value.get('class_name')!r} is not "
                                                 f"a TF.js initializer")
    dtype = config.get("dtype")
    if dtype not in (None, "float32", "int32") and class_name != "InputLayer":
        raise _unsupported(name, class_name, f"dtype {dtype!r} (TF.js layers compute in "
                                             f"float32; set the global policy to float32)")

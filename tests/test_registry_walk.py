"""The registry is the only op table: every op declares each consumer's rule beside its
registration, or says explicitly that the consumer does not support it
(`declare(op, unsupported="onnx tflite")`), and the graph layer's properties are read from
the ops, never from tables of op names."""
import importlib
import pkgutil

import pytest

import tensorlite as tf
from tensorlite.framework import registry

# Ops registered through factories whose call sites do not yet pass their `unsupported=`
# markers (op -> the consumers still undeclared). This list may only shrink: a new op
# missing a rule fails the walk, and so does an entry here that is now declared.
KNOWN_GAPS = {
    "ApplyAdaMax": "onnx tflite batch tf_import",
    "ApplyAdadelta": "onnx tflite batch tf_import",
    "ApplyAdagradV2": "onnx tflite batch tf_import",
    "ApplyAdam": "onnx tflite batch tf_import",
    "ApplyFtrlV2": "onnx tflite batch tf_import",
    "ApplyGradientDescent": "onnx tflite batch tf_import",
    "ApplyKerasMomentum": "onnx tflite batch tf_import",
    "ApplyRMSProp": "onnx tflite batch tf_import",
    "ArgMax": "tflite batch",
    "ArgMin": "tflite batch",
    "AsString": "onnx tflite batch",
    "BytesSplit": "tf onnx tflite batch tf_import",
    "Case": "tf onnx tflite batch tf_import",
    "Conv2DBackpropFilter": "tf onnx tflite tf_import",
    "Conv2DBackpropInput": "tf onnx tflite tf_import",
    "DepthwiseConv2dNativeBackpropFilter": "tf onnx tflite tf_import",
    "DepthwiseConv2dNativeBackpropInput": "tf onnx tflite tf_import",
    "EagerPyFunc": "tf onnx tflite batch tf_import",
    "FFT": "onnx tflite",
    "FFT2D": "onnx tflite",
    "FFT3D": "onnx tflite",
    "FlushSummaryWriter": "tf onnx tflite batch tf_import",
    "IFFT": "onnx tflite",
    "IFFT2D": "onnx tflite",
    "IFFT3D": "onnx tflite",
    "IRFFT": "onnx tflite",
    "IRFFT2D": "onnx tflite",
    "IRFFT3D": "onnx tflite",
    "If": "tf onnx tflite batch tf_import",
    "KerasApplyGradients": "tf onnx tflite batch tf_import",
    "KerasLionUpdate": "tf onnx tflite batch tf_import",
    "KerasMetric": "tf onnx tflite batch tf_import",
    "KerasNadamUpdate": "tf onnx tflite batch tf_import",
    "LeakyReluGrad": "tf onnx tflite tf_import",
    "Multinomial": "tf onnx tflite batch tf_import",
    "PrintV2": "tf onnx tflite batch tf_import",
    "PyFunc": "tf onnx tflite batch tf_import",
    "PyFuncStateless": "tf onnx tflite batch tf_import",
    "RFFT": "onnx tflite",
    "RFFT2D": "onnx tflite",
    "RFFT3D": "onnx tflite",
    "RaggedAssertSameSplits": "tf onnx tflite batch tf_import",
    "RaggedBatchGatherPositions": "tf onnx tflite batch tf_import",
    "RaggedColumn": "tf onnx tflite batch tf_import",
    "RaggedConcatRows": "tf onnx tflite batch tf_import",
    "RaggedGatherRows": "tf onnx tflite batch",
    "RaggedLengthsFromPadding": "tf onnx tflite batch tf_import",
    "RaggedPositionsInRows": "tf onnx tflite batch tf_import",
    "RaggedReduceJoin": "tf onnx tflite batch tf_import",
    "RaggedRowLengths": "tf onnx tflite batch tf_import",
    "RaggedRowSlice": "tf onnx tflite batch tf_import",
    "RaggedSegmentLayout": "tf onnx tflite batch tf_import",
    "RaggedSegmentOrder": "tf onnx tflite batch tf_import",
    "RaggedSplitsFromLengths": "tf onnx tflite batch tf_import",
    "RaggedSplitsFromRowIds": "onnx tflite batch tf_import",
    "RaggedSplitsFromRowIdsAndCount": "onnx tflite batch tf_import",
    "RaggedSplitsFromSparse": "tf onnx tflite batch tf_import",
    "RaggedTensorToSparse": "tf onnx tflite batch tf_import",
    "RaggedTileRows": "tf onnx tflite batch tf_import",
    "RaggedUniformSplits": "onnx tflite batch tf_import",
    "RaggedValidateSplits": "tf onnx tflite batch tf_import",
    "RaggedValueRowIds": "tf onnx tflite batch tf_import",
    "RandomBinomial": "tf onnx tflite batch tf_import",
    "RandomGamma": "tf onnx tflite batch tf_import",
    "RandomPoissonV2": "tf onnx tflite batch tf_import",
    "RandomShuffle": "tf onnx tflite batch tf_import",
    "RandomStandardNormal": "tf onnx tflite batch tf_import",
    "RandomUniform": "tf onnx tflite batch tf_import",
    "RandomUniformFullInt": "tf onnx tflite batch tf_import",
    "RandomUniformInt": "tf onnx tflite batch tf_import",
    "ReduceJoin": "onnx tflite batch",
    "RegexFullMatch": "onnx tflite batch",
    "RegexReplace": "onnx tflite batch",
    "Relu6Grad": "tf onnx tflite tf_import",
    "ReluGrad": "tf onnx tflite tf_import",
    "ResizeArea": "tf onnx tflite batch tf_import",
    "ResizeAreaGrad": "tf onnx tflite batch tf_import",
    "ResizeBicubic": "tf onnx tflite batch tf_import",
    "ResizeBicubicGrad": "tf onnx tflite batch tf_import",
    "ResizeBilinear": "tf onnx tflite batch tf_import",
    "ResizeBilinearGrad": "tf onnx tflite batch tf_import",
    "ScaleAndTranslate": "tf onnx tflite batch tf_import",
    "ScaleAndTranslateGrad": "tf onnx tflite batch tf_import",
    "StatelessCase": "tf onnx tflite batch tf_import",
    "StatelessIf": "tf onnx tflite batch tf_import",
    "StatelessMultinomial": "tf onnx tflite batch tf_import",
    "StatelessRandomBinomial": "tf onnx tflite batch tf_import",
    "StatelessRandomGammaV2": "tf onnx tflite batch tf_import",
    "StatelessRandomNormalV2": "tf onnx tflite batch tf_import",
    "StatelessRandomPoisson": "tf onnx tflite batch tf_import",
    "StatelessRandomUniformFullIntV2": "tf onnx tflite batch tf_import",
    "StatelessRandomUniformIntV2": "tf onnx tflite batch tf_import",
    "StatelessRandomUniformV2": "tf onnx tflite batch tf_import",
    "StatelessTruncatedNormalV2": "tf onnx tflite batch tf_import",
    "StatelessWhile": "tf onnx tflite batch tf_import",
    "StringFormat": "tf onnx tflite batch tf_import",
    "StringJoin": "tf onnx tflite batch",
    "StringLength": "onnx tflite batch",
    "StringLower": "onnx tflite batch",
    "StringNGrams": "onnx tflite batch",
    "StringSplitV2": "onnx tflite batch",
    "StringSplitV2Sparse": "onnx tflite batch tf_import",
    "StringStrip": "onnx tflite batch",
    "StringToHashBucket": "tf onnx tflite batch",
    "StringToHashBucketFast": "onnx tflite batch",
    "StringToHashBucketStrong": "tf onnx tflite batch",
    "StringToNumber": "tf onnx tflite batch",
    "StringUpper": "onnx tflite batch",
    "Substr": "tf onnx tflite batch",
    "TensorScatterAdd": "onnx tflite batch",
    "TensorScatterMax": "onnx tflite batch",
    "TensorScatterMin": "onnx tflite batch",
    "TensorScatterSub": "onnx tflite batch",
    "TensorScatterUpdate": "onnx tflite batch",
    "TruncatedNormal": "tf onnx tflite batch tf_import",
    "UnsortedSegmentJoin": "tf onnx tflite batch",
    "UnsortedSegmentMax": "onnx tflite batch",
    "UnsortedSegmentMin": "onnx tflite batch",
    "UnsortedSegmentProd": "onnx tflite batch",
    "UnsortedSegmentSum": "onnx tflite batch",
    "While": "tf onnx tflite batch tf_import",
    "WriteSummary": "tf onnx tflite batch tf_import",
}


def _import_everything():
    """Every tensorlite module, so that lazily registered op families are in the walk."""
    for info in pkgutil.walk_packages(tf.__path__, "tensorlite."):
        if info.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(info.name)
        except ImportError:  # an optional extra that is not installed
            pass


def _missing():
    """'Op: rule' for each op and consumer with neither a rule nor an unsupported marker."""
    _import_everything()
    missing = []
    for op in list(registry.REGISTRY.values()):
        for consumer in registry.CONSUMERS:
            if not registry.declared(op, consumer):
                missing.append(f"{op.name}: {consumer}")
        if op.tf is not None and not registry.declared(op, "tf_outputs"):
            missing.append(f"{op.name}: tf_outputs (it has a tf rule)")
    return missing


def _known():
    return {f"{op}: {c}" if c != "tf_outputs" else f"{op}: tf_outputs (it has a tf rule)"
            for op, consumers in KNOWN_GAPS.items() for c in consumers.split()}


def test_every_op_declares_every_consumer_rule_or_unsupported():
    missing = [m for m in _missing() if m not in _known()]
    assert not missing, ("ops without a rule or an explicit unsupported= marker "
                         "(declare it beside the registration):\n  " + "\n  ".join(missing))


def test_known_gaps_only_shrink():
    stale = sorted(_known() - set(_missing()))
    assert not stale, ("declared now: remove from KNOWN_GAPS in this file:\n  " +
                       "\n  ".join(stale))


def test_the_walk_names_a_new_op_without_rules():
    op = registry.Op("_WalkProbe", lambda x: x, None, None, False, True)
    registry.REGISTRY[op.name] = op
    try:
        missing = _missing()
    finally:
        del registry.REGISTRY[op.name]
    assert "_WalkProbe: onnx" in missing and "_WalkProbe: tf" in missing


def test_an_undeclared_attribute_fails():
    with pytest.raises(AttributeError):
        registry.get("Exp").stateful_by_hand = True


def test_declare_rejects_unknown_rules_and_markers():
    op = registry.get("Exp")
    with pytest.raises(TypeError, match="unknown consumer"):
        registry.declare(op, onnxx=None)
    with pytest.raises(TypeError, match="unknown consumers"):
        registry.declare(op, unsupported="onnxx")


def test_commutative_property_drives_cse():
    from tensorlite.graph.ir import Node
    from tensorlite.graph.passes.cse import node_key
    mul, sub = registry.get("Mul"), registry.get("Sub")
    assert mul.commutative and not sub.commutative
    assert node_key(Node(mul, [1, 2], {}, [3]), [1, 2]) == node_key(Node(mul, [2, 1], {}, [4]),
                                                                    [2, 1])
    assert node_key(Node(sub, [1, 2], {}, [3]), [1, 2]) != node_key(Node(sub, [2, 1], {}, [4]),
                                                                    [2, 1])


def test_saved_model_output_names_come_from_the_declarations():
    from tensorlite.saved_model.op_outputs import output_arg
    assert output_arg("MatMul") == "product"
    assert output_arg("BatchMatMulV2") == "output"
    assert output_arg("Relu") == "activations"
    assert output_arg("AddV2") == "z"
    with pytest.raises(tf.errors.UnimplementedError, match="NoSuchTfOp"):
        output_arg("NoSuchTfOp")


def test_callbacks_are_generated_from_the_registry():
    from tensorlite.graph.ir import CALLBACKS
    assert {"EagerPyFunc", "PyFunc", "PrintV2", "KerasMetric"} <= CALLBACKS
    assert "PyFuncStateless" not in CALLBACKS  # declared free of effects
    assert registry.get("PyFuncStateless").varying

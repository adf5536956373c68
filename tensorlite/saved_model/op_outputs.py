"""The output argument names of TensorFlow's ops, from their public OpDefs
(`tensorflow/core/ops/*.cc`): a FunctionDef names a node's output `node:ARG:index`, so a
SavedModel writer must know them. Only the ops tensorlite writes (their `tf` rules) are
listed; an op missing here is an UnimplementedError at save, naming it.

Example:
    >>> output_arg("MatMul")
    'product'
"""
from tensorlite.framework import errors

_UNARY_Y = ("Abs Acos Asin Atan Ceil Cos Cosh Erf Exp Expm1 Floor Inv Invert IsFinite IsInf "
            "IsNan Log Log1p LogicalNot Neg Reciprocal Rint Round Rsqrt Sigmoid Sign Sin Sinh "
            "Sqrt Square Tan Tanh Cast Transpose ZerosLike OnesLike ComplexAbs").split()
_BINARY_Z = ("AddV2 Sub Mul RealDiv Div DivNoNan FloorDiv FloorMod TruncateDiv TruncateMod Pow "
             "Maximum Minimum SquaredDifference Equal NotEqual Less LessEqual Greater "
             "GreaterEqual LogicalAnd LogicalOr LogicalXor BitwiseAnd BitwiseOr BitwiseXor "
             "LeftShift RightShift Atan2 Xdivy Xlogy").split()
_ACTIVATIONS = "Relu Relu6 LeakyRelu Elu Selu Softplus Softsign".split()
_OUTPUT = ("BiasAdd BatchMatMulV2 BatchMatMulV3 Conv2D DepthwiseConv2dNative MaxPool AvgPool "
           "Reshape ConcatV2 Pack Identity IdentityN StopGradient Sum Mean Max Min Prod Any All "
           "ArgMax ArgMin Shape Size Rank StridedSlice Slice Squeeze ExpandDims Tile PadV2 Pad "
           "MirrorPad SelectV2 Select GatherV2 GatherNd Fill Range OneHot Einsum BroadcastTo "
           "ClipByValue Const ReverseV2 Roll Unpack Split SplitV "
           "StatefulPartitionedCall PartitionedCall StringLower StringUpper StaticRegexReplace "
           "DenseBincount RaggedBincount StaticRegexFullMatch StringLength StringStrip "
           "ReduceJoin TensorScatterUpdate TensorScatterAdd TensorScatterSub TensorScatterMin "
           "TensorScatterMax UnsortedSegmentSum UnsortedSegmentMax UnsortedSegmentMin "
           "UnsortedSegmentProd Conj Real Imag Angle FFT IFFT FFT2D IFFT2D FFT3D IFFT3D RFFT "
           "IRFFT RFFT2D IRFFT2D RFFT3D IRFFT3D").split()

OUTPUT_ARGS = {
    **{op: "y" for op in _UNARY_Y},
    **{op: "z" for op in _BINARY_Z},
    **{op: "activations" for op in _ACTIVATIONS},
    **{op: "output" for op in _OUTPUT},
    "MatMul": "product", "Softmax": "softmax", "LogSoftmax": "logsoftmax", "AddN": "sum",
    "ReadVariableOp": "value", "Placeholder": "output", "Cumsum": "out", "Cumprod": "out",
    "LookupTableFindV2": "values", "LookupTableSizeV2": "size",
    "StringToHashBucketFast": "output", "AsString": "output", "RaggedTensorToTensor": "result",
    "ReadFile": "contents", "Complex": "out",
}


def output_arg(op_name):
    """The name of TensorFlow op `op_name`'s output argument (all its outputs share it for
    the list-valued ones: Unpack, Split, IdentityN)."""
    try:
        return OUTPUT_ARGS[op_name]
    except KeyError:
        raise errors.UnimplementedError(
            None, None, f"SavedModel export: TensorFlow op {op_name} is not in "
            f"tensorlite/saved_model/op_outputs.py (the output names of TensorFlow's ops); "
            f"add its OpDef's output argument name there") from None


__all__ = ["output_arg", "OUTPUT_ARGS"]

"""`tf.estimator.export`: what `Estimator.export_saved_model` takes and writes —
ServingInputReceiver (the serving inputs and the features model_fn gets from them),
build_raw_serving_input_receiver_fn, and the ExportOutputs a PREDICT EstimatorSpec's
`export_outputs` maps signature names to.

Example:
    >>> fn = tf.estimator.export.build_raw_serving_input_receiver_fn(
    ...     {"x": tf.compat.v1.placeholder(tf.float32, [None, 1])})
    >>> est.export_saved_model("/tmp/export", fn)     # doctest: +SKIP
"""
import collections

SINGLE_INPUT_NAME = "input"      # TF's name for a receiver given as one tensor
SINGLE_FEATURE_NAME = "feature"
SINGLE_OUTPUT_NAME = "output"


class ServingInputReceiver(collections.namedtuple(
        "ServingInputReceiver", ["features", "receiver_tensors",
                                 "receiver_tensors_alternatives"])):
    """The serving signature's inputs (`receiver_tensors`: placeholders, a dict or one
    tensor) and the `features` model_fn receives, computed from them."""

    def __new__(cls, features, receiver_tensors, receiver_tensors_alternatives=None):
        if features is None:
            raise ValueError("features must be defined.")
        if receiver_tensors is None:
            raise ValueError("receiver_tensors must be defined.")
        if not isinstance(receiver_tensors, dict):
            receiver_tensors = {SINGLE_INPUT_NAME: receiver_tensors}
        for name in receiver_tensors:
            if not isinstance(name, str):
                raise ValueError(f"receiver_tensors keys must be strings: {name!r}")
        return super().__new__(cls, features, receiver_tensors, receiver_tensors_alternatives)


def build_raw_serving_input_receiver_fn(features, default_batch_size=None):
    """A serving_input_receiver_fn whose inputs are placeholders shaped like `features`
    (a dict of tensors or one tensor; batch dimension `default_batch_size`), passed to
    model_fn unchanged."""
    def serving_input_receiver_fn():
        from tensorlite.compat.v1.placeholder import placeholder  # noqa: PLC0415

        def make(name, t):
            shape = t.shape.as_list() if t.shape.rank is not None else None
            if shape:
                shape = [default_batch_size] + shape[1:]
            return placeholder(t.dtype, shape, name=name)
        if isinstance(features, dict):
            phs = {k: make(k, t) for k, t in features.items()}
            return ServingInputReceiver(phs, phs)
        ph = make(SINGLE_FEATURE_NAME, features)
        return ServingInputReceiver(ph, {SINGLE_INPUT_NAME: ph})
    return serving_input_receiver_fn


class ExportOutput:
    """A signature's outputs: `outputs`, a dict of name -> tensor."""

    outputs = None


class PredictOutput(ExportOutput):
    """`tf.estimator.export.PredictOutput(outputs)`: a tensor or dict of tensors."""

    def __init__(self, outputs):
        if not isinstance(outputs, dict):
            outputs = {SINGLE_OUTPUT_NAME: outputs}
        for k in outputs:
            if not isinstance(k, str):
                raise ValueError(f"Prediction output key must be a string; got {k!r}.")
        self.outputs = dict(outputs)


class RegressionOutput(ExportOutput):
    """`tf.estimator.export.RegressionOutput(value)`: one float tensor named `outputs`."""

    def __init__(self, value):
        self.outputs = {"outputs": value}


def signature_outputs(spec):
    """{signature key: {output name: tensor}} of a PREDICT EstimatorSpec, as TF derives
    them: export_outputs, or PredictOutput(predictions) as `serving_default`; a single
    export output without that key serves as `serving_default` too."""
    exports = spec.export_outputs
    if exports is None:
        exports = {"serving_default": PredictOutput(spec.predictions)}
    for key, out in exports.items():
        if not isinstance(out, ExportOutput):
            raise ValueError(f"export_outputs[{key!r}] must be an ExportOutput (such as "
                             f"tf.estimator.export.PredictOutput), got {type(out).__name__}")
    outs = {k: dict(v.outputs) for k, v in exports.items()}
    if "serving_default" not in outs:
        if len(outs) != 1:
            raise ValueError(f"Multiple export_outputs were provided, but none of them is "
                             f"specified as the default. Use 'serving_default' as one key. "
                             f"Got: {sorted(outs)}")
        outs["serving_default"] = next(iter(outs.values()))
    return outs

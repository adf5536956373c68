"""`model.summary()` in Keras's table layout."""
import numpy as np


from tensorlite.keras.layers.layer import Layer


def _count(weights):
    return int(sum(int(np.prod(w.shape.as_list())) for w in weights))


def _output_shapes(model):
    """Layer -> output shape text, from the functional graph or a probe run."""
    from tensorlite.keras.engine.functional import Functional  # noqa: PLC0415
    from tensorlite.keras.engine.sequential import Sequential  # noqa: PLC0415
    shapes = {}
    if isinstance(model, Functional):
        for t in model.inputs:  # its InputLayer's row, as Keras shows it: [(None, 784)]
            if t.input_layer is not None:
                shapes[id(t.input_layer)] = str([tuple(t.shape.as_list())])
        for node in model._nodes:
            outs = [tuple(t.shape.as_list()) for t in node.outputs]
            shapes[id(node.layer)] = str(outs[0] if len(outs) == 1 else outs)
    elif isinstance(model, Sequential) and model._input_batch_shape is not None:
        # the symbolic graph tf.keras 2 builds for a Sequential: unknown dimensions stay
        # None and the input's dtype is the model's (strings for a text first layer)
        for layer, t in zip(model.layers, model._symbolic_graph()[1:]):
            shapes[id(layer)] = str(tuple(t.shape.as_list()))
    return shapes


def print_summary(model, line_length=None, positions=None, print_fn=None):
    print_fn = print_fn or print
    line_length = line_length or 65
    positions = positions or [0.45, 0.85, 1.0]
    cols = [int(line_length * p) for p in positions]
    shapes = _output_shapes(model)

    def row(fields):
        line = ""
        for i, text in enumerate(fields):
            line = (line + " " + str(text))[:cols[i]].ljust(cols[i])
        print_fn(line.rstrip())
    print_fn(f'Model: "{model.name}"')
    print_fn("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #"])
    print_fn("=" * line_length)
    layers = [t for t in model.layers if isinstance(t, Layer)]
    for i, layer in enumerate(layers):
        params = _count(layer.weights) if layer.built else 0
        row([f"{layer.name} ({type(layer).__name__})", shapes.get(id(layer), "multiple"),
             f"{params}"])
        if i < len(layers) - 1:
            print_fn("")
    print_fn("=" * line_length)
    trainable = _count(model.trainable_weights)
    non_trainable = _count(model.non_trainable_weights)
    print_fn(f"Total params: {trainable + non_trainable:,}")
    print_fn(f"Trainable params: {trainable:,}")
    print_fn(f"Non-trainable params: {non_trainable:,}")
    print_fn("_" * line_length)


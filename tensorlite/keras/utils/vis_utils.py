"""`tf.keras.utils.plot_model` and `model_to_dot`: the model's layer graph as Graphviz.

The DOT text is built here; rendering to PNG/SVG/PDF runs Graphviz's `dot` program (the
`pydot`/graphviz extra of Keras). Without it `plot_model` raises ImportError saying what
to install; a `.dot` target needs nothing.

Example:
    >>> tf.keras.utils.plot_model(model, "model.dot", show_shapes=True)  # doctest: +SKIP
"""
import os
import shutil
import subprocess
import tempfile

__all__ = ["model_to_dot", "plot_model"]


def _shape_text(t):
    shape = getattr(t, "shape", None)
    return "?" if shape is None else str(tuple(None if d is None else d for d in
                                                shape.as_list()))


def _graph(model):
    """(layers in order, [(from_layer, to_layer)], {id(layer): output shape text}) for
    functional and sequential models."""
    nodes = getattr(model, "_nodes", None)
    if nodes:
        layers, edges, shapes = [], [], {}
        for node in nodes:
            if node.layer not in layers:
                layers.append(node.layer)
            outs = getattr(node, "outputs", None)
            if outs:
                shapes[id(node.layer)] = ", ".join(_shape_text(t) for t in outs)
            for parent in node.parents():
                edges.append((parent.layer, node.layer))
        return layers, edges, shapes
    layers = list(model.layers)
    shapes = {}
    for layer in layers:
        shape = getattr(layer, "output_shape", None)
        if shape is not None:
            shapes[id(layer)] = str(tuple(shape))
    return layers, list(zip(layers, layers[1:])), shapes


def _label(layer, shape, show_shapes, show_dtype, show_layer_names):
    kind = type(layer).__name__
    head = f"{layer.name}: {kind}" if show_layer_names else kind
    if show_dtype:
        head += f" | {getattr(layer, 'dtype', None) or 'float32'}"
    if show_shapes:
        head += f" | output: {shape or '?'}"
    return head.replace('"', '\\"')


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=96, subgraph=False, **kwargs):
    """The model as DOT source (a str; Keras returns a pydot.Dot, whose to_string() this
    equals in content)."""
    layers, edges, shapes = _graph(model)
    ids = {id(layer): f"L{i}" for i, layer in enumerate(layers)}
    lines = [f'digraph "{model.name}" {{', f'  graph [rankdir={rankdir}, dpi={dpi}];',
             '  node [shape=record];']
    for layer in layers:
        label = _label(layer, shapes.get(id(layer)), show_shapes, show_dtype,
                       show_layer_names)
        lines.append(f'  {ids[id(layer)]} [label="{label}"];')
    for a, b in edges:
        if id(a) in ids and id(b) in ids:
            lines.append(f"  {ids[id(a)]} -> {ids[id(b)]};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=True, rankdir="TB", expand_nested=False, dpi=96,
               layer_range=None, show_layer_activations=False, show_trainable=False,
               **kwargs):
    """Writes the model's graph to `to_file` (.png, .svg, .pdf, ... through Graphviz's
    `dot`; .dot as text)."""
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by "
                         "calling `build()` or by calling the model on a batch of data.")
    dot = model_to_dot(model, show_shapes, show_dtype, show_layer_names, rankdir,
                       expand_nested, dpi)
    ext = os.path.splitext(to_file)[1].lower().lstrip(".") or "png"
    directory = os.path.dirname(os.path.abspath(to_file))
    if ext in ("dot", "gv"):
        _write_atomic(to_file, dot.encode())
        return None
    exe = shutil.which("dot")
    if exe is None:
        raise ImportError("You must install pydot (`pip install pydot`) and install graphviz "
                          "(see instructions at https://graphviz.gitlab.io/download/) for "
                          "`plot_model` to work (tensorlite needs Graphviz's `dot` program "
                          "on PATH; or save as .dot text: plot_model(model, 'model.dot')).")
    with tempfile.NamedTemporaryFile(dir=directory, suffix="." + ext, delete=False) as tmp:
        tmp_path = tmp.name
    try:
        subprocess.run([exe, f"-T{ext}", "-o", tmp_path], input=dot.encode(), check=True,
                       capture_output=True, timeout=60)
        os.replace(tmp_path, to_file)
    finally:
        if os.path.exists(tmp_path):
            os.unlink(tmp_path)
    return None


def _write_atomic(path, data):
    directory = os.path.dirname(os.path.abspath(path))
    with tempfile.NamedTemporaryFile(dir=directory, delete=False) as tmp:
        tmp.write(data)
        tmp_path = tmp.name
    os.replace(tmp_path, path)

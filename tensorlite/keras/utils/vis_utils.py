"""`tf.keras.utils.plot_model` and `model_to_dot`: the model's layer graph as Graphviz.

The DOT text is built here (so a `.dot` file needs nothing installed); `model_to_dot`
returns it as a `pydot.Dot`, as Keras does (the `plot` extra: `pip install ".[plot]"`), and
`plot_model` renders PNG/SVG/PDF/... with Graphviz's `dot` program. Without `dot` on PATH,
`plot_model` writes the same graph as a `.dot` file beside the requested one and warns with
the command that renders it.

Example:
    >>> tf.keras.utils.plot_model(model, "model.png", show_shapes=True)  # doctest: +SKIP
"""
import os
import re
import shutil
import subprocess
import warnings

from tensorlite.framework import atomic_files

__all__ = ["model_to_dot", "plot_model"]

INSTALL_HINT = ("install Graphviz (Debian/Ubuntu: `apt-get install graphviz`; macOS: `brew "
                "install graphviz`; others: https://graphviz.org/download/)")


def _shape_text(t):
    shape = getattr(t, "shape", None)
    return "?" if shape is None else str(tuple(None if d is None else d for d in
                                                shape.as_list()))


def _parent_layers(node):
    """The layers whose outputs a functional node consumes (InputLayers included)."""
    from tensorlite.framework import nest  # noqa: PLC0415
    from tensorlite.keras.engine_symbolic import KerasTensor  # noqa: PLC0415
    parents = []
    for t in nest.flatten([node.inputs, list(node.args), list(node.kwargs.values())]):
        if isinstance(t, KerasTensor):
            layer = t.node.layer if t.node is not None else t.input_layer
            if layer is not None and layer not in parents:
                parents.append(layer)
    return parents


def _graph(model):
    """(layers in order, [(from_layer, to_layer)], {id(layer): output shape text}) for
    functional and sequential models."""
    nodes = getattr(model, "_nodes", None)
    if nodes:
        layers = [layer for layer in model.layers if type(layer).__name__ == "InputLayer"]
        edges, shapes = [], {id(layer): _input_shape(layer) for layer in layers}
        for node in nodes:
            if node.layer not in layers:
                layers.append(node.layer)
            outs = getattr(node, "outputs", None)
            if outs:
                shapes[id(node.layer)] = ", ".join(_shape_text(t) for t in outs)
            edges += [(parent, node.layer) for parent in _parent_layers(node)]
        return layers, edges, shapes
    layers = list(model.layers)
    shapes = {}
    for layer in layers:
        shape = getattr(layer, "output_shape", None)
        if shape is not None:
            shapes[id(layer)] = str(tuple(shape))
    return layers, list(zip(layers, layers[1:])), shapes


def _input_shape(layer):
    shape = getattr(layer, "batch_input_shape", None) or getattr(layer, "_batch_input_shape",
                                                                  None)
    return None if shape is None else str(tuple(shape))


def layer_index_range(model, layer_range):
    """Keras's `layer_range=[first, last]`: [start, stop) indices into model.layers of the
    layers whose names the two regular expressions match (re.match)."""
    if layer_range is None:
        return 0, len(model.layers)
    if len(layer_range) != 2 or not all(isinstance(s, str) for s in layer_range):
        raise ValueError(f"layer_range must be a list of two layer-name patterns (str), got "
                         f"{layer_range!r}")
    names = [layer.name for layer in model.layers]
    lower = [i for i, n in enumerate(names) if re.match(layer_range[0], n)]
    upper = [i for i, n in enumerate(names) if re.match(layer_range[1], n)]
    if not lower or not upper:
        raise ValueError(f"Passed layer_names {layer_range} do not match the layer names in "
                         f"the model: {names}")
    if min(lower) > max(upper):
        return min(upper), max(lower) + 1
    return min(lower), max(upper) + 1


def _label(layer, shape, opts):
    kind = type(layer).__name__
    parts = [f"{layer.name}: {kind}" if opts["show_layer_names"] else kind]
    if opts["show_dtype"]:
        parts.append(str(getattr(layer, "dtype", None) or "float32"))
    if opts["show_shapes"]:
        parts.append(f"output: {shape or '?'}")
    activation = getattr(layer, "activation", None)
    if opts["show_layer_activations"] and activation is not None:
        parts.append(f"activation: {getattr(activation, '__name__', str(activation))}")
    if opts["show_trainable"]:
        parts.append(f"trainable: {'T' if getattr(layer, 'trainable', True) else 'F'}")
    text = " | ".join(p.replace("|", "\\|").replace("{", "\\{").replace("}", "\\}")
                      .replace("<", "\\<").replace(">", "\\>") for p in parts)
    return text.replace('"', '\\"')


def _is_model(layer):
    return hasattr(layer, "layers") and (getattr(layer, "_nodes", None) or
                                         type(layer).__name__ == "Sequential")


def _subgraph(model, opts, ids, lines, indent, allowed=None):
    """Adds `model`'s layers and edges to `lines`; returns ({id(layer): first DOT node},
    {id(layer): last DOT node}) so a nested model's edges attach to its inner layers."""
    layers, edges, shapes = _graph(model)
    if allowed is not None:
        layers = [layer for layer in layers if id(layer) in allowed]
    heads, tails = {}, {}
    for layer in layers:
        if opts["expand_nested"] and _is_model(layer):
            lines.append(f'{indent}subgraph "cluster_{layer.name}" {{')
            lines.append(f'{indent}  label="{layer.name}: {type(layer).__name__}";')
            inner_heads, inner_tails = _subgraph(layer, opts, ids, lines, indent + "  ")
            lines.append(f"{indent}}}")
            heads[id(layer)] = _ends(layer, inner_heads, first=True)
            tails[id(layer)] = _ends(layer, inner_tails, first=False)
            continue
        ids[id(layer)] = name = f"L{len(ids)}"
        heads[id(layer)] = tails[id(layer)] = [name]
        label = _label(layer, shapes.get(id(layer)), opts)
        lines.append(f'{indent}{name} [label="{label}"];')
    for a, b in edges:
        if id(a) in tails and id(b) in heads:
            lines += [f"{indent}{x} -> {y};" for x in tails[id(a)] for y in heads[id(b)]]
    return heads, tails


def _ends(model, inner, first):
    """The DOT nodes where edges enter (first) or leave a nested model's cluster."""
    layers, edges, _ = _graph(model)
    linked = {id(b) for _, b in edges} if first else {id(a) for a, _ in edges}
    ends = [n for layer in layers if id(layer) not in linked for n in inner.get(id(layer), [])]
    return ends or [n for names in inner.values() for n in names]


def dot_source(model, show_shapes=False, show_dtype=False, show_layer_names=True,
               rankdir="TB", expand_nested=False, dpi=96, layer_range=None,
               show_layer_activations=False, show_trainable=False):
    """The model's graph as DOT text (what model_to_dot and plot_model draw)."""
    opts = dict(show_shapes=show_shapes, show_dtype=show_dtype,
                show_layer_names=show_layer_names, expand_nested=expand_nested,
                show_layer_activations=show_layer_activations, show_trainable=show_trainable)
    start, stop = layer_index_range(model, layer_range)
    allowed = None if layer_range is None else {id(x) for x in model.layers[start:stop]}
    lines = [f'digraph "{model.name}" {{', f"  graph [rankdir={rankdir}, dpi={dpi}];",
             "  node [shape=record];"]
    _subgraph(model, opts, {}, lines, "  ", allowed)
    lines.append("}")
    return "\n".join(lines) + "\n"


def model_to_dot(model, show_shapes=False, show_dtype=False, show_layer_names=True,
                 rankdir="TB", expand_nested=False, dpi=96, subgraph=False, layer_range=None,
                 show_layer_activations=False, show_trainable=False, **kwargs):
    """`tf.keras.utils.model_to_dot`: the model's graph as a `pydot.Dot` (needs pydot, the
    `plot` extra; its `.create(prog="dot", format="svg")` needs Graphviz too)."""
    try:
        import pydot  # noqa: PLC0415 - the plot extra
    except ImportError:
        raise ImportError('You must install pydot (`pip install pydot`, or tensorlite\'s '
                          '`pip install ".[plot]"`) for `model_to_dot` to work.') from None
    _no_unknown("model_to_dot", kwargs)
    text = dot_source(model, show_shapes, show_dtype, show_layer_names, rankdir,
                      expand_nested, dpi, layer_range, show_layer_activations, show_trainable)
    with warnings.catch_warnings():  # pydot's parser module, on pyparsing 3.3's renames
        warnings.simplefilter("ignore", DeprecationWarning)
        return pydot.graph_from_dot_data(text)[0]


def plot_model(model, to_file="model.png", show_shapes=False, show_dtype=False,
               show_layer_names=True, rankdir="TB", expand_nested=False, dpi=96,
               layer_range=None, show_layer_activations=False, show_trainable=False,
               **kwargs):
    """`tf.keras.utils.plot_model`: writes the model's graph to `to_file`, rendered by
    Graphviz's `dot` in the format its extension names (.png, .svg, .pdf, ...; .dot/.gv:
    the DOT text). Without `dot` on PATH it writes the DOT text to `<name>.dot` instead
    and warns (UserWarning) with the command that renders it. Returns None."""
    _no_unknown("plot_model", kwargs)
    if not model.built:
        raise ValueError("This model has not yet been built. Build the model first by "
                         "calling `build()` or by calling the model on a batch of data.")
    dot = dot_source(model, show_shapes, show_dtype, show_layer_names, rankdir,
                     expand_nested, dpi, layer_range, show_layer_activations, show_trainable)
    ext = os.path.splitext(to_file)[1].lower().lstrip(".") or "png"
    if ext in ("dot", "gv"):
        atomic_files.write_bytes(to_file, dot.encode())
        return None
    exe = shutil.which("dot")
    if exe is None:
        dot_file = os.path.splitext(to_file)[0] + ".dot"
        atomic_files.write_bytes(dot_file, dot.encode())
        warnings.warn(f"plot_model: Graphviz's `dot` program is not on PATH, so {to_file} "
                      f"was not drawn; the graph is in {dot_file}. To render it, "
                      f"{INSTALL_HINT} and run: dot -T{ext} {dot_file} -o {to_file}",
                      UserWarning, stacklevel=2)
        return None
    _render(exe, dot, ext, to_file)
    return None


def _no_unknown(name, kwargs):
    if kwargs:
        raise TypeError(f"{name}() got unexpected keyword arguments {sorted(kwargs)}")


def _render(exe, dot, ext, to_file):
    """Runs `dot -T<ext>` into a temporary file beside `to_file`, then renames it."""
    def write(tmp_path):
        done = subprocess.run([exe, f"-T{ext}", "-o", tmp_path], input=dot.encode(),
                              capture_output=True, timeout=60, check=False)
        if done.returncode != 0:
            raise ValueError(f"Graphviz's dot could not write {to_file} as {ext!r}: "
                             f"{done.stderr.decode(errors='replace').strip()}")
    atomic_files.write_with(to_file, write)

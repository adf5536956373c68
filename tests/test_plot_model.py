"""`tf.keras.utils.plot_model` with Graphviz (the `dot` program renders PNG and SVG) and
without it (the same graph written as a .dot file, a warning saying how to render it), and
`model_to_dot` returning a `pydot.Dot` (the `plot` extra). Graphviz itself is the judge of
the DOT text: the fallback file is rendered by the real `dot`."""
import shutil
import struct
import subprocess
import sys

import pytest

import tensorlite as tf

DOT = shutil.which("dot")
needs_dot = pytest.mark.skipif(DOT is None, reason="Graphviz's dot is not installed "
                               "(apt-get install graphviz; .ci/run installs it as root)")


@pytest.fixture
def model():
    inputs = tf.keras.Input(shape=(784,), name="img")
    x = tf.keras.layers.Dense(64, activation="relu", name="dense_1")(inputs)
    x = tf.keras.layers.Dense(64, activation="relu", name="dense_2")(x)
    outputs = tf.keras.layers.Dense(10, name="predictions")(x)
    return tf.keras.Model(inputs=inputs, outputs=outputs, name="mnist_model")


def _png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


@needs_dot
def test_png_with_graphviz(model, tmp_path):
    path = tmp_path / "my_first_model_with_shape_info.png"
    tf.keras.utils.plot_model(model, str(path), show_shapes=True)
    width, height = _png_size(path.read_bytes())
    assert width > 50 and height > 4 * 30  # four boxes, one above the other
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name]  # no temporary left


@needs_dot
def test_svg_shows_every_layer_and_edge(model, tmp_path):
    path = tmp_path / "model.svg"
    tf.keras.utils.plot_model(model, str(path), show_shapes=True, show_dtype=True,
                              show_layer_activations=True, show_trainable=True)
    svg = path.read_text()
    for text in ("img: InputLayer", "dense_1: Dense", "dense_2: Dense",
                 "predictions: Dense", "(None, 784)", "(None, 10)", "activation: relu",
                 "trainable: T", "float32"):
        assert text in svg, text
    assert svg.count('class="edge"') == 3


def test_without_graphviz_writes_dot_and_says_how_to_render(model, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no dot anywhere
    path = tmp_path / "model.png"
    with pytest.warns(UserWarning, match=r"dot -Tpng .*model\.dot -o .*model\.png") as w:
        tf.keras.utils.plot_model(model, str(path), show_shapes=True)
    assert "graphviz" in str(w[0].message).lower()
    assert not path.exists()
    dot_file = tmp_path / "model.dot"
    text = dot_file.read_text()
    assert "img: InputLayer" in text and "predictions: Dense" in text
    assert text.count("->") == 3
    monkeypatch.undo()
    if DOT is None:
        pytest.skip("Graphviz's dot is not installed: the DOT file is not rendered")
    done = subprocess.run([DOT, "-Tpng", str(dot_file), "-o", str(path)], check=True,
                          capture_output=True, timeout=60)
    assert done.returncode == 0 and _png_size(path.read_bytes())[1] > 4 * 30


def test_model_to_dot_is_a_pydot_graph(model):
    pydot = pytest.importorskip("pydot")
    dot = tf.keras.utils.model_to_dot(model, show_shapes=True)
    assert isinstance(dot, pydot.Dot)
    labels = [n.get_label() for n in dot.get_nodes() if n.get_label()]
    assert any("dense_1: Dense" in label for label in labels)
    assert len(dot.get_edges()) == 3
    if DOT is not None:
        _png_size(dot.create(prog="dot", format="png"))


def test_model_to_dot_without_pydot_says_what_to_install(model, monkeypatch):
    monkeypatch.setitem(sys.modules, "pydot", None)
    with pytest.raises(ImportError, match=r"pip install pydot"):
        tf.keras.utils.model_to_dot(model)


def test_nested_models_layer_range_and_unknown_arguments(tmp_path):
    inner_in = tf.keras.Input((4,), name="x")
    inner = tf.keras.Model(inner_in, tf.keras.layers.Dense(2, name="o")(
        tf.keras.layers.Dense(3, name="h")(inner_in)), name="inner")
    outer_in = tf.keras.Input((4,), name="y")
    outer = tf.keras.Model(outer_in, tf.keras.layers.Dense(1, name="head")(
        inner(tf.keras.layers.Dense(4, name="pre")(outer_in))))
    path = tmp_path / "nested.dot"
    tf.keras.utils.plot_model(outer, str(path), expand_nested=True)
    text = path.read_text()
    assert 'subgraph "cluster_inner"' in text and "h: Dense" in text
    tf.keras.utils.plot_model(outer, str(path), layer_range=["pre", "inner"])
    text = path.read_text()
    assert "pre: Dense" in text and "head: Dense" not in text and "y: InputLayer" not in text
    with pytest.raises(ValueError, match="do not match"):
        tf.keras.utils.plot_model(outer, str(path), layer_range=["nothing", "head"])
    with pytest.raises(TypeError, match="show_shape"):
        tf.keras.utils.plot_model(outer, str(path), show_shape=True)

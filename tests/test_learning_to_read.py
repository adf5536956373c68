"""examples/learning_to_read.py (seed 001) runs briefly: the text pipeline, the adapted
TextVectorization, training with the seed's train_step, and generation."""
import importlib.util
import os

import numpy as np

_PATH = os.path.join(os.path.dirname(__file__), "..", "examples", "learning_to_read.py")


def _example():
    spec = importlib.util.spec_from_file_location("learning_to_read", _PATH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_seed_pipeline_windows_and_labels(tmp_path):
    ex = _example()
    path = tmp_path / "train.txt"
    ex.write_text(str(path), sentences=60)
    lines, data = ex.make_data(str(path))
    texts = [t.numpy() for t in lines]
    assert not any(t.startswith(b"_BOOK_TITLE_") for t in texts)
    assert not any(c in t for t in texts for c in b".,;!")  # punctuation replaced
    words = [w for t in texts for w in t.split()]
    pairs = [(x.numpy(), y.numpy()) for x, y in data]
    assert all(x.shape == (1,) and y.shape == (1,) for x, y in pairs)
    windows = sorted(x[0].split() + [y[0]] for x, y in pairs)
    assert windows == sorted(words[i:i + 11] for i in range(0, len(words), 11))


def test_example_trains_and_generates(tmp_path, capsys):
    ex = _example()
    losses = ex.main(["--epochs", "2", "--sentences", "150", "--units", "16",
                      "--workdir", str(tmp_path)])
    out = capsys.readouterr().out
    assert np.isfinite(losses).all() and losses[-1] < losses[0]
    generated = [line for line in out.splitlines() if line.startswith("generated:")]
    assert len(generated) == 2 and all(len(g.split()) > 6 for g in generated)
    assert "Epoch 2/2" in out

"""TensorFlow.js files from tensorlite models, and back: `import tensorlite.js as tfjs`.

`tfjs.converters.save_keras_model(model, dir)` writes TF.js's Layers format (model.json and
sharded weights), `tfjs.converters.load_keras_model(path)` reads one back (including models
saved by TF.js itself), and `python -m tensorlite.js` / `tensorlite-tfjs-converter` is the
command-line converter with tensorflowjs_converter's flags. `weights` is the weight-file
format both TF.js model formats share.
"""
from tensorlite.js import converters  # noqa: E402,F401

__all__ = ["converters"]

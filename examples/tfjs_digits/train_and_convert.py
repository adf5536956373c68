"""Seed 004's TensorFlow.js path on the README's main job: train the digits CNN, convert it
to TF.js's Layers format, and serve a page where a person draws a digit, sees the model's
prediction, fine-tunes the model in the browser on digits they label, and saves it back.

    python examples/tfjs_digits/train_and_convert.py [--epochs 15] [--out DIR] [--serve]
    python examples/tfjs_digits/train_and_convert.py --serve --no-train   # serve only

Writes DIR (default examples/tfjs_digits/web_model/): `model.json` + weight shards (TF.js's
Layers format, written by tensorlite.js.converters.save_keras_model) and `digits_cnn.keras`
(the trained model in Keras's format, for comparing predictions). `--serve` then serves the
repository on 127.0.0.1 (TF.js comes from js/node_modules: `cd js && npm ci`) and prints the
page's address: examples/tfjs_digits/index.html. A model fine-tuned and saved in the page
(two files, `digits-finetuned.json` and `digits-finetuned.weights.bin`) loads back with

    tfjs.converters.load_keras_model("digits-finetuned.json")
"""
import argparse
import functools
import http.server
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
DEFAULT_OUT = os.path.join(HERE, "web_model")


def train(epochs):
    """The README's digits CNN (examples/train_digits_cnn.py), trained; (model, accuracy)."""
    sys.path.insert(0, os.path.dirname(HERE))
    import tensorlite as tf  # noqa: PLC0415
    from train_digits_cnn import build_model, make_datasets  # noqa: PLC0415
    tf.random.set_seed(0)
    train_ds, test_ds, _ = make_datasets()
    model = build_model()
    model.compile(optimizer=tf.keras.optimizers.Adam(1e-3),
                  loss="sparse_categorical_crossentropy", metrics=["accuracy"])
    model.fit(train_ds, epochs=epochs, verbose=2)
    _, accuracy = model.evaluate(test_ds, verbose=0)
    return model, accuracy


def convert(model, out):
    """Writes the TF.js Layers model (and a .keras copy) into `out`."""
    import tensorlite.js as tfjs  # noqa: PLC0415
    tfjs.converters.save_keras_model(model, out)
    model.save(os.path.join(out, "digits_cnn.keras"))


def serve(port, out):
    """Serves the repository on 127.0.0.1 until interrupted (the page finds TF.js at
    ../../js/node_modules and the model at ?model=, default web_model/model.json)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), functools.partial(
        http.server.SimpleHTTPRequestHandler, directory=ROOT))
    page = f"http://127.0.0.1:{server.server_address[1]}/examples/tfjs_digits/index.html"
    model = os.path.relpath(os.path.join(out, "model.json"), HERE).replace(os.sep, "/")
    if model != "web_model/model.json":
        page += f"?model={model}"
    if os.path.relpath(os.path.abspath(out), ROOT).startswith(".."):
        print(f"warning: {out} is outside the repository, which is what is served; the "
              f"page will not find its model (use --out inside it)", flush=True)
    if not os.path.isdir(os.path.join(ROOT, "js", "node_modules", "@tensorflow", "tfjs")):
        print("warning: js/node_modules is missing; run `cd js && npm ci` first", flush=True)
    print(f"serving {page} (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--out", default=DEFAULT_OUT, help="where the TF.js model goes")
    parser.add_argument("--serve", action="store_true", help="serve the page on 127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--no-train", action="store_true",
                        help="skip training and conversion (serve a model made before)")
    args = parser.parse_args(argv)
    if not args.no_train:
        model, accuracy = train(args.epochs)
        convert(model, args.out)
        print(f"held-out accuracy {accuracy:.4f}; TF.js Layers model in {args.out}",
              flush=True)
    if args.serve:
        serve(args.port, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""TensorFlow's side of the interop tests: run under real TensorFlow (tf.keras 2) by
conftest.run_tf, never imported by tensorlite or pytest.

    python tf_side.py write DIR   TensorFlow writes checkpoints into DIR and what they hold
                                  into DIR/expected.npz, for tensorlite to read
    python tf_side.py read DIR    TensorFlow reads what tensorlite wrote into DIR and dumps
                                  what it found into DIR/tf_read.npz
    python tf_side.py savedmodel_read DIR
                                  TensorFlow loads the SavedModels tensorlite wrote (as
                                  DIR/manifest.json lists them) and dumps what they compute
                                  into DIR/tf_read.npz
    python tf_side.py keras2_ops_write DIR
                                  tf.keras 2 saves DIR/ops.h5, a functional model built
                                  with TF functions on symbolic tensors (TFOpLambda)
    python tf_side.py optimizers DIR  TensorFlow applies DIR/cases.json's optimizers to the
                                  variable and gradients of DIR/inputs.npz, writes the
                                  variable after each step into DIR/tf_out.npz

The last line printed is a JSON object of facts the test compares (key lists, paths).
The models here and in test_checkpoint_interop.py are the same architecture.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
from shared_data import X, Y, images, keras_models, ops_model  # (this directory is on sys.path)


class Net(tf.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.default_rng(0)
        self.w = tf.Variable(rng.normal(size=(2, 3)).astype(np.float32))
        self.b = tf.Variable(rng.normal(size=(3,)))  # float64
        self.blocks = [tf.Variable(np.arange(4, dtype=np.int32)),
                       tf.Variable(np.array([[b"ab", b""], [b"\xff\x00", b"xyz" * 50]]))]
        self.step = tf.Variable(np.int64(7))


def mlp():
    model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="relu", input_shape=(3,)),
                                 tf.keras.layers.Dense(2)])
    model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    return model


def net_values(net):
    return {"w": net.w.numpy(), "b": net.b.numpy(), "blocks0": net.blocks[0].numpy(),
            "blocks1": net.blocks[1].numpy().astype(bytes), "step": net.step.numpy()}


def write(directory):
    out, facts = {}, {}
    net = Net()
    ckpt = tf.train.Checkpoint(net=net)
    facts["module_path"] = ckpt.save(os.path.join(directory, "module", "ckpt"))
    facts["module_keys"] = sorted(k for k, _ in tf.train.list_variables(facts["module_path"]))
    out.update({f"module_{k}": v for k, v in net_values(net).items()})

    tf.keras.utils.set_random_seed(1)
    model = mlp()
    model.fit(X, Y, epochs=3, batch_size=4, verbose=0)
    model.save_weights(os.path.join(directory, "keras", "w"))
    out["keras_pred"] = model.predict(X, verbose=0)
    out["keras_iterations"] = model.optimizer.iterations.numpy()
    for i, v in enumerate(model.optimizer.variables):
        out[f"keras_opt_{i}"] = v.numpy()
    model.train_on_batch(X, Y)  # one more step from the saved state: the continuation
    out["keras_next_kernel"] = model.layers[0].kernel.numpy()

    manager_ckpt = tf.train.Checkpoint(v=tf.Variable(0.0))
    manager = tf.train.CheckpointManager(manager_ckpt, os.path.join(directory, "managed"),
                                         max_to_keep=2)
    for i in range(3):
        manager_ckpt.v.assign(float(i + 1))
        manager.save()
    facts["managed"] = manager.checkpoints
    np.savez(os.path.join(directory, "expected.npz"), **out)
    return facts


def read(directory):
    out, facts = {}, {}
    net = Net()
    for v in (net.w, net.b, net.step):
        v.assign(tf.zeros_like(v))
    ckpt = tf.train.Checkpoint(net=net)
    ckpt.restore(tf.train.latest_checkpoint(os.path.join(directory, "module"))
                 ).assert_consumed()
    out.update({f"module_{k}": v for k, v in net_values(net).items()})
    out["module_save_counter"] = ckpt.save_counter.numpy()
    reader = tf.train.load_checkpoint(os.path.join(directory, "module"))
    facts["module_dtypes"] = {k: v.name for k, v in reader.get_variable_to_dtype_map().items()}

    model = mlp()
    model(X[:1])
    model.optimizer.build(model.trainable_variables)  # so assert_consumed sees its slots
    model.load_weights(os.path.join(directory, "keras", "w")).assert_consumed()
    out["keras_pred"] = model.predict(X, verbose=0)
    out["keras_iterations"] = model.optimizer.iterations.numpy()
    model.train_on_batch(X, Y)
    out["keras_next_kernel"] = model.layers[0].kernel.numpy()

    managed = os.path.join(directory, "managed")
    facts["managed_latest"] = tf.train.latest_checkpoint(managed)
    facts["managed_state"] = tf.train.get_checkpoint_state(managed).all_model_checkpoint_paths[:]
    facts["managed_value"] = float(tf.train.load_variable(facts["managed_latest"],
                                                          "v/.ATTRIBUTES/VARIABLE_VALUE"))
    np.savez(os.path.join(directory, "tf_read.npz"), **out)
    return facts


def keras_write(directory):
    """Keras (3, or tf.keras 2 under TF_USE_LEGACY_KERAS=1) saves trained models."""
    tf.keras.utils.set_random_seed(2)
    mlp, cnn = keras_models(tf.keras)
    mlp.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
    mlp.fit(X, Y, epochs=3, batch_size=4, verbose=0, shuffle=False)
    cnn.compile(optimizer="sgd", loss="mse")
    cnn.fit(images(), np.ones((2, 5), np.float32), epochs=2, verbose=0)
    out = {}
    formats = ["h5"] if os.environ.get("TF_USE_LEGACY_KERAS") == "1" else ["keras", "h5"]
    for fmt in formats:
        mlp.save(os.path.join(directory, f"mlp.{fmt}"))
        cnn.save(os.path.join(directory, f"cnn.{fmt}"))
    out["mlp_pred"] = mlp.predict(X, verbose=0)
    out["cnn_pred"] = cnn.predict(images(), verbose=0)
    mlp.train_on_batch(X, Y)
    out["mlp_next_kernel"] = mlp.layers[0].kernel.numpy()
    np.savez(os.path.join(directory, "keras_expected.npz"), **out)
    return {"formats": formats}


def keras2_ops_write(directory):
    """tf.keras 2 trains and saves (.h5) a functional model built with TF functions on
    symbolic tensors, a symbolic loss and a metric."""
    tf.keras.utils.set_random_seed(4)
    model = ops_model(tf)
    model.compile(optimizer=tf.keras.optimizers.SGD(0.05), loss="mse")
    model.fit(X, Y, epochs=2, batch_size=4, verbose=0, shuffle=False)
    model.save(os.path.join(directory, "ops.h5"))
    result = model.evaluate(X, Y, batch_size=4, verbose=0, return_dict=True)
    np.savez(os.path.join(directory, "ops_expected.npz"), pred=model.predict(X, verbose=0),
             loss=result["loss"], std_h=result["std_h"])
    return {"layers": [type(layer).__name__ for layer in model.layers]}


def keras_read(directory):
    """Keras 3 loads what tensorlite saved and predicts; then trains the MLP a step."""
    out = {}
    for fmt in ("keras", "h5"):
        # Keras 3 cannot compile from its own legacy .h5 files (its loss "mse" resolves to
        # keras.metrics.mse, which it then refuses): .h5 files load uncompiled
        compile = fmt == "keras"  # noqa: A001
        mlp = tf.keras.models.load_model(os.path.join(directory, f"mlp.{fmt}"), compile=compile)
        cnn = tf.keras.models.load_model(os.path.join(directory, f"cnn.{fmt}"), compile=compile)
        out[f"mlp_pred_{fmt}"] = mlp.predict(X, verbose=0)
        out[f"cnn_pred_{fmt}"] = cnn.predict(images(), verbose=0)
    mlp = tf.keras.models.load_model(os.path.join(directory, "mlp.keras"))
    mlp.train_on_batch(X, Y)
    out["mlp_next_kernel"] = mlp.layers[0].kernel.numpy()
    np.savez(os.path.join(directory, "keras_read.npz"), **out)
    return {}


def keras2_read_h5(directory):
    """tf.keras 2 (TF_USE_LEGACY_KERAS=1) loads the `.h5` files tensorlite saved (its own
    legacy format), compiled from their training config, and predicts and evaluates."""
    mlp = tf.keras.models.load_model(os.path.join(directory, "mlp.h5"))
    cnn = tf.keras.models.load_model(os.path.join(directory, "cnn.h5"))
    np.savez(os.path.join(directory, "keras2_read.npz"), mlp_pred=mlp.predict(X, verbose=0),
             cnn_pred=cnn.predict(images(), verbose=0),
             mlp_loss=mlp.evaluate(X, Y, batch_size=len(X), verbose=0))
    return {"optimizer": type(mlp.optimizer).__name__}


class Scorer(tf.Module):
    """A tf.Module with a signature; its gradient is checked against tensorlite's."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.linspace(-1, 1, 6, dtype=np.float32).reshape(3, 2))
        self.b = tf.Variable(np.array([0.1, -0.2], np.float32))

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        return {"score": tf.nn.tanh(x @ self.w + self.b)}


class Unknown(tf.Module):
    @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
    def __call__(self, x):
        return tf.math.bessel_i1e(x)


def savedmodel_write(directory):
    """Keras 3 exports an MLP and a CNN; tf.saved_model.save writes two tf.Modules."""
    tf.keras.utils.set_random_seed(4)
    mlp, cnn = keras_models(tf.keras)
    mlp.export(os.path.join(directory, "mlp"))
    cnn.export(os.path.join(directory, "cnn"))
    scorer = Scorer()
    tf.saved_model.save(scorer, os.path.join(directory, "scorer"))
    tf.saved_model.save(Unknown(), os.path.join(directory, "unknown"))
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(scorer(X)["score"] ** 2)
    grads = tape.gradient(loss, [scorer.w, scorer.b])
    out = {"mlp_pred": mlp(X).numpy(), "cnn_pred": cnn(images(), training=False).numpy(),
           "scorer": scorer(X)["score"].numpy(), "grad_w": grads[0].numpy(),
           "grad_b": grads[1].numpy()}
    np.savez(os.path.join(directory, "savedmodel_expected.npz"), **out)
    loaded = tf.saved_model.load(os.path.join(directory, "cnn"))
    sig = loaded.signatures["serving_default"]
    return {"cnn_inputs": {k: [v.dtype.name, v.shape.as_list()]
                           for k, v in sig.structured_input_signature[1].items()},
            "cnn_outputs": {k: [v.dtype.name, v.shape.as_list()]
                            for k, v in sig.structured_outputs.items()}}


def _flat_outputs(prefix, value, out):
    if isinstance(value, dict):
        for k, v in value.items():
            out[f"{prefix}.{k}"] = v.numpy()
    else:
        out[prefix] = value.numpy()


def _tf1_session_run(name, path, spec, inputs, out, directory):
    """TensorFlow 1's loader (as TensorFlow Serving's C++ one does): restores through the
    SaverDef, runs each signature's tensors by name, then saves through the SaverDef;
    returns the saved checkpoint's keys."""
    graph = tf.Graph()
    with tf.compat.v1.Session(graph=graph) as sess:
        meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], path)
        for key, kwargs in spec.get("signatures", {}).items():
            sig = meta.signature_def[key]
            feed = {sig.inputs[k].name: inputs[v] for k, v in kwargs.items()}
            for out_key, value in sess.run({k: v.name for k, v in sig.outputs.items()},
                                           feed).items():
                out[f"{name}.tf1.{key}.{out_key}"] = value
        if not meta.HasField("saver_def"):  # no variables, nothing to save
            return None
        prefix = os.path.join(directory, f"{name}_resaved", "ckpt")
        os.makedirs(os.path.dirname(prefix), exist_ok=True)
        sess.run(meta.saver_def.save_tensor_name, {meta.saver_def.filename_tensor_name: prefix})
    return sorted(k for k, _ in tf.train.list_variables(prefix))


def savedmodel_read(directory):
    """TensorFlow loads the SavedModels tensorlite wrote, as manifest.json lists them: calls
    their functions and signatures on inputs.npz, reads their variables, and inspects their
    SignatureDefs as saved_model_cli does."""
    from tensorflow.python.tools import saved_model_utils
    manifest = json.load(open(os.path.join(directory, "manifest.json")))
    inputs = np.load(os.path.join(directory, "inputs.npz"))
    out, facts = {}, {}
    for name, spec in manifest.items():
        path = os.path.join(directory, name)
        loaded = tf.saved_model.load(path)
        for fn, args in spec.get("functions", {}).items():
            target = loaded if fn == "__call__" else getattr(loaded, fn)
            # an argument names an array of inputs.npz, or is {"python": a Python value}
            values = [inputs[a] if isinstance(a, str) else a["python"] for a in args]
            _flat_outputs(f"{name}.{fn}", target(*values), out)
        for key, kwargs in spec.get("signatures", {}).items():
            result = loaded.signatures[key](**{k: tf.constant(inputs[v])
                                               for k, v in kwargs.items()})
            _flat_outputs(f"{name}.sig.{key}", result, out)
        for attr in spec.get("variables", []):
            value = loaded
            for part in attr.split("."):
                value = value[int(part)] if part.isdigit() else getattr(value, part)
            out[f"{name}.var.{attr}"] = value.numpy()
        facts[f"{name}.resaved"] = _tf1_session_run(name, path, spec, inputs, out, directory)
        meta = saved_model_utils.get_meta_graph_def(path, "serve")
        facts[name] = {
            key: {"inputs": {k: [v.name, v.dtype, [d.size for d in v.tensor_shape.dim]]
                             for k, v in sig.inputs.items()},
                  "outputs": {k: [v.name, v.dtype, [d.size for d in v.tensor_shape.dim]]
                              for k, v in sig.outputs.items()},
                  "method_name": sig.method_name}
            for key, sig in meta.signature_def.items() if not key.startswith("__")}
    np.savez(os.path.join(directory, "tf_read.npz"), **out)
    return facts


def optimizers(directory):
    """Each case: {"name", "class", "legacy", "kwargs"}: tf.keras's optimizer (the legacy
    OptimizerV2 class where `legacy`), eager steps on a float32 variable."""
    with open(os.path.join(directory, "cases.json")) as f:
        cases = json.load(f)
    inputs = np.load(os.path.join(directory, "inputs.npz"))
    out = {}
    for case in cases:
        module = tf.keras.optimizers.legacy if case["legacy"] else tf.keras.optimizers
        opt = getattr(module, case["class"])(**case["kwargs"])
        var = tf.Variable(inputs["w0"])
        steps = []
        for g in inputs["grads"]:
            opt.apply_gradients([(tf.constant(g), var)])
            steps.append(var.numpy())
        out[case["name"]] = np.stack(steps)
    np.savez(os.path.join(directory, "tf_out.npz"), **out)
    return {"names": sorted(out)}


if __name__ == "__main__":
    command, directory = sys.argv[1], sys.argv[2]
    result = {"write": write, "read": read, "keras_write": keras_write,
              "keras_read": keras_read, "keras2_ops_write": keras2_ops_write, "savedmodel_write": savedmodel_write,
              "savedmodel_read": savedmodel_read, "optimizers": optimizers,
              "keras2_read_h5": keras2_read_h5}[command](directory)
    print(json.dumps(result))

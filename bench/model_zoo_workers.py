"""One model-zoo measurement in this process: a system (tensorlite or tensorflow), a workload
and a thread setting; prints one JSON line. bench/model_zoo.py runs these, each in its own
process, interleaved.

    python bench/model_zoo_workers.py tensorlite mobilenet_v2_train --threads 1 --steps 5

The Keras code is the same for both systems (`import ... as tf`). Workloads, with the shapes
the speed issue names:
  * cnn_fit: the CIFAR CNN of the "TensorFlow: high-level APIs" talk, `fit` over 1024
    images at batch 128 (Keras's per-call overhead included), seconds per `fit` call;
  * lstm_train: Embedding(10000, 64) + LSTM(128) + Dense, sequences of 50, batch 64;
  * resnet50_infer: ResNet50 (weights=None), 224x224, batch 4, a `tf.function` call;
  * transformer_train: one encoder block (MultiHeadAttention 4 heads x 32, LayerNorm,
    feed-forward 512), sequence 128, width 128, batch 16;
  * mobilenet_v2_train: MobileNetV2 (weights=None, 10 classes), 96x96, batch 16;
  * mobilenet_v2_infer: MobileNetV2 (weights=None), 224x224, batch 8, a `tf.function` call.
Training workloads time `train_on_batch`. Each also reports its multiply-adds per step,
counted from the layers (convolutions, dense and attention products), for the fraction of
the machine's peak that bench/model_zoo.py prints.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

WORKLOADS = {  # name -> (batch, input shape, classes or None for inference)
    "cnn_fit": (128, (32, 32, 3), 10),
    "lstm_train": (64, (50,), 2),
    "resnet50_infer": (4, (224, 224, 3), None),
    "transformer_train": (16, (128, 128), 10),
    "mobilenet_v2_train": (16, (96, 96, 3), 10),
    "mobilenet_v2_infer": (8, (224, 224, 3), None),
}


def build(tf, name):
    """The workload's Keras model (and its optimizer for training workloads)."""
    layers = tf.keras.layers
    if name == "cnn_fit":
        return tf.keras.Sequential([
            layers.Input((32, 32, 3)),
            layers.Conv2D(32, 3, padding="same", activation="relu"),
            layers.Conv2D(32, 3, activation="relu"), layers.MaxPooling2D(), layers.Dropout(0.25),
            layers.Conv2D(64, 3, padding="same", activation="relu"),
            layers.Conv2D(64, 3, activation="relu"), layers.MaxPooling2D(), layers.Dropout(0.25),
            layers.Flatten(), layers.Dense(512, activation="relu"), layers.Dropout(0.5),
            layers.Dense(10, activation="softmax")]), tf.keras.optimizers.RMSprop(1e-4)
    if name == "lstm_train":
        return tf.keras.Sequential([
            layers.Input((50,), dtype="int32"), layers.Embedding(10000, 64),
            layers.LSTM(128), layers.Dense(2, activation="softmax")]), \
            tf.keras.optimizers.Adam(1e-3)
    if name == "resnet50_infer":
        return tf.keras.applications.ResNet50(weights=None), None
    if name.startswith("mobilenet_v2"):
        size = WORKLOADS[name][1][0]
        classes = WORKLOADS[name][2] or 1000
        model = tf.keras.applications.MobileNetV2(input_shape=(size, size, 3), weights=None,
                                                  classes=classes)
        return model, tf.keras.optimizers.Adam(1e-3) if WORKLOADS[name][2] else None
    inputs = layers.Input((128, 128))
    attended = layers.MultiHeadAttention(num_heads=4, key_dim=32)(inputs, inputs)
    x = layers.LayerNormalization()(inputs + attended)
    ffn = layers.Dense(128)(layers.Dense(512, activation="relu")(x))
    x = layers.LayerNormalization()(x + ffn)
    outputs = layers.Dense(10, activation="softmax")(layers.GlobalAveragePooling1D()(x))
    return tf.keras.Model(inputs, outputs), tf.keras.optimizers.Adam(1e-3)


def multiply_adds(name):
    """Forward multiply-adds per example, by the layer arithmetic of each workload
    (convolutions, dense and attention products; elementwise work not counted)."""
    known = {  # the published per-image counts of the applications at 224x224
        "resnet50_infer": 3.87e9, "mobilenet_v2_infer": 0.300e9,
        "mobilenet_v2_train": 0.300e9 * (96 / 224) ** 2,
    }
    if name in known:
        return known[name]
    if name == "cnn_fit":
        convs = 32 * 32 * 9 * 3 * 32 + 30 * 30 * 9 * 32 * 32 + 15 * 15 * 9 * 32 * 64 + \
            13 * 13 * 9 * 64 * 64
        return convs + 2304 * 512 + 512 * 10
    if name == "lstm_train":
        return 50 * 4 * 128 * (64 + 128) + 128 * 2
    seq, width = 128, 128
    projections = 4 * seq * width * width
    attention = 2 * 4 * seq * seq * 32
    return projections + attention + 2 * seq * width * 512 + width * 10


def data(name, count, seed=0):
    batch, shape, classes = WORKLOADS[name]
    rng = np.random.default_rng(seed)
    if name == "lstm_train":
        x = rng.integers(0, 10000, (count,) + shape).astype(np.int32)
    else:
        x = rng.random((count,) + shape, dtype=np.float32)
    if classes is None:
        return x, None
    return x, np.eye(classes, dtype=np.float32)[rng.integers(0, classes, count)]


def run(tf, name, steps):
    """(seconds of the first two calls, per-call seconds of `steps` steady calls)."""
    batch, _, classes = WORKLOADS[name]
    model, optimizer = build(tf, name)
    if classes is None:
        x, _ = data(name, batch)
        call = tf.function(lambda t: model(t, training=False))
        step = lambda i: call(x).numpy()  # noqa: E731 - one timed call
    elif name == "cnn_fit":
        x, y = data(name, 1024)
        model.compile(loss="categorical_crossentropy", optimizer=optimizer)
        step = lambda i: model.fit(x, y, batch_size=batch, epochs=1, verbose=0)  # noqa: E731
    else:
        x, y = data(name, batch * 4)
        model.compile(loss="categorical_crossentropy", optimizer=optimizer)
        step = lambda i: model.train_on_batch(  # noqa: E731
            x[(i % 4) * batch:(i % 4 + 1) * batch], y[(i % 4) * batch:(i % 4 + 1) * batch])
    start = time.perf_counter()
    step(0)
    step(1)
    first = time.perf_counter() - start
    times = []
    for i in range(steps):
        t = time.perf_counter()
        step(i)
        times.append(time.perf_counter() - t)
    return first, times


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("system", choices=["tensorlite", "tensorflow"],
                        help="the system measured in this process")
    parser.add_argument("workload", choices=sorted(WORKLOADS), help="what to measure")
    parser.add_argument("--threads", type=int, default=0,
                        help="intra- and inter-op threads; 0: the system's default")
    parser.add_argument("--steps", type=int, default=5, help="steady calls timed")
    args = parser.parse_args()
    if args.system == "tensorlite":
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import importlib  # noqa: PLC0415
    tf = importlib.import_module(args.system)
    if args.threads:
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    first, times = run(tf, args.workload, args.steps)
    batch, _, classes = WORKLOADS[args.workload]
    examples = 1024 if args.workload == "cnn_fit" else batch
    factor = 1 if classes is None else 3  # training: forward, and two products backward
    print(json.dumps({"step_s": statistics.median(times), "first_steps_s": first,
                      "flops": 2 * factor * examples * multiply_adds(args.workload)}))


if __name__ == "__main__":
    main()

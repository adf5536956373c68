"""One training measurement in this process: a system (tensorlite, tensorflow, torch), a
model (cnn, mlp, lstm) and a thread setting; prints one JSON line. bench/train_throughput.py
runs these, each in its own process, interleaved.

    python bench/train_workers.py tensorlite cnn --threads 1 --batches 6

Keras models are the same code for tensorlite and TensorFlow (`import ... as tf`); PyTorch
gets the same layers, sizes, optimizer and loss written in its own API.
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

MODELS = {  # name -> (batch size, input shape, classes)
    "cnn": (32, (32, 32, 3), 10),
    "mlp": (128, (784,), 10),
    "lstm": (64, (20, 16), 10),
}


def data(model, batches, seed=0):
    batch, shape, classes = MODELS[model]
    rng = np.random.default_rng(seed)
    x = rng.random((batch * batches,) + shape, dtype=np.float32)
    y = rng.integers(0, classes, batch * batches)
    return x, y, np.eye(classes, dtype=np.float32)[y]


def keras_model(tf, model):
    layers = tf.keras.layers
    if model == "cnn":  # the CIFAR CNN of "Structure of Deep Learning Frameworks"
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        sys.path.insert(0, root)
        if tf.__name__ == "tensorlite":
            from examples.seed_models import generate_model  # noqa: PLC0415
            return generate_model(), tf.keras.optimizers.RMSprop(learning_rate=1e-4)
        return tf.keras.models.Sequential([
            layers.Input((32, 32, 3)),
            layers.Conv2D(32, (3, 3), padding="same"), layers.Activation("relu"),
            layers.Conv2D(32, (3, 3)), layers.Activation("relu"),
            layers.MaxPooling2D((2, 2)), layers.Dropout(0.25),
            layers.Conv2D(64, (3, 3), padding="same"), layers.Activation("relu"),
            layers.Conv2D(64, (3, 3)), layers.Activation("relu"),
            layers.MaxPooling2D((2, 2)), layers.Dropout(0.25),
            layers.Flatten(), layers.Dense(512), layers.Activation("relu"),
            layers.Dropout(0.5), layers.Dense(10), layers.Activation("softmax"),
        ]), tf.keras.optimizers.RMSprop(learning_rate=1e-4)
    if model == "mlp":
        return tf.keras.Sequential([layers.Input((784,)), layers.Dense(128, activation="relu"),
                                    layers.Dense(10, activation="softmax")]), \
            tf.keras.optimizers.Adam(1e-3)
    return tf.keras.Sequential([layers.Input((20, 16)), layers.LSTM(32),
                                layers.Dense(10, activation="softmax")]), \
        tf.keras.optimizers.Adam(1e-3)


def run_keras(tf, model, batches, threads):
    if threads:
        tf.config.threading.set_intra_op_parallelism_threads(threads)
        tf.config.threading.set_inter_op_parallelism_threads(threads)
    x, _, y = data(model, batches)
    batch = MODELS[model][0]
    net, opt = keras_model(tf, model)
    net.compile(loss="categorical_crossentropy", optimizer=opt, metrics=["accuracy"])
    start = time.perf_counter()
    # build, trace and the first step; graph passes and code generation may wait for the
    # second call, so both count as the start-up
    net.train_on_batch(x[:batch], y[:batch])
    net.train_on_batch(x[:batch], y[:batch])
    first = time.perf_counter() - start
    steps = []
    for i in range(batches):
        t = time.perf_counter()
        net.train_on_batch(x[i * batch:(i + 1) * batch], y[i * batch:(i + 1) * batch])
        steps.append(time.perf_counter() - t)
    return first, steps


def torch_model(torch, model):
    nn = torch.nn
    if model == "cnn":
        net = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout(0.25),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(),
            nn.MaxPool2d(2), nn.Dropout(0.25), nn.Flatten(),
            nn.Linear(64 * 6 * 6, 512), nn.ReLU(), nn.Dropout(0.5), nn.Linear(512, 10))
        return net, torch.optim.RMSprop(net.parameters(), lr=1e-4), True
    if model == "mlp":
        net = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 10))
        return net, torch.optim.Adam(net.parameters(), 1e-3), False

    class Lstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm, self.out = nn.LSTM(16, 32, batch_first=True), nn.Linear(32, 10)

        def forward(self, x):
            return self.out(self.lstm(x)[0][:, -1])
    net = Lstm()
    return net, torch.optim.Adam(net.parameters(), 1e-3), False


def run_torch(model, batches, threads):
    import torch  # noqa: PLC0415
    if threads:
        torch.set_num_threads(threads)
    x, y, _ = data(model, batches)
    net, opt, nchw = torch_model(torch, model)
    xt = torch.from_numpy(np.ascontiguousarray(np.transpose(x, (0, 3, 1, 2))) if nchw else x)
    yt = torch.from_numpy(y)
    batch = MODELS[model][0]

    def step(i):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(net(xt[i * batch:(i + 1) * batch]),
                                                 yt[i * batch:(i + 1) * batch])
        loss.backward()
        opt.step()
    start = time.perf_counter()
    step(0)
    step(0)
    first = time.perf_counter() - start
    steps = []
    for i in range(batches):
        t = time.perf_counter()
        step(i)
        steps.append(time.perf_counter() - t)
    return first, steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("system", choices=["tensorlite", "tensorflow", "torch"],
                        help="the system that trains")
    parser.add_argument("model", choices=sorted(MODELS), help="the model it trains")
    parser.add_argument("--threads", type=int, default=0, help="0: the system's default")
    parser.add_argument("--batches", type=int, default=6, help="training steps timed")
    args = parser.parse_args()
    if args.system == "torch":
        first, steps = run_torch(args.model, args.batches, args.threads)
    else:
        if args.system == "tensorlite":
            sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
        import importlib  # noqa: PLC0415
        first, steps = run_keras(importlib.import_module(args.system), args.model,
                                 args.batches, args.threads)
    step = statistics.median(steps)
    print(json.dumps({"images_per_s": MODELS[args.model][0] / step, "first_steps_s": first,
                      "step_s": step}))


if __name__ == "__main__":
    main()
